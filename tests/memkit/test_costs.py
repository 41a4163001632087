"""Tests of memkit.costs (Chapters 8-9, Exercise 4)."""

import pytest

from memkit import costs


def test_layer_counts_chapter8():
    d = 512
    assert costs.attention_params(d) == 4 * d**2
    assert costs.mlp_params(d) == 8 * d**2
    assert costs.mlp_params(d, hidden=2048) == 2 * d * 2048
    assert costs.layer_params(d) == 12 * d**2
    assert costs.mlp_params(d) / costs.layer_params(d) == pytest.approx(2 / 3)


def test_swiglu_matches_the_plain_mlp():
    assert costs.swiglu_params(4096) == 8 * 4096**2
    assert costs.swiglu_params(3) == 8 * 9
    assert costs.swiglu_params(64, hidden=100) == 3 * 64 * 100


def test_bytes_scale_with_precision_and_batch():
    assert costs.param_bytes(64, 2, bytes_per_number=4) == 2 * costs.param_bytes(64, 2)
    assert costs.cache_bytes(10, 64, 2, batch=3) == 3 * costs.cache_bytes(10, 64, 2)
    assert costs.cache_bytes(0, 64, 2) == 0


def test_state_numbers():
    assert costs.state_numbers(4, 4) == 16
    assert costs.state_numbers(64, 32, normaliser=True) == 64 * 32 + 64


def test_costs_name_bad_inputs():
    with pytest.raises(ValueError, match="d must be"):
        costs.layer_params(0)
    with pytest.raises(TypeError, match="d must be an integer"):
        costs.attention_params(64.0)
    with pytest.raises(ValueError, match="layers"):
        costs.model_params(64, 0)
    with pytest.raises(ValueError, match="bytes_per_number"):
        costs.param_bytes(64, 2, bytes_per_number=-1)
    with pytest.raises(ValueError, match="batch"):
        costs.crossover_tokens(64, batch=0)
    with pytest.raises(ValueError, match="hidden"):
        costs.mlp_params(64, hidden=0)
