"""Derivations about random vectors: D1, D2 (moments of a dot product of unit vectors),
D7 (capacity of the softmax memory) and D13 (variance of a dot product).

Each verification computes the quantity with SymPy, with the dimension as a symbol,
compares it with the claimed formula (the monograph's by default), and adds a Monte
Carlo confirmation with a fixed seed whose tolerance is stated in its line.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp

from ._core import Checklist, close, sphere_coordinate, unit_vectors, vanishes, verification

_D = sp.Symbol("d", positive=True, integer=True)


@cache
def _gaussian_route(p: int):
    """E[s^{2p}] for s = g_1/||g||, as E[g_1^{2p}] / E[||g||^{2p}] (symbolic d).

    g/||g|| is independent of ||g||, so E[g_1^{2p}] = E[||g||^{2p}] E[s^{2p}]; the
    numerator is a Gaussian moment and ||g||^2 is chi-square with d degrees of freedom.
    """
    g = sp.Symbol("g", real=True)
    x = sp.Symbol("x", positive=True)
    gauss = sp.exp(-g**2 / 2) / sp.sqrt(2 * sp.pi)
    chi2 = x ** (_D / 2 - 1) * sp.exp(-x / 2) / (2 ** (_D / 2) * sp.gamma(_D / 2))
    numerator = sp.integrate(g ** (2 * p) * gauss, (g, -sp.oo, sp.oo))
    denominator = sp.integrate(x**p * chi2, (x, 0, sp.oo), conds="none")
    return sp.gammasimp(numerator / denominator)


@verification("D1", "E[(k^T k')^2] = 1/d for independent uniform unit vectors k, k' in R^d")
def d1(c: Checklist, moment=None, *, seed: int = 1) -> None:
    """D1: E[(k^T k')^2] = 1/d for independent uniform unit vectors of R^d.

    ``moment(d)``: the claimed value of E[(k^T k')^2] (default 1/d).
    """
    claim = sp.sympify((moment or (lambda d: 1 / d))(_D))
    c.check("exchangeability: the d coordinates of k share one second moment and their squares "
            "sum to 1, so d * E[k_1^2] = 1 (symbolic d)", lambda: vanishes(_D * claim - 1))
    a, b = sp.Rational(1, 2), (_D - 1) / 2
    c.check("Beta route: k_1^2 ~ Beta(1/2, (d-1)/2) has mean Gamma(a+1)Gamma(a+b) / "
            "(Gamma(a)Gamma(a+b+1)), which equals the claim (symbolic d)",
            lambda: vanishes(sp.gammasimp(sp.gamma(a + 1) * sp.gamma(a + b)
                                          / (sp.gamma(a) * sp.gamma(a + b + 1))) - claim))
    c.check("Gaussian route: E[g_1^2] / E[||g||^2] with ||g||^2 chi-square(d) equals the claim "
            "(symbolic d)", lambda: vanishes(_gaussian_route(1) - claim))
    rng = np.random.default_rng(seed)
    for dim in (4, 16, 64):
        k, k2 = unit_vectors(rng, 20000, dim), unit_vectors(rng, 20000, dim)
        estimate = float(np.mean(np.sum(k * k2, axis=1) ** 2))
        target = float(claim.subs(_D, dim))
        c.check(f"Monte Carlo, d = {dim}, 20000 pairs (seed {seed}): mean of (k^T k')^2 = "
                f"{estimate:.5f} against {target:.5f}, relative tolerance 5%",
                lambda e=estimate, t=target: close(e, t, 0.05))


def _default_moments():
    return {1: lambda d: 1 / d,
            2: lambda d: 3 / (d * (d + 2)),
            3: lambda d: 15 / (d * (d + 2) * (d + 4))}


@verification("D2", "E[(k^T q)^{2p}] = prod_{j<p} (1/2+j)/(d/2+j) = 1*3*...*(2p-1) / "
              "(d(d+2)...(d+2p-2)) for unit vectors in R^d")
def d2(c: Checklist, moments=None, factor=None, *, seed: int = 2) -> None:
    """D2: E[s^{2p}] = prod_{j<p} (1/2 + j)/(d/2 + j) for s = k^T q, unit vectors in R^d.

    ``moments``: dict p -> callable(d), the claimed closed forms for p = 1, 2, 3
    (default 1/d, 3/(d(d+2)), 15/(d(d+2)(d+4))).
    ``factor(d, j)``: the claimed j-th factor of the product formula
    (default (1/2 + j)/(d/2 + j)).
    """
    closed = {p: sp.sympify(f(_D)) for p, f in (moments or _default_moments()).items()}
    factor = factor or (lambda d, j: (sp.Rational(1, 2) + j) / (d / 2 + j))
    p = sp.Symbol("p", integer=True, positive=True)
    j = sp.Symbol("j", integer=True, nonnegative=True)
    a, b = sp.Rational(1, 2), (_D - 1) / 2
    beta_moment = sp.gamma(a + p) * sp.gamma(a + b) / (sp.gamma(a) * sp.gamma(a + b + p))
    product = sp.Product(factor(_D, j), (j, 0, p - 1)).doit()

    c.check("general product formula: the p-th moment of Beta(1/2, (d-1)/2), "
            "Gamma(a+p)Gamma(a+b) / (Gamma(a)Gamma(a+b+p)), equals the claimed product "
            "(symbolic d and p)", lambda: sp.gammasimp(beta_moment - product) == 0)
    for q in (1, 2, 3):
        c.check(f"p = {q}: the claimed closed form {closed.get(q)} equals the Beta moment and "
                f"the product (symbolic d)",
                lambda q=q: vanishes(closed[q] - sp.gammasimp(beta_moment.subs(p, q)))
                and vanishes(closed[q] - product.subs(p, q).doit()))
        c.check(f"p = {q}: Gaussian route E[g_1^{2 * q}] / E[||g||^{2 * q}] equals the claim "
                f"(symbolic d)", lambda q=q: vanishes(_gaussian_route(q) - closed[q]))
    rng = np.random.default_rng(seed)
    dim = 8
    s = unit_vectors(rng, 200000, dim)[:, 0]
    for q in (1, 2, 3):
        estimate = float(np.mean(s ** (2 * q)))
        target = float(closed[q].subs(_D, dim))
        c.check(f"Monte Carlo, d = {dim}, 200000 unit vectors (seed {seed}): E[s^{2 * q}] = "
                f"{estimate:.6f} against {target:.6f}, relative tolerance 5%",
                lambda e=estimate, t=target: close(e, t, 0.05))


@verification("D7", "Softmax memory with unit keys and s ~ N(0, 1/d): interference/signal "
              "= sqrt(M) exp(beta^2/d - beta), so its capacity is "
              "M = exp(2 beta (1 - beta/d))")
def d7(c: Checklist, mgf=None, capacity=None, *, seed: int = 7) -> None:
    """D7: the softmax memory holds M = exp(2 beta (1 - beta/d)) pairs.

    ``mgf(beta, d)``: the claimed E[exp(2 beta s)] for s ~ N(0, 1/d)
    (default exp(2 beta^2/d)).
    ``capacity(beta, d)``: the claimed capacity (default exp(2 beta (1 - beta/d))).
    """
    beta, d = sp.Symbol("beta", positive=True), sp.Symbol("d", positive=True)
    claimed_mgf = sp.sympify((mgf or (lambda b_, d_: sp.exp(2 * b_**2 / d_)))(beta, d))
    claimed_cap = sp.sympify(
        (capacity or (lambda b_, d_: sp.exp(2 * b_ * (1 - b_ / d_))))(beta, d))
    s = sp.Symbol("s", real=True)
    # Complete the square: 2 beta s - d s^2/2 = 2 beta^2/d - d (s - 2 beta/d)^2/2, and the
    # shifted Gaussian density integrates to one.
    u = sp.Symbol("u", real=True)
    exponent = sp.expand((2 * beta * s - d * s**2 / 2).subs(s, u + 2 * beta / d))
    constant = exponent.subs(u, 0)
    gaussian = sp.sqrt(d / (2 * sp.pi)) * sp.exp(exponent - constant)
    c.check("moment generating function: completing the square in the integral of "
            "exp(2 beta s) against the N(0, 1/d) density leaves exp(2 beta^2/d) times a "
            "shifted density, which equals the claimed E[exp(2 beta s)] (symbolic beta, d)",
            lambda: vanishes(sp.diff(exponent, u).subs(u, 0))
            and sp.simplify(sp.exp(constant) * sp.integrate(gaussian, (u, -sp.oo, sp.oo))
                            - claimed_mgf) == 0)
    order = 10
    moment_series = sum(sp.factorial2(2 * n - 1) / d**n * (2 * beta) ** (2 * n)
                        / sp.factorial(2 * n) for n in range(order // 2))
    c.check(f"series: the claimed E[exp(2 beta s)] expands, to order beta^{order - 1}, as "
            "sum_n E[s^(2n)] (2 beta)^(2n) / (2n)! with the Gaussian moments (2n-1)!!/d^n",
            lambda: vanishes(sp.series(claimed_mgf, beta, 0, order).removeO() - moment_series))
    # ratio^2 = (M - 1) E[exp(2 beta s)] / exp(2 beta) ~ M E[exp(2 beta s)] exp(-2 beta) = 1,
    # linear in log M
    log_m = sp.Symbol("x", real=True)
    solved = sp.solve(log_m + sp.log(claimed_mgf) - 2 * beta, log_m)
    c.check("solving M E[exp(2 beta s)] exp(-2 beta) = 1 for log M gives the log of the claimed "
            "capacity (symbolic beta, d)",
            lambda: len(solved) == 1
            and vanishes(sp.expand_log(sp.log(claimed_cap), force=True) - solved[0]))
    value = float(claimed_cap.subs({beta: 8, d: 64}))
    c.check(f"the number: at d = 64 and beta = sqrt(d) = 8 the claimed capacity is {value:.4g}, "
            "which should be e^14, about 1.2e6",
            lambda: close(value, float(sp.exp(14)), 1e-12) and f"{value:.1e}" == "1.2e+06")
    rng = np.random.default_rng(seed)
    draws = 400_000
    estimate = float(np.mean(np.exp(16 * sphere_coordinate(rng, draws, 64))))
    target = float(claimed_mgf.subs({beta: 8, d: 64}))
    c.check(f"Monte Carlo, d = 64, beta = 8, {draws} unit-vector similarities (seed {seed}): "
            f"the exact E[exp(2 beta s)] on the sphere is {estimate:.3f} against the Gaussian "
            f"{target:.3f}, relative tolerance 10% (the Gaussian law of s is asymptotic)",
            lambda: close(estimate, target, 0.10))
    dim, b = 32, 4
    m = round(float(claimed_cap.subs({beta: b, d: dim})))
    trials = 100
    similarities = sphere_coordinate(rng, trials * (m - 1), dim).reshape(trials, m - 1)
    values = unit_vectors(rng, trials * (m - 1), dim).reshape(trials, m - 1, dim)
    interference = np.einsum("tm,tmd->td", np.exp(b * similarities), values)
    ratio = float(np.sqrt(np.mean(np.sum(interference**2, axis=1)) / np.exp(2 * b)))
    c.check(f"Monte Carlo, d = {dim}, beta = {b}, M = {m} stored pairs, {trials} recalls "
            f"(seed {seed}): root-mean-square interference/signal = {ratio:.3f} at the claimed "
            "capacity, against 1 with relative tolerance 10%", lambda: close(ratio, 1.0, 0.10))


def _independent_expectation(expr, variables, moments):
    """E[expr] for a polynomial in independent variables that share the moments
    ``moments`` (a dict power -> value)."""
    poly = sp.Poly(sp.expand(expr), *variables)
    total = 0
    for powers, coefficient in poly.terms():
        term = coefficient
        for power in powers:
            term *= moments[power] if power else 1
        total += term
    return sp.expand(total)


@verification("D13", "Var(q^T k) = d_k when the entries of q and k are independent with "
              "mean 0 and variance 1")
def d13(c: Checklist, variance=None, *, seed: int = 13) -> None:
    """D13: Var(q^T k) = d_k for independent zero-mean unit-variance entries.

    ``variance(d)``: the claimed variance (default d).
    """
    claim = sp.sympify((variance or (lambda d: d))(_D))
    i = sp.Symbol("i", integer=True, positive=True)
    mean_q, mean_k, square_q, square_k = sp.symbols("m_q m_k s_q s_k", real=True)
    # The d terms q_i k_i are independent, so their variances add; each is
    # E[q_i^2] E[k_i^2] - (E[q_i] E[k_i])^2 by the independence of q_i and k_i.
    per_term = square_q * square_k - (mean_q * mean_k) ** 2
    total = sp.Sum(per_term, (i, 1, _D)).doit().subs(
        {mean_q: 0, mean_k: 0, square_q: 1, square_k: 1})
    c.check("Var(q^T k) = sum_i (E[q_i^2] E[k_i^2] - (E[q_i] E[k_i])^2) with means 0 and "
            "second moments 1 equals the claim (symbolic d)", lambda: vanishes(total - claim))
    dim = 4
    q, k = sp.symbols(f"q0:{dim}", real=True), sp.symbols(f"k0:{dim}", real=True)
    mu3, mu4 = sp.symbols("mu3 mu4", real=True)
    moments = {1: 0, 2: 1, 3: mu3, 4: mu4}
    dot = sum(a * b for a, b in zip(q, k))

    def exact_variance():
        mean = _independent_expectation(dot, q + k, moments)
        return _independent_expectation(dot**2, q + k, moments) - mean**2

    c.check(f"d = {dim}: expanding E[(q^T k)^2] - E[q^T k]^2 over independent entries with any "
            "third and fourth moments gives the claim", lambda: vanishes(exact_variance()
                                                                       - claim.subs(_D, dim)))
    rng = np.random.default_rng(seed)
    dim, draws = 64, 20000
    target = float(claim.subs(_D, dim))
    samples = {"Gaussian": lambda: rng.standard_normal((draws, dim)),
               "random-sign": lambda: rng.choice([-1.0, 1.0], size=(draws, dim))}
    for name, draw in samples.items():
        estimate = float(np.var(np.sum(draw() * draw(), axis=1)))
        c.check(f"Monte Carlo, {name} entries, d_k = {dim}, {draws} draws (seed {seed}): "
                f"Var(q^T k) = {estimate:.2f} against {target:.2f}, relative tolerance 5%",
                lambda e=estimate: close(e, target, 0.05))
