"""The figure protocol: a pure computation, a drawing updated in place, a widget.

Every figure of the course subclasses :class:`InteractiveFigure` and supplies

* ``make_controls()``: the ipywidgets controls, a dict name -> widget;
* ``compute(**state)``: the numbers the figure plots, from the control values
  (pure: no matplotlib, tested on its own);
* ``build(figure)``: create the matplotlib artists once, and register with
  ``self.dynamic(...)`` every artist that ``draw`` changes;
* ``draw(data)``: update those artists' data (``set_data``, ``set_height`` ...);
* ``describe(data)``: the one-line reading of the current state;

and says, as class attributes, what a reader who does not see it needs: ``alt_text``, one
sentence of what the picture shows (the book's alt text); ``prompt``, one line of what to
drag and what to watch (shown above the controls, in the lab and in the HTML book); and
``units``, the unit of a slider's value where it has one (a screen reader says it).

A change of any control recomputes, updates the artists in place, rewrites the
reading and, when the widget is displayed, re-renders its picture. Rendering blits:
the static part of the figure (axes, ticks, labels, fixed artists) is drawn once
and cached, and each update draws only the dynamic artists over that background. The figure is a
plain Agg ``matplotlib.figure.Figure`` (no pyplot, no global state), so it works
headless. In a notebook the figure displays as one bundle that holds both the live
widget and a PNG of its state: JupyterLab shows the widget, while the HTML and
PDF builds of the book pick the picture.

Resolution. The figure is drawn once, at ``LIVE_DENSITY`` device pixels per CSS pixel
of the width the lab shows it at (``size`` inches at ``CSS_PX_PER_INCH``), so that it
stays sharp on high-density screens. The live widget shows it at exactly that CSS width
(never stretched), as a JPEG of quality 92 without chroma subsampling (a PNG of that
many pixels takes several times as long to encode; at this density the difference does
not show), cropped to the drawing: the band kept for the reading under the book's
picture is left out, since the widget prints the reading as text. The book's PNG
(``png()``) keeps its size, ``size`` inches at ``style.DPI``, resampled from the same
drawing; the HTML book's frames are that picture at twice its pixels (``png(scale=2)``),
shown at its size.

Layouts. A figure is drawn ``layout="wide"`` (the default: the lab, the PDF, a desktop's
column; ``size`` inches) or ``layout="narrow"`` (a phone's column: ``narrow_size``
inches, ``NARROW_WIDTH`` wide, 352 CSS pixels at ``style.DPI``, shown 1:1 in a column of
about 358). The narrow layout stacks the panels in one column (:func:`panels`), lays
them out with matplotlib's constrained layout (titles, labels and ticks kept inside the
figure; ``narrow_grid = False`` for a figure that places its axes itself), and draws
every text at ``NARROW_MIN_PT`` points or more: 10 pt at 80 pixels per inch is 11.1 CSS
pixels as the phone shows it. The layout is computed once, by the first full draw; an
update draws only the dynamic artists over it.
"""

from __future__ import annotations

import base64
import functools
import io
import math
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import QuadMesh
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.path import Path
from matplotlib.text import Text
from matplotlib.textpath import TextPath
from PIL import Image

from memkit import style

#: CSS pixels per inch of figure at which the live widget shows a figure (7 in -> 784 px)
CSS_PX_PER_INCH = 112
#: device pixels per CSS pixel the live picture is drawn with (sharp on high-density
#: screens; 2 would cost some figures (large images) three times as long to draw)
LIVE_DENSITY = 1.5
#: JPEG quality of the live picture
LIVE_QUALITY = 92
#: the layouts a figure is drawn in: side by side (lab, PDF, desktop) or one column (phone)
LAYOUTS = ("wide", "narrow")
#: width of the narrow layout, inches (352 CSS px at style.DPI: a phone's column, 1:1)
NARROW_WIDTH = 4.4
#: smallest type of the narrow layout, points (11.1 CSS px at style.DPI, shown 1:1)
NARROW_MIN_PT = 10.0
#: matplotlib defaults of the narrow layout (style.RC's, with type of NARROW_MIN_PT or more)
NARROW_RC = {**style.RC, "font.size": NARROW_MIN_PT, "axes.titlesize": 10.5,
             "axes.labelsize": NARROW_MIN_PT, "xtick.labelsize": NARROW_MIN_PT,
             "ytick.labelsize": NARROW_MIN_PT, "legend.fontsize": NARROW_MIN_PT}
#: height of the band under a narrow figure kept for its reading, inches
NARROW_READING_BAND = 0.25


def panels(figure: Figure, layout: str, count: int, ratios=None, heights=None,
           wide: dict | None = None, rows: tuple[int, ...] | None = None,
           **subplot_kw) -> list:
    """``count`` axes: side by side in one row (``layout="wide"``, a gridspec with
    ``width_ratios=ratios`` and the margins and ``wspace`` of ``wide``), or in one column,
    top to bottom in the same order (``"narrow"``: ``height_ratios=heights``, margins left
    to the constrained layout). ``rows`` puts several small panels on a narrow row: (2, 1)
    is two panels side by side over one as wide as both. ``subplot_kw`` goes to every
    ``add_subplot``."""
    if layout == "wide":
        grid = figure.add_gridspec(1, count, width_ratios=ratios, **(wide or {}))
        cells = [grid[i] for i in range(count)]
    elif layout == "narrow":
        rows = rows or (1,) * count
        if sum(rows) != count:
            raise ValueError(f"rows {rows} hold {sum(rows)} panels, not {count}")
        columns = math.lcm(*rows)
        grid = figure.add_gridspec(len(rows), columns, height_ratios=heights)
        cells = [grid[r, k * columns // n:(k + 1) * columns // n]
                 for r, n in enumerate(rows) for k in range(n)]
    else:
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
    return [figure.add_subplot(cell, **subplot_kw) for cell in cells]


def margins(figure: Figure, layout: str, **wide) -> None:
    """The wide layout's ``subplots_adjust(**wide)``; the narrow layout's margins are the
    constrained layout's."""
    if layout == "wide":
        figure.subplots_adjust(**wide)


@functools.lru_cache(maxsize=None)
def text_outline(label: str, size: float, align: str = "center") -> Path:
    """The outline of ``label`` (mathtext allowed) at ``size`` points.

    ``align="center"`` centres it on the origin; ``"left"`` puts the origin on its baseline,
    at its left edge (as ``Text(ha="left", va="baseline")``, so that labels whose glyphs
    differ stay on one line). Labels that move or change are
    drawn as outlines in one PathCollection: matplotlib renders a Text glyph by glyph,
    which costs more in an update than drawing a path.
    """
    if align not in ("center", "left"):
        raise ValueError(f"align must be 'center' or 'left', got {align!r}")
    outline = TextPath((0, 0), label, size=size)
    # the box of the outline's points (Path.get_extents solves every curve's extrema:
    # several milliseconds a label; a glyph's extreme points are nodes, or nearly)
    low, high = outline.vertices.min(axis=0), outline.vertices.max(axis=0)
    if align == "left":
        return Path(outline.vertices - (low[0], 0.0), outline.codes)
    return Path(outline.vertices - (low + high) / 2, outline.codes)


def cell_grid(ax, rows: int, cols: int, aspect: str = "equal") -> QuadMesh:
    """A ``rows`` x ``cols`` grid of flat cells on ``ax``, laid out as ``imshow`` lays out a
    matrix (cell (i, j) centred on x = j, y = i, row 0 at the top).

    A heat map that changes: ``grid.set_facecolor(rgba.reshape(-1, 4))`` recolours it
    (rgba of shape (rows, cols, 4), e.g. :func:`memkit.style.sign_colours`), and drawing
    it fills rows x cols rectangles, where an image is resampled to the screen on every
    update (several times the cost).
    """
    grid = ax.pcolormesh(np.arange(cols + 1) - 0.5, np.arange(rows + 1) - 0.5,
                         np.zeros((rows, cols)), shading="flat", antialiased=False,
                         edgecolors="none")
    grid.set_array(None)  # coloured by set_facecolor, not through a colour map
    grid.set_facecolor("white")
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.set_aspect(aspect)
    return grid


class Pixels(Artist):
    """A picture put on the canvas pixel for pixel, its lower-left corner at (x, y) pixels.

    For a picture rendered once at the canvas's own resolution (a card of text, say) that
    an update swaps: ``imshow`` would resample it to the screen on every update, this
    copies it. ``rgba``: (height, width, 4) uint8, row 0 at the top.
    """

    def __init__(self, x: float, y: float, rgba: np.ndarray) -> None:
        super().__init__()
        self.x, self.y = int(round(x)), int(round(y))
        self.set_pixels(rgba)

    def set_pixels(self, rgba: np.ndarray) -> None:
        rgba = np.asarray(rgba)
        if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
            raise ValueError(f"rgba must be (height, width, 4) uint8, got {rgba.shape} {rgba.dtype}")
        self._bottom_up = np.ascontiguousarray(rgba[::-1])  # Agg's rows run upwards
        self.stale = True

    def draw(self, renderer) -> None:
        if not self.get_visible():
            return
        gc = renderer.new_gc()
        renderer.draw_image(gc, self.x, self.y, self._bottom_up)
        gc.restore()


class InteractiveFigure:
    """Base class of every course figure; see the module docstring for the contract."""

    #: registry id, as in seed/FIGURES.md
    id: str = ""
    #: chapter the figure belongs to
    chapter: str = ""
    #: figure size in inches (the wide layout)
    size: tuple[float, float] = (7.0, 3.0)
    #: figure size in inches of the narrow layout (NARROW_WIDTH wide, panels stacked)
    narrow_size: tuple[float, float] = (NARROW_WIDTH, 4.4)
    #: whether the narrow layout's axes are a grid laid out by the constrained layout (a
    #: figure that places its own axes, add_axes, says False)
    narrow_grid: bool = True
    #: what the picture shows, in one sentence (the alt text of the book's picture)
    alt_text: str = ""
    #: what to drag and what to watch, in one line (above the controls)
    prompt: str = ""
    #: control name -> the unit of its value ("degrees"), for the sliders that have one
    units: dict[str, str] = {}

    def __init__(self, layout: str = "wide", **state: Any) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
        #: "wide" or "narrow" (see the module docstring); ``size`` is that layout's
        self.layout = layout
        self.size = self.narrow_size if layout == "narrow" else type(self).size
        self.controls: dict[str, widgets.ValueWidget] = self.make_controls()
        unknown = set(state) - set(self.controls)
        if unknown:
            raise ValueError(
                f"figure {self.id!r} has no control named {sorted(unknown)};"
                f" its controls are {sorted(self.controls)}"
            )
        for name, value in state.items():
            self.controls[name].value = value
        self._dynamic: list[Artist] = []
        narrow = layout == "narrow"
        with rc_context(NARROW_RC if narrow else style.RC):
            self.figure = Figure(figsize=self.size, dpi=CSS_PX_PER_INCH * LIVE_DENSITY)
            FigureCanvasAgg(self.figure)
            if narrow and self.narrow_grid:
                band = NARROW_READING_BAND / self.size[1]
                self.figure.set_layout_engine(ConstrainedLayoutEngine(
                    rect=(0, band, 1, 1 - band), h_pad=0.04, w_pad=0.04))
            self.build(self.figure)
            self._reading = self.figure.text(
                0.5, 0.015, "", ha="center", va="bottom", fontsize=NARROW_MIN_PT if narrow else 9,
                color=style.INK
            )
            if narrow:
                self._lift_type()
        self._reading.set_animated(True)
        self.figure.canvas.draw()  # the static background, without the dynamic artists
        if narrow:
            self.figure.set_layout_engine("none")  # laid out once: an update moves nothing
        self._background = self.figure.canvas.copy_from_bbox(self.figure.bbox)
        self._live_rows = self._drawing_rows()
        self._image: widgets.Image | None = None
        self._label: widgets.HTML | None = None
        self._box: widgets.Box | None = None
        self.data: Any = None
        self._caption = ""
        self.update()
        for control in self.controls.values():
            control.observe(self._on_change, names="value")

    def pt(self, size: float) -> float:
        """A type size of the figure, in points: ``size``, or NARROW_MIN_PT in the narrow
        layout if ``size`` is smaller (for text drawn as outlines, which ``_lift_type``
        does not see)."""
        return max(size, NARROW_MIN_PT) if self.layout == "narrow" else size

    def _lift_type(self) -> None:
        """Every text of the figure (titles, labels, ticks, legends, annotations) at
        NARROW_MIN_PT points or more."""
        for ax in self.figure.axes:
            for axis in (ax.xaxis, ax.yaxis):
                for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                    if tick.label1.get_fontsize() < NARROW_MIN_PT:
                        axis.set_tick_params(which="both", labelsize=NARROW_MIN_PT)
                        break
        for text in self.figure.findobj(Text):
            if text.get_fontsize() < NARROW_MIN_PT:
                text.set_fontsize(NARROW_MIN_PT)

    # -- to be supplied by each figure -------------------------------------------------
    def make_controls(self) -> dict[str, widgets.ValueWidget]:
        raise NotImplementedError

    def compute(self, **state: Any) -> Any:
        raise NotImplementedError

    def build(self, figure: Figure) -> None:
        raise NotImplementedError

    def draw(self, data: Any) -> None:
        raise NotImplementedError

    def describe(self, data: Any) -> str:
        raise NotImplementedError

    # -- the protocol ----------------------------------------------------------------
    def dynamic(self, *artists):
        """Register artists (or lists/containers of artists) that ``draw`` updates."""
        for item in artists:
            if isinstance(item, Artist):
                item.set_animated(True)
                self._dynamic.append(item)
            else:
                self.dynamic(*item)
        return artists[0] if len(artists) == 1 else artists

    def state(self) -> dict[str, Any]:
        """The current value of every control."""
        return {name: control.value for name, control in self.controls.items()}

    @property
    def caption(self) -> str:
        """The one-line reading of the current state."""
        return self._caption

    def update(self) -> None:
        """Recompute from the controls and update the artists, the reading and the image."""
        self.data = self.compute(**self.state())
        self.draw(self.data)
        self._caption = self.describe(self.data)
        self._reading.set_text(self._caption)
        if self._image is not None:
            self._image.value = self.live_picture()
            self._label.value = self._caption

    def _on_change(self, _change: dict) -> None:
        self.update()

    def _drawing_rows(self) -> int:
        """Pixel rows, from the top, that hold the drawing (the reading's band excluded)."""
        renderer = self.figure.canvas.get_renderer()
        height = self.figure.canvas.get_width_height()[1]
        boxes = [ax.get_tightbbox(renderer) for ax in self.figure.axes if ax.get_visible()]
        boxes = [b for b in boxes if b is not None]
        if not boxes:
            return height
        pad = int(10 * LIVE_DENSITY)  # room for dynamic labels that reach a little lower
        bottom = min(b.y0 for b in boxes) - pad
        return int(min(height, max(height * 0.5, height - bottom)))

    def _render(self, with_reading: bool, rows: int | None = None) -> Image.Image:
        """The figure in its current state, at full resolution: its top ``rows`` pixel rows
        (all by default), as an RGBX view of the canvas (no copy; valid until the next draw)."""
        canvas = self.figure.canvas
        canvas.restore_region(self._background)
        for artist in self._dynamic + ([self._reading] if with_reading else []):
            self.figure.draw_artist(artist)
        width, height = canvas.get_width_height()
        rows = height if rows is None else rows
        return Image.frombuffer("RGBX", (width, rows), canvas.buffer_rgba(), "raw", "RGBX", 0, 1)

    def live_picture(self) -> bytes:
        """What the live widget shows: the drawing, without the reading, as JPEG bytes."""
        image = self._render(with_reading=False, rows=self._live_rows)
        buffer = io.BytesIO()
        image.save(buffer, format="jpeg", quality=LIVE_QUALITY, subsampling=0)
        return buffer.getvalue()

    def live_picture_width(self) -> int:
        """The width in CSS pixels at which the live widget shows the picture."""
        return round(self.size[0] * CSS_PX_PER_INCH)

    def picture(self, with_reading: bool = True, scale: int = 1) -> Image.Image:
        """The book's picture of the current state as an RGB image (what :meth:`png` encodes):
        ``size`` inches at ``style.DPI`` times ``scale``, resampled from the drawing.

        ``scale`` 2 is the HTML book's frames (``memkit.figures.frames``): drawn for a screen
        of two device pixels per CSS pixel and shown at the size of ``scale`` 1, so that
        they stay sharp on a phone's or a laptop's 2x screen.
        """
        if scale not in (1, 2):
            raise ValueError(f"scale must be 1 or 2, not {scale!r}")
        image = self._render(with_reading).convert("RGB")
        width = round(self.size[0] * style.DPI * scale)
        height = round(self.size[1] * style.DPI * scale)
        return image.resize((width, height), Image.Resampling.LANCZOS)

    def png(self, with_reading: bool = True, scale: int = 1) -> bytes:
        """The figure in its current state as PNG bytes, its reading drawn under it.

        The book's picture: ``size`` inches at ``style.DPI`` (times ``scale``: see
        :meth:`picture`). The live widget shows :meth:`live_picture` instead, with the
        reading as text beside the picture (``with_reading=False`` leaves the reading out
        here too).
        """
        buffer = io.BytesIO()
        self.picture(with_reading, scale).save(buffer, format="png", compress_level=1)
        return buffer.getvalue()

    def widget(self) -> widgets.Box:
        """The prompt, the controls, the live picture and its one-line reading, in one box."""
        if self._box is None:
            width = self.live_picture_width()
            self._image = widgets.Image(
                value=self.live_picture(), format="jpeg",
                layout=widgets.Layout(width=f"{width}px", max_width="100%", height="auto"),
            )
            self._label = widgets.HTML(value=self._caption,
                                       layout=widgets.Layout(margin="0 0 0 2px"))
            controls = widgets.HBox(
                list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")
            )
            prompt = widgets.Label(value=self.prompt, layout=widgets.Layout(margin="0 0 0 2px"))
            prompt.add_class("memfig-prompt")  # wrapped, not cut (jupyter/custom/custom.css)
            self._box = widgets.VBox([prompt, controls, self._image, self._label])
        return self._box

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = self.widget()._repr_mimebundle_(include=include, exclude=exclude) or {}
        if isinstance(bundle, tuple):  # (data, metadata) form
            bundle = bundle[0]
        bundle = dict(bundle)
        bundle["image/png"] = base64.b64encode(self.png()).decode("ascii")
        bundle["text/plain"] = f"<{self.id}: {self.caption}>"
        return bundle

    def __repr__(self) -> str:
        return f"<figure {self.id!r}: {self.caption}>"
