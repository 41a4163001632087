"""Every state of a figure, rendered once: the frames that make a figure live on a static page.

A figure declares its controls once (``make_controls``); this module reads that
declaration to enumerate the figure's whole control space (a slider's steps, the
options of a row of buttons, tabs or a picker, the two states of a toggle) and draws
each state through the figure's own code path (``png(with_reading=False)``, the picture
the book shows, without its reading, at ``FRAME_SCALE`` times its pixels: sharp on a
screen of two device pixels per CSS pixel, shown at the book's size, the spec's ``width``
and ``height``), reduced to a 256-colour palette, and the reading is the figure's own
``caption``. The HTML book plays the frames with a small script
(``tools/book/live_figures.py``); nothing is declared a second time.

    spec = describe(figures.get("recall-noise"))     # controls, as the page shows them
    for key, state in states(fig): ...               # every reachable state
    spec, frames = render("recall-noise")            # spec + {key: (webp bytes, reading)}
    spec, frames = render("recall-noise", "narrow")  # the same states, drawn for a phone
"""

from __future__ import annotations

import io
import itertools
from typing import Any

import ipywidgets as widgets
import numpy as np
from PIL import Image

from memkit import figures, style

#: widget classes and the kind of page control each becomes
SLIDERS = (widgets.IntSlider, widgets.FloatSlider)
CHOICES = (widgets.ToggleButtons, widgets.Dropdown, widgets.RadioButtons)
TOGGLES = (widgets.Checkbox, widgets.ToggleButton)
#: device pixels per CSS pixel the frames are drawn for (the 2x screens of phones and
#: laptops): about 2.3 times the bytes and 2.5 times the build's CPU of 1x frames
FRAME_SCALE = 2


def _options(control) -> list[tuple[str, Any]]:
    """(label, value) of each option of a choice control."""
    labels = list(control._options_labels)
    values = list(control._options_values)
    return list(zip(labels, values))


def control_values(control) -> list[Any]:
    """Every value a control can take, in order (a slider sampled at its own step)."""
    if isinstance(control, widgets.IntSlider):
        return list(range(control.min, control.max + 1, control.step))
    if isinstance(control, widgets.FloatSlider):
        count = int(round((control.max - control.min) / control.step)) + 1
        decimals = max(0, -int(np.floor(np.log10(control.step))) + 1)
        return [round(control.min + i * control.step, decimals) for i in range(count)]
    if isinstance(control, CHOICES):
        return [value for _, value in _options(control)]
    if isinstance(control, TOGGLES):
        return [False, True]
    raise TypeError(
        f"control {type(control).__name__} has no finite set of values: use a slider, "
        "buttons, tabs, a picker or a toggle"
    )


def _kind(control) -> str:
    if isinstance(control, SLIDERS):
        return "slider"
    if isinstance(control, (widgets.ToggleButtons, widgets.RadioButtons)):
        return "buttons"
    if isinstance(control, widgets.Dropdown):
        return "picker"
    return "toggle"


def _label(control, value) -> str:
    """How the control shows a value (the slider's readout, the option's label)."""
    if isinstance(control, CHOICES):
        return next(label for label, v in _options(control) if v == value)
    if isinstance(control, widgets.FloatSlider):
        return format(value, control.readout_format)
    return str(value)


def describe(figure) -> dict:
    """The figure as the page draws it: its alt text and prompt, each control's kind,
    label, values, default and unit ("" when it has none), and the picture's size in CSS
    pixels (``width``, ``height``: the book's picture, whatever the frames' scale)."""
    controls = []
    for name, control in figure.controls.items():
        values = control_values(control)
        default = values.index(min(values, key=lambda v: _distance(v, control.value)))
        controls.append({
            "name": name,
            "kind": _kind(control),
            "label": control.description or name,
            "values": [_label(control, v) for v in values],
            "default": default,
            "unit": figure.units.get(name, ""),
        })
    return {"id": figure.id, "alt": figure.alt_text, "prompt": figure.prompt,
            "controls": controls, "width": round(figure.size[0] * style.DPI),
            "height": round(figure.size[1] * style.DPI)}


def _distance(a, b) -> float:
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return abs(a - b)
    return 0.0 if a == b else 1.0


def states(figure) -> list[tuple[str, dict]]:
    """(key, state) for every combination of control values; key = indices joined by ","."""
    names = list(figure.controls)
    axes = [list(enumerate(control_values(figure.controls[n]))) for n in names]
    out = []
    for combination in itertools.product(*axes):
        key = ",".join(str(i) for i, _ in combination)
        out.append((key, {n: v for n, (_, v) in zip(names, combination)}))
    return out


def encode(picture: bytes | Image.Image) -> bytes:
    """A frame: the picture (PNG bytes, or the image itself) reduced to a 256-colour
    palette (as a palette PNG would be: maximum-coverage, so white stays white; no
    dithering, so text stays sharp) and stored as lossless WebP, about half the bytes of
    the full-colour picture; deterministic, so the same state always gives the same frame."""
    if isinstance(picture, bytes):
        picture = Image.open(io.BytesIO(picture))
    picture = picture.convert("RGB")
    palette = picture.quantize(colors=256, method=Image.Quantize.MAXCOVERAGE,
                               dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    palette.save(buffer, format="webp", lossless=True, quality=25, method=1)
    return buffer.getvalue()


def render(figure_id: str, layout: str = "wide") -> tuple[dict, dict[str, tuple[bytes, str]]]:
    """The spec of a figure in ``layout`` ("wide" or "narrow", see
    :mod:`memkit.figures.base`) and every frame: {key: (WebP bytes, reading)}."""
    figure = figures.get(figure_id, layout=layout)
    spec = describe(figure)
    frames = {}
    for key, state in states(figure):
        for name, value in state.items():
            figure.controls[name].value = value
        # the picture png(with_reading=False, scale=FRAME_SCALE) encodes, without the PNG
        frames[key] = (encode(figure.picture(with_reading=False, scale=FRAME_SCALE)),
                       figure.caption)
    return spec, frames
