"""LMNN by gradient projection — Algorithm 3 of the thesis (Sec. 2.1.7), with a certificate.

The loss (2.13), ε(M) = (1 − μ) tr(MP) + μ Σ_{(i,j,l)} [1 + tr(M C_ij) − tr(M C_il)]₊, is
piecewise linear; at M_t its (sub)gradient is (2.14)

    G_t = (1 − μ) P + μ Σ_{(i,j,l) ∈ 𝒩_t} (C_ij − C_il),      P = Σ_{j⇝i} C_ij,

with 𝒩_t the triplets whose hinge is positive. Algorithm 3 iterates

    M_{t+1} = P_S(M_t − a G_{t+1})                                  (line 14, projection (2.16))

and keeps G by the incremental update (2.15): G changes only through the triplets that enter
or leave 𝒩_t, G_{t+1} = G_t − μ Σ_{𝒩_t − 𝒩_{t+1}} (C_ij − C_il) + μ Σ_{𝒩_{t+1} − 𝒩_t} (C_ij − C_il).
Active-set bookkeeping (lines 6–12): every ``check_every`` iterations (10–20 in the thesis)
and when the run is about to stop, all k Σ_i (n − n_{y_i}) hinges are evaluated
(:func:`sdpembed.graphs.impostor_triplets`, blocks of points, vectorised) and the newly active
triplets join the candidate list 𝒩^(t); in between only the candidates are checked. Step size:
start small, ×1.01 after a step that decreased the loss, ×0.5 after one that increased it
(Sec. 2.1.7; the increasing step is also undone, so the loss never goes up).

**Certificate.** Algorithm 3 is a subgradient method: it converges, but slowly. Its answer is
certified by :func:`certify_metric`, which builds multipliers α ∈ [0, μ] from the final M —
μ on triplets strictly active, 0 on inactive ones, and, on the triplets at the hinge
(|h| ≤ band), the values that best satisfy complementarity C(α) M = 0 (a bounded least-squares
problem) — and hands them to :func:`sdpembed.problems.lmnn.lmnn_dual_bound`, which makes
them dual feasible by scaling. The status is ``optimal`` only if the certified relative gap is
at most ``gap_tol``; otherwise ``max_iterations``. The default solver that does reach the
target accuracy is :func:`sdpembed.solvers.lmnn.fast.solve_lmnn_fast`.

References
----------
.. [1] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: Algorithm 3 of Sec. 2.1.7, the loss (2.13), its
   (sub)gradient (2.14), the incremental update (2.15), the projection (2.16).
"""

from __future__ import annotations

import time

import numpy as np

from ..._progress import say
from ..._validate import as_matrix, check_positive_int
from ...graphs import impostor_triplets, iter_hinges
from ...problems.lmnn import lmnn_dual_bound, project_psd, triplet_keys, triplet_outer_sum
from ...results import SolveResult, build_result, relative_gap

__all__ = ["lmnn_gradient_matrix", "certify_metric", "solve_lmnn_gradient"]

#: Hinge bands tried by :func:`certify_metric` for the triplets "at the hinge".
DEFAULT_BANDS = (1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)

#: Largest number of at-the-hinge triplets given to the bounded least-squares problem.
MAX_HINGE_SET = 20_000


def lmnn_gradient_matrix(instance, M: np.ndarray) -> np.ndarray:
    """The (sub)gradient (2.14) of ε at M, recomputed from scratch over all triplets.

    G = (1 − μ) P + μ Σ_{h_ijl(M) > 0} (C_ij − C_il); the active triplets are streamed in blocks.
    """
    M = instance._metric(M)
    active = impostor_triplets(instance.X, instance.y, instance.targets, M)
    push, _ = triplet_outer_sum(instance.X, active, np.ones(active.shape[0]))
    return (1.0 - instance.mu) * np.asarray(instance.pull_matrix) + instance.mu * push


def _hinges(X: np.ndarray, triplets: np.ndarray, M: np.ndarray) -> np.ndarray:
    """1 + D_M(x_i, x_j) − D_M(x_i, x_l) for listed triplets (explicit differences, vectorised)."""
    U = X[triplets[:, 0]] - X[triplets[:, 1]]
    W = X[triplets[:, 0]] - X[triplets[:, 2]]
    return 1.0 + np.einsum("ij,ij->i", U @ M, U) - np.einsum("ij,ij->i", W @ M, W)


def certify_metric(
    instance, M: np.ndarray, *, bands: tuple[float, ...] = DEFAULT_BANDS, objective: float | None = None
) -> tuple[float, np.ndarray, np.ndarray]:
    """A certified lower bound on the optimum of (2.11) built from a (near-optimal) M ⪰ 0.

    For each band b: α_t = μ where h_t(M) > b (strictly active), 0 where h_t < −b, and on the
    set H of triplets with |h_t| ≤ b the solution of

        min_{α_H ∈ [0, μ]^H} ‖C(α) M‖_F,     C(α) = (1 − μ)P + Σ_t α_t (C_ij − C_il),

    i.e. the multipliers that best satisfy the complementarity C(α*) M* = 0 of the optimum.
    The bound of each candidate is :func:`lmnn_dual_bound` (valid for any α ∈ [0, μ]); the
    largest is returned.

    Returns
    -------
    bound : float
    triplets : ndarray of int, shape (T, 3)
    alpha : ndarray of shape (T,)
        The multipliers of the best bound.
    """
    import scipy.optimize  # at first use (DESIGN.md, "Start-up")

    M = project_psd(instance._metric(M))
    mu = instance.mu
    if objective is None:
        objective = instance.objective(M)
    lowest = -max(bands)
    parts = list(iter_hinges(instance.X, instance.y, instance.targets, M, threshold=lowest))
    triplets = np.concatenate([p[0] for p in parts]) if parts else np.empty((0, 3), dtype=np.int64)
    hinges = np.concatenate([p[1] for p in parts]) if parts else np.empty(0)
    best = (0.0, triplets[:0], np.empty(0))
    if mu == 0.0 or triplets.shape[0] == 0:
        return best
    X, d = instance.X, instance.dim
    for band in sorted(bands):
        alpha = np.where(hinges > band, mu, 0.0)
        at_hinge = np.flatnonzero(np.abs(hinges) <= band)
        if at_hinge.size > MAX_HINGE_SET:
            at_hinge = at_hinge[np.argsort(np.abs(hinges[at_hinge]))[:MAX_HINGE_SET]]
        if at_hinge.size:
            fixed, _ = triplet_outer_sum(X, triplets, alpha)
            base = ((1.0 - mu) * np.asarray(instance.pull_matrix) + fixed) @ M          # C(α_fixed) M
            t = triplets[at_hinge]
            U, W = X[t[:, 0]] - X[t[:, 1]], X[t[:, 0]] - X[t[:, 2]]
            # (C_ij − C_il) M = u (Mu)ᵀ − w (Mw)ᵀ, one column of d² entries per triplet
            cols = (U[:, :, None] * (U @ M)[:, None, :] - W[:, :, None] * (W @ M)[:, None, :]).reshape(-1, d * d)
            fit = scipy.optimize.lsq_linear(cols.T, -base.ravel(), bounds=(0.0, mu), method="bvls"
                                            if at_hinge.size <= 2000 else "trf")
            alpha[at_hinge] = np.clip(fit.x, 0.0, mu)
        keep = alpha > 0.0
        bound = lmnn_dual_bound(instance, triplets[keep], alpha[keep], upper_bound=objective)
        if bound > best[0]:
            best = (bound, triplets[keep], alpha[keep])
    return best


def solve_lmnn_gradient(
    instance,
    *,
    M0: np.ndarray | None = None,
    step: float | None = None,
    max_iter: int = 2000,
    check_every: int = 10,
    tol: float = 1e-7,
    gap_tol: float = 1e-4,
    certify: bool = True,
    verbose: bool | int = False,
) -> SolveResult:
    """Algorithm 3: gradient projection with incremental gradient (2.15) and active sets.

    Parameters
    ----------
    instance : LMNNInstance
    M0 : ndarray of shape (d, d), optional
        Starting metric (line 1: the identity by default); projected onto the PSD cone.
    step : float, optional
        Initial step size a ("start with a very small value"): by default 1e-2 ‖M0‖_F / ‖G0‖_F.
    max_iter : int
        Iterations at most.
    check_every : int
        A full hinge check every this many iterations (line 6; 10–20 in the thesis).
    tol : float
        The run is "almost converged" when the loss decreased by less than ``tol`` (relative)
        over the last ``check_every`` accepted iterations on one candidate list (a growing
        list raises the loss: those losses are not compared); a full check then ends it if
        no new triplet became active.
    gap_tol : float
        ``optimal`` needs the certified relative gap at most this.
    certify : bool
        Build the certificate of :func:`certify_metric` (otherwise the bound is NaN).
    verbose : bool or int
        Print progress every ``verbose`` iterations (``True``: 100): loss, active triplets,
        candidates, step.

    Returns
    -------
    SolveResult
        ``solution`` the best M found (PSD), ``objective`` its exact loss (2.11), the certified
        bound and gap; ``history`` per iteration (``objective`` on the candidates, ``step``,
        ``active``, ``candidates``, ``full_check``, ``accepted``); ``extra["gradient"]`` the incrementally
        maintained G at the last iterate and ``extra["gradient_at"]`` that iterate.
    """
    start = time.perf_counter()
    max_iter = check_positive_int(max_iter, "max_iter")
    check_every = check_positive_int(check_every, "check_every")
    if not (np.isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    X, y, targets, mu = instance.X, instance.y, instance.targets, instance.mu
    n, d = instance.n_points, instance.dim
    M = np.eye(d) if M0 is None else project_psd(instance._metric(as_matrix(M0, "M0")))
    P = np.asarray(instance.pull_matrix)
    every = 100 if verbose is True else int(verbose)

    candidates = np.empty((0, 3), dtype=np.int64)       # 𝒩^(t), the list of triplets ever active
    keys = np.empty(0, dtype=np.int64)
    active = np.zeros(0, dtype=bool)                    # 𝒩_t as a mask over the candidates
    G = (1.0 - mu) * P                                  # line 4

    def full_check(M: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """Lines 7–8: 𝒩 exactly, merged into the candidate list. Returns (mask, hinges, added)."""
        nonlocal candidates, keys
        found, _ = impostor_triplets(X, y, targets, M, return_hinges=True)
        found_keys = triplet_keys(found, n)
        new = ~np.isin(found_keys, keys)
        if np.any(new):
            candidates = np.concatenate([candidates, found[new]])
            keys = np.concatenate([keys, found_keys[new]])
        h = _hinges(X, candidates, M)
        mask = np.isin(keys, found_keys)
        return mask, h, int(new.sum())

    def update_gradient(G: np.ndarray, old: np.ndarray, new: np.ndarray) -> np.ndarray:
        """(2.15): add the triplets entering the active set, subtract those leaving it."""
        old = np.concatenate([old, np.zeros(new.size - old.size, dtype=bool)])
        entering, leaving = new & ~old, old & ~new
        if np.any(entering) or np.any(leaving):
            changed = np.concatenate([candidates[entering], candidates[leaving]])
            weights = np.concatenate([np.ones(entering.sum()), -np.ones(leaving.sum())])
            delta, _ = triplet_outer_sum(X, changed, weights)
            G = G + mu * delta
        return G

    if step is None:
        g0 = float(np.linalg.norm(lmnn_gradient_matrix(instance, M)))
        step = 1e-2 * max(float(np.linalg.norm(M)), 1.0) / max(g0, 1e-300)
    step = float(step)
    if not (np.isfinite(step) and step > 0.0):
        raise ValueError(f"step must be a positive number, got {step}")

    history: dict[str, list] = {key: [] for key in ("objective", "step", "active", "candidates", "full_check",
                                                    "accepted")}
    prev = None          # (M, G, active mask, loss) of the last accepted iterate
    accepted: list[float] = []
    converged = force_full = False
    t = 0
    for t in range(max_iter):
        reference = None if prev is None else prev[3]
        full = t % check_every == 0 or force_full
        added = 0
        if full:                                        # lines 7–8
            mask, h, added = full_check(M)
            force_full = False
            if added:
                reference = None        # the candidate list grew: the losses are not comparable,
                accepted.clear()        # neither for the step rule nor for the stall test
        else:                                           # lines 10–11: only the candidates
            h = _hinges(X, candidates, M)
            mask = h > 0.0
        loss = (1.0 - mu) * float(np.sum(P * M)) + mu * float(h[mask].sum())
        for key, value in (("objective", loss), ("step", step), ("active", int(mask.sum())),
                           ("candidates", candidates.shape[0]), ("full_check", full)):
            history[key].append(value)
        history["accepted"].append(not (reference is not None and loss > reference))
        if reference is not None and loss > reference:
            step *= 0.5                                 # the loss went up: halve, redo from the last iterate
            M = project_psd(prev[0] - step * prev[1])
            continue
        if reference is not None:
            step *= 1.01
        G = update_gradient(G, active, mask)            # line 13, (2.15)
        active = mask
        prev = (M, G, active, loss)
        accepted.append(loss)
        if every and t % every == 0:
            say(f"iter {t:6d}  loss {loss:.10g}  active {int(mask.sum()):8d}  candidates "
                f"{candidates.shape[0]:8d}  step {step:.3e}{'  [full check]' if full else ''}")
        stalled = len(accepted) > check_every and \
            accepted[-check_every - 1] - loss <= tol * max(abs(loss), 1.0)
        if stalled and full and not added:
            converged = True                            # almost converged, and the full check found nothing new
            break
        force_full = stalled                            # line 6, "almost converged": check everything next
        M = project_psd(M - step * G)                   # line 14, projection (2.16)
    M_best, G_last, _, _ = prev if prev is not None else (M, G, active, loss)
    objective = instance.objective(M_best)
    if certify:
        bound, cert_triplets, cert_alpha = certify_metric(instance, M_best, objective=objective)
    else:
        bound, cert_triplets, cert_alpha = float("nan"), np.empty((0, 3), dtype=np.int64), np.empty(0)
    rgap = relative_gap(objective, bound, instance.gap_scale) if certify else float("nan")
    if certify and rgap <= gap_tol:
        status = "optimal"
        message = f"certified relative gap {rgap:.2e} <= {gap_tol:g} after {t + 1} iteration(s)"
    else:
        status = "max_iterations"
        reason = "the loss stalled" if converged else f"max_iter={max_iter} reached"
        message = (f"{reason} after {t + 1} iteration(s); certified relative gap {rgap:.2e} > gap_tol={gap_tol:g} "
                   "(Algorithm 3 is a subgradient method; the default solver 'fast' reaches the tolerance)")
    if verbose:
        say(f"done: loss {objective:.10g}  bound {bound:.10g}  gap {rgap:.2e}  [{status}]")
    return build_result(
        instance.problem, "M", M_best, objective, bound, rgap=rgap, status=status, message=message,
        method="gradient", solver="lmnn_algorithm3", max_violation=instance.max_violation(M_best),
        iterations=t + 1, start=start, history={key: np.asarray(value) for key, value in history.items()},
        extra={"gradient": G_last, "gradient_at": M_best, "candidates": candidates, "step": step,
               "triplets": cert_triplets, "alpha": cert_alpha, "stalled": converged},
    )
