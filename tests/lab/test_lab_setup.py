"""make lab: the course's JupyterLab (tools/lab/launch.py, jupyter/) opens chapters as notebooks
drawn as the book, saves them unchanged, and shows a student a student's tools."""

import importlib.util
import json
import pathlib
import sys

import jupytext
import nbformat
import pytest
from jupyterlab_server.settings_utils import _get_overrides

from tools.lab import contents, launch

# one worker runs every module that starts the course's lab or writes its config (conftest.py)
pytestmark = pytest.mark.xdist_group("lab")

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))


@pytest.fixture
def course_env(monkeypatch, tmp_path):
    env = launch.environment("student", base={})
    for name in ("JUPYTER_CONFIG_PATH", "JUPYTER_PATH"):
        monkeypatch.setenv(name, env[name])
    return env


def test_jupytext_viewer_no_news_and_all_cells_rendered(course_env):
    overrides, error = _get_overrides(str(ROOT / "no-app-settings"))
    assert not error
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook"
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    tracker = overrides["@jupyterlab/notebook-extension:tracker"]
    # every cell in the page (links and the browser test find them all), but the ones out
    # of view are not laid out or painted when a figure's picture changes
    assert tracker["windowingMode"] == "contentVisibility"
    # the busy/idle indicator lives in the status bar: in the notebook's toolbar each
    # change of kernel status made the toolbar re-measure the whole page (about 8 ms of
    # every key press on a figure)
    assert tracker["kernelStatus"] == {"showOnStatusBar": True, "showProgress": True}


def test_the_kernel_is_named_as_the_chapters_front_matter_says(course_env):
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    front = jupytext.read(ROOT / "book" / "ch03-outer-product-memory.md").metadata["kernelspec"]
    assert spec.display_name == front["display_name"]


def test_a_student_sees_no_instructor_tools_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCOURSE_EXCHANGE", str(tmp_path / "no-exchange"))
    student = launch.page_config("student", exchange=False)["disabledExtensions"]
    assert "@jupyter/nbgrader:create-assignment" in student
    assert "@jupyter/nbgrader:formgrader" in student
    assert launch.ASSIGNMENT_LIST in student  # no exchange: no tab that can only say so
    assert launch.MENU in student
    assert "@jupyter/nbgrader:validate-assignment" not in student
    assert launch.ASSIGNMENT_LIST not in launch.page_config("student", exchange=True)["disabledExtensions"]
    assert launch.page_config("instructor", exchange=False)["disabledExtensions"] == {}
    env = launch.environment("student", base={"MEMCOURSE_EXCHANGE": str(tmp_path / "no-exchange")})
    written = pathlib.Path(env["JUPYTER_CONFIG_PATH"].split(":")[0]) / "labconfig/page_config.json"
    assert json.loads(written.read_text())["disabledExtensions"] == student
    # the server's own environment decides, not the one of the process that writes it
    (tmp_path / "exchange").mkdir()
    env = launch.environment("student", base={"MEMCOURSE_EXCHANGE": str(tmp_path / "exchange")})
    assert env["MEMCOURSE_EXCHANGE_FOUND"] == "1"
    assert launch.ASSIGNMENT_LIST not in json.loads(written.read_text())["disabledExtensions"]


def test_lab_extensions_for_jupytext_myst_and_widgets_are_installed():
    extensions = pathlib.Path(sys.prefix) / "share/jupyter/labextensions"
    assert (extensions / "jupyterlab-jupytext").is_dir()
    assert (extensions / "jupyterlab-myst").is_dir()
    assert (extensions / "@jupyter-widgets" / "jupyterlab-manager").is_dir()
    assert importlib.util.find_spec("ipywidgets") is not None


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_lab_view_and_back_is_the_chapter(path):
    nb = jupytext.read(path)
    shown = contents.lab_view(json.loads(nbformat.writes(nb)), f"book/{path.name}")
    raw = "\n".join(c.source for c in shown.cells if c.cell_type == "markdown")
    assert "{bdg-" not in raw  # badges become spans the lab draws
    back = contents.book_view(json.loads(nbformat.writes(shown)), f"book/{path.name}")
    assert contents.same_text(back, nb)


def test_refs_to_other_chapters_become_links_and_edits_come_back_as_refs():
    known = contents.labels()
    shown = contents.to_lab("See {ref}`Chapter 4 <ch04>` and {bdg-info-line}`cited`.",
                                "ch03-outer-product-memory.md", known)
    assert "[Chapter 4](ch04-careful-writes.md#ch04" in shown
    assert "{span .bdg-info-line}`cited`" in shown
    edited = shown.replace("See", "Read")
    assert contents.to_book(edited) == "Read {ref}`Chapter 4 <ch04>` and {bdg-info-line}`cited`."


def test_a_glued_number_shows_as_its_name_in_the_lab_and_comes_back_as_glue():
    # the lab's MyST renderer has no glue role: left as it is, the student reads the markup
    book = "predicted {glue:text}`ex1_hebbian_predicted:.2f`, measured {glue:text}`ex1_m:.2f`."
    shown = contents.to_lab(book, "ch17-exercises.md", contents.labels())
    assert "{glue" not in shown
    assert "{span .memcourse-glue}`ex1_hebbian_predicted:.2f`" in shown
    assert contents.to_book(shown.replace("predicted", "expected", 1)) == book.replace(
        "predicted", "expected", 1)


def test_a_passage_for_print_is_a_div_the_lab_hides_and_comes_back_as_only():
    # the lab's MyST renderer has no `only`: the screen's passage shows, the printed one is
    # a div of a class the lab's CSS hides
    source = (ROOT / "book" / "ch01-matrix-vector.md").read_text()
    cell = source[source.index("````{only} html"):source.index("```{code-cell}", source.index("````{only} latex"))]
    shown = contents.to_lab(cell, "ch01-matrix-vector.md", contents.labels())
    assert "{only}" not in shown
    assert shown.count("````{div}\n:class: memcourse-only-html\n") == 1
    assert shown.count("````{div}\n:class: memcourse-only-latex\n") == 1
    assert contents.to_book(shown) == cell
    css = (ROOT / "jupyter" / "custom" / "custom.css").read_text()
    rule = css[css.index(".jp-Notebook .memcourse-only-latex"):]
    assert rule[:rule.index("}")].split("{")[1].split() == ["display:", "none;"]


def test_terms_of_a_chapter_get_their_glossary_entries():
    nb = jupytext.read(ROOT / "book" / "ch03-outer-product-memory.md")
    cell = contents.glossary_cell(nb, "ch03-outer-product-memory.md", contents.labels())
    assert "```{glossary}" in cell.source
    for term in contents.terms_used(nb):
        assert f"\n{term}\n: " in cell.source
    assert "(not in the glossary yet)" not in cell.source


def test_keep_layout_restores_front_matter_and_option_lines():
    original = (ROOT / "book" / "ch05-mlp-memory.md").read_text()
    nb = jupytext.reads(original, fmt="md:myst")
    nb.metadata["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
    written = jupytext.writes(nb, fmt="md:myst")
    assert written != original
    assert contents.keep_layout(written, original) == original


def test_progress_line_sweeps_and_counts_seconds():
    from memkit import progress

    first, later = progress.bar(2.0), progress.bar(3.5)
    assert first.startswith("running [") and first.endswith(" 2.0 s")
    assert later.endswith(" 3.5 s")
    assert first.count("■") == later.count("■") == 4
    assert first.index("■") != later.index("■")  # the bar moves
    with pytest.raises(ValueError, match="elapsed"):
        progress.bar(-1)


def test_progress_shows_only_after_the_delay(monkeypatch):
    from memkit import progress

    shown = []

    class Handle:
        def update(self, data, raw):
            shown.append(data["text/plain"])

    def display(data, raw, display_id):
        shown.append(data["text/plain"])
        return Handle()

    monkeypatch.setattr("IPython.display.display", display)
    quick = progress._Watch(delay=0.3)
    quick.start()
    quick.stop()
    assert shown == []
    slow = progress._Watch(delay=0.05)
    slow.start()
    import time

    time.sleep(0.3)
    slow.stop()
    assert shown[0].startswith("running [") and shown[-1] == ""


def test_contents_manager_saves_nothing_unless_a_cell_was_edited(tmp_path):
    import asyncio
    import difflib
    import shutil

    chapter = "ch05-mlp-memory.md"
    (tmp_path / "book").mkdir()
    shutil.copy(ROOT / "book" / chapter, tmp_path / "book" / chapter)
    shutil.copy(contents.GLOSSARY, tmp_path / "book" / contents.GLOSSARY_NAME)
    manager = contents.CourseContentsManager(root_dir=str(tmp_path))
    path = f"book/{chapter}"
    original = (tmp_path / path).read_bytes()

    async def round_trip(edit=None):
        model = await manager.get(path, content=True)
        nb = model["content"]
        assert nb.cells[0].metadata[contents.MARK] == "generated"  # the lab's note
        nb.metadata["kernelspec"]["display_name"] = "Python 3 (ipykernel)"  # what a kernel does
        if edit:
            edit(nb)
        await manager.save({"type": "notebook", "format": "json", "content": nb}, path)

    asyncio.run(round_trip())
    assert (tmp_path / path).read_bytes() == original

    def edit(nb):  # the student adds a word to a paragraph that holds a badge
        cell = next(c for c in nb.cells if "{span .bdg-" in c.source)
        cell.source = cell.source.replace("{span .bdg-", "Note: {span .bdg-", 1)

    asyncio.run(round_trip(edit))
    after = (tmp_path / path).read_text().splitlines()
    changed = [line for line in difflib.unified_diff(original.decode().splitlines(), after,
                                                     lineterm="", n=0)
               if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert len(changed) == 2, changed  # one line out, the same line with the edit in
    assert changed[0][1:] == changed[1][1:].replace("Note: ", "", 1)
    assert "Note: {bdg-" in changed[1]


def test_a_students_own_copy_of_the_book_reads_as_the_book(tmp_path):
    """On a hub the chapters are ~/book (the student's copy) and the lab's files are elsewhere:
    the chapter's glossary and labels are those of its own folder, so its terms resolve."""
    import asyncio
    import shutil

    shutil.copytree(ROOT / "book", tmp_path / "book")
    manager = contents.CourseContentsManager(root_dir=str(tmp_path))
    assert contents.BOOK != tmp_path / "book"
    chapter = "ch03-outer-product-memory.md"
    nb = asyncio.run(manager.get(f"book/{chapter}", content=True))["content"]
    terms = contents.terms_used(jupytext.read(ROOT / "book" / chapter))
    last = nb.cells[-1].source
    assert terms and "```{glossary}" in last and "(not in the glossary yet)" not in last
    assert all(f"\n{term}\n: " in last for term in terms)
    # and a .md file that is not beside a glossary is left as Jupytext reads it
    (tmp_path / "notes").mkdir()
    shutil.copy(ROOT / "book" / chapter, tmp_path / "notes" / chapter)
    plain = asyncio.run(manager.get(f"notes/{chapter}", content=True))["content"]
    assert contents.MARK not in plain.cells[0].get("metadata", {})


def test_a_chapter_is_sent_with_the_language_its_kernel_reports():
    """JupyterLab adds language_info to a notebook that has none (and the kernel replaces it
    on starting), which marks a chapter modified before any edit; the chapter is sent with
    what the course's kernel reports (tests/test_lab_browser.py opens one and sees it clean)."""
    from jupyter_client.manager import start_new_kernel

    nb = jupytext.read(ROOT / "book" / "ch03-outer-product-memory.md")
    assert "language_info" not in nb.metadata
    shown = contents.lab_view(json.loads(nbformat.writes(nb)), "book/ch03-outer-product-memory.md")
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        reply = client.kernel_info(reply=True, timeout=30)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert shown.metadata["language_info"] == reply["content"]["language_info"]


def test_a_cell_run_before_the_set_up_cell_says_to_run_it_first(course_env, tmp_path):
    """The course's kernel (memkit.setup_hint): a NameError for a name the notebook's set-up
    cell defines says so; any other NameError is Python's own."""
    import os

    from jupyter_client.manager import KernelManager

    notebook = ROOT / "exercises" / "session-3" / "exit-test.ipynb"
    setup = next(c for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code")
    manager = KernelManager(kernel_name="python3")  # jupyter/kernels/python3 (course_env)
    assert "--ext=memkit.setup_hint" in manager.kernel_spec.argv
    manager.start_kernel(env={**os.environ, "JPY_SESSION_NAME": str(notebook)}, cwd=str(tmp_path))
    client = manager.client()
    client.start_channels()
    errors = []

    def run(code):
        reply = client.execute_interactive(
            code, timeout=60,
            output_hook=lambda m: errors.append(m["content"]) if m["msg_type"] == "error" else None)
        return reply["content"]["status"]

    try:
        client.wait_for_ready(timeout=60)
        assert run("assert np.zeros(2).shape == (2,)") == "error"
        assert errors[-1]["ename"] == "NameError"
        assert "set-up cell defines it" in errors[-1]["evalue"]
        assert "import numpy as np" in errors[-1]["evalue"]
        assert run("spelling_mistake + 1") == "error"
        assert errors[-1]["evalue"] == "name 'spelling_mistake' is not defined"
        assert run("".join(setup["source"])) == "ok"
        assert run("assert np.zeros(2).shape == (2,)") == "ok"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_substitutions_are_filled_in_the_lab_and_come_back_on_saving(tmp_path):
    """Chapter 0 and the session pages name the repository and give computed times through
    MyST substitutions: the lab shows the texts the book's build gives them (none left as
    ``{{ name }}``), a chapter saved unedited is the file, and an edited cell keeps its
    placeholders. A folder that cannot count them (a hub's copy, no _toc.yml) says where
    they are."""
    import yaml

    from tools.book import study_time, take_away

    values = contents.substitutions(ROOT / "book")
    assert values["session_time_3"] == study_time.texts(ROOT)["session_time_3"]
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    assert values["repository_url"] == take_away.address_texts(url)["repository_url"]
    for name in ("ch00-how-to-use.md", "session-3.md", "index.md"):
        nb = jupytext.read(ROOT / "book" / name)
        given = json.loads(nbformat.writes(nb))
        shown = contents.lab_view(given, f"book/{name}")
        text = "\n".join(c.source for c in shown.cells if c.cell_type == "markdown")
        assert "{{" not in text, name
        back = contents.book_view(json.loads(nbformat.writes(shown)), f"book/{name}")
        assert contents.same_text(back, contents._notebook(given)), name
    assert "| **" in text or "Time:**" in text or "git clone" in text
    edited = json.loads(nbformat.writes(contents.lab_view(
        json.loads(nbformat.writes(jupytext.read(ROOT / "book" / "session-3.md"))), "book/session-3.md")))
    cell = next(c for c in edited["cells"] if "**Time:**" in "".join(c["source"]))
    cell["source"] = "".join(cell["source"]) + "\n\nMy plan: two evenings."
    back = contents.book_view(edited, "book/session-3.md")
    saved = next(c.source for c in back.cells if "My plan" in c.source)
    assert "{{ session_time_3 }}" in saved and "**Time:**" not in saved
    # a copy of the chapters alone: a note per name, not the raw placeholder
    (tmp_path / "book").mkdir()
    alone = contents.lab_view(json.loads(nbformat.writes(jupytext.read(ROOT / "book" / "session-3.md"))),
                              "book/session-3.md", book=tmp_path / "book")
    text = "\n".join(c.source for c in alone.cells if c.cell_type == "markdown")
    assert "{{" not in text and "session time 3: on this page of the HTML book" in text
