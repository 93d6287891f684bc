"""MVU solvers (Weinberger): the primal–dual interior point of the MVU SDP (``ipm``) and its
low-rank augmented Lagrangian (``lowrank``), the
out-of-sample placement SDP and its refinement (``oos``; its batched second-order-cone interior
point in ``soc_ipm``), the spectral step (3.20)–(3.21) (``spectral``) and variational MVU
(``variational``).
"""
