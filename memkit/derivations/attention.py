"""Derivations about softmax attention: D6 (the softmax Jacobian and the four gradients),
D8 (the Hopfield energy), D9 (only W_Q W_K^T matters), D16 (a policy gradient), D18
(heads add) and D19 (a Gaussian-kernel smoother)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import sympy as sp

from ._core import (Checklist, frobenius2, matrix, name_exponentials, same, softmax_weights,
                    vanishes, vector, verification)


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


@verification("D6", "da_i/dl_j = a_i (delta_ij - a_j); dL/dl_i = a_i (v_i - o)^T g, "
              "dL/dv_i = a_i g, dL/dk_i = beta (dL/dl_i) q, "
              "dL/dq = beta sum_i (dL/dl_i) k_i")
def d6(c: Checklist, jacobian=None, logit_grad=None, value_grad=None, key_grad=None, query_grad=None
       ) -> None:
    """D6: the softmax Jacobian and the four gradients of attention.

    Claims, with a the softmax weights, g = dL/do and o = sum_j a_j v_j:
    ``jacobian(a, i, j)``: da_i/dl_j = a_i (delta_ij - a_j);
    ``logit_grad(a, values, o, g, i)``: dL/dl_i = a_i (v_i - o)^T g;
    ``value_grad(a, g, i)``: dL/dv_i = a_i g;
    ``key_grad(dl, q, beta)``: dL/dk_i = beta (dL/dl_i) q;
    ``query_grad(dls, keys, beta)``: dL/dq = beta sum_i (dL/dl_i) k_i.
    """
    jacobian = jacobian or (lambda a, i, j: a[i] * ((1 if i == j else 0) - a[j]))
    logit_grad = logit_grad or (lambda a, values, o, g, i: a[i] * ((values[i] - o).T * g)[0])
    value_grad = value_grad or (lambda a, g, i: a[i] * g)
    key_grad = key_grad or (lambda dl, q, beta: beta * dl * q)
    query_grad = query_grad or (lambda dls, keys, beta: beta * sum(
        (dl * k for dl, k in zip(dls, keys)), sp.zeros(*keys[0].shape)))
    n = 3
    logits = sp.symbols(f"l0:{n}", real=True)
    e, a = softmax_weights(n)
    softmax = [sp.exp(x) / sum(sp.exp(y) for y in logits) for x in logits]
    c.check(f"Jacobian: differentiating the softmax of {n} symbolic logits gives the claim for "
            "every i, j", lambda: all(
                vanishes(name_exponentials(sp.diff(softmax[i], logits[j]), logits, e)
                         - jacobian(a, i, j)) for i in range(n) for j in range(n)))

    # L enters every gradient only through g = dL/do (chain rule), so the loss L = g^T o with
    # a symbolic vector g stands for every loss.
    beta = sp.Symbol("beta", positive=True)
    q, g = vector("q", 2), vector("g", 2)
    keys = [vector(f"k{i}", 2) for i in range(n)]
    values = [vector(f"v{i}", 2) for i in range(n)]

    def logit_gradients(count):
        """SymPy's dL/dl_i for `count` memories, with the logits as free symbols."""
        names, weights = softmax_weights(count)
        free = sp.symbols(f"l0:{count}", real=True)
        probs = [sp.exp(x) / sum(sp.exp(y) for y in free) for x in free]
        L = (g.T * sum((p * v for p, v in zip(probs, values)), sp.zeros(2, 1)))[0]
        out = sum((w * v for w, v in zip(weights, values)), sp.zeros(2, 1))
        return weights, out, [name_exponentials(sp.diff(L, x), free, names) for x in free]

    a, o, dls = logit_gradients(n)
    c.check(f"logit gradient: differentiating L = g^T o (symbolic g, so any loss) in each logit "
            f"gives the claim ({n} memories, symbolic 2-vectors)",
            lambda: all(vanishes(dls[i] - logit_grad(a, values, o, g, i)) for i in range(n)))

    # The same loss with logits beta q^T k_i, differentiated through the exponentials; two
    # memories keep the expressions small.
    m = 2
    a, o, dls = logit_gradients(m)
    e = softmax_weights(m)[0]
    scores = [beta * (q.T * k)[0] for k in keys[:m]]
    out = sum((sp.exp(s) / sum(sp.exp(t) for t in scores) * v
               for s, v in zip(scores, values)), sp.zeros(2, 1))
    loss = (g.T * out)[0]

    def named(expr):
        return name_exponentials(expr, scores, e)

    c.check("value gradient (two memories, logits beta q^T k_i): dL/dv_i from differentiating L "
            "equals the claim",
            lambda: all(same(named(sp.Matrix([sp.diff(loss, x) for x in values[i]])),
                             value_grad(a, g, i)) for i in range(m)))
    c.check("key gradient: dL/dk_i equals the claim built on SymPy's dL/dl_i",
            lambda: all(same(named(sp.Matrix([sp.diff(loss, x) for x in keys[i]])),
                             key_grad(dls[i], q, beta)) for i in range(m)))
    c.check("query gradient: dL/dq equals the claim built on SymPy's dL/dl_i",
            lambda: same(named(sp.Matrix([sp.diff(loss, x) for x in q])),
                         query_grad(dls, keys[:m], beta)))


@verification("D8", "The Hopfield energy -log(sum_i e^{beta x_i^T xi})/beta + xi^T xi/2 "
              "has gradient xi - X^T softmax(beta X xi); its stationary points are "
              "the fixed points of the attention readout xi -> X^T softmax(beta X xi)")
def d8(c: Checklist, gradient=None, update=None, *, seed: int = 8) -> None:
    """D8: the Hopfield energy E(xi) = -log(sum_i exp(beta x_i^T xi))/beta + xi^T xi/2.

    Claims, with a = softmax(beta X xi): ``gradient(X, xi, a)``: grad E = xi - X^T a;
    ``update(X, xi, a)``: the retrieval update X^T a, one attention readout.
    """
    gradient = gradient or (lambda X, xi, a: xi - X.T * a)
    update = update or (lambda X, xi, a: X.T * a)
    beta = sp.Symbol("beta", positive=True)
    X, xi = matrix("x", 3, 2), vector("xi", 2)
    scores = [beta * (X[i, :] * xi)[0] for i in range(3)]
    energy = -sp.log(sum(sp.exp(s) for s in scores)) / beta + (xi.T * xi)[0] / 2
    e, a = softmax_weights(3)
    grad = name_exponentials(sp.Matrix([sp.diff(energy, x) for x in xi]), scores, e)
    c.check("differentiating the energy (3 symbolic patterns in R^2, symbolic beta) gives the "
            "claimed gradient", lambda: same(grad, gradient(X, xi, a)))
    c.check("fixed point: grad E = xi - (claimed update) identically, so grad E = 0 exactly "
            "when xi is a fixed point of the update", lambda: same(grad, xi - update(X, xi, a)))

    rng = np.random.default_rng(seed)
    patterns = rng.standard_normal((8, 6))
    b = 2.0

    def energy_num(x):
        s = b * patterns @ x
        return -(s.max() + np.log(np.exp(s - s.max()).sum())) / b + x @ x / 2

    state = patterns[0] + 0.3 * rng.standard_normal(6)
    energies = [energy_num(state)]
    for _ in range(40):
        w = _softmax(b * patterns @ state)
        state = np.array(update(sp.Matrix(patterns), sp.Matrix(state), sp.Matrix(w)),
                         dtype=float).ravel()
        energies.append(energy_num(state))
    w = _softmax(b * patterns @ state)
    residual = float(np.linalg.norm(np.array(
        gradient(sp.Matrix(patterns), sp.Matrix(state), sp.Matrix(w)), dtype=float)))
    c.check(f"iterating the claimed update on 8 random patterns in R^6 (beta = {b}, seed "
            f"{seed}): the energy never rises (slack 1e-12) and after 40 steps the claimed "
            f"gradient is {residual:.1e} (tolerance 1e-8); the decrease is Ramsauer et al.'s "
            "theorem, only observed here",
            lambda: all(later <= earlier + 1e-12 for earlier, later in pairwise(energies))
            and residual < 1e-8)


@verification("D9", "For invertible G, (W_Q G)(W_K G^{-T})^T = W_Q W_K^T: every score "
              "x_i^T W_Q W_K^T x_j is unchanged (and likewise W_V W_O)")
def d9(c: Checklist, key_map=None, output_map=None, *, seed: int = 9) -> None:
    """D9: the scores depend on W_Q W_K^T only.

    Claims: ``key_map(WK, G)``: what W_K becomes when W_Q becomes W_Q G, W_K G^{-T};
    ``output_map(WO, H)``: what W_O becomes when W_V becomes W_V H, H^{-1} W_O.
    """
    key_map = key_map or (lambda WK, G: WK * G.inv().T)
    output_map = output_map or (lambda WO, H: H.inv() * WO)
    WQ, WK, WV, WO = matrix("q", 3, 2), matrix("k", 3, 2), matrix("v", 3, 2), matrix("o", 2, 3)
    G, H = matrix("g", 2, 2), matrix("h", 2, 2)
    c.check("(W_Q G)(claimed W_K)^T = W_Q W_K^T for symbolic 3x2 W_Q, W_K and a symbolic "
            "invertible 2x2 G", lambda: same(WQ * G * key_map(WK, G).T, WQ * WK.T))
    xi, xj = vector("a", 3), vector("b", 3)
    c.check("hence a score x_i^T W_Q W_K^T x_j with symbolic tokens is unchanged",
            lambda: same(xi.T * WQ * G * key_map(WK, G).T * xj, xi.T * WQ * WK.T * xj))
    c.check("output side: (W_V H)(claimed W_O) = W_V W_O", lambda: same(WV * H * output_map(WO, H),
                                                                        WV * WO))
    rng = np.random.default_rng(seed)
    tokens, wq, wk, g = (rng.standard_normal(s) for s in ((5, 8), (8, 4), (8, 4), (4, 4)))
    moved = np.array(key_map(sp.Matrix(wk), sp.Matrix(g)), dtype=float)
    gap = float(np.abs(tokens @ wq @ g @ moved.T @ tokens.T - tokens @ wq @ wk.T @ tokens.T).max())
    c.check(f"numerically, 5 tokens in R^8, d_k = 4, random G (seed {seed}): largest score "
            f"change {gap:.1e}, tolerance 1e-9", lambda: gap < 1e-9)


@verification("D16", "For J = sum_i a_i r_i with a = softmax(l): dJ/dl_j = a_j (r_j - rbar), "
              "the log-derivative form, unchanged by a baseline b")
def d16(c: Checklist, gradient=None, *, seed: int = 16) -> None:
    """D16: dJ/dl_j = a_j (r_j - rbar) for J = sum_i a_i r_i, a = softmax(l).

    ``gradient(a, r, j)``: the claimed derivative (default a_j (r_j - sum_i a_i r_i)).
    """
    gradient = gradient or (lambda a, r, j: a[j] * (r[j] - sum(x * y for x, y in zip(a, r))))
    n = 3
    logits = sp.symbols(f"l0:{n}", real=True)
    r = sp.symbols(f"r0:{n}", real=True)
    b = sp.Symbol("b", real=True)
    e, a = softmax_weights(n)
    softmax = [sp.exp(x) / sum(sp.exp(y) for y in logits) for x in logits]

    def true_gradient(rewards, j):
        J = sum(p * x for p, x in zip(softmax, rewards))
        return name_exponentials(sp.diff(J, logits[j]), logits, e)

    c.check("differentiating J in each logit (3 choices, symbolic rewards) gives the claim",
            lambda: all(vanishes(true_gradient(r, j) - gradient(a, r, j)) for j in range(n)))
    c.check("log-derivative trick: sum_i a_i r_i d(log a_i)/dl_j equals the claim",
            lambda: all(vanishes(name_exponentials(
                sum(p * x * sp.diff(sp.log(p), logits[j]) for p, x in zip(softmax, r)),
                logits, e) - gradient(a, r, j)) for j in range(n)))
    shifted = [x - b for x in r]
    c.check("baseline: with rewards r_i - b (symbolic b) both the exact derivative and the "
            "claim are unchanged", lambda: all(
                vanishes(true_gradient(shifted, j) - true_gradient(r, j))
                and vanishes(gradient(a, shifted, j) - gradient(a, r, j)) for j in range(n)))
    g = vector("g", 2)
    values = [vector(f"v{i}", 2) for i in range(n)]
    o = sum((p * v for p, v in zip(a, values)), sp.zeros(2, 1))
    attention_reward = [-(v.T * g)[0] for v in values]
    c.check("attention: with r_i = -v_i^T g, minus the claim is a_j (v_j - o)^T g (D6)",
            lambda: all(vanishes(-gradient(a, attention_reward, j) - a[j] * ((values[j] - o).T
                                                                              * g)[0])
                        for j in range(n)))

    rng = np.random.default_rng(seed)
    logit_num, reward_num = np.array([0.5, -1.0, 1.5, 0.0]), np.array([11.0, 13.0, 8.0, 10.5])
    probs = _softmax(logit_num)
    exact = np.array([float(gradient([sp.Float(p) for p in probs],
                                     [sp.Float(x) for x in reward_num], j))
                      for j in range(4)])
    draws = rng.choice(4, size=200000, p=probs)
    score = np.eye(4)[draws] - probs  # d log a_i / dl for each sampled choice i
    plain = reward_num[draws, None] * score
    centred = (reward_num[draws] - probs @ reward_num)[:, None] * score
    gap = float(np.abs(plain.mean(axis=0) - exact).max())
    centred_gap = float(np.abs(centred.mean(axis=0) - exact).max())
    spread, centred_spread = float(plain.var(axis=0).sum()), float(centred.var(axis=0).sum())
    c.check(f"Monte Carlo REINFORCE, 4 choices, 200000 samples (seed {seed}): the sampled "
            f"r_i d(log a_i)/dl averages to the claim within {gap:.4f} (tolerance 0.02)",
            lambda: gap < 0.02)
    c.check(f"rewards sharing an offset of about 10: with the mean baseline the average stays "
            f"within {centred_gap:.4f} of the claim (tolerance 0.02) and the total variance "
            f"drops from {spread:.3f} to {centred_spread:.3f}",
            lambda: centred_gap < 0.02 and centred_spread < spread)


@verification("D18", "[H_1 ... H_h] W_O = sum_m H_m W_O^(m), and W_Q, W_K, W_V, W_O hold "
              "4 d^2 entries for any number of heads h")
def d18(c: Checklist, combine=None, parameter_count=None) -> None:
    """D18: the concatenated heads times W_O is the sum of the heads' own terms.

    Claims: ``combine(heads, blocks)``: [H_1 ... H_h] W_O as a sum, sum_m H_m W_O^(m);
    ``parameter_count(d, h)``: entries of W_Q, W_K, W_V, W_O, 3 h d d_k + d^2 with
    d_k = d/h.
    """
    combine = combine or (lambda heads, blocks: sum(
        (Hm * Wm for Hm, Wm in zip(heads, blocks)), sp.zeros(heads[0].shape[0],
                                                              blocks[0].shape[1])))
    parameter_count = parameter_count or (lambda d, h: 3 * h * d * (d / h) + d**2)
    n, h, dk = 2, 2, 2
    heads = [matrix(f"h{m}", n, dk) for m in range(h)]
    WO = matrix("o", h * dk, h * dk)
    blocks = [WO[m * dk:(m + 1) * dk, :] for m in range(h)]
    c.check(f"block multiplication: for {h} symbolic heads ({n}x{dk}) and a symbolic "
            f"{h * dk}x{h * dk} W_O, the concatenation times W_O equals the claimed sum",
            lambda: same(sp.Matrix.hstack(*heads) * WO, combine(heads, blocks)))
    d, hh = sp.symbols("d h", positive=True)
    claimed = sp.sympify(parameter_count(d, hh))
    entries = 3 * hh * d * (d / hh) + (hh * (d / hh)) * d  # h heads of d x d_k, and W_O
    c.check("the claimed count equals the number of entries, 3 h (d x d_k) + (h d_k) x d with "
            "d_k = d/h, which is 4 d^2 whatever h (symbolic d, h)",
            lambda: vanishes(claimed - entries) and vanishes(claimed - 4 * d**2))
    layer = [matrix(f"{name}{m}", 4, 2) for name in "qkv" for m in range(2)] + [matrix("o", 4, 4)]
    symbols = sum(len(m) for m in layer)
    c.check(f"counting the symbols of an explicit layer with d = 4, h = 2 gives {symbols}, the "
            "claimed count", lambda: vanishes(claimed.subs({d: 4, hh: 2}) - symbols))


@verification("D19", "exp(beta q^T k) = exp(beta (||q||^2 + ||k||^2)/2) "
              "exp(-beta ||q - k||^2 / 2); with unit keys softmax attention is a "
              "Gaussian-kernel smoother of bandwidth 1/sqrt(beta)")
def d19(c: Checklist, factor=None, bandwidth2=None, *, seed: int = 19) -> None:
    """D19: with unit keys, softmax attention is a Gaussian-kernel smoother.

    Claims: ``factor(beta, q, k)``: exp(beta q^T k) / exp(-beta ||q - k||^2 / 2),
    exp(beta (||q||^2 + ||k||^2) / 2); ``bandwidth2(beta)``: sigma^2, 1/beta.
    """
    factor = factor or (lambda beta, q, k: sp.exp(beta * ((q.T * q)[0] + (k.T * k)[0]) / 2))
    bandwidth2 = bandwidth2 or (lambda beta: 1 / beta)
    beta = sp.Symbol("beta", positive=True)
    q, k = vector("q", 3), vector("k", 3)
    gauss = -beta * frobenius2(q - k) / 2
    c.check("the identity, compared through logarithms (symbolic q, k in R^3, beta)",
            lambda: vanishes(sp.expand_log(sp.log(factor(beta, q, k)), force=True) + gauss
                             - beta * (q.T * k)[0]))
    sigma2 = bandwidth2(beta)
    c.check("-beta ||q - k||^2 / 2 = -||q - k||^2 / (2 sigma^2) with the claimed sigma^2",
            lambda: vanishes(gauss + frobenius2(q - k) / (2 * sigma2)))

    ts = sp.symbols("t0:3", real=True)
    unit = [sp.Matrix([(1 - t**2) / (1 + t**2), 2 * t / (1 + t**2)]) for t in ts]
    q2 = vector("q", 2)

    def log_ratio(key):  # log of softmax numerator over Gaussian-kernel numerator
        return beta * (q2.T * key)[0] + frobenius2(q2 - key) / (2 * sigma2)

    c.check("three symbolic unit keys (rational points of the circle): log(attention "
            "numerator / Gaussian numerator) is the same for every key, so the normalised "
            "weights agree", lambda: all(vanishes(log_ratio(unit[i]) - log_ratio(unit[0]))
                                         for i in (1, 2)))
    rho = sp.Symbol("rho", positive=True)
    c.check("control: with one key of norm rho the ratio depends on rho, so without unit keys "
            "long keys weigh more", lambda: not vanishes(log_ratio(rho * unit[1])
                                                          - log_ratio(unit[0])))

    rng = np.random.default_rng(seed)
    keys = rng.standard_normal((6, 4))
    keys /= np.linalg.norm(keys, axis=1, keepdims=True)
    values, query, b = rng.standard_normal((6, 3)), rng.standard_normal(4), 3.0
    attention = _softmax(b * keys @ query) @ values
    s2 = float(bandwidth2(sp.Float(b)))
    kernel = np.exp(-np.sum((query - keys) ** 2, axis=1) / (2 * s2))
    smoother = kernel @ values / kernel.sum()
    gap = float(np.abs(attention - smoother).max())
    c.check(f"numerically, 6 unit keys in R^4, beta = {b} (seed {seed}): attention and the "
            f"Gaussian smoother differ by {gap:.1e}, tolerance 1e-12", lambda: gap < 1e-12)
