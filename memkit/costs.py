"""What each memory costs: parameters (slow memory) against the cache (fast memory).

Chapter 8 counts a layer's parameters: ``4 d^2`` in the attention matrices
``W_Q, W_K, W_V, W_O`` for any number of heads and ``2 d (4d) = 8 d^2`` in an MLP
of hidden width ``4d``, ``12 d^2`` in all (embeddings, norms and biases
ignored). Chapter 9 prices the key-value cache at ``2 d L`` numbers per token,
so the cache outweighs the weights beyond ``n* = 12 d^2 L / (2 d L) = 6 d`` tokens
(``6 d / B`` for a batch of B sequences). For d = 4096, L = 32 and 16-bit
numbers: about 12.9 GB of weights, 0.52 MB of cache per token, n* = 24 576;
Exercise 4 (d = 8192, L = 80) gives n* = 49 152. A linear-attention state
instead holds a fixed ``d_v d_k`` numbers per head (Chapter 12).
"""

from __future__ import annotations

from fractions import Fraction

from .validation import as_count, as_positive

__all__ = [
    "attention_params",
    "mlp_params",
    "swiglu_params",
    "layer_params",
    "model_params",
    "cache_numbers_per_token",
    "param_bytes",
    "cache_bytes",
    "crossover_tokens",
    "state_numbers",
    "swiglu_hidden",
]


def attention_params(d: int) -> int:
    """Parameters of one attention sublayer: ``W_Q, W_K, W_V, W_O`` give ``4 d^2``.

    Chapter 8 (Derivation D18): ``3 h d d_h + d^2 = 4 d^2`` for ``d_h = d / h``,
    whatever the number of heads ``h``. ``d`` is the model width.
    """
    d = as_count(d, "d")
    return 4 * d * d


def mlp_params(d: int, hidden: int | None = None) -> int:
    """Parameters of a two-matrix MLP: ``2 d m``, with ``m = 4 d`` by default (``8 d^2``).

    Chapter 8, ``W_1`` (d x m) and ``W_2`` (m x d); ``d`` the width, ``hidden``
    the hidden size ``m`` (None for ``4 d``).
    """
    d = as_count(d, "d")
    m = 4 * d if hidden is None else as_count(hidden, "hidden")
    return 2 * d * m


def swiglu_params(d: int, hidden: int | None = None) -> int:
    """Parameters of a gated (SwiGLU) MLP: three matrices, ``3 d m``.

    Chapter 8 / Chapter 5 (gated linear units): with the default hidden size
    ``m = 8 d / 3`` the count is ``8 d^2``, the same as the plain MLP with
    ``m = 4 d``. ``d`` the width, ``hidden`` the hidden size (None for ``8d/3``).
    """
    d = as_count(d, "d")
    m = Fraction(8 * d, 3) if hidden is None else as_count(hidden, "hidden")
    return int(3 * d * m)


def layer_params(d: int) -> int:
    """Parameters of one transformer layer: ``4 d^2 + 8 d^2 = 12 d^2``.

    Chapter 8: attention plus an MLP of hidden width ``4 d``; the MLP holds two
    thirds. ``d`` is the model width.
    """
    return attention_params(d) + mlp_params(d)


def model_params(d: int, layers: int) -> int:
    """Parameters of ``L`` layers: ``12 d^2 L`` (embeddings ignored).

    Chapter 9. ``d`` the width, ``layers`` the number of layers ``L``.
    """
    return layer_params(d) * as_count(layers, "layers")


def cache_numbers_per_token(d: int, layers: int) -> int:
    """Numbers the key-value cache stores per token: ``2 d L``.

    Chapter 9: one key and one value of width ``d`` at each of ``L`` layers
    (no grouped-query sharing).
    """
    return 2 * as_count(d, "d") * as_count(layers, "layers")


def param_bytes(d: int, layers: int, bytes_per_number: float = 2) -> float:
    """Bytes of the weights: ``12 d^2 L b`` with ``b`` bytes per number (2 for 16-bit).

    Chapter 9: ``d = 4096``, ``L = 32``, ``b = 2`` gives about 12.9e9 bytes.
    """
    return model_params(d, layers) * as_positive(bytes_per_number, "bytes_per_number")


def cache_bytes(n_tokens: int, d: int, layers: int, bytes_per_number: float = 2,
                batch: int = 1) -> float:
    """Bytes of the key-value cache: ``2 d L n B b``.

    Chapter 9, for ``n_tokens`` tokens in each of ``batch`` sequences, ``b``
    bytes per number: ``d = 4096``, ``L = 32``, 16-bit gives 0.52e6 bytes per token.
    """
    n = as_count(n_tokens, "n_tokens", minimum=0)
    size = as_positive(bytes_per_number, "bytes_per_number")
    return cache_numbers_per_token(d, layers) * size * n * as_count(batch, "batch")


def crossover_tokens(d: int, layers: int = 32, batch: int = 1) -> float:
    """Context length at which the cache equals the weights: ``12 d^2 L / (2 d L B) = 6 d / B``.

    Chapter 9 and Exercise 4, both stored in the same precision; ``L`` cancels.
    ``d = 4096`` gives 24 576 tokens, ``d = 8192`` gives 49 152.
    """
    per_token = cache_numbers_per_token(d, layers) * as_count(batch, "batch")
    return model_params(d, layers) / per_token


def state_numbers(d_k: int, d_v: int, normaliser: bool = False) -> int:
    """Numbers in a linear-attention state: ``d_v d_k`` (plus ``d_k`` for the normaliser ``z``).

    Chapter 9 / Chapter 12: fixed whatever the number of tokens read, against the
    cache's ``2 d L`` per token. ``d_k`` the key (feature) dimension, ``d_v`` the
    value dimension.
    """
    d_k = as_count(d_k, "d_k")
    d_v = as_count(d_v, "d_v")
    return d_v * d_k + (d_k if normaliser else 0)


def swiglu_hidden(d: int, multiple_of: int = 256) -> int:
    """Whole hidden width of a SwiGLU MLP: ``8d/3`` truncated, then rounded up to ``multiple_of``.

    Chapter 5: ``8 d / 3`` is a fraction for most widths (``d = 4096`` gives
    10 922.67); the Llama reference code takes ``int(8 d / 3)`` and rounds it up to
    the next multiple of ``multiple_of`` (256), which gives 11 008 for Llama 7B
    (``d = 4096``). ``d`` the width; returns an int.
    """
    d = as_count(d, "d")
    step = as_count(multiple_of, "multiple_of")
    hidden = (8 * d) // 3
    return step * -(-hidden // step)
