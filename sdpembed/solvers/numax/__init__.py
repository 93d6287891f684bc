"""NuMax and NuMax-Class solvers (Hegde et al.): the ADMM of Algorithm 1 (``admm``), its
pair-implicit version for working sets (``admm_pairs``, its linear algebra in ``pair_linalg``),
column generation over all pairs of a point set (``column_generation``, Algorithm 2) with its scan
of all pairs (``pair_scan``), the
NuMax-Class entry points (``numax_class``, Algorithm 3), the least-squares step's linear algebra
(``least_squares``) and the Gauss–Newton polish of a low-rank factor (``factor_polish``).
"""
