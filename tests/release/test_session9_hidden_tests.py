"""The hidden tests of session 9 follow the house conventions, and cheating submissions lose.

Each notebook's code cells are run in order in one namespace (no kernel, memkit unimported
as in a fresh one): the set-up cell, an answer cell (the solution, or a crafted
submission), the test cell with its hidden part. Checked here: a ``str`` subclass whose
``__eq__`` says yes to anything fails every question answered with strings; an
``as_product`` that calls memkit fails; no memkit call computes an expected value at
grading time in the hidden tests themselves (they write them out, compute them with numpy
from the set-up's parameters, which each student draws, or call the never-released
answer_key.py) and their failure messages give no value away; a Monte Carlo answer is
graded on the student's own trials and seed, which any honest choice passes and a number
not measured with them fails. (``test_questions.py`` runs the solutions of every session.)
"""

import ast
import re

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


def test_a_measurement_is_graded_on_the_students_own_trials_and_seed():
    # the exercises' Monte Carlo answers are graded on the student's own draws: the hidden test
    # repeats memkit's run with the trials and seed handed in, so any honest choice passes (no
    # band around one seed) and a number not measured with them fails
    q1, q2 = cells("exercises")["q1"], cells("exercises")["q2"]
    for trials, seed in ((200, 0), (350, 987_654_321)):
        run("exercises", "q1", answer=nbcells.code(q1).replace("trials_q1 = 200", f"trials_q1 = {trials}")
            .replace("seed_q1 = 2024", f"seed_q1 = {seed}"))
    for trials, seed in ((64, 5), (100, 2**40)):
        run("exercises", "q2", answer=nbcells.code(q2).replace("trials_q2 = 64", f"trials_q2 = {trials}")
            .replace("seed_q2 = 0", f"seed_q2 = {seed}"))
    theory = "\nratios_hebbian = np.sqrt((np.array(M_GRID) - 1) / d_k1)"
    with pytest.raises(AssertionError, match="q1: not the Hebbian measurements"):
        run("exercises", "q1", answer=nbcells.code(q1) + theory)
    with pytest.raises(AssertionError, match="trials_q1 is a whole number from 200 to 2000"):
        run("exercises", "q1", answer=nbcells.code(q1).replace("trials_q1 = 200", "trials_q1 = 100"))
    with pytest.raises(AssertionError, match="q2: not the measured capacity"):
        run("exercises", "q2", answer=nbcells.code(q2) + "\nrelu2_measured_d2 = relu2_exact_d2")
