"""Tests of memkit.edit: the rank-one edit with a key covariance (Chapter 14, D17)."""

import numpy as np
import pytest

from memkit import edit


@pytest.fixture
def setting():
    rng = np.random.default_rng(0)
    d_k, d_v = 6, 4
    mixing = rng.standard_normal((d_k, d_k))
    keys = rng.standard_normal((500, d_k)) @ mixing  # correlated typical keys
    W = rng.standard_normal((d_v, d_k))
    k_star = rng.standard_normal(d_k)
    v_star = rng.standard_normal(d_v)
    return rng, keys, W, k_star, v_star


def test_key_covariance_is_mean_outer_product(setting):
    _, keys, *_ = setting
    C = edit.key_covariance(keys)
    assert C.shape == (6, 6)
    np.testing.assert_allclose(C, np.mean([np.outer(k, k) for k in keys], axis=0))


def test_edit_meets_constraint_and_is_rank_one(setting):
    _, keys, W, k_star, v_star = setting
    C = edit.key_covariance(keys)
    W_new = edit.rank_one_edit(W, k_star, v_star, C)
    np.testing.assert_allclose(W_new @ k_star, v_star, atol=1e-10)
    assert np.linalg.matrix_rank(W_new - W) == 1


def test_edit_beats_every_other_edit_that_meets_the_constraint(setting):
    rng, keys, W, k_star, v_star = setting
    C = edit.key_covariance(keys)
    best = edit.edit_cost(edit.rank_one_edit(W, k_star, v_star, C) - W, C)
    residual = v_star - W @ k_star
    # Rank-one competitors r u^T / (u^T k*) satisfy the constraint for any u ...
    directions = rng.standard_normal((200, 6))
    directions = np.vstack([directions, k_star])  # ... including the plain delta-rule edit
    for u in directions:
        Delta = np.outer(residual, u) / (u @ k_star)
        np.testing.assert_allclose((W + Delta) @ k_star, v_star, atol=1e-8)
        assert edit.edit_cost(Delta, C) >= best * (1 - 1e-12)
    # ... and so do full-rank ones: the optimum plus anything that kills k*.
    optimum = edit.rank_one_edit(W, k_star, v_star, C) - W
    kill = np.eye(6) - np.outer(k_star, k_star) / (k_star @ k_star)
    for _ in range(50):
        Delta = optimum + rng.standard_normal((4, 6)) @ kill
        assert edit.edit_cost(Delta, C) > best


def test_cost_is_half_mean_squared_change_on_keys(setting):
    rng, keys, *_ = setting
    C = edit.key_covariance(keys)
    Delta = rng.standard_normal((4, 6))
    change = np.mean(np.sum((keys @ Delta.T) ** 2, axis=1))
    assert edit.edit_cost(Delta, C) == pytest.approx(0.5 * change)


def test_identity_covariance_gives_normalised_delta_rule(setting):
    _, _, W, k_star, v_star = setting
    W_new = edit.rank_one_edit(W, k_star, v_star, np.eye(6))
    expected = W + np.outer(v_star - W @ k_star, k_star) / (k_star @ k_star)
    np.testing.assert_allclose(W_new, expected)


def test_errors_name_the_argument(setting):
    _, keys, W, k_star, v_star = setting
    C = edit.key_covariance(keys)
    with pytest.raises(ValueError, match="keys"):
        edit.key_covariance(np.ones(6))
    with pytest.raises(ValueError, match="k_star"):
        edit.rank_one_edit(W, k_star[:5], v_star, C)
    with pytest.raises(ValueError, match="v_star"):
        edit.rank_one_edit(W, k_star, np.ones(6), C)
    with pytest.raises(ValueError, match="C"):
        edit.rank_one_edit(W, k_star, v_star, C[:5, :5])
    with pytest.raises(ValueError, match="C"):
        edit.rank_one_edit(W, k_star, v_star, edit.key_covariance(keys[:3]))
    with pytest.raises(ValueError, match="C"):
        edit.rank_one_edit(W, k_star, v_star, C + np.triu(np.ones((6, 6)), 1))
    with pytest.raises(ValueError, match="Delta"):
        edit.edit_cost(np.ones(6), C)
