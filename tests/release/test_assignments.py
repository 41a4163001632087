"""The graded assignments end to end: one source, a clean release, the book's pages, the
student's check and the instructor's grading of a simulated class (nbgrader, real kernels).

The loop runs in temporary course directories: in one class run of every session, the
solution notebooks earn full marks for 20 random student ids (each draws its own
numbers), the blank release zero, a classmate's values typed in less than full marks (what
they earn for the copier's own numbers) and the reference code cannot be imported by the
kernel; on the first session a class with a half-done submission and one submission of each
kind of trouble is graded with ``python -m tools.grading`` (what ``make grade`` runs).
"""

import csv
import json
import pathlib
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import nbformat
from tools.common import nbgrader_cells
import pytest

from support import assignment_cells as nbcells
from memkit import class_list
from tools.release import assignments as course
from tools.release import layout
from tools.lab import notebook_check as checker
from tools.release import session_pages
from tools.grading import collect
from tools.grading.settings import Settings
from support.simulate import answers, classroom, shared_numbers, trouble

ROOT = pathlib.Path(__file__).resolve().parents[2]
SESSIONS = course.assignments(ROOT)
FIRST = SESSIONS[0]
SOURCES = sorted((ROOT / "solutions").glob("session-*/*.ipynb"))
CHAPTER_FILES = {
    "prologue.md",
    "ch00-how-to-use.md",
    "ch01-matrix-vector.md",
    "ch02-matrix-matrix.md",
    "ch03-outer-product-memory.md",
    "ch04-careful-writes.md",
    "ch05-mlp-memory.md",
    "ch06-soft-dictionary.md",
    "ch07-keys-values-queries.md",
    "ch08-heads-and-blocks.md",
    "ch09-two-memories.md",
    "ch10-updating-fast-memory.md",
    "ch11-in-context-learning.md",
    "ch12-unified-view.md",
    "ch13-mental-models.md",
    "ch14-editing-a-fact.md",
    "ch15-rosetta-stone.md",
    "ch16-open-questions.md",
    "ch17-exercises.md",
    "appendix-a-linear-algebra.md",
    "appendix-b-calculus-probability.md",
    "appendix-c-machine-learning.md",
    "appendix-d-derivations.md",
    "appendix-e-glossary.md",
}
ZOO_TIMEOUT = 5  # seconds per cell when grading the class with its bad submissions


def load(path):
    return json.loads(pathlib.Path(path).read_text())


def meta(cell):
    return nbgrader_cells.metadata(cell)


def text(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def copy_course(to: pathlib.Path) -> pathlib.Path:
    to.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "nbgrader_config.py", to / "nbgrader_config.py")
    shutil.copytree(ROOT / "solutions", to / "solutions")
    shutil.copytree(ROOT / "exercises", to / "exercises")
    return to


def grades_by_cell(db_url, assignment, student):
    """{notebook: {grade id: (auto score, max score)}} from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        sub = gb.find_submission(assignment, student)
        return {
            nb.name: {g.name: (g.auto_score, g.max_score) for g in nb.grades}
            for nb in sub.notebooks
        }


# --------------------------------------------------------------------------- one source


def test_nine_sessions_two_notebooks_each():
    assert SESSIONS, "no assignment under solutions/"
    assert SESSIONS == [f"session-{n}" for n in range(1, len(SESSIONS) + 1)]
    for session in SESSIONS:
        assert sorted(p.name for p in course.notebooks(ROOT, session)) == [
            "exercises.ipynb",
            "exit-test.ipynb",
        ]
    released = sorted(p for p in (ROOT / "exercises").rglob("*.ipynb")
                      if ".ipynb_checkpoints" not in p.parts)  # JupyterLab's copies of a save
    assert len(released) == 2 * len(SESSIONS)
    if len(SESSIONS) == 9:
        assert len(released) == 18


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_source_notebook_follows_the_conventions(path):
    nb = load(path)
    nbformat.validate(nbformat.from_dict(nb))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    number = int(path.parent.name.split("-")[1])
    head, setup = nb["cells"][0], nb["cells"][1]
    kind = {"exit-test": "Exit test", "exercises": "Exercises"}[path.stem]
    assert (
        head["cell_type"] == "markdown"
        and meta(head)["grade_id"] == "header"
        and meta(head)["locked"]
    )
    assert text(head).startswith(f"# Session {number} · {kind}")
    links = re.findall(r"\]\(\.\./\.\./book/([^)#]+)\)", text(head))
    assert links and set(links) <= CHAPTER_FILES, links
    assert "make check" in text(head) and "submit" in text(head).lower()
    assert (
        setup["cell_type"] == "code"
        and meta(setup)["grade_id"] == "setup"
        and meta(setup)["locked"]
    )
    gids = [meta(c)["grade_id"] for c in nb["cells"] if meta(c)]
    assert len(gids) == len(set(gids)), "grade ids must be unique"
    questions = answers.questions(nb)
    for cell in nb["cells"]:
        m = meta(cell)
        assert not cell.get("outputs"), "no outputs in a source notebook"
        if m.get("grade"):
            assert isinstance(m["points"], int) and m["points"] > 0
        if m.get("grade") and not m.get("solution"):
            assert m["locked"] and "BEGIN HIDDEN TESTS" in text(cell), m["grade_id"]
        if m.get("solution") and cell["cell_type"] == "code":
            assert "BEGIN SOLUTION" in text(cell), m["grade_id"]
    coded = [q for q in questions if q.code]
    assert all(q.test_ids for q in coded), "every answer cell is followed by its test cell"
    assert sum(1 for q in questions if not q.code) <= 1, "at most one written answer per notebook"
    if path.stem == "exercises":
        assert len(coded) >= 3


def test_the_monograph_exercises_are_in_their_sessions():
    where = {2: "session-1", 1: "session-3", 3: "session-4", 4: "session-7", 5: "session-8"}
    for number, session in where.items():
        if session not in SESSIONS:
            continue
        texts = " ".join(text(c) for p in course.notebooks(ROOT, session) for c in load(p)["cells"])
        assert re.search(rf"Exercise {number}\b", texts) and (
            "Chapter 17" in texts or "of the book" in texts
        ), (number, session)


def test_exercises_are_exactly_what_nbgrader_generates():
    assert course.release_differences(ROOT) == []


def test_no_solution_or_hidden_test_in_the_exercises():
    assert course.leaks(ROOT) == []


def test_the_leak_scan_finds_a_planted_answer(tmp_path):
    planted = copy_course(tmp_path / "course")
    source = load(planted / "solutions" / FIRST / "exit-test.ipynb")
    secret = next(
        line.strip()
        for c in source["cells"]
        if meta(c).get("solution") and c["cell_type"] == "code"
        for line in text(c).splitlines()
        if len(line.strip()) >= 12 and "SOLUTION" not in line
    )
    release_path = planted / "exercises" / FIRST / "exit-test.ipynb"
    release = load(release_path)
    answer = next(c for c in release["cells"] if meta(c).get("solution"))
    answer["source"] = text(answer) + "\n" + secret
    release["cells"][-1]["source"] = text(release["cells"][-1]) + "\n### BEGIN HIDDEN TESTS"
    release_path.write_text(json.dumps(release))
    found = course.leaks(planted)
    assert any("solution or hidden line" in f for f in found)
    assert any("BEGIN HIDDEN TESTS" in f for f in found)


def test_the_reference_code_stays_with_the_solutions(tmp_path):
    """nbgrader leaves answer_key.py out of the release (and, with the same ignore list, out
    of the autograded folders: see the round trip), and the release check refuses it under
    exercises/, by its name or by its content under another."""
    keys = sorted((ROOT / "solutions").glob(f"session-*/{layout.REFERENCE}"))
    assert len(keys) >= 4
    assert layout.REFERENCE in (ROOT / "nbgrader_config.py").read_text()
    assert not list((ROOT / "exercises").rglob(layout.REFERENCE))
    planted = copy_course(tmp_path / "course")
    shutil.copy(keys[0], planted / "exercises" / keys[0].parent.name / layout.REFERENCE)
    shutil.copy(keys[-1], planted / "exercises" / "session-1" / "helpers.py")
    found = course.leaks(planted)
    assert any(f"{keys[0].parent.name}/{layout.REFERENCE}: the solutions' reference code" in f for f in found)
    assert any("session-1/helpers.py: the solutions' reference code" in f for f in found)
    fresh = course.generate(planted, tmp_path / "fresh")
    assert not list(fresh.rglob(layout.REFERENCE)) and not list(fresh.rglob("*.py"))


def test_session_pages_show_the_release_without_answers():
    assert session_pages.differences(ROOT) == []
    secrets = set()
    for path in SOURCES:
        secret, public = course._secret_and_public_lines(load(path))
        secrets |= {line for line in secret - public if course._meaningful(line)}
    for session in SESSIONS:
        page = (ROOT / "book" / f"{session}.md").read_text()
        number = session.split("-")[1]
        assert page.startswith("---\njupytext:") and "format_name: myst" in page
        assert f"({session})=\n# Session {number} · Exit test and exercises" in page
        assert "make lab" in page and "make check" in page and "nbgrader submit" in page
        assert "## Exit test" in page and "## Exercises" in page
        assert "```{code-cell}" not in page, "the questions are shown, not executed"
        for marker in course.MARKERS:
            assert marker not in page
        leaked = [line for line in page.splitlines() if line.strip() in secrets]
        assert not leaked, leaked[:3]


# --------------------------------------------------------------------------- the round trips


RANDOM_IDS = nbcells.RANDOM_IDS  # 20 random student ids: each draws numbers of its own
COPIER, SNOOPER, BLANK = "copier", "snooper", "blank-student"
SNOOPED = "session-5"  # the session whose answer cell tries to import the reference code


def points_of(source: dict, results: dict) -> float:
    """The autograded points of the test cells that passed in an in-process run."""
    return sum(float(meta(c)["points"]) for c in source["cells"]
               if meta(c).get("grade") and not meta(c).get("solution") and results.get(meta(c)["grade_id"]) is None
               and meta(c)["grade_id"] in results)


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    """One class run of every session (``python -m tools.grading``, what ``make grade`` runs).

    The 20 random ids, on the course's class list (seats 1 to 20, ``memkit.class_list``), hand
    in the solutions, spread over the sessions (2 or 3 ids each); the
    blank release is handed in for every session, and so are, under the id ``copier``, the
    exit test's values of the first id of each session typed in (``simulate.shared_numbers``); ``snooper``'s
    answer tries to import the solutions' reference code. Each one's expected score is known
    beforehand: full marks, zero, what the same values earn in an in-process run of the hidden
    tests for the copier's own numbers, full marks but the snooped question.
    """
    root = copy_course(tmp_path_factory.mktemp("round-trip"))
    assert class_list.add(root / class_list.NAME, RANDOM_IDS) == nbcells.SEATS
    expected, graded_ids = {}, {session: [] for session in SESSIONS}
    for i, student in enumerate(RANDOM_IDS):
        graded_ids[SESSIONS[i % len(SESSIONS)]].append(student)

    def hand_in(student, session, name, nb, points):
        folder = root / "submitted" / student / session
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(nb, indent=1) + "\n")
        expected[(student, session)] = expected.get((student, session), 0.0) + points

    for session in SESSIONS:
        for path in course.notebooks(ROOT, session):
            source, release = load(path), load(ROOT / "exercises" / session / path.name)
            every = {q.answer_id for q in answers.questions(source)}
            full = answers.student_notebook(source, release, every)
            for student in graded_ids[session]:
                hand_in(student, session, path.name, full, answers.autograded_points(source))
            hand_in(BLANK, session, path.name, release, 0.0)
            if path.stem == "exit-test":  # what a chat shares (the exercises' own:
                # test_variants_questions.py; two of them hold arrays of megabytes typed in)
                typed = nbcells.solved(path, graded_ids[session][0]).typed
                results = nbcells.run(path, answers=typed, student=COPIER)
                hand_in(COPIER, session, path.name, shared_numbers.copied_notebook(release, typed),
                        points_of(source, results))
            if session == SNOOPED:
                first = answers.code_questions(source)[0]
                snooped = json.loads(json.dumps(full))
                cell = snooped["cells"][answers.index_of(snooped, first.answer_id)]
                cell["source"] = "import answer_key\n" + text(cell)
                hand_in(SNOOPER, session, path.name, snooped,
                        answers.earned_points(source, every - {first.answer_id}, release))
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "tools.grading", *SESSIONS, "--course-dir", str(root),
         "--cell-timeout", "60", "--jobs", "2"],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=3600,
    )
    seconds = time.monotonic() - started
    print(f"\nround trips: {len(expected)} submissions of {len(SESSIONS)} sessions in {seconds:.0f} s")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"class list: {len(RANDOM_IDS)} of {len(expected)} submission(s) by students with a seat" \
        in result.stdout, result.stdout[-2000:]
    with open(root / "autograded" / "grading-report.csv") as fh:
        report = {(row["student"], row["assignment"]): row for row in csv.DictReader(fh)}
    return {
        "root": root,
        "db_url": f"sqlite:///{root / 'gradebook.db'}",
        "expected": expected,
        "graded_ids": graded_ids,
        "report": report,
    }


@pytest.mark.parametrize("session", SESSIONS)
def test_solutions_earn_full_marks_for_the_random_ids(round_trip, session):
    """The solutions compute each student's own answers, and grade to full marks."""
    assert len(round_trip["graded_ids"][session]) >= 2
    for student in round_trip["graded_ids"][session]:
        row = round_trip["report"][(student, session)]
        assert row["status"] == "ok", row
        auto = 0.0
        for name, grades in grades_by_cell(round_trip["db_url"], session, student).items():
            for grade_id, (score, max_score) in grades.items():
                if grade_id.endswith("-written") or score is None:
                    continue  # a written answer waits for a person
                assert score == max_score, (student, name, grade_id)
                auto += score
        assert auto == round_trip["expected"][(student, session)] > 0


@pytest.mark.parametrize("session", SESSIONS)
def test_the_blank_release_earns_zero_without_failing(round_trip, session):
    row = round_trip["report"][(BLANK, session)]
    assert row["status"] == "ok", row
    assert float(row["score"]) == 0
    for name, grades in grades_by_cell(round_trip["db_url"], session, BLANK).items():
        for grade_id, (score, _) in grades.items():
            assert score == 0, (name, grade_id)


@pytest.mark.parametrize("session", SESSIONS)
def test_a_classmates_values_lose_the_questions_drawn_for_each_student(round_trip, session):
    """The values of the first id of the session, handed in by another student, earn what
    they earn for that student's own numbers (the in-process run of the hidden tests says so
    beforehand): less than full marks."""
    row = round_trip["report"][(COPIER, session)]
    full = sum(answers.autograded_points(load(p)) for p in course.notebooks(ROOT, session))
    assert float(row["score"]) == round_trip["expected"][(COPIER, session)] < full, row


def test_the_kernel_cannot_import_the_reference_code(round_trip):
    """nbgrader copies the source folder's files into the autograded one, whose files reach
    the kernel: the reference code is not among them (CourseDirectory.ignore)."""
    row = round_trip["report"][(SNOOPER, SNOOPED)]
    assert float(row["score"]) == round_trip["expected"][(SNOOPER, SNOOPED)], row
    autograded = round_trip["root"] / "autograded"
    assert list((round_trip["root"] / "solutions").glob(f"session-*/{layout.REFERENCE}"))
    assert not list(autograded.rglob(layout.REFERENCE)) and not list((round_trip["root"] / "feedback").rglob("*.py"))


def test_the_report_and_the_feedback_show_each_students_numbers(round_trip):
    """The report's numbers column and the feedback's set-up cell give the numbers the
    grader drew for the id it knows, with the seat the class list gives it."""
    root = round_trip["root"]
    for session, students in round_trip["graded_ids"].items():
        for student in students + [COPIER]:
            line = round_trip["report"][(student, session)]["numbers"]
            for path in course.notebooks(ROOT, session):
                if not (root / "submitted" / student / session / path.name).exists():
                    continue  # the copier hands in the exit test only
                numbers = nbcells.solved(path, student).numbers
                assert f"{path.name}: {numbers.summary()}" in line, (student, session)
                page = (root / "feedback" / student / session / f"{path.stem}.html").read_text()
                page = page.replace("&#39;", "'")
                seat = f"; seat {nbcells.SEATS[student]} on the class list" if student in nbcells.SEATS else ""
                assert f"Your numbers (student id '{student}', set by the grader{seat})" in page, (
                    student, path.name)
                assert numbers.seat == nbcells.SEATS.get(student)


# Run after an answer cell: every name the answer defined gets a wrong value of the same
# kind (numbers shifted, another letter, a function whose results are shifted).
PERTURB = """
import numpy as _np


def _shift(_v):
    if _v is None or isinstance(_v, type):
        return _v
    if isinstance(_v, (bool, _np.bool_)):
        return not _v
    if isinstance(_v, str):
        return "c" if _v.strip().lower() in ("a", "b") else "a"
    if isinstance(_v, (int, _np.integer)):
        return int(_v) + 7
    if isinstance(_v, (float, _np.floating)):
        return float(_v) * 1.1 + 0.37
    if isinstance(_v, _np.ndarray) and _v.dtype.kind in "biuf":
        return _v * 1.1 + 0.37
    if isinstance(_v, tuple) and hasattr(_v, "_fields"):
        return type(_v)(*(_shift(_x) for _x in _v))
    if isinstance(_v, (list, tuple, set, frozenset)):
        return type(_v)(_shift(_x) for _x in _v)
    if isinstance(_v, dict):
        return {_k: _shift(_x) for _k, _x in _v.items()}
    if callable(_v) and getattr(_v, "__module__", None) == "__main__":
        def _wrapped(*args, _f=_v, **kwargs):
            return _shift(_f(*args, **kwargs))
        return _wrapped
    return _v


for _name in sorted(set(globals()) - _before):
    if not _name.startswith("_"):
        try:
            globals()[_name] = _shift(globals()[_name])
        except Exception:
            globals()[_name] = None
"""


@pytest.fixture(scope="module")
def inverted(tmp_path_factory):
    """``nbgrader validate --invert`` on two versions of every notebook, the hidden tests put back.

    ``blank``: the release as is, each test cell split in two graded cells (its visible and
    its hidden part), so that each part is seen to fail on its own when nothing is answered.
    ``wrong``: every answer is the solution with its values made wrong but of the same kind
    and shape (``PERTURB``), so that a test cell that still passes checks no value.
    """
    folder = tmp_path_factory.mktemp("invert")
    paths = []
    for source_path in SOURCES:
        session = source_path.parent.name
        source = load(source_path)
        release = load(ROOT / "exercises" / session / source_path.name)
        full = {meta(c).get("grade_id"): text(c) for c in source["cells"]}
        for variant in ("blank", "wrong"):
            cells = []
            for cell in release["cells"]:
                m = meta(cell)
                if m.get("grade") and not m.get("solution") and cell["cell_type"] == "code":
                    visible, hidden = full[m["grade_id"]].split("### BEGIN HIDDEN TESTS")
                    hidden = hidden.split("### END HIDDEN TESTS")[0]
                    parts = (
                        ((visible, ""), (hidden, "-hidden"))
                        if variant == "blank"
                        else ((full[m["grade_id"]], ""),)
                    )
                    for part, suffix in parts:
                        twin = json.loads(json.dumps(cell))
                        twin["source"] = part.strip("\n") or "pass"
                        twin["id"] = f"{cell['id']}{suffix}"
                        twin["metadata"]["nbgrader"]["grade_id"] = m["grade_id"] + suffix
                        cells.append(twin)
                elif variant == "wrong" and m.get("solution") and cell["cell_type"] == "code":
                    answer = json.loads(json.dumps(cell))
                    answer["source"] = answers.answer_text(
                        next(c for c in source["cells"] if meta(c).get("grade_id") == m["grade_id"])
                    )
                    cells.append(
                        nbformat.v4.new_code_cell("_before = set(globals()) | {'_before'}")
                    )
                    cells.append(answer)
                    cells.append(nbformat.v4.new_code_cell(PERTURB))
                else:
                    cells.append(cell)
            nb = dict(release, cells=cells)
            target = folder / variant / session / source_path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(nb))
            paths.append(target)
            key = source_path.parent / layout.REFERENCE  # what the hidden tests import
            if key.exists():
                shutil.copy(key, target.parent / layout.REFERENCE)
    shutil.copy(ROOT / "nbgrader_config.py", folder / "nbgrader_config.py")

    def validate(part):
        # one process for several notebooks; its log (stderr) and verdicts (stdout) in order
        return subprocess.run(
            course.nbgrader_command()
            + ["validate", "--invert", "--Validator.ignore_checksums=True"]
            + [str(p) for p in part],
            check=False,
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=course.tool_env({"PYTHONUNBUFFERED": "1", "MEMCOURSE_STUDENT_ID": nbcells.STUDENT}),
        ).stdout

    with ThreadPoolExecutor(2) as pool:
        outputs = list(pool.map(validate, [paths[0::2], paths[1::2]]))
    found = {}
    for out in outputs:
        for block in re.split(r"\[ValidateApp \| INFO\] Validating ", out)[1:]:
            name = block.split("'")[1]
            found[pathlib.Path(name).relative_to(folder).as_posix()] = block
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_visible_and_hidden_test_fails_on_the_blank_release(inverted, path):
    block = inverted[f"blank/{path.parent.name}/{path.name}"]
    assert "Success! The notebook does not pass any tests." in block, block[-2000:]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_test_fails_on_wrong_values_of_the_right_kind(inverted, path):
    block = inverted[f"wrong/{path.parent.name}/{path.name}"]
    assert "Success! The notebook does not pass any tests." in block, block[-3000:]


# --------------------------------------------------------------------------- a class with trouble


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The first session graded for a class of 12.

    Full, blank and half-done submissions, and one of each kind of trouble.
    """
    root = copy_course(tmp_path_factory.mktemp("class"))
    made = classroom.simulate(root, n_students=3 + len(trouble.ZOO), which=[FIRST], zoo=True, seed=3)
    started = time.monotonic()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.grading",
            FIRST,
            "--course-dir",
            str(root),
            "--cell-timeout",
            str(ZOO_TIMEOUT),
            "--jobs",
            "2",
        ],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    seconds = time.monotonic() - started
    print(f"\nclass of {len(made)} graded in {seconds:.0f} s")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "class list: none" in result.stdout  # no class list: each their own order
    with open(root / "autograded" / "grading-report.csv") as fh:
        report = {row["student"]: row for row in csv.DictReader(fh)}
    with open(root / "grades.csv") as fh:
        grades = {row["student_id"]: row for row in csv.DictReader(fh)}
    return {
        "root": root,
        "made": {m.student: m for m in made},
        "stdout": result.stdout,
        "report": report,
        "grades": grades,
    }


CLASS_KINDS = ["full", "blank", "partial"] + list(trouble.ZOO)


@pytest.mark.parametrize("kind", CLASS_KINDS)
def test_each_submission_gets_the_score_of_what_it_did(graded_class, kind):
    student = next(s for s, m in graded_class["made"].items() if m.kind == kind)
    expected = graded_class["made"][student]
    row = graded_class["report"][student]
    assert float(row["score"]) == expected.expected, (kind, row)
    assert float(graded_class["grades"][student]["score"]) == expected.expected
    if kind == "partial":
        assert 0 < expected.expected < expected.max_score
    if kind in ("full", "blank", "partial"):
        assert row["status"] == "ok" and row["reasons"] == ""


REASONS = {
    "invalid-json": ("rejected", "not valid JSON"),
    "loop-ignoring-sigint": ("repaired", "could not be interrupted: replaced by an error"),
    "kernel-exit": ("repaired", "it stopped the Python kernel: replaced by an error"),
    "endless-print": ("repaired", "printed without end: output cut"),
    "deleted-test": ("repaired", "was deleted: restored"),
    "deleted-setup": ("repaired", "locked cell setup was deleted: restored"),
    "duplicated-test": ("repaired", "the copies were removed"),
    "retyped-test": ("repaired", "turned into a markdown cell: restored"),
    "edited-test": ("repaired", "was edited: restored"),
}


@pytest.mark.parametrize("kind", list(trouble.ZOO))
def test_each_bad_submission_is_graded_with_its_reason(graded_class, kind):
    student = next(s for s, m in graded_class["made"].items() if m.kind == kind)
    row = graded_class["report"][student]
    status, reason = REASONS[kind]
    assert row["status"] == status and reason in row["reasons"], row
    assert f"{student}" in graded_class["stdout"] and reason in graded_class["stdout"]


def test_feedback_grades_and_summary_are_produced(graded_class):
    root, made = graded_class["root"], graded_class["made"]
    assert set(graded_class["grades"]) == set(made)
    for student, m in made.items():
        html = root / "feedback" / student / FIRST
        if m.kind != "invalid-json":
            assert (html / "exercises.html").exists() and (html / "exit-test.html").exists(), (
                student
            )
            for page in html.glob("*.html"):
                assert "HIDDEN TESTS" not in page.read_text(), f"{page}: the hidden tests are shown"
            # what nbgrader's release_feedback reads beside the pages
            assert (html / "timestamp.txt").is_file(), student
    out = graded_class["stdout"]
    assert re.search(rf"^{FIRST}\s+{len(made)}\s", out, re.MULTILINE), out[-2000:]
    assert "grades:" in out and "report:" in out
    assert re.search(rf"\[\s*{len(made)}/{len(made)}\]", out), "a progress line per submission"


def test_a_class_zip_is_collected_as_nbgrader_zip_collect_expects(tmp_path):
    root = copy_course(tmp_path / "course")
    staging = tmp_path / "class"
    classroom.simulate(root, n_students=2, which=[FIRST], out=staging)
    archive = classroom.zip_class(staging, tmp_path / "class.zip")
    settings = Settings(root=root, submitted=root / "submitted", db_url="sqlite://")
    collect.collect_zips(settings, [archive], [FIRST])
    for student in ["student-01", "student-02"]:
        for name in ["exercises.ipynb", "exit-test.ipynb"]:
            got = root / "submitted" / student / FIRST / name
            assert got.read_text() == (staging / student / FIRST / name).read_text()


# --------------------------------------------------------------------------- the student's check


def test_make_check_says_format_ok_failed_or_not_attempted(tmp_path):
    source = load(ROOT / "solutions" / FIRST / "exit-test.ipynb")
    release = load(ROOT / "exercises" / FIRST / "exit-test.ipynb")
    qs = [q for q in answers.questions(source) if q.code]
    nb = answers.student_notebook(source, release, {qs[0].answer_id})
    cells = {meta(c).get("grade_id"): c for c in nb["cells"]}
    cells[qs[1].answer_id]["source"] = "pass"
    cells[qs[2].answer_id]["source"] = "raise ValueError('oops')"
    path = tmp_path / "exit-test.ipynb"
    path.write_text(json.dumps(nb))
    found, warnings = checker.check(path)
    status = {q.answer_id: q for q in found}
    first = status[qs[0].answer_id]
    # what the visible test printed, without its "q1: format ok" (the status says that)
    assert first.status == "format ok" and "graded later" in first.message
    assert not first.message.startswith(("q1", ":")), first.message
    assert (
        status[qs[1].answer_id].status == "failed"
        and "NameError" in status[qs[1].answer_id].message
    )
    assert (
        status[qs[2].answer_id].status == "failed"
        and "ValueError: oops" in status[qs[2].answer_id].message
    )
    for q in qs[3:]:
        assert status[q.answer_id].status == "not attempted"
    assert warnings == []
    printed = checker.report(path, found, warnings)
    assert "format ok" in printed and "not attempted" in printed and "1 format ok, 2 failed" in printed
    assert "passed" not in printed, "make check must not read as a verdict on the values"


def test_make_check_never_calls_a_wrong_value_passed(tmp_path, monkeypatch):
    """A common slip fails the visible test with a hint, and any other value of the right
    form is "format ok", its value graded later, never "passed"."""
    from memkit.variants import ENV

    source = load(ROOT / "solutions" / "session-5" / "exit-test.ipynb")
    release = load(ROOT / "exercises" / "session-5" / "exit-test.ipynb")
    nb = answers.student_notebook(source, release, set())
    cells = {meta(c).get("grade_id"): c for c in nb["cells"]}
    # the ratio of two weights taken as linear in the similarity gap, for this student's numbers
    monkeypatch.setenv(ENV, nbcells.STUDENT)
    drawn = nbcells.solved(ROOT / "solutions" / "session-5" / "exit-test.ipynb", nbcells.STUDENT).values
    (s1, s2, s3), factor = drawn["s3"], drawn["factor3"]
    cells["q3"]["source"] = f"ratio_13 = {factor * (s1 - s3) / (s1 - s2)!r}"
    cells["q7"]["source"] = "bandwidth, ratio_dist = 0.5, 3.0"  # wrong values of the right form
    path = tmp_path / "exit-test.ipynb"
    path.write_text(json.dumps(nb))
    found, _ = checker.check(path)
    status = {q.answer_id: q for q in found}
    assert status["q3"].status == "failed" and "exponential" in status["q3"].message
    assert status["q7"].status == "format ok" and "graded later" in status["q7"].message
    assert "passed" not in checker.report(path, found, [])
