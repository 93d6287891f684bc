"""The Gauss–Newton polish of an MVU factor onto its edge equalities, and the status rule of the equality and
min_trace variants that uses it (thesis Sec. 3.1.4, 3.1.11, 3.1.12).

Why a polish
------------
A K that meets the equalities 𝒜(K) = D (3.13) only to a tolerance v can have an objective *above* the
optimum: where the graph is rigid (Sec. 3.1.12) the feasible set is a thin face of the PSD cone, often the
input's own Gram matrix alone, and stretching K off that face by v moves tr K by about √v. The proved dual
bound then says nothing about that K's distance to the optimum — the bound lies above the optimum and K above
both. The solvers therefore judge a *polished* K: the factor Y (K = YYᵀ) moved onto the equalities by
minimum-norm Gauss–Newton steps until the violation reaches the level of rounding, where the √v effect is
far below any gap tolerance. That K is returned, so the certified gap is computed for the K the user gets.

The step: with J(Δ)_e = 2(BY)_e·(BΔ)_e the Jacobian of g(Y) = 𝒜(YYᵀ) − D, the minimum-norm solution of
J(Δ) = −g is Δ = Jᵀλ = 2L(λ)Y with (JJᵀ)λ = −g, and JJᵀ = 4(BBᵀ) ∘ (BYYᵀBᵀ) is sparse (edges sharing a
node). So K ← (I + 2L(λ)) K (I + 2L(λ)): PSD and centred (L(λ)1 = 0) at every step. Rigid graphs have
dependent rows (stresses), so JJᵀ is singular: each step solves (JJᵀ + μI)λ = −g, μ raised until the step
lowers the largest residual (Levenberg–Marquardt). Points joined by edges of length 0 (duplicates) are
contracted to one node first, so that they stay merged and those edges, met exactly, drop out.

Small systems are dense: a step's system of at most :data:`POLISH_DENSE_MAX` unknowns (E for JJᵀ, m·r for
JᵀJ) is formed and solved by numpy's LU, larger ones by SuperLU on their sparse pattern, so that certifying a small
graph loads no SciPy (DESIGN.md, "Start-up"). Both solve the same system; they differ by rounding alone.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. The MVU SDP (3.11)–(3.15) of Sec. 3.1.4, the minimum-trace variant of Sec. 3.1.11,
   locked-up graphs (Sec. 3.1.12).
.. [2] K. Levenberg, "A method for the solution of certain non-linear problems in least squares",
   Quarterly of Applied Mathematics 2(2), 164–168, 1944. Used here: the damped Gauss–Newton step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...graphs.neighborhood import connected_components

__all__ = ["PolishSchedule", "Polished", "PolishedVerdict", "gap_allowance", "polish_onto_equalities",
           "polished_verdict"]

#: The polish stops once the largest residual, relative to τ, is below this (rounding level for the
#: instance sizes the dense certificate allows).
POLISH_TARGET = 1e-14

#: The polish stops after this many steps, or where no damping of the step lowers the largest residual.
POLISH_STEPS = 60

# The damping μ of the first try, relative to JJᵀ's largest diagonal entry: near a thin face JJᵀ has
# eigenvalues of 1e-14 of its largest (the extra dimensions K must lose), and a larger damping cuts exactly the
# components of the step that lead onto the face; rounding is what μ must cover.
_DAMPING = 1e-16

#: The most columns a cut factor of :func:`polish_onto_equalities` keeps (its normal equations have r² blocks).
POLISH_MAX_RANK = 12

#: A Gauss–Newton system of at most this many unknowns (E for the dual step, m·r for the factor step on m
#: contracted points) is dense (numpy), a larger one sparse (SciPy's SuperLU).
POLISH_DENSE_MAX = 500


class Polished(NamedTuple):
    """The outcome of :func:`polish_onto_equalities`."""

    factor: np.ndarray
    """Y with K = YYᵀ meeting the equalities to ``violation``."""
    violation: float
    """The largest edge residual |𝒜(YYᵀ) − D| relative to τ."""
    steps: int
    """Gauss–Newton steps taken."""


def _contracted(instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(label, edges, D): each point's set of duplicates (joined by edges of length 0), and the edges of
    positive length between those sets."""
    zero = instance.sqdist <= 0
    label = connected_components(instance.n, instance.edges[zero])[1]
    return label, label[instance.edges[~zero]], instance.sqdist[~zero]


def _csc_structure(rows: np.ndarray, cols: np.ndarray, size: int) -> dict:
    """The CSC structure of a square matrix with entries summed at (rows, cols), built once so that each step
    only refills its values (``assemble``); every diagonal entry must occur among them."""
    key, where = np.unique(cols.astype(np.int64) * size + rows, return_inverse=True)
    indices = (key % size).astype(np.int32)
    indptr = np.searchsorted(key // size, np.arange(size + 1)).astype(np.int32)
    return {"where": where.ravel(), "indices": indices, "indptr": indptr, "size": size,
            "diagonal": np.searchsorted(key, np.arange(size, dtype=np.int64) * (size + 1))}


def _assemble(structure: dict, values: np.ndarray, mu: float):
    """The matrix of ``structure`` with ``values`` summed in, plus μ·(its largest diagonal entry)·I."""
    import scipy.sparse as sp  # at first use (DESIGN.md, "Start-up")

    data = np.bincount(structure["where"], weights=values, minlength=structure["indices"].size)
    diagonal = data[structure["diagonal"]]
    data[structure["diagonal"]] = diagonal + mu * (float(diagonal.max()) or 1.0)
    size = structure["size"]
    return sp.csc_matrix((data, structure["indices"], structure["indptr"]), shape=(size, size))


class _Equalities:
    """g(Z) = 𝒜(ZZᵀ) − D on the contracted graph and its two damped Gauss–Newton steps (module docstring):
    ``dual_step`` by JJᵀ (E × E, any rank of Z) and ``factor_step`` by the normal equations JᵀJ (mr × mr, for a
    factor cut to a few columns, where rigid graphs make JJᵀ rank-deficient but JᵀJ is singular only along the
    rotations, which carry no gradient). Each system is dense up to :data:`POLISH_DENSE_MAX` unknowns, else
    sparse."""

    def __init__(self, edges: np.ndarray, D: np.ndarray, counts: np.ndarray) -> None:
        self.i, self.j, self.D, self.counts = edges[:, 0], edges[:, 1], D, counts
        self.structures: dict = {}

    def residual(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        BZ = Z[self.i] - Z[self.j]
        return BZ, np.einsum("ij,ij->i", BZ, BZ) - self.D

    def centred(self, Z: np.ndarray) -> np.ndarray:
        """Z less the mean of the points it stands for (each row counted with its multiplicity)."""
        return Z - (self.counts @ Z) / self.counts.sum()

    def spread(self, W: np.ndarray) -> np.ndarray:
        """BᵀW: each edge's row of W added at its first node and subtracted at its second."""
        m = self.counts.size
        return np.stack([np.bincount(self.i, weights=w, minlength=m) - np.bincount(self.j, weights=w, minlength=m)
                         for w in W.T], axis=1)

    def _structure(self, key, build):
        if key not in self.structures:
            self.structures[key] = build()
        return self.structures[key]

    def dual_step(self, Z, BZ, g, mu):
        """Z + Jᵀλ with (JJᵀ + μ·max diag I)λ = −g; (JJᵀ)_ef = 4(BBᵀ)_ef·(BZ)_e·(BZ)_f on the pairs of edges
        that share a node."""
        E = self.i.size
        if E <= POLISH_DENSE_MAX:
            # BBᵀ: +1 where two edges share a first or a second node, −1 where one's first is the other's second
            sign = self._structure("dual dense", lambda: (
                (self.i[:, None] == self.i).astype(np.float64) + (self.j[:, None] == self.j)
                - (self.i[:, None] == self.j) - (self.j[:, None] == self.i)))
            lam = _solve_damped(4.0 * sign * (BZ @ BZ.T), -g, mu)
        else:
            row, col, sign, structure = self._structure("dual sparse", self._sparse_dual_structure)
            lam = _splu_solve(_assemble(structure, 4.0 * sign * np.einsum("ij,ij->i", BZ[row], BZ[col]), mu), -g)
        return Z + 2.0 * self.spread(lam[:, None] * BZ)

    def _sparse_dual_structure(self):
        import scipy.sparse as sp  # at first use (DESIGN.md, "Start-up")

        E, m = self.i.size, self.counts.size
        edges = np.column_stack([self.i, self.j])
        B = sp.csr_matrix((np.tile([1.0, -1.0], E), (np.repeat(np.arange(E), 2), edges.ravel())), shape=(E, m))
        BBt = (B @ B.T.tocsr()).tocoo()            # JJᵀ's pattern: edges sharing a node, with the sign (BBᵀ)_ef
        return BBt.row, BBt.col, BBt.data, _csc_structure(BBt.row, BBt.col, E)

    def factor_step(self, Z, BZ, g, mu):
        """Z + Δ with (JᵀJ + μ·max diag I)Δ = −Jᵀg; JᵀJ has the r × r block 4(BZ)_e(BZ)_eᵀ of edge e at (i, i)
        and (j, j), its negative at (i, j) and (j, i)."""
        m, r = Z.shape
        k = np.arange(r)
        bi = np.concatenate([self.i, self.j, self.i, self.j])
        bj = np.concatenate([self.i, self.j, self.j, self.i])

        def entries():
            rows = (bi[:, None, None] * r + k[:, None]).repeat(r, axis=2).ravel()
            cols = (bj[:, None, None] * r + k[None, :]).repeat(r, axis=1).ravel()
            return rows, cols

        block = 4.0 * BZ[:, :, None] * BZ[:, None, :]
        values = np.concatenate([block, block, -block, -block]).ravel()
        gradient = 2.0 * self.spread(g[:, None] * BZ).ravel()
        if m * r <= POLISH_DENSE_MAX:
            flat = self._structure(("factor dense", r), lambda: np.ravel_multi_index(entries(), (m * r, m * r)))
            H = np.bincount(flat, weights=values, minlength=(m * r) ** 2).reshape(m * r, m * r)
            step = _solve_damped(H, -gradient, mu)
        else:
            structure = self._structure(("factor sparse", r), lambda: _csc_structure(*entries(), m * r))
            step = _splu_solve(_assemble(structure, values, mu), -gradient)
        return Z + step.reshape(m, r)


def _solve_damped(M: np.ndarray, b: np.ndarray, mu: float) -> np.ndarray:
    """(M + μ·(M's largest diagonal entry)·I)⁻¹ b by numpy's LU; RuntimeError where it is exactly singular, as
    SuperLU raises."""
    diagonal = M.diagonal().copy()
    M[np.diag_indices_from(M)] = diagonal + mu * (float(diagonal.max()) or 1.0)
    try:
        return np.linalg.solve(M, b)
    except np.linalg.LinAlgError as exc:
        raise RuntimeError(f"the damped Gauss-Newton system is singular ({exc})") from exc


def _splu_solve(A, b: np.ndarray) -> np.ndarray:
    from scipy.sparse.linalg import splu  # at first use (DESIGN.md, "Start-up")

    return splu(A).solve(b)


def _damped_gauss_newton(eq: _Equalities, Z: np.ndarray, step, tau: float, target: float,
                         max_steps: int) -> tuple[np.ndarray, float, int]:
    """Levenberg–Marquardt on g(Z) = 0 with ``step``: μ raised a hundredfold until a step lowers the largest
    residual (or the factorisation is singular), lowered after each accepted step."""
    BZ, g = eq.residual(Z)
    worst = float(np.max(np.abs(g))) / tau if g.size else 0.0
    steps, mu = 0, _DAMPING
    history = [worst]
    # stalled: five steps that together removed less than half of the residual (a start off the face's rank)
    while worst > target and steps < max_steps and not (steps >= 5 and worst > 0.5 * history[-6]):
        for _ in range(10):
            try:
                trial = eq.centred(step(Z, BZ, g, mu))
            except RuntimeError:                   # singular to working precision: damp harder
                mu *= 1e2
                continue
            BT, gt = eq.residual(trial)
            new = float(np.max(np.abs(gt))) / tau
            if np.isfinite(new) and new < worst:
                break
            mu *= 1e2
        else:
            break
        steps += 1
        Z, BZ, g, worst = trial, BT, gt, new
        history.append(worst)
        mu = max(mu * 1e-2, _DAMPING)
    return Z, worst, steps


def polish_onto_equalities(instance, Y: np.ndarray, *, target: float = POLISH_TARGET,
                           max_steps: int = POLISH_STEPS) -> list[Polished]:
    """Move the centred factor ``Y`` (K = YYᵀ at the instance's scale) onto 𝒜(YYᵀ) = D by damped
    minimum-norm Gauss–Newton steps (module docstring), from Y itself and from Y cut to its leading singular
    directions.

    A K near a thin face carries the face's missing dimensions as tiny eigenvalues: there JJᵀ is nearly
    singular and the steps from Y stall, while a factor cut to the face's rank is a well-posed, overdetermined
    system whose Gauss–Newton steps converge. The cut ranks are the counts of singular values above
    10⁻², 10⁻⁴ and 10⁻⁶ of the largest (at most :data:`POLISH_MAX_RANK` columns).

    Parameters
    ----------
    instance : MVUInstance
        An equality or min_trace instance.
    Y : ndarray of shape (n, r)
        A centred factor; rows of points joined by edges of length 0 are averaged first.
    target : float
        Stop once the largest residual relative to τ is at most this.
    max_steps : int
        Gauss–Newton steps at most, per start.

    Returns
    -------
    list of Polished
        One per start: the factor (centred; duplicates share a row), its violation relative to τ and the
        steps taken; Y itself first.

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007. The edge equalities (3.13), Sec. 3.1.4.
    """
    label, edges, D = _contracted(instance)
    counts = np.bincount(label).astype(np.float64)
    Z = np.zeros((counts.size, Y.shape[1]))
    np.add.at(Z, label, Y)
    eq = _Equalities(edges, D, counts)
    Z = eq.centred(Z / counts[:, None])
    U, values, _ = np.linalg.svd(Z, full_matrices=False)
    ranks = sorted({int(np.sum(values > cut * values[0])) for cut in (1e-2, 1e-4, 1e-6)} - {0, Z.shape[1]})
    starts = [(Z, eq.dual_step)] + [(U[:, :r] * values[:r], eq.factor_step) for r in ranks if r <= POLISH_MAX_RANK]
    out = []
    for start, step in starts:
        polished, violation, steps = _damped_gauss_newton(eq, start, step, instance.tau, target, max_steps)
        out.append(Polished(polished[label], violation, steps))
    return out


class PolishedVerdict(NamedTuple):
    """The judgement of a polished K (:func:`polished_verdict`)."""

    factor: np.ndarray
    """Y with K = YYᵀ, polished onto the equalities."""
    solution: np.ndarray
    """K = YYᵀ."""
    objective: float
    violation: float
    relative_gap: float
    """(bound − objective)/max(|objective|, |bound|) for the proved ``bound``."""
    failure: str | None
    """Why K is not certified optimal; ``None`` when it is."""


def gap_allowance(instance) -> float:
    """How far below 0 a relative gap may lie from rounding alone: 4n·u (u the unit roundoff), the rounding of
    tr K, as the proved bound is rounded upwards. A gap further below 0 proves K's objective above every feasible
    point's: such a K is never ``optimal``.

    References
    ----------
    .. [1] N. J. Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM, 2002: the rounding of
       sums (ch. 4).
    """
    return 4.0 * instance.n * np.finfo(np.float64).eps


def polished_verdict(instance, Y: np.ndarray, bound: float, *, gap_tol: float, feas_tol: float) -> PolishedVerdict:
    """Polish the factor ``Y`` onto the equalities (:func:`polish_onto_equalities`) and judge the Ks it gives
    against the proved upper ``bound`` on the optimum.

    A polished K is certified when its violation is at most min(feas_tol, gap_tol²) and
    0 ≤ bound − objective ≤ gap_tol·scale. The violation: on a thin face a violation v moves tr K by about √v
    (module docstring), so v ≤ gap_tol² keeps that move at the order of gap_tol. The lower end of the gap: an
    objective above a proved upper bound proves that K is infeasible enough to beat every feasible point, so
    such a K is never called optimal; the only allowance is the rounding of tr K itself (4n·u relative, u the
    unit roundoff), as the bound is rounded upwards. Of the certified Ks the one of least violation is returned;
    with none, the one of least violation and why it failed.

    Parameters
    ----------
    instance : MVUInstance
        An equality or min_trace instance.
    Y : ndarray of shape (n, r)
        A centred factor of the candidate K at the instance's scale.
    bound : float
        A proved upper bound on the optimum (:func:`~sdpembed.problems.mvu.dual_bound`).
    gap_tol, feas_tol : float
        The solver's tolerances.

    Returns
    -------
    PolishedVerdict

    References
    ----------
    .. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
       Pennsylvania, 2007. The MVU SDP (3.11)–(3.15), Sec. 3.1.4; the minimum-trace variant, Sec. 3.1.11;
       locked-up graphs, Sec. 3.1.12.
    """
    allowance = gap_allowance(instance)
    level = min(feas_tol, gap_tol**2)
    verdicts = []
    for polished in polish_onto_equalities(instance, Y):
        K = polished.factor @ polished.factor.T
        objective = instance.objective(K)
        violation = float(instance.max_violation(K))
        rgap = instance.relative_gap(bound, objective)
        failure = None
        if violation > level:
            failure = (f"the Gauss-Newton polish onto the equalities stopped at violation {violation:.2e} > "
                       f"min(feas_tol, gap_tol^2) = {level:.1e}, where K's objective can still lie above the optimum")
        elif rgap < -allowance:
            failure = (f"the polished K's objective is above the proved bound (relative gap {rgap:.2e}): at "
                       f"violation {violation:.2e} it still beats every feasible point, so its gap bounds nothing")
        elif rgap > gap_tol:
            failure = (f"polished onto the equalities (violation {violation:.2e}), K's certified relative gap is "
                       f"{rgap:.2e} > gap_tol = {gap_tol:g}")
        verdicts.append(PolishedVerdict(polished.factor, K, objective, violation, rgap, failure))
    return min(verdicts, key=lambda v: (v.failure is not None, v.violation))


class PolishSchedule:
    """Which candidate iterates (violation and gap within the tolerances) a solver polishes: the first, then,
    after each polish that fails, one in 2, 4, 8, … of the candidates that follow. A polish factorises a few
    sparse systems per step, and a run whose candidates fail (a bound not yet within gap_tol of the polished
    K) can have dozens of them before it certifies or stops."""

    def __init__(self) -> None:
        self.candidates, self.skip_until, self.wait = 0, 0, 0

    def due(self) -> bool:
        """Count one candidate; whether to polish it."""
        self.candidates += 1
        return self.candidates > self.skip_until

    def failed(self) -> None:
        """The polish of the last candidate did not certify it."""
        self.wait = max(1, 2 * self.wait)
        self.skip_until = self.candidates + self.wait
