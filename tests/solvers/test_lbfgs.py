"""The plain L-BFGS behind the MVU refinement (sdpembed.solvers.lbfgs)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from sdpembed.solvers.lbfgs import minimize_lbfgs


def _rosenbrock(x):
    return float(scipy.optimize.rosen(x)), scipy.optimize.rosen_der(x)


def test_rosenbrock_reaches_the_minimum():
    result = minimize_lbfgs(_rosenbrock, np.full(10, -1.2), max_iter=2000, ftol=0.0, gtol=1e-9)
    assert result.status == "converged"
    np.testing.assert_allclose(result.x, np.ones(10), atol=1e-6)
    assert np.all(np.diff(result.trace) <= 0.0)                       # Armijo: monotone descent


@pytest.mark.parametrize("gtol", [1e-6, 1e-12])
def test_quadratic_error_is_what_the_gradient_implies(gtol):
    # f = ½xᵀHx − bᵀx, x* = H⁻¹b: x − x* = H⁻¹∇f(x), so ‖x − x*‖ ≤ ‖∇f(x)‖ / λ_min(H) whatever BLAS rounds
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 40))
    H = A @ A.T + 40 * np.eye(40)                                       # λ in [40, 201]
    b = rng.standard_normal(40)
    result = minimize_lbfgs(lambda x: (0.5 * x @ H @ x - b @ x, H @ x - b), np.zeros(40), ftol=0.0, gtol=gtol,
                            max_iter=500)
    assert result.status == "converged"
    np.testing.assert_array_equal(result.jac, H @ result.x - b)        # the gradient returned is that of x
    eps, lam = np.finfo(float).eps, np.linalg.eigvalsh(H)
    if gtol >= 1e-6:                        # far above what the values of f resolve here: the gradient test stops
        assert np.max(np.abs(result.jac)) <= gtol
    else:
        # below it only ftol = 0 can stop the run, once f stops decreasing: f(x) − f* is then under f's rounding
        assert result.trace[-1] >= result.trace[-2]
        gap = 0.5 * result.jac @ np.linalg.solve(H, result.jac)       # f(x) − f*
        assert gap <= 40 * eps * (0.5 * np.abs(result.x) @ np.abs(H) @ np.abs(result.x) + np.abs(b) @ np.abs(result.x))
    x_star = np.linalg.solve(H, b)
    rounding = 40 * eps * (lam[-1] / lam[0]) * np.linalg.norm(x_star)    # of x* and of the gradient's evaluation
    assert np.linalg.norm(result.x - x_star) <= np.linalg.norm(result.jac) / lam[0] + rounding


def test_window_stops_on_a_slow_tail_only():
    # f = Σ x_i⁴ decreases ever more slowly: a window of 10 with ftol 1e-3 stops well before the cap
    fun = lambda x: (float(np.sum(x**4)), 4 * x**3)  # noqa: E731
    short = minimize_lbfgs(fun, np.ones(5), ftol=1e-3, window=10, max_iter=1000)
    assert short.status == "converged" and short.nit < 1000
    before = short.trace[-11] if short.nit > 10 else fun(np.ones(5))[0]
    assert (before - short.fun) / max(abs(before), abs(short.fun), 1.0) <= 1e-3
    capped = minimize_lbfgs(fun, np.ones(5), ftol=0.0, gtol=0.0, max_iter=30)
    assert capped.status == "max_iterations" and capped.nit == 30


@pytest.mark.parametrize("option", [{"memory": 0}, {"window": 0}])
def test_bad_options(option):
    with pytest.raises(ValueError, match=next(iter(option))):
        minimize_lbfgs(_rosenbrock, np.zeros(3), **option)


def test_preconditioning_by_the_inverse_hessian_solves_a_quadratic_in_one_step() -> None:
    rng = np.random.default_rng(3)
    U, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    H = (U * np.logspace(0, 6, 30)) @ U.T                      # condition number 1e6
    b = rng.normal(size=30)
    inverse = np.linalg.inv(H)

    def fun(x):
        return 0.5 * x @ H @ x - b @ x, H @ x - b

    exact = np.linalg.solve(H, b)
    pre = minimize_lbfgs(fun, np.zeros(30), ftol=0.0, gtol=1e-8, max_iter=50, precondition=lambda v: inverse @ v)
    plain = minimize_lbfgs(fun, np.zeros(30), ftol=0.0, gtol=1e-8, max_iter=50)
    assert pre.status == "converged" and pre.nit <= 3
    np.testing.assert_allclose(pre.x, exact, rtol=1e-6)
    assert plain.nit > 10 * pre.nit
