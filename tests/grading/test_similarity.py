"""Copied work found: in a simulated class of 20, the two students who copied each other's
answers (renamed names, moved cells) are named, and no honest pair; the page is the
instructor's, sanitized, with the released template left out."""

import json
import pathlib

import pytest

from tools.grading import similarity
from tools.grading.outcome import Outcome
from tools.grading.settings import Settings
from support.simulate.disguised_copy import simulate_copying
from tools.release import assignments as course

ROOT = pathlib.Path(__file__).resolve().parents[2]
COPIER, SOURCE = "student-13", "student-07"


def releases(assignment):
    return [json.loads(p.read_text()) for p in course.notebooks(ROOT, assignment, course.RELEASE)]


def codes_of(folder, assignment, students):
    template = similarity.template_code(releases(assignment))
    return {s: "\n\n".join(similarity.answer_code(json.loads(p.read_text()), template)
                           for p in sorted((folder / s / assignment).glob("*.ipynb")))
            for s in students}


# the sessions whose classes came closest to the rule's limits in benchmarks/similarity.py
@pytest.mark.parametrize("assignment, seed", [("session-2", 1), ("session-7", 0),
                                              ("session-9", 0), ("session-9", 1)])
def test_the_copiers_are_named_and_no_honest_pair(tmp_path, assignment, seed):
    kinds = simulate_copying(ROOT, assignment, 20, COPIER, SOURCE, seed, tmp_path)
    assert len(kinds) == 20 and kinds[COPIER] == "copier" and kinds[SOURCE] == "copied"
    assert "partial" in kinds.values()
    codes = codes_of(tmp_path, assignment, kinds)
    assert codes[COPIER] != codes[SOURCE]  # disguised: every free name renamed, cells moved
    result = similarity.compare(assignment, codes, similarity.template_code(releases(assignment)))
    assert [(p.first, p.second) for p in result.flagged] == [(SOURCE, COPIER)]
    assert len(result.pairs) == 190


def test_the_copy_is_not_found_by_its_text_alone(tmp_path):
    """The disguise defeats a plain text comparison: the copier's code is not the source's
    (renamed), and its cells are in another order."""
    simulate_copying(ROOT, "session-6", 20, COPIER, SOURCE, 1, tmp_path)
    nb = {s: json.loads((tmp_path / s / "session-6" / "exercises.ipynb").read_text())
          for s in (SOURCE, COPIER)}
    added = {s: [i for i, c in enumerate(nb[s]["cells"]) if not c["metadata"]] for s in nb}
    assert added[SOURCE] != added[COPIER] or len(added[SOURCE]) == 1
    assert "my_" in similarity.answer_code(nb[COPIER], "")


def test_the_template_is_left_out(tmp_path):
    """Students who only kept the release have nothing of their own to compare; two who
    kept the whole template and wrote different answers are not alike."""
    rel = releases("session-6")
    template = similarity.template_code(rel)
    assert any(similarity.answer_code(nb) for nb in rel)  # the stubs, the given code
    assert not any(similarity.answer_code(nb, template) for nb in rel)
    mine = {"ann": "total = sum(k * k for k in range(40)) + len(str(np.pi)) - 17 * 3 // 2",
            "ben": "values = np.linspace(-1.0, 1.0, 101)\nfor cut in (0.25, 0.5, 0.75):\n"
                   "    print(cut, values[values > cut].mean(), np.median(values[values < -cut]))",
            "cat": "", "dan": ""}

    def handed_in(own):
        nbs = json.loads(json.dumps(rel))
        nbs[0]["cells"].append({"cell_type": "code", "metadata": {}, "source": own})
        return nbs

    codes = {s: "\n\n".join(similarity.answer_code(nb, template) for nb in handed_in(own))
             for s, own in mine.items()}
    result = similarity.compare("session-6", codes, template)
    assert set(result.codes) == {"ann", "ben"}  # cat and dan: nothing of their own
    assert not result.flagged and result.pairs[0].score < 0.2
    # the template not left out, the four would be alike
    raw = {s: "\n\n".join(similarity.answer_code(nb) for nb in handed_in(own))
           for s, own in mine.items()}
    assert similarity.compare("session-6", raw, "").pairs[0].score > 0.9


def test_the_page_is_the_instructors_and_nothing_in_it_runs(tmp_path):
    root = tmp_path / "course"
    kinds = simulate_copying(ROOT, "session-3", 8, "student-05", "student-02", 0,
                             root / "autograded")
    evil = root / "autograded" / "student-05" / "session-3" / "exercises.ipynb"
    nb = json.loads(evil.read_text())
    nb["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                        "source": "s = '</pre><script>alert(1)</script><img src=x onerror=alert(2)>'"})
    evil.write_text(json.dumps(nb))
    settings = Settings(root=root, submitted=root / "submitted", db_url="sqlite://")
    outcomes = [Outcome(s, "session-3") for s in kinds]
    written = similarity.report(settings, outcomes, {"session-3": releases("session-3")})
    path, result = written["session-3"]
    assert path == root / "autograded" / "_similarity" / "session-3.html"
    text = path.read_text()
    assert "<script" not in text and "onerror=" not in text.replace("onerror=alert", "")
    assert "&lt;script&gt;" in text  # shown as text
    assert "student-02 and student-05" in text and "flagged" in text
    lines = similarity.summary_lines(written)
    assert lines and "student-02 and student-05" in lines[0] and str(path) in lines[0]


def test_a_huge_answer_is_shown_in_part(tmp_path):
    """A megabyte typed into an answer: its first COMPARED_CHARS are compared, and the page
    shows SHOWN_CHARS of it, with a line saying how much more there is and where."""
    root = tmp_path / "course"
    kinds = simulate_copying(ROOT, "session-3", 8, "student-05", "student-02", 0,
                             root / "autograded")
    for student in ("student-05", "student-02"):
        path = root / "autograded" / student / "session-3" / "exercises.ipynb"
        nb = json.loads(path.read_text())
        nb["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [],
                            "execution_count": None,
                            "source": "table = [" + ", ".join(map(str, range(200_000))) + "]"})
        path.write_text(json.dumps(nb))
    settings = Settings(root=root, submitted=root / "submitted", db_url="sqlite://")
    written = similarity.report(settings, [Outcome(s, "session-3") for s in kinds],
                                {"session-3": releases("session-3")})
    path, result = written["session-3"]
    assert len(result.codes["student-05"]) > 1_000_000
    assert [p.flagged for p in result.pairs if {p.first, p.second} == {"student-02", "student-05"}] == [True]
    text = path.read_text()
    assert len(text) < 20 * similarity.SHOWN_CHARS
    assert "more characters, not shown: the notebooks are in autograded/student-05/session-3/" in text


def test_a_huge_line_is_the_students_own_and_never_shaped():
    """A line longer than any template line is kept as the student's own without running
    Pygments over it or keeping its shape; a template line is still left out."""
    huge = "x = [" + ", ".join(map(str, range(100_000))) + "]"
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": f"{huge}\nimport numpy as np"}]}
    similarity._shape.cache_clear()
    assert similarity.answer_code(nb, "import numpy as np\n") == huge
    assert similarity._shape.cache_info().currsize == 1  # the template's line only
