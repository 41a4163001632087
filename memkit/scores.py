"""Score functions and the MLP read as a nonlinear memory.

Chapter 5: a two-layer MLP ``W_2 sigma(W_1 x)`` is the outer-product memory of
Chapter 3 with a score function applied to each similarity,
``f(x) = V^T sigma(K x)``, where the keys are the rows of ``W_1`` and the values
the columns of ``W_2``. The score sets how selective the read is: identity
(linear memory), ReLU and its powers, the exponential of softmax attention
(Chapter 6). A squared-ReLU memory is a gated linear unit whose gate shares the
key matrix; SwiGLU gives the gate its own weights and a smooth activation.

Conventions: keys ``K`` (m, d) as rows, values ``V`` (m, d_out) as rows, input
``x`` (d,). Score functions act entrywise on an array of any shape.
"""

from __future__ import annotations

import functools

import numpy as np

from .validation import as_count, as_matrix, as_positive, as_vector

__all__ = [
    "identity",
    "relu",
    "relu_power",
    "exponential",
    "swish",
    "SCORES",
    "score",
    "mlp_read",
    "mlp_forward",
    "glu_read",
    "squared_relu_as_glu",
]


def _scores(s):
    """``s`` as a float array of any shape (a scalar stays 0-d); rejects non-numbers and NaN."""
    try:
        arr = np.asarray(s, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"s must be a number or a numeric array, got {type(s).__name__}") from exc
    if np.any(np.isnan(arr)):
        raise ValueError("s contains NaN entries")
    return arr


def identity(s):
    """Linear score, the plain outer-product memory of Chapter 3.

    Chapter 5, eq. ``sigma(s) = s``. Entrywise; returns an array of the shape of ``s``.
    """
    return _scores(s).copy()


def relu(s):
    """ReLU score: drops negative similarities.

    Chapter 5, eq. ``sigma(s) = max(s, 0)``. Entrywise; shape of ``s``.
    """
    return np.maximum(_scores(s), 0.0)


def relu_power(s, p):
    """Power of the ReLU: suppresses small similarities (capacity of order d^p).

    Chapter 5, eq. ``sigma(s) = max(s, 0)^p`` with integer ``p >= 1``. Entrywise;
    shape of ``s``.
    """
    p = as_count(p, "p")
    return relu(s) ** p


def exponential(s, beta):
    """Exponential score of softmax attention, before normalisation.

    Chapter 6, eq. ``sigma(s) = exp(beta s)`` with inverse temperature ``beta >= 0``.
    Entrywise; shape of ``s``.
    """
    beta = as_positive(beta, "beta", allow_zero=True)
    return np.exp(beta * _scores(s))


def swish(s):
    """Swish (SiLU) activation of the SwiGLU gate.

    Chapter 5, eq. ``swish(s) = s / (1 + exp(-s))``, computed with
    ``1 / (1 + exp(-s)) = (1 + tanh(s/2)) / 2`` so that it never overflows.
    Entrywise; shape of ``s``.
    """
    s = _scores(s)
    return s * 0.5 * (1.0 + np.tanh(0.5 * s))


SCORES = {
    "identity": identity,
    "relu": relu,
    "relu_power": relu_power,
    "exponential": exponential,
    "swish": swish,
}
"""Registry of the score functions by name; parameters are bound with :func:`score`."""


def score(name, **params):
    """The score function ``name`` of :data:`SCORES` with its parameters bound.

    Chapter 5-6, e.g. ``score("relu_power", p=2)`` is ``s -> max(s, 0)^2`` and
    ``score("exponential", beta=8)`` is ``s -> exp(8 s)``. Returns a callable
    of one array argument; the parameters are checked now, not at the first call.
    """
    if name not in SCORES:
        raise ValueError(f"name must be one of {sorted(SCORES)}, got {name!r}")
    function = SCORES[name]
    bound = functools.partial(function, **params)
    try:
        bound(0.0)
    except TypeError as exc:
        raise TypeError(f"wrong parameters {params} for score {name!r}: {exc}") from exc
    return bound


def _check_sigma(sigma, name="sigma"):
    if not callable(sigma):
        raise TypeError(f"{name} must be a callable score function, got {type(sigma).__name__}")
    return sigma


def mlp_read(K, V, x, sigma):
    """Read the MLP as a key-value memory with a score function.

    Chapter 5, eq. ``f(x) = sum_i v_i sigma(k_i^T x) = V^T sigma(K x)``.
    ``K`` (m, d), ``V`` (m, d_out), ``x`` (d,), ``sigma`` a callable score.
    Returns ``(output, weights)``: output (d_out,) and the hidden weights
    ``sigma(K x)`` (m,), one per stored value.
    """
    K = as_matrix(K, "K")
    V = as_matrix(V, "V", shape=(K.shape[0], None))
    x = as_vector(x, "x", dim=K.shape[1])
    weights = np.asarray(_check_sigma(sigma)(K @ x), dtype=float)
    return V.T @ weights, weights


def mlp_forward(W1, W2, x, sigma):
    """The two-layer MLP as it is usually written.

    Chapter 5, eq. ``f(x) = W_2 sigma(W_1 x)``. ``W1`` (m, d), ``W2`` (d_out, m),
    ``x`` (d,) -> (d_out,). Equals :func:`mlp_read` with ``K = W1`` and ``V = W2^T``.
    """
    W1 = as_matrix(W1, "W1")
    W2 = as_matrix(W2, "W2", shape=(None, W1.shape[0]))
    x = as_vector(x, "x", dim=W1.shape[1])
    return W2 @ np.asarray(_check_sigma(sigma)(W1 @ x), dtype=float)


def glu_read(G, K, V, x, act):
    """Gated linear unit read: a gate decides how much of each linear similarity passes.

    Chapter 5, eq. ``f(x) = V^T (act(G x) * K x)`` (SwiGLU when ``act = swish``).
    ``G`` (m, d) gate keys, ``K`` (m, d) keys, ``V`` (m, d_out), ``x`` (d,).
    Returns ``(output, weights)``: output (d_out,) and the gated weights (m,).
    """
    G = as_matrix(G, "G")
    K = as_matrix(K, "K", shape=G.shape)
    V = as_matrix(V, "V", shape=(K.shape[0], None))
    x = as_vector(x, "x", dim=K.shape[1])
    weights = np.asarray(_check_sigma(act, "act")(G @ x), dtype=float) * (K @ x)
    return V.T @ weights, weights


def squared_relu_as_glu(K, V, x):
    """A squared-ReLU memory read as a GLU whose gate shares the key matrix.

    Chapter 5, eq. ``ReLU(s)^2 = ReLU(s) * s``, hence
    ``V^T ReLU(K x)^2 = V^T (ReLU(K x) * K x)``. ``K`` (m, d), ``V`` (m, d_out),
    ``x`` (d,). Returns ``(output, weights)`` as :func:`glu_read` with ``G = K``
    and ``act = relu``; equal to ``mlp_read(K, V, x, score("relu_power", p=2))``.
    """
    return glu_read(K, K, V, x, relu)
