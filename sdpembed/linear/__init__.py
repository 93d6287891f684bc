"""The linear-embedding family: every method is a :class:`~sdpembed.linear.base.LinearEmbedding` learning Ψ (M, N).

PCA (exact and randomized), random projections (Gaussian, Rademacher), LDA, ADAGIO (Błasiok &
Tsourakakis), the sparse-linear-model projection (Gkioulekas & Zickler) with its kernel
dictionary learning ("ker.dict", :mod:`.kernel_dictionary`), the factor Ψ = Λ^½Uᵀ of
a learned PSD matrix (NuMax (5)), NuMax and NuMax-Class (the SDPs (4) and (7), :mod:`.numax`),
FroMax and NILE-Pro (Luo et al.), and the dispatch table :data:`LINEAR_METHODS` / :func:`embed`
over all of them; and what a map's measurements are used for: recovering a manifold-modelled
signal by Manifold Iterative Pursuit (:mod:`.recovery`).

References
----------
.. [1] C. Hegde, A. C. Sankaranarayanan, W. Yin and R. G. Baraniuk, "NuMax: A convex approach for
   learning near-isometric linear embeddings", IEEE Transactions on Signal Processing 63(22),
   6109–6121, 2015. Implemented here: the SDPs (4) and (7), the embedding (5).
.. [2] J. Błasiok and C. E. Tsourakakis, "ADAGIO: Fast data-aware near-isometric linear
   embeddings", Proceedings of the IEEE International Conference on Data Mining (ICDM), 2016.
   Implemented here: Algorithm 1.
.. [3] I. Gkioulekas and T. Zickler, "Dimensionality reduction using the sparse linear model",
   Advances in Neural Information Processing Systems 24 (NIPS), 2011. Implemented here: (7)–(9),
   (10)–(11), (13)–(18), the kernel dictionary of Sec. 3.3–4.
.. [4] J. Luo, K. Shapiro, H.-J. M. Shi, Q. Yang and K. Zhu, "Practical algorithms for learning
   near-isometric linear embeddings", SIAM Undergraduate Research Online 9, 2016
   (arXiv:1601.00062). Implemented here: Algorithms 1–4.
.. [5] P. Shah and V. Chandrasekaran, "Iterative projections for signal identification on
   manifolds: algorithms and recovery guarantees", Proceedings of the 49th Allerton Conference
   on Communication, Control, and Computing, 2011. Implemented here: Manifold Iterative Pursuit.
"""

from .._lazy import lazy_exports

# Loaded at first use (sdpembed._lazy): the estimators import scikit-learn, which the certificate
# (it needs only ``factor``) and the command line's start-up do not.
__getattr__, __dir__ = lazy_exports(__name__, {
    ".adagio": ("ADAGIO", "adagio_projection", "theorem2_jl_rows"),
    ".base": ("LinearEmbedding",),
    ".factor": ("embedding_from_psd", "numerical_rank"),
    ".kernel_dictionary": ("kernel_dictionary_update", "kernel_sparse_encode", "learn_kernel_dictionary"),
    ".lda": ("LDA", "lda_projection"),
    ".methods": ("LINEAR_METHODS", "Selection", "embed", "select_delta", "select_dimension"),
    ".near_isometric": ("FroMax", "NILEPro"),
    ".numax": ("NuMax", "NuMaxClass"),
    ".pca": ("PCA", "RandomizedPCA", "pca_projection", "principal_directions", "randomized_pca_projection"),
    ".recovery": ("SampledManifold", "manifold_iterative_pursuit"),
    ".random_projection": ("GaussianProjection", "RademacherProjection", "gaussian_projection", "jl_dimension",
                           "rademacher_projection"),
    ".sparse_linear_model": ("KernelSparseLinearProjection", "SparseLinearProjection",
                             "kernel_sparse_linear_coefficients", "learn_dictionary", "sparse_linear_objective",
                             "sparse_linear_projection", "weighted_sparse_linear_projection"),
})

__all__ = [
    "FroMax",
    "NILEPro",
    "NuMax",
    "NuMaxClass",
    "ADAGIO",
    "GaussianProjection",
    "KernelSparseLinearProjection",
    "LDA",
    "LINEAR_METHODS",
    "LinearEmbedding",
    "PCA",
    "RademacherProjection",
    "RandomizedPCA",
    "SampledManifold",
    "Selection",
    "SparseLinearProjection",
    "adagio_projection",
    "embed",
    "embedding_from_psd",
    "gaussian_projection",
    "jl_dimension",
    "kernel_dictionary_update",
    "kernel_sparse_encode",
    "kernel_sparse_linear_coefficients",
    "lda_projection",
    "learn_dictionary",
    "learn_kernel_dictionary",
    "manifold_iterative_pursuit",
    "numerical_rank",
    "pca_projection",
    "principal_directions",
    "rademacher_projection",
    "randomized_pca_projection",
    "select_delta",
    "select_dimension",
    "sparse_linear_objective",
    "sparse_linear_projection",
    "theorem2_jl_rows",
    "weighted_sparse_linear_projection",
]

