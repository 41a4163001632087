"""Tests of memkit.icl (Chapter 11, Derivations D11-D12, Exercise 5)."""

import numpy as np
import pytest

from memkit import icl

# Exercise 5: three pairs in one dimension, rows of X and Y
X5 = np.array([[1.0], [2.0], [1.0]])
Y5 = np.array([[1.0], [2.0], [3.0]])


def test_exercise5_one_layer_predicts_0_8():
    assert np.isclose(icl.linear_attention_readout(X5, Y5, [1.0], 0.1)[0], 0.8)
    assert np.isclose(icl.icl_layers(X5, Y5, [1.0], 0.1, 1)[0, 0], 0.8)
    assert np.isclose(icl.gd_steps(X5, Y5, 0.1, 1)[0, 0, 0], 0.8)


def test_exercise5_least_squares_is_8_over_6():
    W = icl.least_squares_fit(X5, Y5)
    assert W.shape == (1, 1) and np.isclose(W[0, 0], 8 / 6)
    assert round(W[0, 0], 2) == 1.33


def test_exercise5_exact_step_size():
    eta = 1 / np.sum(X5**2)  # 1/6
    assert np.isclose(icl.gd_steps(X5, Y5, eta, 1)[0, 0, 0], 8 / 6)
    assert np.allclose(icl.gd_steps(X5, Y5, eta, 3)[:, 0, 0], 8 / 6)  # and it stays there


def test_layers_equal_gradient_steps():
    rng = np.random.default_rng(4)
    X, x_q = rng.standard_normal((8, 3)), rng.standard_normal(3)
    Y = X @ rng.standard_normal((3, 2)) + 0.1 * rng.standard_normal((8, 2))
    weights = icl.gd_steps(X, Y, 0.05, 6)
    assert weights.shape == (6, 2, 3)
    layers = icl.icl_layers(X, Y, x_q, 0.05, 6)
    assert layers.shape == (6, 2)
    assert np.allclose(layers, weights @ x_q, atol=1e-12)
    assert np.allclose(icl.linear_attention_readout(X, Y, x_q, 0.05), weights[0] @ x_q)


def test_layers_converge_to_least_squares():
    rng = np.random.default_rng(5)
    X, x_q = rng.standard_normal((10, 2)), rng.standard_normal(2)
    Y = X @ rng.standard_normal((2, 1)) + 0.2 * rng.standard_normal((10, 1))
    eta = 1.0 / np.linalg.eigvalsh(X.T @ X).max()
    predictions = icl.icl_layers(X, Y, x_q, eta, 200)
    assert np.allclose(predictions[-1], icl.least_squares_fit(X, Y) @ x_q, atol=1e-8)
    gaps = np.abs(predictions[:, 0] - (icl.least_squares_fit(X, Y) @ x_q)[0])
    assert gaps[-1] < gaps[0]


def test_gd_steps_from_a_given_start():
    W0 = np.array([[0.5]])
    W1 = icl.gd_steps(X5, Y5, 0.1, 1, W0=W0)[0]
    assert np.allclose(W1, W0 - 0.1 * (X5 @ W0.T - Y5).T @ X5)


def test_icl_names_bad_inputs():
    with pytest.raises(ValueError, match="X and Y"):
        icl.gd_steps(X5, Y5[:2], 0.1, 1)
    with pytest.raises(ValueError, match="x_q must have length 1"):
        icl.linear_attention_readout(X5, Y5, [1.0, 2.0], 0.1)
    with pytest.raises(ValueError, match="eta"):
        icl.icl_layers(X5, Y5, [1.0], -0.1, 2)
    with pytest.raises(ValueError, match="layers"):
        icl.icl_layers(X5, Y5, [1.0], 0.1, 0)
    with pytest.raises(ValueError, match="W0 must have shape"):
        icl.gd_steps(X5, Y5, 0.1, 1, W0=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="X has linearly dependent inputs"):
        icl.least_squares_fit(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), Y5)
