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
    "step_size_limit",
    "one_step_exact_eta",
    "line_after_layers",
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


def step_size_limit(X) -> float:
    """Largest step size for which the in-context gradient steps converge: ``2 / lambda_max``.

    Chapter 11. The error of ``W_k`` against the least-squares fit is multiplied
    by ``I - eta X^T X`` at each step (each layer), so the steps converge when
    ``|1 - eta lambda| < 1`` for every eigenvalue ``lambda`` of ``X^T X``, i.e. for
    ``0 < eta < 2 / lambda_max(X^T X)``, and diverge beyond. ``X`` (n, d_x).
    Exercise 5 (x = 1, 2, 1): ``sum x_i^2 = 6``, threshold ``1/3``.
    """
    X = as_matrix(X, "X")
    top = float(np.linalg.eigvalsh(X.T @ X).max())
    if top <= 0:
        raise ValueError("X is all zeros: X^T X has no positive eigenvalue, any step is stable")
    return 2.0 / top


def one_step_exact_eta(X) -> float:
    """Step size for which one step from zero lands on least squares, in one dimension.

    Chapter 11 / Exercise 5: with one input dimension ``W_1 = eta sum_i y_i x_i`` and
    the least-squares ``w = sum_i x_i y_i / sum_i x_i^2``, so ``eta = 1 / sum_i x_i^2``
    (``1/6`` for x = 1, 2, 1), half the divergence threshold. ``X`` (n, 1).
    """
    X = as_matrix(X, "X", shape=(None, 1))
    total = float(np.sum(X**2))
    if total <= 0:
        raise ValueError("X is all zeros: no step size reaches the least-squares fit")
    return 1.0 / total


def line_after_layers(X, Y, eta, layers: int, grid) -> dict:
    """The fitted line after ``layers`` in-context steps, on a grid of inputs (1-D).

    Chapter 11, figure icl-gradient-steps. ``X`` (n, 1), ``Y`` (n, 1), ``eta > 0``,
    ``layers >= 0`` (0 is the model ``W_0 = 0``), ``grid`` (g,). The slope ``w_k``
    comes from :func:`gd_steps`; the query prediction of :func:`icl_layers` at the
    grid's last point is returned beside it to show the two agree. Returns a dict:
    ``w`` (slope after k steps), ``w_ls`` (least squares), ``line`` (g,) = w grid,
    ``line_ls`` (g,), ``layer_read`` (the stacked layers' prediction at grid[-1], or
    0.0 for no layer) and ``slopes`` (k + 1,), the slope after 0..k steps.
    """
    X = as_matrix(X, "X", shape=(None, 1))
    Y = as_matrix(Y, "Y", shape=(None, 1))
    same_length(X, "X", Y, "Y")
    layers = as_count(layers, "layers", minimum=0)
    grid = as_vector(grid, "grid")
    eta = as_positive(eta, "eta")
    w_ls = float(least_squares_fit(X, Y)[0, 0])
    if layers == 0:
        slopes = np.zeros(1)
        layer_read = 0.0
    else:
        slopes = np.concatenate([[0.0], gd_steps(X, Y, eta, layers)[:, 0, 0]])
        layer_read = float(icl_layers(X, Y, grid[-1:], eta, layers)[-1, 0])
    return {
        "w": float(slopes[-1]),
        "w_ls": w_ls,
        "line": slopes[-1] * grid,
        "line_ls": w_ls * grid,
        "layer_read": layer_read,
        "slopes": slopes,
    }
