"""The one registry of problems. The CLI, :func:`sdpembed.validation.certify` and the
reference suite look problems up here and nowhere else (DESIGN.md: no if-chains on problem
names outside the registry).

A problem is added by writing its instance type (with its standard form and suite recipes, in
:mod:`sdpembed.problems`), its CVXPY formulation and its hand-written solver(s), and registering a
:class:`ProblemSpec` in :data:`PROBLEMS`: every per-problem hook is a field of the spec, and
``tests/contract/test_one_registry.py`` fails when another module branches on a problem's name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field, replace
from importlib import import_module
from typing import TYPE_CHECKING, Any

import numpy as np

from ._memory import check_memory, dense_bytes
from .problems.standard_form import StandardForm
from .results import SolveResult

if TYPE_CHECKING:
    from .problems.suite_cases import SuiteCase


def _keywords(func: Callable[..., Any], exclude: tuple[str, ...] = ()) -> frozenset[str] | None:
    """The options ``func`` accepts by keyword (its parameters with defaults, less ``exclude``), or
    None when it takes any (``**kwargs``)."""
    parameters = inspect.signature(func).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters if p.default is not inspect.Parameter.empty
                     and p.kind is not inspect.Parameter.POSITIONAL_ONLY) - set(exclude)


def _at_first_call(module: str, name: str) -> Callable[..., Any]:
    """``name`` of ``module`` (relative to this package), imported when it is first called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(module, __package__), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


def _lazy(module: str, name: str, forwards_to: str | None = None) -> Callable[..., SolveResult]:
    """``name`` of ``module`` (relative to this package), imported at its first call.

    The solvers and the CVXPY formulations load only when a solve asks for them, so that loading
    instance files and checking solutions (which use this registry) never import CVXPY.
    ``forwards_to`` names the function of that module whose options ``name`` passes on
    (``**options``); ``call.options()`` lists the accepted options (None: any).
    """

    def target(attribute: str) -> Callable[..., Any]:
        return getattr(import_module(module, __package__), attribute)

    call = _at_first_call(module, name)

    def options() -> frozenset[str] | None:
        # the wrapper sets the forwarded function's ``problem`` itself
        return _keywords(target(forwards_to), ("problem",)) if forwards_to else _keywords(target(name))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"sdpembed{module}.{name}, imported at its first call."
    call.options = options
    return call


def _admm_iterations(solver: Callable[..., SolveResult], *, restricted: bool) -> Callable[..., SolveResult]:
    """A NuMax ADMM method that reads ``max_iter`` as the ADMM's iteration limit (the
    ``max_iter`` of its ``stopping``), so that ``max_iter`` means ADMM iterations for every
    method of the NuMax family (``sdpembed solve --max-iter``); with ``restricted`` (column
    generation) it limits each restricted ADMM solve (``admm_options["stopping"]``). The
    single ADMM (not ``restricted``) also reads ``time_limit`` and ``cpu_time_limit`` (seconds of
    wall and CPU time, :mod:`sdpembed._deadline`) into its ``stopping``, as the other problems'
    solvers take them."""
    limits = () if restricted else ("time_limit", "cpu_time_limit")

    def call(instance: Any, *, max_iter: int | None = None, **options: Any) -> SolveResult:
        given = {key: value for key in limits if (value := options.pop(key, None)) is not None}
        if max_iter is not None:
            given["max_iter"] = max_iter
        if given:
            from .solvers.numax.admm_control import ADMMStopping, check_bundle

            target = dict(options.get("admm_options") or {}) if restricted else options
            target["stopping"] = replace(check_bundle(target.get("stopping"), ADMMStopping, "stopping"), **given)
            if restricted:
                options["admm_options"] = target
        return solver(instance, **options)

    def options() -> frozenset[str] | None:
        accepted = solver.options()
        return None if accepted is None else accepted | {"max_iter", *limits}

    call.__name__ = call.__qualname__ = solver.__name__
    call.__doc__ = solver.__doc__
    call.options = options
    return call


solve_lmnn_cvxpy = _lazy(".formulations.lmnn", "solve_lmnn_cvxpy")
solve_lmnn_working_set = _lazy(".formulations.lmnn", "solve_lmnn_working_set")
solve_multi_metric_cvxpy = _lazy(".formulations.lmnn_multi", "solve_multi_metric_cvxpy")
solve_mvu_cvxpy = _lazy(".formulations.mvu", "solve_mvu_cvxpy")
solve_mvu_oos_cvxpy = _lazy(".formulations.mvu_oos", "solve_mvu_oos_cvxpy")
solve_numax_cvxpy = _lazy(".formulations.numax", "solve_numax_cvxpy")
solve_numax_class_cvxpy = _lazy(".formulations.numax_class", "solve_numax_class_cvxpy")
solve_numax_cg = _admm_iterations(_lazy(".solvers.numax.column_generation", "solve_numax_cg", "column_generation"),
                                  restricted=True)
solve_lmnn_fast = _lazy(".solvers.lmnn.fast", "solve_lmnn_fast")
solve_lmnn_gradient = _lazy(".solvers.lmnn.gradient", "solve_lmnn_gradient")
solve_multi_metric_fast = _lazy(".solvers.lmnn", "solve_multi_metric_fast")
solve_mvu_ipm = _lazy(".solvers.mvu.ipm", "solve_mvu_ipm")
solve_mvu_lowrank = _lazy(".solvers.mvu.lowrank", "solve_mvu_lowrank")
solve_mvu_facial = _lazy(".solvers.mvu.facial", "solve_mvu_facial")
solve_mvu_oos = _lazy(".solvers.mvu.oos", "solve_mvu_oos")
solve_numax_admm = _admm_iterations(_lazy(".solvers.numax.admm", "solve_numax_admm", "box_trace_admm"),
                                    restricted=False)
solve_numax_class_admm = _admm_iterations(
    _lazy(".solvers.numax.numax_class", "solve_numax_class_admm", "box_trace_admm"), restricted=False)


def _admm_memory(instance: Any) -> tuple[int, str]:
    """The ADMM's S×S least-squares inverse (13), for S secants (all pairs in point form)."""
    S = instance.n_constraints
    return dense_bytes(S, S), f"the ADMM's {S}×{S} least-squares inverse (13) (float64; S = {S} secants)"


def _mvu_ipm_memory(instance: Any) -> tuple[int, str]:
    """The interior-point method's n×n iterates and its E×E Schur complement."""
    n, E = instance.n, instance.n_constraints
    return (dense_bytes(10 * n, n) + dense_bytes(3 * E, E),
            f"the interior-point method's n×n iterates and E×E Schur complement (about 10n² + 3E² float64; "
            f"n = {n}, E = {E})")

def _mvu_lowrank_memory(instance: Any) -> tuple[int, str]:
    """The low-rank solver's dense n×n dual slack and certificate (its factor and sparse systems are O(n + E))."""
    n = instance.n
    return (dense_bytes(6 * n, n),
            f"the low-rank solver's dense n×n dual slack and certificate (about 6n² float64; n = {n})")


#: From this many points on, the default method of the *inequality* variant is the low-rank solver: the
#: crossover measured by ``benchmarks/mvu_lowrank.py --sizes 40,60,80,100,120,150,200 --variants inequality
#: --solvers lowrank,ipm`` (BENCHMARKS.md, "Exact MVU at scale", the crossover), the least n from which low rank
#: is clearly faster. The other variants keep the interior point: the low-rank solver's Newton phase can stall
#: at a rank-deficient saddle on equality and slack instances, where the interior point certifies; a locked
#: equality SDP (Sec. 3.1.12) has no attained dual optimum, which stalls the low-rank solver's multipliers.
MVU_LOWRANK_FROM_N = 120


__all__ = ["ProblemSpec", "PROBLEMS", "get_problem", "method_options", "solve"]


def _mvu_proof_arrays(instance: Any, result: SolveResult) -> dict[str, np.ndarray]:
    """``dual_y`` (the proved edge multipliers of the certificate) and ``dual_t`` of a certified MVU solve."""
    if "y" not in result.extra or not result.certified:
        return {}
    return {"dual_y": np.asarray(result.extra["y"], dtype=np.float64),
            "dual_t": np.array(import_module(".problems.mvu", __package__).centering_multiplier(instance))}


def _mvu_oos_proof_arrays(instance: Any, result: SolveResult) -> dict[str, np.ndarray]:
    """``dual_lambda``, the neighbour multipliers of an out-of-sample solve."""
    return {"dual_lambda": np.asarray(result.extra["lam"], dtype=np.float64)} if "lam" in result.extra else {}


@dataclass(frozen=True)
class ProblemSpec:
    """Everything the package needs to know about one SDP.

    Attributes
    ----------
    name : str
        The ``problem`` string of instance files.
    instance_type : type
        Frozen dataclass with ``from_arrays``, ``to_arrays``, ``objective`` and
        ``max_violation``.
    variable : str
        Name of the decision variable in solution files.
    sense : {"min", "max"}
        Direction of optimisation (the dual bound is lower for "min", upper for "max").
    cvxpy : callable
        ``cvxpy(instance, solver=..., **options) -> SolveResult``, the ground truth.
    methods : dict of str to callable
        Hand-written solvers, ``method(instance, **options) -> SolveResult``.
    default_method : callable
        ``default_method(instance) -> str``, the key of ``methods`` used when none is asked for.
    from_dataset : callable
        ``from_dataset(X, y, options) -> instance`` for ``sdpembed make-instance``: points X,
        labels y (or None) and the command's options (``delta``, ``n_secants``, ``points``,
        ``random_state``, ``k``, ``mu``, ``variant``, ``omega``, ``angles``, ``link`` ...), read by attribute.
    memory : dict of str to callable
        ``memory[method](instance) -> (bytes, what)``: the largest allocation of a method whose
        memory grows faster than the instance's data and matrix variable, checked before it runs.
    sdpa_form : callable, optional
        ``sdpa_form(instance, max_entries) -> StandardForm``: the instance as the standard-form SDP
        that :mod:`sdpembed.sdpa` writes (:mod:`sdpembed.problems.standard_form`); None: no export.
    suite_cases : callable, optional
        ``suite_cases() -> list of SuiteCase``: the problem's instances of the reference suite
        (:mod:`sdpembed.problems.suite_cases`); the suite refuses a problem without them.
    dataset : str
        The dataset ``sdpembed make-instance`` builds an instance from by default (a labelled one
        for a problem that needs labels).
    estimators : tuple of str
        Dotted names of the scikit-learn estimators that solve the problem (named, not imported:
        the estimators are a higher layer); the documentation's feature table lists them.
    dual_arrays : tuple of str
        The names of the multiplier arrays a solution file may carry as the proof of its bound
        (the file contract, ``docs/grading.md``): read by :func:`sdpembed.io.solution_from_arrays`.
    dual_from_result : callable, optional
        ``dual_from_result(instance, result) -> dict`` of those arrays, from a solve's ``extra``
        (empty when the solve kept none): what ``sdpembed solve`` writes.
    verified_bound : callable, optional
        ``verified_bound(instance, multipliers, matrix) -> float``: the bound proved from the
        multipliers alone (numpy/SciPy), after restoring dual feasibility; ValueError for
        multipliers that do not fit the instance. ``verify`` never believes a claimed bound.
    """

    name: str
    instance_type: type
    variable: str
    sense: str
    cvxpy: Callable[..., SolveResult]
    methods: dict[str, Callable[..., SolveResult]] = field(default_factory=dict)
    default_method: Callable[[Any], str] = lambda instance: ""
    from_dataset: Callable[[Any, Any, Any], Any] | None = None
    memory: dict[str, Callable[[Any], tuple[int, str]]] = field(default_factory=dict)
    sdpa_form: Callable[[Any, int], StandardForm] | None = None
    suite_cases: Callable[[], list[SuiteCase]] | None = None
    dataset: str = "squares"
    estimators: tuple[str, ...] = ()
    dual_arrays: tuple[str, ...] = ()
    dual_from_result: Callable[[Any, SolveResult], dict[str, Any]] | None = None
    verified_bound: Callable[[Any, dict[str, Any], Any], float] | None = None


def _secant_instance(instance_type: type) -> Callable[[Any, Any, Any], Any]:
    """``from_dataset`` of the NuMax family: δ, sampled secants or the point form."""

    def build(X, y, options):
        return instance_type.from_data(X, y, options.delta, n_secants=options.n_secants,
                                       point_form=options.points, random_state=options.random_state)

    return build


def _numax_default(instance: Any) -> str:
    """The default method of the NuMax family: column generation for a point-form instance (all pairs)
    and for a secant list above the ADMM's limit (its S × S least-squares inverse,
    ``solvers.numax.admm_control.MAX_CONSTRAINTS`` secants), the ADMM for a shorter list."""
    if instance.point_form:
        return "cg"
    limit = import_module(".solvers.numax.admm_control", __package__).MAX_CONSTRAINTS
    return "cg" if instance.n_constraints > limit else "admm"


def _dual_hooks(instance_type: type) -> dict[str, Any]:
    """The proof a solution file may carry (``dual_arrays``, ``dual_from_result``, ``verified_bound``),
    as the instance type defines it (``DUAL_ARRAYS``, ``multiplier_arrays``, ``proven_bound``)."""
    return {
        "dual_arrays": instance_type.DUAL_ARRAYS,
        "dual_from_result": lambda instance, result: instance.multiplier_arrays(result.extra),
        "verified_bound": lambda instance, multipliers, matrix: instance.proven_bound(multipliers, matrix),
    }


# One builder per problem: its spec, importing its own problem module only (:class:`_Problems`).
def _numax() -> ProblemSpec:
    instance_type = import_module(".problems.numax", __package__).NuMaxInstance
    return ProblemSpec(
        name="numax",
        instance_type=instance_type,
        variable="P",
        sense="min",
        cvxpy=solve_numax_cvxpy,
        methods={"admm": solve_numax_admm, "cg": solve_numax_cg},
        default_method=_numax_default,
        from_dataset=_secant_instance(instance_type),
        memory={"admm": _admm_memory},
        sdpa_form=_at_first_call(".problems.standard_form", "box_trace_form"),
        suite_cases=_at_first_call(".problems.suite_cases", "numax_cases"),
        estimators=("sdpembed.NuMax",),
        **_dual_hooks(instance_type),
    )


def _numax_class() -> ProblemSpec:
    instance_type = import_module(".problems.numax", __package__).NuMaxClassInstance
    return ProblemSpec(
        name="numax_class",
        instance_type=instance_type,
        variable="P",
        sense="min",
        cvxpy=solve_numax_class_cvxpy,
        # column generation dispatches on the instance's form, for either problem of the family
        methods={"admm": solve_numax_class_admm, "cg": solve_numax_cg},
        default_method=_numax_default,
        from_dataset=_secant_instance(instance_type),
        memory={"admm": _admm_memory},
        sdpa_form=_at_first_call(".problems.standard_form", "box_trace_form"),
        suite_cases=_at_first_call(".problems.suite_cases", "numax_class_cases"),
        dataset="digits",
        estimators=("sdpembed.NuMaxClass",),
        **_dual_hooks(instance_type),
    )


def _lmnn() -> ProblemSpec:
    instance_type = import_module(".problems.lmnn", __package__).LMNNInstance
    return ProblemSpec(
        name="lmnn",
        instance_type=instance_type,
        variable="M",
        sense="min",
        cvxpy=solve_lmnn_cvxpy,
        # "fast": interior-point method on an exact working set (the default); "gradient":
        # Algorithm 3 of the thesis; "working_set": the exact working-set CVXPY solve
        methods={"fast": solve_lmnn_fast, "gradient": solve_lmnn_gradient, "working_set": solve_lmnn_working_set},
        default_method=lambda instance: "fast",
        from_dataset=lambda X, y, options: instance_type.from_data(X, y, k=options.k, mu=options.mu),
        sdpa_form=_at_first_call(".problems.standard_form", "lmnn_form"),
        suite_cases=_at_first_call(".problems.suite_cases", "lmnn_cases"),
        dataset="digits",
        estimators=("sdpembed.LMNN", "sdpembed.KernelLMNN"),
        **_dual_hooks(instance_type),
    )


def _lmnn_multi() -> ProblemSpec:
    instance_type = import_module(".problems.lmnn", __package__).MultiMetricLMNNInstance
    return ProblemSpec(
        name="lmnn_multi",
        instance_type=instance_type,
        # the (C, d, d) stack of the metrics M^1 … M^C (2.17), one per class
        variable="M",
        sense="min",
        cvxpy=solve_multi_metric_cvxpy,
        # the interior-point method on an exact working set, as for "lmnn"
        methods={"fast": solve_multi_metric_fast},
        default_method=lambda instance: "fast",
        from_dataset=lambda X, y, options: instance_type.from_data(X, y, k=options.k, mu=options.mu),
        sdpa_form=_at_first_call(".problems.standard_form", "lmnn_multi_form"),
        suite_cases=_at_first_call(".problems.suite_cases", "lmnn_multi_cases"),
        estimators=("sdpembed.MultiMetricLMNN",),
        dataset="digits",
        **_dual_hooks(instance_type),
    )


def _mvu_oos() -> ProblemSpec:
    problem = import_module(".problems.mvu_oos", __package__)
    instance_type = problem.MVUOOSInstance
    return ProblemSpec(
        name="mvu_oos",
        instance_type=instance_type,
        variable="S",
        sense="min",
        cvxpy=solve_mvu_oos_cvxpy,
        # the interior-point method with active-set polish of Sec. 3.1.10's small SDP
        methods={"ipm": solve_mvu_oos},
        default_method=lambda instance: "ipm",
        from_dataset=lambda X, y, options: instance_type.from_data(X, y, options.delta),
        sdpa_form=_at_first_call(".problems.standard_form", "mvu_oos_form"),
        suite_cases=_at_first_call(".problems.suite_cases", "mvu_oos_cases"),
        estimators=("sdpembed.MVU",),
        dual_arrays=("dual_lambda",),
        dual_from_result=_mvu_oos_proof_arrays,
        verified_bound=lambda instance, multipliers, matrix: problem.verified_dual_bound(instance, multipliers),
    )


def _mvu() -> ProblemSpec:
    problem = import_module(".problems.mvu", __package__)
    instance_type = problem.MVUInstance
    return ProblemSpec(
        name="mvu",
        instance_type=instance_type,
        variable="K",
        # every variant is a maximisation (min_trace as max −tr K): the dual bound is an upper bound
        sense="max",
        cvxpy=solve_mvu_cvxpy,
        # the primal–dual interior-point method, the low-rank augmented Lagrangian and facial reduction (the
        # equality and min_trace variants; the others go to the interior point), each with a certified dual
        # bound. The default: low rank for the inequality variant from MVU_LOWRANK_FROM_N points, else the
        # interior point. Facial reduction is faster on the benchmark's swiss rolls (BENCHMARKS.md, "Exact
        # MVU at scale") but is not the default yet: on some rolls its steps depend on the BLAS's rounding, and
        # the K its last face determines can miss the edges by more than a tight feas_tol where the interior
        # point certifies (measured in issue 25's session notes)
        methods={"ipm": solve_mvu_ipm, "lowrank": solve_mvu_lowrank, "facial": solve_mvu_facial},
        default_method=lambda instance: ("lowrank" if instance.variant == "inequality"
                                          and instance.n >= MVU_LOWRANK_FROM_N else "ipm"),
        from_dataset=lambda X, y, options: instance_type.from_points(
            X, options.k, getattr(options, "variant", "equality"), omega=getattr(options, "omega", None),
            angles=getattr(options, "angles", True), link=getattr(options, "link", False),
            random_state=getattr(options, "random_state", None),
        ),
        memory={"ipm": _mvu_ipm_memory, "lowrank": _mvu_lowrank_memory, "facial": _mvu_ipm_memory},
        sdpa_form=_at_first_call(".problems.standard_form", "mvu_form"),
        suite_cases=_at_first_call(".problems.suite_cases", "mvu_cases"),
        estimators=("sdpembed.MVU",),
        dual_arrays=("dual_y", "dual_t"),
        dual_from_result=_mvu_proof_arrays,
        verified_bound=lambda instance, multipliers, matrix: problem.verified_dual_bound(instance, multipliers),
    )


class _Problems(MutableMapping):
    """The registered problems by name, each spec built at its first look-up.

    A spec names its instance type, which imports its problem module; building only the spec asked
    for keeps ``sdpembed verify`` of an MVU file from importing the LMNN and NuMax modules
    (DESIGN.md, "Start-up"). The names are known without building any spec.
    """

    def __init__(self, builders: dict[str, Callable[[], ProblemSpec]]) -> None:
        self._builders = builders
        self._specs: dict[str, ProblemSpec] = {}

    def __getitem__(self, name: str) -> ProblemSpec:
        if name not in self._specs:
            self._specs[name] = self._builders[name]()
        return self._specs[name]

    def __setitem__(self, name: str, spec: ProblemSpec) -> None:
        self._builders.setdefault(name, lambda: spec)
        self._specs[name] = spec

    def __delitem__(self, name: str) -> None:
        del self._builders[name]
        self._specs.pop(name, None)

    def __contains__(self, name: object) -> bool:      # a name alone builds no spec
        return name in self._builders

    def __iter__(self) -> Iterator[str]:
        return iter(self._builders)

    def __len__(self) -> int:
        return len(self._builders)

    def __repr__(self) -> str:
        return f"PROBLEMS({', '.join(self._builders)})"


#: Every registered problem: name -> :class:`~sdpembed.registry.ProblemSpec` (a mapping whose specs load at
#: first look-up).
PROBLEMS = _Problems({
    "numax": _numax,
    "numax_class": _numax_class,
    "lmnn": _lmnn,
    "lmnn_multi": _lmnn_multi,
    "mvu_oos": _mvu_oos,
    "mvu": _mvu,
})


def get_problem(name: str) -> ProblemSpec:
    """The :class:`~sdpembed.registry.ProblemSpec` registered under ``name``, or a ValueError listing them."""
    try:
        return PROBLEMS[name]
    except KeyError:
        raise ValueError(f"unknown problem {name!r}; registered problems: {sorted(PROBLEMS)}") from None


def solve(instance: Any, method: str | None = None, **options: Any) -> SolveResult:
    """Solve any registered instance.

    Parameters
    ----------
    instance
        An instance of a registered problem (e.g. :class:`~sdpembed.problems.NuMaxInstance`).
    method : str, optional
        ``"cvxpy"`` for the ground truth, or a hand-written method of the problem; the
        problem's default hand-written method when omitted (NuMax: ``"cg"`` for point-form
        instances and for more secants than the ADMM takes, ``"admm"`` otherwise).
    **options
        Passed to the solver (``solver="SCS"`` for CVXPY, ``verbose=True``, tolerances...);
        ``max_iter`` of column generation limits each restricted ADMM solve.

    Raises
    ------
    ValueError
        For an unknown method, an option the method does not take, or a solve whose memory
        estimate exceeds the machine's.
    """
    spec, method, solver = _method(instance, method)
    _check_options(spec.name, method, solver, options)
    if method in spec.memory:
        check_memory(*spec.memory[method](instance))
    return solver(instance, **options)


def method_options(instance: Any, method: str | None = None) -> set[str] | None:
    """The options :func:`solve` accepts for ``instance`` with ``method`` (None: the problem's
    default method), or None when the method takes any keyword."""
    _, _, solver = _method(instance, method)
    return _accepted(solver)


def _method(instance: Any, method: str | None) -> tuple[ProblemSpec, str, Callable[..., SolveResult]]:
    """The problem, the method's name and its solver for ``instance`` (ValueError for an unknown method)."""
    spec = get_problem(getattr(instance, "problem", ""))
    method = method or spec.default_method(instance)
    if method == "cvxpy":
        return spec, method, spec.cvxpy
    if method in spec.methods:
        return spec, method, spec.methods[method]
    raise ValueError(f"method must be 'cvxpy' or one of {sorted(spec.methods)} for {spec.name!r}, got {method!r}")


def _accepted(solver: Callable[..., SolveResult]) -> set[str] | None:
    """The keywords ``solver`` takes (None: any)."""
    return solver.options() if hasattr(solver, "options") else _keywords(solver)


def _check_options(problem: str, method: str, solver: Callable[..., SolveResult], options: dict[str, Any]) -> None:
    """ValueError naming the options ``solver`` does not take (rather than a TypeError inside it)."""
    accepted = _accepted(solver)
    unknown = sorted(set(options) - accepted) if accepted is not None else []
    if unknown:
        raise ValueError(f"method {method!r} of {problem!r} has no option {', '.join(map(repr, unknown))}; "
                         f"its options are {', '.join(sorted(accepted))}")
