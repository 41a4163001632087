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


def _box(ax, **kwargs):
    box = FancyBboxPatch((0, ROW_Y), 1, BOX_H, boxstyle="round,pad=0,rounding_size=0.08",
                         lw=1.2, **kwargs)
    ax.add_patch(box)
    return box


class TwoLookups(InteractiveFigure):
    id = "two-lookups"
    chapter = "Prologue"
    size = (WIDTH, HEIGHT / 0.9)
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
        ax = figure.add_axes((0, 0.1, 1, 0.9))
        ax.set_xlim(0, WIDTH)
        ax.set_ylim(0, HEIGHT)
        ax.axis("off")
        self.boxes = [_box(ax, ec="none") for _ in range(MAX_TOKENS)]
        self.next_box = _box(ax, fc=PAPER, ec=style.QUERY, ls="--")
        self.next_arrow = ax.arrow(0, 0, 1, 0, color=style.NEUTRAL, **ARROW)
        self.arcs = LineCollection([], colors=style.KEY, linewidths=1.6)
        ax.add_collection(self.arcs)
        (self.arc_end,) = ax.plot([], [], "v", color=style.KEY, ms=6)
        x, y, width, height = FACT_BOX
        ax.add_patch(FancyBboxPatch((x, y), width, height, boxstyle="round,pad=0,rounding_size=0.1",
                                    fc=to_rgba(style.VALUE, 0.12), ec=style.VALUE, lw=1.4))
        ax.text(x - 0.12, y + height / 2, "the weights (slow memory) supply", ha="right",
                va="center", color=style.VALUE)
        self.weight_arrow = ax.arrow(0, 0, 0, 1, color=style.VALUE, **ARROW)
        for left, label, role in ((0.2, "the prediction is made here", "prediction"),
                                  (2.8, "attention reads it from the context (fast memory)", "read")):
            ax.add_patch(FancyBboxPatch((left, 2.15), 0.2, 0.15, fc=BOX_FACE[role], ec="none",
                                        boxstyle="round,pad=0,rounding_size=0.04"))
            ax.text(left + 0.3, 2.225, label, va="center", color=style.INK)
        ax.text(WIDTH - 0.08, 0.0, "illustration, not a measurement", ha="right", va="bottom",
                color=style.NEUTRAL, fontsize=8, style="italic")
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
        total = widths.sum() + GAP * (len(tokens) - 1) + ARROW_GAP + next_width
        lefts = (WIDTH - total) / 2 + np.concatenate([[0], np.cumsum(widths + GAP)[:-1]])
        centres = lefts + widths / 2
        middle = ROW_Y + BOX_H / 2
        for i, box in enumerate(self.boxes):
            box.set_visible(i < len(tokens))
            if i < len(tokens):
                box.set_x(lefts[i])
                box.set_width(widths[i])
                box.set_facecolor(BOX_FACE[roles[i]])
        right = lefts[-1] + widths[-1]
        self.next_arrow.set_data(x=right + 0.04, y=middle, dx=ARROW_GAP - 0.08, dy=0)
        self.next_box.set_x(right + ARROW_GAP)
        self.next_box.set_width(next_width)
        x, y, width, height = FACT_BOX
        self.words.set_paths(
            [_centred(token, centre, middle) for token, centre in zip(tokens, centres)]
            + [_centred(data["next_token"], right + ARROW_GAP + next_width / 2, middle, "bold"),
               _centred(data["fact"], x + width / 2, y + height / 2)]
        )
        self.words.set_facecolors([WORD_COLOUR[role] for role in roles] + [style.QUERY, style.VALUE])
        # a parabola from the top of each token read to the top of the prediction token,
        # higher the farther it reaches
        top, target = ROW_Y + BOX_H + 0.03, centres[-1]
        s = np.linspace(0, 1, 24)
        self.arcs.set_segments([
            np.stack([centre + (target - centre) * s,
                      top + 4 * (0.2 + 0.07 * (target - centre)) * s * (1 - s)], 1)
            for centre, role in zip(centres, roles) if role == "read"
        ])
        self.arc_end.set_data([target], [top + 0.04])
        start = x + width / 2
        self.weight_arrow.set_data(x=start, y=y + height, dx=target - start,
                                   dy=ROW_Y - 0.04 - y - height)

    def describe(self, data):
        read = ", ".join(f"'{token}'" for token in data["read"])
        return f"attention reads {read}; the weights supply {data['supply']}"


FIGURE = TwoLookups
