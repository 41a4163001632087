"""The pure computations behind the figures of Chapters 1-3, tested on their own."""

import numpy as np
import pytest

from memkit import capacity
from memkit.figures import (
    matmul_four_readings,
    matvec_two_readings,
    outer_product_sum,
    recall_noise,
    svd_truncation,
)


@pytest.mark.parametrize("x1", [-2.0, 0.0, 1.3])
def test_matvec_readings_agree(x1):
    data = matvec_two_readings.readings(x1)
    assert np.allclose(data["y_rows"], data["y_columns"])
    assert np.allclose(data["y_rows"], matvec_two_readings.W @ data["x"])


def test_matvec_only_first_column_moves():
    a, b = matvec_two_readings.readings(-1.0), matvec_two_readings.readings(1.5)
    moved = np.any(a["contributions"] != b["contributions"], axis=1)
    assert moved.tolist() == [True, False, False]


@pytest.mark.parametrize("reading", matmul_four_readings.READINGS)
@pytest.mark.parametrize("index", range(4))
def test_every_reading_reproduces_its_block(reading, index):
    data = matmul_four_readings.reading_cells(reading, index)
    assert np.allclose(data["produced"], data["target"])
    row, col, height, width = data["blocks"][2]
    assert data["produced"].shape == (height, width)


def test_unknown_reading_is_refused():
    with pytest.raises(ValueError, match="reading"):
        matmul_four_readings.reading_cells("diagonal", 0)


def test_outer_sum_reaches_the_product_at_four_terms():
    gaps = [outer_product_sum.partial_sums(m)["gap"] for m in range(5)]
    assert gaps[-1] < 1e-12 and all(g > 1e-3 for g in gaps[:-1])
    assert [outer_product_sum.partial_sums(m)["rank"] for m in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="m"):
        outer_product_sum.partial_sums(5)


def test_svd_truncation_error_is_discarded_energy_and_three_terms_dominate():
    for r in range(9):
        data = svd_truncation.truncation(r)
        assert data["error"] == pytest.approx(data["discarded"], abs=1e-9)
    assert svd_truncation.truncation(3)["kept"] > 0.9
    assert svd_truncation.truncation(2)["kept"] < svd_truncation.truncation(3)["kept"]


def test_recall_noise_target_weight_is_one_and_ratio_tracks_prediction():
    data = recall_noise.leak_weights(40)
    assert data["weights"][0] == pytest.approx(1.0)
    assert len(data["weights"]) == 40
    assert data["predicted"] == pytest.approx(capacity.hebbian_ratio(40, 16))
    assert data["predicted"] == pytest.approx(np.sqrt(39 / 16))
    # one draw is noisy, but it should be of the predicted size
    assert 0.5 * data["predicted"] < data["measured"] < 1.5 * data["predicted"]
    assert recall_noise.leak_weights(1)["measured"] == 0.0
