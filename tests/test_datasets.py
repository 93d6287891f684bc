"""Generators and the vendored MNIST subset."""

import numpy as np
import pytest

from sdpembed.datasets import (
    gaussian_points,
    load_mnist,
    translating_disks,
    translating_gaussian_blob,
    translating_squares,
)


def test_squares_are_every_translate():
    X = translating_squares(16, 8)
    assert X.shape == (81, 256)
    assert np.all(X.sum(axis=1) == 64)
    assert len({tuple(row) for row in X}) == 81
    img = X[10].reshape(16, 16)
    rows, cols = np.nonzero(img)
    assert rows.max() - rows.min() == 7 and cols.max() - cols.min() == 7


def test_disks_and_blob():
    D = translating_disks(12, 3.0)
    assert D.shape[1] == 144 and len({tuple(r) for r in D}) == len(D)
    assert np.all(D.sum(axis=1) == D[0].sum())
    B, centers = translating_gaussian_blob(10, 2.0, return_centers=True)
    assert B.shape == (100, 100) and centers.shape == (100, 2)
    k = 37
    assert np.argmax(B[k]) == centers[k, 0] * 10 + centers[k, 1] and B[k].max() == 1.0


def test_mnist_vendored():
    X, y = load_mnist()
    assert X.shape == (10000, 784) and y.shape == (10000,)
    assert X.min() >= 0 and X.max() <= 1 and set(np.unique(y)) == set(range(10))
    X20, _ = load_mnist(size=20, digits=5, n_samples=50, random_state=0)
    assert X20.shape == (50, 400)
    _, y5 = load_mnist(digits=[5])
    assert np.all(y5 == 5) and len(y5) == 892


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: translating_squares(4, 5), "square_size"),
        (lambda: translating_squares(0, 1), "image_size"),
        (lambda: translating_disks(8, 5.0), "radius"),
        (lambda: translating_gaussian_blob(8, -1.0), "sigma"),
        (lambda: gaussian_points(0, 3), "n_points"),
        (lambda: load_mnist(size=16), "size"),
        (lambda: load_mnist(digits=11), "digits"),
        (lambda: load_mnist(digits=5, n_samples=5000), "n_samples"),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()
