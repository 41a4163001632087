"""In-context regression: a linear-attention layer is one gradient step.

Chapter 11 (Derivations D11, D12). A prompt holds pairs ``(x_i, y_i)`` and a
query ``x_q``; a linear model ``W`` predicts ``W x_q``. One gradient step from
``W_0 = 0`` on ``L(W) = sum_i ||W x_i - y_i||^2 / 2`` gives
``W_1 x_q = eta sum_i y_i (x_i^T x_q)``: a linear-attention read with keys
``x_i``, values ``y_i`` and query ``x_q``. A layer that reads the residual values
``y_i - W_{k-1} x_i`` takes the next step, so k layers are k steps, and they
converge to the least-squares fit (Exercise 5).

Conventions: the inputs are the rows of ``X`` (n, d_x), the labels the rows of
``Y`` (n, d_y), a model ``W`` has shape (d_y, d_x) and a query ``x_q`` (d_x,).
"""

from __future__ import annotations

import numpy as np

from .memory import least_squares_write
from .recurrent import linear_attention_parallel
from .validation import as_count, as_matrix, as_positive, as_vector, same_length

__all__ = [
    "gd_steps",
    "linear_attention_readout",
    "icl_layers",
    "least_squares_fit",
]


def _examples(X, Y):
    X = as_matrix(X, "X")
    Y = as_matrix(Y, "Y")
    same_length(X, "X", Y, "Y")
    return X, Y


def gd_steps(X, Y, eta, k: int, W0=None) -> np.ndarray:
    """k steps of gradient descent on the in-context regression loss.

    Chapter 11, Derivation D11: ``L(W) = sum_i ||W x_i - y_i||^2 / 2`` and
    ``W_t = W_{t-1} - eta sum_i (W_{t-1} x_i - y_i) x_i^T``. ``X`` (n, d_x),
    ``Y`` (n, d_y), ``eta > 0``, ``k >= 1``, ``W0`` (d_y, d_x) or None for zeros.
    Returns ``W_1..W_k`` stacked as (k, d_y, d_x).
    """
    X, Y = _examples(X, Y)
    eta = as_positive(eta, "eta")
    k = as_count(k, "k")
    shape = (Y.shape[1], X.shape[1])
    W = np.zeros(shape) if W0 is None else as_matrix(W0, "W0", shape=shape)
    weights = []
    for _ in range(k):
        W = W - eta * (X @ W.T - Y).T @ X
        weights.append(W)
    return np.array(weights)


def linear_attention_readout(X, Y, x_q, eta) -> np.ndarray:
    """One linear-attention read over the prompt: ``y_hat = eta sum_i y_i (x_i^T x_q)``.

    Chapter 11, Derivation D11: keys ``x_i``, values ``y_i``, query ``x_q``,
    identity score, weight ``eta``; it equals ``W_1 x_q`` of ``gd_steps`` from
    zero. ``X`` (n, d_x), ``Y`` (n, d_y), ``x_q`` (d_x,), ``eta > 0``.
    Returns ``y_hat`` (d_y,).
    """
    X, Y = _examples(X, Y)
    x_q = as_vector(x_q, "x_q", dim=X.shape[1])
    eta = as_positive(eta, "eta")
    return eta * linear_attention_parallel(x_q[None, :], X, Y, causal=False)[0]


def icl_layers(X, Y, x_q, eta, layers: int) -> np.ndarray:
    """Predictions of a stack of linear-attention layers over residual values.

    Chapter 11, Derivation D12. Every token (the n examples and the query)
    carries a prediction, zero at the start. Layer ``k`` reads the residual
    values ``r_i = y_i - yhat_i`` of the examples with keys ``x_i`` and adds
    ``eta sum_i r_i (x_i^T x)`` to the prediction of every token ``x`` (a
    non-causal linear attention), so after layer k the query holds ``W_k x_q``
    of ``gd_steps``. ``X`` (n, d_x), ``Y`` (n, d_y), ``x_q`` (d_x,), ``eta > 0``,
    ``layers >= 1``. Returns the query's prediction after each layer, (layers, d_y).
    """
    X, Y = _examples(X, Y)
    x_q = as_vector(x_q, "x_q", dim=X.shape[1])
    eta = as_positive(eta, "eta")
    layers = as_count(layers, "layers")
    tokens = np.vstack([X, x_q])
    predictions = np.zeros((tokens.shape[0], Y.shape[1]))
    history = []
    for _ in range(layers):
        residuals = Y - predictions[:-1]
        read = linear_attention_parallel(tokens, X, residuals, causal=False)
        predictions = predictions + eta * read
        history.append(predictions[-1])
    return np.array(history)


def least_squares_fit(X, Y) -> np.ndarray:
    """The least-squares model that gradient descent converges to.

    Chapter 11 (and Chapter 4, D3), ``W = argmin_W sum_i ||W x_i - y_i||^2``,
    ``W = Y^T X (X^T X)^{-1}`` for n >= d_x independent inputs (the minimum-norm
    exact fit for n < d_x). ``X`` (n, d_x), ``Y`` (n, d_y). Returns ``W``
    (d_y, d_x). Exercise 5: pairs (1,1), (2,2), (1,3) give ``W = 8/6``.
    """
    X, Y = _examples(X, Y)
    try:
        return least_squares_write(X, Y)
    except ValueError as exc:
        raise ValueError(
            "X has linearly dependent inputs (rank below min(n, d_x));"
            " the least-squares fit is not unique"
        ) from exc
