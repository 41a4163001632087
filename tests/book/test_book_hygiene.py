"""Every chapter is a MyST notebook that Jupyter Book will execute, listed in the toc."""

import json
import pathlib
import re

import pytest
import yaml

from tools.book.toc import toc_files

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.md"))


def front_matter(path):
    text = path.read_text()
    match = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert match, f"{path.name} has no front matter"
    return yaml.safe_load(match.group(1))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_front_matter_makes_it_an_executed_notebook(path):
    meta = front_matter(path)
    representation = meta["jupytext"]["text_representation"]
    assert representation["format_name"] == "myst"
    assert meta["kernelspec"]["name"] == "python3"


def test_every_chapter_is_in_the_toc_and_every_toc_entry_exists():
    listed = toc_files()
    assert len(listed) == len(set(listed)), "a chapter is listed twice"
    on_disk = {f"book/{p.stem}" for p in CHAPTERS}
    assert on_disk == set(listed)


def test_no_outputs_committed():
    assert not list((ROOT / "book").rglob("*.ipynb")), "chapters are .md notebooks, without outputs"


def test_sessions_follow_the_curriculum():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    sessions = [p["caption"] for p in toc["parts"] if p["caption"].startswith("Session")]
    numbers = [int(re.match(r"Session (\d)", s).group(1)) for s in sessions]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapters_import_memkit_instead_of_defining_helpers(path):
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", path.read_text(), re.S)
    for cell in cells:
        assert not re.search(r"^\s*def \w+", cell, re.M), f"{path.name} defines a function: move it to memkit"


#: a word followed by the same word in code font ("the stream `stream`"): on paper, where
#: the code font hardly shows, it reads as a slip
DOUBLED_INTO_CODE = re.compile(r"\b(\w{3,})\s+`\1\b", re.IGNORECASE)


def test_no_word_is_doubled_into_code_font():
    sources = {path.name: path.read_text() for path in CHAPTERS}
    for notebook in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        sources[str(notebook.relative_to(ROOT))] = "\n".join(
            "".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    doubled = [(name, m.group(0)) for name, text in sources.items() for m in DOUBLED_INTO_CODE.finditer(text)]
    assert not doubled, doubled
