"""Tests of memkit.scores: score functions and the MLP as a memory (Chapter 5)."""

import numpy as np
import pytest

from memkit import memory, scores

S = np.array([-2.0, -0.5, 0.0, 0.3, 1.0])


def test_score_values():
    np.testing.assert_array_equal(scores.identity(S), S)
    np.testing.assert_array_equal(scores.relu(S), [0, 0, 0, 0.3, 1.0])
    np.testing.assert_allclose(scores.relu_power(S, 3), [0, 0, 0, 0.027, 1.0])
    np.testing.assert_allclose(scores.exponential(S, 2.0), np.exp(2 * S))
    np.testing.assert_allclose(scores.exponential(S, 0), 1.0)
    assert scores.relu(2.5) == 2.5


def test_identity_does_not_alias_its_input():
    s = S.copy()
    out = scores.identity(s)
    out[0] = 99.0
    assert s[0] == -2.0


def test_swish_formula_and_no_overflow():
    np.testing.assert_allclose(scores.swish(S), S / (1 + np.exp(-S)))
    with np.errstate(over="raise"):
        big = scores.swish(np.array([-1000.0, 1000.0]))
    np.testing.assert_allclose(big, [0.0, 1000.0])


def test_squared_relu_is_relu_times_s():
    np.testing.assert_allclose(scores.relu_power(S, 2), scores.relu(S) * S)


def test_registry():
    assert set(scores.SCORES) >= {"identity", "relu", "relu_power", "exponential", "swish"}
    np.testing.assert_allclose(scores.score("relu_power", p=2)(S), scores.relu_power(S, 2))
    np.testing.assert_allclose(scores.score("exponential", beta=8)(S), np.exp(8 * S))
    with pytest.raises(ValueError, match="name"):
        scores.score("gelu")
    with pytest.raises(TypeError, match="relu_power"):
        scores.score("relu_power")
    with pytest.raises(ValueError, match="p"):
        scores.score("relu_power", p=0)


def test_mlp_read_equals_mlp_forward():
    rng = np.random.default_rng(0)
    W1 = rng.standard_normal((7, 4))
    W2 = rng.standard_normal((3, 7))
    x = rng.standard_normal(4)
    for sigma in (scores.relu, scores.swish, scores.score("relu_power", p=2)):
        out, weights = scores.mlp_read(W1, W2.T, x, sigma)
        np.testing.assert_allclose(out, scores.mlp_forward(W1, W2, x, sigma))
        np.testing.assert_allclose(weights, sigma(W1 @ x))
        np.testing.assert_allclose(out, sum(w * v for w, v in zip(weights, W2.T)))


def test_linear_score_is_the_linear_memory():
    rng = np.random.default_rng(1)
    K = rng.standard_normal((6, 5))
    V = rng.standard_normal((6, 2))
    x = rng.standard_normal(5)
    out, _ = scores.mlp_read(K, V, x, scores.identity)
    np.testing.assert_allclose(out, memory.read(memory.hebbian_write(K, V), x))


def test_glu_and_squared_relu_as_glu():
    rng = np.random.default_rng(2)
    G = rng.standard_normal((5, 4))
    K = rng.standard_normal((5, 4))
    V = rng.standard_normal((5, 3))
    x = rng.standard_normal(4)
    out, weights = scores.glu_read(G, K, V, x, scores.swish)
    np.testing.assert_allclose(weights, scores.swish(G @ x) * (K @ x))
    np.testing.assert_allclose(out, V.T @ weights)
    glu_out, _ = scores.squared_relu_as_glu(K, V, x)
    mlp_out, _ = scores.mlp_read(K, V, x, scores.score("relu_power", p=2))
    np.testing.assert_allclose(glu_out, mlp_out)


def test_errors_name_the_argument():
    K = np.ones((5, 4))
    with pytest.raises(ValueError, match="V"):
        scores.mlp_read(K, np.ones((4, 3)), np.ones(4), scores.relu)
    with pytest.raises(ValueError, match="x"):
        scores.mlp_read(K, np.ones((5, 3)), np.ones(5), scores.relu)
    with pytest.raises(TypeError, match="sigma"):
        scores.mlp_read(K, np.ones((5, 3)), np.ones(4), "relu")
    with pytest.raises(ValueError, match="W2"):
        scores.mlp_forward(K, np.ones((3, 4)), np.ones(4), scores.relu)
    with pytest.raises(ValueError, match="K"):
        scores.glu_read(K, np.ones((5, 3)), np.ones((5, 2)), np.ones(4), scores.swish)
    with pytest.raises(TypeError, match="act"):
        scores.glu_read(K, K, np.ones((5, 2)), np.ones(4), None)
    with pytest.raises(ValueError, match="p"):
        scores.relu_power(S, 0)
    with pytest.raises(ValueError, match="beta"):
        scores.exponential(S, -1.0)
    with pytest.raises(TypeError, match="s"):
        scores.relu("abc")
