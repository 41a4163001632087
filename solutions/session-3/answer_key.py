"""Reference code of the session 3 solutions: what the hidden tests compute each student's
expected values and tolerances with.

Never released: nbgrader leaves it out of exercises/ and of the autograded folders
(``CourseDirectory.ignore``), and ``make assignments`` refuses it there. The hidden tests run
only in the grader's own process, where it is importable.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=64)
def least_squares_read_moments(M: int, d_k: int, draws: int = 2000, seed: int = 0,
                               chunk: int = 250) -> tuple[float, float, float]:
    """The mean and variance of the squared interference-to-signal ratio ``r^2`` of one read of
    a least-squares store (Chapter 4, D3), and the variance of the estimate of that mean.

    A store holds ``M > d_k`` random unit keys (rows of ``K``) with independent random unit
    values in R^{d_k}; reading key 0 returns ``sum_i P_0i v_i`` with the projection
    ``P = K (K^T K)^{-1} K^T``, signal ``P_00 v_0``. Over the values, with ``a_i = P_0i``
    (``i > 0``): ``E[r^2 | K] = sum a_i^2 / P_00^2 = 1/P_00 - 1`` (``P`` is idempotent) and
    ``Var(r^2 | K) = 2 ((sum a_i^2)^2 - sum a_i^4) / (d_k P_00^4)``. The keys are drawn
    ``draws`` times (``seed``, vectorised in chunks of ``chunk`` stores), and
    ``Var r^2 = Var E[r^2 | K] + E Var(r^2 | K)``. Returns ``(mean, variance, variance of the
    mean's estimate)``, kept for the next check of the same store size.
    """
    rng = np.random.default_rng(seed)
    given, spread = [], []
    for start in range(0, draws, chunk):
        K = rng.standard_normal((min(chunk, draws - start), M, d_k))
        K /= np.linalg.norm(K, axis=2, keepdims=True)
        row = np.einsum("tmd,td->tm", K, np.linalg.solve(np.swapaxes(K, 1, 2) @ K, K[:, 0, :, None])[..., 0])
        p00, a = row[:, 0], row[:, 1:]
        given.append(1 / p00 - 1)
        spread.append(2 * (np.sum(a ** 2, axis=1) ** 2 - np.sum(a ** 4, axis=1)) / (d_k * p00 ** 4))
    given, spread = np.concatenate(given), np.concatenate(spread)
    return float(given.mean()), float(given.var() + spread.mean()), float(given.var() / draws)
