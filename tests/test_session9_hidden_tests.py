"""The hidden tests of session 9 follow the house conventions, and cheating submissions lose.

Each notebook's code cells are run in order in one namespace (no kernel): the set-up cell,
an answer cell (the solution, or a crafted submission), the test cell with its hidden part.
Checked here: the solutions pass; a ``str`` subclass whose ``__eq__`` says yes to anything
fails every question answered with strings; an ``as_product`` that calls memkit fails;
hidden tests hold literal expected values (no memkit call computes them at grading time) and
their failure messages give no value away.
"""

import ast
import json
import pathlib
import re

import numpy as np
import pytest

from cheats import LIAR_SOURCE

ROOT = pathlib.Path(__file__).resolve().parents[1]
SESSION = ROOT / "solutions" / "session-9"
MEMKIT_CALL = re.compile(r"\b(attention|capacity|costs|memory|recurrent|scores|icl|edit|linalg|rosetta|checks)\.\w+\(")


def cells(name):
    nb = json.loads((SESSION / f"{name}.ipynb").read_text())
    out = {}
    for c in nb["cells"]:
        m = c.get("metadata", {}).get("nbgrader", {})
        if c["cell_type"] == "code" and m:
            out[m["grade_id"]] = "".join(c["source"])
    return out


def run(name, question, answer=None, extra=None):
    """Run set-up, (a replacement) answer and the full test cell of one question."""
    code = cells(name)
    ns = {"__name__": "__main__"}
    exec(compile(code["setup"], "setup", "exec"), ns)
    ns.update(extra or {})
    exec(compile(code[question] if answer is None else answer, question, "exec"), ns)
    exec(compile(code[f"{question}-tests"], f"{question}-tests", "exec"), ns)


_namespace: dict = {}
exec(LIAR_SOURCE, _namespace)
Liar = _namespace["_Liar"]


def _hidden(source):
    return source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]


QUESTIONS = [(name, gid[: -len("-tests")]) for name in ("exit-test", "exercises")
             for gid in cells(name) if gid.endswith("-tests")]


@pytest.mark.parametrize("name, question", QUESTIONS, ids=[f"{n}-{q}" for n, q in QUESTIONS])
def test_the_solution_passes(name, question):
    run(name, question)


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
    with pytest.raises(AssertionError, match="must not use memkit"):
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
    code = cells("exit-test")["q6"].replace("rank_bound_ex2 = min(5, 10, 3)", "rank_bound_ex2 = 5")
    with pytest.raises(AssertionError, match="largest possible rank"):
        run("exit-test", "q6", answer=code)


def test_the_literals_are_what_memkit_computes():
    # the hidden tests' numbers, recomputed: a change in memkit that moves them shows here
    from memkit import capacity, memory, scores

    grid = [8, 12, 16, 20, 24, 28, 32, 36, 40]
    heb = [memory.hebbian_interference_mc(M, 16, trials=400, seed=M) for M in grid]
    ls = [memory.least_squares_interference_mc(M, 16, trials=400, seed=M) for M in grid]
    np.testing.assert_allclose(heb, [0.6391, 0.8048, 0.9509, 1.0781, 1.1822, 1.2855, 1.3812, 1.4624, 1.5497],
                               atol=1e-4)
    np.testing.assert_allclose(ls, [0, 0, 0, 0.4907, 0.7112, 0.8746, 1.0101, 1.1289, 1.2363], atol=1e-4)
    assert capacity.capacity_mc(16, scores.score("relu_power", p=2), trials=64, seed=0) == 214
    table = capacity.capacity_table(64, 8)
    assert table["softmax"] == pytest.approx(1202604.2841648, rel=1e-9)
    assert table["relu3"] == pytest.approx(34952.533333, rel=1e-9)
