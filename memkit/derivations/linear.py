"""Derivations about linear stores: D3 (least squares and its projection), D5 (recursive
least squares), D14 (the gradient of a linear layer) and D17 (the rank-one edit).

The matrices are small and symbolic (every entry a symbol), so an identity that holds
here holds for every matrix of that size, not only for a few numbers.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ._core import (Checklist, close, frobenius2, is_idempotent, matrix, reduced, same, vanishes,
                    vector, verification)


@verification("D3", "Least squares: W = V^T K (K^T K)^{-1} for M >= d_k, "
              "W = V^T (K K^T)^{-1} K (exact, minimum norm) for M <= d_k; the recall "
              "P = K (K^T K)^{-1} K^T is a symmetric idempotent of trace d_k")
def d3(c: Checklist, gradient=None, quadratic_rule=None, linear_rule=None, solution=None,
       min_norm=None, projection=None, ratio=None, *, seed: int = 3) -> None:
    """D3: least squares memory W = V^T K (K^T K)^{-1} and its projection.

    Claims (defaults are the monograph's):
    ``gradient(K, Wt, V)``: gradient of ||K W^T - V||_F^2 with respect to W^T,
    2 K^T (K W^T - V);
    ``quadratic_rule(S, x)``: the gradient of x^T S x for a symmetric S, 2 S x, and
    ``linear_rule(c, x)``: the gradient of c^T x, c: the two rules of the three-line step
    of Appendix B, ||A x - b||^2 = x^T A^T A x - 2 (A^T b)^T x + b^T b, whose gradient they
    assemble into 2 A^T (A x - b), column by column of W^T (A = K, b a column of V);
    ``solution(K, V)``: the store for M >= d_k, V^T K (K^T K)^{-1};
    ``min_norm(K, V)``: the store for M <= d_k, V^T (K K^T)^{-1} K;
    ``projection(K)``: the recall matrix, K (K^T K)^{-1} K^T;
    ``ratio(M, dk)``: interference over signal with P_jj = d_k/M, sqrt(M/d_k - 1).
    """
    gradient = gradient or (lambda K, Wt, V: 2 * K.T * (K * Wt - V))
    quadratic_rule = quadratic_rule or (lambda S, x: 2 * S * x)
    linear_rule = linear_rule or (lambda c, x: c)
    solution = solution or (lambda K, V: V.T * K * (K.T * K).inv())
    min_norm = min_norm or (lambda K, V: V.T * (K * K.T).inv() * K)
    projection = projection or (lambda K: K * (K.T * K).inv() * K.T)
    ratio = ratio or (lambda M, dk: sp.sqrt(M / dk - 1))

    tall, values, wt = matrix("k", 3, 2), matrix("v", 3, 2), matrix("w", 2, 2)
    loss = frobenius2(tall * wt - values)
    c.check("the gradient of ||K W^T - V||_F^2 with respect to W^T, entry by entry, is the "
            "claimed one (3x2 symbolic K, 3x2 V)",
            lambda: same(wt.applyfunc(lambda w: sp.diff(loss, w)), gradient(tall, wt, values)))

    # the step, as Appendix B takes it: expand the square, apply two rules, one column at a time
    x, b = vector("x", 2), vector("b", 3)
    residual = tall * x - b
    c.check("expansion: ||K x - b||^2 = x^T K^T K x - 2 (K^T b)^T x + b^T b (symbolic)",
            lambda: vanishes((residual.T * residual)[0] - (x.T * tall.T * tall * x)[0]
                             + 2 * ((tall.T * b).T * x)[0] - (b.T * b)[0]))
    sym = matrix("s", 2, 2)
    sym = (sym + sym.T) / 2
    coefficients = vector("c", 2)
    c.check("rule 1: the gradient of x^T S x for a symmetric S is the claimed one (2x2 symbolic "
            "S)", lambda: same(x.applyfunc(lambda xi: sp.diff((x.T * sym * x)[0], xi)),
                                quadratic_rule(sym, x)))
    c.check("rule 2: the gradient of c^T x is the claimed one",
            lambda: same(x.applyfunc(lambda xi: sp.diff((coefficients.T * x)[0], xi)),
                         linear_rule(coefficients, x)))
    columns = [wt[:, j] for j in range(wt.cols)]
    c.check("||K W^T - V||_F^2 is the sum over the columns w_j of W^T of ||K w_j - v_j||^2, one "
            "least-squares problem per value coordinate",
            lambda: vanishes(loss - sum(frobenius2(tall * w - values[:, j])
                                        for j, w in enumerate(columns))))
    c.check("the rules, applied column by column with S = K^T K and c = K^T v_j and stacked, "
            "give the claimed gradient",
            lambda: same(sp.Matrix.hstack(*[quadratic_rule(tall.T * tall, w)
                                            - 2 * linear_rule(tall.T * values[:, j], w)
                                            for j, w in enumerate(columns)]),
                         gradient(tall, wt, values)))
    stored = solution(tall, values)
    c.check("the claimed store solves the normal equations K^T K W^T = K^T V (M = 3 > d_k = 2)",
            lambda: same(tall.T * tall * stored.T, tall.T * values))
    c.check("the gradient vanishes there", lambda: vanishes(gradient(tall, stored.T, values)))

    wide, few = matrix("k", 2, 3), matrix("v", 2, 2)
    exact = min_norm(wide, few)
    c.check("M = 2 < d_k = 3: the claimed store recalls every pair exactly, K W^T = V",
            lambda: same(wide * exact.T, few))
    null = wide[0, :].cross(wide[1, :]).T  # K null = 0
    c.check("minimum norm: with n spanning the null space of K (K n = 0), W n = 0, so every "
            "other exact store W^T + n c^T has squared norm ||W^T||^2 + ||n||^2 ||c||^2",
            lambda: vanishes(wide * null) and vanishes(exact * null))

    P = reduced(projection(tall))
    c.check("recall: K W^T = P V with the claimed projection", lambda: same(tall * stored.T,
                                                                             P * values))
    c.check("P is symmetric", lambda: same(P, P.T))
    c.check("P is idempotent, P^2 = P", lambda: is_idempotent(P))
    c.check("tr P = d_k = 2", lambda: vanishes(P.trace() - 2))
    c.check("sum_{i != j} P_ji^2 = P_jj - P_jj^2 (row j = 1)",
            lambda: vanishes(sum(P[0, i] ** 2 for i in (1, 2)) - (P[0, 0] - P[0, 0] ** 2)))
    M, dk = sp.symbols("M d_k", positive=True)
    pjj = dk / M
    claimed = sp.sympify(ratio(M, dk))
    c.check("with P_jj = d_k/M, sqrt(P_jj - P_jj^2)/P_jj equals the claimed ratio (symbolic M, "
            "d_k; compared as squares, the claim positive for M > d_k)",
            lambda: vanishes((pjj - pjj**2) / pjj**2 - claimed**2)
            and claimed.subs({M: 3, dk: 1}) > 0)

    rng = np.random.default_rng(seed)
    m, k, trials = 64, 16, 200
    keys = rng.standard_normal((trials, m, k))
    keys_t = np.swapaxes(keys, 1, 2)
    proj = keys @ np.linalg.solve(keys_t @ keys, keys_t)
    diag = np.diagonal(proj, axis1=1, axis2=2)
    measured = float(np.sqrt(np.mean((diag - diag**2) / diag**2)))
    target = float(claimed.subs({M: m, dk: k}))
    c.check(f"Monte Carlo, M = {m} Gaussian keys in d_k = {k}, {trials} draws (seed {seed}): "
            f"root-mean-square interference/signal {measured:.3f} against {target:.3f}, "
            "relative tolerance 10% (P_jj = d_k/M holds on average only)",
            lambda: close(measured, target, 0.10))


@verification("D5", "RLS: W_t = W_{t-1} + (v - W_{t-1} k)(R k)^T / (1 + k^T R k) equals the "
              "ridge memory G_t R_t after one more pair")
def d5(c: Checklist, sherman_morrison=None, update=None, *, seed: int = 5) -> None:
    """D5: recursive least squares is the ridge memory updated by Sherman-Morrison.

    Claims: ``sherman_morrison(R, k)``: the inverse of R^{-1} + k k^T,
    R - R k k^T R / (1 + k^T R k);
    ``update(W, R, k, v)``: the new memory, W + (v - W k)(R k)^T / (1 + k^T R k).
    """
    sherman_morrison = sherman_morrison or (
        lambda R, k: R - R * k * k.T * R / (1 + (k.T * R * k)[0]))
    update = update or (lambda W, R, k, v: W + (v - W * k) * (R * k).T / (1 + (k.T * R * k)[0]))

    a, b, e = sp.symbols("a b e", real=True)
    gram = sp.Matrix([[a, b], [b, e]])  # lambda I + sum of k_i k_i^T so far: any symmetric
    R = reduced(gram.inv())
    G = matrix("g", 2, 2)  # sum of v_i k_i^T so far
    k, v = vector("k", 2), vector("v", 2)
    new_R = sherman_morrison(R, k)
    c.check("Sherman-Morrison: the claimed R_t times (R_{t-1}^{-1} + k k^T) is the identity "
            "(symbolic symmetric R_{t-1}^{-1}, symbolic k)",
            lambda: same(new_R * (gram + k * k.T), sp.eye(2)))
    ridge_next = reduced((G + v * k.T) * (gram + k * k.T).inv())
    c.check("the claimed update of W_{t-1} = G_{t-1} R_{t-1} equals the ridge memory "
            "(G_{t-1} + v k^T)(R_{t-1}^{-1} + k k^T)^{-1} after the new pair (2x2 symbolic)",
            lambda: same(update(reduced(G * R), R, k, v), ridge_next))

    lam = sp.Symbol("lambda", positive=True)
    keys, targets = [vector(f"x{i}", 2) for i in range(2)], sp.symbols("y0:2", real=True)
    w = matrix("w", 1, 2)
    ridge_loss = sum(((w * x)[0] - y) ** 2 for x, y in zip(keys, targets)) + lam * frobenius2(w)
    G2 = sum((y * x.T for x, y in zip(keys, targets)), sp.zeros(1, 2))
    R2 = (lam * sp.eye(2) + sum((x * x.T for x in keys), sp.zeros(2, 2))).inv()
    optimum = dict(zip(w, G2 * R2))
    c.check("G_t R_t minimises sum_i (W k_i - v_i)^2 + lambda ||W||^2: its gradient vanishes "
            "(two symbolic pairs, symbolic lambda)",
            lambda: all(vanishes(sp.diff(ridge_loss, x).subs(optimum)) for x in w))

    rng = np.random.default_rng(seed)
    dk, dv, steps, ridge = 3, 2, 12, 0.5
    xs, ys = rng.standard_normal((steps, dk)), rng.standard_normal((steps, dv))
    W_num, R_num = sp.zeros(dv, dk), sp.eye(dk) / ridge
    for x, y in zip(xs, ys):
        kk, vv = sp.Matrix(x), sp.Matrix(y)
        W_num, R_num = update(W_num, R_num, kk, vv), sherman_morrison(R_num, kk)
    batch = ys.T @ xs @ np.linalg.inv(ridge * np.eye(dk) + xs.T @ xs)
    gap = float(np.max(np.abs(np.array(W_num, dtype=float) - batch)))
    c.check(f"{steps} claimed updates from W = 0, R = I/lambda on random pairs (seed {seed}, "
            f"lambda = {ridge}) match batch ridge: largest gap {gap:.1e}, tolerance 1e-9",
            lambda: gap < 1e-9)


@verification("D14", "For a linear layer y = W x, dL/dW = ybar x^T with ybar = dL/dy")
def d14(c: Checklist, gradient=None) -> None:
    """D14: for y = W x, dL/dW = ybar x^T with ybar = dL/dy.

    ``gradient(ybar, x)``: the claimed gradient (default ybar x^T).
    """
    gradient = gradient or (lambda ybar, x: ybar * x.T)
    W, x = matrix("w", 2, 3), vector("x", 3)
    y = vector("y", 2)
    out = W * x
    losses = {
        "softmax cross-entropy log(sum_i e^{y_i}) - y_0":
            sp.log(sum(sp.exp(yi) for yi in y)) - y[0],
        "Hebbian correlation -u^T y (so a descent step adds u x^T)":
            -(vector("u", 2).T * y)[0],
    }
    for name, L in losses.items():
        ybar = y.applyfunc(lambda yi, L=L: sp.diff(L, yi)).subs(dict(zip(y, out)))
        direct = W.applyfunc(lambda w, L=L: sp.diff(L.subs(dict(zip(y, out))), w))
        c.check(f"{name}: differentiating L(W x) entry by entry gives the claim "
                "(2x3 symbolic W, symbolic x)",
                lambda d=direct, yb=ybar: same(d, gradient(yb, x)))


@verification("D17", "argmin tr(Delta C Delta^T)/2 subject to Delta k* = r is "
              "Delta = r (C^{-1} k*)^T / (k*^T C^{-1} k*)")
def d17(c: Checklist, edit=None, *, seed: int = 17) -> None:
    """D17: the rank-one edit Delta = r (C^{-1} k)^T / (k^T C^{-1} k).

    ``edit(C, k, r)``: the claimed minimiser of tr(Delta C Delta^T)/2 subject to
    Delta k = r.
    """
    edit = edit or (lambda C, k, r: r * (C.inv() * k).T / (k.T * C.inv() * k)[0])
    c0, c1, c2 = sp.symbols("c0 c1 c2", real=True)
    C = sp.Matrix([[c0, c1], [c1, c2]])
    k, r = vector("k", 2), vector("r", 2)
    delta = edit(C, k, r)
    free = matrix("D", 2, 2)
    objective = (free * C * free.T).trace() / 2
    grad = free.applyfunc(lambda x: sp.diff(objective, x))
    c.check("the gradient of tr(Delta C Delta^T)/2 is Delta C (symmetric symbolic C)",
            lambda: same(grad, free * C))
    c.check("the constraint holds: Delta k* = r", lambda: same(delta * k, r))
    at_edit = grad.subs(dict(zip(free, delta)))
    across = sp.Matrix([-k[1], k[0]])  # a direction with across^T k* = 0
    multiplier = r / (k.T * C.inv() * k)[0]
    c.check("the Lagrangian condition holds: Delta C = lambda k*^T with "
            "lambda = r / (k*^T C^{-1} k*)", lambda: same(at_edit, multiplier * k.T))
    u = vector("u", 2)
    step = u * across.T  # any feasible change: step k* = 0

    def value(D):
        return (D * C * D.T).trace() / 2

    c.check("every other feasible Delta + u a^T (a^T k* = 0) costs "
            "tr(Delta C Delta^T)/2 + tr(u a^T C a u^T)/2: the cross term vanishes",
            lambda: vanishes(value(delta + step) - value(delta) - value(step)))

    rng = np.random.default_rng(seed)
    C_num = sp.Matrix([[2, sp.Rational(3, 5)], [sp.Rational(3, 5), sp.Rational(1, 2)]])
    k_num, r_num = sp.Matrix([1, 1]), sp.Matrix([1, -2])
    delta_num = np.array(edit(C_num, k_num, r_num), dtype=float)
    plain = np.array(r_num * k_num.T / 2, dtype=float)
    keys = rng.multivariate_normal(np.zeros(2), np.array(C_num, dtype=float), size=100000)
    cost = float(np.mean(np.sum((keys @ delta_num.T) ** 2, axis=1)))
    target = float(np.trace(delta_num @ np.array(C_num, dtype=float) @ delta_num.T))
    c.check(f"Monte Carlo, 100000 keys with second moment C (seed {seed}): mean ||Delta k||^2 "
            f"= {cost:.4f} against tr(Delta C Delta^T) = {target:.4f}, relative tolerance 3%",
            lambda: close(cost, target, 0.03))
    plain_cost = float(np.mean(np.sum((keys @ plain.T) ** 2, axis=1)))
    c.check(f"on the same keys the edit costs less than the plain-key edit r k*^T/||k*||^2 "
            f"({cost:.4f} < {plain_cost:.4f})", lambda: cost < plain_cost)
