"""Closed-form and randomized linear maps Ψ (M, N): PCA, random projections, and the
factor Ψ = Λ^½Uᵀ of a learned PSD matrix (NuMax (5))."""

from .base import LinearEmbedding
from .factor import embedding_from_psd, numerical_rank
from .pca import pca_projection
from .random_projection import gaussian_projection

__all__ = ["LinearEmbedding", "embedding_from_psd", "numerical_rank", "pca_projection", "gaussian_projection"]
