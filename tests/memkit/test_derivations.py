"""Appendix D: every derivation verifies, fast enough, and every verification can fail.

For each of D1-D20 a wrong variant of the statement (a wrong constant, a missing
transpose, a flipped sign ...) is injected through the verification's keyword arguments;
the verification must reject it.
"""

import time

import pytest
import sympy as sp

from memkit import derivations
from memkit.derivations import Derivation


def _kron_power(x, p):
    out = sp.Matrix([1])
    for _ in range(p):
        out = sp.kronecker_product(out, x)
    return out


def _svd_terms(U, mu, V, chosen):
    return sum((mu[k] * U[:, k] * V[:, k].T for k in chosen), sp.zeros(U.shape[0], V.shape[0]))


def test_verify_all_verifies_everything_within_20_seconds():
    # CPU time of this process: what the verifications cost, whatever else the
    # machine is running (wall-clock on an idle 2-core machine is about the same)
    start = time.process_time()
    results = derivations.verify_all()
    elapsed = time.process_time() - start
    assert [r.id for r in results] == [f"D{i}" for i in range(1, 21)]
    failed = [str(r) for r in results if not r.verified]
    assert not failed, "\n\n".join(failed)
    assert elapsed <= 20, f"verify_all took {elapsed:.1f} s"


def test_results_report_what_was_checked():
    result = derivations.verify("d9")
    assert isinstance(result, Derivation) and result.id == "D9" and result.verified
    assert result.checked and all(line.startswith("✓ ") for line in result.checked)
    text = str(result)
    assert text.splitlines()[0].startswith("D9. ") and len(text.splitlines()) == 1 + len(
        result.checked)
    assert result.summary().startswith("✓ D9. ")


def test_unknown_id_and_misspelt_claim_raise():
    with pytest.raises(KeyError):
        derivations.verify("D21")
    with pytest.raises(TypeError):
        derivations.verify("D7", capcity=lambda beta, d: beta)


WRONG = [
    ("D1", "1/d^2 instead of 1/d", dict(moment=lambda d: 1 / d**2)),
    ("D2", "3/d^2 for the fourth moment (coordinates treated as Gaussian)",
     dict(moments={1: lambda d: 1 / d, 2: lambda d: 3 / d**2,
                   3: lambda d: 15 / (d * (d + 2) * (d + 4))})),
    ("D2", "d + j instead of d/2 + j in the product",
     dict(factor=lambda d, j: (sp.Rational(1, 2) + j) / (d + j))),
    ("D3", "the whitening (K^T K)^{-1} forgotten", dict(solution=lambda K, V: V.T * K)),
    ("D3", "a transpose missing in the projection",
     dict(projection=lambda K: K * (K.T * K).inv() * K)),
    ("D3", "the gradient's sign flipped", dict(gradient=lambda K, Wt, V: 2 * K.T * (V - K * Wt))),
    ("D3", "the step's quadratic rule without its 2, d(x^T S x)/dx = S x",
     dict(quadratic_rule=lambda S, x: S * x)),
    ("D3", "the step's linear rule with a flipped sign, d(c^T x)/dx = -c",
     dict(linear_rule=lambda c, x: -c)),
    ("D4", "the error as a sum of mu_k, not of mu_k^2",
     dict(error=lambda mu, r: sum(m for m in mu[r:]))),
    ("D4", "keeping the smallest singular values",
     dict(truncate=lambda U, mu, V, r: _svd_terms(U, mu, V, range(len(mu) - r, len(mu))))),
    ("D5", "the 1 + k^T R k denominator without its 1",
     dict(update=lambda W, R, k, v: W + (v - W * k) * (R * k).T / (k.T * R * k)[0])),
    ("D5", "Sherman-Morrison with a plus sign",
     dict(sherman_morrison=lambda R, k: R + R * k * k.T * R / (1 + (k.T * R * k)[0]))),
    ("D6", "the Jacobian with + a_j",
     dict(jacobian=lambda a, i, j: a[i] * ((1 if i == j else 0) + a[j]))),
    ("D6", "the logit gradient without the mean o",
     dict(logit_grad=lambda a, values, o, g, i: a[i] * (values[i].T * g)[0])),
    ("D6", "the key gradient without beta", dict(key_grad=lambda dl, q, beta: dl * q)),
    ("D7", "capacity exp(beta (1 - beta/d)), a factor 2 lost",
     dict(capacity=lambda beta, d: sp.exp(beta * (1 - beta / d)))),
    ("D7", "E[exp(2 beta s)] = exp(beta^2/d)", dict(mgf=lambda beta, d: sp.exp(beta**2 / d))),
    ("D8", "the gradient with + X^T a", dict(gradient=lambda X, xi, a: xi + X.T * a)),
    ("D8", "the update with X instead of X^T", dict(update=lambda X, xi, a: X * a)),
    ("D9", "W_K G^{-1} instead of W_K G^{-T}", dict(key_map=lambda WK, G: WK * G.inv())),
    ("D10", "q (x) q used for every degree",
     dict(feature=lambda x, p: x if p == 1 else _kron_power(x, 2))),
    ("D11", "the readout's sign flipped",
     dict(readout=lambda xs, ys, xq, eta: -eta * sum(
         (y * (x.T * xq)[0] for x, y in zip(xs, ys)), sp.zeros(2, 1)))),
    ("D12", "layers that read y_i instead of the residuals",
     dict(layer=lambda pred, x, xs, ys, preds, eta: pred + eta * sum(
         (y * (xi.T * x)[0] for xi, y in zip(xs, ys)), sp.zeros(*pred.shape)))),
    ("D13", "Var(q^T k) = sqrt(d_k)", dict(variance=lambda d: sp.sqrt(d))),
    ("D14", "x ybar^T, the transpose of the gradient", dict(gradient=lambda ybar, x: x * ybar.T)),
    ("D15", "beta^p without the 1/p!", dict(coefficient=lambda beta, p: beta**p)),
    ("D15", "a finite feature map: the series cut at degree 5",
     dict(kernel=lambda beta, s: sum((beta * s) ** p / sp.factorial(p) for p in range(6)))),
    ("D16", "a_j r_j, the baseline term dropped", dict(gradient=lambda a, r, j: a[j] * r[j])),
    ("D17", "the plain key k* instead of C^{-1} k*",
     dict(edit=lambda C, k, r: r * k.T / (k.T * k)[0])),
    ("D18", "the count of a single head's projections",
     dict(parameter_count=lambda d, h: 3 * d * (d / h) + d**2)),
    ("D18", "only the first head kept", dict(combine=lambda heads, blocks: heads[0] * blocks[0])),
    ("D19", "the factor without the 1/2",
     dict(factor=lambda beta, q, k: sp.exp(beta * ((q.T * q)[0] + (k.T * k)[0])))),
    ("D19", "sigma^2 = 1/sqrt(beta)", dict(bandwidth2=lambda beta: 1 / sp.sqrt(beta))),
    ("D20", "rank(AB) <= min - 1", dict(product_rank=lambda ra, rb: min(ra, rb) - 1)),
    ("D20", "rank(AB) <= max, true but loose", dict(product_rank=max)),
    ("D20", "rank(AB) <= rank A + rank B, true but loose",
     dict(product_rank=lambda ra, rb: ra + rb)),
    ("D20", "r outer products have rank <= r + 1, true but loose",
     dict(sum_rank=lambda r: r + 1)),
    ("D20", "rank(Q K^T) <= d_k + 1, true but loose", dict(score_rank=lambda dk: dk + 1)),
    ("D20", "tr P = rank + 1", dict(projection_trace=lambda rank: rank + 1)),
    ("D20", "a shear instead of a rotation",
     dict(rotation=lambda t: sp.Matrix([[1, t], [0, 1]]))),
    ("D20", "E||sum c_i v_i||^2 = (sum c_i)^2",
     dict(interference_energy=lambda c: sum(c) ** 2)),
]


def test_every_derivation_has_a_wrong_variant():
    assert {ident for ident, _, _ in WRONG} == set(derivations.ids())


@pytest.mark.parametrize("ident, what, claims", WRONG,
                         ids=[f"{ident}-{what}" for ident, what, _ in WRONG])
def test_wrong_variant_is_rejected(ident, what, claims):
    result = derivations.verify(ident, **claims)
    assert not result.verified, f"{ident} accepted a wrong variant ({what}):\n{result}"
    assert any(line.startswith("✗ ") for line in result.checked)


# A loose bound is true, so only the lines that ask for the bound to be reached can reject it;
# a finite feature map matches the first Taylor terms, so only the rank of its Gram matrices
# can. These name the line that must do the rejecting.
LOOSE = [
    ("D20", dict(product_rank=max), "and these generic pairs reach it"),
    ("D20", dict(product_rank=lambda ra, rb: ra + rb), "(i) symbolic 3x2 times 2x3"),
    ("D20", dict(sum_rank=lambda r: r + 1), "(ii) a symbolic sum of r = 1"),
    ("D20", dict(score_rank=lambda dk: dk + 1), "(iii) n = 3, d_k = 2"),
    ("D15", dict(kernel=lambda beta, s: sum((beta * s) ** p / sp.factorial(p) for p in range(6))),
     "no finite feature map"),
]


@pytest.mark.parametrize("ident, claims, line", LOOSE, ids=[line for _, _, line in LOOSE])
def test_a_true_but_weaker_claim_fails_on_the_line_that_asks_for_more(ident, claims, line):
    result = derivations.verify(ident, **claims)
    failed = [text for text in result.checked if text.startswith("✗ ")]
    assert any(line in text for text in failed), f"{ident}: {line!r} did not fail:\n{result}"


def test_d15_finite_variant_passes_every_line_but_the_rank_one():
    # the degree-5 cut agrees with exp(beta s) on every Taylor line checked (up to degree 4)
    result = derivations.verify("D15", kernel=LOOSE[-1][1]["kernel"])
    failed = [text for text in result.checked if text.startswith("✗ ")]
    assert len(failed) == 1 and "no finite feature map" in failed[0], str(result)
