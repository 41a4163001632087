"""Derivations about reading a memory linearly: D10 (a polynomial read is a fixed-size
state), D11 and D12 (gradient steps are linear-attention layers) and D15 (the
exponential kernel as an inner product of tensor powers, and no finite feature map for it)."""

from __future__ import annotations

import sympy as sp
from sympy.polys.matrices import DomainMatrix

from ._core import Checklist, frobenius2, matrix, same, vanishes, vector, verification


def _tensor_power(x: sp.Matrix, p: int) -> sp.Matrix:
    """vec(x ⊗ ... ⊗ x), p factors (a column of length len(x)**p; [1] for p = 0)."""
    out = sp.Matrix([1])
    for _ in range(p):
        out = sp.kronecker_product(out, x)
    return out


@verification("D10", "sum_{i<=t} v_i (k_i^T q)^p = (sum_{i<=t} v_i vec(k_i^{⊗p})^T) "
              "vec(q^{⊗p}): a read of a d_v x d_k^p state, whatever t")
def d10(c: Checklist, feature=None, state=None) -> None:
    """D10: a degree-p polynomial read sum_i v_i (k_i^T q)^p is a read of a fixed state.

    Claims: ``feature(x, p)``: the feature vector, vec(x^{⊗p});
    ``state(keys, values, p)``: the state, sum_i v_i feature(k_i, p)^T.
    """
    feature = feature or _tensor_power
    state = state or (lambda keys, values, p: sum(
        (v * feature(k, p).T for k, v in zip(keys, values)),
        sp.zeros(values[0].shape[0], keys[0].shape[0] ** p)))
    t, dk, dv = 3, 2, 2
    keys = [vector(f"k{i}", dk) for i in range(t)]
    values = [vector(f"v{i}", dv) for i in range(t)]
    q = vector("q", dk)
    for p in (1, 2, 3):
        read = sum((v * (k.T * q)[0] ** p for k, v in zip(keys, values)), sp.zeros(dv, 1))
        c.check(f"p = {p}: the read of {t} symbolic pairs equals the claimed state times the "
                "claimed query feature", lambda p=p, read=read: same(
                    read, state(keys, values, p) * feature(q, p)))
    for p in (2, 3):
        c.check(f"p = {p}: (k^T q)^p = <k^{{⊗{p}}}, q^{{⊗{p}}}> with the claimed features "
                "(symbolic k, q)",
                lambda p=p: vanishes((feature(keys[0], p).T * feature(q, p))[0]
                                     - (keys[0].T * q)[0] ** p))
    shapes = {state(keys[:m], values[:m], 2).shape for m in (1, 2, 3)}
    c.check(f"p = 2: the state has one shape, {dv} x {dk}^2, for t = 1, 2, 3 pairs "
            f"(found {sorted(shapes)})", lambda: shapes == {(dv, dk**2)})


def _squared_loss(W: sp.Matrix, xs, ys):
    return sum(frobenius2(W * x - y) for x, y in zip(xs, ys)) / 2


def _gradient_step(W: sp.Matrix, xs, ys, eta) -> sp.Matrix:
    """W - eta dL/dW for L = sum_i ||W x_i - y_i||^2 / 2, differentiated by SymPy."""
    free = matrix("omega", *W.shape)
    loss = _squared_loss(free, xs, ys)
    grad = free.applyfunc(lambda w: sp.diff(loss, w)).subs(dict(zip(free, W)))
    return W - eta * grad


@verification("D11", "One gradient step from W_0 = 0 on sum_i ||W x_i - y_i||^2 / 2 gives "
              "W_1 = eta sum_i y_i x_i^T, and W_1 x_q = eta sum_i y_i (x_i^T x_q), a "
              "linear-attention readout")
def d11(c: Checklist, readout=None) -> None:
    """D11: one gradient step from W_0 = 0 predicts eta sum_i y_i (x_i^T x_q).

    ``readout(xs, ys, xq, eta)``: the claimed prediction W_1 x_q (a linear-attention
    read with keys x_i, values y_i and query x_q).
    """
    readout = readout or (lambda xs, ys, xq, eta: eta * sum(
        (y * (x.T * xq)[0] for x, y in zip(xs, ys)), sp.zeros(ys[0].shape[0], 1)))
    eta = sp.Symbol("eta", positive=True)
    xs = [vector(f"x{i}", 2) for i in range(3)]
    ys = [vector(f"y{i}", 2) for i in range(3)]
    xq = vector("z", 2)
    W1 = _gradient_step(sp.zeros(2, 2), xs, ys, eta)
    c.check("the step, differentiated by SymPy (3 symbolic pairs in R^2, symbolic eta), is "
            "the Hebbian store eta sum_i y_i x_i^T",
            lambda: same(W1, eta * sum((y * x.T for x, y in zip(xs, ys)), sp.zeros(2, 2))))
    c.check("W_1 x_q equals the claimed readout", lambda: same(W1 * xq, readout(xs, ys, xq, eta)))


@verification("D12", "A linear-attention layer with keys x_i, values r_i = y_i - W_{k-1} x_i "
              "and query x_q outputs W_{k-1} x_q + eta sum_i r_i x_i^T x_q = W_k x_q; "
              "k layers are k gradient steps")
def d12(c: Checklist, layer=None) -> None:
    """D12: k linear-attention layers that read residuals are k gradient steps.

    ``layer(pred, x, xs, ys, preds, eta)``: a token's new prediction given its prediction
    ``pred`` at input ``x``, the examples (xs, ys) and the examples' predictions ``preds``;
    default pred + eta sum_i (y_i - preds_i) (x_i^T x).
    """
    layer = layer or (lambda pred, x, xs, ys, preds, eta: pred + eta * sum(
        ((y - p) * (xi.T * x)[0] for xi, y, p in zip(xs, ys, preds)), sp.zeros(*pred.shape)))
    eta = sp.Symbol("eta", positive=True)
    xs = [vector(f"x{i}", 2) for i in range(2)]
    ys = [vector(f"y{i}", 1) for i in range(2)]
    xq = vector("z", 2)
    W = matrix("w", 1, 2)
    c.check("one layer on top of any symbolic W_{k-1}: the claimed output equals the query "
            "prediction after one more gradient step (SymPy's derivative)",
            lambda: same(layer(W * xq, xq, xs, ys, [W * x for x in xs], eta),
                         _gradient_step(W, xs, ys, eta) * xq))
    preds, query, weights = [sp.zeros(1, 1) for _ in xs], sp.zeros(1, 1), sp.zeros(1, 2)
    for k in (1, 2, 3):
        query = sp.expand(layer(query, xq, xs, ys, preds, eta))
        preds = [sp.expand(layer(p, x, xs, ys, preds, eta)) for p, x in zip(preds, xs)]
        weights = sp.expand(_gradient_step(weights, xs, ys, eta))
        c.check(f"stack of {k} claimed layer(s) from zero, every token updated: the query's "
                f"prediction equals W_{k} x_q after {k} gradient step(s) (2 symbolic examples)",
                lambda query=query, weights=weights: same(query, weights * xq))


def _gram_rank(kernel, n: int) -> int:
    """The exact rank of the Gram matrix [kernel(1, x_i x_j)] on the n points x_i = 0..n-1.

    With beta = 1 the exponential kernel's entries are powers of e, e^(ij). Every e^m is
    written t^m for a symbol t and the rank is taken over the field Q(t): since e is
    transcendental, a polynomial in t with rational coefficients vanishes at t = e only if it
    vanishes identically, so this is the rank at t = e, computed without rounding.
    """
    t = sp.Symbol("t")

    def entry(i, j):
        value = sp.sympify(kernel(sp.Integer(1), sp.Integer(i * j))).rewrite(sp.exp)
        value = value.replace(lambda x: isinstance(x, sp.exp), lambda x: t ** x.args[0])
        return value.subs(sp.E, t)

    values = sp.Matrix(n, n, entry)
    gram = DomainMatrix.from_Matrix(values)
    if gram.domain.is_EX or not values.free_symbols <= {t}:
        raise ValueError("the kernel's values at integer points are not rational functions "
                         "of e")
    return gram.convert_to(gram.domain.get_field()).rank()


@verification("D15", "exp(beta q^T k) = sum_p beta^p/p! (q^T k)^p = <Phi(q), Phi(k)> with "
              "Phi(x) = (sqrt(beta^p/p!) x^{⊗p})_{p>=0}; no finite feature map reproduces it "
              "(its Gram matrix on n distinct points has rank n for every n), and truncating "
              "at degree P gives sum_{p<=P} d_k^p features that only approximate it")
def d15(c: Checklist, coefficient=None, kernel=None) -> None:
    """D15: exp(beta q^T k) = <Phi(q), Phi(k)>, Phi(x) = (sqrt(beta^p/p!) x^{⊗p})_p, and no
    finite feature map gives the same kernel.

    ``coefficient(beta, p)``: the claimed weight of (q^T k)^p, beta^p / p!;
    ``kernel(beta, s)``: the kernel Phi reproduces, as a function of s = q^T k, exp(beta s).
    A map of D features gives Gram matrices of rank at most D, so a kernel whose Gram
    matrices on n points reach rank n for n = 1..12 needs more than 11 features; the
    Vandermonde structure of [e^(ij)] (Appendix D) makes that true for every n.
    """
    coefficient = coefficient or (lambda beta, p: beta**p / sp.factorial(p))
    kernel = kernel or (lambda beta, s: sp.exp(beta * s))
    beta, s = sp.Symbol("beta", positive=True), sp.Symbol("s", real=True)
    top = 3
    series = sp.series(kernel(beta, s), s, 0, top + 2).removeO()
    c.check(f"the Taylor series of the claimed kernel has the claimed coefficients up to degree "
            f"{top + 1}", lambda: all(vanishes(series.coeff(s, p) - coefficient(beta, p))
                                      for p in range(top + 2)))
    q, k = vector("q", 2), vector("k", 2)

    def features(x):
        return sp.Matrix.vstack(*(sp.sqrt(coefficient(beta, p)) * _tensor_power(x, p)
                                  for p in range(top + 1)))

    truncated = sum(coefficient(beta, p) * (q.T * k)[0] ** p for p in range(top + 1))
    c.check(f"P = {top}: the truncated kernel sum_(p<=P) c_p (q^T k)^p equals <Phi_P(q), "
            "Phi_P(k)> (symbolic q, k in R^2)",
            lambda: vanishes((features(q).T * features(k))[0] - truncated))
    c.check(f"P = {top}, d_k = 2: Phi_P has sum_(p<=P) 2^p = {2 ** (top + 1) - 1} entries",
            lambda: features(q).shape == (2 ** (top + 1) - 1, 1))
    sizes = list(range(1, 13))
    try:
        ranks = [_gram_rank(kernel, n) for n in sizes]
    except ValueError as exc:  # a claimed kernel outside Q(e): its line fails, the rest runs
        ranks = f"not computed: {exc}"
    c.check(f"no finite feature map: the Gram matrix [kernel(1, x_i x_j)] of the claimed kernel "
            f"on n = 1..12 distinct points x_i = 0, 1, ... has rank n each time (exact, found "
            f"{ranks}), while a map of D features gives rank at most D",
            lambda: ranks == sizes)
    cut = [_gram_rank(lambda b, x: sum(coefficient(b, p) * x**p for p in range(top + 1)), n)
           for n in (4, 8, 12)]
    c.check(f"control: the claimed series cut at degree {top}, a map of {top + 1} features on "
            f"the line, has Gram rank {top + 1} at n = 4, 8, 12 (found {cut}): the rank test "
            "sees a finite map", lambda: cut == [top + 1] * 3)
    rest = kernel(beta, s) - sum(coefficient(beta, p) * s**p for p in range(top + 1))
    c.check(f"what truncation leaves out, the kernel minus the degree-{top} part, starts at "
            f"(beta s)^{top + 1}/{top + 1}!: not zero, so a truncated map only approximates",
            lambda: vanishes(sp.series(rest, s, 0, top + 2).removeO()
                             - (beta * s) ** (top + 1) / sp.factorial(top + 1)))
