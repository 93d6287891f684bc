"""`certify(instance, result_or_matrix)`: everything that can be proved about a solution.

The certificate reports the objective, the worst constraint violation, the asymmetry, the least
eigenvalue (PSD residual), the numerical rank, the dual bound and the certified gap (when
the result carries one), and — when a ground truth is given, stored in the instance, or
computed with CVXPY — the signed relative error of the objective against it. The verdict
``passed`` applies the tolerances of :class:`Tolerances`. Every check is applied to the matrix
exactly as it was handed over: it must hold real, finite numbers and be symmetric.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._progress import progress_bar
from ..io import check_dual_bound, checked_matrix
from ..linear.factor import DEFAULT_TAIL_TOL, tail_rank
from ..registry import get_problem
from ..results import GroundTruthTooLarge, SolveResult, relative_gap

__all__ = ["Tolerances", "Certificate", "certify", "format_against", "format_unit", "objective_side"]


@dataclass(frozen=True)
class Tolerances:
    """What "pass" means; every field a finite number ≥ 0 (a ValueError otherwise).

    Attributes
    ----------
    objective : float
        Largest relative objective error |f − f*| / max(|f*|, u_f) against the optimum, u_f the
        instance's ``objective_unit`` (1 but where the objective scales with the data: MVU).
    feasibility : float
        Largest absolute constraint violation (NuMax: secants are unit vectors and the
        bounds are O(1), so an absolute tolerance is a relative one), and largest asymmetry
        max |X − Xᵀ| / max(u_X, max |X|) of the matrix, u_X the instance's ``matrix_unit``.
    psd : float
        Largest negative eigenvalue, relative to max(u_X, λ_max).
    """

    objective: float = 1e-4
    feasibility: float = 1e-5
    psd: float = 1e-6

    def __post_init__(self) -> None:
        for name in ("objective", "feasibility", "psd"):
            value = getattr(self, name)
            # NaN would switch a check off (every comparison with it is false), inf or < 0 too
            if (isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real)
                    or not math.isfinite(value) or value < 0):
                raise ValueError(f"the {name} tolerance must be a finite number >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))


@dataclass
class Certificate:
    """The outcome of :func:`certify`; ``reasons`` lists every failed check.

    ``objective_error`` is signed, (f − f*) / max(|f*|, u_f) in the registry's sense (MVU maximises):
    an objective better than the optimum means an infeasible answer or a wrong optimum, a worse one
    a suboptimal answer (:func:`objective_side` says which in words).
    """

    problem: str
    objective: float
    max_violation: float
    min_eigenvalue: float
    rank: int
    dual_bound: float
    gap: float
    relative_gap: float
    optimum: float
    optimum_source: str
    objective_error: float
    passed: bool
    reasons: list[str] = field(default_factory=list)
    tolerances: Tolerances = field(default_factory=Tolerances)
    psd_violation: float = float("nan")
    """max(0, −λ_min) / max(u_X, λ_max), the quantity held to ``tolerances.psd``."""
    asymmetry: float = float("nan")
    """max |X − Xᵀ| / max(u_X, max |X|), held to ``tolerances.feasibility``."""
    violation_error: float = float("nan")
    """A proved bound on |``max_violation`` − the exact worst violation| (the NuMax family, point or
    secant form, whose verdict on the violation is proved:
    :meth:`~sdpembed.problems.numax.NuMaxInstance.check_violation`); NaN where the violation is a
    computed value only."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of every field."""
        out = asdict(self)
        return {k: (float(v) if isinstance(v, np.floating) else v) for k, v in out.items()}


def format_against(value: float, limit: float, digits: int = 3, *, signed: bool = False) -> str:
    """``value`` in scientific notation with ``digits`` decimals, or more where needed for the printed
    number to lie on the same side of ``limit`` as ``value`` (in magnitude): a failing 1.0012e-6
    against 1e-6 prints as 1.001e-06, never as 1.0e-06. ``signed`` prints a + on positive values."""
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    exceeds = abs(value) > limit
    sign = "+" if signed else ""
    for precision in range(digits, 16):
        text = f"{value:{sign}.{precision}e}"
        if (abs(float(text)) > limit) == exceeds:
            return text
    return f"{value:{sign}.16e}"                          # 17 significant digits: the double itself


def format_unit(unit: float) -> str:
    """An instance's unit (``objective_unit``, ``matrix_unit``: a power of two) as printed in the formulas of
    the reports: ``1``, or ``2^k``."""
    return "1" if unit == 1.0 else f"2^{int(np.frexp(unit)[1]) - 1}"


def objective_side(error: float, sense: str) -> str:
    """Which side of the optimum a signed objective error puts the answer, in words.

    Parameters
    ----------
    error : float
        (f − f*) / max(|f*|, u_f), as in :attr:`Certificate.objective_error`.
    sense : {"min", "max"}
        The registry's sense of the problem (MVU maximises).
    """
    if math.isnan(error):
        return "not compared with an optimum"
    if error == 0:
        return "at the optimum"
    above = error > 0
    where = ("above" if above else "below") + " the optimum" + (" (a maximisation)" if sense == "max" else "")
    if above == (sense == "max"):
        return f"{where}: better than the optimum, so infeasible or the optimum is wrong"
    return f"{where}: suboptimal"


def certify(
    instance: Any,
    result_or_matrix: SolveResult | np.ndarray,
    *,
    optimum: float | None = None,
    ground_truth: bool = False,
    solver: str = "CLARABEL",
    dual_bound: float | None = None,
    tolerances: Tolerances | None = None,
    tail_tol: float = DEFAULT_TAIL_TOL,
    dual_multipliers: dict[str, np.ndarray] | None = None,
    note: Callable[[str], object] | None = None,
    progress: bool | None = False,
    scan_backend: Any = None,
) -> Certificate:
    """Check a solution of a registered problem and say what is proven about it.

    Every check applies to the matrix as given (never to a repaired copy): its asymmetry
    max |X − Xᵀ| / max(u_X, max |X|) is held to the feasibility tolerance, the objective and the
    violation are the instance's functions of X itself, and the PSD check uses the least
    eigenvalue of the quadratic form xᵀXx (X's spectrum when X is symmetric).

    Every tolerance is relative to the instance's units, powers of two by which the quantities are
    divided exactly: u_f, its ``objective_unit``, the floor of the objective error
    |f − f*| / max(|f*|, u_f), and u_X, its ``matrix_unit``, that of the asymmetry and of the PSD
    violation max(0, −λ_min) / max(u_X, λ_max). Both are 1 where the quantity does not scale with the
    data (NuMax; LMNN's loss); for MVU both are the power of two 2^k ≤ τ < 2^(k+1), for LMNN's metric
    the inverse of the data's squared scale. An instance and its answer scaled together by a power of
    two then get the same grades, bit for bit: a wrong answer fails at every scale.

    Parameters
    ----------
    instance
        A registered instance (e.g. :class:`~sdpembed.problems.NuMaxInstance`).
    result_or_matrix : SolveResult or ndarray
        The solution; a SolveResult also contributes its dual bound.
    optimum : float, optional
        A known optimal value. Otherwise the instance's stored ``optimum`` is used, or,
        with ``ground_truth=True``, the CVXPY optimum is computed with ``solver``.
    ground_truth : bool
        Compute the optimum with CVXPY when none is known.
    solver : {"CLARABEL", "SCS"}
        CVXPY back-end for ``ground_truth``.
    dual_bound : float, optional
        A claimed lower bound (minimisation) to check against the optimum; taken from the
        SolveResult when not given. It must be finite.
    tolerances : Tolerances, optional
    tail_tol : float
        Rank threshold of :func:`sdpembed.linear.numerical_rank`.
    dual_multipliers : dict of str to ndarray, optional
        The multiplier arrays of a solution file (the problem's ``dual_arrays``, e.g.
        ``dual_pairs``/``dual_y`` of NuMax). The bound is *proved* here from them alone (the
        problem's ``verified_bound``): it replaces any claimed ``dual_bound``, and, when no
        optimum is known (e.g. an instance far too large for CVXPY), the objective passes if it
        lies within the objective tolerance of this proven bound.
    note : callable, optional
        ``note(text)`` is told, before the constraints are scanned, when the objective cannot be
        checked (no optimum is known or computable and no multipliers bracket it): a user of a
        large instance learns it before the scan, not after.
    progress : bool or None
        A progress bar of the scan of all pairs of a point-form instance, on stderr: True
        always, None when stderr is a terminal, False never.
    scan_backend : ScanBackend, optional
        Where the scan of all pairs of a point-form instance runs (its ``check_violation``, whose
        verdict on the violation is proved; e.g. a
        :class:`~sdpembed.solvers.numax.scan_backend.DaskScan`); by default in this process.

    Raises
    ------
    ValueError
        If the matrix is not a finite real array of the instance's ``variable_shape``
        (:func:`sdpembed.io.checked_matrix`) or the claimed
        bound is not finite (:func:`sdpembed.io.check_dual_bound`).
    """
    spec = get_problem(getattr(instance, "problem", ""))
    tol = tolerances or Tolerances()
    if isinstance(result_or_matrix, SolveResult):
        X = result_or_matrix.solution
        if dual_bound is None and result_or_matrix.certified:
            dual_bound = result_or_matrix.dual_bound
    else:
        X = result_or_matrix
    X = checked_matrix(X, spec.variable, instance.variable_shape)
    dual_bound = check_dual_bound(dual_bound)

    verified = None
    if dual_multipliers is not None:
        if spec.verified_bound is None:
            raise ValueError(f"no dual multipliers are defined for {spec.name!r} solutions")
        verified = float(spec.verified_bound(instance, dict(dual_multipliers), X))
        dual_bound = verified

    # the optimum first: what cannot be checked is known (and said) before the scan of the constraints
    reasons: list[str] = []
    optimum, source = _optimum(instance, spec, optimum, ground_truth, solver, verified, reasons)
    if note is not None and reasons:
        note("; ".join(reasons))

    with np.errstate(over="ignore", invalid="ignore"):
        # ±inf or NaN where the entries overflow it; LMNN's loss with its hinges from explicit differences
        objective = float(getattr(instance, "accurate_objective", instance.objective)(X))
    violation_error = float("nan")
    if hasattr(instance, "check_violation"):
        # a proved verdict (the NuMax family): every secant within or beyond the tolerance by its
        # rounding bound, or exactly; the scan of all pairs of a point-form instance where the backend runs
        point_form = getattr(instance, "point_form", False)
        with progress_bar(instance.n_constraints, "scanning all pairs" if point_form else "checking the secants",
                          enabled=progress, unit="pairs" if point_form else "secants") as bar, \
                np.errstate(over="ignore", invalid="ignore"):     # overflowed forms are recomputed exactly
            check = (instance.check_violation(X, tol.feasibility, progress=bar.update)
                     if scan_backend is None or not point_form
                     else scan_backend.check_violation(instance, X, tol.feasibility, progress=bar.update))
        violation, violation_error, exceeds = check.value, check.error, check.exceeds
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            violation = float(instance.max_violation(X))
        # NaN (forms of entries near the largest double overflow to inf − inf) is not within the tolerance
        exceeds = not violation <= tol.feasibility
    objective_unit, matrix_unit = float(instance.objective_unit), float(instance.matrix_unit)
    asymmetry, eigenvalues, psd_violation = _spectrum(X, matrix_unit)
    min_eig, max_eig = float(eigenvalues[0]), float(eigenvalues[-1])
    with np.errstate(over="ignore"):                         # tails of eigenvalues near the largest double
        rank = tail_rank(eigenvalues[::-1], tail_tol)

    reasons += _matrix_reasons(spec.variable, violation, exceeds, violation_error, asymmetry, psd_violation, min_eig,
                               max_eig, tol, matrix_unit)
    error = float("nan")
    if np.isfinite(optimum):
        error = (objective - optimum) / max(abs(optimum), objective_unit)
        if math.isnan(objective):
            reasons.append(f"objective nan: not computable in double precision (the entries of {spec.variable} "
                           f"overflow its terms), so not within {tol.objective:g} of the optimum {optimum:.10g}")
        elif abs(error) > tol.objective:
            reasons.append(f"relative objective error {format_against(error, tol.objective, signed=True)} exceeds "
                           f"{tol.objective:g} in magnitude, {objective_side(error, spec.sense)} "
                           f"(objective {objective:.10g}, optimum {optimum:.10g})")
    elif verified is not None:
        # f* lies between the objective of a feasible solution and the verified bound: the error is at
        # most their distance, signed like (f − f*) (below the bound of a maximisation: negative). An objective
        # beyond the bound (a solution feasible only to the tolerance) is at least that far from f*: the check
        # is two-sided, as against a known optimum
        sign = 1.0 if spec.sense == "min" else -1.0
        error = (objective - verified) / max(abs(verified), objective_unit) if np.isfinite(verified) else -sign * np.inf
        source = "bracketed by the verified dual bound of the given multipliers"
        if not np.isfinite(verified):
            reasons.append(f"the given dual multipliers prove no finite bound ({verified}): the objective could "
                           "not be checked")
        elif not abs(error) <= tol.objective:
            side = "above" if error > 0 else "below"
            beyond = ": better than the optimum by at least this (an infeasible answer)" if sign * error < 0 else ""
            reasons.append(f"objective {objective:.10g} is {abs(error):.3e} (relative) {side} the verified dual "
                           f"bound {verified:.10g}{beyond}; tolerance {tol.objective:g}")
    bound = float("nan") if dual_bound is None else dual_bound
    sign = 1.0 if spec.sense == "min" else -1.0
    if np.isfinite(bound) and np.isfinite(optimum):
        if sign * (bound - optimum) > tol.objective * max(abs(optimum), objective_unit):
            reasons.append(f"the claimed dual bound {bound:.10g} is not a bound: optimum is {optimum:.10g}")
    gap = sign * (objective - bound) if np.isfinite(bound) else float("nan")
    return Certificate(
        problem=spec.name,
        objective=objective,
        max_violation=violation,
        min_eigenvalue=min_eig,
        rank=rank,
        dual_bound=bound,
        gap=gap,
        # in the objective's unit (exact division): at the data's scale, as the solvers measure it
        relative_gap=(relative_gap(objective / objective_unit, bound / objective_unit,
                                   instance.gap_scale / objective_unit) * sign
                      if np.isfinite(bound) else float("nan")),
        optimum=float(optimum),
        optimum_source=source,
        objective_error=error,
        passed=not reasons,
        reasons=reasons,
        tolerances=tol,
        psd_violation=psd_violation,
        asymmetry=asymmetry,
        violation_error=violation_error,
    )


def _optimum(instance: Any, spec: Any, optimum: float | None, ground_truth: bool, solver: str,
             verified: float | None, reasons: list[str]) -> tuple[float, str]:
    """The optimum to compare with (NaN when unknown) and where it came from."""
    source = "given"
    if optimum is None and getattr(instance, "optimum", None) is not None:
        optimum, source = instance.optimum, "stored in the instance"
    if optimum is None and ground_truth:
        try:
            truth = spec.cvxpy(instance, solver=solver)
        except GroundTruthTooLarge as exc:
            truth, source = None, f"not computed: {exc}"
        except ImportError as exc:          # where CVXPY is not installed: unchecked, not a crash
            truth, source = None, f"not computed: the CVXPY ground truth cannot be imported ({exc})"
        if truth is not None and truth.status != "optimal":
            raise RuntimeError(f"the ground truth could not be computed: {truth.status} ({truth.message})")
        if truth is not None:
            optimum, source = truth.objective, f"computed with CVXPY/{truth.solver}"
        elif verified is None:
            reasons.append("the optimum is unknown and no verifiable dual multipliers were given: "
                           "the objective could not be checked")
    if optimum is None:
        return float("nan"), source if source != "given" else "unknown"
    return float(optimum), source


def _spectrum(X: np.ndarray, unit: float = 1.0) -> tuple[float, np.ndarray, float]:
    """(asymmetry, sorted eigenvalues, PSD violation) of X, a matrix or a (C, n, n) stack judged as their
    block-diagonal matrix (the same asymmetry, the union of the blocks' spectra).

    The asymmetry is max |X − Xᵀ| / max(u, max |X|), the eigenvalues those of (X + Xᵀ)/2 (whose least is
    min over unit x of xᵀXx; an asymmetric X fails the asymmetry check whatever they say), the PSD
    violation max(0, −λ_min) / max(u, λ_max), u = ``unit`` (a power of two, the instance's
    ``matrix_unit``). All three are computed on X scaled exactly by a power of
    two to a largest entry in [1/2, 1), so that entries near the largest double neither overflow
    (X + Xᵀ, X − Xᵀ) nor stop the eigen-solver; eigenvalues beyond the doubles are reported as ±inf.
    """
    blocks = X.reshape((-1, *X.shape[-2:]))
    top = float(np.max(np.abs(blocks), initial=0.0))
    exponent = int(np.frexp(top)[1]) if top > 0.0 else 0
    scaled = np.ldexp(blocks, -exponent)
    transposed = scaled.transpose(0, 2, 1)

    shift = int(np.frexp(unit)[1]) - 1 - exponent                 # the unit is 2^shift in the scaled units

    def relative(value: float, scale: float) -> float:
        """value / max(u, scale) for the scaled value and scale, without leaving the doubles: 2^shift may
        lie beyond them (|shift| up to about 2,100); ldexp divides by it exactly."""
        if scale > 0.0 and (shift < -1074 or (shift <= 1023 and scale >= float(np.ldexp(1.0, shift)))):
            return value / scale
        return float(np.ldexp(value, -shift))

    asymmetry = relative(float(np.max(np.abs(scaled - transposed), initial=0.0)), float(np.max(np.abs(scaled))))
    spectrum = np.sort(np.linalg.eigvalsh(0.5 * (scaled + transposed)).ravel())
    psd_violation = relative(max(0.0, -float(spectrum[0])), float(spectrum[-1]))
    with np.errstate(over="ignore"):
        return asymmetry, np.ldexp(spectrum, exponent), psd_violation


def _matrix_reasons(variable: str, violation: float, exceeds: bool, violation_error: float, asymmetry: float,
                    psd_violation: float, min_eig: float, max_eig: float, tol: Tolerances,
                    unit: float = 1.0) -> list[str]:
    """The failed checks of the matrix itself: asymmetry, constraint violation (``exceeds``: the verdict,
    proved where ``violation_error`` bounds the rounding), PSD; ``unit`` the matrix's unit, a power of two."""
    reasons = []
    named = "1" if unit == 1.0 else f"{format_unit(unit)} (the unit of {variable})"
    if asymmetry > tol.feasibility:
        reasons.append(f"asymmetric {variable}: max |{variable} - {variable}ᵀ| / max({named}, max |{variable}|) = "
                       f"{format_against(asymmetry, tol.feasibility)} > {tol.feasibility:g}")
    if math.isnan(violation):
        reasons.append(f"constraint violation nan: not computable in double precision (the entries of {variable} "
                       f"overflow its terms), so not within {tol.feasibility:g}")
    elif exceeds:
        proved = "" if math.isnan(violation_error) else f" (± {violation_error:.1e}, proved)"
        reasons.append(f"constraint violation {format_against(violation, tol.feasibility)}{proved} > "
                       f"{tol.feasibility:g}")
    if psd_violation > tol.psd:
        relative = "" if unit == 1.0 else f" (relative to max({named}, λ_max))"
        reasons.append(f"PSD violation {format_against(psd_violation, tol.psd)}{relative} > {tol.psd:g}: "
                       f"least eigenvalue {min_eig:.3e}, largest {max_eig:.3e} (not PSD)")
    return reasons
