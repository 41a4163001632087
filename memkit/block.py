"""One transformer layer: two sublayers that read the residual stream and add back.

Chapter 8. A layer (block) holds an attention sublayer and an MLP sublayer; each
reads the residual stream ``x`` (one row per position), through a layer norm,
and adds its result back:

    pre-norm (most current models):   x <- x + Attn(LN x),   x <- x + MLP(LN x)
    post-norm (Vaswani et al. 2017):  x <- LN(x + Attn x),   x <- LN(x + MLP x)

Attention consults the fast memory (the other positions of the sequence); the
MLP consults the slow memory (its own weights, Chapter 5). Conventions: rows are
positions, ``X`` (n, d); ``W_Q, W_K, W_V, W_O`` (d, d) as in
``memkit.attention.multihead``; the MLP is ``ReLU(x W_1) W_2`` with ``W_1`` (d, m)
and ``W_2`` (m, d). The layer norm has no learned gain or shift here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .attention import multihead
from .validation import as_count, as_matrix, as_positive

__all__ = ["layer_norm", "mlp_sublayer", "BlockPass", "transformer_block"]


def layer_norm(X, eps: float = 1e-5) -> np.ndarray:
    """Layer normalisation of each row: ``(x - mean(x)) / sqrt(var(x) + eps)``.

    Chapter 8 and Appendix C, without the learned gain and shift. ``X`` (n, d),
    ``eps > 0``. Returns (n, d): every row has mean 0 and variance close to 1.
    """
    X = as_matrix(X, "X")
    eps = as_positive(eps, "eps")
    centred = X - X.mean(axis=1, keepdims=True)
    return centred / np.sqrt(np.mean(centred**2, axis=1, keepdims=True) + eps)


def mlp_sublayer(X, W_1, W_2) -> np.ndarray:
    """The MLP sublayer on every position: ``ReLU(X W_1) W_2``.

    Chapter 8 (Chapter 5's memory ``V^T sigma(K x)`` with ``K = W_1^T``,
    ``V = W_2``, applied row by row). ``X`` (n, d), ``W_1`` (d, m), ``W_2`` (m, d).
    Returns (n, d).
    """
    X = as_matrix(X, "X")
    W_1 = as_matrix(W_1, "W_1", shape=(X.shape[1], None))
    W_2 = as_matrix(W_2, "W_2", shape=(W_1.shape[1], X.shape[1]))
    return np.maximum(X @ W_1, 0.0) @ W_2


class BlockPass(NamedTuple):
    """What one layer does to the residual stream (all arrays (n, d))."""

    x_in: np.ndarray  # the stream arriving at the layer
    attn_out: np.ndarray  # what the attention sublayer adds
    x_mid: np.ndarray  # the stream between the two sublayers
    mlp_out: np.ndarray  # what the MLP sublayer adds
    x_out: np.ndarray  # the stream leaving the layer


def transformer_block(X, W_Q, W_K, W_V, W_O, W_1, W_2, h: int, causal: bool = True,
                      norm: str = "pre") -> BlockPass:
    """One transformer layer on the residual stream ``X``.

    Chapter 8. ``norm="pre"``: ``x_mid = x + Attn(LN x)``, ``x_out = x_mid + MLP(LN x_mid)``;
    ``norm="post"``: ``x_mid = LN(x + Attn x)``, ``x_out = LN(x_mid + MLP x_mid)``.
    ``Attn`` is ``memkit.attention.multihead`` with ``h`` heads (causal by default),
    ``MLP`` is :func:`mlp_sublayer`. ``X`` (n, d); ``W_Q, W_K, W_V, W_O`` (d, d);
    ``W_1`` (d, m), ``W_2`` (m, d). Returns a :class:`BlockPass`; in pre-norm
    ``x_out = x_in + attn_out + mlp_out`` exactly.
    """
    X = as_matrix(X, "X")
    h = as_count(h, "h")
    if norm not in ("pre", "post"):
        raise ValueError(f"norm must be 'pre' or 'post', got {norm!r}")
    if norm == "pre":
        attn_out = multihead(layer_norm(X), W_Q, W_K, W_V, W_O, h, causal=causal)[0]
        x_mid = X + attn_out
        mlp_out = mlp_sublayer(layer_norm(x_mid), W_1, W_2)
        x_out = x_mid + mlp_out
    else:
        attn_out = multihead(X, W_Q, W_K, W_V, W_O, h, causal=causal)[0]
        x_mid = layer_norm(X + attn_out)
        mlp_out = mlp_sublayer(x_mid, W_1, W_2)
        x_out = layer_norm(x_mid + mlp_out)
    return BlockPass(X, attn_out, x_mid, mlp_out, x_out)
