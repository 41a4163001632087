"""Build the HTML book (strict, executing every chapter) and read what it shows."""

import html
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the fixture built_book (tests/conftest.py) builds the book once a session


def page(built, name):
    return (built / "book" / f"{name}.html").read_text()


def test_landing_page_and_chapters_are_built(built_book):
    for name in ["index", "ch01-matrix-vector", "ch02-matrix-matrix"]:
        assert (built_book / "book" / f"{name}.html").exists()


FIGURE_CELL = re.compile(r'figures\.get\(\s*"([a-z0-9-]+)"')


@pytest.mark.parametrize("chapter", sorted(p.stem for p in (ROOT / "book").glob("*.md")))
def test_each_figure_is_a_picture_not_a_widget_dump(built_book, chapter):
    source = (ROOT / "book" / f"{chapter}.md").read_text()
    wanted = FIGURE_CELL.findall(source)
    text = page(built_book, chapter)
    # one image output per figure cell
    outputs = re.findall(r'<div class="cell_output docutils container">(.*?)</div>\s*</div>', text, re.S)
    images = [o for o in outputs if "<img" in o]
    assert len(images) >= len(wanted)
    plain = html.unescape(re.sub(r"<[^>]+>", " ", text))
    assert "widget-view+json" not in text
    assert "VBox(" not in plain and "IntSlider(" not in plain
    # the figure's text/plain form is "<id: reading>": it must lose to the picture
    assert not any(f"<{figure_id}:" in plain for figure_id in wanted)


def test_no_cell_printed_an_error(built_book):
    for chapter in (ROOT / "book").glob("*.md"):
        text = page(built_book, chapter.stem)
        assert "Traceback (most recent call last)" not in text, chapter.name
        assert 'class="output stderr"' not in text, chapter.name


def test_pages_carry_no_unused_widget_state(built_book):
    """The page shows each figure as a picture and loads no widget manager, so the widget
    state an executed notebook saves (base64 pictures included) must not be shipped."""
    for chapter in (ROOT / "book").glob("*.md"):
        text = page(built_book, chapter.stem)
        assert "application/vnd.jupyter.widget-state+json" not in text, chapter.name
        assert '"model_name": "ImageModel"' not in text, chapter.name
