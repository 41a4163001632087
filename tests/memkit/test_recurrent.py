"""Tests of memkit.recurrent (Chapters 9, 10 and 12)."""

import itertools

import numpy as np
import pytest

from memkit import recurrent as rec
from memkit.checks import numerical_gradient


@pytest.fixture
def stream():
    rng = np.random.default_rng(11)
    return rng.standard_normal((7, 4)), rng.standard_normal((7, 4)), rng.standard_normal((7, 3))


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("feature_map, normalise", [(None, False), (rec.elu_plus_one, False),
                                                    (rec.elu_plus_one, True)])
def test_parallel_equals_recurrent(stream, causal, feature_map, normalise):
    Q, K, V = stream
    parallel = rec.linear_attention_parallel(Q, K, V, causal, feature_map, normalise)
    recurrent = rec.linear_attention_recurrent(Q, K, V, causal, feature_map, normalise)
    assert parallel.shape == (7, 3)
    assert np.allclose(parallel, recurrent, atol=1e-12)


def test_linear_attention_reads_the_hebbian_state(stream):
    Q, K, V = stream
    O = rec.linear_attention_recurrent(Q, K, V)
    states = rec.run_updates(K, V, "add", all_states=True)
    for t in range(7):  # o_t = S_t q_t with S_t = sum_{i<=t} v_i k_i^T
        assert np.allclose(O[t], states[t + 1] @ Q[t])
    assert np.allclose(states[-1], V.T @ K)


def test_normalised_linear_attention_is_a_weighted_average(stream):
    Q, K, V = stream
    O = rec.linear_attention_parallel(Q, K, V, feature_map=rec.elu_plus_one, normalise=True)
    weights = np.tril(rec.elu_plus_one(Q) @ rec.elu_plus_one(K).T)
    assert np.allclose(O, (weights / weights.sum(axis=1, keepdims=True)) @ V)


def test_elu_plus_one():
    x = np.array([-2.0, 0.0, 1.5])
    assert np.allclose(rec.elu_plus_one(x), [np.exp(-2.0), 1.0, 2.5])
    assert np.all(rec.elu_plus_one(-50 * np.ones((2, 2))) > 0)


def test_linear_attention_names_bad_inputs(stream):
    Q, K, V = stream
    with pytest.raises(ValueError, match="Q has 3 rows"):
        rec.linear_attention_parallel(Q[:3], K, V)
    with pytest.raises(ValueError, match="K and V"):
        rec.linear_attention_recurrent(Q, K, V[:5])
    with pytest.raises(ValueError, match="feature_map"):
        rec.linear_attention_parallel(Q, K, V, feature_map=lambda X: X[:2])
    with pytest.raises(TypeError, match="feature_map"):
        rec.linear_attention_parallel(Q, K, V, feature_map="elu")
    with pytest.raises(ValueError, match="normaliser"):
        rec.linear_attention_recurrent(np.zeros_like(Q), K, V, normalise=True)


def test_single_step_updates_follow_their_formulas():
    rng = np.random.default_rng(5)
    S, k, v = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3)
    outer = np.outer(v, k)
    assert np.allclose(rec.add_update(S, k, v), S + outer)
    assert np.allclose(rec.decay_update(S, k, v, 0.7), 0.7 * S + outer)
    assert np.allclose(rec.decay_update(S, k, v, 1.0), rec.add_update(S, k, v))
    erase = np.eye(4) - 0.3 * np.outer(k, k)
    assert np.allclose(rec.delta_update(S, k, v, 0.3), S @ erase + 0.3 * outer)
    gated = rec.gated_delta_update(S, k, v, 0.9, 0.3)
    assert np.allclose(gated, 0.9 * S @ erase + 0.3 * outer)
    assert np.allclose(rec.gated_delta_update(S, k, v, 1.0, 0.3), rec.delta_update(S, k, v, 0.3))
    assert np.allclose(rec.ttt_update(S, k, v, 0.3), rec.delta_update(S, k, v, 0.3))


def test_ttt_update_is_a_gradient_step():
    rng = np.random.default_rng(6)
    S, k, v = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal(2)
    grad = numerical_gradient(lambda S_: 0.5 * np.sum((S_ @ k - v) ** 2), S)
    assert np.allclose(rec.ttt_update(S, k, v, 0.1), S - 0.1 * grad, atol=1e-9)


def test_delta_with_unit_key_overwrites_exactly():
    rng = np.random.default_rng(8)
    S, v = rng.standard_normal((3, 5)), rng.standard_normal(3)
    k = rng.standard_normal(5)
    k /= np.linalg.norm(k)
    assert np.allclose(rec.delta_update(S, k, v, 1.0) @ k, v, atol=1e-12)


def test_update_parameters_are_checked():
    S, k, v = np.zeros((2, 3)), np.ones(3), np.ones(2)
    with pytest.raises(ValueError, match="gamma must lie"):
        rec.decay_update(S, k, v, 1.5)
    with pytest.raises(ValueError, match="beta"):
        rec.delta_update(S, k, v, -0.1)
    with pytest.raises(ValueError, match="alpha"):
        rec.gated_delta_update(S, k, v, 2.0, 0.5)
    with pytest.raises(ValueError, match="k must have length 3"):
        rec.add_update(S, np.ones(2), v)
    with pytest.raises(ValueError, match="v must have length 2"):
        rec.ttt_update(S, k, np.ones(3), 0.1)


def test_run_updates_per_step_parameters(stream):
    _, K, V = stream
    gammas = np.linspace(0.5, 1.0, 7)
    S = np.zeros((3, 4))
    for k, v, g in zip(K, V, gammas):
        S = rec.decay_update(S, k, v, g)
    assert np.allclose(rec.run_updates(K, V, "decay", gamma=gammas), S)
    states = rec.run_updates(K, V, "gated_delta", S0=np.ones((3, 4)), all_states=True,
                             alpha=0.9, beta=0.5)
    assert states.shape == (8, 3, 4) and np.allclose(states[0], 1.0)
    assert np.allclose(states[1], rec.gated_delta_update(np.ones((3, 4)), K[0], V[0], 0.9, 0.5))


def test_run_updates_names_bad_inputs(stream):
    _, K, V = stream
    with pytest.raises(ValueError, match="rule must be one of"):
        rec.run_updates(K, V, "hebb")
    with pytest.raises(ValueError, match="takes the parameters"):
        rec.run_updates(K, V, "delta")
    with pytest.raises(ValueError, match="gamma must have length 7"):
        rec.run_updates(K, V, "decay", gamma=[0.5, 0.5])
    with pytest.raises(ValueError, match="every entry of gamma"):
        rec.run_updates(K, V, "decay", gamma=np.full(7, 2.0))
    with pytest.raises(ValueError, match="S0 must have shape"):
        rec.run_updates(K, V, "add", S0=np.zeros((4, 4)))


def test_forgetting_rules_chapter10():
    ages, add = rec.recall_errors_by_age("add", seed=0)
    assert np.array_equal(ages, np.arange(24)) and add.shape == (24,)
    # adding interferes with every pair alike: about sqrt((M - 1) / d) = 1.7
    assert 1.3 < add.mean() < 2.0 and np.ptp(add) < 0.6
    _, delta = rec.recall_errors_by_age("delta", seed=0)
    assert delta[0] < 1e-12 and delta[0] < delta[3] < delta[-1]
    _, decay = rec.recall_errors_by_age("decay", gamma=0.7, seed=0)
    assert decay[:3].mean() < decay[-3:].mean() < add.mean()
    again = rec.recall_errors_by_age("decay", gamma=0.7, seed=0)[1]
    assert np.array_equal(decay, again)
    with pytest.raises(ValueError, match="gamma"):
        rec.recall_errors_by_age("decay", gamma=1.2)


def test_cache_vs_state_chapter9():
    result = rec.cache_vs_state_errors(10, seed=0)
    assert result.keys.shape == (10, 4) and result.values.shape == (10, 4)
    assert np.array_equal(result.tokens, np.arange(1, 11))
    assert result.cache_error[0] < 1e-12 and result.state_error[0] < 1e-12
    S = rec.run_updates(result.keys, result.values, "add")  # the 4 x 4 state after ten tokens
    assert np.isclose(result.state_error[-1], np.linalg.norm(S @ result.keys[0] - result.values[0]))
    finals = np.array([[r.cache_error[-1], r.state_error[-1]]
                       for r in (rec.cache_vs_state_errors(10, seed=s) for s in range(40))])
    cache, state = finals.T
    assert np.median(cache) < 0.01 and np.median(state) > 1.0
    with pytest.raises(ValueError, match="n_tokens"):
        rec.cache_vs_state_errors(0)


def test_tensor_power_and_polynomial_state():
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    assert np.allclose(rec.tensor_power(x, 0), [1.0])
    assert rec.tensor_power(x, 3).shape == (27,)
    assert np.isclose(rec.tensor_power(x, 3) @ rec.tensor_power(y, 3), (x @ y) ** 3)
    assert rec.tensor_power(np.vstack([x, y]), 2).shape == (2, 9)
    K, V, q = rng.standard_normal((20, 3)), rng.standard_normal((20, 2)), rng.standard_normal(3)
    for p in (1, 2, 3):
        S = rec.polynomial_state(K, V, p)
        assert S.shape == (2, 3**p)
        assert np.allclose(S @ rec.tensor_power(q, p), rec.polynomial_read(K, V, q, p))
    assert np.allclose(rec.polynomial_state(K, V, 1), V.T @ K)
    with pytest.raises(ValueError, match="p must be"):
        rec.polynomial_state(K, V, -1)
    with pytest.raises(ValueError, match="q must have length 3"):
        rec.polynomial_read(K, V, q[:2], 2)


def test_exp_kernel_features_approach_the_exponential():
    rng = np.random.default_rng(10)
    q, k = rng.standard_normal(3), rng.standard_normal(3)
    q, k = q / np.linalg.norm(q), k / np.linalg.norm(k)
    beta = 1.5
    assert rec.exp_kernel_features(q, beta, 3).shape == (1 + 3 + 9 + 27,)
    errors = [abs(rec.exp_kernel_features(q, beta, P) @ rec.exp_kernel_features(k, beta, P)
                  - np.exp(beta * q @ k)) for P in range(8)]
    assert all(e1 < e0 for e0, e1 in itertools.pairwise(errors))
    assert errors[-1] < 1e-3
    taylor = sum((beta * q @ k) ** p / np.prod(range(1, p + 1)) for p in range(5))
    phi_q, phi_k = rec.exp_kernel_features(q, beta, 4), rec.exp_kernel_features(k, beta, 4)
    assert np.isclose(phi_q @ phi_k, taylor)
    assert rec.exp_kernel_features(np.vstack([q, k]), beta, 2).shape == (2, 13)
