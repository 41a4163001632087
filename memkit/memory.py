"""Write rules for a linear memory, reading it, and the signal and interference of a recall.

Chapter 3 writes ``M`` pairs by adding outer products (Hebbian, ``W = V^T K``)
and measures how the other values leak into a recall; Chapter 4 writes more
carefully (least squares, ridge, the delta rule, recursive least squares with
Sherman-Morrison); Chapter 10 returns to the same ladder for fast memories.

Conventions: keys are the rows of ``K`` (M, d_k), values the rows of ``V``
(M, d_v), a memory is ``W`` (d_v, d_k) and a query ``q`` (d_k,).
"""

from __future__ import annotations

import functools
import numbers
from typing import NamedTuple

import numpy as np

from .linalg import projection
from .validation import as_count, as_matrix, as_positive, as_rng, as_vector, same_length

__all__ = [
    "random_unit_vectors",
    "hebbian_write",
    "least_squares_write",
    "ridge_write",
    "delta_step",
    "delta_write",
    "rls_write",
    "sherman_morrison",
    "read",
    "hebbian_recall_weights",
    "least_squares_recall_weights",
    "recall_split",
    "interference_ratio",
    "hebbian_interference_mc",
    "least_squares_interference_mc",
    "CarefulWriteErrors",
    "careful_write_errors",
]

# Largest number of floats one Monte Carlo chunk may hold (about 32 MB).
_CHUNK_FLOATS = 4_000_000


def _chunks(total, floats_per_draw):
    """Split ``total`` draws into chunk sizes that keep each chunk under the float budget."""
    size = max(1, _CHUNK_FLOATS // max(1, floats_per_draw))
    return [min(size, total - start) for start in range(0, total, size)]


def random_unit_vectors(n, d, seed, trials=None):
    """Random unit vectors, uniform on the sphere of R^d, stacked as rows.

    Chapter 3 (random keys and values), eq. ``k = g / ||g||`` with ``g ~ N(0, I_d)``.
    Returns shape (n, d), or (trials, n, d) when ``trials`` is given.
    """
    n = as_count(n, "n")
    d = as_count(d, "d")
    shape = (n, d) if trials is None else (as_count(trials, "trials"), n, d)
    g = as_rng(seed).standard_normal(shape)
    g /= np.linalg.norm(g, axis=-1, keepdims=True)
    return g


def _pairs(K, V):
    K = as_matrix(K, "K")
    V = as_matrix(V, "V")
    same_length(K, "K", V, "V")
    return K, V


def hebbian_write(K, V):
    """Hebbian (outer-product) write: one outer product per stored pair.

    Chapter 3, eq. ``W = sum_i v_i k_i^T = V^T K``. ``K`` (M, d_k), ``V`` (M, d_v)
    -> ``W`` (d_v, d_k).
    """
    K, V = _pairs(K, V)
    return V.T @ K


def _least_squares_transpose(K, V):
    """``W^T`` of the least-squares store for stacks of shape (..., M, d_k) and (..., M, d_v)."""
    M, d_k = K.shape[-2:]
    Kt = np.swapaxes(K, -1, -2)
    if M >= d_k:
        return np.linalg.solve(Kt @ K, Kt @ V)
    return Kt @ np.linalg.solve(K @ Kt, V)


def _hebbian_transpose(K, V):
    """``W^T = K^T V`` of the Hebbian store for stacks (..., M, d_k) and (..., M, d_v)."""
    return np.swapaxes(K, -1, -2) @ V


def _hebbian_signal(K):
    """Signal weights ``c_jj = ||k_j||^2`` for a stack (..., M, d_k)."""
    return np.sum(K**2, axis=-1)


def _least_squares_signal(K):
    """Signal weights ``P_jj`` for a stack (..., M, d_k): 1 when ``M <= d_k``."""
    M, d_k = K.shape[-2:]
    if M <= d_k:
        return np.ones(K.shape[:-1])
    Kt = np.swapaxes(K, -1, -2)
    whitened = np.swapaxes(np.linalg.solve(Kt @ K, Kt), -1, -2)
    return np.sum(K * whitened, axis=-1)


def least_squares_write(K, V):
    """Least-squares write, the best linear memory for the stored pairs.

    Chapter 4 (D3), ``min_W sum_i ||W k_i - v_i||^2``:
    for ``M >= d_k``, ``W = V^T K (K^T K)^{-1}``; for ``M <= d_k`` the
    minimum-norm exact store ``W = V^T (K K^T)^{-1} K``. ``K`` (M, d_k),
    ``V`` (M, d_v) -> ``W`` (d_v, d_k). Raises ``ValueError`` if the keys are
    linearly dependent (rank of ``K`` below ``min(M, d_k)``): then the inverse
    does not exist; use :func:`ridge_write`.
    """
    K, V = _pairs(K, V)
    needed = min(K.shape)
    found = np.linalg.matrix_rank(K)
    if found < needed:
        raise ValueError(
            f"K has linearly dependent keys (rank {found} < min(M, d_k) = {needed});"
            " the least-squares store needs independent keys, use ridge_write instead"
        )
    return _least_squares_transpose(K, V).T


def ridge_write(K, V, lam):
    """Ridge write: least squares with a penalty ``lam ||W||_F^2``.

    Chapter 4 / Appendix A, eq. ``W = V^T K (K^T K + lam I)^{-1}``, which exists
    for every ``lam > 0``. ``K`` (M, d_k), ``V`` (M, d_v) -> ``W`` (d_v, d_k).
    """
    K, V = _pairs(K, V)
    lam = as_positive(lam, "lam")
    gram = K.T @ K + lam * np.eye(K.shape[1])
    return np.linalg.solve(gram, K.T @ V).T


def delta_step(W, k, v, eta):
    """One delta-rule (Widrow-Hoff) step: write only the prediction error.

    Chapter 4, eq. ``W <- W + eta (v - W k) k^T``. ``W`` (d_v, d_k), ``k`` (d_k,),
    ``v`` (d_v,) -> new ``W`` (d_v, d_k). With a unit key and ``eta = 1`` the
    pair is stored exactly: afterwards ``W k = v``.
    """
    W = as_matrix(W, "W")
    k = as_vector(k, "k", dim=W.shape[1])
    v = as_vector(v, "v", dim=W.shape[0])
    eta = as_positive(eta, "eta")
    return W + eta * np.outer(v - W @ k, k)


def delta_write(K, V, eta=1.0, W0=None):
    """Write the pairs one at a time with the delta rule, in row order.

    Chapter 4 / Chapter 10, eq. ``W_t = W_{t-1} + eta (v_t - W_{t-1} k_t) k_t^T``.
    ``K`` (M, d_k), ``V`` (M, d_v), ``W0`` (d_v, d_k) or None for zeros
    -> final ``W`` (d_v, d_k).
    """
    K, V = _pairs(K, V)
    if W0 is None:
        W = np.zeros((V.shape[1], K.shape[1]))
    else:
        W = as_matrix(W0, "W0", shape=(V.shape[1], K.shape[1]))
    for k, v in zip(K, V):
        W = delta_step(W, k, v, eta)
    return W


def sherman_morrison(R, k):
    """Inverse after a rank-one change, without re-inverting.

    Appendix A / Chapter 4 (D5), eq. ``(R^{-1} + k k^T)^{-1} = R - R k k^T R / (1 + k^T R k)``.
    ``R`` (d, d) invertible (symmetric in the RLS use), ``k`` (d,) -> (d, d).
    """
    R = as_matrix(R, "R")
    if R.shape[0] != R.shape[1]:
        raise ValueError(f"R must be a square matrix of shape (d, d), got {R.shape}")
    k = as_vector(k, "k", dim=R.shape[0])
    Rk = R @ k
    kR = k @ R
    return R - np.outer(Rk, kR) / (1.0 + k @ Rk)


def rls_write(K, V, lam):
    """Recursive least squares: the delta rule with the preconditioned key ``R k``.

    Chapter 4 (D5): ``R_0 = I / lam``, ``W_0 = 0`` and for each pair
    ``W <- W + (v - W k) (R k)^T / (1 + k^T R k)``, ``R <- sherman_morrison(R, k)``.
    ``K`` (M, d_k), ``V`` (M, d_v). Returns ``(W, R)`` with ``W`` (d_v, d_k) equal
    to :func:`ridge_write` ``(K, V, lam)`` and ``R = (lam I + K^T K)^{-1}`` (d_k, d_k).
    """
    K, V = _pairs(K, V)
    lam = as_positive(lam, "lam")
    R = np.eye(K.shape[1]) / lam
    W = np.zeros((V.shape[1], K.shape[1]))
    for k, v in zip(K, V):
        Rk = R @ k
        W = W + np.outer(v - W @ k, Rk) / (1.0 + k @ Rk)
        R = sherman_morrison(R, k)
    return W, R


def read(W, q):
    """Read a linear memory with a query, or with a batch of queries.

    Chapter 3, eq. ``f(q) = W q = sum_i v_i (k_i^T q)``. ``W`` (d_v, d_k);
    ``q`` (d_k,) -> (d_v,), or ``q`` (n, d_k) with one query per row -> (n, d_v).
    """
    W = as_matrix(W, "W")
    if np.ndim(q) == 1:
        return W @ as_vector(q, "q", dim=W.shape[1])
    return as_matrix(q, "q", shape=(None, W.shape[1])) @ W.T


def hebbian_recall_weights(K):
    """Weights of the values in each recall from a Hebbian store.

    Chapter 3, eq. ``W k_j = sum_i c_ji v_i`` with ``c = K K^T`` (``c_ji = k_j^T k_i``).
    ``K`` (M, d_k) -> ``c`` (M, M); the signal weight of key j is ``c_jj = ||k_j||^2``.
    """
    K = as_matrix(K, "K")
    return K @ K.T


def least_squares_recall_weights(K):
    """Weights of the values in each recall from a least-squares store.

    Chapter 4 (D3), eq. ``K W^T = P V`` with ``P = K (K^T K)^{-1} K^T`` for
    ``M >= d_k`` and ``P = I`` (exact recall) for ``M <= d_k`` with independent keys.
    ``K`` (M, d_k) -> ``P`` (M, M).
    """
    return projection(as_matrix(K, "K"))


_SIGNAL_WEIGHTS = {"hebbian": _hebbian_signal, "least_squares": _least_squares_signal}


def _signal_weights(K, rule):
    if rule not in _SIGNAL_WEIGHTS:
        raise ValueError(f"rule must be one of {sorted(_SIGNAL_WEIGHTS)}, got {rule!r}")
    return _SIGNAL_WEIGHTS[rule](K)


def _store(K, V, W):
    K, V = _pairs(K, V)
    W = as_matrix(W, "W", shape=(V.shape[1], K.shape[1]))
    return K, V, W


def recall_split(K, V, W, j, rule="hebbian"):
    """Split the recall of stored key j into signal and interference.

    Chapter 3 (Hebbian) and Chapter 4 (least squares), eq.
    ``W k_j = c_jj v_j + sum_{i != j} c_ji v_i``: the signal is ``c_jj v_j`` with
    ``c_jj`` from ``rule`` ("hebbian": ``k_j^T k_j``; "least_squares": ``P_jj``),
    the interference is the measured recall ``W k_j`` minus the signal.
    ``K`` (M, d_k), ``V`` (M, d_v), ``W`` (d_v, d_k); returns two (d_v,) vectors.
    """
    K, V, W = _store(K, V, W)
    j = as_count(j, "j", minimum=0)
    if j >= K.shape[0]:
        raise ValueError(f"j must index a stored pair, 0 <= j < {K.shape[0]}, got {j}")
    signal = _signal_weights(K, rule)[j] * V[j]
    return signal, W @ K[j] - signal


def _ratios(V, recalls, signal_weights):
    """Interference-to-signal ratio of every recall; works on stacks (..., M, d)."""
    signal = signal_weights[..., None] * V
    return np.linalg.norm(recalls - signal, axis=-1) / np.linalg.norm(signal, axis=-1)


def interference_ratio(K, V, W, j=None, rule="hebbian"):
    """Measured interference-to-signal ratio of recalling stored key j (mean over j if None).

    Chapter 3-4, eq. ``||W k_j - c_jj v_j|| / ||c_jj v_j||`` with ``c_jj`` from
    ``rule`` (see :func:`recall_split`). Predictions for random unit keys and
    values: Hebbian ``sqrt((M - 1)/d_k)``, least squares ``sqrt(M/d_k - 1)``.
    ``K`` (M, d_k), ``V`` (M, d_v), ``W`` (d_v, d_k); returns a float.
    """
    K, V, W = _store(K, V, W)
    if j is not None:
        signal, interference = recall_split(K, V, W, j, rule)
        return float(np.linalg.norm(interference) / np.linalg.norm(signal))
    return float(np.mean(_ratios(V, K @ W.T, _signal_weights(K, rule))))


def _interference_mc(M, d_k, trials, seed, d_v, rule):
    """The mean ratio of :func:`hebbian_interference_mc` (``rule`` "hebbian") or
    :func:`least_squares_interference_mc` ("least_squares"). With an integer seed both rules
    are measured on the same draws and remembered (``_interference_of_seed``): the same
    arguments give the same numbers, and the other rule's call draws nothing."""
    M = as_count(M, "M", minimum=2)
    d_k = as_count(d_k, "d_k")
    trials = as_count(trials, "trials")
    d_v = as_count(d_v, "d_v")
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        return _interference_of_seed(M, d_k, trials, int(seed), d_v)[rule]
    return _interference_draws(M, d_k, trials, as_rng(seed), d_v, (rule,))[rule]


@functools.lru_cache(maxsize=256)
def _interference_of_seed(M, d_k, trials, seed, d_v):
    """Both rules' ratios (:func:`_interference_draws`) with the generator of an integer
    ``seed``, kept for the next call with the same arguments (the other rule, a check that
    measures a student's run again, a figure drawn twice); 512 floats at most."""
    return _interference_draws(M, d_k, trials, as_rng(seed), d_v, tuple(_INTERFERENCE_RULES))


def _interference_draws(M, d_k, trials, rng, d_v, rules):
    """{rule: ratio} for each of ``rules``: the mean over ``trials`` stores of ``M`` random
    unit pairs (keys in R^{d_k}, values in R^{d_v}, drawn from ``rng`` in chunks; every rule
    reads the same draws) and over their keys of the recall's interference-to-signal ratio."""
    totals = dict.fromkeys(rules, 0.0)
    for size in _chunks(trials, M * (d_k + d_v + 2 * M)):
        K = random_unit_vectors(M, d_k, rng, trials=size)
        V = random_unit_vectors(M, d_v, rng, trials=size)
        for rule in rules:
            write_transpose, signal_weights = _INTERFERENCE_RULES[rule]
            totals[rule] += _ratios(V, K @ write_transpose(K, V), signal_weights(K)).sum()
    return {rule: total / (trials * M) for rule, total in totals.items()}


_INTERFERENCE_RULES = {
    "hebbian": (_hebbian_transpose, _hebbian_signal),
    "least_squares": (_least_squares_transpose, _least_squares_signal),
}


def hebbian_interference_mc(M, d_k, trials, seed, d_v=64):
    """Monte Carlo interference-to-signal ratio of a Hebbian store, mean over trials and keys.

    Chapter 3, prediction ``sqrt((M - 1)/d_k)``. Each trial stores ``M`` random unit
    keys in R^{d_k} with independent random unit values in R^{d_v} as ``W = V^T K``,
    recalls every key and measures ``||W k_j - c_jj v_j|| / ||c_jj v_j||`` with
    ``c_jj = ||k_j||^2 = 1``. All trials are one batched computation.
    Exercise 1 (d_k=16, M=32): predicted 1.39, measured about 1.38.
    """
    return _interference_mc(M, d_k, trials, seed, d_v, "hebbian")


def least_squares_interference_mc(M, d_k, trials, seed, d_v=64):
    """Monte Carlo interference-to-signal ratio of a least-squares store, mean over trials and keys.

    Chapter 4 (D3), prediction ``sqrt(M/d_k - 1)`` for ``M >= d_k`` (0 below: exact
    recall). Same draws as :func:`hebbian_interference_mc`, stored with
    :func:`least_squares_write`, signal weight ``P_jj``. Exercise 1 (d_k=16, M=32):
    predicted 1.00, measured about 1.01.
    """
    return _interference_mc(M, d_k, trials, seed, d_v, "least_squares")


class CarefulWriteErrors(NamedTuple):
    """Result of :func:`careful_write_errors`, one entry per value of M."""

    M: np.ndarray
    hebbian: np.ndarray
    least_squares: np.ndarray


def careful_write_errors(M_values, d_k=16, draws=3, seed=0, d_v=16):
    """Mean relative recall error of the Hebbian and least-squares stores against M.

    Chapter 4 (figure careful-write), eq. ``mean_i ||W k_i - v_i|| / ||v_i||`` over
    the stored pairs and ``draws`` independent draws of random unit keys (R^{d_k})
    and values (R^{d_v}). ``M_values`` is a 1-D sequence of counts >= 1. Returns a
    :class:`CarefulWriteErrors` of arrays with one entry per M; the least-squares
    error is 0 (to rounding) for ``M <= d_k``.
    """
    M_arr = as_vector(M_values, "M_values")
    if M_arr.size == 0 or np.any(M_arr < 1) or np.any(M_arr != np.round(M_arr)):
        raise ValueError(
            f"M_values must be a non-empty 1-D sequence of integers >= 1, got {M_values!r}"
        )
    d_k = as_count(d_k, "d_k")
    draws = as_count(draws, "draws")
    d_v = as_count(d_v, "d_v")
    rng = as_rng(seed)
    errors = {"hebbian": [], "least_squares": []}
    for M in M_arr.astype(int):
        K = random_unit_vectors(M, d_k, rng, trials=draws)
        V = random_unit_vectors(M, d_v, rng, trials=draws)
        for name, write_transpose in (
            ("hebbian", _hebbian_transpose),
            ("least_squares", _least_squares_transpose),
        ):
            miss = np.linalg.norm(K @ write_transpose(K, V) - V, axis=-1)
            errors[name].append(float(np.mean(miss / np.linalg.norm(V, axis=-1))))
    return CarefulWriteErrors(
        M_arr.astype(int), np.array(errors["hebbian"]), np.array(errors["least_squares"])
    )
