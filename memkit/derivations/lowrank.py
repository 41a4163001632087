"""Derivations about rank, projections and the SVD: D4 (Eckart-Young) and D20 (eight
facts used throughout the text)."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import sympy as sp
from sympy.polys.matrices import DomainMatrix

from ._core import (cayley, Checklist, close, frobenius2, in_field, is_idempotent, matrix, reduced,
                    skew, unit_vectors, vanishes, vector, verification)


def _exact_rank(m: sp.Matrix) -> int:
    return DomainMatrix.from_Matrix(m).convert_to(sp.QQ).rank()


def _fractions(m: sp.Matrix) -> np.ndarray:
    """A rational SymPy matrix as a numpy array of exact Fractions."""
    return np.array([[Fraction(int(x.p), int(x.q)) for x in row] for row in m.tolist()],
                    dtype=object)


def _svd_terms(U, mu, V, chosen):
    return sum((mu[k] * U[:, k] * V[:, k].T for k in chosen), sp.zeros(U.shape[0], V.shape[0]))


@verification("D4", "Among matrices of rank <= r, ||A - B||_F^2 is smallest for the "
              "truncated SVD, where it equals sum_{k>r} mu_k^2")
def d4(c: Checklist, error=None, truncate=None, *, seed: int = 4) -> None:
    """D4: Eckart-Young. The truncated SVD is the best rank-r approximation in Frobenius
    norm, with squared error the discarded energy.

    Claims: ``error(mu, r)``: the squared error, sum of mu_k^2 over k > r;
    ``truncate(U, mu, V, r)``: the best rank-r approximation, the first r SVD terms.
    """
    error = error or (lambda mu, r: sum(m**2 for m in mu[r:]))
    truncate = truncate or (lambda U, mu, V, r: _svd_terms(U, mu, V, range(r)))
    U = cayley(skew(3, sp.symbols("a b e", real=True)))
    V = cayley(skew(3, sp.symbols("f g h", real=True)))
    mu = sp.symbols("mu1:4", positive=True)
    A = U * sp.diag(*mu) * V.T
    for r in (1, 2):
        c.check(f"energy identity, r = {r}: ||A - truncation||_F^2 equals the claimed error for "
                "A = U diag(mu) V^T with symbolic mu and symbolic orthogonal U, V (3x3, Cayley "
                "parametrised)",
                lambda r=r: vanishes(frobenius2(A - truncate(U, mu, V, r)) - error(mu, r)))

    rng = np.random.default_rng(seed)
    n, r = 4, 2
    Un = cayley(skew(n, [int(x) for x in rng.integers(-3, 4, 6)]))
    Vn = cayley(skew(n, [int(x) for x in rng.integers(-3, 4, 6)]))
    mun = [sp.Integer(x) for x in sorted(rng.choice(np.arange(1, 20), n, replace=False))[::-1]]
    An = Un * sp.diag(*mun) * Vn.T
    best = truncate(Un, mun, Vn, r)
    c.check(f"exact rational example ({n}x{n}, mu = {[int(m) for m in mun]}, r = {r}): the claimed "
            "approximation has rank <= r", lambda: _exact_rank(best) <= r)
    best_error = frobenius2(An - best)
    c.check(f"its squared error {best_error} equals the claimed error",
            lambda: best_error == error(mun, r))
    A_f, U_f, V_f = _fractions(An), _fractions(Un), _fractions(Vn)
    competitors = [_fractions(_svd_terms(Un, mun, Vn, pair))
                   for pair in combinations(range(n), r) if list(pair) != list(range(r))]
    mu_r = np.diag([Fraction(int(m)) for m in mun[:r]])
    for eps in (Fraction(1, 10), Fraction(1, 1000)):
        for _ in range(150):
            X, Y = (rng.integers(-5, 6, (n, r)).astype(object) * eps for _ in range(2))
            competitors.append((U_f[:, :r] + X) @ mu_r @ (V_f[:, :r] + Y).T)
    for _ in range(300):
        X, Y = (rng.integers(-9, 10, (n, r)).astype(object) for _ in range(2))
        competitors.append(X @ Y.T)
    lowest = min(sum(x * x for x in (A_f - B).ravel()) for B in competitors)
    c.check(f"none of {len(competitors)} exact rank-{r} competitors does better (the other SVD "
            "pairs, 300 perturbations of the truncation by 1/10 and 1/1000, 300 random "
            f"integer products; the closest exceeds the claim by {float(lowest - best_error):.2e})"
            "; evidence, not a proof", lambda: lowest >= best_error)
    X, Y = rng.standard_normal((2, 500, 5, 5))
    sx, sy, sxy = (np.linalg.svd(m, compute_uv=False) for m in (X, Y, X + Y))
    weyl = all(np.all(sxy[:, i + j] <= sx[:, i] + sy[:, j] + 1e-12)
               for i in range(5) for j in range(5 - i))
    c.check("Weyl's inequality mu_{i+j-1}(X+Y) <= mu_i(X) + mu_j(Y), on which the proof rests, "
            f"holds for 500 random 5x5 pairs (seed {seed}, floating point, slack 1e-12); "
            "it is used, not proved", lambda: weyl)


def _minors(m: sp.Matrix, size: int):
    """Every size x size minor of m (none when size exceeds a side)."""
    rows, cols = m.shape
    return (m.extract(list(ri), list(ci)).det(method="berkowitz")
            for ri in combinations(range(rows), size) for ci in combinations(range(cols), size))


def _minors_vanish(m: sp.Matrix, size: int) -> bool:
    return all(vanishes(minor) for minor in _minors(m, size))


def _rank_is(m: sp.Matrix, rank: int) -> bool:
    """True when the symbolic m has rank exactly ``rank`` for generic values of its symbols:
    every minor one size larger vanishes identically and some minor of that size does not.
    A claimed rank larger than a side of m, or below zero, is never right."""
    if not 0 <= rank <= min(m.shape):
        return False
    return _minors_vanish(m, rank + 1) and (rank == 0 or not all(
        vanishes(minor) for minor in _minors(m, rank)))


@verification("D20", "Eight facts on rank and projections: rank bounds that generic matrices "
              "reach (i-iii), projection "
              "identities (iv-v), Frobenius energy and invariance (vi-vii), and "
              "E||sum c_i v_i||^2 = sum c_i^2 (viii)")
def d20(c: Checklist, product_rank=None, sum_rank=None, score_rank=None, square_sum=None,
        projection_trace=None, energy=None, rotation=None, interference_energy=None, *,
        seed: int = 20) -> None:
    """D20: eight facts about rank and projections.

    Claims (defaults are the monograph's):
    (i) ``product_rank(ra, rb)``: the bound on rank(AB), min(ra, rb);
    (ii) ``sum_rank(r)``: the bound on the rank of a sum of r outer products, r;
    (iii) ``score_rank(dk)``: the bound on the rank of Q K^T with d_k columns, d_k.
    Each bound must hold for every case tried and be reached by generic (symbolic or
    random) matrices, so a looser bound (max, ra + rb, r + 1, d_k + 1) is rejected;
    (iv) ``square_sum(P, i)``: sum_j P_ij^2 for a symmetric projection, P_ii;
    (v) ``projection_trace(rank)``: tr P for a projection of rank r, r;
    (vi) ``energy(mu)``: ||A||_F^2 from the singular values, sum mu_k^2;
    (vii) ``rotation(t)``: an orthonormal matrix, the Cayley rotation of angle 2 atan t;
    (viii) ``interference_energy(c)``: E||sum_i c_i v_i||^2, sum c_i^2.
    """
    product_rank = product_rank or min
    sum_rank = sum_rank or (lambda r: r)
    score_rank = score_rank or (lambda dk: dk)
    square_sum = square_sum or (lambda P, i: P[i, i])
    projection_trace = projection_trace or (lambda rank: rank)
    energy = energy or (lambda mu: sum(m**2 for m in mu))
    rotation = rotation or (lambda t: sp.Matrix([[1 - t**2, -2 * t], [2 * t, 1 - t**2]])
                            / (1 + t**2))
    interference_energy = interference_energy or (lambda c: sum(x**2 for x in c))
    rng = np.random.default_rng(seed)

    # A bound that is only an upper bound lets looser claims through (max, a + b, r + 1 ...):
    # each symbolic case below must have rank *equal* to the claim, which generic symbols
    # reach, and the random integer cases must reach it too.
    A, B = matrix("a", 3, 2), matrix("b", 2, 3)
    c.check(f"(i) symbolic 3x2 times 2x3 (ranks 2 and 2): AB has rank exactly the claimed "
            f"{product_rank(2, 2)} (its minors of one size more vanish, one of that size does "
            "not)", lambda: _rank_is(A * B, product_rank(2, 2)))
    thin = vector("b", 2) * vector("c", 3).T  # a symbolic 2x3 matrix of rank 1
    c.check(f"(i) symbolic 3x2 (rank 2) times a symbolic 2x3 outer product (rank 1): AB has "
            f"rank exactly the claimed {product_rank(2, 1)}",
            lambda: _rank_is(A * thin, product_rank(2, 1)))

    def random_of_rank(rows, cols, rank):
        return (sp.Matrix(rng.integers(-4, 5, (rows, rank)))
                * sp.Matrix(rng.integers(-4, 5, (rank, cols))))

    pairs = [(random_of_rank(5, 5, ra), random_of_rank(5, 5, rb))
             for ra in range(1, 5) for rb in range(1, 5)]
    found = [(_exact_rank(X * Y), _exact_rank(X), _exact_rank(Y)) for X, Y in pairs]
    c.check("(i) 16 exact random integer pairs (5x5, ranks 1..4 each): rank(AB) is at most the "
            "claimed bound of rank A and rank B", lambda: all(
                r <= product_rank(ra, rb) for r, ra, rb in found))
    c.check("(i) and these generic pairs reach it: rank(AB) equals the claimed bound for all 16",
            lambda: all(r == product_rank(ra, rb) for r, ra, rb in found))
    for r in (1, 2, 3):
        outer = sum((vector(f"u{i}", 3) * vector(f"w{i}", 3).T for i in range(r)),
                    sp.zeros(3, 3))
        c.check(f"(ii) a symbolic sum of r = {r} outer products in 3x3 has rank exactly the "
                f"claimed {sum_rank(r)}", lambda outer=outer, r=r: _rank_is(outer, sum_rank(r)))
    for dk in (1, 2):
        Q, K = matrix("q", 3, dk), matrix("k", 3, dk)
        WQ, WK = matrix("p", 3, dk), matrix("s", 3, dk)
        c.check(f"(iii) n = 3, d_k = {dk}: the symbolic Q K^T and W_Q W_K^T have rank exactly "
                f"the claimed {score_rank(dk)}", lambda Q=Q, K=K, WQ=WQ, WK=WK, dk=dk:
                _rank_is(Q * K.T, score_rank(dk)) and _rank_is(WQ * WK.T, score_rank(dk)))

    P = reduced(A * (A.T * A).inv() * A.T)
    squares = (in_field(P) * in_field(P).transpose()).to_Matrix()  # (P P^T)_ii = sum_j P_ij^2
    c.check("(iv) P = A (A^T A)^{-1} A^T (symbolic 3x2 A): sum_j P_ij P_jk = P_ik for all i, k",
            lambda: is_idempotent(P))
    c.check("(iv) and, P being symmetric, sum_j P_ij^2 equals the claim for every i",
            lambda: all(vanishes(squares[i, i] - square_sum(P, i)) for i in range(3)))
    a, b = vector("x", 3), vector("y", 3)
    oblique = a * b.T / (b.T * a)[0]
    c.check("(iv) control: an oblique projection a b^T / (b^T a) is idempotent but its squares "
            "do not sum to the diagonal, so symmetry is needed",
            lambda: is_idempotent(oblique)
            and not vanishes(sum(oblique[0, j] ** 2 for j in range(3)) - oblique[0, 0]))
    c.check("(v) symbolic 3x2 A: tr P equals the claim for its rank, 2",
            lambda: vanishes(P.trace() - projection_trace(2)))
    lam = sp.Symbol("lambda")
    exact = [sp.Matrix(rng.integers(-4, 5, (6, r))) for r in range(1, 5)]
    projections = [X * (X.T * X).inv() * X.T for X in exact]
    c.check("(v) exact random integer A (6 x r, r = 1..4): the characteristic polynomial of "
            "P = A (A^T A)^{-1} A^T is lambda^(6-r) (lambda-1)^r (eigenvalues 0 and 1) and "
            "tr P equals the claim for its rank",
            lambda: all(Pr.charpoly(lam).as_expr() == sp.expand(lam ** (6 - r) * (lam - 1) ** r)
                        and Pr.trace() == projection_trace(_exact_rank(Pr))
                        for r, Pr in enumerate(projections, start=1)))
    M2 = matrix("m", 2, 2)
    eigen = list((M2.T * M2).eigenvals(multiple=True))
    c.check("(vi) symbolic 2x2 A: with mu_k^2 the eigenvalues of A^T A, the claim equals "
            "tr(A^T A) = sum of squared entries",
            lambda: vanishes(energy([sp.sqrt(e) for e in eigen]) - frobenius2(M2)))
    s, t = sp.symbols("s t", real=True)
    Uo, Vo = rotation(s), rotation(t)
    c.check("(vii) the claimed rotation is orthonormal and ||U A V||_F^2 = ||A||_F^2 "
            "(symbolic 2x2 A, symbolic parameters)",
            lambda: vanishes(Uo.T * Uo - sp.eye(2))
            and vanishes(frobenius2(Uo * M2 * Vo) - frobenius2(M2)))
    coeffs = sp.symbols("c0:4", real=True)
    # E[v_i^T v_j] = 1 when i = j (unit norm) and E[v_i]^T E[v_j] = 0 otherwise (independent,
    # zero mean)
    expectation = sum(ci * cj * (1 if i == j else 0)
                      for i, ci in enumerate(coeffs) for j, cj in enumerate(coeffs))
    c.check("(viii) expanding E||sum_i c_i v_i||^2 = sum_ij c_i c_j E[v_i^T v_j] with four "
            "symbolic c_i gives the claim", lambda: vanishes(expectation
                                                            - interference_energy(coeffs)))
    weights = np.array([1.0, 0.5, -2.0, 0.3, 1.2])
    draws = 10000
    values = unit_vectors(rng, draws * weights.size, 16).reshape(draws, weights.size, 16)
    estimate = float(np.mean(np.sum(np.einsum("m,tmd->td", weights, values) ** 2, axis=1)))
    target = float(interference_energy([sp.Float(w) for w in weights]))
    c.check(f"(viii) Monte Carlo, 5 unit values in R^16, {draws} draws (seed {seed}): "
            f"{estimate:.4f} against {target:.4f}, relative tolerance 3%",
            lambda: close(estimate, target, 0.03))
