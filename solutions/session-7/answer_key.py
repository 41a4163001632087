"""Reference code of the session 7 solutions: what the hidden tests compute each student's
expected values with.

Never released: nbgrader leaves it out of exercises/ and of the autograded folders
(``CourseDirectory.ignore``), and ``make assignments`` refuses it there. The hidden tests run
only in the grader's own process, where it is importable. The exit test's keys use numpy
only (that notebook does not allow memkit, and its tests check that no memkit module was
imported); the exercises' keys may use memkit, as the exercises do.
"""

from __future__ import annotations

import numpy as np


def overwrite_errors(stream, key, value, gamma: float) -> np.ndarray:
    """``||S k - v||`` after writing ``stream`` (pairs (k, v)) into a zero state with the add
    rule ``S + v k^T``, the decay ``gamma S + v k^T`` and the delta rule with beta 1,
    ``S + (v - S k) k^T`` (Chapter 10), in that order."""
    d_v, d_k = len(stream[0][1]), len(stream[0][0])
    out = []
    for rule in ("add", "decay", "delta"):
        S = np.zeros((d_v, d_k))
        for k, v in stream:
            k, v = np.asarray(k, dtype=float), np.asarray(v, dtype=float)
            if rule == "add":
                S = S + np.outer(v, k)
            elif rule == "decay":
                S = gamma * S + np.outer(v, k)
            else:
                S = S + np.outer(v - S @ k, k)
        out.append(np.linalg.norm(S @ np.asarray(key, dtype=float) - np.asarray(value, dtype=float)))
    return np.array(out)


# --------------------------------------------------------------------------- the exercises


def truncation_needed(K, q, beta: float, tol: float = 1e-3) -> tuple[int, int]:
    """The smallest degree P of ``memkit.recurrent.exp_kernel_features`` whose features give
    ``e^{beta k_i^T q}`` within the relative error ``tol`` for every key, and the length of
    ``Phi(q)`` then (D15)."""
    from memkit import recurrent

    exact = np.exp(beta * np.asarray(K) @ np.asarray(q))
    P = 1
    while True:
        approx = recurrent.exp_kernel_features(K, beta, P) @ recurrent.exp_kernel_features(q, beta, P)
        if np.max(np.abs(approx - exact) / exact) < tol:
            return P, int(recurrent.exp_kernel_features(q, beta, P).size)
        P += 1


def first_value_errors(K, V, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """After t = 1..n tokens, ``||o - v_1||`` for the read with the first key of the softmax
    cache of the t pairs (at ``beta``) and of the additive state ``sum_(i <= t) v_i k_i^T``."""
    cache, state = [], []
    for t in range(1, len(K) + 1):
        w = np.exp(beta * (K[:t] @ K[0] - np.max(K[:t] @ K[0])))
        cache.append(np.linalg.norm(V[:t].T @ (w / w.sum()) - V[0]))
        state.append(np.linalg.norm(V[:t].T @ (K[:t] @ K[0]) - V[0]))
    return np.array(cache), np.array(state)
