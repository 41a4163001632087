"""Figure residual-bus (Chapter 8): one layer, two lookups, one bus.

The residual stream (grey) runs through the layer. Toggle the sublayer: the
attention sublayer reads the stream through a layer norm, consults the fast memory
(the other tokens of this sequence, blue) and adds its recall back; the MLP
sublayer reads the stream, consults the slow memory (its own weights, violet) and
adds its recall back. The bars follow the stream of the last position on a small
random pre-norm layer (five tokens, d = 4, two heads, MLP hidden width 4d): the
stream before the sublayer, what it adds, and the stream after.
"""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyBboxPatch

from memkit import block, style
from memkit.figures.base import InteractiveFigure, panels

N_TOKENS, WIDTH, HEADS, SEED = 5, 4, 2, 8
OPTIONS = ["attention", "MLP", "whole layer", "stream only"]
COLOURS = {"attention": style.KEY, "MLP": style.VALUE}
MEMORY = {"attention": f"the {N_TOKENS} tokens of the context\n(fast memory)",
          "MLP": "its own weights\n(slow memory)"}


@functools.lru_cache(maxsize=1)
def _layer() -> block.BlockPass:
    rng = np.random.default_rng(SEED)
    X = rng.standard_normal((N_TOKENS, WIDTH))
    W_Q, W_K, W_V, W_O = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH) for _ in range(4))
    W_1 = rng.standard_normal((WIDTH, 4 * WIDTH)) / np.sqrt(WIDTH)
    W_2 = rng.standard_normal((4 * WIDTH, WIDTH)) / np.sqrt(4 * WIDTH)
    return block.transformer_block(X, W_Q, W_K, W_V, W_O, W_1, W_2, HEADS)


def residual_bus(sublayer: str) -> dict:
    """What one sublayer (or the whole layer) does to the last position's stream.

    Chapter 8, on :func:`memkit.block.transformer_block` (pre-norm, causal) of a
    seeded random layer with N_TOKENS tokens of width WIDTH and HEADS heads.
    ``sublayer`` is one of OPTIONS. Returns sublayer, active (the sublayers shown
    working), before (WIDTH,) the stream before, added (WIDTH,) what is added,
    after (WIDTH,) = before + added, and the norm of added.
    """
    if sublayer not in OPTIONS:
        raise ValueError(f"sublayer must be one of {OPTIONS}, got {sublayer!r}")
    run = _layer()
    last = -1
    before, added, active = {
        "attention": (run.x_in[last], run.attn_out[last], ["attention"]),
        "MLP": (run.x_mid[last], run.mlp_out[last], ["MLP"]),
        "whole layer": (run.x_in[last], run.attn_out[last] + run.mlp_out[last],
                        ["attention", "MLP"]),
        "stream only": (run.x_in[last], np.zeros(WIDTH), []),
    }[sublayer]
    return {"sublayer": sublayer, "active": active, "before": before, "added": added,
            "after": before + added, "added_norm": float(np.linalg.norm(added))}


class ResidualBus(InteractiveFigure):
    id = "residual-bus"
    chapter = "8"
    size = (7.6, 3.3)
    narrow_size = (4.4, 5.2)
    alt_text = ("A layer drawn as one residual stream in grey, with an attention sublayer "
                "reading the other tokens and an MLP sublayer reading its weights, beside bars "
                "of the last position's stream before, added and after.")
    prompt = ("Switch the sublayer: its box lights up with the memory it consults, and the bars "
              "show what it adds to the last position's stream.")
    compute = staticmethod(residual_bus)

    def make_controls(self):
        return {"sublayer": widgets.ToggleButtons(options=OPTIONS, value="attention",
                                                  description="sublayer")}

    def build(self, figure):
        self.ax_bus, self.ax_bars = panels(
            figure, self.layout, 2, [2.1, 1], heights=[1.2, 1],
            wide=dict(left=0.02, right=0.98, top=0.9, bottom=0.2, wspace=0.18))
        ax = self.ax_bus
        ax.annotate("", xy=(10, 0), xytext=(0, 0),
                    arrowprops={"arrowstyle": "-|>", "color": style.NEUTRAL, "lw": 3})
        ax.text(0, -0.45, "residual stream x (one vector per position)", color=style.NEUTRAL,
                fontsize=8)
        self.boxes, self.memory_text, reads, adds = {}, {}, [], []
        for name, left in (("attention", 1.8), ("MLP", 6.0)):
            box = FancyBboxPatch((left, 1.1), 2.2, 0.9, boxstyle="round,pad=0.05",
                                 fc="white", ec=COLOURS[name], lw=1.5)
            ax.add_patch(box)
            self.boxes[name] = box
            label = "Attn(LN x)" if name == "attention" else "MLP(LN x)"
            ax.text(left + 1.1, 1.55, label, ha="center", va="center", fontsize=9)
            memory = "consults " + MEMORY[name]
            if self.layout == "narrow":  # half the column's width a line
                memory = memory.replace(" of the", "\nof the")
            ax.text(left + 1.1, 2.45, memory, ha="center", va="center",
                    fontsize=7, color=COLOURS[name])
            # a tinted band behind the memory a working sublayer consults
            self.memory_text[name] = ax.add_patch(FancyBboxPatch(
                (left - 0.15, 2.15), 2.5, 0.6, boxstyle="round,pad=0.02", ec="none",
                fc=to_rgba(COLOURS[name], 0.0), zorder=0))
            reads.append([(left + 0.4, 0.08), (left + 0.4, 1.05)])
            adds.append([(left + 1.8, 1.05), (left + 1.8, 0.12)])
            ax.text(left + 0.25, 0.55, "read", ha="right", fontsize=7, color=style.NEUTRAL)
            ax.text(left + 1.95, 0.55, "add +", ha="left", fontsize=7, color=COLOURS[name])
        self.reads = LineCollection(reads, colors=style.NEUTRAL, linewidths=1.5)
        self.adds = LineCollection(adds, colors=[COLOURS["attention"], COLOURS["MLP"]],
                                   linewidths=2.5)
        ax.add_collection(self.reads)
        ax.add_collection(self.adds)
        ax.set_xlim(-0.2, 10.3)
        ax.set_ylim(-0.7, 2.9)
        ax.axis("off")

        ax = self.ax_bars
        x = np.arange(WIDTH)
        ax.axhline(0, color=style.NEUTRAL, lw=0.8)
        self.before = ax.bar(x - 0.27, np.zeros(WIDTH), width=0.26, color=style.NEUTRAL,
                             label="before")
        self.added = ax.bar(x, np.zeros(WIDTH), width=0.26, color=style.KEY, label="added")
        self.after = ax.bar(x + 0.27, np.zeros(WIDTH), width=0.26, color=style.INK, label="after")
        ax.set_xticks(x, [f"x{i + 1}" for i in x])
        ax.set_ylim(-2.6, 3.8)
        ax.legend(loc="upper center", ncol=3, fontsize=7, handlelength=1)
        ax.set_title("last position's stream", fontsize=9)
        self.dynamic(self.boxes.values(), self.memory_text.values(), self.reads, self.adds,
                     self.before, self.added, self.after)

    def draw(self, data):
        active = data["active"]
        for name, box in self.boxes.items():
            on = name in active
            box.set_facecolor(to_rgba(COLOURS[name], 0.18 if on else 0.0))
            box.set_alpha(None)
            box.set_linewidth(2.2 if on else 0.8)
            self.memory_text[name].set_facecolor(to_rgba(COLOURS[name], 0.15 if on else 0.0))
        names = ["attention", "MLP"]
        self.reads.set_colors([to_rgba(style.NEUTRAL, 1.0 if n in active else 0.15) for n in names])
        self.adds.set_colors([to_rgba(COLOURS[n], 1.0 if n in active else 0.12) for n in names])
        colour = COLOURS.get(active[0], style.NEUTRAL) if len(active) == 1 else style.HIGHLIGHT
        for bars, values in ((self.before, data["before"]), (self.added, data["added"]),
                             (self.after, data["after"])):
            for bar, value in zip(bars, values):
                bar.set_height(value)
        for bar in self.added:
            bar.set_color(colour)

    def describe(self, data):
        sub = data["sublayer"]
        if sub == "stream only":
            return "no sublayer: the stream passes through unchanged"
        if sub == "whole layer":
            return f"both sublayers read and add: the layer adds a vector of norm {data['added_norm']:.2f}"
        return f"{sub} reads x, consults {MEMORY[sub].split(chr(10))[0]}, adds norm {data['added_norm']:.2f}"


FIGURE = ResidualBus
