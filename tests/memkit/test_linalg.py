"""Tests of memkit.linalg: the readings of a product, rank, truncated SVD (Chapters 1-2)."""

import numpy as np
import pytest

from memkit import linalg


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_matvec_readings_agree_with_product(rng):
    W = rng.standard_normal((4, 6))
    x = rng.standard_normal(6)
    y_rows, terms = linalg.matvec_by_rows(W, x)
    y_cols, scaled = linalg.matvec_by_columns(W, x)
    np.testing.assert_allclose(y_rows, W @ x)
    np.testing.assert_allclose(y_cols, W @ x)
    assert terms.shape == (4, 6) and scaled.shape == (6, 4)
    np.testing.assert_allclose(terms.sum(axis=1), W @ x)
    np.testing.assert_allclose(scaled[0], x[0] * W[:, 0])


def test_changing_one_coordinate_rescales_one_column_only(rng):
    W = rng.standard_normal((3, 5))
    x = rng.standard_normal(5)
    x2 = x.copy()
    x2[0] += 1.0
    _, before = linalg.matvec_by_columns(W, x)
    _, after = linalg.matvec_by_columns(W, x2)
    np.testing.assert_allclose(after[1:], before[1:])
    np.testing.assert_allclose(after[0] - before[0], W[:, 0])


@pytest.mark.parametrize("shape", [(3, 4, 5), (1, 3, 1), (5, 1, 2)])
def test_four_readings_agree_with_matmul(shape, rng):
    m, r, n = shape
    A = rng.standard_normal((m, r))
    B = rng.standard_normal((r, n))
    readings = (linalg.matmul_entry, linalg.matmul_row, linalg.matmul_column, linalg.matmul_outer)
    for reading in readings:
        C = reading(A, B)
        assert C.shape == (m, n)
        np.testing.assert_allclose(C, A @ B, atol=1e-12)


def test_outer_terms_are_rank_one_and_sum_to_product(rng):
    A = rng.standard_normal((4, 3))
    B = rng.standard_normal((3, 5))
    terms = linalg.outer_terms(A, B)
    assert terms.shape == (3, 4, 5)
    assert [linalg.rank(t) for t in terms] == [1, 1, 1]
    np.testing.assert_allclose(terms[1], np.outer(A[:, 1], B[1]))
    np.testing.assert_allclose(terms.sum(axis=0), A @ B)


def test_rank_of_sum_of_r_outer_products():
    for r in range(5):
        assert linalg.rank(linalg.random_rank_r(8, 6, r, seed=r)) == r


def test_random_rank_r_is_reproducible():
    first = linalg.random_rank_r(4, 4, 2, 3)
    np.testing.assert_array_equal(first, linalg.random_rank_r(4, 4, 2, 3))
    gen = np.random.default_rng(3)
    assert linalg.random_rank_r(4, 4, 2, gen).shape == (4, 4)


def test_truncation_error_equals_discarded_energy(rng):
    A = rng.standard_normal((7, 5))
    for r in range(6):
        Ar = linalg.truncated_svd(A, r)
        assert linalg.rank(Ar) == r
        error = np.sum((A - Ar) ** 2)
        assert error == pytest.approx(linalg.discarded_energy(A, r), rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(linalg.truncated_svd(A, 5), A)


def test_svd_energy_sums_to_frobenius_norm(rng):
    A = rng.standard_normal((6, 4))
    energy, kept = linalg.svd_energy(A)
    assert energy.shape == kept.shape == (4,)
    assert energy.sum() == pytest.approx(np.sum(A**2))
    assert np.all(np.diff(energy) <= 0)
    assert kept[-1] == pytest.approx(1.0)
    assert kept[1] == pytest.approx(1 - linalg.discarded_energy(A, 2) / np.sum(A**2))


def test_structured_pattern_keeps_most_energy_in_three_terms():
    A = linalg.structured_pattern()
    assert A.shape == (8, 8)
    np.testing.assert_array_equal(A, linalg.structured_pattern())
    _, kept = linalg.svd_energy(A)
    assert kept[2] > 0.9
    assert kept[1] < 0.97  # the third term still matters
    assert kept[2] < 0.999  # and the detail is visible
    assert linalg.rank(A) >= 6


def test_no_random_competitor_beats_truncated_svd():
    A = linalg.structured_pattern()
    trial = linalg.eckart_young_trial(A, 3, n_competitors=300, seed=1)
    assert trial.n_better == 0
    assert trial.competitor_errors.shape == (300,)
    assert trial.svd_error == pytest.approx(trial.discarded)
    assert np.all(trial.competitor_errors >= trial.svd_error * (1 - 1e-12))
    # The competitors range from nearly optimal to far off.
    assert trial.competitor_errors.min() < 1.01 * trial.svd_error
    assert trial.competitor_errors.max() > 3 * trial.svd_error


def test_projection_properties(rng):
    A = rng.standard_normal((7, 3))
    P = linalg.projection(A)
    np.testing.assert_allclose(P, A @ np.linalg.inv(A.T @ A) @ A.T, atol=1e-12)
    np.testing.assert_allclose(P, P.T, atol=1e-12)
    np.testing.assert_allclose(P @ P, P, atol=1e-12)
    assert np.trace(P) == pytest.approx(3)
    dependent = np.column_stack([A, A[:, 0] + A[:, 1]])
    assert np.trace(linalg.projection(dependent)) == pytest.approx(3)


def test_whitening_matrix_gives_unit_second_moment(rng):
    X = rng.standard_normal((500, 4)) @ rng.standard_normal((4, 4))
    C = X.T @ X / len(X)
    S = linalg.whitening_matrix(C)
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    np.testing.assert_allclose(S @ C @ S, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(S @ S, np.linalg.inv(C), atol=1e-10)
    Z = X @ S
    np.testing.assert_allclose(Z.T @ Z / len(Z), np.eye(4), atol=1e-10)


def test_whitening_matrix_rejects_what_has_no_inverse_square_root():
    with pytest.raises(ValueError, match="positive definite"):
        linalg.whitening_matrix(np.diag([1.0, 0.0]))
    with pytest.raises(ValueError, match="symmetric"):
        linalg.whitening_matrix(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        linalg.whitening_matrix(np.ones((2, 3)))


def test_shape_errors_name_the_argument(rng):
    A = rng.standard_normal((3, 4))
    with pytest.raises(ValueError, match="B"):
        linalg.matmul_row(A, rng.standard_normal((3, 2)))
    with pytest.raises(ValueError, match="A"):
        linalg.matmul_outer(np.ones(3), np.ones((3, 2)))
    with pytest.raises(ValueError, match="x"):
        linalg.matvec_by_rows(A, np.ones(3))
    with pytest.raises(ValueError, match="W"):
        linalg.matvec_by_columns(np.ones(4), np.ones(4))
    with pytest.raises(ValueError, match="r"):
        linalg.truncated_svd(A, 4)
    with pytest.raises(ValueError, match="A"):
        linalg.svd_energy(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="seed"):
        linalg.random_rank_r(3, 3, 1, seed=0.5)
