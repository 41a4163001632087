"""The unified view: every layer as a state, a write and a read (Chapters 12 and 13).

Chapter 12 sorts the layers of the course by two questions, *does the state grow
with the sequence?* and *is the read linear in the query?*, and shows that a
growing state read linearly collapses to a fixed one (Derivation D10). Chapter 13
asks the same four questions (state, write, read, forget) of any layer. This
module holds those tables as data (for the figures unified-grid and
layer-questions and for the assignments), the collapse as a computation, and the
numbers of Chapter 12's table of choices, each computed from ``capacity`` and
``costs``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import capacity, costs
from .recurrent import polynomial_read, polynomial_state, tensor_power
from .validation import as_count, as_matrix, as_vector, same_length

__all__ = [
    "Layer",
    "LAYERS",
    "STATE_KINDS",
    "READ_KINDS",
    "grid_cell",
    "cell_members",
    "collapse_gaps",
    "feature_state_numbers",
    "truncated_feature_dim",
    "choice_numbers",
    "QUESTION_LAYERS",
    "layer_answers",
    "numbers_stored",
]

STATE_KINDS = ("fixed", "growing")
READ_KINDS = ("linear", "nonlinear")


class Layer(NamedTuple):
    """One row of Chapter 12's table: how the layer stores, writes and reads."""

    name: str
    label: str
    state: str
    write: str
    read: str
    state_kind: str  # "fixed" or "growing" with the sequence
    read_kind: str  # "linear" or "nonlinear" in the query


#: The eight rows of Chapter 12's table, in its order (LaTeX in state, write, read).
LAYERS = (
    Layer("linear_layer", "linear layer", r"$W\in\mathbb R^{d_v\times d_k}$",
          r"SGD during training: $W-\eta\bar y x^\top$", r"$Wq$", "fixed", "linear"),
    Layer("mlp", "MLP", r"keys $k_i$ (rows of $K$), values $v_i$ (columns of $V^\top$)",
          "SGD during training", r"$V^\top\sigma(Kq)$", "fixed", "nonlinear"),
    Layer("softmax_attention", "softmax attention", r"every pair $(k_i,v_i)$, $i\le t$",
          "append the pair", r"$\sum_i v_i\,\mathrm{softmax}_i(\beta k_i^\top q)$", "growing",
          "nonlinear"),
    Layer("linear_attention", "linear attention", r"$S\in\mathbb R^{d_v\times d_k}$",
          r"$S+vk^\top$", r"$Sq$", "fixed", "linear"),
    Layer("decay", "decayed / gated", r"$S$", r"$\gamma S+vk^\top$", r"$Sq$", "fixed", "linear"),
    Layer("delta_rule", "delta rule", r"$S$", r"$S+\eta(v-Sk)k^\top$", r"$Sq$", "fixed", "linear"),
    Layer("test_time_training", "test-time training", r"the weights of a model $f_S$",
          r"a gradient step on $f_S$", r"$f_S(q)$", "fixed", "nonlinear"),
    Layer("hopfield", "modern Hopfield", r"the stored patterns (rows of $X$)", "append the pattern",
          r"$X^\top\mathrm{softmax}(\beta Xq)$", "growing", "nonlinear"),
)

_BY_NAME = {layer.name: layer for layer in LAYERS}


def _layer(name: str) -> Layer:
    if name not in _BY_NAME:
        raise ValueError(f"name must be one of {sorted(_BY_NAME)}, got {name!r}")
    return _BY_NAME[name]


def grid_cell(name: str) -> tuple[str, str]:
    """The cell of Chapter 12's grid a layer sits in: ``(state kind, read kind)``.

    A linear test-time-training model (``f_S(q) = S q``) would be linear attention;
    the row here is the general one, a nonlinear model ``f_S``.
    """
    layer = _layer(name)
    return layer.state_kind, layer.read_kind


def cell_members(state_kind: str, read_kind: str) -> list[str]:
    """Names of the table's layers in one cell of the grid (empty for growing + linear).

    Chapter 12: no layer has a growing state and a linear read, because such a read
    collapses to a fixed state (Derivation D10).
    """
    if state_kind not in STATE_KINDS or read_kind not in READ_KINDS:
        raise ValueError(
            f"state_kind must be one of {STATE_KINDS} and read_kind one of {READ_KINDS},"
            f" got {state_kind!r}, {read_kind!r}"
        )
    return [layer.name for layer in LAYERS
            if (layer.state_kind, layer.read_kind) == (state_kind, read_kind)]


def collapse_gaps(K, V, q) -> dict:
    """The collapse of Derivation D10, measured on a stream of pairs.

    Chapter 12. ``K`` (n, d_k), ``V`` (n, d_v), ``q`` (d_k,). Returns a dict:
    ``linear_gap``, the largest difference between the growing read
    ``sum_i v_i (k_i^T q)`` and the fixed read ``S q`` with ``S = V^T K``;
    ``linear_shape`` = (d_v, d_k); ``poly_gap`` and ``poly_shape`` (d_v, d_k^2), the
    same for the degree-2 read ``sum_i v_i (k_i^T q)^2`` and its state of D10;
    ``growing_numbers`` = n (d_k + d_v), what a cache of the pairs holds.
    """
    K = as_matrix(K, "K")
    V = as_matrix(V, "V")
    same_length(K, "K", V, "V")
    q = as_vector(q, "q", dim=K.shape[1])
    growing = V.T @ (K @ q)  # touches every stored pair
    S = V.T @ K  # d_v x d_k, whatever n is
    S2 = polynomial_state(K, V, 2)
    return {
        "linear_gap": float(np.max(np.abs(growing - S @ q))),
        "linear_shape": S.shape,
        "poly_gap": float(np.max(np.abs(polynomial_read(K, V, q, 2) - S2 @ tensor_power(q, 2)))),
        "poly_shape": S2.shape,
        "growing_numbers": K.shape[0] * (K.shape[1] + V.shape[1]),
    }


def feature_state_numbers(D: int, d_v: int) -> int:
    """Numbers in the state of a feature-map attention: ``d_v D`` for ``S`` plus ``D`` for ``z``.

    Chapter 12: with ``phi`` mapping keys to ``R^D``, the numerator is ``S phi(q)`` with
    ``S = sum_i v_i phi(k_i)^T`` (d_v x D) and the normaliser ``z^T phi(q)`` with
    ``z = sum_i phi(k_i)`` (D numbers). The identity map (``D = d_k``) is linear attention.
    """
    return as_count(d_v, "d_v") * as_count(D, "D") + as_count(D, "D")


def truncated_feature_dim(d_k: int, P: int) -> int:
    """Dimension of the exponential kernel's features truncated at degree P: ``sum_{p<=P} d_k^p``.

    Derivation D15 (Chapter 12): every degree p adds a block of ``d_k^p`` coordinates,
    so the exact kernel (all degrees) has no finite feature map.
    """
    d_k = as_count(d_k, "d_k")
    P = as_count(P, "P", minimum=0)
    return sum(d_k**p for p in range(P + 1))


def choice_numbers(d: int = 64, beta: float = 8.0, d_model: int = 4096, heads: int = 32,
                   n_tokens: int = 4096, layers: int = 32) -> dict:
    """The numbers of Chapter 12's table "a number on each choice", computed.

    ``d`` and ``beta`` for the capacities (Chapters 5, 6), ``d_model``, ``heads``,
    ``layers`` and ``n_tokens`` for the costs (Chapter 9). Returns a dict:
    ``relu``, ``relu2``, ``relu3`` (``2d``, ``2d^2/3``, ``2d^3/15``: 128, 2731, 34953 at
    d = 64), ``softmax`` (``e^{2 beta (1 - beta/d)}``, 1.2e6), ``head_width``
    (``d_model / heads`` = 128), ``fixed_state_numbers`` (one head's ``d_k d_v``),
    ``fixed_state_work`` (``n d_k d_v`` = 6.7e7, the reading that reproduces the
    monograph's figure), ``full_width_state_numbers`` (``d_model^2``, a state as wide
    as the model) and ``cache_crossing`` (``6 d_model`` = 24 576 tokens).
    """
    width = costs.head_width(d_model, heads)
    return {
        "relu": capacity.relu_power_capacity(d, 1),
        "relu2": capacity.relu_power_capacity(d, 2),
        "relu3": capacity.relu_power_capacity(d, 3),
        "softmax": capacity.softmax_capacity(d, beta),
        "head_width": width,
        "fixed_state_numbers": costs.state_numbers(width, width),
        "fixed_state_work": costs.state_work(n_tokens, width, width),
        "full_width_state_numbers": costs.state_numbers(d_model, d_model),
        "cache_crossing": costs.crossover_tokens(d_model, layers),
    }


#: The seven layers of Chapter 13's figure, with (state, write, read, forget) in words.
QUESTION_LAYERS = {
    "linear layer": (
        "one d_v x d_k matrix W, fixed in size",
        "training: SGD adds -eta ybar x^T, one outer product a step",
        "linear: W q",
        "nothing at test time; training overwrites slowly",
    ),
    "MLP": (
        "m key rows and m value columns, fixed in size",
        "training: SGD on both matrices",
        "nonlinear: V^T sigma(K q), sigma picks the matching keys",
        "nothing at test time; facts fade as training moves on",
    ),
    "softmax attention": (
        "every (k_i, v_i) of the sequence: it grows",
        "the forward pass appends one pair per token",
        "nonlinear: softmax weights, exponential selectivity",
        "nothing until the sequence ends; weights compete per query",
    ),
    "linear attention": (
        "S, d_v x d_k, fixed in size",
        "the forward pass adds v k^T",
        "linear: S q",
        "never by rule, so old pairs blur into interference",
    ),
    "gated / decay": (
        "S, d_v x d_k, fixed in size",
        "the forward pass: gamma S + v k^T",
        "linear: S q",
        "exponentially with age, at the gate's rate gamma",
    ),
    "delta rule": (
        "S, d_v x d_k, fixed in size",
        "the forward pass corrects: S + eta (v - S k) k^T",
        "linear: S q",
        "by overwriting the value stored at a repeated key",
    ),
    "test-time training": (
        "the weights of a small model f_S, fixed in size",
        "the forward pass takes a gradient step on ||f_S(k) - v||^2",
        "as nonlinear as f_S: f_S(q)",
        "whatever the learning rule trades away to fit new pairs",
    ),
}


def layer_answers(label: str) -> dict:
    """The four answers (state, write, read, forget) for one of Chapter 13's seven layers."""
    if label not in QUESTION_LAYERS:
        raise ValueError(f"label must be one of {list(QUESTION_LAYERS)}, got {label!r}")
    return dict(zip(("state", "write", "read", "forget"), QUESTION_LAYERS[label]))


def numbers_stored(label: str, n_tokens, d: int = 64) -> np.ndarray:
    """Numbers a layer stores after reading ``n_tokens`` tokens, keys and values of width ``d``.

    Chapter 13's figure: the fixed layers hold ``d^2`` (a ``d x d`` matrix; the MLP
    ``2 d m`` with ``m = 4d``), whatever n is; softmax attention holds ``2 d n`` (a key
    and a value per token). ``n_tokens`` an int or an array; returns an array of the
    same shape.
    """
    if label not in QUESTION_LAYERS:
        raise ValueError(f"label must be one of {list(QUESTION_LAYERS)}, got {label!r}")
    d = as_count(d, "d")
    n = np.asarray(n_tokens, dtype=float)
    if np.any(n < 0):
        raise ValueError("n_tokens must be non-negative")
    if label == "softmax attention":
        return 2.0 * d * n
    if label == "MLP":
        return np.full_like(n, float(costs.mlp_params(d)))
    return np.full_like(n, float(costs.state_numbers(d, d)))
