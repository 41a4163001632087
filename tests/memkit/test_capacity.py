"""Tests of memkit.capacity: closed forms and Monte Carlo capacities (Chapters 3-6, 12)."""

from fractions import Fraction

import numpy as np
import pytest

from memkit import capacity
from memkit.scores import score


def two_significant(x):
    return float(f"{x:.2g}")


@pytest.mark.parametrize("d", [1, 3, 16, 64])
def test_unit_dot_moments_closed_form(d):
    assert capacity.unit_dot_moment_exact(d, 0) == 1
    assert capacity.unit_dot_moment_exact(d, 1) == Fraction(1, d)
    assert capacity.unit_dot_moment_exact(d, 2) == Fraction(3, d * (d + 2))
    assert capacity.unit_dot_moment_exact(d, 3) == Fraction(15, d * (d + 2) * (d + 4))
    assert capacity.unit_dot_moment(d, 2) == pytest.approx(3 / (d * (d + 2)))


def test_unit_vector_in_one_dimension_has_unit_dot():
    # d = 1: s = +-1, so every moment is 1.
    assert capacity.unit_dot_moment_exact(1, 4) == 1


def test_moments_monte_carlo_within_four_standard_errors():
    d, n = 16, 100_000
    p = np.array([1, 2, 3])
    estimate = capacity.unit_dot_moments_mc(d, p, n, seed=0)
    exact = np.array([capacity.unit_dot_moment(d, int(k)) for k in p])
    spread = np.array([capacity.unit_dot_moment(d, 2 * int(k)) for k in p]) - exact**2
    np.testing.assert_array_less(np.abs(estimate - exact), 4 * np.sqrt(spread / n))
    np.testing.assert_allclose(estimate, exact, rtol=0.05)


def test_chapter_12_table():
    table = capacity.capacity_table(d=64, beta=8)
    assert table["hebbian"] == 64
    assert table["least_squares"] == 128
    assert round(table["relu"]) == 128
    assert round(table["relu2"]) == 2731
    assert round(table["relu3"]) == 34953
    assert two_significant(table["softmax"]) == 1.2e6
    assert table["softmax"] == pytest.approx(np.exp(14))


def test_exercise_3_exact_squared_relu_capacity():
    assert capacity.relu_power_capacity(64, 2, exact=True) == pytest.approx(2816)
    ratio = capacity.relu_power_capacity(64, 2, exact=True) / capacity.relu_power_capacity(64, 2)
    assert ratio == pytest.approx(66 / 64)
    assert capacity.relu_power_capacity(10, 1) == 20
    assert capacity.relu_power_capacity(10, 1, exact=True) == pytest.approx(20)


def test_ratios_reach_one_at_their_capacities():
    d = 32
    assert capacity.hebbian_ratio(d + 1, d) == pytest.approx(1.0)
    assert capacity.hebbian_capacity(d) == d
    assert capacity.least_squares_ratio(capacity.least_squares_capacity(d), d) == pytest.approx(1.0)
    for p in (1, 2, 3):
        M = capacity.relu_power_capacity(d, p, exact=True)
        assert capacity.relu_power_ratio(round(M) + 1, d, p) == pytest.approx(1.0, rel=1e-3)
    beta = 4.0
    M = capacity.softmax_capacity(d, beta)
    assert capacity.softmax_ratio(round(M), d, beta) == pytest.approx(1.0, rel=1e-2)


def test_exercise_1_predictions_and_arrays():
    assert capacity.hebbian_ratio(32, 16) == pytest.approx(1.39, abs=0.005)
    assert capacity.least_squares_ratio(32, 16) == pytest.approx(1.00)
    grid = capacity.least_squares_ratio(np.array([4, 16, 64]), 16)
    np.testing.assert_allclose(grid, [0.0, 0.0, np.sqrt(3)])
    assert isinstance(capacity.hebbian_ratio(5, 4), float)


def test_dot_product_variance():
    variance = capacity.dot_product_variance_mc(64, 4000, seed=0)
    assert variance == pytest.approx(64, rel=0.10)


@pytest.mark.parametrize(
    "name, params, M, d, predicted",
    [
        ("identity", {}, 32, 16, capacity.hebbian_ratio(32, 16)),
        ("relu", {}, 60, 16, capacity.relu_power_ratio(60, 16, 1)),
        ("relu_power", {"p": 2}, 100, 32, capacity.relu_power_ratio(100, 32, 2)),
        ("exponential", {"beta": 8}, 1000, 64, capacity.softmax_ratio(1000, 64, 8)),
    ],
)
def test_score_interference_matches_closed_form(name, params, M, d, predicted):
    measured = capacity.score_interference_mc(M, d, score(name, **params), trials=300, seed=1)
    assert measured == pytest.approx(predicted, rel=0.1)


def test_softmax_normalisation_cancels():
    beta = 3.0
    exp = capacity.score_interference_mc(50, 16, score("exponential", beta=beta), 20, seed=4)
    # Dividing every weight by a constant Z (the softmax normaliser) leaves the ratio.
    scaled = capacity.score_interference_mc(
        50, 16, lambda s: np.exp(beta * np.asarray(s)) / 7.0, 20, seed=4
    )
    assert exp == pytest.approx(scaled)


def test_capacity_monte_carlo():
    d = 16
    estimates = [
        capacity.capacity_mc(d, score(name, **params), seed=0)
        for name, params in [("identity", {}), ("relu", {}), ("relu_power", {"p": 2})]
    ]
    predicted = [d + 1, 2 * d, capacity.relu_power_capacity(d, 2, exact=True)]
    np.testing.assert_allclose(estimates, predicted, rtol=0.2)
    cubed = capacity.capacity_mc(d, score("relu_power", p=3), seed=0)
    assert estimates[0] < estimates[1] < estimates[2] < cubed


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="M"):
        capacity.hebbian_ratio(0, 4)
    with pytest.raises(ValueError, match="M"):
        capacity.softmax_ratio(np.array([1.0, 0.5]), 4, 1.0)
    with pytest.raises(ValueError, match="d_k"):
        capacity.least_squares_capacity(0)
    with pytest.raises(TypeError, match="d"):
        capacity.unit_dot_moment(2.5, 1)
    with pytest.raises(ValueError, match="p_values"):
        capacity.unit_dot_moments_mc(4, [-1], 10, seed=0)
    with pytest.raises(TypeError, match="score"):
        capacity.score_interference_mc(10, 4, "relu", 5, seed=0)
    with pytest.raises(ValueError, match="score"):
        capacity.score_interference_mc(10, 4, lambda s: 0 * s, 5, seed=0)
    with pytest.raises(ValueError, match="max_M"):
        capacity.capacity_mc(8, score("relu_power", p=3), max_M=100)
