"""What a student controls reaches the instructor as text, bounded.

A name, a reason or a message goes into a CSV cell that no spreadsheet runs as a formula
(OWASP's rule: no cell starts with = + - @ tab or carriage return) and onto a terminal with
its control characters escaped; like reasons are counted, not listed; a page shows a
bounded notebook; a class archive files a member only under the student whose folder
holds it. The whole of it, through ``make grade``, is in the attacked class of
``test_grading_sandbox.py``; these are its parts, fast.
"""

import csv
import json
import pathlib
import zipfile

import nbformat
import pytest

from tools.common.text import counted, csv_cell, csv_row, quoted, shown
from tools.common import sanitize
from tools.grading import collect, report, screening, staging
from tools.grading.outcome import Outcome, status_of
from tools.grading.settings import Settings
from tools.release import assignments as course

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIRST = course.assignments(ROOT)[0]
NAME = "exit-test.ipynb"
ESC = "\x1b[2J"


def load(path):
    return json.loads(pathlib.Path(path).read_text())


@pytest.mark.parametrize("text", ["=HYPERLINK(\"http://x\",\"y\")", "+SUM(1+1)", "-2+3",
                                  "@SUM(2+2)", "\tx", "\rx", "-", "=1"])
def test_a_text_cell_that_could_be_a_formula_starts_with_a_quote(text):
    assert csv_cell(text).startswith("'")


@pytest.mark.parametrize("value", [3, -1.5, "12", "-2", "0.25", "1e-05", "+4", "ok", ""])
def test_a_number_stays_a_number_and_plain_text_stays_as_written(value):
    assert csv_cell(value) == value


def test_control_characters_are_shown_escaped():
    assert shown(f"a{ESC}b\nc\u202ed\u00e9") == "a\\x1b[2Jb\\nc\\u202ed\u00e9"
    assert shown(f"one{ESC}\ntwo", lines=True) == "one\\x1b[2J\ntwo"
    assert csv_cell(f"x{ESC}") == "x\\x1b[2J"
    assert quoted(f"=a{ESC}") == "'=a\\x1b[2J'"
    assert csv_row(["=a", 1]) == ["'=a", 1]


def test_like_lines_are_counted_past_the_first_few():
    lines = [f"file {i}" for i in range(19_903)]
    assert counted(lines, "files left out (extra files)") == [
        "file 0", "file 1", "file 2", "19,900 more files left out (extra files)"]
    assert counted(lines[:4], "x") == lines[:4]  # one line for one line: listed


def test_the_report_and_the_summary_show_what_a_student_named_as_text(tmp_path):
    odd = Outcome("=cmd|' /C calc'!A0", FIRST, status="skipped",
                  reasons=[f"the folder name {quoted('=cmd')} is not a usable student id"])
    named = Outcome("ann", FIRST, score=7.5, max_score=10, status="repaired",
                    reasons=[f"+SUM(1+1).ipynb{ESC}: left out", "-2+3"], note="@note")
    path = tmp_path / "grading-report.csv"
    report.write_report([odd, named], path)
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    cells = [c for row in rows for c in row.values()]
    assert not [c for c in cells if c.startswith(("=", "+", "@", "\t", "\r"))
                or (c.startswith("-") and not c.lstrip("-").replace(".", "").isdigit())]
    ann = next(r for r in rows if r["student"] == "ann")
    assert ann["score"] == "7.5" and ann["reasons"].startswith("'+SUM(1+1).ipynb\\x1b[2J")
    assert "\x1b" not in path.read_text()
    printed = report.summary([odd, named], [FIRST])
    assert "\x1b" not in printed and "+SUM(1+1).ipynb\\x1b[2J: left out" in printed


@pytest.fixture()
def pair():
    return (load(ROOT / "solutions" / FIRST / NAME), load(ROOT / "exercises" / FIRST / NAME))


def test_many_files_and_stray_notebooks_are_counted_quoted_and_reject_nothing(tmp_path, pair):
    source, release = pair
    folder = tmp_path / "submitted" / "eve" / FIRST
    folder.mkdir(parents=True)
    (folder / NAME).write_text(json.dumps(release))
    for i in range(300):
        (folder / f"f{i:03d}.txt").write_bytes(b"")
    for i in range(5):
        (folder / f"=HYPERLINK({i}).ipynb").write_text("not even JSON")
    (folder / f"{ESC}.txt").symlink_to("/etc/hostname")
    settings = Settings(root=ROOT, submitted=tmp_path / "submitted", db_url="sqlite://")
    staged = staging.stage(settings, FIRST, "eve", {NAME: source}, {NAME: release})
    assert staged.screened and len(staged.files) == 100
    reasons = staged.reasons
    assert "197 more files left out (over the size or count limit of a submission's files)" \
        in reasons[-1], reasons
    assert "the notebook '=HYPERLINK(0).ipynb' is no part of" in " | ".join(reasons)
    assert f"2 more notebooks that are no part of {FIRST} left out" in reasons
    assert "the file '\\x1b[2J.txt' is a symbolic link" in " | ".join(reasons)
    assert len(reasons) < 12 and not any(r.startswith(("=", ESC)) for r in reasons)
    # a stray notebook is left out: the submission is graded, not "rejected"
    assert status_of(True, True, reasons, False) == "repaired"


@pytest.mark.parametrize("name", ["not a notebook", "not valid JSON", "x: not handed in: scored 0",
                                  "it's not a notebook: scored 0"])
def test_a_name_in_a_reason_never_sets_the_status(name):
    reason = f"the file {quoted(name)} is a symbolic link (not followed): left out"
    assert status_of(True, True, [reason], False) == "repaired"
    # what the grader itself says still counts
    assert status_of(True, True, [reason, f"{NAME}: not valid JSON (Expecting ',' "
                                          "delimiter, line 3): scored 0"], False) == "rejected"


def test_a_page_shows_a_bounded_cell_and_bounded_outputs(pair):
    source, release = pair
    nb = json.loads(json.dumps(release))
    huge = "*word* $x$ " * 200_000
    nb["cells"].insert(1, nbformat.v4.new_markdown_cell(huge))
    screened = screening.screen(json.dumps(nb), source, release)
    kept = [c for c in screened.notebook["cells"] if c["cell_type"] == "markdown"
            and "more characters left out" in c["source"]]
    assert len(kept) == 1 and len(kept[0]["source"]) < sanitize.MAX_CELL + 200
    assert any("longer than 50,000 characters trimmed" in r for r in screened.reasons)
    code = nbformat.v4.new_code_cell("print()")
    code["outputs"] = [nbformat.v4.new_output("stream", text="L" * 300_000)] + [
        nbformat.v4.new_output("display_data", data={"text/plain": f"{k}"}) for k in range(200)]
    clean = sanitize.clean_notebook({"cells": [code]})["cells"][0]
    assert len(clean["outputs"]) == sanitize.MAX_OUTPUTS + 1
    assert len(clean["outputs"][0]["text"]) < sanitize.MAX_OUTPUT + 200
    assert "151 more outputs left out" in clean["outputs"][-1]["text"]
    assert sanitize.trimmed("short", 10) == "short"


def test_a_class_archive_files_a_member_under_the_student_whose_folder_holds_it(tmp_path):
    first, second = tmp_path / "a.zip", tmp_path / "b.zip"
    with zipfile.ZipFile(first, "w") as zf:
        zf.writestr(f"class/mal/{FIRST}/{NAME}", "{}")
        zf.writestr(f"class/mal/{FIRST}/bob/{FIRST}/{NAME}", "{}")  # bob's, in mal's folder
        zf.writestr(f"mal/{FIRST}/.ipynb_checkpoints/x-checkpoint.ipynb", "{}")
        zf.writestr(f"ann/{NAME}", "{}")
        zf.writestr(f"{NAME}", "{}")
    with zipfile.ZipFile(second, "w") as zf:
        zf.writestr(f"ann/{FIRST}/{NAME}", "{}")  # ann's file again
    taken: set = set()
    refused = collect.screen_archive(first, tmp_path / "a-screened.zip", [FIRST], taken)
    refused_b = collect.screen_archive(second, tmp_path / "b-screened.zip", [FIRST], taken)
    with zipfile.ZipFile(tmp_path / "a-screened.zip") as zf:
        assert sorted(zf.namelist()) == [f"ann/{NAME}", f"mal/{FIRST}/{NAME}"]
    with zipfile.ZipFile(tmp_path / "b-screened.zip") as zf:
        assert zf.namelist() == []
    assert sorted(refused) == ["", "mal"] and "bob" not in refused
    assert "in a folder inside the folder of 'mal'" in refused["mal"][0]
    assert "in no student's folder" in refused[""][0]
    assert list(refused_b) == ["ann"] and "a second member for a file" in refused_b["ann"][0]


def test_a_class_archive_is_graded_though_it_names_a_classmate(tmp_path):
    """nbgrader zip_collect on archives with a classmate's folder inside a student's and the
    same file twice: it runs, files each notebook under its own student, and leaves a
    classmate's submission alone."""
    root = tmp_path / "course"
    (root / "exercises" / FIRST).mkdir(parents=True)
    (root / "exercises" / FIRST / NAME).write_text("{}")
    (root / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text())
    (root / "submitted" / "bob" / FIRST).mkdir(parents=True)
    (root / "submitted" / "bob" / FIRST / NAME).write_text('{"bob": 1}')
    first, second = tmp_path / "a.zip", tmp_path / "b.zip"
    with zipfile.ZipFile(first, "w") as zf:
        zf.writestr(f"mal/{FIRST}/{NAME}", '{"mal": 1}')
        zf.writestr(f"mal/{FIRST}/bob/{FIRST}/{NAME}", '{"mal-for-bob": 1}')
    with zipfile.ZipFile(second, "w") as zf:
        zf.writestr(f"mal/{FIRST}/{NAME}", '{"mal-again": 1}')
    settings = Settings(root=root, submitted=root / "submitted", db_url="sqlite://")
    refused = collect.collect_zips(settings, [first, second], [FIRST])
    assert (root / "submitted" / "mal" / FIRST / NAME).read_text() == '{"mal": 1}'
    assert (root / "submitted" / "bob" / FIRST / NAME).read_text() == '{"bob": 1}'
    assert list(refused) == ["mal"] and len(refused["mal"]) == 2
