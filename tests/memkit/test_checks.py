"""Tests of memkit.checks: every invariant holds, and a wrong ingredient is caught."""

import numpy as np
import pytest

from memkit import attention as att
from memkit import checks, memory, recurrent


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_invariant_passes(seed):
    results = checks.run_all(seed)
    assert len(results) == 21
    assert len({r.name for r in results}) == len(results)
    failed = [(r.name, r.value, r.tolerance) for r in results if not r.passed]
    assert failed == []
    for r in results:
        assert isinstance(r, checks.CheckResult) and 0 <= r.value <= r.tolerance and r.detail


def test_run_all_is_reproducible():
    first = [r.value for r in checks.run_all(5)]
    second = [r.value for r in checks.run_all(np.random.default_rng(5))]
    assert first == second


def test_numerical_gradient():
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    assert np.allclose(checks.numerical_gradient(lambda y: np.sum(y**3), x), 3 * x**2, atol=1e-8)


def _gradients_without_baseline(K, V, q, beta, g):
    """A plausible mistake: dL/dl_i = a_i v_i^T g, forgetting the mean o."""
    good = att.attention_gradients(K, V, q, beta, g)
    a = att.attend(K, V, q, beta)[1]
    dl = a * (V @ g)
    return good._replace(dl=dl, dK=beta * np.outer(dl, q), dq=beta * K.T @ dl)


def test_a_wrong_attention_gradient_fails():
    for which in ("dl", "dK", "dq"):
        result = checks.check_attention_gradient(which, gradients=_gradients_without_baseline)
        assert not result.passed
    assert checks.check_attention_gradient("dV", gradients=_gradients_without_baseline).passed
    with pytest.raises(ValueError, match="which"):
        checks.check_attention_gradient("dW")


def test_wrong_formulas_fail():
    assert not checks.check_softmax_jacobian(jacobian=lambda l: np.diag(att.softmax(l))).passed
    assert not checks.check_policy_gradient(policy=lambda a, r: a * r).passed
    flipped = lambda ybar, x: -np.outer(ybar, x)
    assert not checks.check_linear_layer_gradient(gradient=flipped).passed
    same_G = lambda W_Q, W_K, G: (W_Q @ G, W_K @ G)
    assert not checks.check_gauge_invariance(transform=same_G).passed
    assert not checks.check_polynomial_state(
        state=lambda K, V, p: V.T @ recurrent.tensor_power(K + 0.01, p)).passed


def test_corrupted_reads_fail():
    shifted = lambda K, V, q, beta: att.attend(K, V + 1e-3, q, beta)
    assert not checks.check_beta_zero(read=shifted).passed
    assert not checks.check_beta_large(beta=1.0).passed  # the limit needs a large beta
    assert not checks.check_nadaraya_watson_softmax(kernel=att.exponential_kernel(1.0)).passed


def test_wrong_writes_fail():
    hebbian_step = lambda S, k, v, eta: S + eta * np.outer(v, k)
    assert not checks.check_delta_overwrite(update=hebbian_step).passed
    assert checks.check_delta_overwrite(update=recurrent.delta_update, label="fast state").passed
    assert not checks.check_least_squares_recall(write=memory.hebbian_write).passed


def test_wrong_recurrences_fail():
    non_causal = lambda Q, K, V, causal, phi, norm: recurrent.linear_attention_recurrent(
        Q, K, V, False, phi, norm)
    assert not checks.check_linear_attention_recurrence(recurrent_form=non_causal).passed
    one_step_only = lambda X, Y, x_q, eta, k: np.repeat(
        recurrent.linear_attention_parallel(x_q[None], X, eta * Y, causal=False), k, axis=0)
    assert not checks.check_layers_are_steps(layers_fn=one_step_only).passed
    no_keys = lambda X, Y, x_q, eta: eta * Y.sum(0)
    assert not checks.check_gradient_step_readout(readout=no_keys).passed


def test_wrong_heads_and_limits_fail():
    def leaky_heads(*args):
        output, terms = att.multihead(*args)
        return output, terms * (1 + 1e-9)

    assert not checks.check_heads_add(heads=leaky_heads).passed
    assert not checks.check_gaussian_smoother(unit_keys=False).passed  # D19 needs unit keys
    assert not checks.check_hopfield_fixed_point(steps=0).passed
