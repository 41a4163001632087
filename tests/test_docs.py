"""The documentation: docs/ builds as a site with no warning (every internal link and heading
anchor resolves), and every ``make`` verb that the README, docs/ or the book names exists."""

import re
import subprocess
import sys

import pytest

from support import ROOT

PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "start.md",
         *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "book").glob("*.md"))]
INLINE = re.compile(r"`make ([a-z][a-z-]*)")  # `make VERB ...` in inline code
FENCED = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
LINE = re.compile(r"^\s*(?:\$ )?make ([a-z][a-z-]*)", re.MULTILINE)  # in a code block


def verbs_named() -> dict[str, str]:
    """Each verb the pages name, with the first page that names it."""
    found: dict[str, str] = {}
    for page in PAGES:
        text = page.read_text()
        named = INLINE.findall(text)
        for block in FENCED.finditer(text):
            named += LINE.findall(block.group(0))
        for verb in named:
            found.setdefault(verb, page.name)
    return found


def test_the_docs_build_strictly(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(ROOT / "docs"), str(tmp_path / "docs")],
        capture_output=True, text=True, check=False, timeout=600)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    assert (tmp_path / "docs" / "instructor.html").is_file()


def test_a_broken_link_fails_the_docs_build(tmp_path):
    docs = tmp_path / "src"
    docs.mkdir()
    (docs / "conf.py").write_text((ROOT / "docs" / "conf.py").read_text())
    (docs / "index.md").write_text("# Home\n\n[a guide](nowhere.md)\n")
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(docs), str(tmp_path / "out")],
        capture_output=True, text=True, check=False, timeout=600)
    assert build.returncode != 0 and "nowhere.md" in build.stderr


def test_the_pages_name_the_main_verbs():
    assert {"lab", "check", "grade", "hub", "test", "test-fast", "docs"} <= set(verbs_named())


@pytest.mark.parametrize("verb", sorted(verbs_named()))
def test_every_make_verb_the_pages_name_exists(verb):
    dry = subprocess.run(["make", "-n", verb], cwd=ROOT, capture_output=True, text=True,
                         check=False, timeout=120)
    assert dry.returncode == 0, (verb, verbs_named()[verb], dry.stderr[-2000:])
