"""The fast memory as a recurrent state: linear attention and its update rules.

Chapter 9 drops the softmax: causal attention with the identity score reads
``o_t = sum_{i<=t} v_i (k_i^T q_t) = S_t q_t`` with the state
``S_t = S_{t-1} + v_t k_t^T`` (Derivation D10), optionally through a feature
map ``phi`` and with the normaliser ``z_t = z_{t-1} + phi(k_t)`` of Katharopoulos
et al. A cache grows with the tokens read; a state does not. Chapter 10 replaces
the additive write by decay, delta, gated delta and test-time-training updates,
and measures what each one forgets. Chapter 12 (Derivations D10, D15) shows that
a polynomial read is still a fixed state, of size d_v x d_k^p, while the
exponential kernel of softmax needs a feature map of infinite dimension.

Conventions: keys are the rows of ``K`` (n, d_k), values the rows of ``V``
(n, d_v), queries the rows of ``Q`` (n, d_k); a state ``S`` has shape (d_v, d_k)
(or (d_v, D) after a feature map of dimension D).
"""

from __future__ import annotations

from collections.abc import Callable
from math import factorial
from typing import NamedTuple

import numpy as np

from .attention import _vector_or_matrix, attention
from .memory import random_unit_vectors
from .validation import as_count, as_matrix, as_positive, as_rng, as_vector, same_length

__all__ = [
    "elu_plus_one",
    "linear_attention_parallel",
    "linear_attention_recurrent",
    "add_update",
    "decay_update",
    "delta_update",
    "gated_delta_update",
    "ttt_update",
    "RULES",
    "run_updates",
    "recall_errors_by_age",
    "CacheVsState",
    "cache_vs_state_errors",
    "tensor_power",
    "polynomial_state",
    "polynomial_read",
    "exp_kernel_features",
]

FeatureMap = Callable[[np.ndarray], np.ndarray]


def elu_plus_one(x) -> np.ndarray:
    """Positive feature map ``phi(x) = elu(x) + 1`` of Katharopoulos et al. (2020).

    Chapter 9, entrywise ``phi(x) = x + 1`` for ``x > 0`` and ``e^x`` otherwise:
    positive, so the normaliser stays positive, and with a non-zero gradient
    everywhere. ``x`` is a vector (d,) or a matrix (n, d); returns the same shape.
    """
    arr = _vector_or_matrix(x, "x")
    return np.where(arr > 0, arr + 1.0, np.exp(np.minimum(arr, 0.0)))


def _linear_attention_inputs(Q, K, V, causal, feature_map):
    K = as_matrix(K, "K")
    V = as_matrix(V, "V")
    same_length(K, "K", V, "V")
    Q = as_matrix(Q, "Q", shape=(None, K.shape[1]))
    if causal and Q.shape[0] != K.shape[0]:
        raise ValueError(
            f"causal linear attention needs one query per key: Q has {Q.shape[0]} rows,"
            f" K has {K.shape[0]}"
        )
    if feature_map is None:
        return Q, K, V
    if not callable(feature_map):
        raise TypeError(f"feature_map must be callable or None, got {type(feature_map).__name__}")
    phi_k = as_matrix(feature_map(K), "feature_map(K)", shape=(K.shape[0], None))
    phi_q = as_matrix(feature_map(Q), "feature_map(Q)", shape=(Q.shape[0], phi_k.shape[1]))
    return phi_q, phi_k, V


def _normalise(O: np.ndarray, den: np.ndarray) -> np.ndarray:
    if np.any(den == 0):
        raise ValueError(
            "the normaliser z^T phi(q) is zero for some query; use a positive feature_map"
            " such as elu_plus_one"
        )
    return O / den[:, None]


def linear_attention_parallel(Q, K, V, causal: bool = True, feature_map: FeatureMap | None = None,
                              normalise: bool = False) -> np.ndarray:
    """Linear attention computed over all pairs at once (the attention form).

    Chapter 9, ``o_t = sum_{i<=t} v_i phi(k_i)^T phi(q_t)``, i.e. ``O = (M * phi(Q) phi(K)^T) V``
    with ``M`` the causal (lower-triangular) mask, or no mask if ``causal=False``.
    With ``normalise=True`` row ``t`` is divided by ``sum_{i<=t} phi(k_i)^T phi(q_t)``
    (Katharopoulos et al. 2020). ``Q`` (n_q, d_k), ``K`` (n, d_k), ``V`` (n, d_v);
    causal needs ``n_q = n``. ``feature_map`` maps an (m, d_k) matrix row-wise to
    (m, D); None means the identity. Returns ``O`` of shape (n_q, d_v).
    """
    phi_q, phi_k, V = _linear_attention_inputs(Q, K, V, causal, feature_map)
    weights = phi_q @ phi_k.T
    if causal:
        weights = np.tril(weights)
    O = weights @ V
    return _normalise(O, weights.sum(axis=1)) if normalise else O


def linear_attention_recurrent(Q, K, V, causal: bool = True, feature_map: FeatureMap | None = None,
                               normalise: bool = False) -> np.ndarray:
    """Linear attention computed as a recurrent state, one token at a time.

    Chapter 9 (Derivation D10), ``S_t = S_{t-1} + v_t phi(k_t)^T``,
    ``z_t = z_{t-1} + phi(k_t)``, ``o_t = S_t phi(q_t)`` (divided by
    ``z_t^T phi(q_t)`` when ``normalise``). With ``causal=False`` every query reads
    the final state ``S_n``. Same arguments and result as
    ``linear_attention_parallel``, which it equals to rounding; the state is
    (d_v, D) whatever the number of tokens. Returns ``O`` of shape (n_q, d_v).
    """
    phi_q, phi_k, V = _linear_attention_inputs(Q, K, V, causal, feature_map)
    S = np.zeros((V.shape[1], phi_k.shape[1]))
    z = np.zeros(phi_k.shape[1])
    O = np.empty((phi_q.shape[0], V.shape[1]))
    den = np.empty(phi_q.shape[0])
    for t, (k_t, v_t) in enumerate(zip(phi_k, V)):
        S = _add(S, k_t, v_t)
        z = z + k_t
        if causal:
            O[t] = S @ phi_q[t]
            den[t] = z @ phi_q[t]
    if not causal:
        O = phi_q @ S.T
        den = phi_q @ z
    return _normalise(O, den) if normalise else O


# One formula per rule, written for a state S of shape (..., d_v, d_k) so that the
# same code updates one state or a batch of streams at once.

def _outer(v: np.ndarray, k: np.ndarray) -> np.ndarray:
    return v[..., :, None] * k[..., None, :]


def _read(S: np.ndarray, k: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", S, k)


def _add(S, k, v):
    return S + _outer(v, k)


def _decay(S, k, v, gamma):
    return gamma * S + _outer(v, k)


def _delta(S, k, v, beta):
    return S + beta * _outer(v - _read(S, k), k)


def _gated_delta(S, k, v, alpha, beta):
    return alpha * (S - beta * _outer(_read(S, k), k)) + beta * _outer(v, k)


def _ttt(S, k, v, eta):
    gradient = _outer(_read(S, k) - v, k)  # d/dS of ||S k - v||^2 / 2
    return S - eta * gradient


# rule name -> (update, {parameter name: (lowest, highest) allowed value})
RULES = {
    "add": (_add, {}),
    "decay": (_decay, {"gamma": (0.0, 1.0)}),
    "delta": (_delta, {"beta": (0.0, np.inf)}),
    "gated_delta": (_gated_delta, {"alpha": (0.0, 1.0), "beta": (0.0, np.inf)}),
    "ttt": (_ttt, {"eta": (0.0, np.inf)}),
}


def _parameter(value, name: str, bounds: tuple[float, float], length: int | None = None):
    """A rule parameter: a scalar in ``bounds``, or (with ``length``) also a vector per step."""
    low, high = bounds
    if length is not None and np.ndim(value) == 1:
        arr = as_vector(value, name, dim=length)
        if np.any(arr < low) or np.any(arr > high):
            raise ValueError(f"every entry of {name} must lie in [{low}, {high}]")
        return arr
    x = as_positive(value, name, allow_zero=True)
    if not low <= x <= high:
        raise ValueError(f"{name} must lie in [{low}, {high}], got {value!r}")
    return x if length is None else np.full(length, x)


def _step_inputs(S, k, v):
    S = as_matrix(S, "S")
    k = as_vector(k, "k", dim=S.shape[1])
    v = as_vector(v, "v", dim=S.shape[0])
    return S, k, v


def add_update(S, k, v) -> np.ndarray:
    """Additive (Hebbian, linear-attention) write ``S <- S + v k^T``.

    Chapter 10, table row "Add": nothing is ever removed. ``S`` (d_v, d_k),
    ``k`` (d_k,), ``v`` (d_v,). Returns the new state (d_v, d_k).
    """
    return _add(*_step_inputs(S, k, v))


def decay_update(S, k, v, gamma) -> np.ndarray:
    """Decayed (gated) write ``S <- gamma S + v k^T`` with ``0 <= gamma <= 1``.

    Chapter 10, table row "Decay": older memories fade by ``gamma`` per step.
    ``S`` (d_v, d_k), ``k`` (d_k,), ``v`` (d_v,). Returns the new state (d_v, d_k).
    """
    S, k, v = _step_inputs(S, k, v)
    return _decay(S, k, v, _parameter(gamma, "gamma", RULES["decay"][1]["gamma"]))


def delta_update(S, k, v, beta) -> np.ndarray:
    """Delta-rule write ``S <- S + beta (v - S k) k^T = S (I - beta k k^T) + beta v k^T``.

    Chapter 10, table row "Delta": the value stored at ``k`` is replaced, not
    added to; with a unit key and ``beta = 1`` afterwards ``S k = v`` exactly.
    ``S`` (d_v, d_k), ``k`` (d_k,), ``v`` (d_v,), ``beta >= 0``. Returns (d_v, d_k).
    """
    S, k, v = _step_inputs(S, k, v)
    return _delta(S, k, v, _parameter(beta, "beta", RULES["delta"][1]["beta"]))


def gated_delta_update(S, k, v, alpha, beta) -> np.ndarray:
    """Gated delta write ``S <- alpha S (I - beta k k^T) + beta v k^T``.

    Chapter 10, table row "Gated delta" (Gated DeltaNet): forget everything by
    ``0 <= alpha <= 1`` and overwrite the slot of ``k`` with strength ``beta >= 0``.
    ``S`` (d_v, d_k), ``k`` (d_k,), ``v`` (d_v,). Returns the new state (d_v, d_k).
    """
    S, k, v = _step_inputs(S, k, v)
    bounds = RULES["gated_delta"][1]
    return _gated_delta(S, k, v, _parameter(alpha, "alpha", bounds["alpha"]),
                        _parameter(beta, "beta", bounds["beta"]))


def ttt_update(S, k, v, eta) -> np.ndarray:
    """Test-time-training write: one gradient step on ``||f_S(k) - v||^2 / 2``, ``f_S(k) = S k``.

    Chapter 10, table row "Test-time training" with a linear model:
    ``S <- S - eta (S k - v) k^T``, since ``d/dS ||S k - v||^2 / 2 = (S k - v) k^T``;
    this is the delta row with ``beta = eta``. ``S`` (d_v, d_k), ``k`` (d_k,),
    ``v`` (d_v,), ``eta >= 0``. Returns the new state (d_v, d_k).
    """
    S, k, v = _step_inputs(S, k, v)
    return _ttt(S, k, v, _parameter(eta, "eta", RULES["ttt"][1]["eta"]))


def _rule(rule: str):
    if rule not in RULES:
        raise ValueError(f"rule must be one of {sorted(RULES)}, got {rule!r}")
    return RULES[rule]


def run_updates(K, V, rule: str, S0=None, all_states: bool = False, **params) -> np.ndarray:
    """Write a stream of pairs into a state with one of the rules of Chapter 10.

    Chapter 10, ``S_t = update(S_{t-1}, k_t, v_t)`` for ``t = 1..n`` with ``rule``
    one of ``"add"``, ``"decay"`` (``gamma``), ``"delta"`` (``beta``),
    ``"gated_delta"`` (``alpha``, ``beta``), ``"ttt"`` (``eta``). Each parameter is
    a scalar or a vector of n per-step values (``gamma_t``, ``beta_t`` ...).
    ``K`` (n, d_k), ``V`` (n, d_v), ``S0`` (d_v, d_k) or None for zeros.

    Returns the final state (d_v, d_k), or with ``all_states=True`` the states
    ``S_0..S_n`` stacked as (n + 1, d_v, d_k).
    """
    K = as_matrix(K, "K")
    V = as_matrix(V, "V")
    same_length(K, "K", V, "V")
    update, bounds = _rule(rule)
    if set(params) != set(bounds):
        raise ValueError(
            f"rule {rule!r} takes the parameters {sorted(bounds)}, got {sorted(params)}"
        )
    n = K.shape[0]
    steps = {name: _parameter(params[name], name, bounds[name], length=n) for name in bounds}
    shape = (V.shape[1], K.shape[1])
    S = np.zeros(shape) if S0 is None else as_matrix(S0, "S0", shape=shape)
    states = [S]
    for t in range(n):
        states.append(update(states[-1], K[t], V[t], **{name: steps[name][t] for name in steps}))
    return np.array(states) if all_states else states[-1]


def recall_errors_by_age(rule: str, gamma: float = 0.9, beta: float = 1.0, n_pairs: int = 24,
                         d: int = 8, streams: int = 12, seed=0):
    """Mean relative recall error of each pair against how long ago it was written.

    Chapter 10 (figure "forgetting-rules"). Each of ``streams`` streams writes
    ``n_pairs`` random unit keys and unit values in R^d into a zero state with
    ``rule``; then every pair is recalled from the final state, with error
    ``||S_T k_i - v_i|| / ||v_i||``. Age 0 is the last pair written. ``gamma`` is
    the decay of ``"decay"`` (and ``alpha`` of ``"gated_delta"``), ``beta`` the
    write strength of ``"delta"`` and ``"gated_delta"`` (and ``eta`` of
    ``"ttt"``); ``"add"`` uses neither. All streams are updated at once.

    Returns ``(ages, errors)``, both (n_pairs,): ``errors[a]`` is the mean over
    streams of the error of the pair of age ``a``.
    """
    update, bounds = _rule(rule)
    given = {"gamma": gamma, "alpha": gamma, "beta": beta, "eta": beta}
    params = {name: _parameter(given[name], name, bounds[name]) for name in bounds}
    n_pairs = as_count(n_pairs, "n_pairs")
    d = as_count(d, "d")
    streams = as_count(streams, "streams")
    rng = as_rng(seed)
    keys = random_unit_vectors(n_pairs, d, rng, trials=streams)
    values = random_unit_vectors(n_pairs, d, rng, trials=streams)
    S = np.zeros((streams, d, d))
    for t in range(n_pairs):
        S = update(S, keys[:, t], values[:, t], **params)
    recalled = np.einsum("sij,snj->sni", S, keys)
    errors = np.linalg.norm(recalled - values, axis=2) / np.linalg.norm(values, axis=2)
    return np.arange(n_pairs), errors.mean(axis=0)[::-1]


class CacheVsState(NamedTuple):
    """Result of ``cache_vs_state_errors``: one stream read token by token."""

    tokens: np.ndarray  # (n,), number of tokens read: 1..n
    cache_error: np.ndarray  # (n,), softmax read of the cache
    state_error: np.ndarray  # (n,), linear read of the state
    keys: np.ndarray  # (n, d_k), the cache's key rows
    values: np.ndarray  # (n, d_k), the cache's value rows


def cache_vs_state_errors(n_tokens: int, d_k: int = 4, beta: float = 30.0, seed=0) -> CacheVsState:
    """Error of recalling the first value from a growing cache and from a fixed state.

    Chapter 9 (figure "cache-vs-state"). A stream of random unit keys and unit
    values in R^{d_k} is read one token at a time. After ``t`` tokens the cache
    holds all ``t`` pairs and answers the query ``k_1`` by softmax attention,
    ``o = sum_{i<=t} softmax_i(beta k_i^T k_1) v_i``; the state is the d_k x d_k
    matrix ``S_t = sum_{i<=t} v_i k_i^T`` and answers ``S_t k_1``. Each error is
    ``||o - v_1||`` (the values have unit length, so it is also relative).

    ``n_tokens >= 1``, ``d_k >= 1``, ``beta > 0`` (large enough that the cache
    separates a matching key from the rest; the default 30 makes a key at
    similarity 0.9 weigh e^-3 of the match). Returns ``CacheVsState`` with the
    errors after 1..n_tokens tokens and the keys and values of the stream.
    """
    n = as_count(n_tokens, "n_tokens")
    d_k = as_count(d_k, "d_k")
    beta = as_positive(beta, "beta")
    rng = as_rng(seed)
    K = random_unit_vectors(n, d_k, rng)
    V = random_unit_vectors(n, d_k, rng)
    queries = np.repeat(K[:1], n, axis=0)  # row t asks for v_1 after t + 1 tokens
    from_cache = attention(queries, K, V, beta, causal=True)
    from_state = linear_attention_parallel(queries, K, V, causal=True)
    return CacheVsState(
        tokens=np.arange(1, n + 1),
        cache_error=np.linalg.norm(from_cache - V[0], axis=1),
        state_error=np.linalg.norm(from_state - V[0], axis=1),
        keys=K,
        values=V,
    )


def tensor_power(x, p: int) -> np.ndarray:
    """The vectorised p-fold tensor power ``vec(x (x) x (x) ... (x) x)``.

    Chapter 12, Derivation D10: ``<vec(k^{(x)p}), vec(q^{(x)p})> = (k^T q)^p``.
    ``x`` is a vector (d,) giving (d^p,), or a matrix (n, d) whose rows are
    raised separately, giving (n, d^p); ``p >= 0`` (``p = 0`` gives ones).
    """
    arr = _vector_or_matrix(x, "x")
    p = as_count(p, "p", minimum=0)
    rows = np.atleast_2d(arr)
    power = np.ones((rows.shape[0], 1))
    for _ in range(p):
        power = (power[:, :, None] * rows[:, None, :]).reshape(rows.shape[0], -1)
    return power if arr.ndim == 2 else power[0]


def _polynomial_inputs(K, V, p):
    K = as_matrix(K, "K")
    V = as_matrix(V, "V")
    same_length(K, "K", V, "V")
    return K, V, as_count(p, "p", minimum=0)


def polynomial_state(K, V, p: int) -> np.ndarray:
    """Fixed state of a degree-p polynomial read: ``S = sum_i v_i vec(k_i^{(x)p})^T``.

    Chapter 12, Derivation D10: ``S vec(q^{(x)p}) = sum_i v_i (k_i^T q)^p``, so a
    polynomial read needs no growing memory. ``K`` (n, d_k), ``V`` (n, d_v),
    ``p >= 0``. Returns ``S`` of shape (d_v, d_k^p), whatever n is.
    """
    K, V, p = _polynomial_inputs(K, V, p)
    return V.T @ tensor_power(K, p)


def polynomial_read(K, V, q, p: int) -> np.ndarray:
    """Degree-p polynomial read of the stored pairs: ``o = sum_i v_i (k_i^T q)^p``.

    Chapter 12, Derivation D10 (the direct form, which keeps all n pairs).
    ``K`` (n, d_k), ``V`` (n, d_v), ``q`` (d_k,), ``p >= 0``. Returns ``o`` (d_v,).
    """
    K, V, p = _polynomial_inputs(K, V, p)
    q = as_vector(q, "q", dim=K.shape[1])
    return V.T @ (K @ q) ** p


def exp_kernel_features(x, beta, P: int) -> np.ndarray:
    """Truncated feature map of the exponential kernel ``e^{beta q^T k}``.

    Derivation D15 (Chapter 12): ``Phi(x) = (sqrt(beta^p / p!) vec(x^{(x)p}))_{p=0..P}``
    so that ``Phi(q)^T Phi(k) = sum_{p<=P} beta^p (q^T k)^p / p!``, the Taylor
    polynomial of ``e^{beta q^T k}``; the exact kernel needs ``P = infinity``.
    ``x`` (d,) or (n, d) rows, ``beta >= 0``, ``P >= 0``. Returns (D,) or (n, D)
    with ``D = sum_{p<=P} d^p``.
    """
    arr = _vector_or_matrix(x, "x")
    beta = as_positive(beta, "beta", allow_zero=True)
    P = as_count(P, "P", minimum=0)
    blocks = [np.sqrt(beta**p / factorial(p)) * tensor_power(arr, p) for p in range(P + 1)]
    return np.concatenate(blocks, axis=-1)


# --- Chapter 10: the delta rule in WY form, and test-time training in one batch step ----

__all__ += ["householder_product", "householder_wy", "delta_rule_wy", "ttt_batch_update",
            "orthonormal_recall_errors"]


def _keys_and_strengths(K, beta):
    K = as_matrix(K, "K")
    return K, _parameter(beta, "beta", RULES["delta"][1]["beta"], length=K.shape[0])


def householder_product(K, beta) -> np.ndarray:
    """The product ``(I - b_1 k_1 k_1^T)(I - b_2 k_2 k_2^T) ... (I - b_n k_n k_n^T)``.

    Chapter 10 (DeltaNet): the delta rule multiplies the state on the right by one
    generalised Householder matrix per token, ``S_t = S_{t-1} (I - b_t k_t k_t^T) + b_t v_t k_t^T``.
    ``K`` (n, d) holds the keys as rows, ``beta`` a scalar or (n,) strengths >= 0.
    Returns the (d, d) product, multiplied out one factor at a time.
    """
    K, b = _keys_and_strengths(K, beta)
    P = np.eye(K.shape[1])
    for k, b_t in zip(K, b):
        P = P - b_t * np.outer(P @ k, k)
    return P


def householder_wy(K, beta) -> np.ndarray:
    """The compact WY form of ``householder_product``: ``P_n = I - Omega^T K``.

    Chapter 10 (DeltaNet, Yang et al. 2024): the product of n generalised Householder
    matrices is the identity minus a sum of n outer products, ``sum_t omega_t k_t^T``, with
    ``omega_t = b_t (k_t - sum_{i<t} omega_i (k_i^T k_t))``. All the omega_t at once solve
    the triangular system ``(I + diag(b) tril(K K^T, -1)) Omega = diag(b) K``, so no d x d
    matrix is formed token by token. ``K`` (n, d), ``beta`` scalar or (n,).
    Returns ``Omega`` (n, d).
    """
    K, b = _keys_and_strengths(K, beta)
    T = np.eye(K.shape[0]) + b[:, None] * np.tril(K @ K.T, -1)
    return np.linalg.solve(T, b[:, None] * K)


def delta_rule_wy(K, V, beta) -> np.ndarray:
    """The delta-rule state written from zero, all tokens at once: ``S_n = U^T K``.

    Chapter 10 (DeltaNet): from ``S_0 = 0`` the delta recurrence keeps
    ``S_t = sum_{i<=t} u_i k_i^T`` with ``u_t = b_t (v_t - sum_{i<t} u_i (k_i^T k_t))``,
    i.e. ``(I + diag(b) tril(K K^T, -1)) U = diag(b) V``: one triangular solve in place
    of n state updates, the step that DeltaNet applies inside each chunk of a sequence. ``K`` (n, d_k), ``V`` (n, d_v), ``beta`` scalar or (n,).
    Returns the final state (d_v, d_k), equal to ``run_updates(K, V, "delta", beta=beta)``.
    """
    K, b = _keys_and_strengths(K, beta)
    V = as_matrix(V, "V")
    same_length(K, "K", V, "V")
    T = np.eye(K.shape[0]) + b[:, None] * np.tril(K @ K.T, -1)
    U = np.linalg.solve(T, b[:, None] * V)
    return U.T @ K


def ttt_batch_update(S, K, V, eta) -> np.ndarray:
    """One batch gradient step of a linear test-time-training layer on ``sum_i ||S k_i - v_i||^2``.

    Chapter 10 (Sun et al. 2024): with the loss not halved the gradient is
    ``2 sum_i (S k_i - v_i) k_i^T``, so ``S <- S - 2 eta sum_i (S k_i - v_i) k_i^T``.
    From ``S = 0`` with ``eta = 1/2`` this is ``sum_i v_i k_i^T``, the linear-attention
    state. ``S`` (d_v, d_k), ``K`` (n, d_k), ``V`` (n, d_v), ``eta >= 0``.
    Returns the new state (d_v, d_k).
    """
    S = as_matrix(S, "S")
    K = as_matrix(K, "K", shape=(None, S.shape[1]))
    V = as_matrix(V, "V", shape=(None, S.shape[0]))
    same_length(K, "K", V, "V")
    eta = as_positive(eta, "eta", allow_zero=True)
    return S - 2.0 * eta * (K @ S.T - V).T @ K


def orthonormal_recall_errors(n_pairs, d_k: int, d_v: int = 8, seed=0) -> np.ndarray:
    """Largest recall error of an additive state holding ``n`` pairs with keys as orthogonal as possible.

    Chapter 9 (the orthogonality bound of the fast weight programmer): the first
    ``min(n, d_k)`` keys are orthonormal, any further key is a random unit vector (no
    room is left for it). The state ``S = sum_i v_i k_i^T`` is asked for every stored
    value; the error is ``max_i ||S k_i - v_i||`` with unit values in R^{d_v}.
    ``n_pairs`` an int or a sequence of ints >= 1. Returns an array of the errors, one per n.
    """
    counts = [as_count(n, "n_pairs") for n in np.atleast_1d(np.asarray(n_pairs))]
    d_k = as_count(d_k, "d_k")
    d_v = as_count(d_v, "d_v")
    rng = as_rng(seed)
    largest = max(counts)
    basis, _ = np.linalg.qr(rng.standard_normal((d_k, d_k)))
    extra = random_unit_vectors(max(largest - d_k, 0), d_k, rng) if largest > d_k else np.zeros((0, d_k))
    keys = np.vstack([basis.T, extra])[:largest]
    values = random_unit_vectors(largest, d_v, rng)
    errors = []
    for n in counts:
        K, V = keys[:n], values[:n]
        errors.append(np.linalg.norm(K @ (V.T @ K).T - V, axis=1).max())
    return np.array(errors)
