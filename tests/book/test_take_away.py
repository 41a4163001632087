"""What a reader of the HTML book takes away, and where the course is: the repository named
in the pages from _config.yml, each chapter's notebook, the whole PDF, a Binder launch with
the files BinderHub reads, a favicon (tools/book/take_away.py, binder/)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import types
import urllib.parse

import yaml

from tools.book import take_away

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
URL = CONFIG["repository"]["url"]
CHAPTER = "book/ch01-matrix-vector"


def test_the_start_page_and_chapter_0_name_the_repository_of_the_config(built_book):
    for name in ("book/index.html", "book/ch00-how-to-use.html"):
        text = (built_book / name).read_text()
        assert f'href="{URL}"' in text, name
        assert f"git clone {URL}" in text, name
        assert "{{" not in text, name
    # and the repository button of every page
    assert f'href="{URL}"' in (built_book / f"{CHAPTER}.html").read_text()


def test_a_chapter_offers_its_notebook_and_a_binder_launch(built_book):
    text = (built_book / f"{CHAPTER}.html").read_text()
    org_repo = urllib.parse.urlsplit(URL).path.strip("/")
    binder = CONFIG["launch_buttons"]["binderhub_url"].rstrip("/")
    branch = CONFIG["repository"]["branch"]
    assert f"{binder}/v2/gh/{org_repo}/{branch}?urlpath=lab/tree/{CHAPTER}" in text
    assert f"_sources/{CHAPTER}.ipynb" in text
    notebook = json.loads((built_book / "_sources" / f"{CHAPTER}.ipynb").read_text())
    assert notebook["nbformat"] == 4 and len(notebook["cells"]) > 5
    assert any("figures.get(" in "".join(c["source"]) for c in notebook["cells"])


def test_every_page_has_a_favicon(built_book):
    for page in sorted((built_book / "book").glob("*.html")):
        assert 'rel="icon"' in page.read_text(), page
    assert (built_book / "_static" / "favicon.svg").is_file()


def _menu(outdir: pathlib.Path) -> list[dict]:
    app = types.SimpleNamespace(outdir=str(outdir))
    buttons = [{"label": "download-source-button", "text": ".md"},
               {"label": "download-pdf-button", "text": ".pdf"}]
    context = {"header_buttons": [{"label": "download-buttons", "buttons": buttons}],
               "pathto": lambda name, resource: f"../{name}"}
    take_away.download_menu(app, "book/ch01", "page.html", context, None)
    return context["header_buttons"][0]["buttons"]


def test_the_whole_pdf_is_in_the_download_menu_when_it_was_built(tmp_path):
    without = _menu(tmp_path)
    assert [b["text"] for b in without] == [".md", "print page"]
    (tmp_path / take_away.PDF_NAME).write_bytes(b"%PDF-1.5")
    links = _menu(tmp_path)
    assert links[-1]["url"] == f"../{take_away.PDF_NAME}" and "pdf" in links[-1]["text"]


def test_binder_builds_the_course_environment_and_opens_the_courses_lab(tmp_path):
    binder = ROOT / "binder"
    requirements = (binder / "requirements.txt").read_text().split()
    assert requirements == ["-r", "../requirements.txt"]
    post = (binder / "postBuild").read_text()
    assert "pip install --no-deps -e ." in post and "launch.environment('student')" in post
    shown = subprocess.run([str(binder / "start"), "env"], capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin"}, timeout=30, check=True).stdout
    env = dict(line.split("=", 1) for line in shown.splitlines() if "=" in line)
    assert env["JUPYTER_CONFIG_PATH"].split(":")[1] == str(ROOT / "jupyter")
    assert env["JUPYTER_PATH"] == str(ROOT / "jupyter") and env["PYTHONPATH"] == str(ROOT)
