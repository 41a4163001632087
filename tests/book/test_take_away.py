"""What a reader of the HTML book takes away, and where the course is: the repository named
in the pages from _config.yml, each chapter's notebook, the whole PDF, a Binder launch with
the files BinderHub reads (tools/book/take_away.py, binder/)."""

from __future__ import annotations

import html
import json
import os
import pathlib
import re
import subprocess
import types
import urllib.parse

import jupytext
import nbformat
import yaml

from tools.book import take_away
from tools.lab import launch

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
URL = CONFIG["repository"]["url"]
CHAPTER = "book/ch01-matrix-vector"


def test_the_start_page_and_chapter_0_name_the_repository_of_the_config(built_book):
    for name in ("book/index.html", "book/ch00-how-to-use.html"):
        text = (built_book / name).read_text()
        assert f'href="{URL}"' in text, name
        shown = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)))
        assert f"git clone {URL}" in shown, name
        assert "{{" not in shown, name
    # and the repository button of every page
    assert f'href="{URL}"' in (built_book / f"{CHAPTER}.html").read_text()


def test_a_chapter_offers_its_notebook_and_a_binder_launch(built_book):
    text = (built_book / f"{CHAPTER}.html").read_text()
    org_repo = urllib.parse.urlsplit(URL).path.strip("/")
    binder = CONFIG["launch_buttons"]["binderhub_url"].rstrip("/")
    branch = CONFIG["repository"]["branch"]
    assert f"{binder}/v2/gh/{org_repo}/{branch}?urlpath=lab/tree/{CHAPTER}.md" in text
    assert f"_sources/{CHAPTER}.ipynb" in text and "print page" in text
    notebook = json.loads((built_book / "_sources" / f"{CHAPTER}.ipynb").read_text())
    assert notebook["nbformat"] == 4 and len(notebook["cells"]) > 5
    # the chapter's own cells, code and prose
    chapter = jupytext.read(ROOT / f"{CHAPTER}.md")
    code = [c.source for c in chapter.cells if c.cell_type == "code"]
    assert ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"] == code
    assert any("figures.get(" in c for c in code)
    # with the build's outputs: a figure's picture (no widget view, whose state is gone)
    outputs = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    pictures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert pictures and not any(take_away.WIDGET_VIEW in o.get("data", {}) for o in outputs)


def test_the_repository_names_are_substituted_from_the_theme_option():
    config = types.SimpleNamespace(html_theme_options={"repository_url": "https://x.org/a/b"},
                                   myst_substitutions={"kept": "1"})
    app = types.SimpleNamespace(outdir="/nonexistent/_build/html")
    take_away.substitutions(app, config)
    assert config.myst_substitutions == {
        "kept": "1", "repository_url": "[https://x.org/a/b](https://x.org/a/b)",
        "clone_command": "`git clone https://x.org/a/b`"}
    assert config.take_away_pdf == ""
    config = types.SimpleNamespace(html_theme_options={}, myst_substitutions=None)
    take_away.substitutions(app, config)
    assert config.myst_substitutions["clone_command"] == take_away.NO_ADDRESS


def _menu(outdir: pathlib.Path) -> list[dict]:
    app = types.SimpleNamespace(outdir=str(outdir))
    buttons = [{"label": "download-source-button", "text": ".md"},
               {"label": "download-pdf-button", "text": ".pdf"}]
    context = {"header_buttons": [{"label": "download-buttons", "buttons": buttons}],
               "pathto": lambda name, resource: f"../{name}"}
    take_away.download_menu(app, "book/ch01", "page.html", context, None)
    return context["header_buttons"][0]["buttons"]


def test_the_whole_pdf_is_copied_and_in_the_download_menu_when_it_was_built(tmp_path):
    site = tmp_path / "_build" / "html"
    site.mkdir(parents=True)
    app = types.SimpleNamespace(outdir=str(site), builder=types.SimpleNamespace(format="html"))
    take_away.copy_pdf(app)
    assert [b["text"] for b in _menu(site)] == [".md", "print page"]
    pdf = tmp_path / "_build" / "latex" / take_away.PDF_NAME
    pdf.parent.mkdir()
    pdf.write_bytes(b"%PDF-1.5")
    config = types.SimpleNamespace(html_theme_options={}, myst_substitutions={})
    take_away.substitutions(app, config)
    assert config.take_away_pdf  # a new PDF: every page is written again
    take_away.copy_pdf(app)
    assert (site / take_away.PDF_NAME).read_bytes() == b"%PDF-1.5"
    links = _menu(site)
    assert links[-1]["url"] == f"../{take_away.PDF_NAME}" and "pdf" in links[-1]["text"]
    pdf.unlink()  # no PDF any more: no page links the old one
    take_away.copy_pdf(app)
    assert not (site / take_away.PDF_NAME).exists()
    assert [b["text"] for b in _menu(site)] == [".md", "print page"]


def test_a_notebook_page_offers_its_executed_notebook_without_a_launch_button(tmp_path):
    site = tmp_path / "_build" / "html"
    executed = tmp_path / "_build" / "jupyter_execute" / "book" / "ch01.ipynb"
    executed.parent.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    nbformat.write(notebook, executed)
    env = types.SimpleNamespace(metadata={"book/ch01": {"kernelspec": {}}, "book/plain": {}})
    config = types.SimpleNamespace(nb_execution_cache_path="_build/no-cache")
    app = types.SimpleNamespace(outdir=str(site), srcdir=str(tmp_path), env=env, config=config)
    context: dict = {}
    take_away.offer_notebook(app, "book/ch01", "page.html", context, object())
    take_away.write_notebook(app, "book/ch01", "page.html", context, object())
    assert context["ipynb_source"] == "book/ch01.ipynb"
    # no cache to take outputs from: the cells as they are
    copied = nbformat.read(site / "_sources" / "book" / "ch01.ipynb", as_version=4)
    assert [c.source for c in copied.cells] == ["1 + 1"] and copied.cells[0].outputs == []
    plain: dict = {}
    take_away.offer_notebook(app, "book/plain", "page.html", plain, object())
    assert "ipynb_source" not in plain


def test_binder_builds_the_course_environment_and_opens_the_courses_lab():
    binder = ROOT / "binder"
    assert (binder / "requirements.txt").read_text().split() == ["-r", "../requirements.txt"]
    assert (binder / "runtime.txt").read_text().strip().startswith("python-3.1")
    post = (binder / "postBuild").read_text()
    assert "pip install --no-deps -e ." in post and "launch.environment('student')" in post
    assert os.access(binder / "postBuild", os.X_OK) and os.access(binder / "start", os.X_OK)
    base = {"PATH": "/usr/bin:/bin"}
    shown = subprocess.run([str(binder / "start"), "env"], capture_output=True, text=True,
                           env=base, timeout=30, check=True).stdout
    started = dict(line.split("=", 1) for line in shown.splitlines() if "=" in line)
    # the paths `make lab` gives a student without an exchange (tools/lab/launch.py's
    # environment, which also writes the page configuration: postBuild calls it)
    lab = {"JUPYTER_CONFIG_PATH": f"{launch.GENERATED / 'student'}:{launch.CONFIG}",
           "JUPYTER_PATH": str(launch.CONFIG), "PYTHONPATH": str(launch.ROOT),
           "MEMCOURSE_ROLE": "student", "MEMCOURSE_EXCHANGE_FOUND": "0"}
    assert {key: started[key] for key in lab} == lab
