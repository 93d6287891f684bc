"""Data generators and bundled data.

* :func:`translating_squares`, :func:`translating_disks` — NuMax Sec. 5.1 (Fig. 2): a white
  shape on a black background at every position where it fits, any image size;
* :func:`translating_gaussian_blob` — NuMax Sec. 5.3: a Gaussian blob centred at every pixel;
* :func:`disks_and_squares` — the two classes of NuMax Fig. 12;
* :func:`gaussian_points` — i.i.d. standard normal points;
* :func:`swiss_roll`, :func:`s_curve`, :func:`trefoil_knot`, :func:`sensor_network` — the
  manifolds and the simulated sensor network of the MVU chapter (thesis Sec. 3.1);
* :func:`load_mnist` — the vendored MNIST test set (10,000 images, 28×28 and the 20×20 crop
  used by NuMax), loaded lazily from ``sdpembed/data/mnist_test.npz`` (see its README for
  attribution).

Images are returned flattened, one per row, as float64 in [0, 1].

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the data of Sec. 5.1 (Fig. 2), Sec. 5.3 and Fig. 12.
.. [2] K. Q. Weinberger, "Metric learning with convex optimization", PhD thesis, University of
   Pennsylvania, 2007. Implemented here: the manifolds of Sec. 3.1 (Fig. 3.5, 3.8) and the sensor
   network of Fig. 3.20.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import numpy as np

from ._validate import check_positive_int, check_random_state

__all__ = [
    "translating_squares",
    "translating_disks",
    "translating_gaussian_blob",
    "gaussian_points",
    "disks_and_squares",
    "load_mnist",
    "DATASETS",
    "swiss_roll",
    "s_curve",
    "trefoil_knot",
    "sensor_network",
]


def _positions(image_size: int, extent: int) -> np.ndarray:
    """Top-left corners (row, col) of every placement of an extent×extent box."""
    steps = np.arange(image_size - extent + 1)
    rows, cols = np.meshgrid(steps, steps, indexing="ij")
    return np.column_stack([rows.ravel(), cols.ravel()])


def translating_squares(image_size: int = 16, square_size: int = 8) -> np.ndarray:
    """Images of a white square translated over a black background (NuMax Fig. 2).

    Parameters
    ----------
    image_size : int
        Side of the square image; N = image_size².
    square_size : int
        Side of the white square, 1 ≤ square_size ≤ image_size.

    Returns
    -------
    ndarray of shape ((image_size − square_size + 1)², image_size²)
        One image per row, at every position where the square fits.
    """
    image_size = check_positive_int(image_size, "image_size")
    square_size = check_positive_int(square_size, "square_size")
    if square_size > image_size:
        raise ValueError(f"square_size must be <= image_size ({image_size}), got {square_size}")
    corners = _positions(image_size, square_size)
    images = np.zeros((len(corners), image_size, image_size))
    for index, (r, c) in enumerate(corners):
        images[index, r : r + square_size, c : c + square_size] = 1.0
    return images.reshape(len(corners), -1)


def translating_disks(image_size: int = 16, radius: float = 4.0) -> np.ndarray:
    """Images of a white disk of the given radius at every integer centre where it fits.

    A pixel is white when its centre lies within ``radius`` of the disk's centre.

    Returns
    -------
    ndarray of shape (n_positions, image_size²)
    """
    image_size = check_positive_int(image_size, "image_size")
    if not (0.0 < float(radius) and 2.0 * float(radius) <= image_size):
        raise ValueError(f"radius must be positive with 2*radius <= image_size, got {radius}")
    margin = int(np.ceil(radius - 0.5))
    centres = np.arange(margin, image_size - margin)
    grid = np.arange(image_size)
    rr, cc = np.meshgrid(grid, grid, indexing="ij")
    images = [
        ((rr - r) ** 2 + (cc - c) ** 2 <= radius**2).astype(float).ravel()
        for r in centres
        for c in centres
    ]
    return np.asarray(images)


def translating_gaussian_blob(
    image_size: int = 32, sigma: float = 6.0, *, return_centers: bool = False
):
    """Images of a Gaussian blob of standard deviation ``sigma`` centred at every pixel.

    NuMax Sec. 5.3 uses 32×32 images and σ = 6, training on the centres with even row and
    column (select them with ``return_centers=True``). Each image is scaled to peak 1.

    Returns
    -------
    images : ndarray of shape (image_size², image_size²)
    centers : ndarray of shape (image_size², 2), optional
        (row, col) of each blob's centre.
    """
    image_size = check_positive_int(image_size, "image_size")
    if not float(sigma) > 0.0:
        raise ValueError(f"sigma must be positive, got {sigma}")
    grid = np.arange(image_size, dtype=float)
    rr, cc = np.meshgrid(grid, grid, indexing="ij")
    centers = np.column_stack([rr.ravel(), cc.ravel()])
    d2 = (rr.ravel()[None, :] - centers[:, :1]) ** 2 + (cc.ravel()[None, :] - centers[:, 1:]) ** 2
    images = np.exp(-d2 / (2.0 * float(sigma) ** 2))
    return (images, centers.astype(int)) if return_centers else images


def disks_and_squares(image_size: int = 16, size: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """The two classes of NuMax Fig. 12: a translating disk (label 0) and square (label 1).

    The square has side ``size`` and the disk diameter ``size``, each at every position
    where it fits.

    Returns
    -------
    X : ndarray of shape (n, image_size²)
    y : ndarray of shape (n,)
    """
    disks = translating_disks(image_size, size / 2.0)
    squares = translating_squares(image_size, size)
    if {tuple(d) for d in disks} & {tuple(q) for q in squares}:
        raise ValueError(f"size {size} is too small: a pixelated disk equals a square; use size >= 4")
    X = np.vstack([disks, squares])
    return X, np.concatenate([np.zeros(len(disks), dtype=np.int64), np.ones(len(squares), dtype=np.int64)])


def gaussian_points(n_points: int, dim: int, *, random_state=None) -> np.ndarray:
    """``n_points`` i.i.d. standard normal points in R^dim, as rows."""
    n_points = check_positive_int(n_points, "n_points")
    dim = check_positive_int(dim, "dim")
    return check_random_state(random_state).standard_normal((n_points, dim))


@lru_cache(maxsize=1)
def _mnist_arrays() -> dict[str, np.ndarray]:
    with resources.files("sdpembed.data").joinpath("mnist_test.npz").open("rb") as handle:
        with np.load(handle, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}


def load_mnist(
    *,
    size: int = 28,
    digits=None,
    n_samples: int | None = None,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray]:
    """The vendored MNIST test images, loaded lazily (read once, then cached).

    Parameters
    ----------
    size : {28, 20}
        28×28 originals or the 20×20 crop used in NuMax's experiments.
    digits : int or sequence of int, optional
        Keep only these labels (e.g. ``5`` for NuMax Fig. 7).
    n_samples : int, optional
        Draw this many images uniformly without replacement (seeded by ``random_state``);
        all of them otherwise.
    random_state : None, int or numpy Generator

    Returns
    -------
    X : ndarray of shape (n, size²)
        Images as rows, float64 in [0, 1].
    y : ndarray of shape (n,)
        Integer labels 0–9.
    """
    if size not in (20, 28):
        raise ValueError(f"size must be 28 or 20, got {size!r}")
    arrays = _mnist_arrays()
    images, labels = arrays[f"images{size}"], arrays["labels"].astype(np.int64)
    index = np.arange(len(labels))
    if digits is not None:
        wanted = np.atleast_1d(np.asarray(digits))
        if wanted.size == 0 or not np.all(np.isin(wanted, np.arange(10))):
            raise ValueError(f"digits must be labels in 0..9, got {digits!r}")
        index = index[np.isin(labels, wanted)]
    if n_samples is not None:
        n_samples = check_positive_int(n_samples, "n_samples")
        if n_samples > index.size:
            raise ValueError(f"n_samples must be <= {index.size} (images available), got {n_samples}")
        index = np.sort(check_random_state(random_state).choice(index, size=n_samples, replace=False))
    X = images[index].reshape(index.size, -1).astype(np.float64) / 255.0
    return X, labels[index]


#: Named generators for the CLI's ``make-instance --dataset``.
DATASETS = ("squares", "disks", "blob", "gaussian", "mnist", "digits", "shapes", "swiss_roll")


# ------------------------------------------------------------------ manifolds for MVU
def _noise(rng: np.random.Generator, shape: tuple[int, ...], noise: float) -> np.ndarray:
    if not (np.isfinite(noise) and noise >= 0.0):
        raise ValueError(f"noise must be a non-negative number, got {noise!r}")
    return noise * rng.standard_normal(shape) if noise > 0 else np.zeros(shape)


def swiss_roll(
    n_points: int = 800, *, noise: float = 0.0, height: float = 21.0, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Points on a "Swiss roll" (thesis Fig. 3.5; the parametrisation of scikit-learn's).

    t = 1.5π(1 + 2u), h = height·v with u, v ~ U[0, 1]; x = (t cos t, h, t sin t) + noise·N(0, I).

    Returns
    -------
    X : ndarray of shape (n_points, 3)
    params : ndarray of shape (n_points, 2)
        The manifold coordinates (t, h); an unfolding should recover them up to isometry
        (the unrolled length of the roll is the arc length of the spiral, not t).
    """
    n_points = check_positive_int(n_points, "n_points")
    rng = check_random_state(random_state)
    t = 1.5 * np.pi * (1.0 + 2.0 * rng.random(n_points))
    h = float(height) * rng.random(n_points)
    X = np.column_stack([t * np.cos(t), h, t * np.sin(t)]) + _noise(rng, (n_points, 3), float(noise))
    return X, np.column_stack([t, h])


def s_curve(n_points: int = 800, *, noise: float = 0.0, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Points on an S-shaped sheet in R³ (scikit-learn's parametrisation).

    t = 3π(u − ½), h = 2v; x = (sin t, h, sign(t)(cos t − 1)) + noise·N(0, I).

    Returns
    -------
    X : ndarray of shape (n_points, 3)
    params : ndarray of shape (n_points, 2)
        (t, h).
    """
    n_points = check_positive_int(n_points, "n_points")
    rng = check_random_state(random_state)
    t = 3.0 * np.pi * (rng.random(n_points) - 0.5)
    h = 2.0 * rng.random(n_points)
    X = np.column_stack([np.sin(t), h, np.sign(t) * (np.cos(t) - 1.0)]) + _noise(rng, (n_points, 3), float(noise))
    return X, np.column_stack([t, h])


def trefoil_knot(
    n_points: int = 540, *, noise: float = 0.0, uniform: bool = True, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Points on a trefoil knot in R³ (thesis Fig. 3.8), a closed curve: MVU unfolds it to a
    circle.

    x(t) = (sin t + 2 sin 2t, cos t − 2 cos 2t, −sin 3t), t ∈ [0, 2π).

    Parameters
    ----------
    uniform : bool
        Equally spaced t (as in the thesis' figure); otherwise t ~ U[0, 2π).

    Returns
    -------
    X : ndarray of shape (n_points, 3)
    t : ndarray of shape (n_points,)
    """
    n_points = check_positive_int(n_points, "n_points")
    rng = check_random_state(random_state)
    t = 2.0 * np.pi * (np.arange(n_points) / n_points if uniform else rng.random(n_points))
    X = np.column_stack([np.sin(t) + 2.0 * np.sin(2.0 * t), np.cos(t) - 2.0 * np.cos(2.0 * t), -np.sin(3.0 * t)])
    return X + _noise(rng, (n_points, 3), float(noise)), t


def sensor_network(
    n_sensors: int = 20000,
    *,
    radius: float = 0.06,
    max_neighbors: int = 20,
    noise: float = 0.1,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The simulated sensor network of thesis Fig. 3.20.

    Sensors are uniform in the unit square, then centred on the origin. Each sensor measures
    its distance to at most ``max_neighbors`` of the (nearest) sensors within ``radius``, and
    each measured length is corrupted by uniform relative noise: d̃ = d (1 + noise·u),
    u ~ U[−1, 1] (the thesis' "10% uniform noise"). An edge is kept when either end measures
    it, and measured once.

    Returns
    -------
    positions : ndarray of shape (n_sensors, 2)
        True (centred) locations.
    edges : ndarray of shape (E, 2), int64
        Measured pairs, i < j.
    sqdist : ndarray of shape (E,)
        Noisy squared distances d̃².
    """
    from sklearn.neighbors import NearestNeighbors

    from .graphs import canonical_edges, edge_sqdist

    n_sensors = check_positive_int(n_sensors, "n_sensors", minimum=2)
    max_neighbors = check_positive_int(max_neighbors, "max_neighbors")
    if not (np.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a positive number, got {radius!r}")
    if not (np.isfinite(noise) and 0.0 <= noise < 1.0):
        raise ValueError(f"noise must lie in [0, 1), got {noise!r}")
    rng = check_random_state(random_state)
    positions = rng.random((n_sensors, 2))
    positions -= positions.mean(axis=0)
    k = min(max_neighbors, n_sensors - 1)
    distance, index = NearestNeighbors(n_neighbors=k).fit(positions).kneighbors()
    within = distance <= radius
    rows = np.repeat(np.arange(n_sensors), k).reshape(n_sensors, k)
    edges = canonical_edges(rows[within], index[within], n_sensors)
    d = np.sqrt(edge_sqdist(positions, edges))
    measured = d * (1.0 + float(noise) * rng.uniform(-1.0, 1.0, size=d.shape))
    return positions, edges, measured**2
