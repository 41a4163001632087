"""Build the book as a PDF the way the README says, on a fresh clone, and read it back.

The build is `make pdf`, run in a copy of the course (the files git tracks or would add,
as a clone holds them) whose _build is empty, with this checkout's .venv: it fetches
MathJax (the configuration names its folder), executes every chapter and runs xelatex.
It needs TeX Live, latexmk, xindy, the FreeFont fonts and poppler's tools, which `make
system-deps` installs; it runs once a session and takes a few minutes. Its _build/latex is
copied into this checkout's _build/latex, for the tests below and for a person to read.
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
from tools.common import nbgrader_cells
import pytest
from PIL import Image

from tools.book import pdf_book
from tools.book.toc import toc_captions, toc_files

ROOT = pathlib.Path(__file__).resolve().parents[2]
LATEX = ROOT / "_build" / "latex"
PDF = LATEX / "memcourse.pdf"
SHOTS = ROOT / "_build" / "screenshots"
JB = pathlib.Path(sys.executable).with_name("jupyter-book")
TOOLS = ["xelatex", "latexmk", "xindy", "pdftotext", "pdftoppm", "pdfimages", "pdfinfo", "pdffonts"]
# exactly figures.get("id") as a cell's call: the figure in its default state
DEFAULT_FIGURE = re.compile(r'figures\.get\(\s*"([a-z0-9-]+)"\s*\)')


def toc() -> tuple[list[str], list[str]]:
    """The toc's files (root first) and its part captions."""
    return toc_files(ROOT), toc_captions(ROOT)


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


def course_files() -> list[str]:
    """What a clone of this checkout holds: the files git tracks or would add."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict:
    """`make pdf` on a fresh copy of the course: its output, and the PDF (in _build/latex)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: run `make system-deps` (as root) first")
    clone = tmp_path_factory.mktemp("clone")
    for name in course_files():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)  # with their times: the venv stays up to date
    venv = ROOT / ".venv"
    result = subprocess.run(
        ["make", "pdf", f"VENV={venv}", "-o", str(venv / ".installed")],
        cwd=clone, capture_output=True, text=True, check=False,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    built = clone / "_build" / "latex"
    log = built / "memcourse.log"
    tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    assert result.returncode == 0 and (built / PDF.name).exists(), (
        result.stdout[-6000:] + result.stderr[-4000:] + tail
    )
    shutil.rmtree(LATEX, ignore_errors=True)
    shutil.copytree(built, LATEX)
    return {"pdf": PDF, "output": result.stdout + result.stderr}


@pytest.fixture(scope="module")
def pdf(made) -> pathlib.Path:
    return made["pdf"]


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


def test_the_paper_is_letter_unless_a4_is_asked_for(pdf, monkeypatch):
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"^Page size:\s+612 x 792 pts \(letter\)", info, re.MULTILINE), info
    # make pdf PAPER=a4 reaches the LaTeX class through the environment
    for asked, option in (("a4", "a4paper"), ("A4", "a4paper"), ("letter", "letterpaper"), ("", "letterpaper")):
        monkeypatch.setenv(pdf_book.PAPER_ENV, asked)
        assert pdf_book.paper_size() == option
    monkeypatch.setenv(pdf_book.PAPER_ENV, "b5")
    with pytest.raises(ValueError, match="letter, a4"):
        pdf_book.paper_size()
    made = subprocess.run(["make", "-n", "pdf", "PAPER=a4"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "MEMCOURSE_PAPER=a4 " in made.stdout


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


# -- a book one would print: numbering, back matter, index, lists, worksheets ------------
@pytest.fixture(scope="module")
def pages(pdf) -> list[str]:
    """The text of each page, laid out as printed (running heads on their own line)."""
    out = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(pdf), "-"],
                         capture_output=True, text=True, check=True).stdout
    return out.split("\f")


def contents_lines(pages: list[str]) -> list[str]:
    """The lines of the table of contents (the pages before the list of figures)."""
    end = next(i for i, p in enumerate(pages) if "LIST OF FIGURES" in p)
    start = next(i for i, p in enumerate(pages) if "CONTENTS" in p)
    return [line.strip() for p in pages[start:end] for line in p.splitlines() if line.strip()]


def numbered(name: str) -> tuple[str, str] | None:
    """('3', 'A sum of ...') for Chapter 3, ('A', 'Linear algebra toolkit') for Appendix A."""
    title = title_of((ROOT / f"{name}.md").read_text())
    match = re.match(r"^(?:(\d+)|Appendix ([A-E]))\.\s+(.+)$", title)
    return (match.group(1) or match.group(2), match.group(3)) if match else None


def entry(lines: list[str], title: str) -> int:
    """The index of the contents line that holds a title (page number and dots aside)."""
    want, n = words(title), len(words(title))
    found = [i for i, line in enumerate(lines)
             if words(line)[:n] == want or words(line)[1:n + 1] == want]
    # a numbered chapter's own line first ("17 Exercises", not a session's "Exercises")
    found.sort(key=lambda i: not re.match(r"^(\d+|[A-E])\s", lines[i]))
    assert found, f"{title!r} is not in the contents"
    return found[0]


def test_contents_use_the_courses_own_numbering(pages):
    lines = contents_lines(pages)
    files, captions = toc()
    for name in files[1:]:
        title = title_of((ROOT / f"{name}.md").read_text())
        number = numbered(name)
        if number is None:  # the Prologue, the session worksheets, the reading list
            line = lines[entry(lines, title)]
            assert words(line)[: len(words(title))] == words(title), line
            continue
        label, rest = number
        line = lines[entry(lines, rest)]
        assert re.match(rf"^{label}\s+{re.escape(rest.split()[0])}", line), (name, line)
        assert not re.search(rf"\b{label}\.\s+{re.escape(rest.split()[0])}", line), line
    for caption in captions:  # the sessions are parts, without a part number
        line = lines[entry(lines, caption)]
        assert not line.lower().startswith("part"), line


def test_appendices_come_after_the_last_session_lettered_a_to_e(pages):
    lines = contents_lines(pages)
    files, _ = toc()
    appendices = sorted(name for name in files if "/appendix-" in name)
    assert len(appendices) == 5
    sessions = [entry(lines, title_of((ROOT / f"{n}.md").read_text()))
                for n in files if "/session-" in n]
    positions = [entry(lines, numbered(name)[1]) for name in appendices]
    assert positions == sorted(positions) and positions[0] > max(sessions)
    assert [lines[p].split()[0] for p in positions] == list("ABCDE")


def test_running_heads_name_the_chapter_once(pages):
    # the chapter's mark is printed in the head or the foot of a page, beside its number
    lines = [[line.strip() for line in p.splitlines() if line.strip()] for p in pages]
    heads = [edge for page in lines if page for edge in (page[0], page[-1])]
    files, _ = toc()
    chapter = next(n for n in files if re.search(r"/ch03-", n))
    appendix = next(n for n in files if "/appendix-a-" in n)
    _, ch_rest = numbered(chapter)
    _, ap_rest = numbered(appendix)
    assert any(h.endswith(f"Chapter 3. {ch_rest}") for h in heads), heads[30:60]
    assert any(h.endswith(f"Appendix A. {ap_rest}") for h in heads)
    prologue = title_of((ROOT / "book/prologue.md").read_text())
    prologue_heads = [h for h in heads if prologue in h]
    assert prologue_heads and not any("Chapter" in h for h in prologue_heads)
    assert not any(re.search(r"Chapter \d+\. \d+\.", h) or "Chapter A" in h for h in heads)


def glossary_terms() -> list[str]:
    text = (ROOT / "book" / "appendix-e-glossary.md").read_text()
    block = text.split("```{glossary}", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines()
            if line and not line[0].isspace() and not line.startswith(":")]


def test_index_points_to_each_definition_and_first_uses(text):
    """Every glossary term is in the printed index (pdftotext), and the index as typeset
    (xindy's memcourse.ind) lists, for each term, its definition (bold) and a page for the
    first use in each chapter that links it."""
    first = glossary_terms()[0]
    printed = " ".join(text[text.rindex(f"\n{first},"):].split())
    typeset = (LATEX / "memcourse.ind").read_text()
    files, _ = toc()
    checked = 0
    for term in glossary_terms():
        assert re.search(re.escape(term) + r",\s*\d", printed), f"{term!r} is not in the index"
        users = sum(
            1 for name in files if not name.endswith("appendix-e-glossary") and re.search(
                r"\{term\}`[^`]*<" + re.escape(term) + r">`|\{term\}`" + re.escape(term) + "`",
                (ROOT / f"{name}.md").read_text(), re.IGNORECASE)
        )
        line = re.search(r"\\item \\spxentry\{" + re.escape(term).replace("\\-", "(?:-|\\\\sphinxhyphen \\{\\})")
                         + r"\}, (.*)", typeset)
        assert line, f"{term!r} is not in memcourse.ind"
        pages = re.findall(r"\\hyperpage\{(\d+)\}", line.group(1))
        assert "spxpagem" in line.group(1), f"{term!r}: no bold page for its definition"
        assert len(set(pages)) >= users + 1, (term, users, pages)
        checked += users > 1
    assert checked >= 5, "too few terms used in several chapters to test the index"


def test_lists_of_figures_and_derivations(pages):
    start = next(i for i, p in enumerate(pages) if "LIST OF FIGURES" in p)
    end = next(i for i, p in enumerate(pages) if "LIST OF DERIVATIONS" in p)
    figures_text = " ".join(" ".join(p.split()) for p in pages[start:end])
    for _, figure_id in figure_cells():
        assert re.search(re.escape(figure_id) + r" .{0,200}?, page \d+\.", figures_text), figure_id
    derivations_text = " ".join(" ".join(p.split()) for p in pages[end:end + 3])
    for n in range(1, 21):
        assert re.search(rf"\bD{n} .{{0,160}}?, page \d+\.", derivations_text), f"D{n}"


def test_cross_references_carry_page_numbers(text):
    assert len(re.findall(r"\(page \d+\)", text)) >= 20


def test_session_pages_print_as_worksheets(pages):
    from tools.release import assignments as course

    _, captions = toc()
    parts = [words(caption)[:4] for caption in captions]
    for assignment in course.assignments(ROOT, course.RELEASE):
        number = assignment.split("-")[1]
        head = f"Session {number} · Exit test and exercises"
        # from its opening page (no running head) to the page before the next part's
        # (not a page of the front matter, numbered in roman, whose contents list the heading)
        where = [i for i, p in enumerate(pages) if any(head in line for line in _edges(p))
                 and not re.fullmatch(r"[ivxlc]+", _edges(p)[-1].strip())]
        assert where, head
        start = min(where) - 1
        end = next(i for i in range(start + 1, len(pages))
                   if _edges(pages[i]) and words(_edges(pages[i])[0])[:4] in parts)
        body = "\n".join(pages[start:end])
        answers = sum(
            1 for nb in course.notebooks(ROOT, assignment, course.RELEASE)
            for cell in nbformat_cells(nb) if nbgrader_cells.metadata(cell)
            .get("solution")
        )
        assert body.count("Your answer") == answers, (head, body.count("Your answer"), answers)
        assert "YOUR CODE HERE" not in body and "assert " not in body, head


def _edges(page: str) -> list[str]:
    lines = [line for line in page.splitlines() if line.strip()]
    return [lines[0], lines[-1]] if lines else []


def nbformat_cells(path: pathlib.Path) -> list[dict]:
    import json

    return json.loads(path.read_text())["cells"]


# -- a fresh clone, and what a printed page needs --------------------------------------------
def test_make_pdf_on_a_fresh_clone_executes_every_chapter_without_a_kernel_error(made):
    output = made["output"]
    assert re.search(r"executing \d+ chapter\(s\) in parallel", output), output[-2000:]
    assert "MathJax" in output  # fetched from the npm registry, as `make book` does
    assert "KeyboardInterrupt" not in output and "[IPKernelApp]" not in output, (
        re.findall(r".*IPKernelApp.*", output)[:5])
    assert "Traceback" not in output


def test_the_index_is_set_in_the_text_font(pdf, pages):
    first = glossary_terms()[0]
    start = next(i for i, p in enumerate(pages) if re.search(rf"^\s*{re.escape(first)},\s*\d", p,
                                                              re.MULTILINE))
    fonts = subprocess.run(["pdffonts", "-f", str(start + 1), "-l", str(len(pages) - 1), str(pdf)],
                           capture_output=True, text=True, check=True).stdout
    assert "FreeSerif" in fonts
    assert "Mono" not in fonts, fonts  # DejaVu Sans Mono is the code font


def test_each_derivation_heading_carries_one_number(pages):
    start = next(i for i, p in enumerate(pages) if "LIST OF DERIVATIONS" in p)
    body = "\n".join(pages[start + 2:])
    headings = re.findall(r"^\s*(?:D\.\d+\s+)?D\d+\. .*$", body, re.MULTILINE)
    for n in range(1, 21):
        assert any(re.match(rf"\s*D{n}\. ", h) for h in headings), f"no heading D{n}."
    doubled = [h.strip() for h in headings if re.match(r"\s*D\.\d+\s", h)]
    assert not doubled, doubled[:5]


def test_long_lines_break_without_marks_and_nothing_runs_over(text):
    assert "↪" not in text and "␣" not in text
    log = (LATEX / "memcourse.log").read_text(errors="replace")
    over = [float(x) for x in re.findall(r"^Overfull \\[hv]box \(([\d.]+)pt too", log, re.MULTILINE)]
    assert all(points <= 10 for points in over), sorted(over)[-5:]


def test_the_log_asks_for_no_rerun():
    log = (LATEX / "memcourse.log").read_text(errors="replace")
    assert "Rerun to get" not in log and "may have changed" not in log


# -- the printed page says what the picture shows, and lays out cleanly -------
#: a word that asks the reader to work a control, which paper has not
CONTROL_WORDS = re.compile(r"\b(?:drag\w*|slider\w*|click\w*)\b", re.IGNORECASE)
#: ``figures.readings(id, control)`` as a chapter's cell calls it, for the printed passage
READINGS_CALL = re.compile(r'figures\.readings\(\s*"([a-z0-9-]+)",\s*"(\w+)"\s*\)')
#: the title of a box: ```{admonition} Check, ```{admonition} Derivation D9. ...
BOX_TITLE = re.compile(r"^(?:`{3,}|:{3,})\{admonition\}\s*(.+?)\s*$", re.MULTILINE)
#: the page's body, as a share of its height: below the running head, above the foot
BODY = (0.075, 0.925)


def squashed(text: str) -> str:
    """Text without its spaces and hyphens, math italics folded and curly quotes straight: a
    reading as TeX may have broken it over two lines (hyphenated or not), its quotes turned by
    Sphinx's smart quotes, compares with the reading itself."""
    straight = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
    return re.sub(r"[\s\-\u2010]+", "", unicodedata.normalize("NFKC", text).translate(straight))


def test_the_pdf_asks_for_no_control_and_quotes_the_readings_it_computes(text):
    """No "drag", "slider" nor "click" on paper; each passage that the screen words as a
    control to move says, in print, what the figure reads at other settings: a reading of
    ``figures.readings`` that its chapter glues ({glue:text}`id_end`) is printed, as memkit
    computes it."""
    from memkit import figures

    found = sorted({m.group(0).lower() for m in CONTROL_WORDS.finditer(text)})
    assert not found, [line for line in text.splitlines() if CONTROL_WORDS.search(line)][:8]
    flat = squashed(text)
    files, _ = toc()
    quoted = 0
    for name in files:
        source = (ROOT / f"{name}.md").read_text()
        for figure_id, control in READINGS_CALL.findall(source):
            readings = figures.readings(figure_id, control)
            glued = {key: reading for key, reading in readings.items()
                     if "{glue:text}`" + re.sub(r"\W+", "_", f"{figure_id}_{key}") + "`" in source}
            assert glued, f"{name}: no reading of {figure_id} is quoted"
            for key, reading in glued.items():
                assert squashed(reading) in flat, f"{figure_id}, {control} {key}: {reading!r} is not printed"
            quoted += len(glued)
    assert quoted >= 30, quoted


def box_titles() -> set[str]:
    files, _ = toc()
    return {title for name in files for title in BOX_TITLE.findall((ROOT / f"{name}.md").read_text())}


def test_no_page_ends_on_a_box_title(pages):
    """The last line of a page's body (above its foot) is never a box's title alone."""
    titles = {" ".join(words(title)) for title in box_titles()}
    assert {"check", "keep", "goal"} <= titles
    stranded = []
    for number, page in enumerate(pages, start=1):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        if len(lines) >= 3 and " ".join(words(lines[-2])) in titles:
            stranded.append((number, lines[-2]))
    assert not stranded, stranded


def page_fill(path: pathlib.Path) -> tuple[bool, float]:
    """Whether a page (a grey PGM) has a running head, and how far down its body the ink
    reaches, as a share of the body's height (0: nothing below the head)."""
    ink = np.asarray(Image.open(path)) < 160
    height = ink.shape[0]
    top, bottom = (int(share * height) for share in BODY)
    rows = np.nonzero(ink[top:bottom].any(axis=1))[0]
    return bool(ink[:top].any()), (rows.max() + 1) / (bottom - top) if rows.size else 0.0


def test_no_half_empty_page_before_a_picture(pdf, tmp_path):
    """A page whose body is less than half filled is never followed, within its chapter
    (the next page carries a running head), by a page holding a picture: the picture
    was pushed over and left the space empty. Figures float [htbp] instead."""
    subprocess.run(["pdftoppm", "-r", "24", "-gray", str(pdf), str(tmp_path / "p")], check=True)
    shots = sorted(tmp_path.glob("p-*.pgm"), key=lambda p: int(p.stem.split("-")[-1]))
    assert len(shots) == page_count(pdf)
    fills = [page_fill(path) for path in shots]
    assert sum(fill > 0.9 for _, fill in fills) > len(fills) / 2  # the measure sees full pages
    pictured = {row["page"] for row in images(pdf)}
    half_empty = [number for number, ((_, fill), (head, _)) in enumerate(zip(fills, fills[1:]), 1)
                  if 0 < fill < 0.5 and head and number + 1 in pictured]
    assert not half_empty, [(n, round(fills[n - 1][1], 2)) for n in half_empty]
    tex = (LATEX / "memcourse.tex").read_text()
    assert tex.count(r"\begin{figure}[htbp]") >= len(figure_cells())
    assert r"\begin{figure}[H]" not in tex
