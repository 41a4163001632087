"""The book's page of each session: its exit test and exercises as a student receives them.

    python -m tools.release.session_pages          write book/session-N.md for every exercises/session-N/
    python -m tools.release.session_pages --check  fail if a page differs from what would be written

(``make assignments`` runs it after regenerating exercises/.) A page is rendered from
the released notebooks, never from solutions/: markdown cells as markdown (headings one
level down), code cells as plain ``python`` blocks that the book does not execute. The
first cell of each notebook (its header) is replaced by the page's own introduction,
which links the chapters the header links.

In print (the PDF) a page is a worksheet: the questions and the set-up cell stay, while
the answer cells and the test cells give way to a box to write the answer in.

Each student draws their own numbers and their own order of the options of a multiple-choice
question (``memkit.variants``); a page shows the set-up's code and the options as the default
student id letters them (``options_markdown``), and says so. Under the reading list, the
session's expected time: the MyST substitution ``{{ session_time_N }}``, which the book's
build counts from the material (``tools/book/study_time.py``, a Sphinx extension of the
book, not imported here).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

from tools.common import nbgrader_cells
from tools.release import layout

FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

TITLES = {"exit-test": "Exit test", "exercises": "Exercises"}
BOOK_LINK = re.compile(r"\[([^\]]+)\]\((?:\.\./)+book/([^)#\s]+\.md)(#[^)\s]*)?\)")


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _demote(markdown: str) -> str:
    """Headings one level down (a notebook's ## becomes ###), code fences left alone."""
    out, fence = [], None
    for line in markdown.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
        if fence is None and re.match(r"#{1,5} ", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out)


def _relink(markdown: str, root: Path) -> str:
    """Links from a notebook to ../../book/X.md become links from a book page to X.md.

    A chapter that is not in book/ yet stays plain text (a strict build fails on a link
    to a missing page); ``make assignments`` links it once it exists.
    """

    def link(m):
        if (Path(root) / "book" / m.group(2)).exists():
            return f"[{m.group(1)}]({m.group(2)}{m.group(3) or ''})"
        return m.group(1)

    return BOOK_LINK.sub(link, markdown)


def _fence(code: str) -> str:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return f"{ticks}python\n{code.rstrip()}\n{ticks}"


def _only(builder: str, body: str) -> str:
    """A block that only the ``builder`` (html or latex) shows."""
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return f"{ticks}{{only}} {builder}\n{body}\n{ticks}"


def _answer_box(height: str) -> str:
    """Room to write an answer, in print only (the box is defined by tools/book/pdf_book.py)."""
    return "```{raw} latex\n\\memanswerbox{" + height + "}\n```"


def _option_text(node: ast.expr, code: str) -> str:
    """An option as written in an options cell: a string, or an f-string whose fields show
    as the code that fills them in (`L5 // 2`), since a page has no student's numbers."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value if isinstance(part, ast.Constant)
            else f"`{ast.get_source_segment(code, part.value)}`"
            for part in node.values)
    raise ValueError(f"an option that is not a string: {ast.get_source_segment(code, node)}")


def options_markdown(code: str, notebook: str) -> str | None:
    """An options cell (``numbers.options("q4", [...])``, ``memkit.variants``) as a page
    shows it: each list lettered in the order the default student id draws, with a note that
    the notebook shows the student's own order. None if the cell draws no options."""
    from memkit import variants

    lists = []
    for node in ast.walk(ast.parse(code)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "options" and len(node.args) >= 2):
            continue
        question = ast.literal_eval(node.args[0])
        texts = [_option_text(item, code) for item in node.args[1].elts]
        named = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
        drawn = variants.Numbers(notebook, variants.DEFAULT_ID).options(
            question, texts, named.get("letters"), named.get("title"))
        lists.append((node.lineno, drawn._repr_markdown_()))
    if not lists:
        return None
    note = ("*The options, lettered in the order of the default student id: your notebook "
            "shows them in your own order, with your own letters.*")
    return "\n\n".join([note] + [text for _, text in sorted(lists)])


def _order(paths: list[Path]) -> list[Path]:
    rank = {"exit-test": 0, "exercises": 1}
    return sorted(paths, key=lambda p: (rank.get(p.stem, 2), p.stem))


def _links(notebooks: list[dict], root: Path) -> list[str]:
    """The chapters the notebooks' headers link to, in order, without repeats."""
    found: list[str] = []
    for nb in notebooks:
        cells = nb.get("cells", [])
        if not cells:
            continue
        for m in BOOK_LINK.finditer(_text(cells[0])):
            link = _relink(m.group(0).replace(m.group(3) or "", ""), root)
            if link not in found:
                found.append(link)
    return found


def _render_notebook(path: Path, nb: dict, number: int, root: Path) -> list[str]:
    heading = TITLES.get(path.stem)
    cells = nb.get("cells", [])
    if heading is None:
        heading = _text(cells[0]).splitlines()[0].lstrip("#").strip() if cells else path.stem
    rel = f"exercises/session-{number}/{path.name}"
    parts = [f"## {heading}", f"The notebook `{rel}`, as you receive it (without its answers)."]
    for cell in cells[1:]:
        text = _text(cell).strip("\n")
        if not text.strip():
            continue
        options = (options_markdown(text, f"session-{number}/{path.stem}")
                   if cell.get("cell_type") == "code" and nbgrader_cells.is_locked(cell)
                   and str(nbgrader_cells.grade_id(cell) or "").endswith("-options") else None)
        if options:
            parts.append(_demote(_relink(options, root)))
        elif cell.get("cell_type") == "code":
            if nbgrader_cells.is_grade(cell):
                points = nbgrader_cells.points(cell)
                label = (
                    f"*Test cell, {points:g} point{'s' if points != 1 else ''} (the visible tests; "
                    "hidden tests are added when the notebook is graded):*"
                )
            elif nbgrader_cells.is_solution(cell):
                label = "*Your answer:*"
            elif nbgrader_cells.is_locked(cell) and cell is cells[1]:
                label = "*Set-up cell (run it first):*"
            else:
                label = ""
            block = (label + "\n\n" if label else "") + _fence(text)
            if nbgrader_cells.is_grade(cell) or nbgrader_cells.is_solution(cell):
                # in print: no code to retype, a box to write the answer in
                parts.append(_only("html", block))
                if nbgrader_cells.is_solution(cell):
                    parts.append(_answer_box("3cm"))
            else:
                parts.append(block)
        elif nbgrader_cells.is_solution(cell):
            # a written answer: the student writes in this cell
            quoted = "\n".join(
                f"> {line}" if line else ">" for line in _relink(text, root).splitlines()
            )
            parts.append(_only("html", "*Your answer, in the notebook's cell:*\n\n" + quoted))
            parts.append(_answer_box("5cm"))
        elif cell.get("cell_type") == "markdown":
            parts.append(_demote(_relink(text, root)))
        else:
            parts.append(_fence(text).replace("```python", "```text", 1))
    return parts


def render(root: Path, assignment: str) -> str:
    """The page of one session, rendered from exercises/<assignment>/."""
    number = int(layout.ASSIGNMENT.match(assignment).group(1))
    paths = _order(layout.notebooks(root, assignment, layout.RELEASE))
    notebooks = [json.loads(p.read_text()) for p in paths]
    links = _links(notebooks, root)
    reading = (
        ", ".join(links[:-1]) + (" and " if len(links) > 1 else "") + (links[-1] if links else "")
    )
    names = " and ".join(f"`exercises/session-{number}/{p.name}`" for p in paths)
    first = (
        f"exercises/session-{number}/{paths[0].name}" if paths else f"exercises/session-{number}"
    )
    intro = (
        "It ends with two graded notebooks: the **exit test**, to answer without looking back "
        "at the chapters, and the **exercises**, computations with `memkit` that confirm "
        "results of the session's chapters. Both are shown below as you receive them, "
        "without their answers."
    )
    how = [
        f"- **Open.** `make lab` opens JupyterLab on the course; the notebooks are {names}. "
        "Answer each question in the cell under it, in place of "
        "`raise NotImplementedError()`, and run the test cell that follows: it checks the "
        "form of your answer and says what it checked.",
        f"- **Check.** `make check NB={first}` runs a notebook in a fresh kernel and prints, "
        "per question, *format ok* (with what was checked), *failed* (with the message) or "
        "*not attempted*; `make check` alone checks every notebook you changed. *Format ok* "
        "is not *right*: hidden tests check the values when the notebook is graded.",
        f"- **Grade yourself.** Studying alone, in a clone of the course (it holds "
        f"`solutions/`), after trying every question: `make check GRADE=1 NB={first}` grades "
        "the notebook with the course's own grader and hidden tests, and prints per question "
        "*right* or *wrong* with the test's message, and where its feedback page is. In a "
        "class on a hub your instructor grades what you submit, and that grade counts.",
        "- **Your numbers.** The set-up cell draws the data of the questions from your student "
        "id and prints them, and a multiple-choice question lists its options under its text "
        "in an order and with letters of your own (this page letters them as the default id "
        "does). Your id is your user name on the course's JupyterHub; in "
        "self-study set the one your instructor files your work under once, "
        "`make check ID=<your id>`.",
        "- **Submit.** On the course's JupyterHub: the *Assignments* tab, then *Submit* "
        f"(or `nbgrader submit session-{number} --course memcourse` in a terminal). In "
        f"self-study: hand in the folder `exercises/session-{number}/`, or a zip of it, "
        "the way your instructor asks.",
    ]
    parts = [
        FRONT_MATTER.rstrip("\n"),
        f"({assignment})=\n# Session {number} · Exit test and exercises",
        f"Session {number} reads {reading}." if links else f"Session {number} ends here.",
        "{{ session_time_%d }}" % number,
        intro,
        "## Open, check, submit",
        "\n".join(how),
    ]
    for path, nb in zip(paths, notebooks):
        parts += _render_notebook(path, nb, number, root)
    return "\n\n".join(parts) + "\n"


def page_path(root: Path, assignment: str) -> Path:
    return Path(root) / "book" / f"{assignment}.md"


def write_all(root: Path = layout.ROOT) -> list[Path]:
    """Write the page of every released session; return the pages written."""
    written = []
    for assignment in layout.assignments(root, layout.RELEASE):
        path = page_path(root, assignment)
        path.write_text(render(root, assignment))
        written.append(path)
    return written


def differences(root: Path = layout.ROOT) -> list[str]:
    """Pages missing or out of date with respect to exercises/."""
    problems = []
    for assignment in layout.assignments(root, layout.RELEASE):
        path = page_path(root, assignment)
        if not path.exists():
            problems.append(f"missing page: book/{path.name} (make assignments)")
        elif path.read_text() != render(root, assignment):
            problems.append(f"out of date: book/{path.name} (make assignments)")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.release.session_pages",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if args.check:
        problems = differences()
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    for path in write_all():
        print(f"wrote {path.relative_to(layout.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
