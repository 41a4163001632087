"""How the course's lab shows a student's notebook in Formgrader (tools/lab/student_work.py),
rendered with nbgrader's own exporter and template, checked without a hub.

* the page of a submission holding scripts everywhere a student can put them holds none
  a browser would run (the grader's sanitizer, then nbconvert's markdown cleaned again);
* the policy the page is sent with allows the template's own inline scripts only: hashed
  from a render with no cells, so none of the student's would run even unsanitized;
* a grade id that is not nbgrader's (it lands in the page's attributes) makes a plain cell.

tests/test_hub.py opens the same page on a real hub in Chromium; this is the fast check.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
from tools.common import nbgrader_cells
import pytest

from tools.lab import student_work

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = "pwned()"


MATHJAX = "/user/prof/static/jupyter_server_mathjax/MathJax.js"  # as the lab serves it


def attack_notebook() -> dict:
    """Session 3's exit test with scripts in a written answer, an added cell, outputs."""
    nb = json.loads((ROOT / "exercises" / "session-3" / "exit-test.ipynb").read_text())
    for cell in nb["cells"]:
        grade_id = nbgrader_cells.grade_id(cell)
        if grade_id == "q6-written":
            cell["source"] = (f'Mine <img src=x onerror="{PAYLOAD}"> <script>{PAYLOAD}</script>'
                              f' [see](javascript:{PAYLOAD})')
        if grade_id == "q1":
            cell["outputs"] = [
                {"output_type": "display_data", "metadata": {},
                 "data": {"text/html": f'<img src=x onerror="{PAYLOAD}">', "text/plain": "x"}},
                {"output_type": "display_data", "metadata": {},
                 "data": {"application/javascript": PAYLOAD, "text/plain": "js"}},
                {"output_type": "display_data", "metadata": {},
                 "data": {"image/svg+xml": f'<svg onload="{PAYLOAD}"></svg>', "text/plain": "s"}},
                {"output_type": "display_data", "metadata": {},
                 "data": {"text/markdown": f"[m](javascript:{PAYLOAD})", "text/plain": "m"}}]
    nb["cells"].insert(1, {"cell_type": "markdown", "id": "added", "metadata": {
        "nbgrader": {"grade": True, "solution": True, "points": 1, "locked": False,
                     "grade_id": f'x" onfocus="{PAYLOAD}" autofocus="'}},
        "source": f"<svg><script>{PAYLOAD}</script></svg>"})
    return nb


@pytest.fixture(scope="module")
def exporter():
    """Formgrader's exporter, configured as nbgrader's FormgradeExtension configures it."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    return HTMLExporter(config=config)


RESOURCES = {"assignment_id": "session-3", "notebook_id": "exit-test", "submission_id": "abc",
             "index": 0, "total": 1, "base_url": "/user/prof", "student": "ann",
             "last_name": None, "first_name": None, "notebook_path": "x/exit-test.ipynb"}


def runnable(html: str) -> list[str]:
    """What of PAYLOAD a browser would run in ``html``: inline scripts, handlers, URLs."""
    from html.parser import HTMLParser

    found = []

    class Find(HTMLParser):
        script = False

        def handle_starttag(self, tag, attrs):
            self.script = tag == "script"
            found.extend(f"{tag} {k}" for k, v in attrs if PAYLOAD in (v or ""))

        def handle_data(self, data):
            if self.script and PAYLOAD in data:
                found.append("script")

    Find().feed(html)
    return found


def test_the_submission_page_holds_nothing_that_runs(exporter, tmp_path):
    path = tmp_path / "exit-test.ipynb"
    path.write_text(json.dumps(attack_notebook()))
    clean = student_work._CleanExporter(exporter, MATHJAX)
    page, _ = clean.from_filename(str(path), resources=dict(RESOURCES))
    assert "Mine" in page and "exit-test" in page  # the student's answer is shown, as text
    assert runnable(page) == []
    # the page's own scripts are there, and allowed
    assert clean.hashes and clean.hashes <= student_work.inline_hashes(page)


def test_the_submission_page_typesets_its_maths_with_the_labs_mathjax(exporter, tmp_path):
    """nbgrader's template names MathJax on a CDN (no network on a hub, and outside the
    page's policy): the page loads jupyter_server_mathjax's copy, which the lab serves."""
    import jupyter_server_mathjax

    path = tmp_path / "exit-test.ipynb"
    path.write_text(json.dumps(attack_notebook()))
    page, _ = student_work._CleanExporter(exporter, MATHJAX).from_filename(
        str(path), resources=dict(RESOURCES))
    sources = re.findall(r'<script src="([^"]*)"', page)
    loaded = [src for src in sources if "mathjax" in src.lower()]
    assert len(loaded) == 1 and loaded[0].startswith(MATHJAX + "?config="), sources
    config = loaded[0].split("?config=")[1].split(",")
    # its settings are an inline script the policy allows; none left for MathJax to eval
    assert student_work.MATHJAX_SETTINGS in page and "text/x-mathjax-config" not in page
    clean = student_work._CleanExporter(exporter, MATHJAX)
    clean.from_filename(str(path), resources=dict(RESOURCES))
    assert student_work.inline_hashes(student_work.MATHJAX_SETTINGS) <= clean.hashes
    static = Path(jupyter_server_mathjax.__file__).parent / "static"
    assert (static / "MathJax.js").is_file()
    assert all((static / "config" / f"{name}.js").is_file() for name in config), config


def test_the_policy_would_stop_the_students_scripts_unsanitized(exporter, tmp_path):
    """The policy's hashes come from the template: unsanitized, the same page's student
    scripts and handlers are not among them."""
    path = tmp_path / "exit-test.ipynb"
    path.write_text(json.dumps(attack_notebook()))
    clean = student_work._CleanExporter(exporter, MATHJAX)
    clean.from_filename(str(path), resources=dict(RESOURCES))
    raw, _ = exporter.from_notebook_node(nbformat.read(path, 4), resources=dict(RESOURCES))
    assert runnable(raw), "the attack notebook carries no script: the test proves nothing"
    students = student_work.inline_hashes(raw) - clean.hashes
    assert students, "no inline script of the student's in the raw page"
    policy = student_work.page_policy("http://h", "/user/prof/", clean.hashes, lab=False)
    script_src = next(p for p in policy.split("; ") if p.startswith("script-src")).split()
    assert not set(script_src) & students
    assert "'unsafe-inline'" not in script_src and "'self'" not in script_src


def test_a_grade_id_nbgrader_refuses_makes_a_plain_cell():
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {"nbgrader": {"grade_id": 'a" onclick="x'}}},
        {"cell_type": "markdown", "metadata": {"nbgrader": {"grade_id": "q6-written"}}}]}
    cells = student_work._plain_grade_ids(nb)["cells"]
    assert cells[0]["metadata"]["nbgrader"] == {}
    assert cells[1]["metadata"]["nbgrader"] == {"grade_id": "q6-written"}


def test_inline_hashes_finds_scripts_and_handlers_only():
    page = ('<script>a()</script><script src="x.js"></script>'
            '<script type="application/json">{"a": 1}</script><b onclick="b()">x</b>')
    assert student_work.inline_hashes(page) == {
        student_work._sha256("a()"), student_work._sha256("b()")}
