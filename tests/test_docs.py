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


# a file or folder of the repository as the pages write it, `tools/...`; not one under
# another folder (`../shared/tools/...`, `~/.jupyter/...`, an image's `quay.io/jupyter/...`)
REPO_PATH = re.compile(r"(?<![\w./~-])((?:tests|tools|memkit|benchmarks|solutions|jupyter)"
                       r"/[A-Za-z0-9_./*-]*[A-Za-z0-9_*/])")


def paths_named() -> dict[str, str]:
    """Each repository path the pages name, with the first page that names it; a session's
    placeholder (``session-N``) read as any session."""
    found: dict[str, str] = {}
    for page in [*PAGES, ROOT / "memkit" / "README.md"]:
        for path in REPO_PATH.findall(page.read_text()):
            found.setdefault(path.replace("session-N", "session-*"), page.name)
    return found


def test_paths_named_finds_repository_paths_only():
    text = ("`tests/book/test_pdf.py`, `tools/hub/`. Not `../shared/tools/seed_overlap.py`, "
            "`~/.jupyter/nbgrader_config.py` nor `quay.io/jupyter/base-notebook`.")
    assert REPO_PATH.findall(text) == ["tests/book/test_pdf.py", "tools/hub/"]


def test_every_file_the_pages_name_exists():
    named = paths_named()
    assert len(named) > 40
    missing = [f"{path} ({page})" for path, page in named.items() if not list(ROOT.glob(path))]
    assert not missing, "the pages name files that are not there: " + ", ".join(missing)
