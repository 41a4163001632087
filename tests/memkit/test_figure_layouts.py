"""Every figure drawn for a phone's column (``layout="narrow"``) is readable there.

A phone of 390 CSS px shows the book's column at about 358 px: a figure of W inches at
``style.DPI`` pixels per inch is shown at min(W * DPI, 358) px, so a text of s points is
s / 72 * DPI * min(1, 358 / (W * DPI)) CSS px as the phone shows it. Every text the
narrow figure draws, static or updated, in its first, middle and last state, is at least
11 such pixels and lies inside the figure.
"""

from __future__ import annotations

import pytest
from matplotlib.text import Text

from memkit import figures, style
from memkit.figures import base, frames

#: CSS px of the book's column on a phone 390 px wide
PHONE_COLUMN = 358
#: the smallest text a reader is asked to read, CSS px as shown
MIN_CSS_PX = 11


def drawn_texts(fig) -> list[tuple[Text, float, object]]:
    """(text, its size in points, its box in pixels) of every non-empty text drawn by a
    full draw of the figure and by the update of its dynamic artists."""
    seen = []
    original = Text.draw

    def recording(text, renderer):
        original(text, renderer)
        if text.get_visible() and text.get_text().strip():
            seen.append((text, text.get_fontsize(), text.get_window_extent(renderer)))

    Text.draw = recording
    try:
        fig.figure.canvas.draw()
        fig.picture(with_reading=False)  # the dynamic artists, drawn over the background
    finally:
        Text.draw = original
    return seen


def shown_css_px(fig, points: float) -> float:
    width_px = fig.size[0] * style.DPI
    return points / 72 * style.DPI * min(1.0, PHONE_COLUMN / width_px)


@pytest.mark.parametrize("figure_id", figures.ids())
def test_narrow_layout_fits_a_phone_column_with_type_of_11_css_px(figure_id):
    fig = figures.get(figure_id, layout="narrow")
    assert fig.layout == "narrow" and fig.size[0] == base.NARROW_WIDTH
    assert fig.size[0] * style.DPI <= PHONE_COLUMN  # shown 1:1, never scaled down
    states = frames.states(fig)
    for _, state in [states[0], states[len(states) // 2], states[-1]]:
        for name, value in state.items():
            fig.controls[name].value = value
        texts = drawn_texts(fig)
        assert texts, figure_id
        width, height = fig.figure.canvas.get_width_height()
        for text, points, box in texts:
            label = f"{figure_id} {state}: {text.get_text()!r}"
            assert shown_css_px(fig, points) >= MIN_CSS_PX, (label, points)
            assert box.x0 >= -1 and box.y0 >= -1, (label, box)
            assert box.x1 <= width + 1 and box.y1 <= height + 1, (label, box, width, height)


@pytest.mark.parametrize("figure_id", figures.ids())
def test_wide_layout_is_the_default_and_keeps_its_size(figure_id):
    fig = figures.get(figure_id)
    module = type(fig)
    assert fig.layout == "wide" and fig.size == module.size
    assert figures.get(figure_id, layout="narrow").caption == fig.caption


def test_a_layout_is_wide_or_narrow():
    with pytest.raises(ValueError, match="layout must be one of"):
        figures.get("recall-noise", layout="tall")
