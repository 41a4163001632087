"""Model invariants: the identities the text states, verified numerically.

Each check builds a small random example from ``seed``, computes one identity
two ways and returns a ``CheckResult`` with the measured discrepancy and the
tolerance it must stay under. The function under test is an optional argument
(default: the memkit one), so a test can hand in a wrong ingredient and see the
check fail. ``run_all`` runs every check; the book's "model invariants" are
this list.

Chapters: 3 (linear-layer gradient, D14), 4 (delta rule, least squares),
6 (limits of beta, Nadaraya-Watson, D19, Hopfield, D8), 7 (gradients, D6, D9,
D16), 8 (heads, D18), 9 and 12 (linear attention as a state, D10), 10 (delta
overwrite), 11 (gradient steps as linear attention, D11, D12).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import memory, recurrent
from .attention import (
    attend,
    attention_gradients,
    bilinear_scores,
    exponential_kernel,
    gauge_transform,
    gaussian_kernel,
    hard_lookup,
    hopfield_energy,
    hopfield_retrieve,
    multihead,
    nadaraya_watson,
    policy_gradient_logits,
    softmax,
    softmax_jacobian,
)
from .icl import gd_steps, icl_layers, linear_attention_readout
from .validation import as_rng

__all__ = [
    "CheckResult",
    "numerical_gradient",
    "check_attention_gradient",
    "check_softmax_jacobian",
    "check_policy_gradient",
    "check_linear_layer_gradient",
    "check_beta_zero",
    "check_beta_large",
    "check_delta_overwrite",
    "check_least_squares_recall",
    "check_linear_attention_recurrence",
    "check_polynomial_state",
    "check_gradient_step_readout",
    "check_layers_are_steps",
    "check_gauge_invariance",
    "check_heads_add",
    "check_nadaraya_watson_softmax",
    "check_gaussian_smoother",
    "check_hopfield_fixed_point",
    "run_all",
]


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one invariant: ``passed`` is ``value <= tolerance``."""

    name: str
    passed: bool
    value: float
    tolerance: float
    detail: str


def _result(name: str, value: float, tolerance: float, detail: str) -> CheckResult:
    value = float(value)
    passed = bool(np.isfinite(value) and value <= tolerance)
    return CheckResult(name, passed, value, tolerance, detail)


def _relative_error(computed, reference) -> float:
    """``||computed - reference|| / max(||computed||, ||reference||)`` (0 when both are 0)."""
    computed = np.asarray(computed, dtype=float)
    reference = np.asarray(reference, dtype=float)
    scale = max(np.linalg.norm(computed), np.linalg.norm(reference))
    return float(np.linalg.norm(computed - reference) / scale) if scale > 0 else 0.0


def numerical_gradient(f: Callable[[np.ndarray], float], x, h: float = 1e-5) -> np.ndarray:
    """Central finite differences ``(f(x + h e_j) - f(x - h e_j)) / (2h)`` for every entry.

    Appendix B. ``x`` is an array of any shape; returns the gradient of the
    scalar function ``f`` at ``x``, with the shape of ``x``.
    """
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[j] = h
        grad[j] = (f(x + step) - f(x - step)) / (2.0 * h)
    return grad


def _attention_example(rng: np.random.Generator, n=5, d_k=4, d_v=3):
    K = rng.standard_normal((n, d_k))
    V = rng.standard_normal((n, d_v))
    q = rng.standard_normal(d_k)
    g = rng.standard_normal(d_v)
    return K, V, q, g


_GRADIENT_FORMULAS = {
    "dV": "dL/dv_i = a_i g",
    "dl": "dL/dl_i = a_i (v_i - o)^T g",
    "dK": "dL/dk_i = beta dL/dl_i q",
    "dq": "dL/dq = beta sum_i dL/dl_i k_i",
}


def check_attention_gradient(which: str, seed=0, gradients=attention_gradients) -> CheckResult:
    """One of the four attention gradients against central finite differences.

    Chapter 7, Derivation D6. ``which`` is ``"dV"``, ``"dl"``, ``"dK"`` or ``"dq"``;
    the loss is ``L = g^T o`` so that ``dL/do = g``. ``gradients(K, V, q, beta, g)``
    must return an object with those four fields. Passes if the relative error
    is below 1e-6.
    """
    if which not in _GRADIENT_FORMULAS:
        raise ValueError(f"which must be one of {sorted(_GRADIENT_FORMULAS)}, got {which!r}")
    K, V, q, g = _attention_example(as_rng(seed))
    beta = 1.3
    losses = {
        "dV": (V, lambda V_: g @ attend(K, V_, q, beta)[0]),
        "dl": (beta * K @ q, lambda l_: g @ (V.T @ softmax(l_))),
        "dK": (K, lambda K_: g @ attend(K_, V, q, beta)[0]),
        "dq": (q, lambda q_: g @ attend(K, V, q_, beta)[0]),
    }
    point, loss = losses[which]
    formula = getattr(gradients(K, V, q, beta, g), which)
    error = _relative_error(formula, numerical_gradient(loss, point))
    return _result(
        f"attention gradient {_GRADIENT_FORMULAS[which]}", error, 1e-6,
        "relative error of the formula against central finite differences of L = g^T o",
    )


def check_softmax_jacobian(seed=0, jacobian=softmax_jacobian) -> CheckResult:
    """``da_i/dl_j = a_i (delta_ij - a_j)`` against central finite differences.

    Derivation D6. ``jacobian(l)`` returns the (n, n) matrix. Relative error < 1e-6.
    """
    l = as_rng(seed).standard_normal(6)
    numeric = np.array([numerical_gradient(lambda x, i=i: softmax(x)[i], l) for i in range(l.size)])
    error = _relative_error(jacobian(l), numeric)
    return _result("softmax Jacobian diag(a) - a a^T", error, 1e-6,
                   "relative error against finite differences of each softmax output")


def check_policy_gradient(seed=0, policy=policy_gradient_logits) -> CheckResult:
    """Attention's logit gradient is minus the exact policy gradient with rewards ``-v_i^T g``.

    Derivation D16: ``dJ/dl_j = a_j (r_j - rbar)`` and ``dL/dl_j = -dJ/dl_j`` for
    ``r = -V g``. ``policy(a, r)`` returns dJ/dl. Relative error < 1e-12.
    """
    K, V, q, g = _attention_example(as_rng(seed))
    beta = 0.7
    a = attend(K, V, q, beta)[1]
    error = _relative_error(-policy(a, -V @ g), attention_gradients(K, V, q, beta, g).dl)
    return _result("attention logit gradient = REINFORCE with mean baseline", error, 1e-12,
                   "relative difference of -a_j (r_j - rbar), r = -V g, and a_j (v_j - o)^T g")


def _linear_layer_gradient(ybar: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``dL/dW = ybar x^T``: a Hebbian write with key ``x`` and value ``ybar`` (Chapter 3)."""
    return memory.hebbian_write(x[None, :], ybar[None, :])


def check_linear_layer_gradient(seed=0, gradient=_linear_layer_gradient) -> CheckResult:
    """Gradient of a linear layer ``y = W x``: ``dL/dW = ybar x^T`` with ``ybar = dL/dy``.

    Derivation D14, for ``L = ||W x - t||^2 / 2`` so ``ybar = W x - t``.
    ``gradient(ybar, x)`` returns (d_out, d_in). Relative error < 1e-6.
    """
    rng = as_rng(seed)
    W = rng.standard_normal((3, 4))
    x = rng.standard_normal(4)
    t = rng.standard_normal(3)
    numeric = numerical_gradient(lambda W_: 0.5 * np.sum((W_ @ x - t) ** 2), W)
    error = _relative_error(gradient(W @ x - t, x), numeric)
    return _result("linear layer gradient dL/dW = ybar x^T", error, 1e-6,
                   "relative error against central finite differences")


def check_beta_zero(seed=0, read=attend) -> CheckResult:
    """At ``beta = 0`` every weight is 1/n and the read is the mean of the values.

    Chapter 6. ``read(K, V, q, beta)`` returns ``(o, a)``. Relative error < 1e-12.
    """
    K, V, q, _ = _attention_example(as_rng(seed))
    error = _relative_error(read(K, V, q, 0.0)[0], V.mean(axis=0))
    return _result("beta = 0 reads the mean of the values", error, 1e-12,
                   "relative difference of the attention output and the mean value")


def check_beta_large(seed=0, read=attend, beta: float = 200.0) -> CheckResult:
    """For large ``beta`` the soft read is the hard lookup ``v_{argmax k_i^T q}``.

    Chapter 6. Unit keys in R^16, the query equal to one of them, so the best
    match leads the others by a clear gap. ``read(K, V, q, beta)`` returns
    ``(o, a)``. Relative error < 1e-9 (which fails for a small ``beta``).
    """
    rng = as_rng(seed)
    K = memory.random_unit_vectors(8, 16, rng)
    V = rng.standard_normal((8, 3))
    q = K[3]
    error = _relative_error(read(K, V, q, beta)[0], hard_lookup(K, V, q))
    return _result(f"beta = {beta:g} reads the hard lookup", error, 1e-9,
                   "relative difference of the attention output and the best-matching value")


def check_delta_overwrite(seed=0, update=memory.delta_step,
                          label: str = "slow memory") -> CheckResult:
    """A delta step with a unit key and step 1 stores the pair exactly: ``S' k = v``.

    Chapter 4 (``memory.delta_step``) and Chapter 10 (``recurrent.delta_update``):
    ``S' = S + (v - S k) k^T`` gives ``S' k = S k + (v - S k) (k^T k) = v``.
    ``update(S, k, v, 1.0)`` returns the new (d_v, d_k) state. Relative error < 1e-12.
    """
    rng = as_rng(seed)
    S = rng.standard_normal((3, 5))
    k = memory.random_unit_vectors(1, 5, rng)[0]
    v = rng.standard_normal(3)
    error = _relative_error(update(S, k, v, 1.0) @ k, v)
    return _result(f"delta rule stores the pair exactly ({label})", error, 1e-12,
                   "relative recall error of the pair just written")


def check_least_squares_recall(seed=0, write=memory.least_squares_write,
                               d_k: int = 8) -> CheckResult:
    """A least-squares store recalls every pair exactly while ``M <= d_k``.

    Chapter 4 (D3). Random unit keys in R^{d_k}, ``M = d_k / 2`` and ``M = d_k``;
    ``write(K, V)`` returns ``W`` (d_v, d_k). Largest relative error < 1e-9.
    """
    rng = as_rng(seed)
    worst = 0.0
    for M in (d_k // 2, d_k):
        K = memory.random_unit_vectors(M, d_k, rng)
        V = rng.standard_normal((M, 4))
        W = write(K, V)
        worst = max(worst, max(_relative_error(W @ k, v) for k, v in zip(K, V)))
    return _result(f"least squares recalls exactly for M <= d_k = {d_k}", worst, 1e-9,
                   f"largest relative recall error over M = {d_k // 2} and M = {d_k}")


def check_linear_attention_recurrence(
    seed=0, recurrent_form=recurrent.linear_attention_recurrent
) -> CheckResult:
    """Causal linear attention computed in parallel equals the recurrent state read ``S_t q_t``.

    Chapter 9, Derivation D10; once with the identity feature map, once with
    ``elu + 1`` and the normaliser. ``recurrent_form(Q, K, V, causal, feature_map,
    normalise)`` returns (n, d_v). Largest relative difference < 1e-12.
    """
    rng = as_rng(seed)
    Q, K, V = rng.standard_normal((7, 4)), rng.standard_normal((7, 4)), rng.standard_normal((7, 3))
    worst = 0.0
    for feature_map, normalise in ((None, False), (recurrent.elu_plus_one, True)):
        parallel = recurrent.linear_attention_parallel(Q, K, V, True, feature_map, normalise)
        stepwise = recurrent_form(Q, K, V, True, feature_map, normalise)
        worst = max(worst, _relative_error(stepwise, parallel))
    return _result("causal linear attention = recurrent state", worst, 1e-12,
                   "relative difference of the parallel and recurrent outputs"
                   " (identity map; elu + 1 with the normaliser)")


def check_polynomial_state(seed=0, p: int = 2, state=recurrent.polynomial_state) -> CheckResult:
    """A degree-p polynomial read equals the read of a fixed d_v x d_k^p state.

    Chapter 12, Derivation D10: ``sum_i v_i (k_i^T q)^p = S vec(q^{(x)p})``.
    ``state(K, V, p)`` returns ``S``. Relative error < 1e-12.
    """
    rng = as_rng(seed)
    K, V, q = rng.standard_normal((9, 3)), rng.standard_normal((9, 2)), rng.standard_normal(3)
    error = _relative_error(state(K, V, p) @ recurrent.tensor_power(q, p),
                            recurrent.polynomial_read(K, V, q, p))
    return _result(f"polynomial read of degree {p} is a fixed state", error, 1e-12,
                   "relative difference of the state read and the direct read over all pairs")


def _regression_example(rng: np.random.Generator, n=6, d_x=3, d_y=2):
    X = rng.standard_normal((n, d_x))
    Y = X @ rng.standard_normal((d_x, d_y))
    return X, Y, rng.standard_normal(d_x)


def check_gradient_step_readout(seed=0, readout=linear_attention_readout) -> CheckResult:
    """One gradient step from zero predicts what one linear-attention read gives.

    Chapter 11, Derivation D11: ``W_1 x_q = eta sum_i y_i (x_i^T x_q)``.
    ``readout(X, Y, x_q, eta)`` returns (d_y,). Relative error < 1e-12.
    """
    X, Y, x_q = _regression_example(as_rng(seed))
    eta = 0.05
    error = _relative_error(readout(X, Y, x_q, eta), gd_steps(X, Y, eta, 1)[0] @ x_q)
    return _result("a gradient step from zero = linear-attention readout", error, 1e-12,
                   "relative difference of W_1 x_q and the readout")


def check_layers_are_steps(seed=0, layers_fn=icl_layers, layers: int = 5) -> CheckResult:
    """k linear-attention layers over residual values predict ``W_k x_q`` of k gradient steps.

    Chapter 11, Derivation D12. ``layers_fn(X, Y, x_q, eta, layers)`` returns
    (layers, d_y). Largest relative difference over the layers < 1e-10.
    """
    X, Y, x_q = _regression_example(as_rng(seed))
    eta = 0.05
    steps = gd_steps(X, Y, eta, layers) @ x_q
    predictions = layers_fn(X, Y, x_q, eta, layers)
    worst = max(_relative_error(p, s) for p, s in zip(predictions, steps))
    return _result(f"{layers} linear-attention layers = {layers} gradient steps", worst, 1e-10,
                   "largest relative difference of the layer and gradient-step predictions")


def check_gauge_invariance(seed=0, transform=gauge_transform) -> CheckResult:
    """``W_Q -> W_Q G``, ``W_K -> W_K G^{-T}`` leaves every score unchanged.

    Chapter 7, Derivation D9. ``transform(W_Q, W_K, G)`` returns the new pair.
    Largest score change relative to the largest score < 1e-9.
    """
    rng = as_rng(seed)
    X = rng.standard_normal((6, 8))
    W_Q, W_K = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    G = rng.standard_normal((3, 3)) + 3.0 * np.eye(3)
    before = bilinear_scores(X, W_Q, W_K, 1.0)
    after = bilinear_scores(X, *transform(W_Q, W_K, G), 1.0)
    error = np.max(np.abs(after - before)) / np.max(np.abs(before))
    return _result("only W_Q W_K^T matters (gauge invariance)", error, 1e-9,
                   "largest change of a score relative to the largest score")


def check_heads_add(seed=0, heads=multihead) -> CheckResult:
    """The per-head terms ``H_m W_O^(m)`` add up to the layer's output.

    Chapter 8, Derivation D18, on a random two-head layer. ``heads(X, W_Q, W_K,
    W_V, W_O, h)`` returns ``(output, terms)``. Largest entry difference relative
    to the largest output entry < 1e-12.
    """
    rng = as_rng(seed)
    X = rng.standard_normal((5, 6))
    W_Q, W_K, W_V, W_O = (rng.standard_normal((6, 6)) for _ in range(4))
    output, terms = heads(X, W_Q, W_K, W_V, W_O, 2)
    error = np.max(np.abs(terms.sum(axis=0) - output)) / np.max(np.abs(output))
    return _result("heads add: [H_1 ... H_h] W_O = sum_m H_m W_O^(m)", error, 1e-12,
                   "largest difference of the sum of head terms and the output, relative")


def check_nadaraya_watson_softmax(seed=0, kernel=None) -> CheckResult:
    """The Nadaraya-Watson smoother with the kernel ``e^{beta q^T k}`` is softmax attention.

    Chapter 6. ``kernel`` is the kernel to test (None: ``exponential_kernel(beta)``,
    ``beta = 1.5``). Relative difference of the outputs < 1e-12.
    """
    K, V, q, _ = _attention_example(as_rng(seed))
    beta = 1.5
    smoother = exponential_kernel(beta) if kernel is None else kernel
    error = _relative_error(nadaraya_watson(K, V, q, smoother)[0], attend(K, V, q, beta)[0])
    return _result("Nadaraya-Watson with exp(beta q^T k) = softmax attention", error, 1e-12,
                   "relative difference of the smoother and attention outputs")


def check_gaussian_smoother(seed=0, unit_keys: bool = True) -> CheckResult:
    """With unit keys, attention is the Gaussian smoother of bandwidth ``1/sqrt(beta)``.

    Chapter 6, Derivation D19 (the query need not be unit). With
    ``unit_keys=False`` the keys keep their lengths and the identity fails, as
    the derivation says. Relative difference of the outputs < 1e-12.
    """
    rng = as_rng(seed)
    K, V, q, _ = _attention_example(rng)
    if unit_keys:
        K = K / np.linalg.norm(K, axis=1, keepdims=True)
    beta = 2.5
    smoother = nadaraya_watson(K, V, q, gaussian_kernel(1.0 / np.sqrt(beta)))[0]
    error = _relative_error(smoother, attend(K, V, q, beta)[0])
    keys = "unit" if unit_keys else "non-unit"
    return _result(f"attention = Gaussian smoother, bandwidth 1/sqrt(beta) ({keys} keys)",
                   error, 1e-12,
                   "relative difference of the Gaussian smoother and attention outputs")


def check_hopfield_fixed_point(seed=0, steps: int = 20, retrieve=hopfield_retrieve) -> CheckResult:
    """The Hopfield iteration ends at a stationary point of the energy.

    Chapter 6, Derivation D8: ``grad E(xi) = xi - X^T softmax(beta X xi)``
    vanishes at a fixed point of the update. Five orthonormal (well separated)
    patterns in R^8, ``beta = 8``, a noisy copy of pattern 0 as the start;
    ``retrieve(X, xi, beta, steps)`` returns the trajectory. Norm of the
    finite-difference gradient of the energy at the end < 1e-6 (not met with
    ``steps = 0``).
    """
    rng = as_rng(seed)
    X = np.linalg.qr(rng.standard_normal((8, 5)))[0].T
    beta = 8.0
    start = X[0] + 0.3 * rng.standard_normal(8) / np.sqrt(8)
    end = retrieve(X, start, beta, steps)[-1]
    gradient = numerical_gradient(lambda xi: hopfield_energy(X, xi, beta), end)
    return _result("Hopfield fixed point is a stationary point of the energy",
                   np.linalg.norm(gradient), 1e-6,
                   f"norm of the numerical energy gradient after {steps} updates")


def run_all(seed=0) -> list[CheckResult]:
    """Run every model invariant with examples drawn from ``seed``; returns the results."""
    rng = as_rng(seed)
    seeds = iter(rng.integers(0, 2**32, size=32))
    gradient_checks = [check_attention_gradient(which, next(seeds)) for which in _GRADIENT_FORMULAS]
    return gradient_checks + [
        check_softmax_jacobian(next(seeds)),
        check_policy_gradient(next(seeds)),
        check_linear_layer_gradient(next(seeds)),
        check_beta_zero(next(seeds)),
        check_beta_large(next(seeds)),
        check_delta_overwrite(next(seeds)),
        check_delta_overwrite(next(seeds), recurrent.delta_update, "fast state"),
        check_least_squares_recall(next(seeds)),
        check_linear_attention_recurrence(next(seeds)),
        check_polynomial_state(next(seeds)),
        check_gradient_step_readout(next(seeds)),
        check_layers_are_steps(next(seeds)),
        check_gauge_invariance(next(seeds)),
        check_heads_add(next(seeds)),
        check_nadaraya_watson_softmax(next(seeds)),
        check_gaussian_smoother(next(seeds)),
        check_hopfield_fixed_point(next(seeds)),
    ]
