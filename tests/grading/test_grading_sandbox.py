"""Grading that a submission cannot fool, spy on or tamper with.

The fast tests check the parts (the sandbox on a plain command, the grader's own check of
the answers, the gradebook ledger, the feedback, the statuses). ``attacked_class`` grades,
through ``python -m tools.grading`` as ``make grade`` does, a class holding each attack
of ``tests.support.simulate.ATTACKS`` beside honest submissions and submissions with odd
student ids; the tests after it read the outcome.
"""

import ast
import csv
import hashlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import threading
import time

import nbformat
import pytest

from tools.common import nbgrader_cells
from tools.release import assignments as course
from tools.grading import box as boxes, gradebook_guard, hidden, kernels, plain, recheck
from tools.grading import feedback, outcome, screening
from tools.grading.cells import cell_text
from support.simulate import answers, attacks, attacks_files, classroom

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRST = course.assignments(ROOT)[0]
NAME = "exit-test.ipynb"
SECRET = "s3cret-token-of-the-instructor"
DAEMON = "memcourse-attack-daemon"
ODD_IDS = ["ann lee", "zoë", "o'brien", "-dash", ".dot"]
CELL_TIMEOUT = 20
SUBMISSION_LIMIT = 100  # seconds (an honest submission takes a few)


def load(path):
    return json.loads(pathlib.Path(path).read_text())


def test_bubblewrap_is_installed_and_usable():
    assert boxes.unusable() is None, boxes.unusable()


# --------------------------------------------------------------------------- the sandbox alone


def run_in_sandbox(tmp_path, code, timeout=60):
    """Run ``code`` with the course's Python inside the sandbox; (exit code, stdout)."""
    source = tmp_path / "source"
    source.mkdir(exist_ok=True)
    (source / "data.txt").write_text("the student's file")
    (source / "secret.ipynb").write_text("{}")
    uid = boxes.BASE_UID + 7 if boxes.privileged() else None
    import memkit

    settings = boxes.Sandbox(memkit=str(pathlib.Path(memkit.__file__).parent), tmp=str(tmp_path))
    box = boxes.make_box(source, uid, settings)
    cmd = boxes.command(box, [sys.executable, "-c", code], settings, uid)
    env = {**os.environ, "MEMCOURSE_DB_URL": "postgresql://grader:" + SECRET + "@db/x"}
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    finally:
        boxes.remove_box(box)
    return result.returncode, result.stdout + result.stderr


def test_the_sandbox_sees_its_folder_the_environment_and_nothing_else(tmp_path):
    code = f"""
import os, sys, json
import numpy, memkit
print(json.dumps({{
    "uid": os.getuid(),
    "cwd_files": sorted(os.listdir(".")),
    "memkit": memkit.__file__,
    "env": sorted(os.environ),
    "secret": any({SECRET!r} in v for v in os.environ.values()),
    "course": [p for p in ("solutions", "nbgrader_config.py", "memkit", "tools", "exercises")
               if os.path.exists(os.path.join({str(ROOT)!r}, p))],
    "root_home": os.path.exists("/root/.bashrc") or os.path.exists("/home"),
    "tmp_of_host": os.path.exists({str(tmp_path)!r} + "/source"),
}}))
"""
    rc, out = run_in_sandbox(tmp_path, code)
    assert rc == 0, out
    seen = json.loads(out.strip().splitlines()[-1])
    if boxes.privileged():
        assert seen["uid"] >= boxes.BASE_UID
    assert seen["cwd_files"] == ["data.txt"]  # a copy of the files, no notebook
    assert seen["memkit"].startswith(boxes.INSIDE_MEMKIT)
    assert not seen["secret"] and "MEMCOURSE_DB_URL" not in seen["env"]
    assert not seen["course"] and not seen["root_home"] and not seen["tmp_of_host"]


def test_the_sandbox_cannot_write_the_environment_or_reach_the_network(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    code = f"""
import memkit, socket, sys, os
results = []
for path in (memkit.__file__, sys.executable, "/usr/bin/env"):
    try:
        open(path, "a").close()
        results.append("wrote " + path)
    except OSError:
        pass
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2)
    results.append("connected")
except OSError:
    pass
print("RESULTS", results)
"""
    rc, out = run_in_sandbox(tmp_path, code)
    listener.close()
    assert rc == 0 and "RESULTS []" in out, out


def alive_with(token):
    """Processes whose command line holds ``token``."""
    found = []
    for proc in pathlib.Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if token in cmdline and str(os.getpid()) != proc.name:
                stat = (proc / "stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(proc.name))
    return found


def test_a_double_forked_daemon_dies_with_the_sandbox(tmp_path):
    token = "memcourse-test-daemon-" + str(os.getpid())
    code = f"""
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60) # {token}"])
    os._exit(0)
os.wait()
time.sleep(1)
print("main exits")
"""
    rc, out = run_in_sandbox(tmp_path, code)
    assert rc == 0 and "main exits" in out, out
    time.sleep(0.5)
    assert alive_with(token) == []


def run_notebook(code, folder):
    """Run a one-cell notebook as nbgrader does (``SandboxExecute``'s kernel manager, the
    kernel's working folder ``folder``); the cell's printed line, parsed as JSON."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    client = NotebookClient(
        nb, kernel_manager_class=kernels.SpareKernelManager, timeout=60,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute()
    return json.loads(nb.cells[0].outputs[0]["text"])


LOOK_AROUND = """
import json, os
print(json.dumps({"cwd": os.getcwd(), "files": sorted(os.listdir(".")), "uid": os.getuid(),
                  "leftover": "leftover" in globals()}))
leftover = True
open("left-behind.txt", "w").write("from the notebook before")
"""


@pytest.fixture
def spare_env(tmp_path, monkeypatch):
    import memkit

    monkeypatch.setenv("MEMCOURSE_SANDBOX_MEMKIT", str(pathlib.Path(memkit.__file__).parent))
    monkeypatch.setenv("MEMCOURSE_SANDBOX_TMP", str(tmp_path))
    folders = []
    for name in ("ann", "bob", "cy"):
        folder = tmp_path / "submitted" / name
        folder.mkdir(parents=True)
        (folder / f"{name}.txt").write_text(name)
        folders.append(folder)
    yield folders
    kernels._discard_spare()


def test_the_kernel_started_ahead_is_new_and_gets_the_next_submission_only(tmp_path, spare_env):
    first = run_notebook(LOOK_AROUND, spare_env[0])
    ahead = kernels._spare
    assert ahead is not None and ahead.process.poll() is None
    assert pathlib.Path(first["cwd"]).parent != ahead.km._box
    second = run_notebook(LOOK_AROUND, spare_env[1])
    # the second notebook ran in the kernel started ahead: its box, its user
    assert second["cwd"] == str(ahead.km._box / "work")
    assert ahead.process.poll() is not None  # and that kernel is gone with its notebook
    assert not ahead.km._box.exists() and not pathlib.Path(first["cwd"]).exists()
    # it saw its submission's files only, and nothing the first notebook left
    assert first["files"] == ["ann.txt"] and second["files"] == ["bob.txt"]
    assert not first["leftover"] and not second["leftover"]
    if boxes.privileged():
        assert second["uid"] == ahead.km._uid_value >= boxes.BASE_UID
    # a new one is waiting; at the end (atexit) it is killed and its box removed
    waiting = kernels._spare
    assert waiting is not ahead and waiting.process.poll() is None
    kernels._discard_spare()
    assert waiting.process.poll() is not None and not waiting.km._box.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["submitted"]


def test_a_kernel_started_ahead_that_died_is_replaced(tmp_path, spare_env):
    run_notebook(LOOK_AROUND, spare_env[0])
    dead = kernels._spare
    os.killpg(dead.process.pid, 9)
    dead.process.wait()
    third = run_notebook(LOOK_AROUND, spare_env[2])
    assert third["files"] == ["cy.txt"]
    assert third["cwd"] != str(dead.km._box / "work") and not dead.km._box.exists()


class FakeChannel:
    def __init__(self, messages):
        self.messages = list(messages)

    async def get_msg(self, timeout=None):
        from queue import Empty

        if not self.messages:
            raise Empty
        return self.messages.pop(0)


def status(state, parent):
    return {"msg_type": "status", "content": {"execution_state": state},
            "parent_header": {"msg_id": parent}}


@pytest.mark.parametrize(
    "iopub, ready",
    [
        ([status("busy", "k1"), status("idle", "k1")], True),
        ([status("idle", "k1")], True),  # joined between busy and idle: still ready
        ([status("idle", "k0"), status("idle", "k2")], False),  # its own idle was missed
        ([], False),
    ],
)
def test_a_sandboxed_kernel_is_ready_once_its_kernel_info_idle_arrives(iopub, ready):
    import asyncio
    import types

    seen = []
    client = types.SimpleNamespace(
        shell_channel=FakeChannel([{"msg_type": "execute_reply"},
                                   {"msg_type": "kernel_info_reply", "content": {}}]),
        iopub_channel=FakeChannel(iopub),
        _handle_kernel_info_reply=seen.append,
    )
    got = asyncio.run(kernels.SandboxKernelClient._replied_and_idle(client, {"k1"}, 0.2))
    assert got is ready and seen == [{"msg_type": "kernel_info_reply", "content": {}}]


# --------------------------------------------------------------------------- the grader's check


def test_plain_values_cross_and_nothing_else():
    import numpy as np

    for value in [1, 2.5, float("nan"), "b", None, True, [1, (2, 3.0)], {"a": 1}, {1, 2}, 1 + 2j]:
        back = plain.rebuild(json.loads(json.dumps(plain.to_plain(value))))
        assert type(back) is type(value) and (back == value or value != value)
    array = np.arange(6.0).reshape(2, 3)
    back = plain.rebuild(json.loads(json.dumps(plain.to_plain(array))))
    assert back.dtype == float and np.array_equal(back, array)
    assert type(plain.rebuild(plain.to_plain(np.int64(3)))) is np.int64

    class Liar(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    back = plain.rebuild(plain.to_plain(Liar("zz")))
    assert type(back) is not str and back != "b"  # the lie did not cross
    assert plain.to_plain(len)["t"] == "callable"
    with pytest.raises(TypeError):
        float(plain.rebuild({"t": "something", "v": 1}))


def test_what_the_kernel_prints_is_parsed_and_rebuilt_within_bounds():
    started = time.monotonic()
    assert plain.parse("[" * 100000) is None and plain.parse("{" * 60 + "}" * 60) is None
    assert plain.parse("x" * (plain.MAX_LINE + 1)) is None and plain.parse("[1]") is None
    assert plain.parse('{"values": {}}') == {"values": {}}
    same = [{"t": "int", "v": str(k * (2**61 - 1))} for k in range(1, 50001)]
    for tag in ("set", "frozenset"):
        assert isinstance(plain.rebuild({"t": tag, "v": same}), plain.Opaque)
    pairs = [[x, {"t": "none"}] for x in same]
    assert isinstance(plain.rebuild({"t": "dict", "v": pairs}), plain.Opaque)
    assert plain.rebuild({"t": "set", "v": same[:3]}) == {2**61 - 1, 2 * (2**61 - 1), 3 * (2**61 - 1)}
    assert isinstance(plain.rebuild({"t": "int", "v": "9" * 100000}), plain.Opaque)
    flat = {"t": "ndarray", "kind": "f", "shape": [plain.MAX_ELEMENTS + 1], "v": ["0"] * (plain.MAX_ELEMENTS + 1)}
    assert isinstance(plain.rebuild_within(flat, plain.Budget()), plain.Opaque)
    assert isinstance(plain.rebuild({"t": "ndarray", "kind": "f", "shape": [3], "v": ["1"]}), plain.Opaque)
    assert time.monotonic() - started < 20


def _nb(cells):
    out = []
    for meta, text in cells:
        cell = nbformat.v4.new_code_cell(text)
        cell["metadata"]["nbgrader"] = meta
        out.append(cell)
    return {"cells": out}


SOURCE = _nb(
    [
        ({"grade_id": "setup", "locked": True, "grade": False, "solution": False}, "k = 3"),
        ({"grade_id": "q1", "solution": True, "grade": False, "locked": False}, "answer = 9"),
        (
            {"grade_id": "q1-tests", "grade": True, "locked": True, "points": 1, "solution": False},
            'assert float(answer) == k * 3, "q1: not the square"',
        ),
        (
            {"grade_id": "q2", "solution": True, "grade": False, "locked": False},
            "def square(x):\n    return x * x",
        ),
        (
            {"grade_id": "q2-tests", "grade": True, "locked": True, "points": 1, "solution": False},
            'assert abs(float(square(4.0)) - 16.0) < 1e-9, "q2: wrong"',
        ),
    ]
)


def _line(values=None, calls=()):
    return json.dumps({"values": {k: plain.to_plain(v) for k, v in (values or {}).items()},
                       "calls": list(calls)})


SQUARE = hidden.Split(calls={"q2-tests": [hidden.Call("square", [plain.to_plain(4.0)], {}, [], [])]})


def test_the_grader_judges_exported_answers_with_its_own_code():
    right = {"q1-tests": _line({"answer": 9}),
             "q2-tests": _line(calls=[{"result": plain.to_plain(16.0)}])}
    verdict = recheck.judge(SOURCE, right, SQUARE)
    assert not verdict.problem
    assert verdict.verdicts["q1-tests"].passed and verdict.verdicts["q2-tests"].passed
    wrong = recheck.judge(SOURCE, {"q1-tests": _line({"answer": 10}),
                                   "q2-tests": _line(calls=[{"result": plain.to_plain(15.0)}])}, SQUARE)
    assert wrong.verdicts["q1-tests"].passed is False
    assert wrong.verdicts["q1-tests"].message == "AssertionError: q1: not the square"
    assert wrong.verdicts["q2-tests"].passed is False
    # a test calling with arguments the grader found no call for, or no answer at all, fails
    other = hidden.Split(calls={"q2-tests": [hidden.Call("square", [plain.to_plain(5.0)], {}, [], [])]})
    assert recheck.judge(SOURCE, right, other).verdicts["q2-tests"].passed is False
    assert recheck.judge(SOURCE, {}, SQUARE).verdicts["q1-tests"].passed is False
    raised = {"q2-tests": _line(calls=[{"raised": ["ValueError", "no"]}])}
    assert "ValueError: no" in recheck.judge(SOURCE, raised, SQUARE).verdicts["q2-tests"].message


def test_the_calls_of_a_hidden_test_are_found_in_the_grader_and_keep_its_switches():
    split = hidden.discover(SOURCE)
    assert not split.problems and [c.args for c in split.calls["q2-tests"]] == [[plain.to_plain(4.0)]]
    guarded = _nb([
        ({"grade_id": "q1", "solution": True, "grade": False, "locked": False},
         "def f(x):\n    ### BEGIN SOLUTION\n    return x.sum()\n    ### END SOLUTION"),
        ({"grade_id": "q1-tests", "grade": True, "locked": True, "points": 1, "solution": False},
         "import numpy as np\n### BEGIN HIDDEN TESTS\nclass _G(np.ndarray):\n    pass\n"
         "_saved = np.matmul\nnp.matmul = None\ntry:\n    _o = f(np.array([1.0, 2.0]).view(_G))\n"
         "finally:\n    np.matmul = _saved\nassert _o == 3.0\n### END HIDDEN TESTS"),
    ])
    found = hidden.discover(guarded)
    call = found.calls["q1-tests"][0]
    assert not found.problems and call.guarded == [0] and ["numpy", "matmul"] in call.blocked
    leaky = _nb([
        ({"grade_id": "q1", "solution": True, "grade": False, "locked": False},
         "def f(x):\n    return x\n### BEGIN SOLUTION\nanswer = 3\n### END SOLUTION"),
        ({"grade_id": "q1-tests", "grade": True, "locked": True, "points": 1, "solution": False},
         "### BEGIN HIDDEN TESTS\nassert f(answer) == 3\n### END HIDDEN TESTS"),
        ({"grade_id": "q2-tests", "grade": True, "locked": True, "points": 1, "solution": False},
         "### BEGIN HIDDEN TESTS\nassert f(print) is print\n"),
    ])
    problems = " | ".join(hidden.discover(leaky).problems)
    assert "passes the student's answer 'answer'" in problems
    assert "q2-tests: a BEGIN HIDDEN TESTS without its END" in problems


def test_screening_adds_the_export_cells_the_judge_reads(tmp_path):
    source = load(ROOT / "solutions" / FIRST / NAME)
    release = load(ROOT / "exercises" / FIRST / NAME)
    full = answers.student_notebook(source, release, {q.answer_id for q in answers.questions(source)})
    screened = screening.screen(json.dumps(full), source, release)
    ids = [c["id"] for c in screened.notebook["cells"]]
    tests = [
        c["metadata"]["nbgrader"]["grade_id"]
        for c in release["cells"]
        if nbgrader_cells.is_grade(c)
        and not c["metadata"]["nbgrader"].get("solution")
    ]
    assert ids[0] == "memcourse-export-def"
    for gid in tests:
        at = ids.index(next(c["id"] for c in release["cells"] if c["metadata"]["nbgrader"].get("grade_id") == gid))
        assert ids[at - 1] == f"memcourse-export-{gid}"
        assert at + 1 == len(ids) or not ids[at + 1].startswith("memcourse-")


def test_a_notebook_of_nbformat_3_is_upgraded():
    source = load(ROOT / "solutions" / FIRST / NAME)
    release = load(ROOT / "exercises" / FIRST / NAME)
    text, expected = attacks.attacked("old-format", source, release)
    assert json.loads(text)["nbformat"] == 3
    result = screening.screen(text, source, release)
    assert not result.rejected
    assert result.reasons == ["an nbformat 3 notebook: upgraded to nbformat 4"]


def test_the_feedback_copy_keeps_the_message_not_the_traceback(tmp_path):
    cell = nbformat.v4.new_code_cell("assert x == 0.25, 'q1: not the right value'")
    cell["metadata"]["nbgrader"] = {"grade": True, "solution": False, "grade_id": "q1-tests"}
    cell["outputs"] = [
        {
            "output_type": "error",
            "ename": "AssertionError",
            "evalue": "q1: not the right value",
            "traceback": ["Traceback", "----> 3 assert np.isclose(x, 0.25), 'q1: ...'"],
        }
    ]
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "n.ipynb").write_text(json.dumps(nbformat.v4.new_notebook(cells=[cell])))
    feedback.feedback_copy(tmp_path / "a", tmp_path / "b")
    out = load(tmp_path / "b" / "n.ipynb")["cells"][0]["outputs"][0]
    assert out["traceback"] == ["AssertionError: q1: not the right value"]


def test_the_feedback_keeps_what_release_feedback_reads_and_only_when_well_formed(tmp_path):
    # nbgrader's release_feedback reads timestamp.txt and submission_secret.txt beside the
    # pages: carried when they are small regular files of nbgrader's form, never otherwise
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir(), bad.mkdir()
    (good / "timestamp.txt").write_text("2026-12-01 21:34:36.333589 UTC")
    (good / "submission_secret.txt").write_text("e6d1" * 32)
    (bad / "timestamp.txt").write_text("<script>alert(1)</script>")
    (bad / "submission_secret.txt").symlink_to("/etc/shadow")
    feedback.feedback_copy(good, tmp_path / "good-fb")
    feedback.feedback_copy(bad, tmp_path / "bad-fb")
    assert (tmp_path / "good-fb" / "timestamp.txt").read_text().startswith("2026-12-01 21:34")
    assert (tmp_path / "good-fb" / "submission_secret.txt").read_text() == "e6d1" * 32
    assert not list((tmp_path / "bad-fb").iterdir())


@pytest.mark.parametrize(
    "graded, handed_in, reasons, overruled, status",
    [
        (True, True, [], False, "ok"),
        (True, True, ["a.ipynb: locked cell q1 was deleted: restored"], False, "repaired"),
        (True, True, ["a.ipynb: not handed in: scored 0"], False, "incomplete"),
        (True, True, ["a.ipynb: not valid JSON (x): scored 0"], False, "rejected"),
        (True, True, ["a.ipynb: q1-tests passed in the student's kernel ..."], True, "overruled"),
        (False, False, ["a.ipynb: not handed in: scored 0", "b.ipynb: not handed in: scored 0"],
         False, "missing"),
        (False, False, ["a.ipynb: not a notebook (no list of cells): scored 0"], False, "rejected"),
        (False, True, ["nbgrader could not grade it (x): scored 0"], False, "failed"),
    ],
)
def test_the_status_tells_missing_from_corrupt(graded, handed_in, reasons, overruled, status):
    assert outcome.status_of(graded, handed_in, reasons, overruled) == status
    assert status in outcome.STATUSES


# --------------------------------------------------------------------------- a class under attack


def fingerprint(folder, skip=()):
    """{relative path: sha256} of every file under ``folder`` except the ``skip`` tops."""
    found = {}
    for path in sorted(pathlib.Path(folder).rglob("*")):
        rel = path.relative_to(folder)
        if rel.parts[0] in skip or not path.is_file():
            continue
        found[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


GRADER_OUTPUTS = ("submitted", "autograded", "feedback", "gradebook.db", "grades.csv")


@pytest.fixture(scope="module")
def attacked_class(tmp_path_factory):
    import memkit

    root = tmp_path_factory.mktemp("attacked")
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    for where in ("solutions", "exercises"):
        (root / where / FIRST).mkdir(parents=True)
        shutil.copy(ROOT / where / FIRST / NAME, root / where / FIRST / NAME)
    made = {m.student: m for m in classroom.simulate(root, n_students=3, which=[FIRST], seed=1)}
    source = load(root / "solutions" / FIRST / NAME)
    release = load(root / "exercises" / FIRST / NAME)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    knocks = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                knocks.append(1)
                conn.close()
            except OSError:
                pass

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    expected = {}
    for kind in attacks.ATTACKS:
        text, expected[kind] = attacks.attacked(kind, source, release, port)
        (root / "submitted" / kind / FIRST).mkdir(parents=True)
        (root / "submitted" / kind / FIRST / NAME).write_text(text)
    for odd in ODD_IDS:
        shutil.copytree(root / "submitted" / "student-01", root / "submitted" / odd)
    second = {}  # the second round: links, special files, bombs, prying kernels ...
    for kind in attacks_files.SECOND_ROUND:
        second[kind] = attacks_files.place(
            kind, root / "submitted" / kind / FIRST, source, release, NAME,
            root / "submitted" / "student-01" / FIRST, cell_timeout=CELL_TIMEOUT)
    third = {}  # the third round: names, a page too big, twenty thousand files ...
    for kind in attacks_files.THIRD_ROUND:
        third[kind] = attacks_files.place(
            kind, root / "submitted" / kind / FIRST, source, release, NAME,
            root / "submitted" / "student-01" / FIRST, cell_timeout=CELL_TIMEOUT)
    # ... and a class archive that files work under classmates (graded with ZIP=)
    archives, zipped = attacks_files.class_archives(
        tmp_path_factory.mktemp("archives"), root / "submitted", FIRST, source, release, NAME)
    course_before = fingerprint(root, GRADER_OUTPUTS)
    memkit_dir = pathlib.Path(memkit.__file__).parent
    memkit_before = fingerprint(memkit_dir, ("__pycache__",))
    env = {
        **os.environ,
        "MEMCOURSE_SECRET_TOKEN": SECRET,
        "MEMCOURSE_DB_URL": f"sqlite:///{root / 'gradebook.db'}?timeout=60",
        "MEMCOURSE_SANDBOX_DISK_MB": "64",  # the disk filler meets its limit sooner
    }
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "tools.grading", FIRST, "--course-dir", str(root),
         "--cell-timeout", str(CELL_TIMEOUT), "--timeout", str(SUBMISSION_LIMIT), "--jobs", "2",
         *(arg for z in archives for arg in ("--zip", str(z)))],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=1200, env=env,
    )
    seconds = time.monotonic() - started
    survivors = alive_with(DAEMON)
    time.sleep(3)
    survivors += alive_with(DAEMON)
    stop.set()
    watcher.join()
    listener.close()
    graded = len(made) + len(attacks.ATTACKS) + len(second) + len(third) + len(zipped)
    print(f"\nattacked class ({graded} graded) in {seconds:.0f} s")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with open(root / "autograded" / "grading-report.csv", newline="") as fh:
        report = {row["student"]: row for row in csv.DictReader(fh)}
    with open(root / "grades.csv", newline="") as fh:
        grades = {row["student_id"]: row for row in csv.DictReader(fh)}
    return {
        "root": root,
        "made": made,
        "expected": expected,
        "stdout": result.stdout,
        "report": report,
        "grades": grades,
        "survivors": survivors,
        "knocks": knocks,
        "course_before": course_before,
        "course_after": fingerprint(root, GRADER_OUTPUTS),
        "memkit_before": memkit_before,
        "memkit_after": fingerprint(memkit_dir, ("__pycache__",)),
        "source": source,
        "seconds": seconds,
        "second": second,
        "third": third,
        "zipped": zipped,
        "stderr": result.stderr,
    }


def score(attacked_class, student):
    return float(attacked_class["report"][student]["score"])


def test_honest_grades_are_what_they_earned(attacked_class):
    for student, made in attacked_class["made"].items():
        row = attacked_class["report"][student]
        assert float(row["score"]) == made.expected, (student, row)
        assert float(attacked_class["grades"][student]["score"]) == made.expected
        assert row["status"] == "ok", row
    assert 0 < attacked_class["made"]["student-03"].expected < attacked_class["made"]["student-01"].expected


@pytest.mark.parametrize("kind", ["patched-numpy", "input-transformer", "swallowed-errors"])
def test_a_tampered_kernel_gains_no_point(attacked_class, kind):
    control = score(attacked_class, "wrong")
    assert control < attacked_class["made"]["student-01"].expected  # wrong answers cost points
    assert score(attacked_class, kind) <= control, attacked_class["report"][kind]
    assert float(attacked_class["grades"][kind]["score"]) <= control
    if kind != "swallowed-errors":  # (nbgrader sees that one in the kernel's reply)
        # the attack worked in the kernel: the grader's own check took the points back
        assert attacked_class["report"][kind]["status"] == "overruled"


def test_a_lying_eq_gains_no_point(attacked_class):
    assert score(attacked_class, "lying-eq") == attacked_class["expected"]["lying-eq"]


@pytest.mark.parametrize("kind", ["daemon", "tamper", "spy", "old-format"])
def test_attacks_that_answer_right_keep_what_they_earned_and_no_more(attacked_class, kind):
    row = attacked_class["report"][kind]
    assert float(row["score"]) == attacked_class["expected"][kind], row
    assert float(attacked_class["grades"][kind]["score"]) == attacked_class["expected"][kind]


def test_nothing_outside_the_private_folder_changed(attacked_class):
    assert attacked_class["course_after"] == attacked_class["course_before"]
    assert attacked_class["memkit_after"] == attacked_class["memkit_before"]
    root = attacked_class["root"]
    assert not list(root.rglob("pwned*"))
    nb = load(root / "autograded" / "tamper" / FIRST / NAME)
    printed = "".join(
        "".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", [])
    )
    # what the attack managed to write is in its own private folder (a copy, thrown away)
    line = next(line for line in printed.splitlines() if line.startswith("TAMPER "))
    own, _, written = line[len("TAMPER "):].partition(" ")
    own = ast.literal_eval(own)
    for entry in ast.literal_eval(written):
        kind, _, path = entry.partition(":")
        # its private folder, or its /tmp (a tmpfs of its own, writable as a system's /tmp:
        # nothing of it is the machine's /tmp)
        assert kind == "config" and (path.startswith(own + "/") or (
            path.startswith("/tmp/") and not os.path.exists(path))), line
    assert "gradebook.db was changed" not in attacked_class["stdout"]


def test_no_process_survives_its_grading(attacked_class):
    assert attacked_class["survivors"] == []


def test_the_spy_finds_no_solution_gradebook_secret_or_network(attacked_class):
    root = attacked_class["root"]
    nb = load(root / "autograded" / "spy" / FIRST / NAME)
    printed = "".join(
        "".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", [])
    )
    assert "SPY-REPORT []" in printed, printed[-3000:]
    assert attacked_class["knocks"] == []
    for path in list((root / "autograded").rglob("*.ipynb")) + list(
        (root / "feedback").rglob("*.html")
    ):
        assert SECRET not in path.read_text(errors="replace"), path


def test_feedback_shows_the_message_never_the_hidden_test(attacked_class):
    root = attacked_class["root"]
    secret, public = course._secret_and_public_lines(attacked_class["source"])
    hidden = {line for line in secret - public if course._meaningful(line)}
    assert hidden
    pages = list((root / "feedback").rglob("*.html"))
    assert pages
    import html as html_lib

    for page in pages:
        text = html_lib.unescape(page.read_text())
        leaked = [line for line in hidden if line in text]
        assert not leaked, (page, leaked[:2])
        assert "memcourse-export" not in text and "__memcourse_export__(" not in text
    wrong = html_lib.unescape((root / "feedback" / "wrong" / FIRST / "exit-test.html").read_text())
    assert "AssertionError: " in wrong


def test_odd_ids_are_listed_with_their_reason(attacked_class):
    from tools.common.text import csv_cell

    for odd in ODD_IDS:
        row = attacked_class["report"][csv_cell(odd)]  # '-dash: a cell is never a formula
        assert row["status"] == "skipped" and "not a usable student id" in row["reasons"], row
        assert odd in attacked_class["stdout"]
    assert "skipped" in attacked_class["stdout"].split("Submissions with a problem")[0]


def test_the_report_gives_each_submission_its_own_seconds(attacked_class):
    # each submission's own span in nbgrader's log (not nothing, not the batch's time)
    seconds = [float(r["seconds"]) for r in attacked_class["report"].values()
               if r["status"] in ("ok", "repaired", "overruled")]
    assert all(s > 0.05 for s in seconds), seconds
    assert len(set(seconds)) > 1 and sum(seconds) < 2 * attacked_class["seconds"], seconds


def test_the_gradebook_ledger_undoes_what_another_writer_did(attacked_class, tmp_path):
    import sqlite3

    db = tmp_path / "gradebook.db"
    shutil.copy(attacked_class["root"] / "gradebook.db", db)
    url = f"sqlite:///{db}"
    ledger = gradebook_guard.snapshot(url)
    before = {k: v for k, v in ledger.items()}
    con = sqlite3.connect(db)
    con.execute("update grade set manual_score = 1000")
    con.commit()
    con.close()
    problems = gradebook_guard.check_and_restore(url, ledger)
    assert problems and all("manual_score None -> 1000" in p for p in problems), problems[:3]
    assert gradebook_guard.snapshot(url) == before
    assert gradebook_guard.check_and_restore(url, ledger) == []


def test_the_check_runs_apart_with_a_time_limit():
    right = {"q1-tests": _line({"answer": 9}),
             "q2-tests": _line(calls=[{"result": plain.to_plain(16.0)}])}
    apart = recheck.judge_apart(SOURCE, right, SQUARE, timeout=60)
    assert apart.verdicts == recheck.judge(SOURCE, right, SQUARE).verdicts
    slow = _nb(
        [
            ({"grade_id": "q1", "solution": True, "grade": False, "locked": False}, "n = 1"),
            (
                {"grade_id": "q1-tests", "grade": True, "locked": True, "points": 1,
                 "solution": False},
                "while int(n) > 0:\n    pass",
            ),
        ]
    )
    started = time.monotonic()
    stuck = recheck.judge_apart(slow, {"q1-tests": _line({"n": 1})}, hidden.Split(), timeout=2)
    assert "did not finish" in stuck.problem and not stuck.verdicts
    assert time.monotonic() - started < 20


# --------------------------------------------------------------------------- every solution


def _exports_of_a_run(source, split):
    """Run a source notebook here as a student who answers right would (its solutions,
    the visible tests only), with the grader's export cells; return what they printed."""
    import contextlib
    import io

    ns = {"__name__": "__main__"}

    class Shell:
        user_ns = ns

    ns["get_ipython"] = lambda: Shell
    exec(recheck.EXPORTER, ns)
    lines = {}
    for cell in source["cells"]:
        if cell["cell_type"] != "code":
            continue
        meta = nbgrader_cells.metadata(cell)
        text = answers.answer_text(cell) if meta.get("solution") else cell_text(cell)
        if nbgrader_cells.is_test(cell):
            gid = meta["grade_id"]
            names, _ = hidden.exported_names(source, text)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(recheck.export_cell_source(names, split.calls.get(gid, [])), ns)
            lines[gid] = next(x for x in out.getvalue().splitlines()
                              if x.startswith(recheck.MARKER))[len(recheck.MARKER):]
            text = text.split("### BEGIN HIDDEN TESTS")[0]  # what the kernel runs
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(text, str(meta.get("grade_id")), "exec"), ns)
    return lines


SOURCES = sorted((ROOT / "solutions").glob("session-*/*.ipynb"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_grader_check_agrees_with_every_solution(path, monkeypatch):
    """The solutions pass every test in the grader's own check too (else honest students
    would be overruled): what a hidden test needs crosses as plain data or as the result
    of a call on the test's own inputs, made in the "kernel" under the test's switches.
    The "kernel" and the check draw the same student's numbers."""
    from memkit.variants import ENV

    source = load(path)
    split = hidden.discover_apart(source, folder=path.parent)
    assert not split.problems, split.problems
    monkeypatch.setenv(ENV, "student-07")
    lines = _exports_of_a_run(source, split)
    verdict = recheck.judge_apart(source, lines, split, timeout=120, student="student-07",
                                  folder=path.parent)
    assert not verdict.problem, verdict.problem
    assert "'student-07'" in verdict.numbers and "set by the grader" in verdict.numbers
    tests = [
        c["metadata"]["nbgrader"]["grade_id"]
        for c in source["cells"]
        if nbgrader_cells.is_grade(c)
        and not c["metadata"]["nbgrader"].get("solution")
    ]
    failing = {g: v.message for g, v in verdict.verdicts.items() if v.passed is not True}
    assert set(verdict.verdicts) == set(tests) and not failing, failing


def test_a_locked_cell_binds_its_top_level_names_only():
    text = (
        "C = sum(np.outer(u[k], r[k]) for k in range(3))\n"
        "for j in range(2):\n    pass\n"
        "def f(x):\n    y = 1\n"
        "import numpy as np\nfrom a.b import c"
    )
    assert hidden.names_bound(text) == {"C", "j", "f", "np", "c"}
    assert {"u", "r", "k", "x"} <= hidden.names_read(text + "\nf(x)")
    assert "answer" in hidden.names_read("globals()['answer']")



# --------------------------------------------------------------------------- the second round


@pytest.mark.parametrize("kind", list(attacks_files.SECOND_ROUND))
def test_each_attack_of_the_second_round_gains_nothing_and_is_named(attacked_class, kind):
    most, reason = attacked_class["second"][kind]
    row = attacked_class["report"][kind]
    limit = score(attacked_class, "wrong") if most is None else most
    assert row["status"] == "skipped" or float(row["score"]) <= limit, row
    if kind in attacked_class["grades"]:
        assert float(attacked_class["grades"][kind]["score"]) <= limit
    if reason:
        assert reason in row["reasons"], row
        assert reason in attacked_class["stdout"]


def test_honest_grades_do_not_change_with_the_second_round(attacked_class):
    for student, made in attacked_class["made"].items():
        assert float(attacked_class["report"][student]["score"]) == made.expected
        assert attacked_class["report"][student]["status"] == "ok"


def test_links_special_files_and_bombs_are_rejected_or_left_out(attacked_class):
    report = attacked_class["report"]
    for kind in ("link-notebook", "fifo-notebook", "zero-notebook", "deep-json", "bad-nbformat"):
        assert report[kind]["status"] in ("rejected", "incomplete"), report[kind]
    assert report["link-folder"]["status"] == "skipped"
    root = attacked_class["root"]
    readable = list((root / "feedback").rglob("*")) + list((root / "autograded").rglob("*"))
    secret_lines = [line for line in open("/etc/shadow", errors="replace").read().splitlines()
                    if len(line) > 20][:3] if os.access("/etc/shadow", os.R_OK) else []
    for path in readable:
        if path.is_file() and not path.is_symlink():
            text = path.read_text(errors="replace")
            assert not any(line in text for line in secret_lines), path
        assert not path.is_symlink(), path
    linked = load(root / "autograded" / "link-files" / FIRST / NAME)
    printed = "".join("".join(o.get("text", "")) for c in linked["cells"] for o in c.get("outputs", []))
    assert "LINKED []" in printed, printed[-2000:]


def test_a_kernel_that_floods_or_deepens_its_export_loses_the_points(attacked_class):
    for kind in ("deep-export", "colliding-set"):
        row = attacked_class["report"][kind]
        assert float(row["score"]) == 0.0, row
    # the class was graded at the grader's pace, not the attacker's
    assert attacked_class["seconds"] < 900


def test_the_kernel_never_sees_a_hidden_test(attacked_class):
    root = attacked_class["root"]
    nb = load(root / "autograded" / "hidden-reader" / FIRST / NAME)
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert attacks_files.SAW_HIDDEN not in printed


def test_a_slow_submission_stops_at_its_own_limit(attacked_class):
    row = attacked_class["report"]["slow-cells"]
    assert row["status"] == "failed" and float(row["score"]) == 0.0, row
    assert float(row["seconds"]) < SUBMISSION_LIMIT + 60


def test_a_kernel_cannot_fill_the_disk(attacked_class):
    nb = load(attacked_class["root"] / "autograded" / "disk-filler" / FIRST / NAME)
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    if boxes.privileged():
        assert "DISK-FULL" in printed and "No space left on device" in printed, printed[-1000:]
    row = attacked_class["report"]["disk-filler"]
    assert float(row["score"]) == attacked_class["second"]["disk-filler"][0]


def test_the_feedback_runs_no_script_and_reads_without_javascript(attacked_class):
    from playwright.sync_api import sync_playwright

    page_path = attacked_class["root"] / "feedback" / "feedback-script" / FIRST / "exit-test.html"
    chromium = pathlib.Path("/usr/bin/chromium")
    assert chromium.exists(), "Debian's chromium is missing: run `make system-deps` (as root)"
    flags = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True, args=flags)
        try:
            for javascript in (True, False):
                context = browser.new_context(java_script_enabled=javascript)
                page = context.new_page()
                page.goto(page_path.as_uri())
                page.wait_for_timeout(500)
                body = page.inner_text("body")
                assert "Score" in body and "My notes" in body
                if javascript:  # a script that ran would have set the title
                    assert attacks_files.MARK not in page.title()
                    assert page.evaluate("document.scripts.length") == 0
                context.close()
        finally:
            browser.close()


def test_a_kernel_that_claims_results_scores_by_the_graders_check_alone(attacked_class):
    """A hook that publishes a result and an error before each test cell (nbgrader would
    read the result as partial credit) gains nothing: a blank notebook scores 0, wrong
    answers no more than without it, and no claimed output is left in a test cell."""
    report = attacked_class["report"]
    assert float(report["result-hook"]["score"]) == 0.0, report["result-hook"]
    assert float(attacked_class["grades"]["result-hook"]["score"]) == 0.0
    assert float(report["result-hook-wrong"]["score"]) <= score(attacked_class, "wrong")
    for kind in ("result-hook", "result-hook-wrong"):
        path = attacked_class["root"] / "autograded" / kind / FIRST / NAME
        if kind == "result-hook" and not path.exists():
            continue  # nothing answered: not run at all
        nb = load(path)
        for cell in nb["cells"]:
            if nbgrader_cells.is_test(cell):
                kinds = [o.get("output_type") for o in cell.get("outputs", [])]
                assert "execute_result" not in kinds, (kind, cell.get("outputs"))
                assert all(o.get("ename") != "Claimed" for o in cell.get("outputs", []))


# --------------------------------------------------------------------------- the third round

FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _formula_cells(path):
    """The cells of a CSV file that a spreadsheet would run as a formula."""
    from tools.common.text import NUMBER

    with open(path, newline="") as fh:
        return [(i, cell) for i, row in enumerate(csv.reader(fh)) for cell in row
                if cell.startswith(FORMULA) and not NUMBER.fullmatch(cell)]


@pytest.mark.parametrize("kind", list(attacks_files.THIRD_ROUND))
def test_each_attack_of_the_third_round_keeps_its_points_and_is_named(attacked_class, kind):
    most, reason = attacked_class["third"][kind]
    row = attacked_class["report"][kind]
    # full answers: graded as such (a stray notebook no longer makes it "rejected")
    assert float(row["score"]) == most and row["status"] in ("ok", "repaired"), row
    assert reason in row["reasons"] and reason in attacked_class["stdout"], row


def test_no_csv_cell_is_a_formula_and_no_name_reaches_the_terminal_with_a_control(attacked_class):
    root = attacked_class["root"]
    for path in (root / "autograded" / "grading-report.csv", root / "grades.csv"):
        assert _formula_cells(path) == [], path
        assert "\x1b" not in path.read_text()
    printed = attacked_class["stdout"] + attacked_class["stderr"]
    assert "\x1b" not in printed and "\\x1b[2J\\x1b[31mCLEARED.txt" in printed
    reasons = attacked_class["report"]["formula-names"]["reasons"]
    # each name quoted inside its reason, none first
    for name in attacks_files.FORMULA_NAMES:
        assert repr(name) in reasons, name
    assert "the notebook '=HYPERLINK(" in reasons and "unknown grade id '=1+1'" in reasons
    assert not reasons.startswith(FORMULA)


def test_a_page_shows_a_bounded_notebook(attacked_class):
    from tools.common import sanitize

    root = attacked_class["root"]
    nb = load(root / "autograded" / "huge-page" / FIRST / NAME)
    note = 200  # characters of the note that says what was left out
    for cell in nb["cells"]:
        assert len(cell_text(cell)) <= max(sanitize.MAX_CELL, sanitize.MAX_CODE) + note
        outputs = cell.get("outputs", [])
        assert len(outputs) <= sanitize.MAX_OUTPUTS + 1
        for output in outputs:
            text = output.get("text") or "".join(
                v for k, v in output.get("data", {}).items() if k.startswith("text/"))
            assert len(text) <= sanitize.MAX_OUTPUT + note
    page = root / "feedback" / "huge-page" / FIRST / "exit-test.html"
    text = page.read_text()
    assert len(text) < 2_000_000 and "more characters left out" in text
    assert "more outputs left out" in text
    for student in attacked_class["made"]:  # every honest student has their feedback
        assert (root / "feedback" / student / FIRST / "exit-test.html").is_file()


def test_a_class_archive_files_each_member_under_its_own_student(attacked_class):
    report = attacked_class["report"]
    for student, (points, status, reason) in attacked_class["zipped"].items():
        row = report[student]
        assert float(row["score"]) == points, row
        if status:
            assert row["status"] == status, row
        if reason:
            assert reason in row["reasons"], row
    # the notebook filed for the classmate went nowhere: student-02 keeps its own grade
    made = attacked_class["made"]["student-02"]
    assert float(report["student-02"]["score"]) == made.expected


def test_twenty_thousand_files_make_a_few_reasons(attacked_class):
    row = attacked_class["report"]["many-files"]
    assert len(row["reasons"]) < 2_000, len(row["reasons"])
    assert f"{attacks_files.MANY_FILES - 100 - 3:,} more files left out" in row["reasons"]
    assert len(attacked_class["stdout"]) < 200_000


def test_a_kernel_may_write_its_tmp(tmp_path):
    code = ("import tempfile, os\n"
            "with tempfile.NamedTemporaryFile(dir='/tmp') as fh:\n"
            "    fh.write(b'x'); fh.flush(); print('TMP-OK', oct(os.stat('/tmp').st_mode & 0o7777))\n")
    rc, out = run_in_sandbox(tmp_path, code)
    assert rc == 0 and "TMP-OK 0o1777" in out, out


def test_each_feedback_runs_apart_within_its_limits(attacked_class, tmp_path):
    """One submission's feedback past its time or memory limit is killed and named; the
    feedback of a submission within them is written."""
    from tools.grading.outcome import Outcome
    from tools.grading.settings import Settings

    root = tmp_path / "course"
    shutil.copytree(attacked_class["root"] / "autograded" / "student-01",
                    root / "autograded" / "student-01")
    for name in ("nbgrader_config.py", "gradebook.db"):
        shutil.copy(attacked_class["root"] / name, root / name)
    settings = Settings(root=root, submitted=root / "submitted",
                        db_url=f"sqlite:///{root / 'gradebook.db'}", work=tmp_path / "work")
    one = [Outcome("student-01", FIRST)]
    page = root / "feedback" / "student-01" / FIRST / "exit-test.html"
    started = time.monotonic()
    slow = feedback.feedback(settings, one, jobs=1, seconds=0.2)
    assert time.monotonic() - started < 60
    assert slow == [f"student-01 {FIRST}: no feedback: its feedback ran longer than 0.2 s "
                    "(the limit of one submission's feedback)"] and not page.exists()
    settings.memory_mb = 64
    hungry = feedback.feedback(settings, one, jobs=1)
    assert len(hungry) == 1 and "memory limit 64 MB" in hungry[0] and not page.exists()
    settings.memory_mb = 4096
    assert feedback.feedback(settings, one, jobs=1) == [] and page.is_file()
