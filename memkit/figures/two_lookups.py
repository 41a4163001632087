"""Figure two-lookups (Prologue): one prediction uses both memories.

Pick an example prompt. The copper token is where the next token is predicted, the
blue tokens are what attention reads from the context (the fast memory), and the
violet box is what the weights supply (the slow memory). The examples are
illustrations of the two kinds of lookup, not measurements of a trained model.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_rgba
from matplotlib.font_manager import FontProperties
from matplotlib.patches import FancyBboxPatch
from matplotlib.path import Path
from matplotlib.textpath import TextPath

from memkit import style
from memkit.figures.base import InteractiveFigure


class Example(NamedTuple):
    """One prompt: its tokens, the ones attention reads, the next token and what the weights add."""

    tokens: tuple[str, ...]
    read: tuple[int, ...]  # indices of the context tokens attention reads
    next_token: str
    fact: str  # what the weights supply, as written in the violet box
    supply: str  # the same, as the reading words it


EXAMPLES = {
    "fact": Example(("The", "capital", "of", "France", "is"), (1, 3), "Paris",
                    "France's capital is Paris", "the capital of France"),
    "names": Example(("Alice", "gave", "Bob", "a", "book", ".", "Then", "Bob", "thanked"), (0, 2),
                     "Alice", "one thanks whoever gave", "the grammar of 'thanked'"),
    "code": Example(("def", "add", "(", "a", ",", "b", ")", ":", "return", "a", "+"), (3, 5), "b",
                    "'+' needs a second operand", "Python's grammar of '+'"),
    "translation": Example(("cat", "=", "chat", ";", "dog", "=", "chien", ";", "house", "="),
                           (2, 6, 8), "maison", "'house' in French is 'maison'", "the French word"),
    "new word": Example(("A", "wug", "is", "a", "small", "bird", ".", "I", "saw", "two"), (1,),
                        "wugs", "English plurals add -s", "the plural -s"),
}
MAX_TOKENS = max(len(example.tokens) for example in EXAMPLES.values())

# layout in inches, in one axes spanning the figure above the reading
WIDTH, HEIGHT = 7.6, 2.4
ROW_Y, BOX_H = 1.12, 0.32  # bottom and height of the token row
PAD, MIN_BOX, GAP = 0.17, 0.26, 0.09  # inner padding and least width of a token box, gap
FACT_BOX = (2.9, 0.24, 3.0, 0.34)  # x, y, width, height of the violet box
ARROW_GAP = 0.38  # room for the arrow between the prompt and the next token
ARROW = {"width": 0.012, "head_width": 0.1, "head_length": 0.12, "length_includes_head": True}
FONT_SIZE = 10
BASELINE = -0.05  # baseline of a word below the middle of its box
# the narrow layout (a phone's column): the prompt in up to two rows, the last one ending
# with the prediction; the violet box under them, its label under it; the key on top
NARROW_WIDTH, NARROW_HEIGHT = 4.4, 3.3
NARROW_ROW_Y, ROW_STEP = 1.15, 0.8  # bottom of the last row; from one row's bottom to the next
NARROW_FACT_BOX = (0.7, 0.5, 3.0, 0.34)
MARGIN = 0.1  # least room left and right of a row of tokens, in the narrow layout


def lookups(prompt: str) -> dict:
    """The tokens of an example prompt and the role of each (Prologue).

    Returns tokens, roles (one per token: "prediction" for the last token, where the
    next one is predicted; "read" for the context tokens attention reads; "other"),
    read (the tokens read), next_token, fact (what the weights supply, for the box)
    and supply (the same, for the reading).
    """
    if prompt not in EXAMPLES:
        raise ValueError(f"prompt must be one of {sorted(EXAMPLES)}, got {prompt!r}")
    example = EXAMPLES[prompt]
    roles = ["read" if i in example.read else "other" for i in range(len(example.tokens))]
    roles[-1] = "prediction"
    return {
        "prompt": prompt,
        "tokens": example.tokens,
        "roles": roles,
        "read": [example.tokens[i] for i in example.read],
        "next_token": example.next_token,
        "fact": example.fact,
        "supply": example.supply,
    }


@functools.lru_cache(maxsize=None)
def _word(word: str, weight: str) -> tuple[Path, float, float]:
    """The outline of a word at FONT_SIZE in inches, with its left and right ends.

    Words are drawn as filled outlines in one collection: matplotlib renders a text
    glyph by glyph, which would cost more than the rest of an update.
    """
    outline = TextPath((0, 0), word, size=FONT_SIZE / 72, prop=FontProperties(weight=weight))
    extents = outline.get_extents()
    return outline, extents.x0, extents.x1


def _centred(word: str, x: float, y: float, weight: str = "normal") -> Path:
    """The outline of ``word`` centred on x, its baseline BASELINE below y."""
    outline, left, right = _word(word, weight)
    return Path(outline.vertices + (x - (left + right) / 2, y + BASELINE), outline.codes)


def _box_width(word: str) -> float:
    _, left, right = _word(word, "normal")
    return max(right - left + PAD, MIN_BOX)


PAPER = style.RC["figure.facecolor"]
BOX_FACE = {
    "prediction": to_rgba(style.QUERY, 0.9),
    "read": to_rgba(style.KEY, 0.9),
    "other": to_rgba(style.NEUTRAL, 0.18),
}
WORD_COLOUR = {"prediction": PAPER, "read": PAPER, "other": style.INK}


def _rows(widths: np.ndarray, next_width: float, room: float) -> int:
    """Where the prompt breaks into two rows for ``room`` inches: the index of the first
    token of the last row (the longest last row, arrow and next token included, that fits;
    0: one row)."""
    for start in range(len(widths)):
        last = widths[start:].sum() + GAP * (len(widths) - start - 1) + ARROW_GAP + next_width
        if last <= room:
            return start
    return len(widths) - 1


def _box(ax, **kwargs):
    box = FancyBboxPatch((0, ROW_Y), 1, BOX_H, boxstyle="round,pad=0,rounding_size=0.08",
                         lw=1.2, **kwargs)
    ax.add_patch(box)
    return box


class TwoLookups(InteractiveFigure):
    id = "two-lookups"
    chapter = "Prologue"
    size = (WIDTH, HEIGHT / 0.9)
    narrow_size = (NARROW_WIDTH, NARROW_HEIGHT / 0.9)
    narrow_grid = False  # its one axes spans the figure, in inches
    alt_text = ("A prompt as a row of tokens: the copper token where the next one is predicted, "
                "the blue tokens attention reads from the context, and a violet box for what "
                "the weights supply.")
    prompt = ("Pick an example prompt: the blue tokens are what attention reads from the "
              "context, the violet box what the weights supply.")
    compute = staticmethod(lookups)

    def make_controls(self):
        return {
            "prompt": widgets.ToggleButtons(options=list(EXAMPLES), value="names", description="prompt")
        }

    def build(self, figure):
        narrow = self.layout == "narrow"
        self.width = NARROW_WIDTH if narrow else WIDTH
        self.row_y = NARROW_ROW_Y if narrow else ROW_Y
        self.fact_box = NARROW_FACT_BOX if narrow else FACT_BOX
        ax = figure.add_axes((0, 0.1, 1, 0.9))
        ax.set_xlim(0, self.width)
        ax.set_ylim(0, NARROW_HEIGHT if narrow else HEIGHT)
        ax.axis("off")
        self.boxes = [_box(ax, ec="none") for _ in range(MAX_TOKENS)]
        self.next_box = _box(ax, fc=PAPER, ec=style.QUERY, ls="--")
        self.next_arrow = ax.arrow(0, 0, 1, 0, color=style.NEUTRAL, **ARROW)
        self.arcs = LineCollection([], colors=style.KEY, linewidths=1.6)
        ax.add_collection(self.arcs)
        (self.arc_end,) = ax.plot([], [], "v", color=style.KEY, ms=6)
        x, y, width, height = self.fact_box
        ax.add_patch(FancyBboxPatch((x, y), width, height, boxstyle="round,pad=0,rounding_size=0.1",
                                    fc=to_rgba(style.VALUE, 0.12), ec=style.VALUE, lw=1.4))
        if narrow:  # the label under the box
            ax.text(x + width / 2, y - 0.1, "the weights (slow memory) supply", ha="center",
                    va="top", color=style.VALUE)
            key = ((0.1, 3.05, "the prediction is made here", "prediction"),
                   (0.1, 2.8, "attention reads it from the context (fast memory)", "read"))
        else:
            ax.text(x - 0.12, y + height / 2, "the weights (slow memory) supply", ha="right",
                    va="center", color=style.VALUE)
            key = ((0.2, 2.15, "the prediction is made here", "prediction"),
                   (2.8, 2.15, "attention reads it from the context (fast memory)", "read"))
        self.weight_arrow = ax.arrow(0, 0, 0, 1, color=style.VALUE, **ARROW)
        for left, bottom, label, role in key:
            ax.add_patch(FancyBboxPatch((left, bottom), 0.2, 0.15, fc=BOX_FACE[role], ec="none",
                                        boxstyle="round,pad=0,rounding_size=0.04"))
            ax.text(left + 0.3, bottom + 0.075, label, va="center", color=style.INK)
        ax.text(self.width - 0.08, 0.0, "illustration, not a measurement", ha="right",
                va="bottom", color=style.NEUTRAL, fontsize=8, style="italic")
        # every word on the picture (tokens, next token, fact): one collection of outlines,
        # each made once, here, so that no change of prompt waits for one
        for example in EXAMPLES.values():
            for word in example.tokens + (example.fact,):
                _word(word, "normal")
            _word(example.next_token, "bold")
        self.words = PathCollection([], edgecolors="none", transform=ax.transData)
        ax.add_collection(self.words)
        self.dynamic(self.boxes, self.next_arrow, self.next_box, self.arcs, self.arc_end,
                     self.weight_arrow, self.words)

    def draw(self, data):
        tokens, roles = data["tokens"], data["roles"]
        widths = np.array([_box_width(token) for token in tokens])
        next_width = _box_width(data["next_token"])
        # the wide layout: one row; the narrow: the last row as long as fits, the rest above
        start = 0 if self.layout == "wide" else _rows(widths, next_width,
                                                       self.width - 2 * MARGIN)
        lefts, bottoms = np.empty(len(tokens)), np.empty(len(tokens))
        for row, (first, end) in enumerate(((start, len(tokens)), (0, start))):
            if first == end:  # one row
                continue
            row_widths = widths[first:end]
            total = row_widths.sum() + GAP * (len(row_widths) - 1)
            if row == 0:
                total += ARROW_GAP + next_width
            lefts[first:end] = (self.width - total) / 2 + np.concatenate(
                [[0], np.cumsum(row_widths + GAP)[:-1]])
            bottoms[first:end] = self.row_y + row * ROW_STEP
        centres = lefts + widths / 2
        middles = bottoms + BOX_H / 2
        middle = self.row_y + BOX_H / 2
        for i, box in enumerate(self.boxes):
            box.set_visible(i < len(tokens))
            if i < len(tokens):
                box.set_x(lefts[i])
                box.set_y(bottoms[i])
                box.set_width(widths[i])
                box.set_facecolor(BOX_FACE[roles[i]])
        right = lefts[-1] + widths[-1]
        self.next_arrow.set_data(x=right + 0.04, y=middle, dx=ARROW_GAP - 0.08, dy=0)
        self.next_box.set_x(right + ARROW_GAP)
        self.next_box.set_y(self.row_y)
        self.next_box.set_width(next_width)
        x, y, width, height = self.fact_box
        self.words.set_paths(
            [_centred(token, centre, mid) for token, centre, mid in zip(tokens, centres, middles)]
            + [_centred(data["next_token"], right + ARROW_GAP + next_width / 2, middle, "bold"),
               _centred(data["fact"], x + width / 2, y + height / 2)]
        )
        self.words.set_facecolors([WORD_COLOUR[role] for role in roles] + [style.QUERY, style.VALUE])
        # a parabola from the top of each token read to the top of the prediction token,
        # higher the farther it reaches; from a row above, a line down from its bottom
        top, target = self.row_y + BOX_H + 0.03, centres[-1]
        s = np.linspace(0, 1, 24)
        self.arcs.set_segments([
            np.stack([centre + (target - centre) * s,
                      top + 4 * (0.2 + 0.07 * (target - centre)) * s * (1 - s)], 1)
            if bottom == self.row_y else
            np.stack([centre + (target - centre) * s, bottom - 0.03 + (top - bottom + 0.03) * s], 1)
            for centre, bottom, role in zip(centres, bottoms, roles) if role == "read"
        ])
        self.arc_end.set_data([target], [top + 0.04])
        start = x + width / 2
        self.weight_arrow.set_data(x=start, y=y + height, dx=target - start,
                                   dy=self.row_y - 0.04 - y - height)

    def describe(self, data):
        read = ", ".join(f"'{token}'" for token in data["read"])
        return f"attention reads {read}; the weights supply {data['supply']}"


FIGURE = TwoLookups
