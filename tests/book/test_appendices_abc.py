"""The claims of Appendices A, B and C, reproduced by the memkit calls their pages make."""

import numpy as np
import pytest

from memkit import attention, capacity, edit, linalg, memory


def test_projection_is_symmetric_idempotent_with_trace_equal_to_rank():
    A = linalg.random_rank_r(6, 3, 2, seed=3)  # three columns spanning two dimensions
    P = linalg.projection(A)
    np.testing.assert_allclose(P, P.T, atol=1e-12)
    np.testing.assert_allclose(P @ P, P, atol=1e-12)
    assert np.trace(P) == pytest.approx(linalg.rank(A)) == pytest.approx(2)


def test_more_unit_vectors_than_dimensions_cannot_be_orthonormal():
    five = memory.random_unit_vectors(5, 4, seed=1)
    assert linalg.rank(five) == 4
    assert np.abs(five @ five.T - np.eye(5)).max() > 0.1


def test_least_squares_and_minimum_norm_solutions_are_the_pseudo_inverse():
    rng = np.random.default_rng(0)
    for shape in ((8, 3), (3, 8)):
        A, b = rng.standard_normal(shape), rng.standard_normal(shape[0])
        x = memory.least_squares_write(A, b[:, None])[0]
        np.testing.assert_allclose(x, np.linalg.pinv(A) @ b, atol=1e-12)
        np.testing.assert_allclose(x, np.linalg.lstsq(A, b, rcond=None)[0], atol=1e-12)


def test_ridge_tends_to_the_pseudo_inverse():
    # (Sherman-Morrison against re-inverting is tested in test_memory.py)
    rng = np.random.default_rng(1)
    K = linalg.random_rank_r(10, 4, 3, seed=5)
    V = rng.standard_normal((10, 2))
    gaps = [np.abs(memory.ridge_write(K, V, lam) - (np.linalg.pinv(K) @ V).T).max()
            for lam in (1e-2, 1e-4, 1e-6)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-6


def test_whitening_turns_the_second_moment_into_the_identity():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((2000, 3)) @ rng.standard_normal((3, 3))
    S = linalg.whitening_matrix(edit.key_covariance(X))
    np.testing.assert_allclose(edit.key_covariance(X @ S), np.eye(3), atol=1e-10)


def test_random_unit_vectors_have_mean_square_overlap_one_over_d():
    """Appendix B / D1: E[s^2] = 1/d."""
    for d in (16, 64):
        estimate = capacity.unit_dot_moments_mc(d, [1], 100_000, seed=0)[0]
        assert estimate == pytest.approx(1 / d, rel=0.03)
        assert capacity.unit_dot_moment(d, 1) == pytest.approx(1 / d)


def test_interference_grows_like_the_square_root_of_the_number_of_other_pairs():
    """Appendix B: four times as many other pairs, twice the interference."""
    low = memory.hebbian_interference_mc(65, 64, trials=50, seed=0)
    high = memory.hebbian_interference_mc(257, 64, trials=50, seed=0)
    assert high / low == pytest.approx(2.0, rel=0.03)


def test_hebbian_measured_ratio_sits_slightly_below_the_prediction():
    """Appendix B (Jensen): for a Hebbian store, whose formula is a root mean square, the mean
    ratio is below sqrt((M-1)/d), by a few percent (least squares lands above: see
    test_numbers_ch00_05.py)."""
    measured = memory.hebbian_interference_mc(32, 16, trials=200, seed=0)
    predicted = capacity.hebbian_ratio(32, 16)
    assert 0.97 * predicted < measured < predicted


def test_softmax_keeps_order_scales_by_e_to_the_gap_and_ignores_a_shift():
    """Appendix C."""
    logits = np.array([2.0, 1.0, 0.5, -1.0])
    a = attention.softmax(logits)
    assert np.array_equal(np.argsort(a), np.argsort(logits))
    assert a[0] / a[1] == pytest.approx(np.exp(logits[0] - logits[1]))
    np.testing.assert_allclose(attention.softmax(logits + 7.0), a, atol=1e-15)


def test_causal_attention_matrix_is_lower_triangular():
    rng = np.random.default_rng(3)
    A = attention.attention_matrix(rng.standard_normal((5, 3)), rng.standard_normal((5, 3)),
                                   beta=1.0, causal=True)
    assert np.all(np.triu(A, k=1) == 0)
    np.testing.assert_allclose(A.sum(axis=1), 1.0)


def test_policy_gradient_is_unchanged_by_a_constant_baseline():
    rng = np.random.default_rng(4)
    a = attention.softmax(rng.standard_normal(5))
    r = rng.standard_normal(5)
    g = attention.policy_gradient_logits(a, r)
    np.testing.assert_allclose(attention.policy_gradient_logits(a, r - 5.0), g, atol=1e-14)
    assert g.sum() == pytest.approx(0.0, abs=1e-14)
