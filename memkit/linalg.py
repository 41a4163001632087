"""The readings of a product, rank, the truncated SVD and its energy.

Chapter 1 reads a matrix-vector product by rows (detectors) and by columns
(contents); Chapter 2 reads a matrix-matrix product four ways (entry, row,
column, outer), counts rank as a number of outer products and keeps the first
terms of the SVD (Eckart-Young, Derivation D4); Appendix A defines the
orthogonal projection onto a column space and the whitening matrix.

Each reading is computed the way it reads, so that a figure can show the
intermediate pieces; all of them agree with ``A @ B`` to rounding.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .validation import as_count, as_matrix, as_positive, as_rng, as_vector

__all__ = [
    "matvec_by_rows",
    "matvec_by_columns",
    "matmul_entry",
    "matmul_row",
    "matmul_column",
    "matmul_outer",
    "outer_terms",
    "rank",
    "truncated_svd",
    "svd_energy",
    "discarded_energy",
    "projection",
    "whitening_matrix",
    "random_rank_r",
    "EckartYoungTrial",
    "eckart_young_trial",
    "structured_pattern",
]


def _matvec_inputs(W, x):
    W = as_matrix(W, "W")
    x = as_vector(x, "x", dim=W.shape[1])
    return W, x


def _matmul_inputs(A, B):
    A = as_matrix(A, "A")
    B = as_matrix(B, "B", shape=(A.shape[1], None))
    return A, B


def matvec_by_rows(W, x):
    """Row reading of ``y = W x``: each output is one row against the input.

    Chapter 1, eq. ``y_i = w_i^T x``. ``W`` has shape (m, n), ``x`` shape (n,).

    Returns ``(y, terms)``: ``y`` of shape (m,) and ``terms`` of shape (m, n)
    with ``terms[i, j] = W[i, j] x[j]``, the products that row ``i``'s dot
    product adds up (``y[i] = terms[i].sum()``).
    """
    W, x = _matvec_inputs(W, x)
    terms = W * x[None, :]
    return terms.sum(axis=1), terms


def matvec_by_columns(W, x):
    """Column reading of ``y = W x``: the output is a weighted sum of columns.

    Chapter 1, eq. ``y = sum_j x_j c_j``. ``W`` has shape (m, n), ``x`` shape (n,).

    Returns ``(y, scaled)``: ``y`` of shape (m,) and ``scaled`` of shape (n, m)
    whose row ``j`` is the scaled column ``x_j c_j`` (``y = scaled.sum(axis=0)``).
    """
    W, x = _matvec_inputs(W, x)
    scaled = x[:, None] * W.T
    return scaled.sum(axis=0), scaled


def matmul_entry(A, B):
    """Entry reading of ``C = A B``: every entry is one row of A against one column of B.

    Chapter 2, eq. ``C_ij = a_i^T b_j``. ``A`` (m, r), ``B`` (r, n) -> ``C`` (m, n).
    """
    A, B = _matmul_inputs(A, B)
    return np.array([[row @ col for col in B.T] for row in A]).reshape(A.shape[0], B.shape[1])


def matmul_row(A, B):
    """Row reading of ``C = A B``: row i of C mixes the rows of B, weighted by row i of A.

    Chapter 2, eq. ``C_i. = sum_k A_ik rho_k^T``. ``A`` (m, r), ``B`` (r, n) -> (m, n).
    """
    A, B = _matmul_inputs(A, B)
    return np.array([(weights[:, None] * B).sum(axis=0) for weights in A]).reshape(
        A.shape[0], B.shape[1]
    )


def matmul_column(A, B):
    """Column reading of ``C = A B``: column j of C mixes the columns of A.

    The weights of the mix are column j of B.

    Chapter 2, eq. ``C_.j = sum_k B_kj alpha_k``. ``A`` (m, r), ``B`` (r, n) -> (m, n).
    """
    A, B = _matmul_inputs(A, B)
    columns = [(A * weights[None, :]).sum(axis=1) for weights in B.T]
    return np.array(columns).T.reshape(A.shape[0], B.shape[1])


def outer_terms(A, B):
    """The rank-one terms of the outer reading, one per shared index k.

    Chapter 2, eq. ``C = sum_k alpha_k rho_k^T``. ``A`` (m, r), ``B`` (r, n);
    returns an array of shape (r, m, n) whose slice ``k`` is ``alpha_k rho_k^T``
    (column k of A times row k of B).
    """
    A, B = _matmul_inputs(A, B)
    return A.T[:, :, None] * B[:, None, :]


def matmul_outer(A, B):
    """Outer reading of ``C = A B``: a sum of r rank-one matrices.

    Chapter 2, eq. ``C = sum_{k=1}^r alpha_k rho_k^T``. ``A`` (m, r), ``B`` (r, n) -> (m, n).
    """
    return outer_terms(A, B).sum(axis=0)


def rank(A, tol=None):
    """Rank of ``A``: the number of singular values above ``tol``.

    Chapter 2 / Appendix A: rank = number of nonzero ``mu_k`` in
    ``A = sum_k mu_k u_k v_k^T`` = the fewest outer products that sum to ``A``.
    ``A`` has shape (m, n). The default ``tol`` is ``max(m, n) * eps * mu_1``.
    """
    A = as_matrix(A, "A")
    mu = np.linalg.svd(A, compute_uv=False)
    if tol is None:
        tol = max(A.shape) * np.finfo(float).eps * (mu[0] if mu.size else 0.0)
    else:
        tol = as_positive(tol, "tol", allow_zero=True)
    return int(np.count_nonzero(mu > tol))


def _check_r(r, A):
    r = as_count(r, "r", minimum=0)
    if r > min(A.shape):
        raise ValueError(
            f"r must be at most min(m, n) = {min(A.shape)} for A of shape {A.shape}, got {r}"
        )
    return r


def truncated_svd(A, r):
    """Best rank-r approximation of ``A`` in Frobenius norm: its first r SVD terms.

    Chapter 2, eq. ``A_r = sum_{k<=r} mu_k u_k v_k^T`` (Eckart-Young, D4).
    ``A`` has shape (m, n); returns an (m, n) matrix of rank at most r.
    """
    A = as_matrix(A, "A")
    r = _check_r(r, A)
    U, mu, Vt = np.linalg.svd(A, full_matrices=False)
    return (U[:, :r] * mu[:r]) @ Vt[:r]


def svd_energy(A):
    """Energy of each SVD term and the fraction kept by the first k terms.

    Chapter 2 / D20 (vi), eq. ``||A||_F^2 = sum_k mu_k^2``. ``A`` has shape (m, n);
    returns ``(energy, kept)``, both of shape (min(m, n),): ``energy[k] = mu_{k+1}^2``
    and ``kept[k]`` the fraction of ``||A||_F^2`` held by the first k+1 terms.
    """
    A = as_matrix(A, "A")
    energy = np.linalg.svd(A, compute_uv=False) ** 2
    total = energy.sum()
    if total == 0:
        raise ValueError("A must not be the zero matrix: its energy fractions are undefined")
    return energy, np.cumsum(energy) / total


def discarded_energy(A, r):
    """Energy left out by keeping r SVD terms, = squared error of the truncated SVD.

    Chapter 2 (Eckart-Young, D4), eq. ``||A - A_r||_F^2 = sum_{k>r} mu_k^2``.
    ``A`` has shape (m, n); returns a float.
    """
    A = as_matrix(A, "A")
    r = _check_r(r, A)
    mu = np.linalg.svd(A, compute_uv=False)
    return float(np.sum(mu[r:] ** 2))


def projection(A):
    """Orthogonal projection onto the column space of ``A``.

    Appendix A / Chapter 4, eq. ``P = A (A^T A)^{-1} A^T``, computed as
    ``A A^+`` with the pseudo-inverse so that it also holds when ``A`` has
    dependent columns (then ``P`` projects onto their span). ``A`` has shape
    (m, n); ``P`` has shape (m, m), is symmetric, idempotent and has trace rank(A).
    """
    A = as_matrix(A, "A")
    return A @ np.linalg.pinv(A)


def whitening_matrix(C):
    """Symmetric inverse square root ``C^{-1/2}`` of a second-moment matrix.

    Appendix A (whitening): if ``C = E[x x^T]``, the vectors ``C^{-1/2} x`` have
    second moment ``I``: uncorrelated and of unit size in every direction.
    Computed from the eigendecomposition ``C = U diag(lambda) U^T`` as
    ``U diag(lambda^{-1/2}) U^T``. ``C`` (d, d) symmetric positive definite
    -> (d, d) symmetric.
    """
    C = as_matrix(C, "C")
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"C must be a square matrix of shape (d, d), got {C.shape}")
    if not np.allclose(C, C.T):
        raise ValueError("C must be symmetric (a second-moment matrix)")
    eigenvalues, U = np.linalg.eigh(C)
    if eigenvalues[0] <= C.shape[0] * np.finfo(float).eps * max(eigenvalues[-1], 0.0):
        raise ValueError(
            f"C must be positive definite, its smallest eigenvalue is {eigenvalues[0]:.3g}"
        )
    return (U / np.sqrt(eigenvalues)) @ U.T


def random_rank_r(m, n, r, seed):
    """A random (m, n) matrix of rank r: the product of Gaussian (m, r) and (r, n) factors.

    Chapter 2 / Appendix A, eq. ``A = B C`` with ``B`` (m, r), ``C`` (r, n):
    a sum of r outer products, so rank at most r (exactly r with probability one
    when ``r <= min(m, n)``).
    """
    m = as_count(m, "m")
    n = as_count(n, "n")
    r = as_count(r, "r", minimum=0)
    rng = as_rng(seed)
    return rng.standard_normal((m, r)) @ rng.standard_normal((r, n))


class EckartYoungTrial(NamedTuple):
    """Result of :func:`eckart_young_trial`."""

    n_better: int  # competitors with a smaller error than the truncated SVD
    svd_error: float  # ||A - A_r||_F^2
    discarded: float  # sum_{k>r} mu_k^2 (equals svd_error)
    competitor_errors: np.ndarray  # (n_competitors,) their ||A - B||_F^2


def eckart_young_trial(A, r, n_competitors=300, seed=0):
    """Evidence for Eckart-Young: random rank-r competitors against the truncated SVD.

    Chapter 2 (D4), eq. ``min_{rank B <= r} ||A - B||_F^2 = sum_{k>r} mu_k^2``.
    ``A`` has shape (m, n). Each competitor is the best matrix with a random
    r-dimensional column space, ``B = Q Q^T A`` with ``Q`` (m, r) orthonormal,
    spanned by the top r left singular vectors plus Gaussian noise of a random
    scale between 1e-3 and 10 (so competitors range from nearly optimal to
    unrelated). All competitors are drawn and scored in one batch. Returns an
    :class:`EckartYoungTrial`; ``n_better`` should be 0.
    """
    A = as_matrix(A, "A")
    r = _check_r(r, A)
    n_competitors = as_count(n_competitors, "n_competitors")
    rng = as_rng(seed)
    m = A.shape[0]
    U = np.linalg.svd(A, full_matrices=False)[0][:, :r]
    scales = 10.0 ** rng.uniform(-3.0, 1.0, size=(n_competitors, 1, 1))
    bases = U[None] + scales * rng.standard_normal((n_competitors, m, r))
    Q = np.linalg.qr(bases)[0]
    competitors = Q @ (np.swapaxes(Q, 1, 2) @ A[None])
    errors = np.sum((A[None] - competitors) ** 2, axis=(1, 2))
    svd_error = float(np.sum((A - truncated_svd(A, r)) ** 2))
    slack = 1e-12 * max(float(np.sum(A**2)), 1.0)
    return EckartYoungTrial(
        n_better=int(np.count_nonzero(errors < svd_error - slack)),
        svd_error=svd_error,
        discarded=discarded_energy(A, r),
        competitor_errors=errors,
    )


def structured_pattern():
    """A fixed 8x8 matrix whose first three SVD terms hold most (> 90 %) of its energy.

    Chapter 2 (figure svd-truncation): three smooth outer products
    ``sum_{k=1}^3 w_k a_k b_k^T`` (sine and cosine profiles, weights 3, 2.2, 1.6)
    plus a small full-rank detail ``0.45 cos(pi i j / 4 + 0.3)``. Deterministic;
    shape (8, 8).
    """
    x = (np.arange(8) + 0.5) / 8
    left = [np.sin(np.pi * x), np.cos(np.pi * x), np.sin(2 * np.pi * x)]
    right = [np.full(8, 0.7), np.sin(2 * np.pi * x + 0.4), np.cos(3 * np.pi * x)]
    weights = [3.0, 2.2, 1.6]
    smooth = sum(w * np.outer(a, b) for w, a, b in zip(weights, left, right))
    i, j = np.indices((8, 8))
    return smooth + 0.45 * np.cos(np.pi * i * j / 4 + 0.3)
