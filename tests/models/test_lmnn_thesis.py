"""The thesis' LMNN algorithms beyond the SDP (2.11) (issue 23): the energy rule (2.12) with one
metric per class (2.17), LMNN with a rectangular L (Sec. 2.1.8) and kernel LMNN (2.18), each
against an independent computation."""

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

from sdpembed.models.lmnn import MultiMetricLMNN, energy_scores, multi_metric_energy_scores


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
