"""Every number Chapters 9 and 10 state, against the monograph's value; the new memkit
functions of those chapters; the data of their three figures."""

import math

import numpy as np
from tools.common import nbgrader_cells
import pytest

from memkit import checks, costs, memory, recurrent
from memkit.figures import cache_vs_state, cache_vs_weights, forgetting_rules
from support.cheats import LIAR_SOURCE

# --------------------------------------------------------------------------- Chapter 9


def test_ch09_fast_weight_programmer_orthogonality_bound():
    # "more than d_dot associations cause retrieval errors", d_dot = 64
    assert costs.orthogonal_bound(64) == 64
    errors = recurrent.orthonormal_recall_errors([16, 32, 63, 64, 65, 96, 128], 64, seed=1)
    assert np.all(errors[:4] < 1e-12)
    assert np.all(errors[4:] > 0.5)
    assert np.all(np.diff(errors[4:]) > 0)
    with pytest.raises(TypeError, match="n_pairs"):
        recurrent.orthonormal_recall_errors([2.5], 64)


def test_ch09_linear_attention_is_a_recurrent_hebbian_state():
    rng = np.random.default_rng(9)
    for n in [5, 50, 500]:
        Q, K, V = rng.standard_normal((n, 4)), rng.standard_normal((n, 4)), rng.standard_normal((n, 3))
        parallel = recurrent.linear_attention_parallel(Q, K, V)
        assert np.allclose(parallel, recurrent.linear_attention_recurrent(Q, K, V), atol=1e-10)
        S = recurrent.run_updates(K, V, "add")
        assert S.shape == (3, 4)
        assert np.allclose(S, memory.hebbian_write(K, V))


def test_ch09_katharopoulos_two_states_and_positive_feature_map():
    assert checks.check_linear_attention_recurrence(seed=3).passed
    assert recurrent.elu_plus_one(np.array([-30.0]))[0] > 0
    # the memory S (d_v x d_k) and the normaliser z (d_k)
    assert costs.state_numbers(4, 3, normaliser=True) == 3 * 4 + 4


def test_ch09_exponential_kernel_needs_every_degree():
    q, k = memory.random_unit_vectors(2, 4, np.random.default_rng(2))
    exact = np.exp(3.0 * q @ k)
    errors = []
    for P in [1, 2, 4, 6]:
        phi = recurrent.exp_kernel_features(np.stack([q, k]), 3.0, P)
        assert phi.shape[1] == sum(4**p for p in range(P + 1))
        errors.append(abs(phi[0] @ phi[1] - exact) / exact)
    assert all(a > b > 0 for a, b in zip(errors, errors[1:]))


def test_ch09_ten_tokens_state_far_past_capacity_cache_recalls():
    run = recurrent.cache_vs_state_errors(10, d_k=4, beta=30.0, seed=0)
    assert run.cache_error.max() < 1e-3  # "the cache with softmax recalls well"
    assert run.state_error[-1] > 1.0  # "its recall is poor"
    assert run.keys.size + run.values.size == 80 and costs.state_numbers(4, 4) == 16


def test_ch09_cost_numbers_of_the_monograph():
    d, L = 4096, 32
    assert costs.model_params(d, L) == 12 * d * d * L
    assert math.isclose(costs.model_params(d, L), 6.4e9, rel_tol=0.01)  # 6.4 x 10^9
    assert round(costs.param_bytes(d, L) / 1e9, 1) == 12.9  # about 12.9 GB
    assert costs.cache_numbers_per_token(d, L) == 2 * d * L
    assert round(costs.cache_bytes(1, d, L) / 1e6, 2) == 0.52  # 0.52 MB per token
    assert costs.crossover_tokens(d, L) == 24_576 == 6 * d  # n* = 6d
    assert costs.cache_bytes(24_576, d, L) == costs.param_bytes(d, L)  # the cache caught up
    assert costs.crossover_tokens(d, L, batch=8) == 6 * d / 8  # 6d / B
    assert costs.crossover_tokens(8192, 80) == 49_152 == costs.crossover_tokens(8192, 1)  # Ex. 4


def test_ch09_grouped_query_attention_moves_the_crossing():
    d, L = 4096, 32
    assert costs.gqa_cache_numbers_per_token(d, L, 32, 32) == costs.cache_numbers_per_token(d, L)
    assert costs.gqa_cache_numbers_per_token(d, L, 32, 8) == 2 * d * L // 4
    assert costs.gqa_crossover_tokens(d, 32, 8, L) == 98_304 == 6 * d * 4
    assert costs.param_bytes(d, L) / costs.cache_bytes(1, d, L, bytes_per_number=1) == 49_152
    with pytest.raises(ValueError, match="kv_heads must divide heads"):
        costs.gqa_cache_numbers_per_token(d, L, 32, 5)


# --------------------------------------------------------------------------- Chapter 10


def test_ch10_delta_row_is_erase_then_write_and_a_gradient_step():
    rng = np.random.default_rng(10)
    S, v = rng.standard_normal((3, 5)), rng.standard_normal(3)
    k = memory.random_unit_vectors(1, 5, rng)[0]
    delta = recurrent.delta_update(S, k, v, 0.3)
    assert np.allclose(delta, S @ (np.eye(5) - 0.3 * np.outer(k, k)) + 0.3 * np.outer(v, k))
    assert np.allclose(delta, recurrent.ttt_update(S, k, v, 0.3))
    assert np.allclose(recurrent.gated_delta_update(S, k, v, 1.0, 0.3), delta)
    assert np.allclose(recurrent.gated_delta_update(S, k, v, 0.8, 0.0), 0.8 * S)
    assert np.allclose(recurrent.delta_update(S, k, v, 1.0) @ k, v, atol=1e-12)


def test_ch10_exact_overwrite_needs_an_l2_unit_key():
    rng = np.random.default_rng(11)
    S, v, x = rng.standard_normal((3, 6)), rng.standard_normal(3), np.abs(rng.standard_normal(6))
    l1, l2 = x / x.sum(), x / np.linalg.norm(x)
    assert np.linalg.norm(recurrent.delta_update(S, l1, v, 1.0) @ l1 - v) > 0.1
    assert np.linalg.norm(recurrent.delta_update(S, l2, v, 1.0) @ l2 - v) < 1e-12


def test_ch10_householder_product_and_its_wy_form():
    rng = np.random.default_rng(11)
    K = memory.random_unit_vectors(12, 6, rng)
    V, b = rng.standard_normal((12, 3)), rng.uniform(0.1, 1.0, 12)
    P = recurrent.householder_product(K, b)
    direct = np.eye(6)
    for k, b_t in zip(K, b):
        direct = direct @ (np.eye(6) - b_t * np.outer(k, k))
    assert np.allclose(P, direct)
    assert np.allclose(P, np.eye(6) - recurrent.householder_wy(K, b).T @ K)
    assert np.allclose(recurrent.delta_rule_wy(K, V, b), recurrent.run_updates(K, V, "delta", beta=b))
    # from a nonzero start the state is S0 P_n plus the state written from zero
    S0 = rng.standard_normal((3, 6))
    assert np.allclose(recurrent.run_updates(K, V, "delta", S0=S0, beta=b),
                       S0 @ P + recurrent.delta_rule_wy(K, V, b))
    with pytest.raises(ValueError, match="beta"):
        recurrent.householder_wy(K, -1.0)


def test_ch10_batch_ttt_step_from_zero_is_linear_attention():
    rng = np.random.default_rng(4)
    K, V = rng.standard_normal((9, 5)), rng.standard_normal((9, 2))
    assert np.allclose(recurrent.ttt_batch_update(np.zeros((2, 5)), K, V, 0.5), V.T @ K)
    # any other step size or start does not give the linear-attention state
    assert not np.allclose(recurrent.ttt_batch_update(np.zeros((2, 5)), K, V, 0.25), V.T @ K)
    with pytest.raises(ValueError, match="V must have shape"):
        recurrent.ttt_batch_update(np.zeros((2, 5)), K, V[:, :1], 0.5)


def test_ch10_forgetting_curves_of_the_figure():
    curves = {rule: recurrent.recall_errors_by_age(rule, gamma=0.9, beta=1.0, n_pairs=24, d=8,
                                                   streams=12, seed=0)[1]
              for rule in ("add", "decay", "delta")}
    # adding: bad at every age, nothing forgotten, nothing recalled well
    assert curves["add"].min() > 1.2 and np.ptp(curves["add"]) < 0.6
    # decay: recent pairs far better than old ones
    assert curves["decay"][0] < 0.8 < 1.3 < curves["decay"][-1]
    # delta: the newest pair exactly
    assert curves["delta"][0] < 1e-12 and curves["delta"][-1] > 1.0
    # a smaller gamma forgets faster and recalls the newest better
    fast = recurrent.recall_errors_by_age("decay", gamma=0.5)[1]
    slow = recurrent.recall_errors_by_age("decay", gamma=0.99)[1]
    assert fast[0] < curves["decay"][0] < slow[0]


def test_ch10_the_add_curve_is_flat_and_its_12_stream_wobble_is_sampling_noise():
    # Chapter 10 says adding is equally bad at every age although the figure's 12-stream
    # curve runs from about 1.56 to 1.84: the wobble is the noise of a 12-stream mean
    narrow = recurrent.recall_errors_by_age("add", streams=12, seed=0)[1]
    repeats = np.array([recurrent.recall_errors_by_age("add", streams=12, seed=s)[1]
                        for s in range(1, 201)])
    noise = repeats.std(axis=0).mean()
    assert 0.05 < noise < 0.25
    assert np.ptp(narrow) < 5 * noise            # within a few standard deviations
    wide = recurrent.recall_errors_by_age("add", streams=2000, seed=0)[1]
    assert np.ptp(wide) < 0.1 < np.ptp(narrow)   # flat once the noise is averaged away
    # while decay's tilt is no noise: it survives 2000 streams
    decay = recurrent.recall_errors_by_age("decay", gamma=0.9, streams=2000, seed=0)[1]
    assert decay[-1] - decay[0] > max(0.4, 5 * np.ptp(wide))


def test_ch10_a_returning_key_is_overwritten_only_by_delta():
    rng = np.random.default_rng(12)
    K = memory.random_unit_vectors(5, 8, rng)
    V = rng.standard_normal((6, 8))
    K = np.vstack([K, K[:1]])
    errors = [np.linalg.norm(recurrent.run_updates(K, V, rule, **p) @ K[0] - V[5])
              for rule, p in [("add", {}), ("decay", {"gamma": 0.5}), ("delta", {"beta": 1.0})]]
    assert errors[2] < 1e-12 < errors[1] < errors[0]


# --------------------------------------------------------------------------- figures


def test_figure_cache_vs_state_data():
    data = cache_vs_state.cache_and_state(10)
    assert data["cache"].shape == (10, 8) and data["state"].shape == (4, 4)
    run = recurrent.cache_vs_state_errors(10, d_k=4, beta=30.0, seed=0)
    assert np.allclose(data["state"], run.values.T @ run.keys)
    assert np.allclose(data["state_error"], run.state_error)
    small = cache_vs_state.cache_and_state(3)
    assert small["cache"].shape == (3, 8) and np.allclose(small["cache"], data["cache"][:3])
    assert small["state_error"][0] < 1e-12  # one pair of unit key: exact
    with pytest.raises(ValueError, match="at most"):
        cache_vs_state.cache_and_state(11)


def test_figure_cache_vs_weights_data():
    data = cache_vs_weights.bytes_at(15)
    assert data["n"] == 32_768 and data["n_star"] == 24_576
    assert round(data["weights"] / 1e9, 1) == 12.9
    assert math.isclose(data["cache"], 32_768 * 524_288)
    assert cache_vs_weights.bytes_at(14)["ratio"] < 1 < data["ratio"]
    assert len(data["lengths"]) == 11 and data["lengths"][0] == 1024


def test_figure_forgetting_rules_data():
    data = forgetting_rules.forgetting_curves(0.9)
    assert set(data["errors"]) == {"add", "decay", "delta"}
    assert all(e.shape == (24,) for e in data["errors"].values())
    other = forgetting_rules.forgetting_curves(0.6)
    assert np.allclose(other["errors"]["add"], data["errors"]["add"])
    assert np.allclose(other["errors"]["delta"], data["errors"]["delta"])
    assert not np.allclose(other["errors"]["decay"], data["errors"]["decay"])
    with pytest.raises(ValueError, match="gamma"):
        forgetting_rules.forgetting_curves(1.5)


# --------------------------------------------------------------------------- session 7 grading
# The hidden tests of solutions/session-7 run here without nbgrader: each notebook's cells are
# executed in one namespace, in order, with some answer cells replaced.

import json  # noqa: E402
import pathlib  # noqa: E402

SESSION_7 = pathlib.Path(__file__).resolve().parents[2] / "solutions" / "session-7"


def _cells(name):
    nb = json.loads((SESSION_7 / name).read_text())
    return [(nbgrader_cells.grade_id(c), "".join(c["source"]))
            for c in nb["cells"] if c["cell_type"] == "code"]


def _failing_tests(name, answers=None):
    """Grade ids of the test cells that raise, with the answer cells of ``answers`` replaced."""
    from support.assignment_cells import STUDENT, as_student, fresh_memkit  # a fresh kernel's memkit

    answers = answers or {}
    namespace, failed = {}, set()
    with fresh_memkit(), as_student(STUDENT, SESSION_7):  # one student's numbers
        for grade_id, source in _cells(name):
            try:
                exec(compile(answers.get(grade_id, source), f"<{grade_id}>", "exec"), namespace)
            except Exception:
                if grade_id.endswith("-tests"):
                    failed.add(grade_id)
    return failed


@pytest.mark.parametrize("name", ["exit-test.ipynb", "exercises.ipynb"])
def test_session_7_solutions_pass_their_hidden_tests(name):
    assert _failing_tests(name) == set()


def test_session_7_hidden_tests_hold_literal_expected_values():
    for name in ["exit-test.ipynb", "exercises.ipynb"]:
        for grade_id, source in _cells(name):
            if grade_id and grade_id.endswith("-tests"):
                hidden = "\n".join(line for line in source.split("### BEGIN HIDDEN TESTS")[1]
                                   .splitlines() if not line.strip().startswith("#"))
                # no reference computed at grading time by code the student's kernel can patch
                for call in ["recurrent.", "costs.", "memory.", "checks."]:
                    assert f"memkit.{call}" not in hidden.replace("memkit.recurrent,", ""), (
                        grade_id, call)


WHOLE_JOB = {
    "q1": '''
import memkit.recurrent
def step(S, k, v, q):
    S_new = memkit.recurrent.add_update(S, k, v)
    return S_new, S_new @ q
''',
    "q3": '''
from memkit import recurrent as _r
def write(S, k, v, rule, param=None):
    if rule == "add":
        return _r.add_update(S, k, v)
    if rule == "decay":
        return _r.decay_update(S, k, v, param)
    return _r.delta_update(S, k, v, param)
''',
}


@pytest.mark.parametrize("question", sorted(WHOLE_JOB))
def test_session_7_a_library_doing_the_whole_job_loses_the_points(question):
    failed = _failing_tests("exit-test.ipynb", {question: WHOLE_JOB[question]})
    assert f"{question}-tests" in failed



LYING_ANSWERS = [
    ("exit-test.ipynb", "q2", LIAR_SOURCE + 'q2 = {_Liar("A"), _Liar("D"), _Liar("E"), _Liar("G")}'),
    ("exit-test.ipynb", "q5", LIAR_SOURCE + 'q5 = {"add": _Liar("B"), "decay": _Liar("D"), '
                                     '"delta": _Liar("A"), "cache": _Liar("C")}'),
    ("exercises.ipynb", "q3", None),
    ("exercises.ipynb", "q5", None),
]


@pytest.mark.parametrize("name, question, answer", LYING_ANSWERS)
def test_session_7_a_str_with_a_lying_eq_loses_the_points(name, question, answer):
    if answer is None:  # the solution, with its string answer replaced by a liar
        source = dict(_cells(name))[question]
        target = {"q3": "best_mean", "q5": "best_change"}[question]
        answer = source + "\n" + LIAR_SOURCE + f"\n{target} = _Liar({target})\n"
    assert f"{question}-tests" in _failing_tests(name, {question: answer})


def test_simulated_students_lose_a_question_whose_earlier_answer_is_missing():
    from support.simulate import answers

    source = json.loads((SESSION_7 / "exit-test.ipynb").read_text())
    release = json.loads((SESSION_7.parents[1] / "exercises" / "session-7" / "exit-test.ipynb")
                         .read_text())
    needs = answers.dependencies(source, release)
    assert needs["q4"] == {"q3"}  # q4 may call the write() of q3
    assert all(not needs[q] for q in ("q1", "q2", "q3", "q5", "q6", "q7"))
    points = {q.answer_id: q.points for q in answers.questions(source)}
    every = set(points)
    assert answers.earned_points(source, every, release) == answers.autograded_points(source)
    assert answers.earned_points(source, every - {"q3"}, release) == (
        answers.autograded_points(source) - points["q3"] - points["q4"])
    assert answers.earned_points(source, every - {"q4"}, release) == (
        answers.autograded_points(source) - points["q4"])
