"""The hidden tests of session 9 follow the house conventions, and cheating submissions lose.

Each notebook's code cells are run in order in one namespace (no kernel, memkit unimported
as in a fresh one): the set-up cell, an answer cell (the solution, or a crafted
submission), the test cell with its hidden part. Checked here: a ``str`` subclass whose
``__eq__`` says yes to anything fails every question answered with strings; an
``as_product`` that calls memkit fails; no memkit call computes an expected value at
grading time (the hidden tests write them out or compute them with numpy from the set-up's
parameters, which each student draws: issue 30) and their failure messages give no value away; memkit's measurements fall
within the bands the exercises' hidden tests allow. (``test_questions.py`` runs the
solutions of every session.)
"""

import ast
import re

import numpy as np
import pytest

from support import assignment_cells as nbcells
from support.cheats import LIAR_SOURCE

MEMKIT_CALL = re.compile(r"\b(attention|capacity|costs|memory|recurrent|scores|icl|edit|linalg|rosetta|checks)\.\w+\(")


def cells(name):
    path = nbcells.notebook("session-9", name)
    return {gid: text for gid, (kind, text) in nbcells.cells(path).items() if kind == "code" and gid}


def run(name, question, answer=None, extra=None):
    """Run set-up, (a replacement) answer and the full test cell of one question, as a
    fresh kernel would (memkit not yet imported), for the numbers of ``nbcells.STUDENT``
    (the options of every question drawn)."""
    code = cells(name)
    ns = {"__name__": "__main__"}
    path = nbcells.notebook("session-9", name)
    with nbcells.fresh_memkit(), nbcells.as_student(nbcells.STUDENT, path.parent):
        exec(compile(code["setup"], "setup", "exec"), ns)
        for gid in code:
            if gid.endswith("-options"):
                exec(compile(code[gid], gid, "exec"), ns)
        ns.update(extra or {})
        exec(compile(nbcells.code(code[question]) if answer is None else answer, question, "exec"), ns)
        exec(compile(nbcells.code(code[f"{question}-tests"]), f"{question}-tests", "exec"), ns)


_namespace: dict = {}
exec(LIAR_SOURCE, _namespace)
Liar = _namespace["_Liar"]


def _hidden(source):
    return source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]


QUESTIONS = [(name, gid[: -len("-tests")]) for name in ("exit-test", "exercises")
             for gid in cells(name) if gid.endswith("-tests")]


@pytest.mark.parametrize("name, question", QUESTIONS, ids=[f"{n}-{q}" for n, q in QUESTIONS])
def test_hidden_tests_hold_literal_values_and_silent_messages(name, question):
    hidden = _hidden(cells(name)[f"{question}-tests"])
    assert not MEMKIT_CALL.search(hidden), "an expected value computed by memkit at grading time"
    for node in ast.walk(ast.parse(hidden)):
        if isinstance(node, ast.Assert):
            assert isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str), (
                f"{question}: every hidden assertion carries a fixed message")
            assert re.fullmatch(rf"{question}: [^0-9]*", node.msg.value), node.msg.value


LIARS = {
    ("exit-test", "q1"): "four_questions = [Liar('x')] * 4",
    ("exit-test", "q2"): ("q2 = {n: (Liar('x'), Liar('y'), Liar('z')) for n in ['mlp', 'softmax_attention', "
                          "'linear_attention', 'decay', 'delta_rule', 'test_time_training']}"),
    ("exit-test", "q3"): ("q3 = {n: Liar('a') for n in ['mlp', 'softmax_attention', 'linear_attention', "
                          "'decay', 'delta_rule', 'test_time_training']}"),
    ("exit-test", "q4"): ("q4 = {n: Liar('a') for n in ['nadaraya_watson', 'widrow_hoff', "
                          "'recursive_least_squares', 'hash_table', 'fast_weight_programmer', 'reinforce', "
                          "'random_features', 'hopfield_network']}"),
}


@pytest.mark.parametrize("name, question", list(LIARS), ids=[f"{n}-{q}" for n, q in LIARS])
def test_a_lying_string_loses_the_points(name, question):
    with pytest.raises(AssertionError):
        run(name, question, answer=LIARS[(name, question)], extra={"Liar": Liar})


def test_a_lying_string_loses_the_points_in_the_exercises():
    code = cells("exercises")
    # question 2: the numbers right, the choice a liar
    answer = code["q2"].replace('closer = min(', 'closer_ = min(') + "\ncloser = Liar('asymptotic')\n"
    with pytest.raises(AssertionError):
        run("exercises", "q2", answer=answer, extra={"Liar": Liar})
    # question 3: the gaps right, the set made of liars
    answer = code["q3"] + "\nsame = {Liar('a'), Liar('b')}\n"
    with pytest.raises(AssertionError):
        run("exercises", "q3", answer=answer, extra={"Liar": Liar})


def test_the_lying_string_really_lies():
    assert Liar("x") == "anything" and Liar("x").strip().lower() == ["not even a string"]


def test_as_product_that_calls_memkit_loses_the_points():
    cheat = (
        "from memkit import linalg\n"
        "def as_product(alphas, rhos):\n"
        "    A, B = np.asarray(alphas, dtype=float).T, np.asarray(rhos, dtype=float)\n"
        "    linalg.matmul_outer(A, B)\n"
        "    return A, B\n"
        "rank_bound_ex2 = 3\n"
    )
    with pytest.raises(AssertionError, match="memkit is not allowed"):
        run("exit-test", "q6", answer=cheat)


def test_as_product_with_the_factors_swapped_loses_the_points():
    wrong = (
        "def as_product(alphas, rhos):\n"
        "    return np.asarray(rhos, dtype=float).T, np.asarray(alphas, dtype=float)\n"
        "rank_bound_ex2 = 3\n"
    )
    with pytest.raises(AssertionError):
        run("exit-test", "q6", answer=wrong)


def test_the_rank_bound_needs_the_smallest_dimension():
    code = cells("exit-test")["q6"].replace("rank_bound_ex2 = min(r6, m6, n6)", "rank_bound_ex2 = max(r6, m6, n6) + 1")
    with pytest.raises(AssertionError, match="largest possible rank"):
        run("exit-test", "q6", answer=code)


def test_memkit_measures_within_the_bands_the_hidden_tests_allow():
    # the exercises' hidden tests grade measurements against closed forms with tolerances
    # set from memkit's spread: a change in memkit that moves a measurement out shows here
    # (at the smallest and largest widths the set-up draws: d_k1 of 12 to 24, d2 of 8 to 12)
    from memkit import capacity, memory, scores

    for d in (12, 24):
        grid = np.array([round(d * f) for f in (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5)])
        heb = np.array([memory.hebbian_interference_mc(int(M), d, trials=200, seed=int(M)) for M in grid])
        ls = np.array([memory.least_squares_interference_mc(int(M), d, trials=200, seed=int(M)) for M in grid])
        predicted = np.sqrt((grid - 1) / d)
        assert np.all((heb > 0.94 * predicted) & (heb < 1.01 * predicted))
        over = grid > d
        assert np.all(ls[~over] < 1e-6) and np.all(np.abs(ls[over] / np.sqrt(grid[over] / d - 1) - 1) < 0.06)
    for d in (8, 12):
        exact = capacity.relu_power_capacity(d, 2, exact=True)
        for seed in range(4):
            measured = capacity.capacity_mc(d, scores.score("relu_power", p=2), trials=64, seed=seed)
            assert abs(measured / exact - 1) < 0.2
            assert abs(measured - exact) < abs(measured - capacity.relu_power_capacity(d, 2))
