"""Build the HTML book (strict, executing every chapter) and read what it shows."""

import html
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
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


def test_ch17_worked_answers_show_their_computed_numbers(built_book):
    """The folded answers of Chapter 17 state the numbers (glued from the cells), not only
    the hidden cells after them."""
    text = page(built_book, "ch17-exercises")
    boxes = re.findall(r'<div class="dropdown admonition">(.*?)</div>', text, re.S)
    answers = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", box)).split()) for box in boxes]
    assert len(answers) == 5
    for number, values in {0: ["1.39", "1.38", "1.00", "1.01"], 2: ["2731", "2816"],
                           3: ["49,152"], 4: ["0.80", "1.33"]}.items():
        for value in values:
            assert value in answers[number], f"exercise {number + 1}: {value} not shown"
