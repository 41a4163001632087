"""Statements of the book that readers found wrong, each checked by computing it.

Chapter 13's capacity of a fast state and its delta card, Chapter 11's slots of a
stacked layer, the two Jacobians of Chapter 6's temperature figure, the side of
Chapter 4's least-squares bias, what recursive least squares lands on, Appendix D's
trace of an oblique projection, and Chapter 0's colour code in the figures of
Chapters 1, 3 and 5.
Monte Carlo tolerances come from the spread over independent seeds.
"""

import pathlib
import re

import numpy as np
import pytest
from matplotlib.collections import Collection
from matplotlib.colors import to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from memkit import attention, capacity, figures, icl, memory, recurrent, style, unified
from memkit.figures import temperature

BOOK = pathlib.Path(__file__).resolve().parents[2] / "book"


def chapter(stem):
    (path,) = BOOK.glob(f"{stem}*.md")
    return " ".join(path.read_text().split())


def seed_mean_and_error(estimate, seeds):
    """Mean of a Monte Carlo estimate over independent seeds, and its standard error."""
    values = np.array([estimate(seed) for seed in seeds])
    return values.mean(), values.std(ddof=1) / np.sqrt(len(values))


# ---------------------------------------------------------------- Chapter 13, statement 7


def test_a_fast_state_holds_of_order_d_k_pairs_not_its_number_of_entries():
    # two states of 512 numbers each: 8 x 64 (d_v x d_k) and 64 x 8. At 65 pairs the
    # first is at interference equal to signal, the second far past it: the count of
    # pairs follows d_k, the width of the keys, not d_v d_k.
    wide_keys = memory.hebbian_interference_mc(65, 64, trials=200, seed=1, d_v=8)
    narrow_keys = memory.hebbian_interference_mc(65, 8, trials=200, seed=2, d_v=64)
    # the Jensen pull of an 8-dimensional value norm is about 1/(4 d_v) = 3%
    assert wide_keys == pytest.approx(1.0, abs=0.05)
    assert narrow_keys == pytest.approx(capacity.hebbian_ratio(65, 8), rel=0.05)
    assert narrow_keys > 2.5 * wide_keys
    text = chapter("ch13")
    assert "holds of order $d_k$ pairs" in text
    assert "numbers holds of order $D$ pairs" not in text
    assert "state costs $d_vD+D$ numbers" in chapter("ch12")


def test_the_delta_card_of_chapter_13_steps_with_eta_as_chapter_12_does():
    # Chapter 12 renamed the delta strength eta (beta is the softmax's); the card and the
    # table row write the step that recurrent.delta_update takes
    assert "eta (v - S k) k^T" in unified.layer_answers("delta rule")["write"]
    assert "beta" not in unified.layer_answers("delta rule")["write"]
    (row,) = [layer for layer in unified.LAYERS if layer.name == "delta_rule"]
    assert "\\eta" in row.write and "\\beta" not in row.write
    rng = np.random.default_rng(13)
    S, k, v = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(3)
    assert recurrent.delta_update(S, k, v, 0.3) == pytest.approx(S + 0.3 * np.outer(v - S @ k, k))


# ---------------------------------------------------------------- Chapter 11, D12


@pytest.mark.parametrize("j", [0, 3, 7])
def test_an_example_token_s_prediction_slot_holds_w_k_x_j(j):
    # a query equal to example j's input reads exactly what example j's prediction slot
    # holds, so after layer k the slot carries W_k x_j beside the unchanged label y_j
    rng = np.random.default_rng(40)
    X = rng.standard_normal((8, 3))
    Y = X @ rng.standard_normal((3, 2)) + 0.1 * rng.standard_normal((8, 2))
    slot = icl.icl_layers(X, Y, X[j], 0.05, 5)
    steps = icl.gd_steps(X, Y, 0.05, 5)  # W_1 ... W_5
    assert slot == pytest.approx(steps @ X[j], abs=1e-12)
    # adding the read to a slot that held the residual instead would give
    # y_j - 2 W_1 x_j + W_2 x_j, not the next residual y_j - W_2 x_j
    wrong = Y[j] - 2 * steps[0] @ X[j] + steps[1] @ X[j]
    assert np.abs(wrong - (Y[j] - steps[1] @ X[j])).max() > 1e-3
    assert "prediction slot" in chapter("ch11")


# ---------------------------------------------------------------- Chapter 6, temperature


def test_the_temperature_figure_plots_the_jacobian_of_the_logits():
    curve = temperature.temperature_weights(0.0)["jacobian_curve"]
    for index in [0, 25, 70, 140]:
        beta = temperature.BETA_GRID[index]
        logits = beta * temperature.SIMILARITIES
        assert curve[index] == pytest.approx(
            np.linalg.norm(attention.softmax_jacobian(logits)), rel=1e-9)
    # the two Jacobians peak at different beta: the factor beta moves the peak right
    by_logits = temperature.BETA_GRID[np.argmax(curve)]
    by_similarities = temperature.BETA_GRID[np.argmax(temperature.BETA_GRID * curve)]
    assert 2.0 <= by_logits <= 3.0
    assert 6.0 <= by_similarities <= 7.5
    text = chapter("ch06")
    assert "with respect to its logits $\\beta s_i$" in text
    assert "respond when the similarities move" not in text


# ---------------------------------------------------------------- Chapter 4 and Appendix B


def test_the_side_of_the_least_squares_bias_depends_on_the_sizes():
    def ratio(M, d_k):
        predicted = capacity.least_squares_ratio(M, d_k)
        return lambda seed: memory.least_squares_interference_mc(
            M, d_k, trials=200, seed=seed) / predicted

    above, above_error = seed_mean_and_error(ratio(64, 16), range(4))
    below, below_error = seed_mean_and_error(ratio(256, 64), range(4))
    assert above - 1 > 4 * above_error
    assert 1 - below > 4 * below_error
    assert "the side can flip" in chapter("ch04")
    assert "at $d_k=16$ its measured ratios sit a little above" in chapter("ch04")
    assert "the square root wins" in chapter("appendix-b")


# ---------------------------------------------------------------- Chapter 4, RLS


def test_rls_lands_on_the_ridge_store_which_tends_to_least_squares():
    rng = np.random.default_rng(4)
    K = memory.random_unit_vectors(12, 16, rng)
    V = rng.standard_normal((12, 8))
    errors = []
    for lam in (0.1, 0.01, 0.001):
        for t in (1, 5, 12):  # after every pair: the ridge store of the pairs so far
            W_t, R_t = memory.rls_write(K[:t], V[:t], lam)
            assert W_t == pytest.approx(memory.ridge_write(K[:t], V[:t], lam), abs=1e-10)
            # R is the inverse of the regularised key sum, nothing divided by t
            assert R_t == pytest.approx(np.linalg.inv(lam * np.eye(16) + K[:t].T @ K[:t]))
        errors.append(np.abs(K @ W_t.T - V).max())
    # 12 pairs in R^16: least squares recalls them exactly; RLS only as lambda -> 0
    assert errors[0] > errors[1] > errors[2]
    assert errors[0] > 0.1
    assert "which RLS matches after every pair" not in chapter("ch04")
    assert "second moment so far" not in chapter("ch04")


# ---------------------------------------------------------------- Appendix D, D20 (v)


def test_an_oblique_projection_is_diagonalisable_and_its_trace_is_its_rank():
    rng = np.random.default_rng(20)
    A, B = rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    P = A @ np.linalg.solve(B.T @ A, B.T)  # P^2 = P, not symmetric
    assert P @ P == pytest.approx(P, abs=1e-10)
    assert np.abs(P - P.T).max() > 0.1
    eigenvalues, vectors = np.linalg.eig(P)
    assert np.linalg.matrix_rank(vectors) == 6  # a full basis of eigenvectors
    assert sorted(np.round(eigenvalues.real, 8)) == [0] * 4 + [1] * 2
    assert np.trace(P) == pytest.approx(np.linalg.matrix_rank(P))
    assert "diagonalisable" in chapter("appendix-d")


# ---------------------------------------------------------------- Chapter 0, colour code


def drawn_colours(figure):
    """The RGB colours of every patch, line and collection drawn in a course figure."""
    colours = set()
    for artist in figure.figure.findobj():
        if isinstance(artist, Patch) and artist.get_visible():
            rgba = artist.get_facecolor()
            if rgba[3] > 0:
                colours.add(tuple(np.round(rgba[:3], 3)))
        elif isinstance(artist, Line2D):
            colours.add(tuple(np.round(to_rgb(artist.get_color()), 3)))
        elif isinstance(artist, Collection):
            for rgba in list(artist.get_facecolor()) + list(artist.get_edgecolor()):
                if rgba[3] > 0:
                    colours.add(tuple(np.round(rgba[:3], 3)))
    return colours


def rgb(colour):
    return tuple(np.round(to_rgb(colour), 3))


@pytest.mark.parametrize("figure_id", ["matvec-two-readings", "recall-noise", "score-sharpness"])
def test_figures_without_a_query_keep_copper_out_and_draw_values_violet(figure_id):
    colours = drawn_colours(figures.get(figure_id))
    assert rgb(style.QUERY) not in colours
    assert rgb(style.VALUE) in colours


def test_the_value_bars_are_violet_the_target_in_full():
    noise = figures.get("recall-noise")
    assert rgb(noise.target.patches[0].get_facecolor()) == rgb(style.VALUE)
    assert noise.target.patches[0].get_alpha() in (None, 1.0)
    assert rgb(noise.leaks.get_colors()[0]) == rgb(style.VALUE)
    assert noise.leaks.get_alpha() < 1.0
    matvec = figures.get("matvec-two-readings")
    shares = [bars.patches[0] for bars in matvec.col_bars]
    assert {rgb(bar.get_facecolor()) for bar in shares} == {rgb(style.VALUE)}
    assert shares[0].get_alpha() == 1.0 > max(bar.get_alpha() for bar in shares[1:])


def test_chapter_0_states_the_rule_the_figures_keep():
    text = chapter("ch00")
    assert re.search(r"\*\*Copper\*\* is\s+the question", text)
    assert "copper vector is always the one doing the asking" in text
