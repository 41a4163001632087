"""Figure layer-questions (Chapter 13): the same four questions asked of seven layers.

Pick a layer: its state, who writes it and how, how it is read and what it forgets,
always in the same four rows. The right panel counts the numbers the layer holds as
a sequence is read (keys and values of width 64): flat for a fixed state, a rising
line for a cache.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from memkit import style, unified
from memkit.figures.base import InteractiveFigure, Pixels, panels

LAYER_LABELS = tuple(unified.QUESTION_LAYERS)
ROWS = ("state", "write", "read", "forget")
D = 64
TOKENS = np.linspace(0, 4096, 65)
#: how each layer forgets, in three words (Chapter 13's statement 7)
FORGETS = {"linear layer": "only in training", "MLP": "only in training",
           "softmax attention": "nothing: the cache grows", "linear attention": "never: it interferes",
           "gated / decay": "by decay", "delta rule": "by overwriting",
           "test-time training": "by learning"}


def layer_card(layer: str) -> dict:
    """The four answers for one layer (``unified.layer_answers``) and what it holds.

    Returns the answers, ``stored`` (65,), the numbers held after 0..4096 tokens
    (``unified.numbers_stored`` with d = 64), and ``grows``: whether that count rises.
    """
    answers = unified.layer_answers(layer)
    stored = unified.numbers_stored(layer, TOKENS, D)
    return {"layer": layer, **answers, "stored": stored, "grows": bool(stored[-1] > stored[0])}


def _render_card(label: str, width: float, height: float, dpi: float,
                 narrow: bool = False) -> np.ndarray:
    """The card of one layer (its name and the four rows) as an RGBA picture, width x height
    px: each row's name beside its answer, or (``narrow``) above it, in type of 10 points
    or more."""
    answers = unified.layer_answers(label)
    with rc_context(style.RC):
        sheet = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
        FigureCanvasAgg(sheet)
        ax = sheet.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 4.4)
        ax.axis("off")
        ax.text(0.0, 4.1, label, fontsize=10.5 if narrow else 10, color=style.QUERY,
                weight="bold", va="center")
        colours = (style.KEY, style.VALUE, style.QUERY, style.INK)
        for i, (row, colour) in enumerate(zip(ROWS, colours)):
            y = 3.3 - i
            ax.axhline(y - 0.5, color=style.NEUTRAL, lw=0.5)
            if narrow:
                ax.text(0.0, y + 0.2, row, fontsize=10, weight="bold", color=colour, va="center")
                ax.text(0.04, y - 0.2, answers[row], fontsize=10, color=style.INK, va="center",
                        wrap=True)
            else:
                ax.text(0.0, y, row, fontsize=9, weight="bold", color=colour, va="center")
                ax.text(0.17, y, answers[row], fontsize=8.5, color=style.INK, va="center")
        sheet.canvas.draw()
        return np.asarray(sheet.canvas.buffer_rgba()).copy()


class LayerQuestions(InteractiveFigure):
    id = "layer-questions"
    chapter = "13"
    size = (7.6, 3.0)
    narrow_size = (4.4, 5.6)
    alt_text = ("A card answering four questions about one layer (its state, how it is written, "
                "how it is read, what it forgets) beside a plot of the numbers the layer holds "
                "against the tokens read.")
    prompt = ("Pick a layer: the card answers the same four questions for it, and the plot "
              "shows whether what it holds stays flat or grows with the sequence.")
    compute = staticmethod(layer_card)

    def make_controls(self):
        return {"layer": widgets.ToggleButtons(options=list(LAYER_LABELS), value=LAYER_LABELS[0],
                                               description="layer")}

    def build(self, figure):
        card, count = panels(
            figure, self.layout, 2, [3, 1.3], heights=[1.5, 1],
            wide=dict(left=0.02, right=0.98, top=0.9, bottom=0.25, wspace=0.45))
        (self.line,) = count.plot(TOKENS, np.ones_like(TOKENS), color=style.KEY, lw=2)
        count.set_yscale("log")
        count.set_ylim(1e3, 1e6)
        count.set_xlim(0, TOKENS[-1])
        count.set_xticks([0, 2048, 4096])
        count.set_xlabel("tokens read")
        count.set_title("numbers held, d = 64", fontsize=self.pt(9))
        card.axis("off")
        if self.layout == "narrow":  # the card's place, once the grid is laid out
            figure.get_layout_engine().execute(figure)
        # Text is slow to draw, so each layer's card (title, four labelled rows) is rendered
        # once, here, into a picture of the card's size in pixels; draw() only swaps the
        # picture, copied onto the canvas as it is.
        box = card.get_window_extent()
        self._card_size = (round(box.width), round(box.height), figure.dpi,
                           self.layout == "narrow")
        self.cards = {label: _render_card(label, *self._card_size) for label in LAYER_LABELS}
        self.image = Pixels(box.x0, box.y0, self._card(LAYER_LABELS[0]))
        figure.add_artist(self.image)
        self.dynamic(self.image, self.line)

    def _card(self, label):
        if label not in self.cards:
            self.cards[label] = _render_card(label, *self._card_size)
        return self.cards[label]

    def draw(self, data):
        self.image.set_pixels(self._card(data["layer"]))
        self.line.set_ydata(data["stored"])

    def describe(self, data):
        size = "growing, 2dn" if data["grows"] else f"fixed, {int(data['stored'][0])}"
        return f"{data['layer']}: state {size} numbers; forgets {FORGETS[data['layer']]}"


FIGURE = LayerQuestions
