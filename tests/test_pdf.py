"""Build the book as a PDF (Jupyter Book's LaTeX builder, xelatex) and read it back.

The build needs TeX Live, latexmk, xindy, the FreeFont fonts and poppler's tools,
which `make system-deps` installs. It runs once a session, from a clean _build/latex
(a failed build leaves that folder in a state the next one wrongly reports as up to
date), and takes a minute or two.
"""

from __future__ import annotations

import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import unicodedata

import numpy as np
import pytest
import yaml
from PIL import Image

ROOT = pathlib.Path(__file__).resolve().parents[1]
LATEX = ROOT / "_build" / "latex"
PDF = LATEX / "memcourse.pdf"
SHOTS = ROOT / "_build" / "screenshots"
JB = pathlib.Path(sys.executable).with_name("jupyter-book")
TOOLS = ["xelatex", "latexmk", "xindy", "pdftotext", "pdftoppm", "pdfimages", "pdfinfo"]
# exactly figures.get("id") as a cell's call: the figure in its default state
DEFAULT_FIGURE = re.compile(r'figures\.get\(\s*"([a-z0-9-]+)"\s*\)')


def toc() -> tuple[list[str], list[str]]:
    """The toc's files (root first) and its part captions."""
    data = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files, captions = [data["root"]], []
    for part in data.get("parts", []):
        if part.get("caption"):
            captions.append(part["caption"])
        for chapter in part.get("chapters", []):
            files.append(chapter["file"])
            files.extend(section["file"] for section in chapter.get("sections", []))
    return files, captions


def title_of(source: str) -> str:
    """The first level-one heading of a MyST chapter (not a comment in its code)."""
    source = re.sub(r"\A---\n.*?\n---\n", "", source, flags=re.DOTALL)
    source = re.sub(r"^(```+|~~~+).*?^\1\s*$", "", source, flags=re.DOTALL | re.MULTILINE)
    match = re.search(r"^# (.+)$", source, re.MULTILINE)
    assert match, "a chapter without a level-one title"
    return match.group(1)


def words(text: str) -> list[str]:
    """Lower-case ASCII words, after folding math italics (𝑊 -> W) and ligatures."""
    text = re.sub(r"\\[A-Za-z]+", " ", text)  # TeX commands in a title's math
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.findall(r"[a-z0-9]+", text)


def contains_run(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


@pytest.fixture(scope="module")
def pdf(built_book) -> pathlib.Path:
    """The PDF, built after the HTML book (which executes the chapters into the cache)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run `make system-deps` (as root) first")
    shutil.rmtree(LATEX, ignore_errors=True)
    result = subprocess.run(
        [str(JB), "build", str(ROOT), "--builder", "pdflatex", "-W", "--keep-going"],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    log = LATEX / "memcourse.log"
    tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    assert result.returncode == 0 and PDF.exists(), (
        result.stdout[-6000:] + result.stderr[-4000:] + tail
    )
    return PDF


@pytest.fixture(scope="module")
def text(pdf) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"],
                          capture_output=True, text=True, check=True).stdout


def page_count(pdf: pathlib.Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))


def images(pdf: pathlib.Path) -> list[dict]:
    """The pictures of the PDF (pdfimages -list), less their alpha masks."""
    listing = subprocess.run(["pdfimages", "-list", str(pdf)],
                             capture_output=True, text=True, check=True).stdout
    rows = []
    for line in listing.splitlines()[2:]:
        cells = line.split()
        rows.append({"page": int(cells[0]), "num": int(cells[1]), "type": cells[2],
                     "width": int(cells[3]), "height": int(cells[4])})
    return [row for row in rows if row["type"] == "image"]


def figure_cells() -> list[tuple[str, str]]:
    files, _ = toc()
    found = []
    for name in files:
        source = (ROOT / f"{name}.md").read_text()
        found.extend((name, figure_id) for figure_id in DEFAULT_FIGURE.findall(source))
    return found


# -- the tests -----------------------------------------------------------------------
def test_page_count_is_sane(pdf):
    files, _ = toc()
    pages = page_count(pdf)
    # a title page, the contents, and a few pages a chapter; not a runaway
    assert 2 * len(files) <= pages <= 60 * len(files), pages


def test_every_title_of_the_toc_is_in_the_pdf(text):
    files, captions = toc()
    titles = [title_of((ROOT / f"{name}.md").read_text()) for name in files] + captions
    body = words(text)
    missing = [title for title in titles if not contains_run(body, words(title))]
    assert not missing, f"titles not found in the PDF's text: {missing}"


def test_no_widget_dump_nor_latex_error_in_the_pdf(pdf, text):
    for marker in ["VBox(", "HBox(", "IntSlider(", "FloatSlider(", "widget-view",
                   "Widget(", "model_id", "LaTeX Error", "Undefined control sequence",
                   "Traceback (most recent call last)"]:
        assert marker not in text, marker
    log = (LATEX / "memcourse.log").read_text(errors="replace")
    # xelatex drops a glyph its font lacks and only says so in the log
    assert "Missing character" not in log, re.findall(r"Missing character:.*", log)[:5]
    assert not re.search(r"^! ", log, re.MULTILINE), re.findall(r"^! .*", log, re.MULTILINE)[:5]


def test_every_figure_is_in_the_pdf_as_its_default_picture(pdf, tmp_path):
    """Each figures.get("id") cell: the PNG of the default state, reading included."""
    from memkit import figures

    cells = figure_cells()
    pictures = images(pdf)
    assert len(pictures) >= len(cells), (len(pictures), cells)
    subprocess.run(["pdfimages", "-png", str(pdf), str(tmp_path / "img")], check=True)
    extracted = {}
    for picture in pictures:
        path = tmp_path / f"img-{picture['num']:03d}.png"
        extracted[picture["num"]] = np.asarray(Image.open(path).convert("RGB"))
    for chapter, figure_id in cells:
        png = figures.get(figure_id).png()  # with its one-line reading drawn under it
        want = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        same = [num for num, got in extracted.items()
                if got.shape == want.shape and np.abs(got.astype(int) - want).max() <= 2]
        assert same, (
            f"{chapter}: the default picture of {figure_id!r} is not in the PDF (if memkit's"
            " figure changed since the chapter last ran, the execution cache is stale:"
            " `make clean` and build again)"
        )


def test_a_figure_page_renders(pdf):
    """Render the first page with a figure to PNG, for a person to look at."""
    pictures = images(pdf)
    assert pictures, "the PDF holds no picture"
    page = pictures[0]["page"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    stem = SHOTS / "pdf-figure-page"
    for old in SHOTS.glob("pdf-figure-page*.png"):
        old.unlink()
    subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", str(page), "-l", str(page),
                    "-singlefile", str(pdf), str(stem)], check=True)
    shot = np.asarray(Image.open(stem.with_suffix(".png")).convert("RGB")).astype(int)
    dark = (shot.sum(axis=2) < 200).mean()
    colour = (shot.max(axis=2) - shot.min(axis=2) > 60).mean()
    assert dark > 0.002, "the page looks blank"
    assert colour > 0.002, "the page has no coloured figure on it"
