"""Sessions 1-4: cheats lose the points of a "write it yourself" question.

Runs the cells of the source notebooks in-process (``assignment_cells``; the nbgrader round
trip of ``test_assignments.py`` grades them for real, and ``test_questions.py`` runs every
solution and the wrong answers). A "write it yourself" question must lose its
points when a library routine does the whole job: each such question is run here with
answers that call the routine (``W @ x``, ``lstsq``, ``pinv``, ``inv``, memkit ...), and its test
cell must fail.
"""

import numpy as np
import pytest

from support.assignment_cells import notebook, run, solution
from support.cheats import LIAR_SOURCE


CHEATS = {
    ("session-1", "exercises", "q5"): [
        "def matvec_columns(W, x):\n    return np.array([W[:, :j + 1] @ x[:j + 1] for j in range(W.shape[1])])",
        "def matvec_columns(W, x):\n    return np.array([np.dot(W[:, :j + 1], x[:j + 1]) for j in range(W.shape[1])])",
        "def matvec_columns(W, x):\n    return np.array([np.einsum('ij,j->i', W[:, :j + 1], x[:j + 1]) for j in range(W.shape[1])])",
        "def matvec_columns(W, x):\n    return np.cumsum(linalg.matvec_by_columns(W, x)[1], axis=0)",
    ],
    ("session-2", "exit-test", "q3"): [
        solution(notebook("session-2", "exit-test"), "q3").split("def ratio_mc")[0]
        + "def ratio_mc(M, d_k, trials, seed):\n    return memory.hebbian_interference_mc(M, d_k, trials, seed)",
        solution(notebook("session-2", "exit-test"), "q3").split("def ratio_mc")[0]
        + "from memkit.memory import hebbian_interference_mc as mc\n"
          "def ratio_mc(M, d_k, trials, seed):\n    return mc(M, d_k, trials, seed)",
    ],
    ("session-3", "exit-test", "q2"): [
        "def least_squares_memory(K, V):\n    return np.linalg.lstsq(K, V, rcond=None)[0].T",
        "def least_squares_memory(K, V):\n    return (np.linalg.pinv(K) @ V).T",
        "from numpy.linalg import lstsq\ndef least_squares_memory(K, V):\n    return lstsq(K, V, rcond=None)[0].T",
        "def least_squares_memory(K, V):\n    return memory.least_squares_write(K, V)",
    ],
    ("session-3", "exercises", "q3"): [
        "def rls_memory(K, V, lam):\n    return V.T @ K @ np.linalg.inv(K.T @ K + lam * np.eye(K.shape[1]))",
        "def rls_memory(K, V, lam):\n    return np.linalg.solve(K.T @ K + lam * np.eye(K.shape[1]), K.T @ V).T",
        "def rls_memory(K, V, lam):\n    return memory.ridge_write(K, V, lam)",
        "def rls_memory(K, V, lam):\n    return memory.rls_write(K, V, lam)[0]",
    ],
    ("session-4", "exercises", "q4"): [
        solution(notebook("session-4", "exercises"), "q4").replace(
            "np.maximum(np.asarray(s, dtype=float), 0.0) ** 2", "scores.relu_power(s, 2)"),
        "from memkit.scores import relu_power as gate\n"
        + solution(notebook("session-4", "exercises"), "q4").replace(
            "np.maximum(np.asarray(s, dtype=float), 0.0) ** 2", "gate(s, 2)"),
    ],
    ("session-4", "exercises", "q3"): [
        "def relu_power_read(K, V, x, p):\n    return scores.mlp_read(K, V, x, scores.score('relu_power', p=p))[0]",
        "from memkit.scores import mlp_read, score\n"
        "def relu_power_read(K, V, x, p):\n    return mlp_read(K, V, x, score('relu_power', p=p))[0]",
    ],
}


@pytest.mark.parametrize(
    "where,cheat",
    [(k, c) for k, cs in CHEATS.items() for c in cs],
    ids=lambda v: "/".join(v) if isinstance(v, tuple) else v.splitlines()[-1].strip()[:60],
)
def test_a_library_routine_doing_the_whole_job_loses_the_points(where, cheat):
    session, name, gid = where
    results = run(notebook(session, name), {gid: cheat})
    assert isinstance(results[f"{gid}-tests"], AssertionError), results[f"{gid}-tests"]
    # the rest of the notebook still passes: only the cheated question loses its points
    assert all(e is None for k, e in results.items() if k != f"{gid}-tests")


def test_the_guard_puts_every_routine_back():
    before = (np.linalg.lstsq, np.linalg.pinv, np.matmul)
    namespace: dict = {}
    run(notebook("session-3", "exit-test"), {"q2": CHEATS[("session-3", "exit-test", "q2")][0]},
        namespace=namespace)
    assert (np.linalg.lstsq, np.linalg.pinv, np.matmul) == before
    # the memkit the notebook ran with (imported afresh, as in a new kernel) has its code back
    write = namespace["memory"].least_squares_write
    assert write.__code__.co_name == "least_squares_write"
    assert write(np.eye(3), np.eye(3)).shape == (3, 3)


def test_a_str_subclass_with_a_lying_eq_fails():
    liar = LIAR_SOURCE + "rank_counts = _Liar('z')"
    results = run(notebook("session-1", "exit-test"), {"q4": liar})
    assert isinstance(results["q4-tests"], AssertionError)
