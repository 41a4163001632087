"""Reference code of the session 5 solutions: what the hidden tests compute each student's
expected values and tolerances with.

Never released: nbgrader leaves it out of exercises/ and of the autograded folders
(``CourseDirectory.ignore``), and ``make assignments`` refuses it there. The hidden tests run
only in the grader's own process, where it is importable. The exit test's keys use numpy and
math only (that notebook does not allow memkit, and its tests check that no memkit module
was imported); the exercises' keys use memkit, as the exercises do.
"""

from __future__ import annotations

import math

import numpy as np


def sphere_moment(d: int, t: float, terms: int = 400) -> float:
    """``E[e^{t s}]`` for the similarity ``s`` of two random unit vectors of R^d (D2, D7).

    The series ``sum_n (t^2/4)^n / (n! (d/2)(d/2 + 1)...(d/2 + n - 1))``, whose terms are
    ``t^(2n) / (2n)! E[s^(2n)]`` with ``E[s^(2n)] = 1 3 ... (2n - 1) / (d (d + 2) ... (d + 2n - 2))``,
    summed in logs.
    """
    logs = [0.0]
    for n in range(1, terms):
        logs.append(logs[-1] + 2 * math.log(abs(t) / 2 + 1e-300) - math.log(n) - math.log(d / 2 + n - 1))
    top = max(logs)
    return math.exp(top) * sum(math.exp(v - top) for v in logs)


def sphere_moment_tolerance(d: int, beta: float, draws: int, spread: float = 6.0) -> float:
    """The tolerance, relative to ``E[e^{2 beta s}]``, of a mean of ``draws`` samples of
    ``e^{2 beta s}``: ``spread`` standard errors, ``sqrt(E[e^{4 beta s}] - E[e^{2 beta s}]^2)
    / sqrt(draws)``."""
    first, second = sphere_moment(d, 2 * beta), sphere_moment(d, 4 * beta)
    return spread * math.sqrt(max(second / first ** 2 - 1.0, 0.0) / draws)


def jacobian_norms(s, betas) -> np.ndarray:
    """The Frobenius norms of ``beta (diag(a) - a a^T)``, ``a = softmax(beta s)``, one per beta
    (the Jacobian of the softmax weights in the similarities, Chapter 6)."""
    s = np.asarray(s, dtype=float)
    out = []
    for beta in betas:
        w = np.exp(beta * s - np.max(beta * s))
        a = w / w.sum()
        out.append(np.linalg.norm(beta * (np.diag(a) - np.outer(a, a))))
    return np.array(out)


# --------------------------------------------------------------------------- the exercises


def hard_gaps(K, V, q, betas) -> np.ndarray:
    """``||o(beta) - v_{i*}||`` for each beta: the soft read against the hard lookup (Chapter 6)."""
    from memkit import attention

    hard = attention.hard_lookup(K, V, q)
    return np.array([np.linalg.norm(attention.attend(K, V, q, b)[0] - hard) for b in betas])


def first_close_beta(K, V, q, tol: float = 1e-3, largest: int = 100_000) -> int:
    """The smallest integer beta >= 1 at which the soft read is within ``tol`` of the hard
    lookup, tried one beta after the other."""
    for beta in range(1, largest + 1):
        if hard_gaps(K, V, q, [beta])[0] < tol:
            return beta
    raise ValueError("no beta up to the limit is close enough")


def scaled_gap(K, V, q, lengths, beta) -> float:
    """The largest difference between attention and the Gaussian smoother of bandwidth
    ``1/sqrt(beta)`` once key ``i`` is scaled by ``lengths[i]`` (D19 needs unit keys)."""
    from memkit import attention

    keys = np.asarray(K, dtype=float) * np.asarray(lengths, dtype=float)[:, None]
    o_att, _ = attention.attend(keys, V, q, beta)
    o_nw, _ = attention.nadaraya_watson(keys, V, q, attention.gaussian_kernel(1 / math.sqrt(beta)))
    return float(np.max(np.abs(o_att - o_nw)))


def hopfield_kinds(X, xi, betas, steps: int = 60) -> list[str]:
    """The fixed point the Hopfield retrieval from ``xi`` ends at, for each of ``betas``
    (memkit.attention, D8): the nearest of the mean of all patterns (``"global"``), the mean of
    the first two (``"metastable"``) and the first pattern (``"single"``)."""
    from memkit import attention

    X = np.asarray(X, dtype=float)
    candidates = {"global": X.mean(axis=0), "metastable": X[:2].mean(axis=0), "single": X[0]}
    found = []
    for beta in betas:
        end = attention.hopfield_retrieve(X, xi, beta, steps)[-1]
        found.append(min(candidates, key=lambda name: float(np.linalg.norm(end - candidates[name]))))
    return found
