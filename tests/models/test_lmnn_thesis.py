"""The thesis' LMNN algorithms beyond the SDP (2.11) (issue 23): the energy rule (2.12) with one
metric per class (2.17), LMNN with a rectangular L (Sec. 2.1.8) and kernel LMNN (2.18), each
against an independent computation."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

from sdpembed.models.kernel_lmnn import KernelLMNN
from sdpembed.models.lmnn import LMNN, MultiMetricLMNN, energy_scores, multi_metric_energy_scores
from sdpembed.problems import LMNNInstance

# a class of 3 points in check_fit2d_1feature has no k = 3 target neighbours (see tests/models/test_lmnn.py)
EXPECTED_FAILED = {
    "check_fit2d_1feature": "a class with fewer than k + 1 members has no k target neighbours (Sec. 2.1.2)",
}


@parametrize_with_checks([MultiMetricLMNN(rule="energy"), LMNN(method="rectangular"), KernelLMNN(n_basis=6),
                          KernelLMNN(kernel="linear", rule="energy")],
                         expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def three_classes(n_per_class=12, d=3, seed=0):
    rng = np.random.default_rng(seed)
    centres = 2.0 * rng.standard_normal((3, d))
    y = np.repeat(np.arange(3), n_per_class)
    return centres[y] + rng.standard_normal((y.size, d)), y


# ---------------------------------------------------------------- multi-metric energy (2.12) + (2.17)
def brute_multi_energy(x_t, X, y, targets, metrics, k, mu):
    """(2.12) with D̂ of (2.17) by plain loops over labels, target neighbours and triplets."""
    def D(a, b, c):                       # D̂(a, b) under M^c, c the class of b
        w = a - b
        return float(w @ metrics[c] @ w)
    C = metrics.shape[0]
    out = np.empty(C)
    for c in range(C):
        same = [j for j in range(len(y)) if y[j] == c]
        tj = sorted(same, key=lambda j: D(x_t, X[j], c))[:k]
        pull = sum(D(x_t, X[j], c) for j in tj)
        push = 0.0
        for j in tj:                                        # t as i
            for l in range(len(y)):
                if y[l] != c:
                    push += max(0.0, 1.0 + D(x_t, X[j], c) - D(x_t, X[l], y[l]))
        for i in range(len(y)):                             # t as l: D̂(x_i, x_t) under M^c
            if y[i] != c:
                for j in targets[i]:
                    push += max(0.0, 1.0 + D(X[i], X[j], y[j]) - D(X[i], x_t, c))
        out[c] = (1.0 - mu) * pull + mu * push
    return out


def test_multi_metric_energy_matches_loops():
    X, y = three_classes()
    X_train, X_test, y_train, _ = train_test_split(X, y, test_size=6, random_state=0, stratify=y)
    model = MultiMetricLMNN(k=2, mu=0.4, rule="energy").fit(X_train, y_train)
    E = multi_metric_energy_scores(X_test, X_train, y_train, model.targets_, model.components_, 2, 0.4)
    for t in range(X_test.shape[0]):
        expected = brute_multi_energy(X_test[t], X_train, y_train, model.targets_, model.metrics_, 2, 0.4)
        np.testing.assert_allclose(E[t], expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(model.predict(X_test), model.classes_[np.argmin(E, axis=1)])
    np.testing.assert_allclose(model.decision_function(X_test), -E)
    assert not hasattr(model, "predict_proba")
    assert hasattr(MultiMetricLMNN(k=2).fit(X_train, y_train), "predict_proba")


def test_multi_metric_energy_with_equal_metrics_is_the_single_metric_energy():
    X, y = three_classes(seed=1)
    rng = np.random.default_rng(1)
    L = rng.standard_normal((2, 3))
    from sdpembed.graphs import target_neighbors
    targets = target_neighbors(X[6:], y[6:], 2)
    single = energy_scores(X[:6] @ L.T, X[6:] @ L.T, y[6:], targets, 2, 0.5)
    multi = multi_metric_energy_scores(X[:6], X[6:], y[6:], targets, np.stack([L] * 3), 2, 0.5)
    np.testing.assert_allclose(multi, single, rtol=1e-10)


def test_energy_rule_is_validated():
    X, y = three_classes()
    with pytest.raises(ValueError, match="rule"):
        MultiMetricLMNN(rule="vote").fit(X, y)


# ---------------------------------------------------------------- rectangular L (Sec. 2.1.8)
def test_lmnn_rectangular_option():
    X, y = three_classes(n_per_class=15, d=4, seed=2)
    X[:, 3] *= 4.0
    model = LMNN(k=3, method="rectangular", n_components=2).fit(X, y)
    assert model.components_.shape == (2, 4) and model.transform(X).shape == (45, 2)
    assert model.result_.status == "converged" and model.result_.status != "optimal"
    np.testing.assert_allclose(model.get_mahalanobis_matrix(), model.result_.metric, atol=1e-10)
    instance = LMNNInstance.from_data(X, y, k=3)
    assert instance.objective(model.metric_) == pytest.approx(model.result_.objective, rel=1e-10)
    full = LMNN(k=3).fit(X, y)
    assert model.result_.objective >= full.result_.dual_bound        # rank 2 is feasible for (2.11)
    with pytest.raises(ValueError, match="n_repeats"):
        LMNN(method="rectangular", n_repeats=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ConvergenceWarning, match="max_iterations"):
            LMNN(k=3, method="rectangular", n_components=2, max_iter=1).fit(X, y)


# ---------------------------------------------------------------- kernel LMNN (2.18)
def poly2_features(X):
    """An explicit feature map of (xᵀx' + 1)² in two dimensions, its constant feature dropped
    (differences never see it): Φ(x)ᵀΦ(x') = (xᵀx' + 1)² − 1."""
    x1, x2, s = X[:, 0], X[:, 1], np.sqrt(2.0)
    return np.column_stack([s * x1, s * x2, x1 * x1, x2 * x2, s * x1 * x2])


def pair_distances(Z_test, Z_train):
    return np.sum((Z_test[:, None, :] - Z_train[None, :, :]) ** 2, axis=2)


@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_kernel_lmnn_is_lmnn_on_explicit_features(kernel):
    X, y = three_classes(n_per_class=15, d=2, seed=3)
    X_new, _ = three_classes(n_per_class=5, d=2, seed=4)
    if kernel == "linear":
        features, model = (lambda A: A), KernelLMNN(k=3, kernel="linear")
    else:
        features, model = poly2_features, KernelLMNN(k=3, kernel="poly", degree=2, gamma=1.0, coef0=1.0)
    explicit = LMNN(k=3).fit(features(X), y)
    model.fit(X, y)
    assert explicit.result_.status == "optimal" and model.result_.status == "optimal"
    np.testing.assert_array_equal(model.targets_, explicit.targets_)
    assert model.result_.objective == pytest.approx(explicit.result_.objective, rel=1e-7)
    # the optimum is unique here: the same distances from new points, the same predictions
    D_kernel = pair_distances(model.transform(X_new), model.transform(X))
    D_explicit = pair_distances(explicit.transform(features(X_new)), explicit.transform(features(X)))
    np.testing.assert_allclose(D_kernel, D_explicit, rtol=1e-6, atol=1e-6 * D_explicit.max())
    np.testing.assert_array_equal(model.predict(X_new), explicit.predict(features(X_new)))
    # D_M through the kernel alone: (k_x − k_x')ᵀ A (k_x − k_x') on centred kernel rows
    K = model._centerer.transform(model._kernel(X_new, X))
    diff = K[0] - K[1]
    mapped = model.transform(X_new[:2])
    assert diff @ model.kernel_metric_ @ diff == pytest.approx(np.sum((mapped[0] - mapped[1]) ** 2), rel=1e-8)


def test_kernel_lmnn_precomputed_and_bad_input():
    X, y = three_classes(n_per_class=8, d=2, seed=5)
    rbf = KernelLMNN(k=3, kernel="rbf", gamma=0.5).fit(X, y)
    from sklearn.metrics.pairwise import rbf_kernel
    pre = KernelLMNN(k=3, kernel="precomputed").fit(rbf_kernel(X, gamma=0.5), y)
    X_new = X[:5] + 0.1
    np.testing.assert_allclose(pre.transform(rbf_kernel(X_new, X, gamma=0.5)), rbf.transform(X_new), atol=1e-8)
    assert pre.__sklearn_tags__().input_tags.pairwise and not rbf.__sklearn_tags__().input_tags.pairwise
    with pytest.raises(ValueError, match="square"):
        KernelLMNN(kernel="precomputed").fit(X, y)
    with pytest.raises(ValueError, match="features"):
        pre.transform(rbf_kernel(X_new, X[:10]))
    with pytest.raises(ValueError, match="eigen_rtol"):
        KernelLMNN(eigen_rtol=1.5).fit(X, y)
    with pytest.raises(ValueError, match="n_basis"):
        KernelLMNN(n_basis=0).fit(X, y)
    capped = KernelLMNN(k=3, kernel="rbf", gamma=0.5, n_basis=4).fit(X, y)
    assert capped.components_.shape == (4, X.shape[0]) and np.linalg.matrix_rank(capped.kernel_metric_) <= 4
