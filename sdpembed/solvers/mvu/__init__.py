"""MVU solvers (Weinberger): the primal–dual interior point of the MVU SDP (``ipm``), the
out-of-sample placement SDP and its refinement (``oos``), the spectral step (3.20)–(3.21)
(``spectral``) and variational MVU (``variational``).
"""
