"""Reference code of the session 6 solutions: what the hidden tests compute each student's
expected values and tolerances with.

Never released: nbgrader leaves it out of exercises/ and of the autograded folders
(``CourseDirectory.ignore``), and ``make assignments`` refuses it there. The hidden tests run
only in the grader's own process, where it is importable. The exercises allow memkit, and so
does their reference code.
"""

from __future__ import annotations

import numpy as np


def baseline_variances(a, r, b: float, m: int) -> tuple[float, np.ndarray]:
    """The variance of the mean of ``m`` one-sample estimates ``(r_i - b)(e_i - a)`` of the
    policy gradient (D16), ``i`` drawn with the probabilities ``a``: its total (the sum over
    the four entries) and each entry's.

    One sample ``X`` has ``E[X] = a (r - rbar)`` whatever ``b``, and
    ``E[X_j^2] = sum_i a_i (r_i - b)^2 (e_i - a)_j^2``.
    """
    a, r = np.asarray(a, dtype=float), np.asarray(r, dtype=float)
    scores = np.eye(len(a)) - a  # row i: e_i - a
    second = (a * (r - b) ** 2) @ scores ** 2
    entries = (second - (a * (r - a @ r)) ** 2) / m
    return float(entries.sum()), entries


def total_variance_spread(a, r, b: float, m: int, repeats: int) -> float:
    """The standard deviation of the total variance measured from ``repeats`` estimates, each
    the mean ``Y`` of ``m`` one-sample estimates ``X = (r_i - b)(e_i - a)`` (D16), ``i`` drawn
    with the probabilities ``a``: ``sqrt((E|Y - mu|^4 - (E|Y - mu|^2)^2) / repeats)``, with
    ``E|Y - mu|^2 = tr S / m`` and ``E|Y - mu|^4 = (m k + m (m - 1)((tr S)^2 + 2 tr S^2)) / m^4``
    for the covariance ``S`` of ``X`` and ``k = E|X - mu|^4``.
    """
    a, r = np.asarray(a, dtype=float), np.asarray(r, dtype=float)
    x = (r - b)[:, None] * (np.eye(len(a)) - a)  # row i: the estimate when i is drawn
    centred = x - a @ x
    S = centred.T @ (a[:, None] * centred)
    k = a @ np.sum(centred ** 2, axis=1) ** 2
    fourth = (m * k + m * (m - 1) * (np.trace(S) ** 2 + 2 * np.trace(S @ S))) / m ** 4
    return float(np.sqrt(max(fourth - (np.trace(S) / m) ** 2, 0.0) / repeats))


def trained_keys(target: float):
    """The figure of Chapter 7 (three unit keys at 60, 150 and 100 degrees holding -1, 0.2 and
    1, query (1, 0), beta 3, step 0.1, 40 steps) trained toward ``target``: the key nearest the
    query at the end, the keys whose angle grew, and the last output."""
    from memkit import attention

    angles = np.radians([60.0, 150.0, 100.0])
    K = np.column_stack([np.cos(angles), np.sin(angles)])
    run = attention.train_keys(K, np.array([-1.0, 0.2, 1.0]), np.array([1.0, 0.0]),
                               target=target, beta=3.0, eta=0.1, steps=40)
    degrees = np.abs(np.degrees(np.arctan2(run.keys[:, :, 1], run.keys[:, :, 0])))
    return (int(np.argmin(degrees[-1])), {i for i in range(3) if degrees[-1, i] > degrees[0, i]},
            float(run.outputs[-1]))


def heads_difference(X, W_Q, W_K, W_V, W_O) -> float:
    """The largest difference between the outputs of one and of two heads (memkit.attention)."""
    from memkit import attention

    one = attention.multihead(X, W_Q, W_K, W_V, W_O, 1)[0]
    two = attention.multihead(X, W_Q, W_K, W_V, W_O, 2)[0]
    return float(np.abs(one - two).max())


def claim_gap(X, W_Q, W_K, G) -> float:
    """The largest change of a score x_i^T W_Q W_K^T x_j when W_Q -> W_Q G and W_K -> W_K G^-1
    (the classmate's replacement; D9's is W_K G^-T)."""
    scores = X @ W_Q @ W_K.T @ X.T
    claimed = X @ (W_Q @ G) @ (W_K @ np.linalg.inv(G)).T @ X.T
    return float(np.abs(claimed - scores).max())
