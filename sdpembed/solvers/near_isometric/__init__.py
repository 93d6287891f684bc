"""Non-convex near-isometric embeddings (Luo et al.): FroMax (``fromax``, Algorithm 1), NILE-Pro
(``nilepro``, Algorithm 2), rank adjustment and column generation (``rank_adjust``,
Algorithms 3–4) and their shared machinery (``nonconvex``).
"""
