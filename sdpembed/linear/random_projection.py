"""Random projections: the data-independent baseline of NuMax Lemma 1 (Johnson–Lindenstrauss)."""

from __future__ import annotations

import numpy as np

from .._validate import check_positive_int, check_random_state

__all__ = ["gaussian_projection"]


def gaussian_projection(n_components: int, dim: int, *, random_state=None) -> np.ndarray:
    """Ψ (M, N) with i.i.d. N(0, 1/M) entries, so that E‖Ψv‖² = ‖v‖² (NuMax Lemma 1)."""
    M = check_positive_int(n_components, "n_components")
    N = check_positive_int(dim, "dim")
    return check_random_state(random_state).standard_normal((M, N)) / np.sqrt(M)
