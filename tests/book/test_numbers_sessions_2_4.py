"""Every number the monograph states in Chapters 3, 4 and 5 is reproduced by memkit.

Tolerances follow the monograph's wording: a number printed with two decimals is
matched to the rounding shown, "about" a measured value allows the rounding plus
Monte Carlo noise (0.02 on Exercise 1), and exact formulas are compared as
fractions or to machine precision.
"""

from fractions import Fraction

import numpy as np
import pytest

from memkit import capacity, checks, costs, memory, scores

# ---------------------------------------------------------------- Chapter 3


@pytest.mark.parametrize("d_k", [4, 16, 64])
def test_ch03_orthonormal_keys_recall_perfectly_up_to_d_k(d_k):
    rng = np.random.default_rng(d_k)
    keys = np.linalg.qr(rng.normal(size=(d_k, d_k)))[0].T
    values = rng.normal(size=(d_k, 3))
    W = memory.hebbian_write(keys, values)
    np.testing.assert_allclose(memory.read(W, keys), values, atol=1e-12)


def test_ch03_one_more_pair_is_a_rank_one_update():
    rng = np.random.default_rng(0)
    K, V = memory.random_unit_vectors(6, 8, rng), rng.normal(size=(6, 3))
    k, v = memory.random_unit_vectors(1, 8, rng), rng.normal(size=(1, 3))
    grown = memory.hebbian_write(np.vstack([K, k]), np.vstack([V, v]))
    np.testing.assert_allclose(grown, memory.hebbian_write(K, V) + np.outer(v[0], k[0]))


@pytest.mark.parametrize("d_k", [16, 64])
def test_ch03_squared_dot_of_random_unit_keys_is_one_over_d_k(d_k):
    assert capacity.unit_dot_moment_exact(d_k, 1) == Fraction(1, d_k)
    measured = capacity.unit_dot_moments_mc(d_k, [1], n=200_000, seed=d_k)[0]
    assert measured == pytest.approx(1 / d_k, rel=0.02)


def test_ch03_exercise_1_hebbian_ratio():
    # Exercise 1 (d_k = 16, M = 32): predicted sqrt(31/16) = 1.39, measured 1.38.
    predicted = capacity.hebbian_ratio(32, 16)
    assert predicted == pytest.approx(np.sqrt(31 / 16))
    assert round(predicted, 2) == 1.39
    measured = memory.hebbian_interference_mc(32, 16, trials=2000, seed=32)
    assert measured == pytest.approx(1.38, abs=0.02)


def test_ch03_capacity_is_about_d_k():
    # The ratio sqrt((M-1)/d_k) reaches one at M = d_k + 1, quoted as M ~ d_k.
    assert capacity.hebbian_ratio(17, 16) == pytest.approx(1.0)
    assert capacity.hebbian_capacity(16) == 16


def test_ch03_sgd_on_a_linear_layer_writes_an_outer_product():
    assert checks.check_linear_layer_gradient(seed=0).passed
    # Hebbian rule = gradient of the correlation v^T W k: d(v^T W k)/dW = v k^T.
    rng = np.random.default_rng(1)
    W, k, v = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=3)
    numeric = checks.numerical_gradient(lambda W_: v @ W_ @ k, W)
    np.testing.assert_allclose(memory.hebbian_write(k[None], v[None]), numeric, atol=1e-8)


# ---------------------------------------------------------------- Chapter 4


@pytest.mark.parametrize("M", [4, 12, 16])
def test_ch04_least_squares_is_exact_up_to_d_k(M):
    rng = np.random.default_rng(M)
    K, V = memory.random_unit_vectors(M, 16, rng), rng.normal(size=(M, 4))
    np.testing.assert_allclose(memory.read(memory.least_squares_write(K, V), K), V, atol=1e-9)
    dual = memory.least_squares_write(K, np.eye(M))
    np.testing.assert_allclose(dual @ K.T, np.eye(M), atol=1e-9)


def test_ch04_projection_facts():
    d_k, M = 16, 64
    K = memory.random_unit_vectors(M, d_k, np.random.default_rng(7))
    P = memory.least_squares_recall_weights(K)
    np.testing.assert_allclose(P @ P, P, atol=1e-12)
    assert np.trace(P) == pytest.approx(d_k)
    assert np.mean(np.diag(P)) == pytest.approx(d_k / M)
    # with P_jj = d_k / M the ratio sqrt(P_jj - P_jj^2) / P_jj is sqrt(M/d_k - 1)
    p = d_k / M
    assert np.sqrt(p - p**2) / p == pytest.approx(capacity.least_squares_ratio(M, d_k))


def test_ch04_capacity_is_twice_the_hebbian_one():
    assert capacity.least_squares_capacity(16) == 32 == 2 * capacity.hebbian_capacity(16)
    assert capacity.least_squares_ratio(32, 16) == pytest.approx(1.0)
    # the squared ratios differ by (d_k - 1)/d_k: the share whitening removes
    d_k, M = 16, 40
    gap = capacity.hebbian_ratio(M, d_k) ** 2 - capacity.least_squares_ratio(M, d_k) ** 2
    assert gap == pytest.approx((d_k - 1) / d_k)


def test_ch04_exercise_1_least_squares_ratio():
    # Exercise 1 (d_k = 16, M = 32): predicted sqrt(32/16 - 1) = 1.00, measured 1.01.
    assert round(capacity.least_squares_ratio(32, 16), 2) == 1.00
    measured = memory.least_squares_interference_mc(32, 16, trials=2000, seed=32)
    assert measured == pytest.approx(1.01, abs=0.02)


def test_ch04_careful_write_figure_claim():
    # d_k = 16, mean of three draws: Hebbian wrong from M = 2, least squares exact to M = d_k.
    errors = memory.careful_write_errors(np.arange(1, 25), d_k=16, draws=3, seed=0)
    assert np.all(errors.least_squares[:16] < 1e-9)
    assert np.all(errors.least_squares[16:] > 0.01)
    assert np.all(errors.hebbian[1:] > 0.01)
    assert np.all(errors.least_squares <= errors.hebbian + 1e-12)


def test_ch04_delta_rule_overwrites_exactly_and_idempotently():
    assert checks.check_delta_overwrite(seed=0).passed
    rng = np.random.default_rng(9)
    W0, v = rng.normal(size=(3, 5)), rng.normal(size=3)
    k = memory.random_unit_vectors(1, 5, rng)[0]
    W1 = memory.delta_step(W0, k, v, 1.0)
    np.testing.assert_allclose(W1 @ k, v, atol=1e-12)
    np.testing.assert_allclose(memory.delta_step(W1, k, v, 1.0), W1, atol=1e-12)


def test_ch04_rls_equals_ridge():
    rng = np.random.default_rng(11)
    K, V, lam = memory.random_unit_vectors(40, 16, rng), rng.normal(size=(40, 8)), 0.1
    W, R = memory.rls_write(K, V, lam)
    np.testing.assert_allclose(W, memory.ridge_write(K, V, lam), atol=1e-10)
    np.testing.assert_allclose(R, np.linalg.inv(lam * np.eye(16) + K.T @ K), atol=1e-10)


# ---------------------------------------------------------------- Chapter 5


def test_ch05_mlp_is_a_memory():
    rng = np.random.default_rng(0)
    W1, W2, x = rng.normal(size=(32, 8)), rng.normal(size=(8, 32)), rng.normal(size=8)
    read, _ = scores.mlp_read(W1, W2.T, x, scores.relu)
    np.testing.assert_allclose(read, scores.mlp_forward(W1, W2, x, scores.relu))


def test_ch05_mlp_holds_two_thirds_of_a_layer():
    for d in [64, 4096]:
        assert Fraction(costs.mlp_params(d), costs.layer_params(d)) == Fraction(2, 3)


@pytest.mark.parametrize("d", [8, 32, 64])
def test_ch05_moments_are_exact_fractions(d):
    assert capacity.unit_dot_moment_exact(d, 1) == Fraction(1, d)
    assert capacity.unit_dot_moment_exact(d, 2) == Fraction(3, d * (d + 2))
    assert capacity.unit_dot_moment_exact(d, 3) == Fraction(15, d * (d + 2) * (d + 4))


@pytest.mark.parametrize("d", [8, 32])
def test_ch05_moments_monte_carlo(d):
    estimates = capacity.unit_dot_moments_mc(d, [1, 2, 3], n=400_000, seed=d)
    exact = [capacity.unit_dot_moment(d, p) for p in [1, 2, 3]]
    np.testing.assert_allclose(estimates, exact, rtol=0.03)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_ch05_relu_power_keeps_half_the_moment(p):
    # E[ReLU(s)^(2p)] = E[s^(2p)] / 2, because s is symmetric.
    keys = memory.random_unit_vectors(2, 16, seed=p, trials=400_000)
    s = np.sum(keys[:, 0] * keys[:, 1], axis=-1)
    measured = np.mean(scores.relu_power(s, p) ** 2)
    assert measured == pytest.approx(capacity.unit_dot_moment(16, p) / 2, rel=0.03)


def test_ch05_capacities_at_d_64():
    d = 64
    assert capacity.relu_power_capacity(d, 1) == 2 * d == 128
    assert capacity.relu_power_capacity(d, 2) == pytest.approx(Fraction(2, 3) * d**2)
    assert round(capacity.relu_power_capacity(d, 2)) == 2731
    assert capacity.relu_power_capacity(d, 3) == pytest.approx(Fraction(2, 15) * d**3)
    assert round(capacity.relu_power_capacity(d, 3)) == 34953
    # Exercise 3: exact 2 / E[s^4] = 2 d (d + 2) / 3 = 2816, larger by (d + 2)/d
    assert 2 / capacity.unit_dot_moment_exact(d, 2) == Fraction(2 * d * (d + 2), 3) == 2816
    assert capacity.relu_power_capacity(d, 2, exact=True) == pytest.approx(2816)
    exact_over_leading = (capacity.relu_power_capacity(d, 2, exact=True)
                          / capacity.relu_power_capacity(d, 2))
    assert exact_over_leading == pytest.approx((d + 2) / d)
    # ReLU gains a factor 2 over the linear memory
    assert capacity.relu_power_capacity(d, 1) == 2 * capacity.hebbian_capacity(d)


def test_ch05_squaring_a_weak_similarity():
    assert float(scores.relu_power(0.1, 2)) == pytest.approx(0.01)


def test_ch05_ratio_monte_carlo_sits_just_under_the_prediction():
    d, M = 32, 200
    rows = [(scores.identity, capacity.hebbian_ratio(M, d))]
    rows += [(scores.score("relu_power", p=p), capacity.relu_power_ratio(M, d, p))
             for p in [1, 2, 3]]
    for sigma, predicted in rows:
        measured = capacity.score_interference_mc(M, d, sigma, trials=2000, seed=1)
        assert 0.9 * predicted < measured < 1.01 * predicted


def test_ch05_squared_relu_is_a_glu_with_shared_weights():
    rng = np.random.default_rng(4)
    K, V, x = rng.normal(size=(32, 8)), rng.normal(size=(32, 8)), rng.normal(size=8)
    squared, _ = scores.mlp_read(K, V, x, scores.score("relu_power", p=2))
    gated, _ = scores.squared_relu_as_glu(K, V, x)
    np.testing.assert_allclose(squared, gated)


@pytest.mark.parametrize("d", [768, 4096])
def test_ch05_swiglu_with_hidden_8d_over_3_keeps_8_d_squared(d):
    assert costs.swiglu_params(d) == 8 * d * d == costs.mlp_params(d)
    assert costs.swiglu_params(d, 4 * d) == Fraction(3, 2) * costs.mlp_params(d)
    # Llama 3 8B's hidden 3.5 d costs 3 * 3.5 / 8 of the two-matrix budget
    assert Fraction(costs.swiglu_params(d, int(3.5 * d)), costs.mlp_params(d)) == Fraction(21, 16)
