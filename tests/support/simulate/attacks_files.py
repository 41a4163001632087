"""The second and third rounds of hostile students: links, special files, JSON bombs, a
kernel that reads the tests or floods the check, scripts for the feedback, time and disk;
then names that are formulas or terminal escapes, a notebook too big to show, a class
archive that files work under a classmate, twenty thousand files.

``SECOND_ROUND`` and ``THIRD_ROUND`` name each attack; ``place(kind, folder, ...)`` writes the
submission of one into ``folder`` (``<submitted>/<student>/<assignment>``) and returns the
most it may score (None: no more than the ``wrong`` control of
``tests.support.simulate.attacks``) and the reason the report must give (a part of it;
None: none asked). ``class_archives`` writes the attacks that come in a class archive
(``ZIP_ATTACKS``), with what each student must get.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from tools.grading.cells import cell_text
from .answers import index_of, questions, student_notebook
from .attacks import attacked

SECOND_ROUND = {
    "link-files": "data.txt and other files are links to the solution, /etc/shadow and the gradebook",
    "link-notebook": "the notebook is a link to a classmate's notebook",
    "link-folder": "the assignment folder is a link to a classmate's folder",
    "fifo-notebook": "the notebook is a FIFO (a read that never returns)",
    "zero-notebook": "the notebook is a link to /dev/zero (a read without end)",
    "deep-json": "the notebook is '[' * 100000 (nested without end)",
    "bad-nbformat": 'the notebook is {"worksheets": [], "nbformat": "3"}',
    "deep-export": "blank answers; the kernel's export prints a line nested 50,000 deep",
    "colliding-set": "blank answers; the kernel's export says every answer is a set of "
    "multiples of 2**61 - 1 (they all hash alike)",
    "hidden-reader": "wrong answers; an input transformer reads every cell the kernel runs, "
    "looking for the hidden tests and their expected values",
    "feedback-script": "full answers, with scripts in a markdown cell, an HTML output and a "
    "printed line, for whoever opens the feedback",
    "slow-cells": "full answers, then 30 cells that each sleep just under the cell limit",
    "disk-filler": "full answers, with a cell that writes 4 x 50 MB into its folder",
    "result-hook": "blank answers and one added cell: a pre_run_cell hook that publishes a "
    "result (read by nbgrader as partial credit) and an error before every cell",
    "result-hook-wrong": "wrong answers and the same hook",
}
# The third round: each is a submission of full answers, but for the zip attacks.
THIRD_ROUND = {
    "formula-names": "files named as spreadsheet formulas (=HYPERLINK(...).ipynb, +SUM(1+1), "
    "@SUM(2+2), -2+3) and as a terminal escape (ESC[2J), and a stray extra notebook",
    "huge-page": "a 3 MB markdown cell, an output line of 300,000 characters and 200 outputs "
    "of one cell, for the feedback and Formgrader to render",
    "many-files": "20,000 small files beside the notebook",
}
# The class archive's attacks (ZIP=): a student's upload holding classmates' folders, two
# archives holding the same file.
ZIP_ATTACKS = {
    "zip-foreign": "its upload holds its own notebook and a folder for zip-victim (who handed "
    "nothing in: full answers) and for student-02 (a blank notebook)",
    "zip-victim": "handed nothing in (an empty folder): must stay missing",
    "zip-dup": "its notebook in two archives: full answers in the first, blank in the second",
}
FORMULA_NAMES = ['=HYPERLINK("example.com","click").ipynb', "+SUM(1+1).ipynb",
                 "@SUM(2+2).txt", "-2+3.txt", "\x1b[2J\x1b[31mCLEARED.txt"]
HUGE_MARKDOWN = 3_000_000  # characters
MANY_FILES = 20_000
SAW_HIDDEN = "SAW-HIDDEN-TESTS"
MARK = "PWNED-BY-SCRIPT"


def _notebook(source: dict, release: dict, answered: bool = True) -> dict:
    every = {q.answer_id for q in questions(source)} if answered else set()
    return copy.deepcopy(student_notebook(source, release, every))


def _first_answer(nb: dict, source: dict) -> dict:
    first = next(q for q in questions(source) if q.code)
    return nb["cells"][index_of(nb, first.answer_id)]


def _append(cell: dict, code: str) -> None:
    """Put ``code`` at the top of an answer cell (so it runs before a blank answer raises)."""
    cell["source"] = code.strip("\n") + "\n" + cell_text(cell)


_DEEP_EXPORT = r'''
def __memcourse_export__(names, calls):
    print("MEMCOURSE-ANSWERS " + "[" * 50000 + "]" * 50000)
'''

_COLLIDING = r'''
def __memcourse_export__(names, calls):
    import json
    same = [{"t": "int", "v": str(k * (2**61 - 1))} for k in range(1, 60001)]
    values = {n: {"t": "set", "v": same} for n in names}
    print("MEMCOURSE-ANSWERS " + json.dumps({"values": values, "calls": []}))
'''

_READER = r'''
def __memcourse_reader(lines):
    text = "".join(lines)
    if "BEGIN HIDDEN TESTS" in text or "_near(" in text or "not right" in text:
        print("%s")
    return lines
get_ipython().input_transformers_post.append(__memcourse_reader)
''' % SAW_HIDDEN

_SCRIPTS = r'''
from IPython.display import HTML, display
display(HTML("<b>html output</b><script>document.title = '%s'</script>"
             "<img src=x onerror=\"document.title = '%s'\">"))
print("<script>document.title = '%s'</script>")
''' % (MARK, MARK, MARK)

_MARKDOWN = (
    "My notes <script>document.title = '%s'</script>\n\n"
    "<img src=x onerror=\"document.title = '%s'\"> <a href=\"javascript:alert(1)\">link</a>\n"
    "<iframe src=\"javascript:alert(1)\"></iframe>" % (MARK, MARK)
)

_FILLER = r'''
import os
__written = 0
try:
    for __i in range(4):
        with open(f"fill-{__i}.bin", "wb") as __fh:
            for _ in range(50):
                __fh.write(b"\0" * (1 << 20))
                __written += 1
except OSError as __e:
    print("DISK-FULL", __written, "MB", __e.strerror)
else:
    print("DISK-NOT-FULL", __written, "MB")
'''


_FLOOD = r'''
from IPython.display import Markdown, display
print("L" * 300000)
for __k in range(200):
    display(Markdown(f"**flood {__k}**"))
'''


def _markdown_words(size: int) -> str:
    """``size`` characters of markdown with maths, emphasis, code and links (what makes
    nbconvert slowest per character)."""
    words = ["alpha", "*beta*", "$x^2$", "`code`", "[a](b)", "gamma\n\n"]
    text = " ".join(words * (size // 30 + 1))
    return text[:size]


# Before every cell the kernel runs, a result line and an error on IOPub: nbgrader reads a
# test cell's first result as its partial credit.
_RESULT_HOOK = r'''
def __memcourse_claim(info=None):
    _k = get_ipython().kernel
    try:
        _parent = _k.get_parent("shell")
    except TypeError:
        _parent = _k.get_parent()
    _k.session.send(_k.iopub_socket, "execute_result",
                    {"data": {"text/plain": "1.0"}, "metadata": {}, "execution_count": 1},
                    parent=_parent)
    _k.session.send(_k.iopub_socket, "error",
                    {"ename": "Claimed", "evalue": "points", "traceback": []}, parent=_parent)
get_ipython().events.register("pre_run_cell", __memcourse_claim)
'''


def place(kind: str, folder: Path, source: dict, release: dict, name: str,
          classmate: Path, cell_timeout: int = 20) -> tuple[float | None, str | None]:
    """Write the submission of attack ``kind`` into ``folder`` (the troubled notebook
    ``name``); ``classmate`` is another student's assignment folder."""
    total = sum(q.points for q in questions(source))
    folder.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link-folder":
        folder.symlink_to(classmate, target_is_directory=True)
        return 0.0, "is a symbolic link, not a folder of its own: not followed"
    folder.mkdir(parents=True, exist_ok=True)
    nb = _notebook(source, release, answered=kind not in ("deep-export", "colliding-set", "link-files"))
    write = True
    expected: tuple[float | None, str | None] = (total, None)
    if kind == "link-files":
        root = folder.parents[2]
        (folder / "data.txt").symlink_to(root / "solutions" / folder.name / name)
        (folder / "shadow.txt").symlink_to("/etc/shadow")
        (folder / "gradebook.txt").symlink_to(root / "gradebook.db")
        (folder / "classmate.ipynb.txt").symlink_to(classmate / name)
        _append(_first_answer(nb, source), "import os\nprint('LINKED', [open(f).read()[:80] for f in "
                "('data.txt', 'shadow.txt', 'gradebook.txt') if os.path.exists(f)])")
        expected = (0.0, "the file 'data.txt' is a symbolic link (not followed): left out")
    elif kind == "link-notebook":
        (folder / name).symlink_to(classmate / name)
        return 0.0, f"{name}: not a notebook ({name} is a symbolic link (not followed))"
    elif kind == "fifo-notebook":
        os.mkfifo(folder / name)
        return 0.0, f"{name}: not a notebook ({name} is a FIFO (not read))"
    elif kind == "zero-notebook":
        (folder / name).symlink_to("/dev/zero")
        return 0.0, f"{name}: not a notebook ({name} is a symbolic link (not followed))"
    elif kind == "deep-json":
        (folder / name).write_text("[" * 100000)
        return 0.0, "not a notebook (nested deeper than any notebook is)"
    elif kind == "bad-nbformat":
        (folder / name).write_text('{"worksheets": [], "nbformat": "3"}')
        return 0.0, "not a notebook (worksheets with no usable nbformat number)"
    elif kind == "deep-export":
        _append(_first_answer(nb, source), _DEEP_EXPORT)
        expected = (0.0, None)
    elif kind == "colliding-set":
        _append(_first_answer(nb, source), _COLLIDING)
        expected = (0.0, None)
    elif kind == "hidden-reader":
        text, _ = attacked("wrong", source, release)
        nb = json.loads(text)
        cell = _first_answer(nb, source)
        cell["source"] = _READER + "\n" + cell_text(cell)
        expected = (None, None)
    elif kind == "feedback-script":
        _append(_first_answer(nb, source), _SCRIPTS)
        import nbformat

        nb["cells"].insert(1, nbformat.v4.new_markdown_cell(_MARKDOWN))
    elif kind == "slow-cells":
        import nbformat

        for _ in range(30):
            nb["cells"].append(nbformat.v4.new_code_cell(f"import time\ntime.sleep({cell_timeout - 1})"))
        expected = (0.0, "ran longer than the time limit of a submission")
    elif kind == "disk-filler":
        _append(_first_answer(nb, source), _FILLER)
    elif kind == "formula-names":
        for name_ in FORMULA_NAMES:
            if name_.endswith(".ipynb"):  # a stray notebook, never read
                (folder / name_).write_text(json.dumps(release))
            else:  # a link: left out with its name in the reason
                (folder / name_).symlink_to("/etc/hostname")
        import nbformat

        odd = nbformat.v4.new_markdown_cell("notes")
        odd["metadata"]["nbgrader"] = {"grade_id": "=1+1", "grade": False, "solution": False}
        nb["cells"].insert(1, odd)
        expected = (total, "the notebook '+SUM(1+1).ipynb' is no part of")
    elif kind == "huge-page":
        import nbformat

        _append(_first_answer(nb, source), _FLOOD)
        nb["cells"].insert(1, nbformat.v4.new_markdown_cell(_markdown_words(HUGE_MARKDOWN)))
        expected = (total, "trimmed to")
    elif kind == "many-files":
        for i in range(MANY_FILES):
            (folder / f"f{i:05d}.txt").write_bytes(b"")
        expected = (total, "more files left out (over the size or count limit")
    elif kind in ("result-hook", "result-hook-wrong"):
        import nbformat

        if kind == "result-hook":
            nb = _notebook(source, release, answered=False)
            expected = (0.0, None)
        else:
            nb = json.loads(attacked("wrong", source, release)[0])
            expected = (None, None)
        nb["cells"].insert(1, nbformat.v4.new_code_cell(_RESULT_HOOK.strip("\n")))
    else:
        raise ValueError(f"unknown attack {kind!r}; one of {sorted(SECOND_ROUND | THIRD_ROUND)}")
    if write:
        (folder / name).write_text(json.dumps(nb, indent=1) + "\n")
    return expected


def class_archives(folder: Path, submitted: Path, assignment: str, source: dict,
                   release: dict, name: str) -> tuple[list[Path], dict]:
    """The two class archives of ``ZIP_ATTACKS`` in ``folder`` (zip-victim's empty folder in
    ``submitted``), and {student: (score, status or None, reason or None)} they must give."""
    import zipfile

    total = sum(q.points for q in questions(source))
    full = json.dumps(_notebook(source, release)) + "\n"
    blank = json.dumps(_notebook(source, release, answered=False)) + "\n"
    (submitted / "zip-victim" / assignment).mkdir(parents=True)
    folder.mkdir(parents=True, exist_ok=True)
    first, second = folder / "uploads-a.zip", folder / "uploads-b.zip"
    own = f"zip-foreign/{assignment}"
    with zipfile.ZipFile(first, "w") as zf:
        zf.writestr(f"{own}/{name}", full)
        zf.writestr(f"{own}/zip-victim/{assignment}/{name}", full)
        zf.writestr(f"{own}/student-02/{assignment}/{name}", blank)
        zf.writestr(f"zip-dup/{assignment}/{name}", full)
    with zipfile.ZipFile(second, "w") as zf:
        zf.writestr(f"zip-dup/{assignment}/{name}", blank)
    return [first, second], {
        "zip-foreign": (total, None, "refused (it is in a folder inside the folder of "
                                     "'zip-foreign'"),
        "zip-victim": (0.0, "missing", None),
        "zip-dup": (total, None, "refused (a second member for a file already filed"),
    }
