"""The figure contract of DESIGN.md, for every registered figure."""

import base64
import io
import pathlib

import ipywidgets as widgets
import numpy as np
import pytest
from PIL import Image

from memkit import figures

ALL = figures.ids()


def three_values(control):
    """Three distinct values for a control, none equal to its current value."""
    if isinstance(control, (widgets.ToggleButtons, widgets.Dropdown, widgets.RadioButtons)):
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
        values = [o for o in options if o != control.value]
    else:
        lo, hi = control.min, control.max
        candidates = np.linspace(lo, hi, 7)
        if isinstance(control, widgets.IntSlider):
            candidates = np.unique(np.round(candidates).astype(int))
        values = [type(control.value)(c) for c in candidates if c != control.value]
        values = [values[0], values[len(values) // 2], values[-1]]
    assert len(values) >= 3 and len(set(values)) == len(values), f"{control} has too few values"
    return values[:3]


def pixels(fig):
    """The picture a reader sees: the figure's PNG, decoded."""
    return np.asarray(Image.open(io.BytesIO(fig.png())))


def test_registry_lists_the_figures_of_the_chapters_written():
    for figure_id in ["matvec-two-readings", "matmul-four-readings", "outer-product-sum",
                      "svd-truncation", "recall-noise"]:
        assert figure_id in ALL


def test_unknown_id_names_the_known_ones():
    with pytest.raises(KeyError, match="recall-noise"):
        figures.get("no-such-figure")


def test_unknown_control_is_refused():
    with pytest.raises(ValueError, match="no control named"):
        figures.get(ALL[0], not_a_control=3)


@pytest.mark.parametrize("figure_id", ALL)
def test_every_control_changes_picture_and_reading(figure_id):
    fig = figures.get(figure_id)
    assert fig.caption, "a figure must have a reading in its default state"
    axes_before = list(fig.figure.axes)
    artists_before = [len(ax.get_children()) for ax in axes_before]
    for name, control in fig.controls.items():
        seen_captions, seen_pixels = {fig.caption}, [pixels(fig)]
        for value in three_values(control):
            control.value = value  # redraws synchronously
            assert fig.caption not in seen_captions, f"{name}={value!r} left the reading unchanged"
            picture = pixels(fig)
            assert all(not np.array_equal(picture, p) for p in seen_pixels), (
                f"{name}={value!r} left the picture unchanged"
            )
            seen_captions.add(fig.caption)
            seen_pixels.append(picture)
    # artists are updated in place: same axes, same number of artists
    assert fig.figure.axes == axes_before
    assert [len(ax.get_children()) for ax in fig.figure.axes] == artists_before


@pytest.mark.parametrize("figure_id", ALL)
def test_display_bundle_holds_widget_and_picture(figure_id):
    fig = figures.get(figure_id)
    bundle = fig._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(b"\x89PNG")
    box = fig.widget()
    assert isinstance(box, widgets.Box)
    image, label = box.children[-2:]
    first, first_reading = image.value, label.value
    assert first_reading == fig.caption
    name, control = next(iter(fig.controls.items()))
    control.value = three_values(control)[-1]
    assert image.value != first, "the live picture must follow the controls"
    assert label.value == fig.caption != first_reading


@pytest.mark.parametrize("figure_id", ALL)
def test_default_state_can_be_given(figure_id):
    default = figures.get(figure_id)
    name, control = next(iter(default.controls.items()))
    value = three_values(control)[0]
    fig = figures.get(figure_id, **{name: value})
    assert fig.controls[name].value == value
    default.controls[name].value = value
    assert fig.caption == default.caption


@pytest.mark.parametrize("figure_id", ALL)
def test_every_figure_is_displayed_in_its_chapter(figure_id):
    """The chapter a figure declares (as in seed/FIGURES.md) shows it."""
    chapter = figures.get(figure_id).chapter
    book = pathlib.Path(__file__).resolve().parents[2] / "book"
    pattern = "prologue.md" if chapter == "Prologue" else f"ch{int(chapter):02d}-*.md"
    pages = list(book.glob(pattern))
    assert len(pages) == 1, f"{figure_id}: no single page for chapter {chapter}"
    assert f'figures.get("{figure_id}")' in pages[0].read_text()


def test_readings_at_a_sliders_ends_and_at_each_option():
    """figures.readings: the reading with one control moved, the others at their default."""
    ends = figures.readings("recall-noise", "M")
    slider = figures.get("recall-noise").controls["M"]
    assert list(ends) == ["min", "max"]
    assert ends["min"] == figures.get("recall-noise", M=slider.min).caption
    assert ends["max"] == figures.get("recall-noise", M=slider.max).caption != ends["min"]
    assert ends["min"].startswith(f"M = {slider.min}:") and ends["max"].startswith(f"M = {slider.max}:")
    options = figures.readings("matmul-four-readings", "reading")
    menu = figures.get("matmul-four-readings").controls["reading"]
    assert list(options) == [str(option) for option in menu.options]
    assert len(set(options.values())) == len(options)
    assert all(reading.startswith(f"{name} reading, index 0") for name, reading in options.items())
    with pytest.raises(KeyError):
        figures.readings("recall-noise", "N")


# -- the drawing helpers of memkit.figures.base ------------------------------------------
def _canvas(width_px=60, height_px=40):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width_px / 10, height_px / 10), dpi=10)
    FigureCanvasAgg(figure)
    return figure


def test_pixels_are_copied_upright_at_their_place():
    from memkit.figures.base import Pixels

    figure = _canvas()
    block = np.zeros((10, 20, 4), np.uint8)
    block[..., 3] = 255
    block[:3, :, 0] = 255  # the top three rows red
    figure.add_artist(Pixels(5, 7, block))  # lower-left corner 5 px right, 7 px up
    figure.canvas.draw()
    canvas = np.asarray(figure.canvas.buffer_rgba())
    top = canvas.shape[0] - 7 - 10  # the block's top row, counted from the canvas's top
    assert (canvas[top : top + 3, 5:25, :3] == (255, 0, 0)).all()
    assert (canvas[top + 3 : top + 10, 5:25, :3] == 0).all()
    assert (canvas[top - 1, 5:25, :3] == 255).all() and (canvas[top + 10, 5:25, :3] == 255).all()


def test_pixels_refuse_a_picture_that_is_not_rgba_bytes():
    from memkit.figures.base import Pixels

    with pytest.raises(ValueError, match="rgba must be"):
        Pixels(0, 0, np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        Pixels(0, 0, np.zeros((4, 4, 4)))


def test_cell_grid_lays_cells_out_as_imshow_does():
    from memkit import style
    from memkit.figures.base import cell_grid

    values = np.arange(12.0).reshape(3, 4) - 5.5
    colours = style.sign_colours(values)
    drawn = []
    for use_grid in (False, True):
        figure = _canvas(80, 60)
        ax = figure.add_axes((0, 0, 1, 1))
        ax.axis("off")
        if use_grid:
            cell_grid(ax, 3, 4, aspect="auto").set_facecolor(colours.reshape(-1, 4))
        else:
            ax.imshow(colours, aspect="auto", interpolation="nearest")
        figure.canvas.draw()
        drawn.append(np.asarray(figure.canvas.buffer_rgba())[..., :3].astype(int))
    # the same picture, up to the pixels on the cells' edges
    assert np.mean(np.abs(drawn[0] - drawn[1]).max(axis=2) > 8) < 0.05


def test_text_outline_left_starts_at_the_origin_on_the_baseline():
    from memkit.figures.base import text_outline

    for label in ("M ≈ 129", "M ≈ 9.1e8 (off the chart)"):
        points = text_outline(label, 9, align="left").vertices
        assert points[:, 0].min() == pytest.approx(0, abs=1e-9)
        assert -0.5 < points[:, 1].min() < 0.5 or "(" in label  # M stands on the baseline
        assert points[:, 1].max() > 5
    points = text_outline("M ≈ 129", 9).vertices
    assert (points.min(axis=0) + points.max(axis=0)) / 2 == pytest.approx((0, 0), abs=1e-9)
    with pytest.raises(ValueError, match="align"):
        text_outline("x", 9, align="right")
