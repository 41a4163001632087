"""A student in the course's JupyterLab, in a real browser (end to end).

The lab `make lab` opens (tools/lab/launch.py, as a student) runs on a free port of 127.0.0.1;
Debian's chromium (Playwright) opens every chapter of _toc.yml with the Jupytext viewer,
runs all its cells and checks: no error output, no raw MyST markup left in what the
reader sees (boxes, badges and links drawn), every figure's widget present and drawn at
the width shown with its prompt above the controls, and for every figure each control,
changed with the keyboard, changes the picture and the reading (a focused slider shows a
focus ring). Then every chapter is saved and closed and git sees no change. Before that, a
chapter opened and left alone is not marked modified (a hub would ask "leave page?").
Last, an assignment notebook is opened and validated with nbgrader's button.
The median time from key press to new picture per figure is printed (`make bench`
prints it too, from benchmarks/lab_figures.py); screenshots go to _build/screenshots/.
"""

from __future__ import annotations

import hashlib
import re
import statistics
import urllib.parse

import pytest
from playwright.sync_api import expect

from memkit import figures
from tools.common import chromium
from support import lab_browser
from tools.book.toc import toc_files
from support.lab_browser import ERRORS, FIGURES, OPEN_AND_RUN, RENDERED_MARKDOWN, ROOT, SAVE_AND_CLOSE

# one worker runs every module that starts the course's lab or writes its config (conftest.py)
pytestmark = pytest.mark.xdist_group("lab")

SHOTS = ROOT / "_build" / "screenshots"
SCREENSHOT_CHAPTER = "book/ch03-outer-product-memory.md"
ASSIGNMENT = "exercises/session-3/exit-test.ipynb"

# what MyST markup looks like when it is shown as text instead of drawn
RAW_MYST = re.compile(
    r"\{(?:term|ref|numref|doc|eq|bdg-[a-z-]+|span|glossary|glue(?::[a-z]+)?|admonition|code-cell)\}`?"
    r"|^\s*:(?:class|tags|label):|^\s*\([a-z][\w-]+\)=\s*$|^```",  # a label, not f(q)=
    re.MULTILINE,
)


def toc_chapters() -> list[str]:
    return [f"{f}.md" for f in toc_files(ROOT) if (ROOT / f"{f}.md").exists()]


CHAPTERS = toc_chapters()


@pytest.fixture(scope="module")
def server():
    lab = lab_browser.LabServer("student")
    yield lab
    lab.stop()


@pytest.fixture(scope="module")
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = chromium.launch_browser(playwright)
        page = lab_browser.open_lab(browser, server)
        yield page
        browser.close()


@pytest.fixture(scope="module")
def before():
    return lab_browser.git_status(), {c: hashlib.sha256((ROOT / c).read_bytes()).hexdigest()
                                       for c in CHAPTERS}


TIMES: dict[str, list[float]] = {}

# open a chapter, wait for its kernel to answer, and say whether JupyterLab thinks it changed
OPENED_CLEAN = """async ([path, factory]) => {
  const app = window.jupyterapp;
  const widget = await app.commands.execute('docmanager:open', {path, factory});
  await widget.context.ready;
  await widget.sessionContext.ready;
  for (let i = 0; i < 600 && !widget.sessionContext.session?.kernel; i++)
    await new Promise(r => setTimeout(r, 100));
  await widget.sessionContext.session.kernel.info;  // the kernel's language_info is in
  await new Promise(r => setTimeout(r, 1000));
  const dirty = widget.context.model.dirty;
  await widget.sessionContext.shutdown();
  widget.dispose();
  return dirty;
}"""

FOCUS_RING = """() => {
  const e = document.activeElement, s = getComputedStyle(e);
  return {handle: e.classList.contains('noUi-handle'), style: s.outlineStyle, width: s.outlineWidth};
}"""


@pytest.mark.parametrize("path, factory", [
    ("book/index.md", "Jupytext Notebook"), (SCREENSHOT_CHAPTER, "Jupytext Notebook"),
    ("start.md", "Jupytext Notebook"),  # the course's start page, and a released assignment
    ("exercises/session-3/exit-test.ipynb", "Notebook")])
def test_a_notebook_opened_is_not_modified(page, path, factory):
    assert page.evaluate(OPENED_CLEAN, [path, factory]) is False, f"{path} is marked modified on opening"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_reads_runs_and_saves_unchanged(page, before, chapter):
    opened = page.evaluate(OPEN_AND_RUN, [chapter, "Jupytext Notebook", True])
    assert opened["factory"] == "Jupytext Notebook"
    assert opened["kernel"] == "python3"
    wid = opened["id"]
    assert page.evaluate(ERRORS, wid) == [], f"{chapter}: cells with errors"
    validate = page.locator(f"#{wid} .jp-Toolbar-item[data-jp-item-name='runAll']")
    # hidden by CSS once the chapter's first cell is drawn (it is drawn again after Run All)
    expect(validate, f"{chapter}: nbgrader's Validate on a chapter").to_be_hidden(timeout=15_000)

    drawn = page.evaluate(RENDERED_MARKDOWN, wid)
    undrawn = [d["index"] for d in drawn if d["text"] is None]
    assert not undrawn, f"{chapter}: markdown cells not drawn {undrawn}"
    raw = [(d["index"], m.group(0)) for d in drawn for m in [RAW_MYST.search(d["text"])] if m]
    assert not raw, f"{chapter}: MyST markup shown as text {raw[:5]}"
    dead = [(text, href) for d in drawn for text, href in d["links"] if href in ("", "#")]
    assert not dead, f"{chapter}: links that lead nowhere {dead[:8]}"
    # links to other chapters open a file of the course (a click opens it in the lab)
    files = {urllib.parse.unquote(urllib.parse.urlsplit(href).path).split("/files/", 1)[1]
             for d in drawn for _, href in d["links"] if "/files/" in href}
    missing = sorted(f for f in files if not (ROOT / f).is_file())
    assert not missing, f"{chapter}: links to files that do not exist {missing}"
    source = (ROOT / chapter).read_text()
    if "{bdg-" in source:
        assert sum(d["badges"] for d in drawn) >= source.count("{bdg-"), f"{chapter}: badges"
    if "```{admonition}" in source:
        assert sum(d["boxes"] for d in drawn) > 0, f"{chapter}: no box drawn"

    for figure in page.evaluate(FIGURES, wid):
        name = figure["last"]
        assert figure["image"], f"{chapter}: {name} shows no widget"
        assert figure["natural"] >= 1.4 * figure["width"] > 0, f"{name}: picture not high-density"
        prompt = page.locator(f"#{wid} .jp-Cell").nth(figure["index"]).locator(".memfig-prompt")
        figure_id = re.search(r'figures\.get\("([a-z0-9-]+)"\)', name).group(1)
        assert prompt.text_content() == figures.get(figure_id).prompt, name
        controls = lab_browser.figure_controls(page, wid, figure["index"])
        assert controls, f"{name}: no control"
        for kind, position in controls:
            for _ in range(3):  # three presses, for a median
                seen = lab_browser.press_control(page, wid, figure["index"], kind, position)
                assert seen["changed"], f"{name}: {kind} {position} left the picture as it was"
                assert seen["reading_changed"], f"{name}: {kind} {position} left the reading"
                if seen["ms"] is not None:
                    TIMES.setdefault(name, []).append(seen["ms"])
            if kind == "slider":  # the handle just moved by the keyboard shows its focus
                ring = page.evaluate(FOCUS_RING)
                assert ring["handle"] and ring["style"] != "none" and ring["width"] != "0px", ring

    if chapter == SCREENSHOT_CHAPTER:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.evaluate("""(id) => { const w = Array.from(window.jupyterapp.shell.widgets('main'))
            .find(w => w.id === id); w.content.widgets[0].node.scrollIntoView(); }""", wid)
        page.wait_for_timeout(500)
        page.screenshot(path=str(SHOTS / "lab-ch03.png"))
        page.evaluate("""(id) => { const w = Array.from(window.jupyterapp.shell.widgets('main'))
            .find(w => w.id === id); const c = w.content.widgets.find(c => c.model.type === 'code'
            && /figures\\.get/.test(c.model.sharedModel.getSource()));
            c.node.scrollIntoView({block: 'center'}); }""", wid)
        page.wait_for_timeout(500)
        page.screenshot(path=str(SHOTS / "lab-ch03-figure.png"))

    dirty = page.evaluate(SAVE_AND_CLOSE, wid)
    assert not dirty
    digest = hashlib.sha256((ROOT / chapter).read_bytes()).hexdigest()
    assert digest == before[1][chapter], f"{chapter} changed on disk by opening, running, saving"


def test_a_chapter_shows_the_screens_passage_and_hides_the_printed_one(page):
    """A passage written twice ({only} html, {only} latex): the lab draws the screen's
    (the live figure beside it) and not the printed book's."""
    chapter = "book/ch01-matrix-vector.md"
    source = (ROOT / chapter).read_text()
    screen, printed = (" ".join(source.split(f"````{{only}} {kind}\n", 1)[1].split("````", 1)[0].split())
                       for kind in ("html", "latex"))
    opened = page.evaluate(OPEN_AND_RUN, [chapter, "Jupytext Notebook", False])
    drawn = " ".join(" ".join((d["text"] or "").split()) for d in page.evaluate(RENDERED_MARKDOWN, opened["id"]))
    assert "Drag it and watch" in screen and "Drag it and watch" in drawn
    assert "the live figure offers" in printed and "the live figure offers" not in drawn
    assert not page.evaluate(SAVE_AND_CLOSE, opened["id"])


def test_git_sees_no_change_after_the_chapters(page, before):
    assert lab_browser.git_status() == before[0]


def test_key_press_to_new_picture(page):
    """A benchmark, not a pass/fail test (target median < 60 ms): printed per figure."""
    print()
    for name, times in sorted(TIMES.items()):
        print(f"  {name:40} median {statistics.median(times):6.0f} ms over {len(times)} presses")


@pytest.fixture
def assignment_kept():
    """nbgrader's Validate saves the notebook first: put the released file back after."""
    released = (ROOT / ASSIGNMENT).read_bytes()
    yield
    (ROOT / ASSIGNMENT).write_bytes(released)


def test_an_assignment_validates_in_the_students_lab(page, server, assignment_kept):
    opened = page.evaluate(OPEN_AND_RUN, [ASSIGNMENT, "Notebook", False])
    toolbar = page.locator(f"#{opened['id']} .jp-Toolbar-item[data-jp-item-name='runAll']")
    toolbar.get_by_text("Validate").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=120_000)
    text = dialog.inner_text()
    # the released notebook is not answered: nbgrader lists the cell that fails
    assert "Validation Results" in text, text[:300]
    assert "JSONDecodeError" not in text and "does not exist" not in text, text[:500]
    assert "failed" in text or "Success" in text, text[:500]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "lab-validate.png"))
    page.locator(".jp-Dialog button").last.click()
    # a student's lab: no instructor tools, no question about Jupyter news
    assert page.get_by_text("Jupyter news").count() == 0
    assert page.get_by_text("Create Assignment").count() == 0
    assert page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").count() == 0


def test_formgrader_only_for_an_instructor(server):
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{server.url}/formgrader?token={server.token}", timeout=30)
    assert refused.value.code == 404
    instructor = lab_browser.LabServer("instructor")  # make lab ROLE=instructor
    try:
        with urllib.request.urlopen(f"{instructor.url}/formgrader?token={instructor.token}",
                                    timeout=60) as response:
            assert response.status == 200
    finally:
        instructor.stop()
