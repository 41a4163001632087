"""Softmax attention read as a soft dictionary, and what follows from it.

Chapter 6 turns the hard lookup ``v_{argmax_i k_i^T q}`` into the soft read
``o = sum_i a_i v_i`` with ``a = softmax(beta K q)``, shows the same computation
as a Nadaraya-Watson kernel smoother (Derivation D19) and as one update of a
modern Hopfield network (Derivation D8). Chapter 7 computes the keys, values
and queries from tokens, shows that only ``W_Q W_K^T`` matters (Derivation D9)
and gives the four gradients of attention (Derivation D6) with their
policy-gradient reading (Derivation D16). Chapter 8 splits the layer into heads
whose outputs add (Derivation D18).

Conventions: keys are the rows of ``K`` (n, d_k), values the rows of ``V``
(n, d_v), queries the rows of ``Q`` (n_q, d_k) or a single ``q`` (d_k,); tokens
are the rows of ``X`` (n, d) and ``Q = X W_Q`` with ``W_Q`` of shape (d, d_k).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .validation import as_count, as_matrix, as_positive, as_vector, same_length

__all__ = [
    "softmax",
    "attend",
    "attention_matrix",
    "attention",
    "hard_lookup",
    "AttentionGradients",
    "attention_gradients",
    "softmax_jacobian",
    "nadaraya_watson",
    "gaussian_kernel",
    "exponential_kernel",
    "hopfield_energy",
    "hopfield_update",
    "hopfield_retrieve",
    "bilinear_scores",
    "gauge_transform",
    "multihead",
    "policy_gradient_logits",
    "KeyTraining",
    "train_keys",
    "ProjectionGradients",
    "projection_gradients",
]


def _softmax(l: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax without input checks; entries of -inf get weight 0."""
    shifted = l - np.max(l, axis=axis, keepdims=True)
    weights = np.exp(shifted)
    return weights / np.sum(weights, axis=axis, keepdims=True)


def _vector_or_matrix(x, name: str) -> np.ndarray:
    return as_vector(x, name) if np.ndim(x) <= 1 else as_matrix(x, name)


def softmax(l, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax ``a_i = e^{l_i} / sum_j e^{l_j}``.

    Chapter 6 (and Chapter 0). ``l`` is a vector (n,) or a matrix (m, n); the
    normalisation runs along ``axis`` (the last one by default, i.e. row-wise
    for a matrix). The largest logit is subtracted first, which leaves the
    result unchanged and keeps ``exp`` from overflowing. Returns an array of
    the shape of ``l`` with non-negative entries summing to one along ``axis``.
    """
    arr = _vector_or_matrix(l, "l")
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(
            f"axis must be in [{-arr.ndim}, {arr.ndim - 1}] for l of shape {arr.shape}"
        )
    return _softmax(arr, axis=axis)


def _store(K, V):
    K = as_matrix(K, "K")
    V = as_matrix(V, "V")
    same_length(K, "K", V, "V")
    return K, V


def attend(K, V, q, beta):
    """Soft dictionary read of one query: ``o = sum_i a_i v_i``, ``a = softmax(beta K q)``.

    Chapter 6, ``a_i = e^{beta k_i^T q} / sum_j e^{beta k_j^T q}``. ``K`` (n, d_k),
    ``V`` (n, d_v), ``q`` (d_k,), ``beta >= 0`` the inverse temperature
    (``beta = 0`` gives the plain mean of the values).

    Returns ``(o, a)``: the output (d_v,) and the weights (n,).
    """
    K, V = _store(K, V)
    q = as_vector(q, "q", dim=K.shape[1])
    beta = as_positive(beta, "beta", allow_zero=True)
    a = _softmax(beta * (K @ q))
    return V.T @ a, a


def _causal_logits(logits: np.ndarray) -> np.ndarray:
    """Set the entries above the diagonal to -inf (token t reads tokens i <= t)."""
    masked = logits.copy()
    masked[np.triu_indices(logits.shape[0], k=1)] = -np.inf
    return masked


def attention_matrix(Q, K, beta, causal: bool = False) -> np.ndarray:
    """Row-wise attention matrix ``A = softmax(beta Q K^T)``.

    Chapter 6, ``A_ij = e^{beta q_i^T k_j} / sum_l e^{beta q_i^T k_l}``. ``Q``
    (n_q, d_k), ``K`` (n, d_k), ``beta >= 0``. With ``causal=True`` (which needs
    ``n_q = n``) query ``i`` reads only keys ``j <= i``: ``A`` is lower
    triangular. Returns ``A`` of shape (n_q, n); every row sums to one.
    """
    K = as_matrix(K, "K")
    Q = as_matrix(Q, "Q", shape=(None, K.shape[1]))
    beta = as_positive(beta, "beta", allow_zero=True)
    logits = beta * (Q @ K.T)
    if causal:
        if Q.shape[0] != K.shape[0]:
            raise ValueError(
                "causal attention needs one query per key:"
                f" Q has {Q.shape[0]} rows, K has {K.shape[0]}"
            )
        logits = _causal_logits(logits)
    return _softmax(logits)


def attention(Q, K, V, beta, causal: bool = False) -> np.ndarray:
    """Attention of every query: ``O = A V`` with ``A = softmax(beta Q K^T)``.

    Chapter 6, row ``i`` of ``O`` is ``sum_j A_ij v_j``. ``Q`` (n_q, d_k), ``K``
    (n, d_k), ``V`` (n, d_v), ``beta >= 0``; ``causal`` as in
    ``attention_matrix``. Returns ``O`` of shape (n_q, d_v).
    """
    K, V = _store(K, V)
    return attention_matrix(Q, K, beta, causal=causal) @ V


def hard_lookup(K, V, q) -> np.ndarray:
    """Exact dictionary read: the value of the best-matching key.

    Chapter 6, ``o = v_{i*}`` with ``i* = argmax_i k_i^T q`` (the first index on
    a tie). ``K`` (n, d_k), ``V`` (n, d_v), ``q`` (d_k,). Returns ``v_{i*}`` (d_v,).
    This is the ``beta -> infinity`` limit of ``attend``.
    """
    K, V = _store(K, V)
    q = as_vector(q, "q", dim=K.shape[1])
    return V[np.argmax(K @ q)].copy()


class AttentionGradients(NamedTuple):
    """The four gradients of one attention read (Chapter 7, Derivation D6)."""

    dV: np.ndarray  # (n, d_v), row i = a_i g
    dl: np.ndarray  # (n,), a_i (v_i - o)^T g
    dK: np.ndarray  # (n, d_k), row i = beta dl_i q
    dq: np.ndarray  # (d_k,), beta sum_i dl_i k_i


def attention_gradients(K, V, q, beta, g) -> AttentionGradients:
    """Backward pass of ``o = sum_i a_i v_i``, ``a = softmax(l)``, ``l = beta K q``.

    Chapter 7 and Derivation D6, with ``g = dL/do`` the error signal from above:
    ``dL/dv_i = a_i g``, ``dL/dl_i = a_i (v_i - o)^T g``,
    ``dL/dk_i = beta (dL/dl_i) q`` and ``dL/dq = beta sum_i (dL/dl_i) k_i``.
    ``K`` (n, d_k), ``V`` (n, d_v), ``q`` (d_k,), ``beta >= 0``, ``g`` (d_v,).

    Returns ``AttentionGradients(dV, dl, dK, dq)`` with shapes (n, d_v), (n,),
    (n, d_k) and (d_k,).
    """
    K, V = _store(K, V)
    q = as_vector(q, "q", dim=K.shape[1])
    g = as_vector(g, "g", dim=V.shape[1])
    o, a = attend(K, V, q, beta)
    beta = float(beta)
    dl = a * ((V - o) @ g)
    return AttentionGradients(
        dV=np.outer(a, g),
        dl=dl,
        dK=beta * np.outer(dl, q),
        dq=beta * (K.T @ dl),
    )


def softmax_jacobian(l) -> np.ndarray:
    """Jacobian of the softmax: ``da_i/dl_j = a_i (delta_ij - a_j)``.

    Derivation D6, ``J = diag(a) - a a^T`` with ``a = softmax(l)``. ``l`` (n,).
    Returns the symmetric (n, n) matrix ``J``; its rows sum to zero.
    """
    a = softmax(as_vector(l, "l"))
    return np.diag(a) - np.outer(a, a)


Kernel = Callable[[np.ndarray, np.ndarray], np.ndarray]


def nadaraya_watson(K, V, q, kernel: Kernel):
    """Kernel smoother ``o = sum_i kappa(q, k_i) v_i / sum_j kappa(q, k_j)``.

    Chapter 6 (Nadaraya-Watson), Derivation D19. ``K`` (n, d_k), ``V`` (n, d_v),
    ``q`` (d_k,); ``kernel(K, q)`` returns the n non-negative similarities
    ``kappa(q, k_i)``, e.g. ``gaussian_kernel(h)`` or ``exponential_kernel(beta)``.
    With ``exponential_kernel(beta)`` this is exactly ``attend(K, V, q, beta)``.

    Returns ``(o, a)``: the estimate (d_v,) and the normalised weights (n,).
    """
    K, V = _store(K, V)
    q = as_vector(q, "q", dim=K.shape[1])
    if not callable(kernel):
        raise TypeError(f"kernel must be a callable kernel(K, q), got {type(kernel).__name__}")
    weights = as_vector(kernel(K, q), "kernel(K, q)", dim=K.shape[0])
    if np.any(weights < 0):
        raise ValueError("kernel(K, q) must return non-negative similarities")
    total = weights.sum()
    if total <= 0:
        raise ValueError("kernel(K, q) gave zero weight to every key (bandwidth too small?)")
    a = weights / total
    return V.T @ a, a


def gaussian_kernel(bandwidth: float) -> Kernel:
    """Gaussian kernel ``kappa(q, k) = exp(-||q - k||^2 / (2 h^2))`` with bandwidth ``h > 0``.

    Chapter 6, Derivation D19: for unit-norm keys, softmax attention at inverse
    temperature ``beta`` is the Gaussian smoother with ``h = 1 / sqrt(beta)``.
    Returns a callable ``kernel(K, q)`` giving the (n,) similarities of the rows
    of ``K`` (n, d_k) to ``q`` (d_k,).
    """
    h = as_positive(bandwidth, "bandwidth")

    def kernel(K: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.exp(-np.sum((K - q) ** 2, axis=1) / (2.0 * h * h))

    return kernel


def exponential_kernel(beta: float) -> Kernel:
    """Exponential kernel ``kappa(q, k) = exp(beta q^T k)``, ``beta >= 0``.

    Chapter 6: the Nadaraya-Watson smoother with this kernel is softmax
    attention. Returns a callable ``kernel(K, q)`` giving the (n,) similarities
    of the rows of ``K`` (n, d_k) to ``q`` (d_k,).
    """
    b = as_positive(beta, "beta", allow_zero=True)

    def kernel(K: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.exp(b * (K @ q))

    return kernel


def _patterns(X, xi, beta):
    X = as_matrix(X, "X")
    xi = as_vector(xi, "xi", dim=X.shape[1])
    beta = as_positive(beta, "beta")
    return X, xi, beta


def hopfield_energy(X, xi, beta) -> float:
    """Modern Hopfield energy ``E(xi) = -(1/beta) log sum_i e^{beta x_i^T xi} + xi^T xi / 2``.

    Chapter 6, Derivation D8 (Ramsauer et al. 2020, without the constant).
    ``X`` (M, d) holds the stored patterns as rows, ``xi`` (d,) is the state,
    ``beta > 0``. The log-sum-exp is computed stably. Returns a float.
    """
    X, xi, beta = _patterns(X, xi, beta)
    z = beta * (X @ xi)
    top = z.max()
    log_sum = top + np.log(np.sum(np.exp(z - top)))
    return float(-log_sum / beta + 0.5 * xi @ xi)


def hopfield_update(X, xi, beta) -> np.ndarray:
    """One Hopfield update ``xi <- X^T softmax(beta X xi)``.

    Chapter 6, Derivation D8: one attention read with keys = values = the
    patterns (rows of ``X``, shape (M, d)) and query ``xi`` (d,); ``beta > 0``.
    A fixed point of this map is a stationary point of ``hopfield_energy``.
    Returns the new state (d,).
    """
    X, xi, beta = _patterns(X, xi, beta)
    return X.T @ _softmax(beta * (X @ xi))


def hopfield_retrieve(X, xi, beta, steps: int) -> np.ndarray:
    """Iterate the Hopfield update ``steps`` times from ``xi``.

    Chapter 6, Derivation D8, ``xi_{t+1} = X^T softmax(beta X xi_t)``. ``X``
    (M, d), ``xi`` (d,), ``beta > 0``, ``steps >= 0``. Returns the trajectory of
    shape (steps + 1, d): row 0 is the start, the last row the retrieved state.
    """
    X, xi, beta = _patterns(X, xi, beta)
    steps = as_count(steps, "steps", minimum=0)
    trajectory = [xi]
    for _ in range(steps):
        trajectory.append(hopfield_update(X, trajectory[-1], beta))
    return np.array(trajectory)


def _projections(X, W_Q, W_K):
    X = as_matrix(X, "X")
    W_Q = as_matrix(W_Q, "W_Q", shape=(X.shape[1], None))
    W_K = as_matrix(W_K, "W_K", shape=(X.shape[1], W_Q.shape[1]))
    return X, W_Q, W_K


def bilinear_scores(X, W_Q, W_K, beta) -> np.ndarray:
    """Attention logits as a bilinear form of two tokens.

    Chapter 7, ``l_ij = beta q_i^T k_j = beta x_i^T W_Q W_K^T x_j``. ``X`` (n, d)
    holds the tokens as rows, ``W_Q`` and ``W_K`` (d, d_k), ``beta >= 0``.
    Returns the (n, n) logit matrix ``beta (X W_Q)(X W_K)^T``.
    """
    X, W_Q, W_K = _projections(X, W_Q, W_K)
    beta = as_positive(beta, "beta", allow_zero=True)
    return beta * (X @ W_Q) @ (X @ W_K).T


def gauge_transform(W_Q, W_K, G):
    """Reparametrise a head without changing any score: ``(W_Q G, W_K G^{-T})``.

    Chapter 7, Derivation D9: ``(W_Q G)(W_K G^{-T})^T = W_Q W_K^T`` for every
    invertible ``G``. ``W_Q`` and ``W_K`` (d, d_k), ``G`` (d_k, d_k) invertible.
    Returns the pair of new projections, each (d, d_k).
    """
    W_Q = as_matrix(W_Q, "W_Q")
    W_K = as_matrix(W_K, "W_K", shape=W_Q.shape)
    d_k = W_Q.shape[1]
    G = as_matrix(G, "G", shape=(d_k, d_k))
    try:
        W_K_new = np.linalg.solve(G, W_K.T).T  # W_K G^{-T} = (G^{-1} W_K^T)^T
    except np.linalg.LinAlgError as exc:
        raise ValueError("G must be invertible") from exc
    return W_Q @ G, W_K_new


def multihead(X, W_Q, W_K, W_V, W_O, h: int, beta=None, causal: bool = False):
    """Multi-head self-attention and its per-head terms.

    Chapter 8, Derivation D18: the columns of ``W_Q``, ``W_K``, ``W_V`` are split
    into ``h`` blocks of width ``d_h = d / h``; head ``m`` is
    ``H_m = softmax(beta Q_m K_m^T) V_m`` with ``Q_m = X W_Q^(m)`` and so on, and
    ``output = [H_1 ... H_h] W_O = sum_m H_m W_O^(m)`` where ``W_O^(m)`` is the
    m-th block of ``d_h`` rows of ``W_O``.

    ``X`` (n, d); ``W_Q``, ``W_K``, ``W_V``, ``W_O`` (d, d); ``h`` divides ``d``;
    ``beta`` defaults to ``1 / sqrt(d_h)``; ``causal`` masks future tokens.
    Returns ``(output, terms)``: ``output`` (n, d) and ``terms`` (h, n, d) with
    ``terms[m] = H_m W_O^(m)``, so that ``terms.sum(axis=0)`` equals ``output``.
    """
    X = as_matrix(X, "X")
    d = X.shape[1]
    W_Q = as_matrix(W_Q, "W_Q", shape=(d, d))
    W_K = as_matrix(W_K, "W_K", shape=(d, d))
    W_V = as_matrix(W_V, "W_V", shape=(d, d))
    W_O = as_matrix(W_O, "W_O", shape=(d, d))
    h = as_count(h, "h")
    if d % h:
        raise ValueError(f"h must divide the width d = {d}, got h = {h}")
    d_h = d // h
    beta = 1.0 / np.sqrt(d_h) if beta is None else as_positive(beta, "beta", allow_zero=True)
    heads = [
        attention(X @ W_Q[:, s], X @ W_K[:, s], X @ W_V[:, s], beta, causal=causal)
        for s in (slice(m * d_h, (m + 1) * d_h) for m in range(h))
    ]
    output = np.concatenate(heads, axis=1) @ W_O
    terms = np.stack([H @ W_O[m * d_h:(m + 1) * d_h] for m, H in enumerate(heads)])
    return output, terms


def policy_gradient_logits(a, r) -> np.ndarray:
    """Exact policy gradient of ``J = sum_i a_i r_i`` with respect to the logits.

    Derivation D16 (Chapter 7), ``dJ/dl_j = a_j (r_j - rbar)`` with the mean
    baseline ``rbar = sum_i a_i r_i``. ``a`` (n,) is a softmax distribution
    (non-negative, summing to one), ``r`` (n,) the rewards. With ``r_i = -v_i^T g``
    this is minus ``attention_gradients(...).dl``. Returns an (n,) vector.
    """
    a = as_vector(a, "a")
    r = as_vector(r, "r", dim=a.shape[0])
    if np.any(a < 0) or abs(a.sum() - 1.0) > 1e-9:
        raise ValueError("a must be a probability vector (non-negative entries summing to 1)")
    return a * (r - a @ r)


class KeyTraining(NamedTuple):
    """Trajectory of ``train_keys`` for steps 0..T."""

    keys: np.ndarray  # (T + 1, n, d), unit rows
    weights: np.ndarray  # (T + 1, n), the attention weights a
    outputs: np.ndarray  # (T + 1,), the read o


def _unit_rows(K: np.ndarray, name: str) -> np.ndarray:
    norms = np.linalg.norm(K, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(f"{name} must have no zero rows (each key is scaled to unit length)")
    return K / norms


def train_keys(K, v, q, target, beta, eta, steps: int) -> KeyTraining:
    """Gradient descent on the keys of a soft dictionary with scalar values.

    Chapter 7 (figure "key-training"). The read is ``o = sum_i a_i v_i`` with
    ``a = softmax(beta K q)`` and the loss ``L = (o - target)^2 / 2``, so
    ``g = o - target``, ``dL/dl_i = a_i (v_i - o) g`` and ``dL/dk_i = beta dL/dl_i q``.
    Each step is ``k_i <- k_i - eta dL/dk_i`` followed by rescaling every key to
    unit length, so the keys can only rotate; the key holding the target value
    turns toward ``q`` and the keys worse than the current answer turn away.

    ``K`` (n, d) initial keys (scaled to unit length first), ``v`` (n,) scalar
    values, ``q`` (d,) the fixed query, ``target`` a float, ``beta >= 0``,
    ``eta > 0``, ``steps >= 0``. Returns ``KeyTraining(keys, weights, outputs)``
    for steps 0..steps, of shapes (steps + 1, n, d), (steps + 1, n), (steps + 1,).
    """
    K = _unit_rows(as_matrix(K, "K"), "K")
    v = as_vector(v, "v", dim=K.shape[0])
    q = as_vector(q, "q", dim=K.shape[1])
    target = float(as_vector([target], "target")[0])
    beta = as_positive(beta, "beta", allow_zero=True)
    eta = as_positive(eta, "eta")
    steps = as_count(steps, "steps", minimum=0)
    keys, weights, outputs = [], [], []
    for step in range(steps + 1):
        o, a = attend(K, v[:, None], q, beta)
        keys.append(K)
        weights.append(a)
        outputs.append(o[0])
        if step < steps:
            grads = attention_gradients(K, v[:, None], q, beta, o - target)
            K = _unit_rows(K - eta * grads.dK, "K")
    return KeyTraining(np.array(keys), np.array(weights), np.array(outputs))


class ProjectionGradients(NamedTuple):
    """Gradients of one self-attention read with respect to the three projections."""

    dW_Q: np.ndarray  # (d, d_k), x_t (dL/dq)^T
    dW_K: np.ndarray  # (d, d_k), beta sum_i dL/dl_i x_i q^T
    dW_V: np.ndarray  # (d, d_v), sum_i x_i (a_i g)^T


def projection_gradients(X, W_Q, W_K, W_V, t: int, beta, g) -> ProjectionGradients:
    """What the gradient asks of ``W_Q``, ``W_K``, ``W_V`` when token ``t`` reads the tokens.

    Chapter 7 ("what is actually learned"): keys ``k_i = W_K^T x_i``, values
    ``v_i = W_V^T x_i``, query ``q = W_Q^T x_t``, ``o = sum_i a_i v_i`` with
    ``a = softmax(beta K q)`` and ``g = dL/do``. By the chain rule through the
    four gradients of :func:`attention_gradients`,
    ``dL/dW_V = sum_i x_i (a_i g)^T``, ``dL/dW_K = sum_i beta (dL/dl_i) x_i q^T`` and
    ``dL/dW_Q = x_t (dL/dq)^T``: each is a sum of outer products with a token as key.

    ``X`` (n, d) tokens as rows, ``W_Q`` and ``W_K`` (d, d_k), ``W_V`` (d, d_v),
    ``t`` the index of the reading token (0 <= t < n), ``beta >= 0``, ``g`` (d_v,).
    Returns ``ProjectionGradients(dW_Q, dW_K, dW_V)`` shaped like the projections.
    """
    X, W_Q, W_K = _projections(X, W_Q, W_K)
    W_V = as_matrix(W_V, "W_V", shape=(X.shape[1], None))
    t = as_count(t, "t", minimum=0)
    if t >= X.shape[0]:
        raise ValueError(f"t must index a row of X (0 <= t < {X.shape[0]}), got {t}")
    q = W_Q.T @ X[t]
    grads = attention_gradients(X @ W_K, X @ W_V, q, beta, g)
    return ProjectionGradients(
        dW_Q=np.outer(X[t], grads.dq),
        dW_K=X.T @ grads.dK,
        dW_V=X.T @ grads.dV,
    )
