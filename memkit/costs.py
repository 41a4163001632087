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
    "head_width",
    "state_work",
    "cache_work",
    "attention_params_by_heads",
    "grouped_query_params",
    "kv_cache_fraction",
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


# --- Chapter 9: grouped-query attention and the crossing length -------------------------

__all__ += ["gqa_cache_numbers_per_token", "gqa_crossover_tokens", "orthogonal_bound"]


def gqa_cache_numbers_per_token(d: int, layers: int, heads: int, kv_heads: int) -> Fraction:
    """Numbers cached per token when ``heads`` query heads share ``kv_heads`` key-value heads.

    Chapter 9 (grouped-query attention): each layer keeps ``kv_heads`` keys and values of
    width ``d / heads``, i.e. ``2 d L g / h`` numbers per token, the full ``2 d L`` of
    ``cache_numbers_per_token`` shrunk by the factor ``h / g``. ``kv_heads`` must divide
    ``heads``; ``kv_heads = heads`` is ordinary multi-head attention. Returns a Fraction.
    """
    return cache_numbers_per_token(d, layers) * kv_cache_fraction(heads, kv_heads)


def gqa_crossover_tokens(d: int, heads: int, kv_heads: int, layers: int = 32,
                         batch: int = 1) -> Fraction:
    """Context length at which a grouped-query cache equals the weights: ``6 d h / (g B)``.

    Chapter 9: ``12 d^2 L / (B 2 d L g / h)``; sharing the key-value heads moves the
    crossing ``n* = 6 d`` out by ``h / g``. ``d = 4096`` with 32 query heads sharing 8
    key-value heads gives 98 304 tokens. Returns a Fraction.
    """
    per_token = gqa_cache_numbers_per_token(d, layers, heads, kv_heads) * as_count(batch, "batch")
    return model_params(d, layers) / per_token


def orthogonal_bound(d_dot: int) -> int:
    """Most mutually orthogonal nonzero keys in R^{d_dot}: ``d_dot``.

    Chapter 9 (the fast weight programmer's capacity bound of Schlag et al., 2021): an
    additive outer-product memory with keys in R^{d_dot} recalls without crosstalk only
    while its keys are orthogonal, hence at most ``d_dot`` associations.
    """
    return as_count(d_dot, "d_dot")


def head_width(d: int, heads: int) -> int:
    """Key and value width of one head, ``d_k = d_v = d / h`` (Chapter 0's notation, Chapter 8).

    ``d`` the model width, ``heads`` the number of heads ``h``, which must divide ``d``:
    ``d = 4096``, ``h = 32`` gives 128.
    """
    d = as_count(d, "d")
    heads = as_count(heads, "heads")
    if d % heads:
        raise ValueError(f"heads must divide d: d = {d}, heads = {heads}")
    return d // heads


def state_work(n_tokens: int, d_k: int, d_v: int) -> int:
    """Multiply-adds a fixed ``d_v x d_k`` state spends on a sequence: ``n d_k d_v``.

    Chapter 12 (the row "fixed state" of the table of choices): each token costs one
    outer-product write and one read, ``O(d_k d_v)``, whatever the position, so ``n``
    tokens cost ``n d_k d_v`` (one of each, counted once). With one head of
    width 128 (``d = 4096``, 32 heads) and ``n = 4096``: ``2^26 = 6.7e7``, which is the
    reading that reproduces the monograph's ``6.7 x 10^7 at n = 4096``.
    """
    n = as_count(n_tokens, "n_tokens", minimum=0)
    return n * as_count(d_k, "d_k") * as_count(d_v, "d_v")


def cache_work(n_tokens: int, d_k: int, d_v: int) -> int:
    """Multiply-adds a growing cache spends reading a sequence causally: ``sum_t t (d_k + d_v)``.

    Chapter 12: token ``t`` compares its query with ``t`` keys (``t d_k``) and mixes
    ``t`` values (``t d_v``), ``O(n d)`` per token, so ``n (n + 1) / 2 (d_k + d_v)`` in all,
    against :func:`state_work`'s ``n d_k d_v``.
    """
    n = as_count(n_tokens, "n_tokens", minimum=0)
    return n * (n + 1) // 2 * (as_count(d_k, "d_k") + as_count(d_v, "d_v"))

def attention_params_by_heads(d: int, h: int) -> int:
    """Attention parameters counted head by head: ``3 h d (d/h) + d^2``.

    Chapter 8, Derivation D18: each of the ``h`` heads has ``W_Q^(m), W_K^(m),
    W_V^(m)`` of shape (d, d/h), and ``W_O`` is (d, d). ``h`` must divide ``d``.
    The count is ``4 d^2`` whatever ``h``.
    """
    d = as_count(d, "d")
    h = as_count(h, "h")
    if d % h:
        raise ValueError(f"h must divide the width d = {d}, got h = {h}")
    d_head = d // h
    return 3 * h * d * d_head + d * d


def grouped_query_params(d: int, h: int, kv_heads: int) -> int:
    """Attention parameters with grouped-query attention: ``2 d^2 + 2 d g (d/h)``.

    Chapter 8 (Ainslie et al. 2023): ``h`` query heads of width ``d/h`` share
    ``g = kv_heads`` key heads and value heads (``g`` divides ``h``); ``W_Q`` and
    ``W_O`` stay (d, d), ``W_K`` and ``W_V`` shrink to (d, g d/h). ``g = h`` is
    multi-head attention (``4 d^2``), ``g = 1`` multi-query attention.
    """
    d = as_count(d, "d")
    h = as_count(h, "h")
    g = as_count(kv_heads, "kv_heads")
    if d % h or h % g:
        raise ValueError(f"need h | d and kv_heads | h, got d = {d}, h = {h}, kv_heads = {g}")
    return 2 * d * d + 2 * d * g * (d // h)


def kv_cache_fraction(h: int, kv_heads: int) -> Fraction:
    """Share of the multi-head key-value cache that grouped-query attention keeps: ``g / h``.

    Chapter 8 (and Chapter 9 for the cache): the cache stores one key and one
    value per key-value head, so ``kv_heads`` of ``h`` heads keep ``g/h`` of it.
    """
    h = as_count(h, "h")
    g = as_count(kv_heads, "kv_heads")
    if h % g:
        raise ValueError(
            f"kv_heads must divide heads (each key-value head serves a whole group of query"
            f" heads), got heads = {h}, kv_heads = {g}"
        )
    return Fraction(g, h)


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
