"""scikit-learn's estimator checks over every linear map of :mod:`sdpembed.linear`, with the
set-output API (``get_feature_names_out``, pandas output) they exercise when pandas is installed."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sdpembed.linear import (
    ADAGIO,
    LDA,
    PCA,
    FroMax,
    GaussianProjection,
    KernelSparseLinearProjection,
    NILEPro,
    NuMax,
    NuMaxClass,
    RademacherProjection,
    RandomizedPCA,
    SparseLinearProjection,
)

ESTIMATORS = [
    PCA(),
    RandomizedPCA(random_state=0),
    GaussianProjection(random_state=0),
    RademacherProjection(random_state=0),
    LDA(),
    ADAGIO(random_state=0),
    SparseLinearProjection(random_state=0),
    KernelSparseLinearProjection(sigma=0.1, tau=1.0, random_state=0),
    NuMax(),
    NuMaxClass(),
    FroMax(random_state=0),
    NILEPro(random_state=0),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
