"""Sessions 1-4: every question's hidden test against the solution, wrong answers and cheats.

Runs the cells of the source notebooks in-process (fast; the nbgrader round trip of
``test_assignments.py`` grades them for real). A "write it yourself" question must lose its
points when a library routine does the whole job: each such question is run here with
answers that call the routine (``W @ x``, ``lstsq``, ``pinv``, ``inv``, memkit ...), and its test
cell must fail.
"""

import json
import pathlib
import re

import numpy as np
import pytest

from cheats import LIAR_SOURCE

ROOT = pathlib.Path(__file__).resolve().parents[1]
SESSIONS = ["session-1", "session-2", "session-3", "session-4"]
SOURCES = [ROOT / "solutions" / s / f"{n}.ipynb" for s in SESSIONS for n in ("exit-test", "exercises")]
MARKERS = re.compile(r"^\s*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$", re.M)


def cells(path):
    nb = json.loads(path.read_text())
    out = {}
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        out[gid] = (cell["cell_type"], "".join(cell["source"]))
    return out


def code(text):
    return MARKERS.sub("", text)


def run(path, answers=None):
    """Run set-up, answers and tests; return {test grade id: None or the exception}."""
    found = cells(path)
    namespace = {"__name__": "__main__"}
    exec(compile(found["setup"][1], "setup", "exec"), namespace)
    results = {}
    for gid, (kind, text) in found.items():
        if kind != "code" or gid == "setup":
            continue
        if gid.endswith("-tests"):
            try:
                exec(compile(code(text), gid, "exec"), namespace)
                results[gid] = None
            except Exception as error:  # noqa: BLE001 - any failure loses the points
                results[gid] = error
        else:
            source = (answers or {}).get(gid, code(text))
            exec(compile(source, gid, "exec"), namespace)
    return results


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_solutions_pass_every_hidden_test(path):
    results = run(path)
    assert results and all(e is None for e in results.values()), {
        k: repr(e) for k, e in results.items() if e is not None
    }


CHEATS = {
    ("session-1", "exercises", "q5"): [
        "def matvec_columns(W, x):\n    return np.array([W[:, :j + 1] @ x[:j + 1] for j in range(W.shape[1])])",
        "def matvec_columns(W, x):\n    return np.array([np.dot(W[:, :j + 1], x[:j + 1]) for j in range(W.shape[1])])",
        "def matvec_columns(W, x):\n    return np.array([np.einsum('ij,j->i', W[:, :j + 1], x[:j + 1]) for j in range(W.shape[1])])",
        "def matvec_columns(W, x):\n    return np.cumsum(linalg.matvec_by_columns(W, x)[1], axis=0)",
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
    path = ROOT / "solutions" / session / f"{name}.ipynb"
    results = run(path, {gid: cheat})
    assert isinstance(results[f"{gid}-tests"], AssertionError), results[f"{gid}-tests"]
    # the rest of the notebook still passes: only the cheated question loses its points
    assert all(e is None for k, e in results.items() if k != f"{gid}-tests")


def test_the_guard_puts_every_routine_back():
    import memkit.memory

    before = (np.linalg.lstsq, np.linalg.pinv, np.matmul, memkit.memory.least_squares_write.__code__)
    run(ROOT / "solutions" / "session-3" / "exit-test.ipynb", {"q2": CHEATS[("session-3", "exit-test", "q2")][0]})
    after = (np.linalg.lstsq, np.linalg.pinv, np.matmul, memkit.memory.least_squares_write.__code__)
    assert before == after


def test_a_str_subclass_with_a_lying_eq_fails():
    path = ROOT / "solutions" / "session-1" / "exit-test.ipynb"
    liar = LIAR_SOURCE + "rank_counts = _Liar('z')"
    results = run(path, {"q4": liar})
    assert isinstance(results["q4-tests"], AssertionError)
