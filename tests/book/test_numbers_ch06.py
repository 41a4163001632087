"""Every number Chapter 6 states is reproduced by memkit, and the chapter's figures
compute what they claim.

Tolerances follow the monograph's wording: "about 1.2e6" is matched to the two
significant figures shown, "within 10 %" to 10 %, "~0.14 N" to two decimals, a Monte
Carlo value quoted with "~" to 10 %, identities to machine precision.
"""

import math

import numpy as np
import pytest

from memkit import attention, capacity, checks, linalg, scores
from memkit.figures import capacity_vs_dimension, soft_dictionary, softmax_lifts_rank, temperature

# ------------------------------------------------------------ the soft dictionary


def test_beta_zero_is_the_mean_and_large_beta_the_hard_lookup():
    assert checks.check_beta_zero().passed
    assert checks.check_beta_large().passed
    # and the large-beta check can fail: at beta = 1 the read is no lookup
    assert not checks.check_beta_large(beta=1.0).passed


@pytest.mark.parametrize("seed", range(5))
def test_any_positive_weights_come_from_some_query_of_three_distinct_unit_keys(seed):
    # Chapter 6: beta k_i^T q = ln a_i + c is three equations in beta q and c, solvable
    # for three distinct unit keys of the plane; the solved query gives the weights back
    rng = np.random.default_rng(seed)
    angles = np.sort(rng.uniform(0, 2 * np.pi, 3))
    keys = np.column_stack([np.cos(angles), np.sin(angles)])
    wanted = rng.dirichlet(np.ones(3))
    beta_q = np.linalg.solve(np.column_stack([keys, -np.ones(3)]), np.log(wanted))[:2]
    assert attention.softmax(keys @ beta_q) == pytest.approx(wanted, rel=1e-9)
    # and it is the distinctness that matters: a repeated key cannot split its weight
    keys[1] = keys[0]
    assert np.linalg.matrix_rank(np.column_stack([keys, -np.ones(3)])) == 2


@pytest.mark.parametrize("beta", [1.0, 8.0, 23.0])
def test_a_similarity_lead_is_worth_a_factor_e_to_the_beta_gap(beta):
    a = attention.softmax(beta * np.array([0.9, 0.8, 0.1]))
    assert a[0] / a[1] == pytest.approx(math.exp(0.1 * beta), rel=1e-12)


def test_hard_lookup_jumps_where_the_soft_read_moves_little():
    border = np.degrees(np.arctan2(*(soft_dictionary.KEYS[0] + soft_dictionary.KEYS[1])[::-1]))
    reads, hards = [], []
    for t in (border - 1, border + 1):
        q = np.array([np.cos(np.radians(t)), np.sin(np.radians(t))])
        o, a = attention.attend(soft_dictionary.KEYS, soft_dictionary.VALUES[:, None], q, 6.0)
        reads.append(o[0])
        hards.append(attention.hard_lookup(soft_dictionary.KEYS,
                                           soft_dictionary.VALUES[:, None], q)[0])
        assert a.sum() == pytest.approx(1.0, abs=1e-12) and np.all(a > 0)
    assert abs(hards[0] - hards[1]) > 1.0
    assert abs(reads[0] - reads[1]) < 0.1


def test_temperature_runs_from_one_seventh_to_nearly_one_hot():
    assert temperature.temperature_weights(0.0)["weights"] == pytest.approx(np.full(7, 1 / 7))
    assert temperature.temperature_weights(14.0)["top"] > 0.9


def test_saturation_kills_the_gradient():
    s = np.array([1.0, 0.8, 0.5, 0.0])
    norms = [np.linalg.norm(b * attention.softmax_jacobian(b * s)) for b in (1, 4, 16, 64)]
    assert norms[1] > norms[0]  # sharpening first raises the sensitivity
    assert norms[3] < 1e-3 < norms[2]  # then the saturated softmax passes almost nothing


# ------------------------------------------------------------ capacity (D7)


def test_softmax_capacity_at_d64_beta8_is_e14():
    value = capacity.softmax_capacity(64, 8)
    assert value == pytest.approx(math.exp(14), rel=1e-12)
    assert f"{value:.1e}" == "1.2e+06"


def test_softmax_ratio_matches_monte_carlo_at_beta4():
    measured = capacity.score_interference_mc(1024, 64, scores.score("exponential", beta=4),
                                              trials=100, seed=6)
    assert measured == pytest.approx(capacity.softmax_ratio(1024, 64, 4), rel=0.1)


def test_exact_moment_is_the_sphere_average():
    rng = np.random.default_rng(3)
    g = rng.standard_normal(400_000)
    s = g / np.sqrt(g**2 + rng.chisquare(63, g.size))
    assert capacity.softmax_moment_exact(64, 8) == pytest.approx(np.mean(np.exp(16 * s)),
                                                                  rel=0.02)
    # the Gaussian moment overestimates it, and the two agree for beta << d
    assert capacity.softmax_moment_gaussian(64, 8) > 1.04 * capacity.softmax_moment_exact(64, 8)
    assert capacity.softmax_moment_exact(1024, 1) == pytest.approx(
        capacity.softmax_moment_gaussian(1024, 1), rel=1e-3)
    assert capacity.softmax_moment_exact(16, 0) == 1.0


def test_gaussian_formula_breaks_at_d16_beta4():
    """The brief: at d = 16, beta = 4 Monte Carlo gives ~510 against the formula's 403."""
    formula = capacity.softmax_capacity(16, 4)
    exact = capacity.softmax_capacity_exact(16, 4)
    measured = capacity.capacity_mc(16, scores.score("exponential", beta=4), trials=128, seed=4)
    assert round(formula) == 403
    assert exact == pytest.approx(483, abs=1)
    assert measured == pytest.approx(510, rel=0.1)
    assert measured > 1.15 * formula


def test_formula_and_exact_agree_where_beta_is_small_against_d():
    assert capacity.softmax_capacity(64, 8) == pytest.approx(
        capacity.softmax_capacity_exact(64, 8), rel=0.06)
    # the exact form counts the target itself (M - 1 leaking memories): compare M - 1
    assert capacity.softmax_capacity(256, 2) == pytest.approx(
        capacity.softmax_capacity_exact(256, 2) - 1, rel=0.01)


def test_exact_capacity_keeps_growing_while_the_formula_peaks_at_d_over_2():
    betas = np.arange(1, 33)
    gauss = [capacity.softmax_capacity(16, b) for b in betas]
    exact = [capacity.softmax_capacity_exact(16, b) for b in betas]
    assert betas[int(np.argmax(gauss))] == 8  # d / 2
    assert capacity.softmax_capacity(16, 16) == 1.0
    assert np.all(np.diff(exact) > 0)


def test_exact_ratio_is_one_at_the_exact_capacity():
    M = capacity.softmax_capacity_exact(16, 4)
    assert capacity.softmax_ratio_exact(np.array([M]), 16, 4)[0] == pytest.approx(1.0, rel=1e-9)


def test_beta_needed_grows_like_half_log_M():
    for M in (10**3, 10**4, 10**5):
        beta = capacity.softmax_beta_for(M, 128)
        assert capacity.softmax_capacity(128, beta) == pytest.approx(M, rel=1e-9)
        assert 0.5 * math.log(M) < beta < 1.06 * 0.5 * math.log(M)


def test_capacity_helpers_reject_bad_input():
    with pytest.raises(ValueError, match="d"):
        capacity.softmax_moment_exact(1, 2.0)
    with pytest.raises(ValueError, match="beta"):
        capacity.softmax_capacity_exact(16, -1.0)
    with pytest.raises(ValueError, match="ln M"):
        capacity.softmax_beta_for(10**9, 16)
    with pytest.raises(TypeError, match="N"):
        capacity.hopfield_classical_capacity(10.5)


# ------------------------------------------------------------ the 1/sqrt(d_k) scaling


def test_dot_product_variance_is_d_k_within_ten_percent():
    assert capacity.dot_product_variance_mc(64, 4000, seed=6) / 64 == pytest.approx(1.0, abs=0.1)


# ------------------------------------------------------------ attention as a matrix


def test_outer_reading_and_row_sums():
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((10, 2)), rng.standard_normal((10, 2)), rng.standard_normal((10, 3))
    A = attention.attention_matrix(Q, K, 1.0)
    np.testing.assert_allclose(A.sum(axis=1), 1.0, atol=1e-12)
    outer = sum(np.outer(A[:, j], V[j]) for j in range(10))
    np.testing.assert_allclose(outer, A @ V, atol=1e-12)


def test_softmax_lifts_rank_2_to_rank_10():
    rng = np.random.default_rng(0)
    Q, K = rng.standard_normal((10, 2)), rng.standard_normal((10, 2))
    assert linalg.rank(Q @ K.T) == 2
    assert linalg.rank(attention.attention_matrix(Q, K, 1.0)) == 10
    assert linalg.rank(attention.attention_matrix(Q, K, 0.0)) == 1


# ------------------------------------------------------------ kernel smoother and Hopfield


def test_attention_is_a_kernel_smoother_and_a_gaussian_one_for_unit_keys():
    assert checks.check_nadaraya_watson_softmax().passed
    assert checks.check_gaussian_smoother().passed
    assert not checks.check_gaussian_smoother(unit_keys=False).passed


def test_classical_hopfield_capacity_is_about_0_14_N():
    assert round(capacity.HOPFIELD_CLASSICAL_LOAD, 2) == 0.14
    assert capacity.hopfield_classical_capacity(1000) == pytest.approx(138)


def test_beta_picks_the_kind_of_hopfield_fixed_point():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((4, 32))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X[1] = 0.9 * X[0] + math.sqrt(1 - 0.81) * X[1]
    X[1] /= np.linalg.norm(X[1])
    start = X[0] + 0.2 * rng.standard_normal(32)
    ends = {}
    for beta in (0.5, 6.0, 40.0):
        path = attention.hopfield_retrieve(X, start, beta, 60)
        energies = [attention.hopfield_energy(X, xi, beta) for xi in path]
        assert np.all(np.diff(energies) <= 1e-12)
        ends[beta] = path[-1]
    assert np.linalg.norm(ends[0.5] - X.mean(axis=0)) < 0.05  # global average
    assert np.linalg.norm(ends[6.0] - X[:2].mean(axis=0)) < 0.01  # metastable
    assert np.linalg.norm(ends[40.0] - X[0]) < 0.01  # single pattern


# ------------------------------------------------------------ the figures' computations


@pytest.mark.parametrize("t", [0, 50, 130, 355])
def test_soft_dictionary_output_is_the_weighted_value(t):
    data = soft_dictionary.soft_read(t)
    assert data["weights"].sum() == pytest.approx(1.0)
    assert data["output"] == pytest.approx(data["weights"] @ soft_dictionary.VALUES)
    assert data["hard"] == soft_dictionary.VALUES[data["best"]]


def test_temperature_curves_show_the_trade():
    data = temperature.temperature_weights(3.0)
    assert np.all(np.diff(data["top_curve"]) >= 0)
    assert data["jacobian_curve"][-1] < data["jacobian_curve"][0]
    index = int(np.argmin(np.abs(temperature.BETA_GRID - 3.0)))
    assert data["jacobian_curve"][index] == pytest.approx(data["jacobian"], rel=1e-9)


@pytest.mark.parametrize("d", [8, 64, 128])
def test_capacity_curves_cross_one_at_their_capacity(d):
    data = capacity_vs_dimension.capacity_curves(d)
    for curve, cap, inside in zip(data["curves"], data["capacities"], data["on_chart"]):
        if inside:
            assert np.interp(np.log(cap), np.log(data["M"]), np.log(curve)) == pytest.approx(
                0.0, abs=0.05)
    assert data["capacities"][-1] == pytest.approx(math.exp(2 * math.sqrt(d) - 2))
    if d >= 64:  # from d = 64 on, each sharper score holds more
        assert list(np.argsort(data["capacities"])) == [0, 1, 2, 3, 4]
    assert data["on_chart"][-1] == (d <= 64)


@pytest.mark.parametrize("beta", [0.0, 1.0, 6.0])
def test_rank_lift_reports_the_ranks(beta):
    data = softmax_lifts_rank.rank_lift(beta)
    assert data["rank_scores"] == 2
    assert data["rank_A"] == (1 if beta == 0 else 10)
    np.testing.assert_allclose(data["A"].sum(axis=1), 1.0)


# ------------------------------------------------------------ session 5: the hidden tests hold


import pathlib  # noqa: E402

SESSION5 = pathlib.Path(__file__).resolve().parents[2] / "solutions" / "session-5"


def _exit_test_cells():
    import json

    path = SESSION5 / "exit-test.ipynb"
    cells = json.loads(path.read_text())["cells"]
    return {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in cells}


def _grade(answer: str, test_id: str) -> bool:
    """Run the set-up cell and the options of the questions, a submitted answer and a locked
    test cell (hidden part included), with memkit not yet imported, as in a fresh kernel, for
    the numbers of one student."""
    from support.assignment_cells import STUDENT, as_student, fresh_memkit

    cells = _exit_test_cells()
    namespace: dict = {}
    with fresh_memkit(), as_student(STUDENT, SESSION5):
        exec(cells["setup"], namespace)
        for gid, text in cells.items():
            if gid.endswith("-options"):
                exec(text, namespace)
        exec(answer, namespace)
        try:
            exec(cells[test_id], namespace)
        except (AssertionError, RuntimeError, FloatingPointError, ValueError):
            return False
    return True


_SOLUTION_READ = _exit_test_cells()["q1"]

_MEMKIT_READ = '''
from memkit import attention
def soft_read(K, V, q, beta):
    return attention.attend(K, V, q, beta)
'''

_HIDDEN_MEMKIT_READ = '''
import importlib
def soft_read(K, V, q, beta):
    module = importlib.import_module("memkit" + ".attention")
    return getattr(module, "att" + "end")(K, V, q, beta)
'''

_UNSTABLE_READ = '''
def soft_read(K, V, q, beta):
    w = np.exp(beta * (np.asarray(K) @ np.asarray(q)))
    a = w / w.sum()
    return np.asarray(V).T @ a, a
'''


def test_exit_test_q1_solution_earns_its_points():
    assert _grade(_SOLUTION_READ, "q1-tests")


@pytest.mark.parametrize("answer", [_MEMKIT_READ, _HIDDEN_MEMKIT_READ, _UNSTABLE_READ],
                         ids=["memkit by name", "memkit hidden by importlib", "unstable softmax"])
def test_exit_test_q1_a_library_read_or_an_unstable_one_loses_the_points(answer):
    with np.errstate(over="ignore", invalid="ignore"):
        assert not _grade(answer, "q1-tests")


def test_exit_test_letters_must_be_plain_strings():
    lying = '''
class _Yes(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
q5 = _Yes("B")
q2 = {_Yes("B")}
'''
    assert not _grade(lying, "q5-tests")
    assert not _grade(lying, "q2-tests")
    assert _grade("q5 = trade_options.key(1)", "q5-tests")  # the student's own letter of the key


def test_exit_test_hidden_tests_compute_nothing_with_memkit():
    """Convention 1: expected values are literals, never recomputed at grading time."""
    for grade_id, source in _exit_test_cells().items():
        if grade_id.endswith("-tests"):
            hidden = "\n".join(line.split("#")[0]
                               for line in source.split("### BEGIN HIDDEN TESTS")[1].splitlines())
            for call in ("attention.attend(", "capacity.softmax", "softmax_jacobian("):
                assert call not in hidden, (grade_id, call)
