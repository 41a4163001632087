"""Editing one fact in the slow memory: the rank-one edit with a key covariance.

Chapter 14 (Derivation D17): with ``W`` (d_v, d_k) the second matrix of an MLP
and ``C = E[k k^T]`` the uncentred second moment of the keys it sees, the
smallest change on typical keys that makes ``W' k* = v*`` is the rank-one update

    ``W' = W + (v* - W k*) (C^{-1} k*)^T / (k*^T C^{-1} k*)``,

the delta rule of Chapter 4 with the whitened key ``C^{-1} k*`` (the form of ROME).
"""

from __future__ import annotations

import numpy as np

from .validation import as_matrix, as_vector

__all__ = ["key_covariance", "rank_one_edit", "edit_cost"]


def key_covariance(keys):
    """Uncentred second-moment matrix of sample keys.

    Chapter 14, eq. ``C = E[k k^T] ~ (1/n) sum_i k_i k_i^T``. ``keys`` (n, d) with
    one key per row -> ``C`` (d, d). ``C`` is invertible only if the keys span
    R^d, which needs ``n >= d``.
    """
    keys = as_matrix(keys, "keys")
    return keys.T @ keys / keys.shape[0]


def _covariance(C, d):
    C = as_matrix(C, "C", shape=(d, d))
    if not np.allclose(C, C.T):
        raise ValueError("C must be symmetric (a second-moment matrix of keys)")
    eigenvalues = np.linalg.eigvalsh(C)
    if eigenvalues[0] <= d * np.finfo(float).eps * max(eigenvalues[-1], 0.0):
        raise ValueError(
            "C must be positive definite, its smallest eigenvalue is"
            f" {eigenvalues[0]:.3g} (estimate it from more keys than dimensions)"
        )
    return C


def rank_one_edit(W, k_star, v_star, C):
    """The smallest edit, on keys with second moment C, that makes W map k* to v*.

    Chapter 14 (D17), eq. ``W' = W + (v* - W k*) (C^{-1} k*)^T / (k*^T C^{-1} k*)``,
    the minimiser of ``0.5 tr(Delta C Delta^T)`` subject to ``(W + Delta) k* = v*``.
    ``W`` (d_v, d_k), ``k_star`` (d_k,), ``v_star`` (d_v,), ``C`` (d_k, d_k)
    symmetric positive definite -> ``W'`` (d_v, d_k).
    """
    W = as_matrix(W, "W")
    d_v, d_k = W.shape
    k_star = as_vector(k_star, "k_star", dim=d_k)
    v_star = as_vector(v_star, "v_star", dim=d_v)
    C = _covariance(C, d_k)
    whitened = np.linalg.solve(C, k_star)
    return W + np.outer(v_star - W @ k_star, whitened) / (k_star @ whitened)


def edit_cost(Delta, C):
    """Cost of a change to the memory, measured on typical keys.

    Chapter 14 (D17), eq. ``0.5 tr(Delta C Delta^T) = 0.5 E||Delta k||^2`` for keys
    with second moment ``C``. ``Delta`` (d_v, d_k), ``C`` (d_k, d_k) -> float.
    """
    Delta = as_matrix(Delta, "Delta")
    C = as_matrix(C, "C", shape=(Delta.shape[1], Delta.shape[1]))
    return 0.5 * float(np.trace(Delta @ C @ Delta.T))
