"""The number the Prologue states: the MLPs hold two thirds of a layer's parameters."""

from fractions import Fraction

import pytest

from memkit import costs


@pytest.mark.parametrize("d", [512, 4096, 8192])
def test_mlp_share_of_a_layer_is_two_thirds(d):
    assert Fraction(costs.mlp_params(d), costs.layer_params(d)) == Fraction(2, 3)
