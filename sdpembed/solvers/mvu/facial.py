"""The equality and minimum-trace MVU SDPs by facial reduction: lock-ups (thesis Sec. 3.1.12) found, reduced
away and certified.

The SDPs and their duals are those of :mod:`sdpembed.problems.mvu` (notation 𝒜, L(y), c = 1 for the equality
SDP, c = −1 for min_trace, stated as max −tr K; the text below writes c = 1 where the two do not differ).

Why
---
When the neighbourhood graph is rigid the equality SDP has no strictly feasible point: its
feasible set lies in a proper face of the PSD cone, the dual optimum is not attained, and the
interior point (:mod:`sdpembed.solvers.mvu.ipm`) and the low-rank solver stall with growing
multipliers. The face is exposed by a *stress*: edge weights ω with Ω = L(ω) ⪰ 0 and ωᵀD = 0.
For every feasible K, ⟨Ω, K⟩ = Σ_e ω_e 𝒜(K)_e = ωᵀD = 0, and two PSD matrices with a zero inner
product have orthogonal ranges: range K ⊂ null Ω. An equilibrium stress of the inputs X₀
(Σ_j ω_ij(x_i − x_j) = 0 at every i, i.e. ΩX₀ = 0) has ωᵀD = tr X₀ᵀΩX₀ = 0.

Finding the stress: a small auxiliary problem per clique
---------------------------------------------------------
We do not take the stress from the diverging multipliers of a stalled solve (a direction known
only to the accuracy at which the solver stalled, and at n = 1,000 the interior point's E × E
Schur complement is out of reach) but build it from the instance alone, as Krislock and
Wolkowicz [2] do for sensor networks: on a clique C of the graph (with angle edges, every input
and its neighbours, (3.8)) all distances are known, so classical scaling of −½JD_CJ gives the
clique's points X_C up to a rigid motion, and when they are affinely dependent (|C| ≥ d + 2 points
in d dimensions) the projector Ω_C onto the complement of span(1, X_C) in R^C is a PSD equilibrium
stress of the clique (Ω_C1 = 0, Ω_CX_C = 0; every symmetric matrix with zero row sums on a
complete graph is an L(ω)). Their sum Ω = Σ_C Ω_C is PSD, an equilibrium stress of every point
set with the graph's distances, and null Ω ∩ 1⊥ = the functions affine on every clique: when
overlapping cliques share d + 1 affinely independent points it is span(X₀), the graph is locked
at its input, and the face has dimension q = d. Cliques are grown greedily from every edge at
every vertex (``neighbourhood_cliques``); the clique's rank is decided at ``rank_tol`` of its
largest eigenvalue and the face at ``face_tol`` of Ω's.

Further steps: a stress of the SDP restricted to the face
---------------------------------------------------------
The clique stress sees each clique alone: where rigid parts are held together by edges that close no
stressed clique (bodies joined by bars, a pendant piece), null Ω ∩ 1⊥ also holds their separate affine
motions and the face is larger than the minimal one — the SDP restricted to it still has no strictly
feasible point. The restricted SDP, W ⪰ 0 with b_eᵀWb_e = D_e (b_e the edge in face coordinates), then
has its own stress: S = VᵀL(z)V ⪰ 0, S ≠ 0, zᵀD = 0 ([3]'s step repeated), and every feasible W lies in
null S. :func:`face_stress` finds the stress of largest rank by the central path of the small auxiliary
SDP min μ s.t. W + μI ⪰ 0 over the affine set of W that meets the edges ([4]), whose dual optimal points
are exactly these stresses and whose central path ends at a maximally complementary pair ([5]); when
that SDP's optimum is negative the restricted SDP has a strictly feasible point and the face is the
minimal one. That form parameterises W by a basis of the null space of the edges' system, q(q+1)/2 − E
directions; above ``DETERMINED_MAX_UNKNOWNS`` unknowns (and up to ``DUAL_STEP_MAX_EDGES`` edges) the step
is posed in the edge multipliers instead (:func:`face_stress_dual`: the Lagrange dual of the same auxiliary
SDP, minimise zᵀD s.t. VᵀL(z)V ⪰ 0 of unit trace, whose E × E Newton systems do not grow with q). The step
repeats on the smaller face while its face still admits a Gram matrix that meets the edges (least-squares
residual at most ``STEP_RESIDUAL_TOL`` of τ and, where the edges determine W there, that W not indefinite beyond
``STEP_PSD_TOL``), and the lift below runs through every step, innermost first.

The reduced SDP and the certificate
-----------------------------------
With V (n × q) an orthonormal basis of null Ω ∩ 1⊥, K = VWVᵀ and W ⪰ 0 of order q. When the
edges determine W (the E × q(q+1)/2 system 𝒜(VWVᵀ) = D has full column rank; q = d: locked at
the input) W is their least-squares solution and the reduced dual multipliers y_R solve
VᵀL(y_R)V = I (minimum norm); otherwise the reduced SDP is solved by the interior point over the
face (:func:`sdpembed.solvers.mvu.ipm.solve_in_face`, strictly feasible when the face is the
minimal one). Either way the reduced dual is lifted to the original dual by adding the stress (after
further steps, each step's stress in turn, from the innermost face out, ``lift_multipliers``):
y = f·y_R + t·ω with f scaling VᵀL(fy_R)V − I to εI and, in the basis [V, U] of 1⊥ (U the
eigenvectors of Ω with eigenvalues Λ ≥ λ₊ > 0), t the least value with
tΛ ⪰ (1 + ε)I − fUᵀL(y_R)U + f²UᵀL(y_R)V (fVᵀL(y_R)V − I)⁻¹ VᵀL(y_R)U — the Schur complement
condition for L(y) ⪰ I on 1⊥. Its value is f·y_RᵀD + t·ωᵀD: the reduced bound plus the rounding
residual of the stress; ε (a few candidates, the smallest predicted bound wins) trades the
reduced slack against t.

The Schur complement's last term divides every coupling to U of the directions where fVᵀL(y)V − I is
only ε by ε. Two such couplings are not forced by the problem and are removed first (:func:`equilibrate`,
given the support Q of the returned K): the reduced multipliers' UᵀL(y_R)Q, as the reduced dual constrains
VᵀL(y_R)V only — least-norm corrections make L(y_R)Q = Q·QᵀL(y_R)Q, the complementary slackness
(L(y) − I)K = 0 of the original SDP —, and after further steps an inner stress's coupling to the next step's
complement, as a stress of the restricted SDP need not be an equilibrium stress of K's configuration —
corrected to L(z)Q = 0 with its matrix on its own face kept. An inner step's t is then taken twice its least
value: the least leaves L(y) at 1 + ε on that step's U, which the next step would divide by again. A
determined K after further steps has both the plain and the corrected multipliers lifted and proved, the
smaller bound kept (after one step L(y_R)V = V already); the interior point over a face lifts its iterates
as they are and, when it ends without the gap, its last multipliers corrected to the returned K's support
once more (where the face off that support is small enough: ``EQUILIBRATE_MAX_ROWS`` rows, and the correction's
dense rows fit ``EQUILIBRATE_MAX_BYTES``). That correction keeps the reduced block off the support, and a direction of
the face where W is (nearly) 0 while VᵀL(y_R)V is (nearly) c — complementarity without strictness, or a run that
ended before W's small eigenvalues did — is divided by ε just as the support is, with a coupling no correction
removes (its configuration flexes). The final certificate therefore also proves multipliers corrected with that
block raised to c + κ (``RAISE_MARGINS``, the support taken coarser, ``RAISE_SUPPORT_TOL``): the coupling is divided
by κ instead, and the dual value rises by about κ times W's weight off the support, which is small. Those raised
multipliers are also corrected exactly where a least-squares residual costs most (``equilibrate``'s ``exact``): the
reduced multipliers' support block and its coupling to the raised block, and each inner stress's support block, which
the inner lift's t multiplies into L(y)'s least eigenvalue on K's support; of the two forms the one with the smaller
predicted bound is proved. The interior point over the face lifts only the iterates whose own reduced gap is within
the tolerance, and stops once such lifts are futile (:func:`~sdpembed.solvers.mvu.ipm.solve_in_face`): the final
certificate is the one that pays.

The minimum-trace SDP (Sec. 3.1.11) has the same constraints, so the same stresses and faces: only the trace weight
changes, c = −1. Over the face the reduced SDP, max −tr W s.t. 𝒜_V(W) = D, W ⪰ 0, is convex with an objective
bounded above by 0, and has the same optimum as the original (the face holds every feasible K); its dual, min y_RᵀD
s.t. VᵀL(y_R)V ⪰ −I, is strictly feasible at y_R = 0, and a locked face's multipliers are y_R with VᵀL(y_R)V = −I
(their value −tr W). The lift aims λ_min(f·VᵀL(y_R)V) at c + ε = −1 + ε — f ≤ 1 shrinks y_R towards the dual's
interior point 0, and a block already at least 0 is not scaled — and adds t·ω until L(y) ⪰ (−1 + ε)I on 1⊥ by the
same Schur complement with c in place of 1. What the proved bound b then says: −tr K ≤ b for every feasible K, that
is tr K ≥ −b — a lower bound on the least trace, so that the returned K's trace is within the gap of the least one.

Validity with the numerical Ω: the lift only *proposes* y. The bound is proved by
:func:`sdpembed.problems.mvu.dual_bound` applied to the assembled y exactly as for any
multipliers — a Cholesky factorisation of L(y) + t·11ᵀ − cI shifted down by a rigorous bound on
its rounding errors, and yᵀD rounded upwards — so neither the stress's equilibrium, nor its
PSD-ness, nor the face's accuracy enters the proof: an inaccurate Ω gives a weaker bound, never a
wrong one, and ``sdpembed verify`` proves the same bound from the ``dual_y`` a solution file
carries. The status is ``optimal`` only when that proved bound is within ``gap_tol`` of the
returned K's objective and K meets the constraints to ``feas_tol``.

The proof's own limit: the lifted y carries t·ω with t ≳ 1/λ₊, so tr L(y) ≈ t·tr Ω is far larger
than yᵀD. The Cholesky proof's rounding shift grows like (n + 1)u·tr L(y)
(:func:`~sdpembed.problems.mvu.proof_margin`), so the proof of such multipliers runs in extended
precision (long double, u = 2⁻⁶⁴ on x86-64; :func:`~sdpembed.problems.mvu.dual_bound` chooses it
from y alone when double's margin would exceed 1e-6 and n ≤ 1,000, and ``sdpembed verify`` proves the
same way; its shift is bounded by ρ(|R|ᵀ|R|), near ‖L(y)‖₂, rather than tr L(y); an iterate of the interior
point over a face gets it only when its bound could come within ten gap tolerances of its objective, the
final certificate always),
and the dual value yᵀD, whose terms cancel, is summed exactly. A framework whose stress is weak on
its complement (a long thin surface, where the cliques resist bending only through their small
curvature and the noise) still gets a valid bound, only a looser one when t·tr Ω·(n + 1)u or the
double-precision eigenvalues that steer the lift (errors ≈ ε·t·‖Ω‖) approach the gap tolerance;
the run then ends ``inaccurate`` with the lock-up reported — never ``optimal`` without the proved
gap. When the face is larger than the minimal one, the interior point over it can break down as
over all of 1⊥; up to ``FALLBACK_MAX_EDGES`` edges the interior point over 1⊥ then runs too, and
the smaller proved bound of the two is returned with the more feasible K of those whose objective does not
exceed it (a K above a proved upper bound is infeasible, however small its violation: near a lock-up the
multipliers are large, and they magnify a tiny violation into a large excess of the objective).
Such a run's K is last brought onto the edges by Gauss–Newton on its Gram factor in the clique stress's face
(:func:`polish_in_face`: there the rows the stress makes dependent hold by themselves) and replaced where that
lowers its violation: a K within the tolerance of a face this thin can lie above the optimum, one on the edges to
rounding cannot (beyond the face's own accuracy). It changes no bound; the status is decided again by the same
rule (both tolerances).

Every step's face must hold the feasible set for the bound to be tight, not for it to be valid: a step
that cut off feasible points (a stress found at the limit of the auxiliary SDP's resolution) gives a K
that misses the constraints or a bound the proof rejects, and the status says so.

What is reported: the clique face's dimension q (and ``face_dims``, one per step), the stress's rank
n − 1 − q and its least eigenvalue on the complement λ₊ (relative to its largest), whether the edges
determine K in the last face (a lock-up: the feasible set is one point) and K's rank.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the equality MVU SDP (3.11)–(3.15) of Sec. 3.1.4, the
   angle edges (3.8), locked-up graphs (Sec. 3.1.12).
.. [2] N. Krislock and H. Wolkowicz, "Explicit sensor network localization using semidefinite
   representations and facial reductions", SIAM Journal on Optimization 20(5), 2679–2708, 2010.
   Implemented here: the face of a clique with known distances, its intersection over cliques.
.. [3] J. M. Borwein and H. Wolkowicz, "Facial reduction for a cone-convex programming problem",
   Journal of the Australian Mathematical Society (Series A) 30(3), 369–380, 1981. Implemented
   here: the restriction to the face exposed by a PSD dual direction with zero objective.
.. [4] Y.-L. Cheung, S. Schurr and H. Wolkowicz, "Preprocessing and regularization for degenerate
   semidefinite programs", in Computational and Analytical Mathematics, Springer Proceedings in
   Mathematics & Statistics 50, 251–303, 2013. Used here: the exposing vector of a further face as the
   solution of an auxiliary SDP.
.. [5] M. Halická, E. de Klerk and C. Roos, "On the convergence of the central path in semidefinite
   optimization", SIAM Journal on Optimization 12(4), 1090–1099, 2002. Used here: the central path's
   limit is a maximally complementary solution (of largest rank).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from ..._deadline import Deadline, DeadlinePassed
from ..._progress import say
from ...graphs import graph_laplacian
from ...problems.mvu import DUAL_DENSE_LIMIT, dual_bound, proof_margin, svec_edge_matrix
from ...results import SolveResult, build_result
from ..lapack import cho_factor, cho_solve
from .ipm import solve_in_face, solve_mvu_ipm
from .polish import gap_allowance

__all__ = ["Face", "clique_stress", "equilibrate", "face_of_stress", "face_stress", "face_stress_dual",
           "independent_rows", "lift_multipliers", "neighbourhood_cliques", "polish_in_face", "solve_mvu_facial"]

#: Largest edge count at which a run over a face that did not end ``optimal`` is followed by the interior
#: point over all of 1⊥ (its E × E Schur complement).
FALLBACK_MAX_EDGES = 3000

#: Largest unknown count q(q+1)/2 of W for which the edges' system is tested for determining W, and a further
#: facial-reduction step (:func:`face_stress`) is sought.
DETERMINED_MAX_UNKNOWNS = 2000

#: Largest edge count at which a face too large for the primal form of a further step (q(q+1)/2 unknowns above
#: :data:`DETERMINED_MAX_UNKNOWNS`) takes it in the edge multipliers (:func:`face_stress_dual`: Newton steps on an
#: E × E system).
DUAL_STEP_MAX_EDGES = 3000

#: Largest least-squares residual of the edges, relative to τ, over a further step's face for the step to be
#: taken: a face that no Gram matrix meeting the edges lies in was cut too small.
STEP_RESIDUAL_TOL = 1e-5

#: Least eigenvalue, relative to the largest, below which the one W that the edges determine in a further step's
#: face is indefinite and the step is not taken. On correct faces W is PSD up to the error of the face's basis
#: (relative violations of ~1e-6 on locked 16-point rolls); a spurious step's W is far from it (−0.25 on one).
STEP_PSD_TOL = 1e-4

#: The weight :func:`equilibrate` gives the rows of QᵀL(δ)Q (the support block of the reduced multipliers): large
#: enough to steer the least-squares residual out of that block, small enough for the shifted normal equations to
#: resolve the rest.
Q_BLOCK_WEIGHT = 30.0

#: The outermost stress's weakest directions whose coupling to Q :func:`equilibrate` weights by √(λ_m/λ_k): the
#: lift divides their couplings by the least levels; many more add dense rows the solve no longer resolves.
WEAK_DIRECTIONS = 25

#: Largest count of dense rows (the block of the face off K's support, b(b+1)/2 for b its dimension) for which
#: :func:`equilibrate` runs in a final certificate: its sparse normal equations take them as dense rows of length E,
#: and their product and factorisation grow with their square; above it the plain lifted multipliers are proved.
EQUILIBRATE_MAX_ROWS = 2000

#: Largest memory, in bytes, that one least-norm solve of :func:`equilibrate` may take by the estimate 24·R·(R + E)
#: of its leading terms, R its dense rows (all of them: the face off K's support, the support block QᵀL(δ)Q of
#: r(r+1)/2 rows and the weak directions' coupling, m·r): the rows themselves (R × E), their sparse copy, and the
#: dense R × R block of the normal equations and of its factors. Above it (a support of rank r in the hundreds:
#: r(r+1)/2 rows of length E) the plain lifted multipliers are proved instead.
EQUILIBRATE_MAX_BYTES = 1024**3

#: The ε of the lift (:func:`lift_multipliers`): its per-iterate candidates, and those every one of which a single
#: certificate after the interior point over a face proves (ε trades the gap f − 1 against t ∝ 1/ε where a
#: coupling is left, and the proof's rounding grows with t).
EPSILONS = (1e-9, 1e-8, 1e-7, 1e-6)
FINAL_EPSILONS = (1e-8, 1e-7, 1e-6, 2e-6, 4e-6, 8e-6)

#: The margins κ by which a final certificate also raises the reduced multipliers' block off K's support above c
#: (:func:`equilibrate`'s ``raise_to``): a direction of the face where W is (nearly) 0 but VᵀL(y_R)V is (nearly) c
#: has its coupling to the stresses' ranges divided by the lift's ε; raised to c + κ it is divided by κ instead, for
#: a dual value higher by κ times W's weight there, which is small off the support.
RAISE_MARGINS = (0.1, 0.3, 1.0)

#: The support of K for the raised certificates (:data:`RAISE_MARGINS`): W's eigenvalues above this fraction of the
#: largest. Coarser than the support the plain correction uses, since a direction whose W is small but not yet 0 (an
#: unfinished run) cannot be made complementary (its configuration flexes) but costs only κ·W when raised.
RAISE_SUPPORT_TOL = 1e-4

#: Largest entry of L(y_R)V − V at the reduced multipliers of a determined face (:func:`_unit_on_face`) for which
#: they are lifted as they are; above it (L(y)V = V has no solution: points joined by an edge of length 0) their
#: block VᵀL(y_R)V is first made I exactly (:func:`_exact_unit_block`).
UNIT_RESIDUAL_TOL = 1e-8

#: The Gauss–Newton steps (accepted or rejected) of :func:`polish_in_face` after a run over a face that did not end
#: ``optimal``: each factorises a Schur complement of the independent rows, as an interior-point iteration does.
POLISH_STEPS = 30


def neighbourhood_cliques(n: int, edges: np.ndarray, *, min_size: int = 3) -> list[np.ndarray]:
    """Cliques of the graph, one grown greedily from each edge (i, s) inside the neighbours of i
    (the neighbours with most common neighbours first), distinct, of at least ``min_size``
    vertices, each sorted. With angle edges (3.8) every input's neighbourhood is among them."""
    adjacency = np.zeros((n, n), dtype=bool)
    adjacency[edges[:, 0], edges[:, 1]] = adjacency[edges[:, 1], edges[:, 0]] = True
    found: set[tuple[int, ...]] = set()
    for i in range(n):
        near = np.flatnonzero(adjacency[i])
        common = adjacency[np.ix_(near, near)]
        order = np.argsort(-common.sum(axis=1), kind="stable")
        near, common = near[order], common[np.ix_(order, order)]
        for seed in range(near.size):
            allowed = common[seed].copy()
            members = [seed]
            for j in np.flatnonzero(allowed):
                if allowed[j]:
                    members.append(j)
                    allowed &= common[j]
            if len(members) + 1 >= min_size:
                found.add(tuple(sorted([i, *near[members].tolist()])))
    return [np.array(c) for c in sorted(found)]


def clique_stress(n: int, edges: np.ndarray, sqdist: np.ndarray, *, rank_tol: float = 1e-10,
                  cliques: list[np.ndarray] | None = None) -> tuple[np.ndarray, int]:
    """The stress ω = Σ_C ω_C of the module docstring: for each clique C, Ω_C the projector onto
    the eigenvectors of the clique's Gram matrix −½JD_CJ (classical scaling, J the centring) whose
    eigenvalues are at most ``rank_tol`` of its largest, 1 excluded; ω_e = −Σ_C (Ω_C)_ij.

    Returns
    -------
    omega : ndarray of shape (E,)
        L(ω) = Σ_C Ω_C (PSD up to rounding).
    stressed : int
        The cliques with a nonzero stress (affinely dependent points).
    """
    if cliques is None:
        cliques = neighbourhood_cliques(n, edges)
    keys = edges[:, 0].astype(np.int64) * n + edges[:, 1]
    order = np.argsort(keys)
    omega = np.zeros(edges.shape[0])
    stressed = 0
    sizes = np.array([c.size for c in cliques], dtype=int)
    for m in np.unique(sizes):
        members = np.stack([c for c in cliques if c.size == m])           # (C, m), each row sorted
        a, b = np.triu_indices(m, 1)
        pair_keys = members[:, a].astype(np.int64) * n + members[:, b]
        index = order[np.searchsorted(keys, pair_keys, sorter=order)]     # (C, m(m−1)/2) edge indices
        Dc = np.zeros((len(members), m, m))
        Dc[:, a, b] = sqdist[index]
        Dc += Dc.transpose(0, 2, 1)
        J = np.eye(m) - 1.0 / m
        G = -0.5 * J @ Dc @ J
        scale = np.abs(G).max(axis=(1, 2), keepdims=True)
        levels, vectors = np.linalg.eigh(G + scale / m)                  # 1 moved to the eigenvalue scale
        null = levels <= rank_tol * levels[:, -1:]
        if not null.any():
            continue
        P = np.einsum("cik,cjk->cij", vectors * null[:, None, :], vectors)
        np.add.at(omega, index, -P[:, a, b])
        stressed += int(np.sum(null.any(axis=1)))
    return omega, stressed


@dataclass(frozen=True)
class Face:
    """The face of the PSD cone exposed by a stress Ω = L(ω): ``V`` (n × q) an orthonormal basis of
    null Ω ∩ 1⊥, ``U`` (n × (n − 1 − q)) of the rest of 1⊥, ``levels`` Ω's eigenvalues on U
    (ascending) and ``top`` its largest."""

    V: np.ndarray
    U: np.ndarray
    levels: np.ndarray
    top: float

    @property
    def dim(self) -> int:
        """q, the face's dimension."""
        return self.V.shape[1]

    @property
    def stress_floor(self) -> float:
        """λ₊/λ_max: the stress's least eigenvalue on the complement of the face, relative (0 if none)."""
        return float(self.levels[0] / self.top) if self.levels.size and self.top > 0 else 0.0


def face_of_stress(n: int, edges: np.ndarray, omega: np.ndarray, *, face_tol: float = 1e-11) -> Face:
    """The :class:`Face` of L(ω): eigenvectors of L(ω) on 1⊥ whose eigenvalues are at most ``face_tol``
    of the largest span the face (dense ``eigh``, O(n³))."""
    L = graph_laplacian(n, edges, omega).toarray()
    top = max(float(np.abs(L).sum(axis=1).max()), 1e-300)
    levels, vectors = np.linalg.eigh(L + (2.0 * top / n))              # 1 moved above every eigenvalue
    ones = int(np.argmax(np.abs(vectors.sum(axis=0))))
    keep = np.ones(n, dtype=bool)
    keep[ones] = False
    levels, vectors = levels[keep], vectors[:, keep]
    largest = float(levels[-1]) if levels.size else 0.0
    in_face = levels <= face_tol * max(largest, 1e-300)
    return Face(V=vectors[:, in_face], U=vectors[:, ~in_face], levels=levels[~in_face], top=largest)


def face_stress(instance, face: Face, *, null_tol: float = 1e-8, gap: float = 1e-11, max_newton: int = 50,
                system=None, deadline: Deadline | None = None) -> tuple[np.ndarray, Face] | None:
    """A further facial-reduction step: a stress of the SDP restricted to ``face`` and the smaller face it
    exposes inside it, or None when that SDP has a strictly feasible point (module docstring).

    With K = VWVᵀ the restricted SDP's constraints are 𝒜_V(W)_e = b_eᵀWb_e = D_e (b_e the edge in face
    coordinates): W = W_p + Σ_k c_k Δ_k (W_p the least-squares solution, Δ_k a basis of the null space of
    𝒜_V, at ``null_tol`` of its largest singular value). The auxiliary SDP

        minimise μ  s.t.  W_p + Σ_k c_k Δ_k + μI ⪰ 0,

    whose optimum is at most 0 (the instance is feasible), has the dual: maximise −⟨S, W_p⟩ s.t. S ⪰ 0,
    tr S = 1, ⟨S, Δ_k⟩ = 0 — S = 𝒜_V*(z) = VᵀL(z)V for some z with zᵀD = ⟨S, W_p⟩ = 0 at an optimum of
    value 0: a PSD stress of the restricted SDP ([4] of the module docstring). Its central path (barrier
    −log det, the parameter multiplied by 4 per centring, until the gap q/parameter is ``gap`` of W_p's
    scale or rounding stops the centring) ends at a maximally complementary pair ([5]), so S = G/tr G
    (G = (W + μI)⁻¹ at the last centre) is a stress of the largest rank. The directions where the last
    centring shrank W + μI more than twofold span its range; a μ below 0 (some W ≻ 0 meets the edges)
    means there is none. z is the least-norm solution of VᵀL(z)V = S, zᵀD = 0. A ``deadline`` is checked at
    every Newton step and step halving (:meth:`~sdpembed._deadline.Deadline.check`): an unfinished central path
    exposes no face, so a passed deadline raises :class:`~sdpembed._deadline.DeadlinePassed`.

    Returns
    -------
    (z, inner) or None
        z (E,) and the inner :class:`Face`: V the rest of ``face``, U the stress's range, ``levels`` its
        eigenvalues there. Any inaccuracy only weakens the bound :func:`~sdpembed.problems.mvu.dual_bound`
        proves from the lifted multipliers (:func:`lift_multipliers`).
    """
    edges, D = instance.edges, instance.sqdist / instance.tau
    q = face.dim
    Bv = face.V[edges[:, 0]] - face.V[edges[:, 1]]
    M, a, b, (left, sigma, right) = _edge_system(Bv) if system is None else system
    r = int(np.sum(sigma > null_tol * sigma[0]))

    def matrix(coefficients: np.ndarray) -> np.ndarray:
        out = np.zeros(coefficients.shape[:-1] + (q, q))
        out[..., a, b] = coefficients
        out[..., b, a] = coefficients
        return out

    Wp = matrix(right[:r].T @ ((left[:, :r].T @ D) / sigma[:r]))
    A = np.concatenate([matrix(right[r:]), np.eye(q)[None]])          # the Δ_k, then μ's I
    low, top = np.linalg.eigvalsh(Wp)[[0, -1]]
    scale = max(abs(low), abs(top))
    x = np.zeros(len(A))
    x[-1] = 2.0 * max(-low, 0.0) + scale
    barrier = q / x[-1]
    unit = np.zeros(len(A))
    unit[-1] = 1.0
    levels = previous = np.linalg.eigvalsh(Wp + x[-1] * np.eye(q))
    centre = x
    while True:
        for _ in range(max_newton):                   # centring: damped Newton on barrier·μ − log det
            _check(deadline)
            W = Wp + np.tensordot(x, A, 1)
            GA = np.linalg.solve(W, A)                       # (W⁻¹Δ_k)
            grad = barrier * unit - np.einsum("kii->k", GA)
            hess = np.einsum("kij,lji->kl", GA, GA)
            step = -np.linalg.solve(hess, grad)
            decrement = float(-grad @ step)
            length = 1.0 / (1.0 + np.sqrt(decrement)) if decrement > 0.25 else 1.0
            while np.linalg.eigvalsh(W + length * np.tensordot(step, A, 1))[0] <= 0.0 and length > 1e-12:
                _check(deadline)
                length *= 0.5
            x = x + length * step
            if x[-1] < 0.0:                           # W_p + Σ c_k Δ_k ≻ 0: the restricted SDP is strictly feasible
                return None
            if decrement < 1e-12:
                break
        else:                                         # rounding stops the centring: the last centre is the answer
            break
        centre = x
        previous, levels = levels, np.linalg.eigvalsh(Wp + np.tensordot(x, A, 1))
        if q / barrier <= gap * scale:
            break
        barrier *= 4.0
    x = centre
    rank = int(np.sum(previous > 2.0 * levels))
    if rank == 0 or rank == q:
        return None
    # S = G/tr G by W's eigenvectors (its inverse would carry errors of ε·cond); the least-norm z with 𝒜_V*(z) = S
    # and zᵀD = 0; the inner face from 𝒜_V*(z) itself, so that the lift sees the stress it adds
    values, vectors = np.linalg.eigh(Wp + np.tensordot(x, A, 1))
    S = (vectors / values) @ vectors.T / np.sum(1.0 / values)
    system = np.vstack([M.T * np.where(a == b, 1.0, 0.5)[:, None], D[None]])
    z = np.linalg.lstsq(system, np.append(S[a, b], 0.0), rcond=null_tol)[0]
    Bz = (Bv * z[:, None]).T @ Bv
    levels, turn = np.linalg.eigh(0.5 * (Bz + Bz.T))
    inner = Face(V=face.V @ turn[:, :q - rank], U=face.V @ turn[:, q - rank:], levels=levels[q - rank:],
                 top=float(levels[-1]))
    return z, inner


def face_stress_dual(instance, face: Face, *, gap: float = 1e-11, max_newton: int = 50, rows: np.ndarray | None = None,
                     report: dict | None = None, deadline: Deadline | None = None) -> tuple[np.ndarray, Face] | None:
    """The facial-reduction step of :func:`face_stress` posed in the edge multipliers (its dual form), for a face
    whose W has too many unknowns q(q+1)/2 for the null-space basis of the primal form.

    With b_e the edge in face coordinates (rows ``rows`` of the edges, default :func:`independent_rows`: the
    constraint matrices b_eb_eᵀ of the others lie in their span, so every S below is reached) the auxiliary SDP

        minimise zᵀD  s.t.  S(z) = Σ_e z_e b_eb_eᵀ ⪰ 0,  tr S(z) = 1,

    over z ∈ R^rows has the optimum 0 exactly when a stress of the restricted SDP exists (zᵀD = ⟨S(z), W⟩ ≥ 0 for
    every feasible W ⪰ 0, and > 0 when one is positive definite). It is the Lagrange dual of :func:`face_stress`'s
    auxiliary SDP, maximise λ s.t. 𝒜_V(W) = D, W ⪰ λI, and both are strictly feasible (S of the unit weights is
    positive definite on the face of a connected graph). Its central path (barrier −log det S, the objective's
    weight t multiplied by 4 per centring, damped Newton steps on the E × E system
    ∇²_{ef} = (b_eᵀS⁻¹b_f)², with tr S = 1 by a Lagrange multiplier) carries the dual point W = S⁻¹/t + λI, which
    meets the edges with W − λI ≻ 0, and the gap q/t: λ = zᵀD − q/t at a centre. A centre with λ > 0 is a
    positive definite W meeting the edges: no stress (None), as the primal form's μ < 0. Otherwise the path ends
    (gap q/t at ``gap`` of D's scale in W, or rounding stops the centring) at a maximally complementary solution
    ([5] of the module docstring): S(z)'s eigenvalues on the stress's range settle while those on the face fall
    like 1/t (1/√t without strict complementarity), so its range is spanned by the eigenvectors whose eigenvalues
    kept more than half their value over the last two centrings. As in the primal form, z is then the
    least-squares solution of S(z) = S_R (S at the last centre on that range) with zᵀD = 0, by the normal
    equations of the E × E matrix (b_eᵀb_f)², and the inner face comes from S(z) itself.

    ``report`` (optional) receives ``lower``, the last centre's λ relative to W's scale max_e D_e/|b_e|², and
    ``centres``, the centres computed. A ``deadline`` is checked at every Newton step and step halving, as in
    :func:`face_stress` (each costs O(q²·E + E³) here: the step at n = 1,000 can outlast a whole solve's budget); a
    passed one raises :class:`~sdpembed._deadline.DeadlinePassed`.

    Returns
    -------
    (z, inner) or None
        As :func:`face_stress`: z (E,) (zero off ``rows``) and the inner :class:`Face`.
    """
    edges, D_all = instance.edges, instance.sqdist / instance.tau
    q = face.dim
    Bv = face.V[edges[:, 0]] - face.V[edges[:, 1]]
    rows = independent_rows(Bv) if rows is None else rows
    B, D = Bv[rows], D_all[rows]
    c = np.sum(B * B, axis=1)                                  # tr b_eb_eᵀ
    scale = float(np.max(D / c))                               # W's scale: b_eᵀWb_e/|b_e|²

    def stress(z: np.ndarray) -> np.ndarray:
        return (B * z[:, None]).T @ B

    def factor(z: np.ndarray) -> np.ndarray | None:
        try:
            return np.linalg.cholesky(stress(z))
        except np.linalg.LinAlgError:
            return None

    z = np.full(len(rows), 1.0 / float(np.sum(c)))              # S = BᵀB/tr ≻ 0
    chol = factor(z)
    if chol is None:
        return None
    t = q / max(float(z @ D), 1e-300)
    centres: list[tuple[np.ndarray, np.ndarray]] = []
    while True:
        centred = False
        for _ in range(max_newton):
            _check(deadline)
            Y = np.linalg.solve(chol, B.T)                         # C⁻¹bₑ: (BS⁻¹Bᵀ) = YᵀY
            P = Y.T @ Y
            grad = t * D - np.diag(P)
            kkt = np.block([[P * P, c[:, None]], [c[None], np.zeros((1, 1))]])
            solution = np.linalg.solve(kkt, -np.append(grad, 0.0))   # LU: late centres' systems are ill-conditioned
            step, w = solution[:-1], float(solution[-1])
            decrement = float(-(grad + w * c) @ step)
            if decrement < 1e-12:
                centred = True
                break
            length = 1.0 / (1.0 + np.sqrt(decrement)) if decrement > 0.25 else 1.0
            while (new := factor(z + length * step)) is None and length > 1e-12:
                _check(deadline)
                length *= 0.5
            if new is None:
                break
            z, chol = z + length * step, new
        if not centred:                                        # rounding stops the centring: the last centre
            break
        lower = float(z @ D) - q / t                           # the dual value λ at this centre
        if report is not None:
            report.update(lower=lower / scale, centres=len(centres) + 1)
        if lower > 0.0:                                        # W ⪰ λI ≻ 0 meets the edges: no stress
            return None
        centres.append((z, np.linalg.eigvalsh(stress(z))))
        if q / t <= gap * scale:
            break
        t *= 4.0
    if len(centres) < 3:
        return None
    z, levels = centres[-1]
    rank = int(np.sum(levels > 0.5 * centres[-3][1]))
    if rank == 0 or rank == q:
        return None
    values, vectors = np.linalg.eigh(stress(z))
    top = vectors[:, q - rank:]
    target = np.sum((B @ top) ** 2 * values[q - rank:], axis=1)     # (b_eᵀS_Rb_e)_e
    gram = (B @ B.T) ** 2
    kkt = np.block([[gram, D[:, None]], [D[None], np.zeros((1, 1))]])
    z = np.zeros(len(edges))
    z[rows] = np.linalg.solve(kkt, np.append(target, 0.0))[:-1]
    Bz = (Bv * z[:, None]).T @ Bv
    levels, turn = np.linalg.eigh(0.5 * (Bz + Bz.T))
    inner = Face(V=face.V @ turn[:, :q - rank], U=face.V @ turn[:, q - rank:], levels=levels[q - rank:],
                 top=float(levels[-1]))
    return z, inner


def _check(deadline: Deadline | None) -> None:
    """:meth:`~sdpembed._deadline.Deadline.check` of ``deadline`` when there is one."""
    if deadline is not None:
        deadline.check()


def _edge_system(Bv: np.ndarray):
    """The edges' linear system on W in face coordinates: M (E × q(q+1)/2,
    :func:`~sdpembed.problems.mvu.svec_edge_matrix`), its index arrays and its thin singular value decomposition."""
    M, a, b = svec_edge_matrix(Bv)
    return M, a, b, np.linalg.svd(M, full_matrices=False)


def _edge_residual(system, D: np.ndarray) -> float:
    """max_e |𝒜_V(W)_e − D_e| at the least-squares W of the edges' ``system`` (:func:`_edge_system`)."""
    _, _, _, (left, sigma, _) = system
    r = int(np.sum(sigma > 1e-8 * sigma[0]))
    return float(np.max(np.abs(D - left[:, :r] @ (left[:, :r].T @ D))))



def _determined_indefinite(system, D: np.ndarray) -> float | None:
    """λ_min/λ_max of the one W that meets the edges when their ``system`` (:func:`_edge_system`, None: not built)
    determines it (the rank test of :func:`_determined`) and that W is indefinite beyond :data:`STEP_PSD_TOL`;
    None otherwise. The least-squares residual alone cannot reject such a face: an ill-conditioned system fits
    the edges with a large indefinite W, and no Gram matrix of the face meets them."""
    if system is None:
        return None
    M, a, b, (_, sigma, _) = system
    if not sigma[-1] > 1e-8 * sigma[0]:
        return None
    levels = np.linalg.eigvalsh(_least_squares_w(M, a, b, D))
    ratio = float(levels[0] / max(abs(float(levels[-1])), 1e-300))
    return ratio if ratio < -STEP_PSD_TOL else None


def _least_squares_w(M: np.ndarray, a: np.ndarray, b: np.ndarray, D: np.ndarray) -> np.ndarray:
    """The symmetric W whose upper triangle (indices ``a``, ``b``) is the least-squares solution of M·svec(W) = D."""
    w, *_ = np.linalg.lstsq(M, D, rcond=None)
    W = np.zeros((int(b.max()) + 1,) * 2)
    W[a, b] = w
    return W + np.triu(W, 1).T


def _primal_form(q: int, edges: int) -> bool:
    """Whether a face of dimension q takes the primal-form step (:func:`face_stress`) and the test whether the edges
    determine W: q(q+1)/2 unknowns, at most the edge count and :data:`DETERMINED_MAX_UNKNOWNS`."""
    return q * (q + 1) // 2 <= min(DETERMINED_MAX_UNKNOWNS, edges)


def _row_residual(Bv: np.ndarray, D: np.ndarray) -> float:
    """max_e |𝒜_V(W)_e − D_e| at the least-norm W that meets the edges of :func:`independent_rows` exactly (W a
    combination of their b_eb_eᵀ, by the Gram matrix (b_eᵀb_f)²): without the q(q+1)/2 columns of the system."""
    rows = independent_rows(Bv)
    gram = (Bv @ Bv[rows].T) ** 2
    alpha = np.linalg.solve(gram[rows], D[rows])
    return float(np.max(np.abs(D - gram @ alpha)))

def lift_multipliers(instance, steps, y_face: np.ndarray, *, epsilons=EPSILONS) -> np.ndarray:
    """Multipliers of the original equality SDP from reduced ones y_R with VᵀL(y_R)V ⪰ a positive multiple
    of I on the innermost face V, lifted through the facial-reduction ``steps`` (pairs (:class:`Face`,
    stress), outermost first, each face inside the one before): at each step, innermost first,
    y ← f·y + t·ω (module docstring), f and t chosen by the Schur-complement condition on the span of
    that step's [V, U], t twice that least value at every step but the outermost. For each ε of ``epsilons``
    (the same at every step) the y with the smallest predicted proved bound (yᵀD, the proof's rounding margin,
    :func:`~sdpembed.problems.mvu.proof_margin`, and the factor by which λ_min(L(y)|₁⊥) falls short of 1,
    estimated) is returned — to be proved by :func:`~sdpembed.problems.mvu.dual_bound`, which decides."""
    D = instance.sqdist
    best, best_y = float("inf"), y_face
    for eps in epsilons:
        y = y_face
        for k, (face, omega) in enumerate(reversed(steps)):
            # an inner step's least t leaves L(y) at 1 + ε on that step's U, which the next step's Schur complement
            # divides the coupling to its own U by: (t·b)²/ε. Twice the least t leaves a margin of about t·s there
            # instead, and the coupling costs (2t·b)²/(t·s) = 4t·b²/s — the least of κ²/(κ − 1) over κ
            y = _lift_step(instance, face, omega, y, eps, stretch=2.0 if k < len(steps) - 1 else 1.0)
            if y is None:
                break
        if y is None:
            continue
        predicted = _predicted_bound(instance, y, float(y @ D))
        if predicted < best:
            best, best_y = predicted, y
    return best_y


def _predicted_bound(instance, y: np.ndarray, value: float) -> float:
    """The bound :func:`~sdpembed.problems.mvu.dual_bound` is expected to prove from y of dual value ``value``: a y
    whose λ_min(L(y)|₁⊥) = μ falls short of c is scaled by c/μ (c = 1), or mixed with the dual's interior point 0
    with weight 1/|μ| (c = −1, min_trace: μ < −1), and the proof's rounding margin costs a relative
    :func:`~sdpembed.problems.mvu.proof_margin` of the result (away from the bound's side); ∞ for a y that is not
    finite (a lift of multipliers near the largest double), which proves no bound."""
    if not (np.all(np.isfinite(y)) and np.isfinite(value)):
        return float("inf")
    margin = proof_margin(instance, y)
    if instance.trace_weight > 0.0:
        return value * (1.0 + margin) / min(_least_level(instance, y), 1.0)
    value = value / max(-_least_level(instance, y), 1.0)
    return value + abs(value) * margin


def _gap_left(instance, candidates: list[tuple[float, np.ndarray]], objective: float | None, gap_tol: float) -> bool:
    """Whether the least bound of the proved ``candidates`` leaves the relative gap of ``objective`` (the K the
    final certificate is for; None: not known) above ``gap_tol``: only then are the raised forms
    (:data:`RAISE_MARGINS`, several lifts and proofs each) worth trying. A gap at or below the tolerance — or
    negative, where a smaller bound cannot certify the K — is settled by the plain forms."""
    return objective is None or instance.relative_gap(min(bound for bound, _ in candidates), objective) > gap_tol


def _proved(instance, y: np.ndarray, goal: tuple[float, float] | None = None) -> tuple[float, np.ndarray]:
    """:func:`~sdpembed.problems.mvu.dual_bound` of y, or (inf, y) — no bound — when y is not finite (reduced
    multipliers near the largest double, whose least-norm corrections or lift overflowed)."""
    if not np.all(np.isfinite(y)):
        return float("inf"), y
    return dual_bound(instance, y, goal=goal)


def _least_level(instance, y: np.ndarray) -> float:
    """An estimate of λ_min(L(y)) on 1⊥ (dense ``eigvalsh``, 1 moved above the spectrum): a y the lift left
    below 1 there is scaled up by :func:`~sdpembed.problems.mvu.dual_bound`, which costs its bound that factor."""
    L = graph_laplacian(instance.n, instance.edges, y).toarray()
    top = float(np.abs(L).sum(axis=1).max())
    return float(np.linalg.eigvalsh(L + (2.0 * top + 2.0) / instance.n)[0])


def _lift_step(instance, face: Face, omega: np.ndarray, y: np.ndarray, eps: float, *,
               stretch: float = 1.0) -> np.ndarray | None:
    """One step of :func:`lift_multipliers`: f·y + t·ω with λ_min(f·VᵀL(y)V) = c + ε (c the instance's trace
    weight: 1, or −1 for min_trace, where f ≤ 1 and f = 1 when λ_min(VᵀL(y)V) ≥ 0) and t ``stretch`` times the
    least value making L(f·y + t·ω) ⪰ (c + ε)I on span[V, U] by the Schur complement (module docstring); None
    when VᵀL(y)V is not positive definite (c = 1), f·VᵀL(y)V − cI is singular in double precision, or y or
    VᵀL(y)V is not finite."""
    if not np.all(np.isfinite(y)):
        return None
    basis = np.hstack([face.V, face.U])
    with np.errstate(over="ignore", invalid="ignore"):
        A = basis.T @ (graph_laplacian(instance.n, instance.edges, y) @ basis)
    A = 0.5 * (A + A.T)
    if not np.all(np.isfinite(A)):
        # multipliers near the largest double (a reduced solve that lost its scale): no lift, no LAPACK call on inf
        return None
    q, k = face.dim, face.U.shape[1]
    c = instance.trace_weight
    AVV, AUV, AUU = A[:q, :q], A[q:, :q], A[q:, q:]
    low = float(np.linalg.eigvalsh(AVV)[0]) if q else 1.0
    if c > 0.0 and not low > 0.0:
        return None
    root = 1.0 / np.sqrt(face.levels)
    # λ_min(f·A_VV) = c + ε; for c = −1 (min_trace) f shrinks y towards 0, the dual's interior point, and a
    # block already at least c + ε (low ≥ 0) needs no scaling
    f = (c + eps) / low if c > 0.0 or low < 0.0 else 1.0
    cross = f * AUV
    try:
        H = (c + eps) * np.eye(k) - f * AUU + cross @ np.linalg.solve(f * AVV - c * np.eye(q), cross.T)
    except np.linalg.LinAlgError:
        # f·A_VV − I has least eigenvalue ε against f·λ_max(A_VV): beyond double precision when an inner step's
        # lift made y large (λ_max/ε ≳ 1/eps), and LU meets an exact zero pivot. This ε gives no lift; another may
        return None
    t = max(float(np.linalg.eigvalsh(root[:, None] * H * root[None, :])[-1]), 0.0) * (1.0 + 1e-6) * stretch
    return f * y + t * omega


def solve_mvu_facial(
    instance,
    *,
    gap_tol: float = 1e-6,
    feas_tol: float = 1e-6,
    max_iter: int = 100,
    rank_tol: float = 1e-10,
    face_tol: float = 1e-11,
    verbose: bool | int = False,
    time_limit: float | None = None,
    blas_threads: int | None = -1,
    cpu_time_limit: float | None = None,
) -> SolveResult:
    """Solve an equality or min_trace :class:`~sdpembed.problems.MVUInstance` by facial reduction (module
    docstring) and certify the answer for the original SDP; the inequality and slack variants, and graphs
    without a clique stress, are solved by the interior point (:func:`~sdpembed.solvers.mvu.ipm.solve_mvu_ipm`).

    Parameters
    ----------
    instance : MVUInstance
    gap_tol, feas_tol, max_iter, verbose, time_limit, blas_threads, cpu_time_limit
        As :func:`~sdpembed.solvers.mvu.ipm.solve_mvu_ipm` (``max_iter`` and the time limits bound the
        interior point over the face when the edges do not determine K in it; the time limits count from the
        start of the facial reduction and are checked between its steps and inside the auxiliary SDP of a further
        step (at every Newton step of :func:`face_stress` and :func:`face_stress_dual`): a run stopped before the
        reduced SDP is solved returns the starting point of the interior point over all of 1⊥ with the proved bound
        of its starting multipliers, its message naming where it stopped; a run that reached a time limit skips
        :func:`polish_in_face` and the final certificate's :func:`equilibrate`, and one that reaches it during
        them ends the polish's steps and the certificate's proofs there, the best of those done kept).
    rank_tol : float
        A clique's points are affinely dependent where its Gram matrix has eigenvalues at most
        ``rank_tol`` of its largest (:func:`clique_stress`).
    face_tol : float
        The face is spanned by the stress's eigenvectors with eigenvalues at most ``face_tol`` of
        its largest (:func:`face_of_stress`).

    Returns
    -------
    SolveResult
        ``method`` ``"facial"``; ``extra`` holds the proved multipliers ``y`` of the original SDP,
        ``face_dim`` q (the clique stress's face), ``face_dims`` (the face of every facial-reduction step
        taken, :func:`face_stress`; K lies in the last), ``dual_form_lower`` (when a step was posed in the edge
        multipliers: the last dual value λ of :func:`face_stress_dual`), ``stress_rank`` n − 1 − q,
        ``stress_min_on_complement`` λ₊/λ_max, ``stressed_cliques``, ``determined`` (the edges determine K
        in the last face: a lock-up) and the embedding ``Y``.
    """
    if instance.variant not in ("equality", "min_trace"):
        return solve_mvu_ipm(instance, gap_tol=gap_tol, feas_tol=feas_tol, max_iter=max_iter, verbose=verbose,
                             time_limit=time_limit, blas_threads=blas_threads, cpu_time_limit=cpu_time_limit)
    if instance.n > DUAL_DENSE_LIMIT:
        raise ValueError(f"facial reduction is dense in n; n = {instance.n} exceeds {DUAL_DENSE_LIMIT}")
    limit = (1 if instance.n < 300 else None) if blas_threads == -1 else blas_threads
    with threadpool_limits(limits=limit, user_api="blas"):
        result = _solve(instance, gap_tol, feas_tol, max_iter, rank_tol, face_tol, verbose,
                        Deadline.of(time_limit, cpu_time_limit))
    return _merged(instance, result, gap_tol, feas_tol)


def _merged(instance, result: SolveResult, gap_tol: float, feas_tol: float) -> SolveResult:
    """``result`` judged on its K with the points joined by edges of length 0 merged
    (:meth:`~sdpembed.problems.MVUInstance.feasible_point`): off that face a K within the violation tolerance can
    lie above the optimum (a thin face), so that its gap to the proved bound says nothing; the bound is unchanged
    and the status decided again by both tolerances. ``result`` itself without duplicates."""
    if not instance.has_duplicates:
        return result
    K = instance.feasible_point(result.solution)
    primal = _primal(instance, K, result)
    objective, violation = primal.objective, primal.max_violation
    bound = result.dual_bound
    rgap = instance.relative_gap(bound, objective) if np.isfinite(bound) else float("nan")
    # a gap below 0 beyond rounding proves K above every feasible point (polish.gap_allowance)
    optimal = violation <= feas_tol and -gap_allowance(instance) <= rgap <= gap_tol
    status = "optimal" if optimal else ("inaccurate" if result.status == "optimal" else result.status)
    message = result.message + (f"; judged with the points joined by edges of length 0 merged: violation "
                                f"{violation:.2e}, certified relative gap {rgap:.2e}")
    return build_result(
        instance.problem, instance.variable, K, objective, bound, sense="max", rgap=rgap, status=status,
        message=message, method=result.method, solver=result.solver, max_violation=violation,
        iterations=result.iterations, start=time.perf_counter() - result.wall_time, history=result.history,
        extra=primal.extra,
    )


def _solve(instance, gap_tol, feas_tol, max_iter, rank_tol, face_tol, verbose, deadline) -> SolveResult:
    """The body of :func:`solve_mvu_facial`."""
    t0 = time.perf_counter()
    n, edges, D = instance.n, instance.edges, instance.sqdist

    def spent() -> bool:
        return deadline is not None and deadline.passed()

    omega, stressed = clique_stress(n, edges, D, rank_tol=rank_tol)
    if spent():
        return _stopped(instance, gap_tol, feas_tol, verbose, deadline, t0, "after the clique stresses",
                        {"stressed_cliques": stressed, "face_dims": []})
    face = face_of_stress(n, edges, omega, face_tol=face_tol) if stressed else None
    info = {"stressed_cliques": stressed, "face_dim": n - 1 if face is None else face.dim,
            "face_dims": [] if face is None else [face.dim],
            "stress_rank": 0 if face is None else n - 1 - face.dim,
            "stress_min_on_complement": 0.0 if face is None else face.stress_floor}
    if verbose:
        say(f"mvu facial: n = {n}, {len(edges)} edges; {stressed} stressed cliques, face of dimension "
            f"{info['face_dim']} (stress rank {info['stress_rank']}, λ+/λmax {info['stress_min_on_complement']:.1e})")
    text = (f"; facial reduction: {stressed} stressed cliques, face of dimension {info['face_dim']} "
            f"(stress of rank {info['stress_rank']}, least eigenvalue on the complement "
            f"{info['stress_min_on_complement']:.2e} of its largest)")
    if face is None or face.dim == n - 1:
        result = solve_in_face(instance, gap_tol=gap_tol, feas_tol=feas_tol, max_iter=max_iter, verbose=verbose,
                               deadline=deadline, t0=t0, method="facial")
        return _annotate(result, text, {**info, "determined": False})

    steps = [(face, omega)]

    def certificate(y_face: np.ndarray, support: np.ndarray | None = None, goal: tuple[float, float] | None = None,
                    raised_support: np.ndarray | None = None,
                    objective: float | None = None) -> tuple[float, np.ndarray]:
        proved = _proved(instance, lift_multipliers(instance, steps, y_face), goal)
        if support is None or (len(steps) == 1 and last["determined"]):
            return proved
        if spent():                            # the lift's proof stands; equilibrate and its proofs are skipped
            last["limit"] = deadline.reached()
            return proved
        if not _equilibrates(steps, support, len(edges)):
            last["limit"] = _equilibrate_limit(steps, support, len(edges))
            return proved
        last["limit"] = None                   # this certificate's own: the message describes the last one
        # multipliers complementary to the optimum's support Q (equilibrate): the lift's 1/ε couplings removed;
        # a single certificate, so each ε is proved rather than predicted. Every proof stands alone, so a deadline
        # passed between them keeps the least bound proved so far
        y_eq, steps_eq = equilibrate(instance, steps, y_face, support)
        candidates = [proved]
        for eps in FINAL_EPSILONS:
            if spent():
                break
            candidates.append(_proved(instance, lift_multipliers(instance, steps_eq, y_eq, epsilons=(eps,))))
        if raised_support is not None and not spent() and _gap_left(instance, candidates, objective, gap_tol) \
                and _equilibrates(steps, raised_support, len(edges)):
            # the face's block off K's support raised to c + κ (equilibrate's raise_to), its residuals on the support
            # removed exactly or not (where the support's configuration flexes, the exact rows can ask for large
            # corrections): each κ's best ε and form by the predicted bound, proved once
            for margin in RAISE_MARGINS:
                if spent():
                    break
                lifted = [lift_multipliers(instance, steps_up, y_up, epsilons=FINAL_EPSILONS)
                          for y_up, steps_up in (equilibrate(instance, steps, y_face, raised_support, raise_to=margin,
                                                             exact=exact) for exact in (False, True))]
                best = min(lifted, key=lambda y: _predicted_bound(instance, y, float(y @ D)))
                candidates.append(_proved(instance, best))
        if spent():
            last["cut"] = f"stopped after proving {len(candidates)} candidate multipliers ({deadline.reached()})"
        return min(candidates, key=lambda p: p[0])

    last = {"determined": False, "y_face": None, "limit": None, "cut": None}

    Bv = face.V[edges[:, 0]] - face.V[edges[:, 1]]
    system = None
    while True:
        if spent():                            # before a further step (the next may take minutes at n = 2,000)
            return _stopped(instance, gap_tol, feas_tol, verbose, deadline, t0,
                            f"after facial-reduction step {len(steps)} (face of dimension {face.dim})", info)
        primal = _primal_form(face.dim, len(edges))
        dual = not primal and face.dim * (face.dim + 1) // 2 > DETERMINED_MAX_UNKNOWNS \
            and len(edges) <= DUAL_STEP_MAX_EDGES
        report: dict = {}
        try:
            if primal:
                system = _edge_system(Bv) if system is None else system
                found = face_stress(instance, face, system=system, deadline=deadline)
            elif dual:
                found = face_stress_dual(instance, face, report=report, deadline=deadline)
        except DeadlinePassed:                 # inside the auxiliary SDP, whose unfinished path exposes no face
            form = "" if primal else f" in the edge multipliers, {report.get('centres', 0)} centres reached"
            return _stopped(instance, gap_tol, feas_tol, verbose, deadline, t0,
                            f"during facial-reduction step {len(steps) + 1} (the auxiliary SDP of the face of "
                            f"dimension {face.dim}{form})", info)
        if not (primal or dual):
            break
        if dual:
            info["dual_form_lower"] = report.get("lower", float("nan"))
            if found is None:
                text += (f"; the auxiliary SDP of a further step, in the edge multipliers, found no stress of the SDP "
                         f"restricted to the face of dimension {face.dim} (last dual value λ = "
                         f"{report.get('lower', float('nan')):.1e} of W's scale: W ⪰ λI meets the edges)")
        if found is not None:
            z, inner = found
            inner_Bv = inner.V[edges[:, 0]] - inner.V[edges[:, 1]]
            inner_system = _edge_system(inner_Bv) if _primal_form(inner.dim, len(edges)) else None
            miss = (_edge_residual(inner_system, D) if inner_system is not None
                    else _row_residual(inner_Bv, D)) / instance.tau
            indefinite = _determined_indefinite(inner_system, D)
            if miss <= STEP_RESIDUAL_TOL and indefinite is None:
                steps.append((inner, z))
                rank = face.dim - inner.dim
                face, Bv, system = inner, inner_Bv, inner_system
                info["face_dims"] = [step.dim for step, _ in steps]
                form = "" if primal else " in the edge multipliers"
                if verbose:
                    say(f"mvu facial: a stress of the SDP in that face{form} (rank {rank}) leaves a face of dimension "
                        f"{face.dim}")
                text += (f"; a stress of the SDP restricted to that face{form} (rank {rank}, facial reduction step "
                         f"{len(steps)}) leaves a face of dimension {face.dim}")
                continue
            # a stress found at the limit of the auxiliary SDP's resolution: its face cuts the feasible set off
            why = (f"residual {miss:.1e} of τ" if indefinite is None else
                   f"the one matrix of its face that meets them is indefinite, λmin/λmax {indefinite:.1e}")
            text += (f"; a stress of rank {face.dim - inner.dim} of the SDP restricted to the face of dimension "
                     f"{face.dim} was not taken (no Gram matrix of its face meets the edges: {why})")
        if primal:
            M, a, b, (_, sigma, _) = system
            if sigma[-1] > 1e-8 * sigma[0]:
                if spent():                    # before the lift and its proofs
                    return _stopped(instance, gap_tol, feas_tol, verbose, deadline, t0,
                                    f"after facial-reduction step {len(steps)} (the edges determine K in its face)",
                                    info)
                last["determined"] = True
                result = _determined(instance, face, M, a, b, certificate, gap_tol, feas_tol, t0, info, text)
                if last["limit"] is not None:
                    result.message += f"; the multipliers were not made complementary to K's support: {last['limit']}"
                if last["cut"] is not None:
                    result.message += f"; the certificate made complementary to K's support: {last['cut']}"
                return result
        break
    if spent():                                # before the run over the face, whose first iterate is lifted and proved
        return _stopped(instance, gap_tol, feas_tol, verbose, deadline, t0,
                        f"after facial-reduction step {len(steps)} (face of dimension {face.dim})", info)
    rows = independent_rows(Bv)
    info["independent_edges"] = int(rows.size)

    def certificate_of_rows(y_rows: np.ndarray, goal: tuple[float, float] | None = None) -> tuple[float, np.ndarray]:
        y_face = np.zeros(len(edges))
        y_face[rows] = y_rows
        last["y_face"] = y_face
        return certificate(y_face, goal=goal)

    result = solve_in_face(instance, basis=face.V, certificate=certificate_of_rows, gap_tol=gap_tol,
                           feas_tol=feas_tol, max_iter=max_iter, verbose=verbose, deadline=deadline, t0=t0,
                           method="facial", rows=rows)
    text += "; the edges leave K free in the face (solved by the interior point there)"
    # the final certificate starts from the run's last multipliers: the run lifts only the iterates that can pay
    # (solve_in_face), so the last one it lifted can be far older
    last_rows = result.extra.get("multipliers_raw")
    if last_rows is not None and len(last_rows) == rows.size and last["y_face"] is not None:
        last["y_face"] = np.zeros(len(edges))
        last["y_face"][rows] = last_rows
    if result.status != "optimal" and last["y_face"] is not None and spent():
        text += f"; the last multipliers were not made complementary to K's support ({deadline.reached()})"
    elif result.status != "optimal" and last["y_face"] is not None:
        # the last reduced multipliers made complementary to the returned K's support, lifted and proved once more
        support = _support(result.solution, face.V)
        bound, y = certificate(last["y_face"], support=support,
                               raised_support=_support(result.solution, face.V, tol=RAISE_SUPPORT_TOL),
                               objective=result.objective)
        if last["limit"] is not None:
            text += f"; the last multipliers were not made complementary to K's support: {last['limit']}"
        if last["cut"] is not None:
            text += f"; the last multipliers made complementary to K's support: {last['cut']}"
        if bound < result.dual_bound:
            which = "made complementary to K's support" if last["limit"] is None else "lifted once more"
            text += f"; the last multipliers {which}: proved bound {bound:.10g}"
            result = _pair(instance, result, bound, y, result.iterations, gap_tol, feas_tol, t0)
    if result.status != "optimal" and len(edges) <= FALLBACK_MAX_EDGES and deadline is not None \
            and deadline.passed():
        # the fallback's first iteration alone (a Schur complement over all edges) can take minutes at large n
        text += f"; the interior point over all of 1⊥ not tried ({deadline.reached()})"
    elif result.status != "optimal" and len(edges) <= FALLBACK_MAX_EDGES:
        # the face need not be the minimal one, and the interior point over it can break down where
        # the full SDP's does not: the full interior point is the fallback; without its optimum, the
        # smaller proved bound of the two runs is returned with the more feasible K not above it (each
        # bound holds for the original SDP, whichever run proved it)
        full = solve_in_face(instance, gap_tol=gap_tol, feas_tol=feas_tol, max_iter=max_iter, verbose=verbose,
                             deadline=deadline, t0=t0, method="facial")
        # its optimum must not lie above the bound the run over the face proved: without an interior the full
        # SDP's K can be within the violation tolerance and still above every feasible K's objective
        below = (not np.isfinite(result.dual_bound)
                 or instance.relative_gap(result.dual_bound, full.objective) >= -gap_tol)
        if full.status == "optimal" and below:
            text += f"; that run ended {result.status}, the interior point over all of 1⊥ is returned"
            result = full
        else:
            state = full.status if below else f"{full.status} above the proved bound {result.dual_bound:.10g}"
            text += (f"; that run ended {result.status}, the interior point over all of 1⊥ {state}: the smaller "
                     "proved bound of the two with the more feasible K not above it")
            result = _combine(instance, result, full, gap_tol, feas_tol, t0)
    if result.status != "optimal" and (deadline is None or not deadline.passed()):
        # the face's thinness lets a K within the violation tolerance exceed the optimum (module docstring): the
        # returned K (either run's) is brought onto the edges in the clique stress's face, where the dependent rows
        # hold by themselves; not in a further step's face, which may leave the feasible set by up to its residual
        polished = polish_in_face(instance, steps[0][0].V, result.solution, deadline=deadline)
        violation = float(instance.max_violation(polished))
        if violation < result.max_violation:
            text += (f"; K polished by Gauss–Newton in the clique stress's face: violation "
                     f"{result.max_violation:.2e} -> {violation:.2e}")
            result = _pair(instance, _primal(instance, polished, result), result.dual_bound, result.extra["y"],
                           result.iterations, gap_tol, feas_tol, t0)
    return _annotate(result, text, {**info, "determined": False})


def _stopped(instance, gap_tol: float, feas_tol: float, verbose, deadline: Deadline, t0: float, when: str,
             info: dict) -> SolveResult:
    """The result of a run whose deadline passed during facial reduction, ``when`` says where: no multipliers
    of a face exist yet, so the interior point over all of 1⊥ is started, and its first check of the passed deadline
    returns its starting point with the proved bound of its starting multipliers (a bound of the original SDP; one
    iterate costs no Schur complement)."""
    result = solve_in_face(instance, gap_tol=gap_tol, feas_tol=feas_tol, max_iter=1, verbose=verbose,
                           deadline=deadline, t0=t0, method="facial")
    text = (f"; facial reduction stopped {when} ({deadline.reached()}): the interior point over all of 1⊥ "
            "returned its starting point and the proved bound of its starting multipliers")
    return _annotate(result, text, {"face_dim": instance.n - 1, **info, "determined": False})


def polish_in_face(instance, V: np.ndarray, K: np.ndarray, *, rows: np.ndarray | None = None,
                   steps: int = POLISH_STEPS, deadline: Deadline | None = None) -> np.ndarray:
    """K = VWVᵀ brought onto the edges of the equality SDP in the face V by Gauss–Newton on its Gram factor.

    With W = ZZᵀ (Z from W's eigenvectors whose eigenvalues exceed 1e-14 of the largest, so K stays PSD by
    construction) the constraints (3.12) of the independent ``rows`` (default :func:`independent_rows`) read
    F_e(Z) = ‖b_eᵀZ‖² − D_e = 0, b_e the edge in face coordinates; the others' matrices b_eb_eᵀ lie in their span
    on the face, so they hold wherever these do (up to the face's accuracy: this is why the polish runs in the
    face and not over all of 1⊥, where the clique stresses' dependent rows make the Jacobian rank-deficient at
    every feasible point). Each step is the minimum-norm Levenberg–Marquardt step Z ← Z − Jᵀ(JJᵀ + μI)⁻¹F with
    JJᵀ = 4(BBᵀ)∘(BZZᵀBᵀ) (B the rows b_eᵀ) and Jᵀλ = 2Bᵀdiag(λ)BZ; a step that does not lower ‖F‖ raises μ
    tenfold, an accepted one lowers it. Returns the iterate with the least violation over all edges
    (:meth:`~sdpembed.problems.MVUInstance.max_violation`), the start included; a passed ``deadline`` ends the steps
    (each factorises an E × E matrix) with the best iterate so far.

    Nothing here is proved: a polished K is a more feasible primal point, judged against the proved bound by the
    caller (:func:`solve_mvu_facial`'s status rule). Where the face is thicker than the feasible set (a further
    stress the steps did not expose) JJᵀ is nearly singular at every feasible Z and the steps stall.

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of Pennsylvania,
       2007. The equality constraints (3.12) of the SDP (3.11)–(3.15).
    .. [2] N. Krislock and H. Wolkowicz, "Explicit sensor network localization using semidefinite representations
       and facial reductions", SIAM Journal on Optimization 20(5), 2679–2708, 2010. The SDP restricted to the face.
    """
    tau, edges = instance.tau, instance.edges
    Bv = V[edges[:, 0]] - V[edges[:, 1]]
    rows = independent_rows(Bv) if rows is None else rows
    B, D = Bv[rows], instance.sqdist[rows] / tau          # at the scale τ = 1, as the interior point
    levels, vectors = np.linalg.eigh(V.T @ K @ V / tau)
    keep = levels > 1e-14 * max(float(levels[-1]), 1e-300)
    Z = vectors[:, keep] * np.sqrt(levels[keep])
    BB = B @ B.T

    def gram(Z: np.ndarray) -> np.ndarray:
        Y = V @ Z
        return tau * (Y @ Y.T)

    best = gram(Z)
    least = float(instance.max_violation(best))
    F = np.einsum("ij,ij->i", B @ Z, B @ Z) - D
    mu = 1e-14
    for _ in range(steps):
        if deadline is not None and deadline.passed():
            break
        BZ = B @ Z
        normal = 4.0 * BB * (BZ @ BZ.T)
        normal[np.diag_indices_from(normal)] += mu * float(np.trace(normal)) / len(normal)
        try:
            lam = cho_solve(cho_factor(normal, lower=True, check_finite=False), F, check_finite=False)
        except np.linalg.LinAlgError:
            mu *= 10.0
            continue
        trial = Z - 2.0 * B.T @ (lam[:, None] * BZ)
        F_trial = np.einsum("ij,ij->i", B @ trial, B @ trial) - D
        if not np.linalg.norm(F_trial) < np.linalg.norm(F):
            mu *= 10.0
            if mu > 1.0:
                break
            continue
        Z, F, mu = trial, F_trial, max(mu / 10.0, 1e-16)
        candidate = gram(Z)
        violation = float(instance.max_violation(candidate))
        if violation < least:
            best, least = candidate, violation
    return best


def _primal(instance, K: np.ndarray, like: SolveResult) -> SolveResult:
    """A primal-only result of K (objective, violation, embedding) for :func:`_pair`, ``like``'s other fields."""
    levels, vectors = np.linalg.eigh(0.5 * (K + K.T))
    Y = (vectors * np.sqrt(np.maximum(levels, 0.0)))[:, ::-1]
    return dataclasses.replace(like, solution=K, objective=instance.objective(K),
                               max_violation=float(instance.max_violation(K)), extra={**like.extra, "Y": Y})


def _combine(instance, first: SolveResult, second: SolveResult, gap_tol: float, feas_tol: float,
             t0: float) -> SolveResult:
    """The K of the run with the smaller violation among those whose objective does not exceed the smaller proved
    bound by more than ``gap_tol`` (a K above a proved upper bound is not feasible, whatever its violation, at a
    constraint scale the multipliers magnify), the proved bound and multipliers of the run with the smaller
    bound; ``optimal`` only if that pair meets both tolerances."""
    dual = min((first, second), key=lambda r: r.dual_bound)
    consistent = [r for r in (first, second) if not np.isfinite(dual.dual_bound)
                  or instance.relative_gap(dual.dual_bound, r.objective) >= -gap_tol]
    primal = min(consistent or (first, second), key=lambda r: r.max_violation)
    return _pair(instance, primal, dual.dual_bound, dual.extra["y"], first.iterations + second.iterations, gap_tol,
                 feas_tol, t0)


def _pair(instance, primal: SolveResult, bound: float, y: np.ndarray, iterations: int, gap_tol: float,
          feas_tol: float, t0: float) -> SolveResult:
    """The result of ``primal``'s K with the proved ``bound`` and its multipliers ``y``; ``optimal`` only if the
    pair meets both tolerances."""
    objective, violation = primal.objective, primal.max_violation
    rgap = instance.relative_gap(bound, objective) if np.isfinite(bound) else float("nan")
    if violation <= feas_tol and -gap_allowance(instance) <= rgap <= gap_tol:
        status, message = "optimal", f"violation {violation:.2e} <= {feas_tol:g}, certified relative gap {rgap:.2e}"
    else:
        status, message = "inaccurate", f"violation {violation:.2e}, certified relative gap {rgap:.2e}"
    return build_result(
        instance.problem, instance.variable, primal.solution, objective, bound, sense="max", rgap=rgap,
        status=status, message=message, method="facial", solver="mvu_facial", max_violation=violation,
        iterations=iterations, start=t0, extra={"Y": primal.extra["Y"], "y": y},
    )


def _equilibrates(steps, support: np.ndarray, edges: int) -> bool:
    """Whether a final certificate makes its multipliers complementary to ``support`` (:func:`equilibrate`): the
    block of the innermost face off the support has at most :data:`EQUILIBRATE_MAX_ROWS` rows and no least-norm
    solve of :func:`equilibrate` is estimated above :data:`EQUILIBRATE_MAX_BYTES` (``_equilibrate_bytes``)."""
    free = steps[-1][0].dim - support.shape[1]
    return (free * (free + 1) // 2 <= EQUILIBRATE_MAX_ROWS
            and _equilibrate_bytes(steps, support.shape[1], edges) <= EQUILIBRATE_MAX_BYTES)


def _equilibrate_limit(steps, support: np.ndarray, edges: int) -> str:
    """Which limit of :func:`_equilibrates` the correction to ``support`` exceeds, for a result's message."""
    free = steps[-1][0].dim - support.shape[1]
    if free * (free + 1) // 2 > EQUILIBRATE_MAX_ROWS:
        return f"{free * (free + 1) // 2} rows off the support > EQUILIBRATE_MAX_ROWS = {EQUILIBRATE_MAX_ROWS}"
    return (f"its least-norm solve estimated at {_equilibrate_bytes(steps, support.shape[1], edges) / 1024**3:.1f} GiB "
            f"> EQUILIBRATE_MAX_BYTES = {EQUILIBRATE_MAX_BYTES / 1024**3:g} GiB")


def _equilibrate_bytes(steps, r: int, edges: int) -> int:
    """The largest memory estimate 24·R·(R + E) over :func:`equilibrate`'s least-norm solves for a support of rank
    ``r``, R their dense rows: b(b+1)/2 for the face b off the support (the innermost face for the reduced
    multipliers, each inner stress's outer face for it), plus r(r+1)/2 and the weak directions' m·r for the
    reduced multipliers."""
    def block(dim: int) -> int:
        free = max(dim - r, 0)
        return free * (free + 1) // 2

    weak = min(WEAK_DIRECTIONS, steps[0][0].U.shape[1])
    counts = [block(steps[-1][0].dim) + r * (r + 1) // 2 + weak * r]
    counts += [block(face.V.shape[1] + face.U.shape[1]) for face, _ in steps[1:]]
    return max(24 * R * (R + edges) for R in counts)


def _support(K: np.ndarray, V: np.ndarray, tol: float = 1e-6) -> np.ndarray:
    """An orthonormal basis (n × r) of the range of K = VWVᵀ: V's combinations by W's eigenvectors with eigenvalues
    above ``tol`` of its largest."""
    levels, vectors = np.linalg.eigh(V.T @ K @ V)
    return V @ vectors[:, levels > tol * max(float(levels[-1]), 1e-300)]


def independent_rows(Bv: np.ndarray, *, tol: float = 1e-10) -> np.ndarray:
    """Edges whose constraint matrices b_eb_eᵀ (rows b_e of ``Bv``, the edges in face coordinates) are
    linearly independent and span those of all edges: the pivots of a pivoted Cholesky factorisation
    (LAPACK ``dpstrf``) of their Gram matrix (b_eᵀb_f)², stopped at ``tol`` of its largest diagonal
    entry; sorted."""
    from scipy.linalg.lapack import dpstrf  # at first use (DESIGN.md, "Start-up")

    gram = (Bv @ Bv.T) ** 2
    scale = float(np.max(np.diag(gram)))
    _, pivots, rank, _ = dpstrf(gram, lower=1, tol=tol * scale)
    return np.sort(pivots[:rank] - 1)


def _determined(instance, face, M, a, b, certificate, gap_tol, feas_tol, t0, info, text) -> SolveResult:
    """The face's one feasible point: W from the edges by least squares, y_R with VᵀL(y_R)V = I."""
    q = face.dim
    levels, vectors = np.linalg.eigh(_least_squares_w(M, a, b, instance.sqdist))
    rank = int(np.sum(levels > 1e-9 * max(float(levels[-1]), 1e-300)))
    # y_R with VᵀL(y_R)V = cI: its value y_RᵀD = ⟨VᵀL(y_R)V, W⟩ = c·tr W is the objective of the one feasible W
    unit = _unit_on_face(instance, face.V)
    residual = graph_laplacian(instance.n, instance.edges, unit) @ face.V - face.V
    if float(np.max(np.abs(residual))) > UNIT_RESIDUAL_TOL:
        unit = _exact_unit_block(instance, face.V, unit)
    bound, y = certificate(instance.trace_weight * unit, support=face.V @ vectors[:, q - rank:])
    factor = face.V @ (vectors * np.sqrt(np.maximum(levels, 0.0)))
    K = factor @ factor.T
    objective = instance.objective(K)
    violation = float(instance.max_violation(K))
    rgap = instance.relative_gap(bound, objective) if np.isfinite(bound) else float("nan")
    text = (text + f"; the edges determine K in the face (rank {rank}): the graph is locked up (Sec. 3.1.12), "
            f"the feasible set is one Gram matrix")
    if violation <= feas_tol and -gap_allowance(instance) <= rgap <= gap_tol:
        status, message = "optimal", f"violation {violation:.2e} <= {feas_tol:g}, certified relative gap {rgap:.2e}"
    else:
        status = "inaccurate"
        message = f"violation {violation:.2e} (tolerance {feas_tol:g}), certified relative gap {rgap:.2e} " \
                  f"(tolerance {gap_tol:g})"
    return build_result(
        instance.problem, instance.variable, K, objective, bound, sense="max", rgap=rgap, status=status,
        message=message + text, method="facial", solver="mvu_facial", max_violation=violation, iterations=1,
        start=t0, extra={**info, "determined": True, "rank": rank, "y": y, "Y": factor[:, ::-1]},
    )


def _unit_on_face(instance, V: np.ndarray) -> np.ndarray:
    """Multipliers y_R with L(y_R)V = V, the minimum-norm solution by the sparse normal equations of
    the linear map y ↦ L(y)V (the transposed rigidity matrix of the configuration V): VᵀL(y_R)V = I
    with no coupling UᵀL(y_R)V to the rest of 1⊥, so the lift needs no 1/ε term. V lies in the
    map's range when the configuration is infinitesimally rigid (V is orthogonal to its
    infinitesimal motions, translations and rotations VS, S skew); the tiny diagonal shift only
    regularises the rotations' null space."""
    return _least_norm(instance, V, V, shift=1e-12, refine=1)


def _exact_unit_block(instance, V: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y + δ with VᵀL(y + δ)V = I exactly (to rounding): δ the least-norm solution of the q(q+1)/2 rows of
    y ↦ VᵀL(y)V (:func:`_block_rows`), dense and few. For the reduced multipliers of a configuration that
    :func:`_unit_on_face` cannot fit (L(y)V = V has no solution where two points coincide: an edge of length 0
    leaves its multiplier out of L(y)V, and the rows of the coincident points ask for different things), the
    reduced dual's own condition VᵀL(y_R)V = I is met, and the coupling UᵀL(y_R)V that is left is paid by the
    lift's t (the Schur complement's 1/ε term), which costs only t·ωᵀD."""
    return _exact_rows(instance, y, V, np.eye(V.shape[1]))


def _least_norm(instance, Q: np.ndarray, target: np.ndarray, rows: np.ndarray | None = None,
                values: np.ndarray | None = None, *, shift: float = 1e-13, refine: int = 3) -> np.ndarray:
    """The least-norm δ (E,) with L(δ)Q = ``target`` (n × r) and ``rows`` δ = ``values`` (a few dense rows), by the
    sparse normal equations of the stacked map (y ↦ L(y)Q is the transposed rigidity matrix of the configuration
    Q), a ``shift`` of their largest entry regularising its null space (the translations and rotations QS, S
    skew, to which every target here is orthogonal) and ``refine`` steps of iterative refinement. (The shift is
    small because a near-flexible configuration — a thin sheet's bending — has singular values not far above it,
    which a larger shift damps, and the refinement then stalls.)"""
    import scipy.sparse as sp  # at first use (DESIGN.md, "Start-up")
    from scipy.sparse.linalg import splu

    n, edges = instance.n, instance.edges
    E, q = edges.shape[0], Q.shape[1]
    diff = Q[edges[:, 0]] - Q[edges[:, 1]]
    index = np.concatenate([(edges[:, k, None] * q + np.arange(q)).ravel() for k in (0, 1)])
    cols = np.tile(np.repeat(np.arange(E), q), 2)
    G = sp.csc_matrix((np.concatenate([diff.ravel(), -diff.ravel()]), (index, cols)), shape=(n * q, E))
    rhs = target.ravel()
    if rows is not None and len(rows):
        G = sp.vstack([G, sp.csc_matrix(rows)]).tocsc()
        rhs = np.concatenate([rhs, values])
    normal = (G @ G.T).tocsc()
    shift = shift * float(abs(normal).max())
    solve = splu((normal + shift * sp.identity(normal.shape[0], format="csc")).tocsc()).solve
    delta = np.zeros(E)
    for _ in range(refine):
        delta = delta + G.T @ solve(rhs - G @ delta)
    return delta


def _block_rows(edges: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The rows of y ↦ svec(BᵀL(y)B) (the upper triangle, diagonal included): (b_iᵀ(e))(b_jᵀ(e)) per edge e."""
    diff = B[edges[:, 0]] - B[edges[:, 1]]
    a, b = np.triu_indices(B.shape[1])
    return (diff[:, a] * diff[:, b]).T


def _complement(basis: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """An orthonormal basis of span(``basis``) ⊖ span(Q) (``basis`` orthonormal, span Q inside it)."""
    left = np.linalg.svd(basis.T @ Q, full_matrices=True)[0]
    return basis @ left[:, Q.shape[1]:]


def equilibrate(instance, steps, y_face: np.ndarray, Q: np.ndarray, *, raise_to: float = 0.0, exact: bool = False
                ) -> tuple[np.ndarray, list]:
    """Reduced multipliers and stresses complementary to the support Q (n × r, orthonormal, in the innermost
    face) of the optimum K = QΛQᵀ, for :func:`lift_multipliers`.

    The lift pays for every coupling of span Q — where L(y) − I is ε only after the scaling f — to the rest of
    1⊥ by the Schur complement's 1/ε term: the reduced multipliers' UᵀL(y_R)Q (the reduced dual sees VᵀL(y_R)V
    only), and an inner stress's coupling U'ᵀL(z)Q to the next step's complement (z is a stress of the SDP
    restricted to its face only; an equilibrium stress of K's configuration has L(z)Q = 0). Both are removed by
    the least-norm corrections δ of :func:`_least_norm`:

    - y_R + δ with L(y_R + δ)Q = Q·QᵀL(y_R)Q and BᵀL(δ)B = 0 for B the innermost face ⊖ Q: the complementary
      slackness (L(y) − I)K = 0 of the optimum, with the reduced block off Q kept;
    - each inner stress z + δ with L(z + δ)Q = 0 and BᵀL(δ)B = 0 for B that step's outer face ⊖ Q (its stress
      matrix there, PSD, kept).

    Where K's configuration flexes the first system has no exact solution; its least-squares residual is steered
    out of the Q block and out of the coupling to the outermost stress's weakest directions (weighted rows, see
    the code), where the lift pays for it most. Neither correction changes the dual value but through K's
    violation: δᵀD = ⟨L(δ), K⟩ + δᵀ(D − 𝒜(K)) and
    ⟨L(δ), K⟩ = tr ΛQᵀL(δ)Q = 0 for both targets (D itself is nearly in the span of the constraints' rows, so a
    row δᵀD = 0 would make the system singular).

    With ``raise_to`` = κ > 0 the reduced multipliers' block off Q is not kept but raised: its eigenvalues below
    c + κ (c the trace weight) are moved to c + κ, the others kept (the rows BᵀL(δ)B take that change as their
    target). The dual value then rises by ⟨BᵀL(δ)B, BᵀKB⟩ (up to K's violation, as above): at most
    (c + κ − λ_min(BᵀL(y_R)B))·tr BᵀKB, about κ times K's weight off its support.

    With ``exact`` the least-squares residuals that the lift pays for most are then removed exactly, by a second
    least-norm correction of a few dense rows only (:func:`_exact_rows`, which the flexing rows do not enter): the
    reduced multipliers' QᵀL(y)Q is brought back to QᵀL(y_R)Q and their coupling QᵀL(y)B to the face off Q to 0
    (a residual coupling there is divided by the gap of that block, κ when raised: it set λ_min below c), and each
    inner stress's QᵀL(z)Q to 0 with its block on its outer face off Q and its coupling to the outermost stress's
    weakest directions kept (a residual block there, times the inner lift's t, left L(y) below c on K's support,
    which the outer scaling f paid for in the relative gap).

    Returns the corrected y_face and steps (the clique stress, outermost, is an equilibrium stress of every point
    of its face already). Like the lift, the corrections only propose: :func:`~sdpembed.problems.mvu.dual_bound`
    proves whatever results.
    """
    edges = instance.edges

    def corrected(y, target, basis, extra=None, values=None, block=None):
        rows = _block_rows(edges, _complement(basis, Q))
        kept = np.zeros(rows.shape[0]) if block is None else block
        if extra is None:
            return y + _least_norm(instance, Q, target, rows, kept)
        return y + _least_norm(instance, Q, target, np.vstack([rows, extra]), np.concatenate([kept, values]))

    LQ = graph_laplacian(instance.n, edges, y_face) @ Q
    target = Q @ (Q.T @ LQ) - LQ
    # Where K's configuration flexes, L(δ)Q = target has no exact solution, and where its residual is left
    # decides its cost. In the Q block (the rows QᵀL(δ)Q = 0) it costs its own size in the relative gap (the
    # scaling f); in the coupling to the outermost stress's direction u_k, its square over ε·λ_k in t. Both sets
    # of rows, already among those of L(δ)Q = target, are repeated with weights: Q_BLOCK_WEIGHT, and
    # √(λ_m/λ_k) (at most 1e3) for the m = WEAK_DIRECTIONS weakest directions
    outer = steps[0][0]
    m = min(WEAK_DIRECTIONS, outer.U.shape[1])
    weak, levels = outer.U[:, :m], outer.levels[:m]
    weights = np.minimum(np.sqrt(levels[-1] / np.maximum(levels, 1e-300)), 1e3) if m else np.zeros(0)
    weak_rows = _cross_rows(edges, weak, Q)
    coupling = np.repeat(weights, Q.shape[1])[:, None] * weak_rows
    extra = np.vstack([Q_BLOCK_WEIGHT * _block_rows(edges, Q), coupling])
    values = np.concatenate([np.zeros(extra.shape[0] - coupling.shape[0]),
                             (weights[:, None] * (weak.T @ target)).ravel()])
    level = instance.trace_weight + raise_to if raise_to > 0.0 else None
    y_kept = y_face
    y_face = corrected(y_face, target, steps[-1][0].V, extra, values,
                       block=_raised_block(instance, y_face, _complement(steps[-1][0].V, Q), level))
    out = [steps[0]]
    for face, z in steps[1:]:
        out.append((face, corrected(z, -(graph_laplacian(instance.n, edges, z) @ Q), np.hstack([face.V, face.U]))))
    if not exact:
        return y_face, out
    inner = _complement(steps[-1][0].V, Q)
    block = Q.T @ (graph_laplacian(instance.n, edges, y_kept) @ Q)
    y_face = _exact_rows(instance, y_face, Q, 0.5 * (block + block.T), zero=inner)
    zero = np.zeros((Q.shape[1],) * 2)
    out = [out[0]] + [(face, _exact_rows(instance, z, Q, zero, keep=np.vstack([
        _block_rows(edges, _complement(np.hstack([face.V, face.U]), Q)), weak_rows]))) for face, z in out[1:]]
    return y_face, out


def _cross_rows(edges: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The rows of y ↦ AᵀL(y)B, row-major: (a_iᵀ(e))(b_jᵀ(e)) per edge e."""
    dA, dB = A[edges[:, 0]] - A[edges[:, 1]], B[edges[:, 0]] - B[edges[:, 1]]
    return (dA.T[:, None, :] * dB.T[None, :, :]).reshape(A.shape[1] * B.shape[1], len(edges))


def _exact_rows(instance, y: np.ndarray, Q: np.ndarray, target: np.ndarray, *, zero: np.ndarray | None = None,
                keep: np.ndarray | None = None) -> np.ndarray:
    """y + δ with QᵀL(y + δ)Q = ``target`` (r × r), QᵀL(y + δ)·``zero`` = 0 and ``keep`` δ = 0 (dense rows): δ the
    least-norm solution of those few rows (dense ``lstsq``), to rounding where they are independent."""
    edges = instance.edges
    a, b = np.triu_indices(Q.shape[1])
    LQ = graph_laplacian(instance.n, edges, y) @ Q
    block = Q.T @ LQ
    rows, values = [_block_rows(edges, Q)], [(target - 0.5 * (block + block.T))[a, b]]
    if zero is not None and zero.shape[1]:
        rows.append(_cross_rows(edges, Q, zero))
        values.append(-(LQ.T @ zero).ravel())
    if keep is not None:
        rows.append(keep)
        values.append(np.zeros(keep.shape[0]))
    return y + np.linalg.lstsq(np.vstack(rows), np.concatenate(values), rcond=None)[0]


def _raised_block(instance, y: np.ndarray, B: np.ndarray, level: float | None) -> np.ndarray:
    """The correction of BᵀL(y)B (upper triangle, as :func:`_block_rows`) that raises its eigenvalues below ``level`` to
    ``level`` and keeps the rest; zero when ``level`` is None or none is below."""
    a, b = np.triu_indices(B.shape[1])
    if level is None or not B.shape[1]:
        return np.zeros(a.size)
    block = B.T @ (graph_laplacian(instance.n, instance.edges, y) @ B)
    levels, vectors = np.linalg.eigh(0.5 * (block + block.T))
    raised = (vectors * np.maximum(level - levels, 0.0)) @ vectors.T
    return raised[a, b]


def _annotate(result: SolveResult, text: str, info: dict) -> SolveResult:
    """``result`` with the facial reduction's ``text`` appended to its message and ``info`` in its extra."""
    result.message += text
    result.extra.update(info)
    return result
