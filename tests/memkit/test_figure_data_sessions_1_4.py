"""The pure computations behind the figures two-lookups, careful-write, mlp-lookup and score-sharpness."""

import numpy as np
import pytest

from memkit import figures, memory, scores
from memkit.figures import careful_write, mlp_lookup, score_sharpness, two_lookups


# -- two-lookups (Prologue) ------------------------------------------------------------
@pytest.mark.parametrize("prompt", list(two_lookups.EXAMPLES))
def test_every_prompt_has_a_prediction_and_a_token_read(prompt):
    data = two_lookups.lookups(prompt)
    assert data["roles"][-1] == "prediction"
    assert data["roles"].count("prediction") == 1
    assert data["read"] and data["roles"].count("read") == len(data["read"])
    assert len(data["tokens"]) <= two_lookups.MAX_TOKENS
    assert data["next_token"] and data["fact"] and data["supply"]


def test_two_lookups_has_at_least_four_prompts_and_refuses_others():
    assert len(two_lookups.EXAMPLES) >= 4
    with pytest.raises(ValueError, match="prompt"):
        two_lookups.lookups("no such prompt")


# -- careful-write (Chapter 4) --------------------------------------------------------
def test_least_squares_is_exact_up_to_d_k_and_hebbian_is_not():
    data = careful_write.write_errors(careful_write.M_MAX)
    ls, hebb = data["least_squares_curve"], data["hebbian_curve"]
    d_k = careful_write.D_K
    assert np.all(ls[:d_k] < 1e-9)
    assert np.all(ls[d_k:] > 0.1)
    assert np.all(hebb[1:] > ls[1:])  # one stored pair is recalled exactly by both


def test_hebbian_error_grows_with_M():
    hebb = careful_write.write_errors(1)["hebbian_curve"]
    assert hebb[0] < 1e-9
    assert hebb[9] < hebb[19] < hebb[29] < hebb[47]


def test_careful_write_reads_the_curves_at_M():
    data = careful_write.write_errors(20)
    assert data["hebbian"] == data["hebbian_curve"][19]
    assert data["least_squares"] == data["least_squares_curve"][19]
    expected = memory.careful_write_errors(np.arange(1, 49), d_k=16, draws=3, seed=careful_write.SEED)
    assert data["least_squares"] == pytest.approx(expected.least_squares[19])
    with pytest.raises(ValueError, match="M"):
        careful_write.write_errors(careful_write.M_MAX + 1)


# -- mlp-lookup (Chapter 5) -----------------------------------------------------------
@pytest.mark.parametrize("t", [0, 40, 140, 215, 355])
def test_mlp_output_is_the_sum_of_the_weighted_values(t):
    data = mlp_lookup.mlp_lookup(t)
    assert np.allclose(data["weighted"].sum(axis=0), data["output"])
    forward = scores.mlp_forward(mlp_lookup.KEYS, mlp_lookup.VALUES.T, data["x"], scores.relu)
    assert np.allclose(forward, data["output"])
    assert np.allclose(data["weights"], np.maximum(data["similarities"], 0))
    # laid head to tail, the last weighted value ends at the output
    assert np.allclose(data["starts"][-1] + data["weighted"][-1], data["output"])
    assert list(data["firing"]) == [i for i in range(6) if data["weights"][i] > 0]


def test_mlp_lookup_always_fires_and_stays_in_the_plane():
    for t in range(0, 360, 5):
        data = mlp_lookup.mlp_lookup(t)
        assert len(data["firing"]) >= 1 and np.linalg.norm(data["output"]) > 0.3
        path = np.vstack([data["starts"], data["output"]])
        assert np.all(np.abs(path) < mlp_lookup.OUTPUT_LIMIT - 0.15)


# -- score-sharpness (Chapter 5) ------------------------------------------------------
@pytest.mark.parametrize("M", [2, 17, 64, 256])
def test_target_weight_is_one_in_every_panel(M):
    data = score_sharpness.score_weights(M)
    assert data["weights"].shape == (4, M)
    assert np.allclose(data["weights"][:, 0], 1.0)


@pytest.mark.parametrize("M", [64, 128, 200, 256])
def test_sharper_scores_leak_less(M):
    ratios = score_sharpness.score_weights(M)["ratios"]
    assert np.all(np.diff(ratios) < 0), ratios


def test_linear_panel_is_the_hebbian_store():
    M = 40
    rng = np.random.default_rng(score_sharpness.SEED)
    keys = memory.random_unit_vectors(score_sharpness.M_MAX, score_sharpness.D, rng)[:M]
    values = memory.random_unit_vectors(score_sharpness.M_MAX, score_sharpness.D, rng)[:M]
    W = memory.hebbian_write(keys, values)
    data = score_sharpness.score_weights(M)
    assert data["ratios"][0] == pytest.approx(memory.interference_ratio(keys, values, W, j=0))
    assert np.allclose(data["weights"][0], memory.hebbian_recall_weights(keys)[0])


def test_score_sharpness_refuses_M_out_of_range():
    for M in (1, score_sharpness.M_MAX + 1):
        with pytest.raises(ValueError, match="M"):
            score_sharpness.score_weights(M)


# -- the readings stay short ----------------------------------------------------------
@pytest.mark.parametrize("figure_id", ["two-lookups", "careful-write", "mlp-lookup", "score-sharpness"])
def test_readings_are_one_short_line(figure_id):
    fig = figures.get(figure_id)
    for control in fig.controls.values():
        values = control.options if hasattr(control, "options") else range(control.min, control.max + 1)
        for value in values:
            control.value = value
            assert 0 < len(fig.caption) < 90, fig.caption
