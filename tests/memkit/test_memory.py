"""Tests of memkit.memory: write rules, reading, interference (Chapters 3-4)."""

import numpy as np
import pytest

from memkit import memory


def pairs(M, d_k, d_v, seed):
    rng = np.random.default_rng(seed)
    return memory.random_unit_vectors(M, d_k, rng), memory.random_unit_vectors(M, d_v, rng)


def test_random_unit_vectors():
    X = memory.random_unit_vectors(5, 3, seed=0)
    assert X.shape == (5, 3)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    np.testing.assert_array_equal(X, memory.random_unit_vectors(5, 3, seed=0))
    assert not np.allclose(X, memory.random_unit_vectors(5, 3, seed=1))
    batch = memory.random_unit_vectors(5, 3, np.random.default_rng(0), trials=4)
    assert batch.shape == (4, 5, 3)
    np.testing.assert_allclose(np.linalg.norm(batch, axis=-1), 1.0)


def test_hebbian_write_is_sum_of_outer_products():
    K, V = pairs(6, 4, 3, 0)
    W = memory.hebbian_write(K, V)
    assert W.shape == (3, 4)
    np.testing.assert_allclose(W, sum(np.outer(v, k) for k, v in zip(K, V)))


def test_orthonormal_keys_recall_exactly():
    K = np.linalg.qr(np.random.default_rng(1).standard_normal((8, 8)))[0][:5]
    V = np.random.default_rng(2).standard_normal((5, 3))
    W = memory.hebbian_write(K, V)
    np.testing.assert_allclose(memory.read(W, K), V, atol=1e-12)
    assert memory.interference_ratio(K, V, W) == pytest.approx(0.0, abs=1e-12)


def test_read_single_and_batch():
    W = np.arange(6.0).reshape(2, 3)
    q = np.array([1.0, 0.0, -1.0])
    np.testing.assert_allclose(memory.read(W, q), W @ q)
    Q = np.stack([q, 2 * q])
    np.testing.assert_allclose(memory.read(W, Q), Q @ W.T)


@pytest.mark.parametrize("M", [3, 10, 16])
def test_least_squares_exact_up_to_d_k(M):
    K, V = pairs(M, 16, 5, M)
    W = memory.least_squares_write(K, V)
    np.testing.assert_allclose(K @ W.T, V, atol=1e-10)
    np.testing.assert_allclose(memory.least_squares_recall_weights(K), np.eye(M), atol=1e-10)


def test_least_squares_minimum_norm_below_d_k():
    K, V = pairs(4, 10, 3, 5)
    W = memory.least_squares_write(K, V)
    # Any other exact store differs by a matrix that kills every key, and is larger.
    N = np.random.default_rng(0).standard_normal((3, 10))
    other = W + N @ (np.eye(10) - np.linalg.pinv(K) @ K)
    np.testing.assert_allclose(K @ other.T, V, atol=1e-10)
    assert np.linalg.norm(W) < np.linalg.norm(other)


def test_least_squares_above_d_k_is_optimal_and_projects():
    K, V = pairs(40, 8, 6, 3)
    W = memory.least_squares_write(K, V)
    np.testing.assert_allclose(W, V.T @ K @ np.linalg.inv(K.T @ K), atol=1e-10)
    loss = np.sum((K @ W.T - V) ** 2)
    for scale in (1e-3, 1e-1):
        bumped = W + scale * np.random.default_rng(4).standard_normal(W.shape)
        assert np.sum((K @ bumped.T - V) ** 2) > loss
    assert np.sum((K @ memory.hebbian_write(K, V).T - V) ** 2) > loss
    P = memory.least_squares_recall_weights(K)
    np.testing.assert_allclose(K @ W.T, P @ V, atol=1e-10)
    assert np.trace(P) == pytest.approx(8)


def test_least_squares_rejects_dependent_keys():
    K, V = pairs(4, 10, 3, 0)
    K[3] = K[0] + K[1]
    with pytest.raises(ValueError, match="K"):
        memory.least_squares_write(K, V)


def test_ridge_tends_to_least_squares_and_rls_equals_ridge():
    K, V = pairs(30, 6, 4, 8)
    np.testing.assert_allclose(
        memory.ridge_write(K, V, 1e-10), memory.least_squares_write(K, V), atol=1e-7
    )
    for lam in (0.1, 2.0):
        W, R = memory.rls_write(K, V, lam)
        np.testing.assert_allclose(W, memory.ridge_write(K, V, lam), atol=1e-10)
        np.testing.assert_allclose(R, np.linalg.inv(lam * np.eye(6) + K.T @ K), atol=1e-10)


def test_sherman_morrison_matches_inverse():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    R = np.linalg.inv(A @ A.T + np.eye(5))
    k = rng.standard_normal(5)
    np.testing.assert_allclose(
        memory.sherman_morrison(R, k), np.linalg.inv(np.linalg.inv(R) + np.outer(k, k)), atol=1e-10
    )


def test_delta_rule_unit_key_stores_exactly_and_overwrites():
    K, V = pairs(6, 4, 3, 1)
    W = memory.hebbian_write(K, V)
    k, v_new = K[2], np.array([0.5, -1.0, 2.0])
    W1 = memory.delta_step(W, k, v_new, eta=1.0)
    np.testing.assert_allclose(W1 @ k, v_new, atol=1e-12)
    np.testing.assert_allclose(memory.delta_step(W1, k, v_new, eta=1.0), W1, atol=1e-12)
    np.testing.assert_allclose(W1 - W, np.outer(v_new - W @ k, k))


def test_delta_write_sequence():
    K, V = pairs(5, 8, 3, 2)
    W = memory.delta_write(K, V)
    np.testing.assert_allclose(W @ K[-1], V[-1], atol=1e-12)
    W0 = np.ones((3, 8))
    manual = W0
    for k, v in zip(K, V):
        manual = manual + 0.3 * np.outer(v - manual @ k, k)
    np.testing.assert_allclose(memory.delta_write(K, V, eta=0.3, W0=W0), manual)


def test_recall_weights_reproduce_recall():
    K, V = pairs(12, 5, 4, 6)
    c = memory.hebbian_recall_weights(K)
    np.testing.assert_allclose(K @ memory.hebbian_write(K, V).T, c @ V, atol=1e-12)
    np.testing.assert_allclose(np.diag(c), 1.0)


def test_recall_split_adds_up():
    K, V = pairs(12, 5, 4, 6)
    rules = (("hebbian", memory.hebbian_write), ("least_squares", memory.least_squares_write))
    for rule, write in rules:
        W = write(K, V)
        signal, interference = memory.recall_split(K, V, W, 3, rule=rule)
        np.testing.assert_allclose(signal + interference, W @ K[3], atol=1e-12)
        ratio = np.linalg.norm(interference) / np.linalg.norm(signal)
        assert memory.interference_ratio(K, V, W, j=3, rule=rule) == pytest.approx(ratio)
    signal, _ = memory.recall_split(K, V, memory.hebbian_write(K, V), 3)
    np.testing.assert_allclose(signal, V[3])


def test_least_squares_ratio_formula_from_projection():
    K, V = pairs(40, 8, 6, 9)
    W = memory.least_squares_write(K, V)
    P = memory.least_squares_recall_weights(K)
    j = 5
    _, interference = memory.recall_split(K, V, W, j, rule="least_squares")
    weights_off = np.delete(P[j], j)
    # D3: sum_{i != j} P_ji^2 = P_jj - P_jj^2
    assert np.sum(weights_off**2) == pytest.approx(P[j, j] - P[j, j] ** 2)
    np.testing.assert_allclose(interference, weights_off @ np.delete(V, j, axis=0), atol=1e-12)


def test_exercise_1_numbers():
    hebbian = memory.hebbian_interference_mc(32, 16, trials=300, seed=0)
    least_squares = memory.least_squares_interference_mc(32, 16, trials=300, seed=0)
    assert hebbian == pytest.approx(1.38, abs=0.05)
    assert hebbian == pytest.approx(np.sqrt(31 / 16), abs=0.05)
    assert least_squares == pytest.approx(1.01, abs=0.05)
    assert least_squares == pytest.approx(1.00, abs=0.05)


def test_monte_carlo_is_reproducible_and_exact_below_d_k():
    a = memory.hebbian_interference_mc(10, 8, trials=20, seed=np.random.default_rng(3))
    b = memory.hebbian_interference_mc(10, 8, trials=20, seed=np.random.default_rng(3))
    assert a == b
    assert memory.least_squares_interference_mc(8, 16, trials=5, seed=0) < 1e-8


def test_monte_carlo_matches_single_store_measurement():
    rng = np.random.default_rng(11)
    K = memory.random_unit_vectors(20, 6, rng)
    V = memory.random_unit_vectors(20, 64, rng)
    measured = memory.interference_ratio(K, V, memory.hebbian_write(K, V))
    mc = memory.hebbian_interference_mc(20, 6, trials=1, seed=np.random.default_rng(11))
    assert mc == pytest.approx(measured)


def test_careful_write_errors():
    result = memory.careful_write_errors([1, 8, 16, 24, 40], d_k=16, draws=3, seed=0)
    np.testing.assert_array_equal(result.M, [1, 8, 16, 24, 40])
    assert np.all(result.least_squares[:3] < 1e-8)
    assert np.all(result.least_squares[3:] > 0.1)
    assert np.all(result.hebbian[1:] > result.least_squares[1:])
    assert np.all(np.diff(result.hebbian) > 0)


def test_errors_name_the_argument():
    K, V = pairs(5, 4, 3, 0)
    with pytest.raises(ValueError, match="K"):
        memory.hebbian_write(K[:4], V)
    with pytest.raises(ValueError, match="V"):
        memory.least_squares_write(K, V[0])
    with pytest.raises(ValueError, match="W"):
        memory.interference_ratio(K, V, np.ones((4, 3)))
    with pytest.raises(ValueError, match="q"):
        memory.read(np.ones((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="q"):
        memory.read(np.ones((3, 4)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="k"):
        memory.delta_step(np.ones((3, 4)), np.ones(3), np.ones(3), 1.0)
    with pytest.raises(ValueError, match="W0"):
        memory.delta_write(K, V, W0=np.ones((4, 4)))
    with pytest.raises(ValueError, match="lam"):
        memory.ridge_write(K, V, 0.0)
    with pytest.raises(ValueError, match="R"):
        memory.sherman_morrison(np.ones((3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="rule"):
        memory.interference_ratio(K, V, memory.hebbian_write(K, V), rule="oja")
    with pytest.raises(ValueError, match="j"):
        memory.recall_split(K, V, memory.hebbian_write(K, V), 5)
    with pytest.raises(ValueError, match="M"):
        memory.hebbian_interference_mc(1, 4, trials=3, seed=0)
    with pytest.raises(ValueError, match="M_values"):
        memory.careful_write_errors([0, 3])


def test_an_integer_seed_measured_again_gives_its_number_without_drawing(monkeypatch):
    first = memory.hebbian_interference_mc(24, 12, trials=40, seed=913)
    drawn = []
    original = memory.random_unit_vectors
    monkeypatch.setattr(memory, "random_unit_vectors", lambda *a, **k: drawn.append(a) or original(*a, **k))
    assert memory.hebbian_interference_mc(24, 12, trials=40, seed=np.int64(913)) == first
    # the other rule read the same draws: nothing is drawn for it either
    least_squares = memory.least_squares_interference_mc(24, 12, trials=40, seed=913)
    assert not drawn
    # a generator is drawn from every time, and gives the same numbers
    assert memory.least_squares_interference_mc(24, 12, trials=40, seed=np.random.default_rng(913)) == least_squares
    assert drawn
    drawn.clear()
    assert memory.hebbian_interference_mc(24, 12, trials=40, seed=np.random.default_rng(913)) == first
    # another seed or count is measured
    assert drawn and memory.hebbian_interference_mc(24, 12, trials=41, seed=913) != first
