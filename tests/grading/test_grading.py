"""The grader's parts that need no kernel: screening, repairs, process control, configuration."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import nbformat
from tools.common import nbgrader_cells
import pytest

from tools.release import assignments as course
from tools.grading import recheck
from tools.grading import collect, preprocessors, process_limits, repair, screening
from tools.grading.settings import Settings
from support.simulate import answers, trouble

ROOT = pathlib.Path(__file__).resolve().parents[2]
SESSIONS = course.assignments(ROOT)


def load(path):
    return json.loads(pathlib.Path(path).read_text())


@pytest.fixture(scope="module")
def notebook_pair():
    """The exit test of the first session: its source and its release."""
    name = "exit-test.ipynb"
    first = SESSIONS[0]
    return load(ROOT / "solutions" / first / name), load(ROOT / "exercises" / first / name)


def ids(nb):
    return [nbgrader_cells.grade_id(c) for c in nb["cells"]]


def without_grader_cells(nb):
    """The notebook without the cells the grader adds (the export cells of tools.grading.recheck)."""
    return {**nb, "cells": [c for c in nb["cells"] if not recheck.grader_cell(c)]}


def full_answers(source, release):
    return answers.student_notebook(source, release, {q.answer_id for q in answers.questions(source)})


def test_a_good_notebook_passes_screening_unchanged(notebook_pair):
    source, release = notebook_pair
    full = full_answers(source, release)
    result = screening.screen(json.dumps(full), source, release)
    assert not result.rejected and result.reasons == []
    nbformat.validate(nbformat.from_dict(result.notebook))
    graded = without_grader_cells(result.notebook)
    assert ids(graded) == ids(release)
    answer_ids = {q.answer_id for q in answers.questions(source)}
    for cell, want in zip(graded["cells"], full["cells"]):
        if ids({"cells": [cell]})[0] in answer_ids:
            assert cell["source"] == want["source"]


def test_the_kernel_gets_no_hidden_test_and_no_expected_value(notebook_pair):
    from tools.grading import hidden

    source, release = notebook_pair
    split = hidden.discover_apart(source)
    result = screening.screen(json.dumps(release), source, release, split)
    kernel = "".join(c["source"] for c in result.notebook["cells"])
    assert "BEGIN HIDDEN TESTS" not in kernel
    secret, public = course._secret_and_public_lines(source)
    hidden_lines = {line for line in secret - public if course._meaningful(line)}
    assert hidden_lines and not [line for line in hidden_lines if line in kernel]
    # what nbgrader puts back from the gradebook is cut at the marker before the kernel runs
    assert json.loads(preprocessors.sanitize_preprocessors())[4].endswith("VisibleTests")
    assert issubclass(preprocessors.VisibleTests, __import__("nbgrader").preprocessors.ClearHiddenTests)
    assert json.loads(preprocessors.sanitize_preprocessors())[3].endswith("OverwriteCells")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("{ not json", "not valid JSON"),
        ("[1, 2, 3]", "not a notebook"),
        ('{"cells": 3}', "not a notebook"),
    ],
)
def test_what_is_not_a_notebook_is_rejected_with_a_reason(notebook_pair, text, reason):
    source, release = notebook_pair
    result = screening.screen(text, source, release)
    assert result.rejected and result.notebook is None
    assert reason in result.reasons[0] and "scored 0" in result.reasons[0]


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("deleted-test", "was deleted: restored"),
        ("deleted-setup", "setup was deleted: restored"),
        ("duplicated-test", "was copied (2 copies): the copies were removed"),
        ("retyped-test", "turned into a markdown cell: restored"),
        ("edited-test", "was edited: restored"),
    ],
)
def test_tampered_locked_cells_are_restored_as_released(notebook_pair, kind, reason):
    source, release = notebook_pair
    text, _ = trouble.troubled(kind, source, release)
    result = screening.screen(text, source, release)
    assert not result.rejected
    assert any(reason in r for r in result.reasons), result.reasons
    nb = result.notebook
    nbformat.validate(nbformat.from_dict(nb))
    graded = [g for g in ids(nb) if g]
    assert graded == ids(release) and len(graded) == len(set(graded))  # no duplicated grade id
    released = {c["metadata"]["nbgrader"]["grade_id"]: c for c in release["cells"]}
    for cell in nb["cells"]:
        gid = nbgrader_cells.grade_id(cell)
        if gid and released[gid]["metadata"]["nbgrader"].get("locked"):
            assert cell["cell_type"] == released[gid]["cell_type"]
            assert cell["source"] == "".join(released[gid]["source"])


def test_added_cells_stay_after_the_cell_they_followed(notebook_pair):
    source, release = notebook_pair
    nb = full_answers(source, release)
    first_answer = answers.questions(source)[0].answer_id
    at = ids(nb).index(first_answer)
    nb["cells"].insert(at + 1, nbformat.v4.new_code_cell("helper = 41 + 1"))
    nb["cells"].insert(0, nbformat.v4.new_markdown_cell("my notes"))
    result = screening.screen(json.dumps(nb), source, release)
    graded = without_grader_cells(result.notebook)
    sources = [c["source"] for c in graded["cells"]]
    assert sources[0] == "my notes"
    assert sources[ids(graded).index(first_answer) + 1] == "helper = 41 + 1"
    assert result.reasons == []


def test_a_copied_answer_cell_grades_the_last_copy(notebook_pair):
    source, release = notebook_pair
    nb = full_answers(source, release)
    first_answer = answers.questions(source)[0].answer_id
    at = ids(nb).index(first_answer)
    early = json.loads(json.dumps(nb["cells"][at]))
    early["source"] = "first_try = 0"
    nb["cells"].insert(at, early)
    result = screening.screen(json.dumps(nb), source, release)
    assert any("appears 2 times: the last one is graded" in r for r in result.reasons)
    out = result.notebook["cells"]
    graded_at = ids(result.notebook).index(first_answer)
    assert out[graded_at]["source"] == nb["cells"][at + 1]["source"]
    assert out[graded_at - 1]["source"] == "first_try = 0"  # kept as a plain cell, before it
    assert ids(result.notebook).count(first_answer) == 1


def test_a_deleted_answer_cell_comes_back_as_its_stub(notebook_pair):
    source, release = notebook_pair
    nb = full_answers(source, release)
    first_answer = answers.questions(source)[0].answer_id
    del nb["cells"][ids(nb).index(first_answer)]
    result = screening.screen(json.dumps(nb), source, release)
    assert any(f"answer cell {first_answer} was deleted" in r for r in result.reasons)
    restored = result.notebook["cells"][ids(result.notebook).index(first_answer)]
    assert "NotImplementedError" in restored["source"]


def test_unknown_grade_ids_lose_their_nbgrader_metadata(notebook_pair):
    source, release = notebook_pair
    nb = full_answers(source, release)
    cell = nbformat.v4.new_code_cell("x = 1")
    cell["metadata"]["nbgrader"] = {
        "grade_id": "made-up",
        "grade": True,
        "points": 100,
        "solution": False,
        "locked": True,
        "schema_version": 3,
    }
    nb["cells"].append(cell)
    result = screening.screen(json.dumps(nb), source, release)
    assert any("unknown grade id 'made-up'" in r for r in result.reasons)
    assert result.notebook["cells"][-1]["metadata"] == {}


def test_neutralise_replaces_the_answer_before_a_locked_cell_at_fault(notebook_pair):
    source, release = notebook_pair
    result = screening.screen(json.dumps(full_answers(source, release)), source, release)
    first = answers.questions(source)[0]
    test_at = ids(result.notebook).index(first.test_ids[0])
    assert repair.neutralise(result, test_at, "it stopped the Python kernel") == first.answer_id
    answer = result.notebook["cells"][ids(result.notebook).index(first.answer_id)]
    assert answer["source"].startswith("raise RuntimeError(")
    # the set-up cell has no student cell before it: nothing to replace
    assert repair.neutralise(result, ids(result.notebook).index("setup"), "x") is None


def test_the_simulated_zoo_scores_add_up(notebook_pair):
    source, release = notebook_pair
    total = answers.autograded_points(source)
    assert total > 0
    first, second = [q for q in answers.questions(source) if q.code and q.test_ids][:2]
    assert trouble.troubled("kernel-exit", source, release)[1] == total - second.points
    assert trouble.troubled("loop-ignoring-sigint", source, release)[1] == total - first.points
    assert trouble.troubled("duplicated-test", source, release)[1] == total
    assert trouble.troubled("invalid-json", source, release)[1] == 0


def test_run_limited_kills_a_process_tree_that_ignores_signals(tmp_path):
    # a parent ignoring SIGTERM/SIGINT with a child in its own session (as a kernel is)
    script = tmp_path / "stubborn.py"
    script.write_text(
        textwrap.dedent("""
        import signal, subprocess, sys, time
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 start_new_session=True)
        print(child.pid, flush=True)
        while True:
            time.sleep(1)
    """)
    )
    log = tmp_path / "log.txt"
    started = time.monotonic()
    rc = process_limits.run_limited([sys.executable, str(script)], tmp_path, 3, log)
    assert rc is None and time.monotonic() - started < 30
    child = int(log.read_text().split()[0])
    time.sleep(0.5)
    assert not alive(child)


def alive(pid):
    """True if the process runs (a zombie, killed but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    stat = pathlib.Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def test_run_limited_returns_the_exit_code(tmp_path):
    assert (
        process_limits.run_limited(
            [sys.executable, "-c", "raise SystemExit(3)"], tmp_path, 60, tmp_path / "log"
        )
        == 3
    )


def test_memory_limit_turns_a_memory_hog_into_an_error(tmp_path):
    rc = process_limits.run_limited(
        [sys.executable, "-c", "b = bytearray(3 * 1024**3)"],
        tmp_path,
        60,
        tmp_path / "log",
        memory_mb=1024,
    )
    assert rc != 0 and "MemoryError" in (tmp_path / "log").read_text()


def test_configuration_is_the_course_layout(monkeypatch):
    from traitlets.config.loader import PyFileConfigLoader

    def load_config():
        return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()

    monkeypatch.delenv("MEMCOURSE_DB_URL", raising=False)
    monkeypatch.delenv("MEMCOURSE_CELL_TIMEOUT", raising=False)
    c = load_config()
    assert c.CourseDirectory.source_directory == "solutions"
    assert c.CourseDirectory.release_directory == "exercises"
    assert c.OverwriteCells.add_missing_cells is True
    assert c.Execute.timeout == 30 and c.LimitOutput.max_lines > 0
    assert "db_url" not in c.CourseDirectory  # nbgrader's default: sqlite gradebook.db in the root
    monkeypatch.setenv("MEMCOURSE_DB_URL", "postgresql+psycopg2://grader@db/memcourse")
    monkeypatch.setenv("MEMCOURSE_CELL_TIMEOUT", "12")
    c = load_config()
    assert c.CourseDirectory.db_url == "postgresql+psycopg2://grader@db/memcourse"
    assert c.Execute.timeout == 12


def test_gitignore_keeps_the_instructor_places_out_of_git():
    ignored = (ROOT / ".gitignore").read_text().split()
    for place in ["submitted/", "autograded/", "feedback/", "gradebook.db", "grades.csv"]:
        assert place in ignored


def test_makefile_has_the_assignment_verbs():
    for target in ["check", "assignments", "grade"]:
        result = subprocess.run(
            ["make", "-n", target], check=False, cwd=ROOT, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr
    dry = subprocess.run(
        ["make", "-n", "grade", "ASSIGNMENTS=session-3", "TIMEOUT=7", "ZIP=class.zip"],
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    assert (
        "tools.grading session-3" in dry and "--cell-timeout 7" in dry and "--zip class.zip" in dry
    )
    dry = subprocess.run(
        ["make", "-n", "check", "NB=exercises/session-3/exit-test.ipynb"],
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    assert "tools.lab.notebook_check exercises/session-3/exit-test.ipynb" in dry


def test_submissions_are_found_and_odd_folders_left_out(tmp_path):
    for folder in ["alice/session-1", "bob/session-2", "bad name/session-1", ".hidden/session-1"]:
        (tmp_path / folder).mkdir(parents=True)
    settings = Settings(root=ROOT, submitted=tmp_path, db_url="sqlite://")
    found, skipped = collect.submissions(settings, ["session-1", "session-2"])
    assert found == [("session-1", "alice"), ("session-2", "bob")]
    assert skipped == [
        collect.Skipped(
            ".hidden", "session-1",
            "the folder name '.hidden' is not a usable student id (it starts with a dot (a hidden "
            "folder)); rename the folder to the student's id (letters, digits, . _ @ + -) and "
            "grade again",
        ),
        collect.Skipped(
            "bad name", "session-1",
            "the folder name 'bad name' is not a usable student id (it holds a space); rename the "
            "folder to the student's id (letters, digits, . _ @ + -) and grade again",
        ),
    ]
    assert str(skipped[1]).startswith("bad name/session-1: not graded: the folder name 'bad name'")


# --------------------------------------------------------------------------- what is shown

ATTACKS_IN_HTML = [
    "<script>document.title = 'PWNED'</script>",
    "<img src=x onerror=\"document.title = 'PWNED'\">",
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "<object data=\"x.swf\"></object><embed src=\"x.swf\">",
    "<form action=\"http://example.org/\"><input name=a><button>go</button></form>",
    "<a href=\"javascript:alert(1)\">click</a>",
    "<svg onload=\"alert(1)\"><circle r=\"1\"/></svg>",
    "<a href=\"data:text/html,<script>alert(1)</script>\">data</a>",
    "<div style=\"position:fixed;top:0\" onclick=\"alert(1)\">overlay</div>",
    "<img src=\"http://example.org/pixel.png\">",
]


@pytest.mark.parametrize("attack", ATTACKS_IN_HTML)
def test_the_sanitizer_leaves_nothing_that_runs_or_loads(attack):
    from tools.common.sanitize import clean_html

    cleaned = clean_html("<p>answer</p>" + attack).lower()
    assert "<p>answer</p>" in cleaned
    for bad in ("<script", "onerror", "onload", "onclick", "<iframe", "<object", "<embed",
                "<form", "<input", "<button", "javascript:", "<svg", "data:text", "style=",
                "example.org/pixel"):
        assert bad not in cleaned, (attack, cleaned)


def test_a_page_keeps_its_style_sheets_and_a_notebook_its_data():
    import base64

    from tools.common.sanitize import clean_html, clean_notebook

    page = clean_html(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><style>p {color: red}</style>"
        "<script src='https://cdn.example/mathjax.js'></script></head>"
        "<body><a name='top'></a><p>3 / 5</p><script>x()</script></body></html>"
    )
    assert page.startswith("<!DOCTYPE html>") and "<style>p {color: red}</style>" in page
    assert "<script" not in page and "<p>3 / 5</p>" in page and 'name="top"' in page
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 8).decode()
    cell = nbformat.v4.new_code_cell("x")
    cell["outputs"] = [
        nbformat.v4.new_output("stream", name="stdout", text="printed <b>"),
        nbformat.v4.new_output("display_data", data={
            "text/html": "<b>bold</b><script>x()</script>", "text/plain": "bold",
            "application/javascript": "x()", "image/svg+xml": "<svg onload='x()'/>"}),
        nbformat.v4.new_output("display_data", data={"image/png": png}),
        nbformat.v4.new_output("display_data", data={"image/png": png + '" onerror="x()'}),
    ]
    cell["outputs"][1]["metadata"] = {"width": '1" onload="x()'}
    md = nbformat.v4.new_markdown_cell("## Answer\n\n<script>x()</script>$a < b$ **yes**")
    plain = nbformat.v4.new_markdown_cell("x > 0 and `a < b`")
    md["attachments"] = {"a.png": {"image/png": png}}
    nb = nbformat.v4.new_notebook(cells=[md, plain, cell])
    clean = clean_notebook(nb)
    assert nb["cells"][2]["outputs"][1]["data"]["application/javascript"] == "x()"  # a copy
    out = clean["cells"][2]["outputs"]
    assert out[0]["text"] == "printed <b>"  # plain text: the page escapes it
    assert out[1]["data"] == {"text/html": "<b>bold</b>", "text/plain": "bold"}
    assert out[1]["metadata"] == {} and out[2]["data"] == {"image/png": png}
    assert len(out) == 3  # the image whose base64 breaks out of its attribute is gone
    assert "<script" not in clean["cells"][0]["source"] and "**yes**" in clean["cells"][0]["source"]
    assert "attachments" not in clean["cells"][0]
    assert clean["cells"][1]["source"] == "x > 0 and `a < b`"  # no markup: as written


# --------------------------------------------------------------------------- a student's files


def test_links_and_special_files_are_never_followed_or_read(tmp_path, notebook_pair):
    import socket

    from tools.common import safe_files
    from tools.grading import staging, student_files

    source, release = notebook_pair
    secret = tmp_path / "secret.txt"
    secret.write_text("the instructor's secret")
    folder = tmp_path / "submitted" / "eve" / SESSIONS[0]
    folder.mkdir(parents=True)
    (folder / "exit-test.ipynb").symlink_to(ROOT / "solutions" / SESSIONS[0] / "exit-test.ipynb")
    os.mkfifo(folder / "exercises.ipynb")
    (folder / "data.txt").symlink_to(secret)
    os.mkfifo(folder / "pipe.txt")
    (folder / "own.txt").write_text("mine")
    (folder / "big.bin").write_bytes(b"\0" * (student_files.MAX_FILE + 1))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "sock"))
    settings = Settings(root=ROOT, submitted=tmp_path / "submitted", db_url="sqlite://")
    sources = {n: load(ROOT / "solutions" / SESSIONS[0] / n) for n in ("exit-test.ipynb", "exercises.ipynb")}
    releases = {n: load(ROOT / "exercises" / SESSIONS[0] / n) for n in sources}
    started = time.monotonic()
    staged = staging.stage(settings, SESSIONS[0], "eve", sources, releases)
    assert time.monotonic() - started < 10  # the FIFO hung nothing
    sock.close()
    reasons = " | ".join(staged.reasons)
    assert not staged.screened and not staged.handed_in
    assert "exit-test.ipynb: not a notebook (exit-test.ipynb is a symbolic link (not followed))" in reasons
    assert "exercises.ipynb: not a notebook (exercises.ipynb is a FIFO (not read))" in reasons
    assert "the file 'data.txt' is a symbolic link (not followed): left out" in reasons
    assert "the file 'pipe.txt' is a FIFO (not read): left out" in reasons
    assert "the file 'sock' is a socket" in reasons
    assert "the file 'big.bin' is over the size or count limit" in reasons
    assert staged.files == ["own.txt"]
    with pytest.raises(safe_files.Refused):
        safe_files.read_bounded(pathlib.Path("/dev/zero"), 1000)
    with pytest.raises(safe_files.TooLarge):
        safe_files.read_bounded(folder / "own.txt", 2)


def test_a_student_or_assignment_folder_that_is_a_link_is_skipped(tmp_path):
    (tmp_path / "alice" / "session-1").mkdir(parents=True)
    (tmp_path / "mallory").symlink_to(tmp_path / "alice")
    (tmp_path / "trudy").mkdir()
    (tmp_path / "trudy" / "session-1").symlink_to(ROOT / "solutions" / "session-1")
    settings = Settings(root=ROOT, submitted=tmp_path, db_url="sqlite://")
    found, skipped = collect.submissions(settings, ["session-1"])
    assert found == [("session-1", "alice")]
    assert [(s.student, s.assignment) for s in skipped] == [
        ("mallory", "session-1"), ("trudy", "session-1")]
    assert all("is a symbolic link" in s.reason and "not followed" in s.reason for s in skipped)


def test_a_class_archive_is_screened_before_it_is_unpacked(tmp_path):
    import stat
    import zipfile

    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("alice/session-1/exit-test.ipynb", "{}")
        zf.writestr("alice/session-1/data.txt", "ok")
        zf.writestr("eve/../../escape.ipynb", "{}")
        zf.writestr("/abs/exit-test.ipynb", "{}")
        link = zipfile.ZipInfo("eve/session-1/exit-test.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "../../../solutions/session-1/exit-test.ipynb")
        zf.writestr("eve/session-1/inner.zip", "PK")
        bomb = zipfile.ZipInfo("bob/session-1/exit-test.ipynb")
        bomb.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(bomb, " " * (3 * collect.RATIO_FROM))  # 3 MB of spaces: a ratio over 100
    screened = tmp_path / "screened.zip"
    refused = collect.screen_archive(archive, screened, ["session-1"])
    with zipfile.ZipFile(screened) as zf:
        assert sorted(zf.namelist()) == ["alice/session-1/data.txt", "alice/session-1/exit-test.ipynb"]
    assert sorted(refused) == ["", "bob", "eve"]
    text = " | ".join(r for rs in refused.values() for r in rs)
    assert text.count("leaves the archive's folder") == 2
    assert "symbolic link" in " ".join(refused["eve"]) and "archive inside" in " ".join(refused["eve"])
    assert "times its packed size" in refused["bob"][0]
    many = tmp_path / "many.zip"
    with zipfile.ZipFile(many, "w") as zf:
        for i in range(collect.MAX_MEMBERS + 3):
            zf.writestr(f"s{i}/x.txt", "")
    refused = collect.screen_archive(many, tmp_path / "many-screened.zip", ["session-1"])
    assert sum(len(r) for r in refused.values()) == 3
    assert all("more than" in r for rs in refused.values() for r in rs)
