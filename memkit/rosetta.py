"""The Rosetta stone of Chapter 15: each field's name for a computation, checked against memkit.

Chapter 15 lists twelve names that other fields give to computations of this
course. :func:`rosetta_gaps` writes each field's computation the way that field
states it (a plain numpy transcription, independent of memkit) and compares it
with the memkit function the course uses for it. A gap at rounding level says the
two are the same computation; the one truncated approximation (kernel approximation
by a finite feature map, here the Taylor map of the exponential kernel, Chapter 12 and
D15; random features, the other field's usual map, are only named) has a small
truncation gap instead.
"""

from __future__ import annotations

import numpy as np

from . import attention, icl, memory, recurrent, scores
from .validation import as_count, as_positive, as_rng

__all__ = ["ROSETTA_ROWS", "rosetta_gaps"]

#: (name in another field, field, what it is in this course, chapter), in the order of Chapter 15
ROSETTA_ROWS = (
    ("correlation matrix memory", "neuroscience, early associative memory",
     "outer-product write W = sum_i v_i k_i^T", 3),
    ("Widrow-Hoff / LMS", "adaptive filtering", "the delta rule", 4),
    ("recursive least squares", "estimation and control", "the preconditioned delta rule", 4),
    ("Hopfield network", "statistical physics", "a memory read by iterating a fixed-point map", 6),
    ("Nadaraya-Watson smoother", "nonparametric statistics",
     "softmax attention with an exponential kernel", 6),
    ("hash table", "computer science", "attention in the limit beta -> infinity", 6),
    ("key-value memory network", "question answering",
     "an MLP with learned keys and values", 5),
    ("fast weight programmer", "neural-network history",
     "linear attention: a slow net writes a fast matrix", 9),
    ("linear RNN / state-space model", "sequence modelling, control",
     "S_t = A_t S_{t-1} + v_t k_t^T", 10),
    ("meta-learning / online learning", "machine learning",
     "in-context gradient descent", 11),
    ("REINFORCE / policy gradient", "reinforcement learning",
     "the gradient on attention logits", 7),
    ("kernel approximation", "kernel methods",
     "a finite feature map in place of the softmax kernel (the Taylor map of D15)", 12),
)


def _gap(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))))


def rosetta_gaps(seed=0, n: int = 12, d: int = 4, beta: float = 2.0) -> dict:
    """Largest absolute gap between each field's computation and its memkit counterpart.

    Chapter 15. On random data (``n`` pairs, unit keys in R^``d``, values in R^3,
    a query near one key, inverse temperature ``beta``) each of the twelve rows of
    :data:`ROSETTA_ROWS` is computed twice: as the other field writes it (numpy) and
    with the memkit function of the course. ``seed`` an int or a Generator.

    Returns ``{name: gap}`` (floats) with the names of :data:`ROSETTA_ROWS`. Every
    gap is at rounding level except ``"hash table"`` (beta = 200: a soft lookup,
    about ``e^{-beta * margin}``) and ``"kernel approximation"`` (Taylor feature map of
    ``e^{q^T k}`` cut at degree 10 in R^2: a relative gap below ``e / 11! < 1e-7``).
    """
    rng = as_rng(seed)
    n = as_count(n, "n", minimum=2)
    d = as_count(d, "d", minimum=2)
    beta = as_positive(beta, "beta")
    K = rng.normal(size=(n, d))
    K /= np.linalg.norm(K, axis=1, keepdims=True)
    V = rng.normal(size=(n, 3))
    q = K[1] + 0.05 * rng.normal(size=d)
    W0, g = rng.normal(size=(3, d)), rng.normal(size=3)
    gaps = {}

    # correlation matrix memory: accumulate v_i k_i^T one pair at a time
    correlation = np.zeros((3, d))
    for k, v in zip(K, V):
        correlation += np.outer(v, k)
    gaps["correlation matrix memory"] = _gap(correlation, memory.hebbian_write(K, V))

    # LMS: each output weight vector w_j moves by mu * e_j * x
    mu, x, y = 0.3, K[0], V[0]
    lms = np.array([w + mu * (t - w @ x) * x for w, t in zip(W0, y)])
    gaps["Widrow-Hoff / LMS"] = _gap(lms, memory.delta_step(W0, x, y, mu))

    # RLS in its gain-vector (Kalman) form against the batch ridge solution
    lam = 0.1
    P, W = np.eye(d) / lam, np.zeros((3, d))
    for k, v in zip(K, V):
        gain = P @ k / (1.0 + k @ P @ k)
        W = W + np.outer(v - W @ k, gain)
        P = P - np.outer(gain, k @ P)
    gaps["recursive least squares"] = _gap(W, memory.ridge_write(K, V, lam))

    # modern Hopfield update: xi <- X^T softmax(beta X xi)
    e = np.exp(beta * (K @ q - np.max(K @ q)))
    gaps["Hopfield network"] = _gap(K.T @ (e / e.sum()), attention.attend(K, K, q, beta)[0])

    # Nadaraya-Watson: kernel-weighted average of the responses
    weights = np.exp(beta * K @ q)
    gaps["Nadaraya-Watson smoother"] = _gap(
        (weights[:, None] * V).sum(axis=0) / weights.sum(), attention.attend(K, V, q, beta)[0])

    # hash table: exact lookup of a stored key
    table = {tuple(np.round(k, 12)): v for k, v in zip(K, V)}
    gaps["hash table"] = _gap(table[tuple(np.round(K[1], 12))], attention.attend(K, V, K[1], 200.0)[0])

    # key-value memory: sum over memory slots of value times ReLU match
    slots = sum(v * max(k @ q, 0.0) for k, v in zip(K, V))
    gaps["key-value memory network"] = _gap(slots, scores.mlp_forward(K, V.T, q, scores.relu))

    # fast weights: the slow net emits (k_t, v_t); the fast matrix is written, then read by q_t
    Q = rng.normal(size=(n, d))
    fast, reads = np.zeros((3, d)), []
    for k, v, qt in zip(K, V, Q):
        fast = fast + np.outer(v, k)
        reads.append(fast @ qt)
    gaps["fast weight programmer"] = _gap(reads, recurrent.linear_attention_parallel(Q, K, V))

    # linear RNN with a scalar transition A_t = gamma_t I
    gammas = rng.uniform(0.5, 1.0, size=n)
    S = np.zeros((3, d))
    for k, v, gamma in zip(K, V, gammas):
        S = gamma * S + np.outer(v, k)
    gaps["linear RNN / state-space model"] = _gap(S, recurrent.run_updates(K, V, "decay", gamma=gammas))

    # meta-learning: one gradient step on the in-context loss, then predict
    eta = 0.2
    w_one_step = eta * V.T @ K      # from W = 0, minus eta times the gradient sum_i (0 - y_i) x_i^T
    gaps["meta-learning / online learning"] = _gap(
        w_one_step @ q, icl.linear_attention_readout(K, V, q, eta))

    # REINFORCE: E_a[r_i grad_l log a_i] with grad_l log a_i = e_i - a, reward r_i = -v_i^T g
    a = attention.attend(K, V, q, beta)[1]
    rewards = -V @ g
    reinforce = sum(a_i * r_i * (np.eye(n)[i] - a) for i, (a_i, r_i) in enumerate(zip(a, rewards)))
    gaps["REINFORCE / policy gradient"] = _gap(
        reinforce, -attention.attention_gradients(K, V, q, beta, g).dl)

    # kernel approximation: the Taylor feature map of e^{beta q^T k}, degree 10, in R^2
    k2 = K[:, :2] / np.linalg.norm(K[:, :2], axis=1, keepdims=True)
    q2 = q[:2] / np.linalg.norm(q[:2])
    feats_k = recurrent.exp_kernel_features(k2, 1.0, 10)
    feats_q = recurrent.exp_kernel_features(q2, 1.0, 10)
    exact = np.exp(k2 @ q2)
    gaps["kernel approximation"] = _gap(feats_k @ feats_q / exact, np.ones(n))
    return gaps
