"""Figure attention-gradient-graph (Chapter 7): the backward pass of attention, node by node.

The forward graph runs in grey from the query q and the keys k_i to the logits
l_i = beta q^T k_i, the weights a = softmax(l), the output o = sum_i a_i v_i (which
also reads the values v_i) and the loss L. Pick a node: the copper arrows show the
way the error signal travels back from L to that node, the box gives the gradient
formula there (Derivation D6), and the bars its entries on a small example: the
three keys and values of the key-training figure, q = (1, 0), beta = 3 and the loss
L = (o - 1)^2 / 2, so that g = dL/do = o - 1.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.patches import FancyBboxPatch
from matplotlib.transforms import Affine2D

from memkit import attention, style
from memkit.figures.base import InteractiveFigure, text_outline, panels
from memkit.figures.key_training import BETA, KEY_ANGLES, QUERY, TARGET, VALUES

KEYS = np.column_stack([np.cos(np.radians(KEY_ANGLES)), np.sin(np.radians(KEY_ANGLES))])

#: where each node sits in the graph (x, y)
NODES = {
    "query": (0.0, 2.0), "keys": (0.0, 1.0), "values": (0.0, 0.0), "logits": (1.3, 1.5),
    "weights": (2.5, 1.5), "output": (3.7, 0.75), "loss": (4.9, 0.75),
}
SYMBOLS = {"query": "$q$", "keys": "$k_i$", "values": "$v_i$", "logits": r"$\ell_i$",
           "weights": "$a_i$", "output": "$o$", "loss": "$L$"}
#: forward edges (from, to)
EDGES = [("query", "logits"), ("keys", "logits"), ("logits", "weights"), ("weights", "output"),
         ("values", "output"), ("output", "loss")]
#: the backward path from L to each node, as forward edges walked in reverse
PATHS = {
    "loss": [], "output": [5], "weights": [5, 3], "logits": [5, 3, 2], "keys": [5, 3, 2, 1],
    "query": [5, 3, 2, 0], "values": [5, 4],
}
FORMULAS = {
    "loss": (r"$\partial L/\partial L = 1$", "dL/dL = 1"),
    "output": (r"$g = \partial L/\partial o$", "g = dL/do"),
    "weights": (r"$\partial L/\partial a_i = v_i^\top g$", "dL/da_i = v_i^T g"),
    "logits": (r"$\partial L/\partial \ell_i = a_i\,(v_i - o)^\top g$", "dL/dl_i = a_i (v_i - o)^T g"),
    "keys": (r"$\partial L/\partial k_i = \beta\,\frac{\partial L}{\partial \ell_i}\,q$",
             "dL/dk_i = beta dL/dl_i q"),
    "query": (r"$\partial L/\partial q = \beta\sum_i \frac{\partial L}{\partial \ell_i}\,k_i$",
              "dL/dq = beta sum_i dL/dl_i k_i"),
    "values": (r"$\partial L/\partial v_i = a_i\,g$", "dL/dv_i = a_i g"),
}
MAX_ENTRIES = 6


def gradient_at(node: str) -> dict:
    """The gradient of L = (o - 1)^2 / 2 at one node of the attention graph.

    Chapter 7, Derivation D6, with :func:`memkit.attention.attention_gradients` on
    keys KEYS (3, 2), scalar values VALUES (3,), q = (1, 0) and beta = 3; ``g = o - 1``.
    Returns node, formula (mathtext) and plain (text) of the gradient there, path
    (indices into EDGES of the backward route from L), values (the gradient's
    entries, flattened: 1 for L and o, 3 for a, l and v, 2 for q, 6 for the keys
    row by row), labels (one per entry), the output o and g.
    """
    if node not in NODES:
        raise ValueError(f"node must be one of {list(NODES)}, got {node!r}")
    V = VALUES[:, None]
    o, a = attention.attend(KEYS, V, QUERY, BETA)
    g = o - TARGET
    grads = attention.attention_gradients(KEYS, V, QUERY, BETA, g)
    values, labels = {
        "loss": ([1.0], ["L"]),
        "output": (g, ["o"]),
        "weights": (V @ g, [f"a{i}" for i in range(3)]),
        "logits": (grads.dl, [f"l{i}" for i in range(3)]),
        "keys": (grads.dK.ravel(), [f"k{i}.{c}" for i in range(3) for c in (1, 2)]),
        "query": (grads.dq, ["q.1", "q.2"]),
        "values": (grads.dV.ravel(), [f"v{i}" for i in range(3)]),
    }[node]
    formula, plain = FORMULAS[node]
    return {
        "node": node, "formula": formula, "plain": plain, "path": PATHS[node],
        "values": np.asarray(values, dtype=float), "labels": labels,
        "output": float(o[0]), "g": float(g[0]), "weights": a,
    }


class AttentionGradientGraph(InteractiveFigure):
    id = "attention-gradient-graph"
    chapter = "7"
    size = (7.6, 3.4)
    narrow_size = (4.4, 5.0)
    alt_text = ("The forward graph of attention in grey, from the query and the keys through "
                "the logits, the weights and the output to the loss, with copper arrows running "
                "back to the chosen node, its gradient formula in a box and bars of its "
                "entries.")
    prompt = ("Pick a node: the copper arrows trace the way the error travels back from the "
              "loss to it, and the bars give its gradient on a three-memory example.")
    compute = staticmethod(gradient_at)

    def make_controls(self):
        return {"node": widgets.ToggleButtons(options=list(NODES), value="logits",
                                              description="node")}

    def build(self, figure):
        self.ax_graph, self.ax_bars = panels(
            figure, self.layout, 2, [2.2, 1], heights=[1.8, 1],
            wide=dict(left=0.02, right=0.98, top=0.9, bottom=0.2, wspace=0.15))
        ax = self.ax_graph
        points = {name: np.array(xy) for name, xy in NODES.items()}
        self._segments = []
        for start, end in EDGES:
            a, b = points[start], points[end]
            unit = (b - a) / np.linalg.norm(b - a)
            a, b = a + 0.22 * unit, b - 0.22 * unit
            ax.annotate("", xy=b, xytext=a,
                        arrowprops={"arrowstyle": "-|>", "color": style.NEUTRAL, "lw": 1.2})
            normal = np.array([unit[1], -unit[0]]) * 0.1
            self._segments.append(np.stack([b + normal, a + normal]))
        self.backward = LineCollection(self._segments, colors=[(0, 0, 0, 0)] * len(EDGES),
                                       linewidths=2.4)
        ax.add_collection(self.backward)
        # arrow heads of the backward route, one marker at the end of each segment
        heads = np.array([s[1] for s in self._segments])
        self.heads = ax.scatter(heads[:, 0], heads[:, 1], s=28, marker="o",
                                color=[(0, 0, 0, 0)] * len(EDGES), zorder=4)
        xy = np.array(list(NODES.values()))
        ax.scatter(xy[:, 0], xy[:, 1], s=720, zorder=3, edgecolors=style.INK, linewidths=0.8,
                   facecolors="white")
        self.ring = ax.scatter([0], [0], s=980, facecolors="none", edgecolors=style.HIGHLIGHT,
                               linewidths=3.5, zorder=4)
        role = {"query": style.QUERY, "keys": style.KEY, "values": style.VALUE}
        for name, (x, y) in NODES.items():
            ax.text(x, y, SYMBOLS[name], ha="center", va="center", fontsize=11, zorder=5,
                    color=role.get(name, style.INK))
        gap = "    " if self.layout == "wide" else "\n"
        ax.text(2.45, 2.45, f"grey: forward{gap}copper: backward to the picked node",
                ha="center", fontsize=8, color=style.NEUTRAL)
        ax.add_patch(FancyBboxPatch((1.25, -0.95), 2.4, 0.7, boxstyle="round,pad=0.05",
                                    fc="white", ec=style.QUERY))
        # the formula as one outline (a mathtext Text costs more than the rest of an update)
        self.formula = PathCollection([], offsets=np.array([[2.45, -0.6]]),
                                      offset_transform=ax.transData,
                                      transform=Affine2D().scale(figure.dpi / 72),
                                      edgecolors="none", facecolors=style.QUERY)
        ax.add_collection(self.formula, autolim=False)
        ax.set_xlim(-0.4, 5.3)
        ax.set_ylim(-1.05, 2.6)
        ax.axis("off")

        ax = self.ax_bars
        ax.axhline(0, color=style.NEUTRAL, lw=0.8)
        self.bars = ax.bar(np.arange(MAX_ENTRIES), np.zeros(MAX_ENTRIES), width=0.6,
                           color=style.QUERY)
        ax.set_xticks(np.arange(MAX_ENTRIES), [""] * MAX_ENTRIES)
        ax.set_xlim(-0.6, MAX_ENTRIES - 0.4)
        ax.set_ylim(-2.0, 2.0)
        ax.set_title("entries of the gradient", fontsize=9)
        self.ticks = PathCollection([], offsets=np.zeros((0, 2)), offset_transform=ax.transData,
                                    transform=Affine2D().scale(figure.dpi / 72),
                                    edgecolors="none", facecolors=style.INK)
        self.ticks.set_clip_on(False)
        ax.add_collection(self.ticks, autolim=False)
        self.dynamic(self.backward, self.heads, self.ring, self.formula, self.bars, self.ticks)

    def draw(self, data):
        on = set(data["path"])
        colours = [style.QUERY if i in on else (0, 0, 0, 0) for i in range(len(EDGES))]
        self.backward.set_colors(colours)
        self.heads.set_facecolors(colours)
        self.ring.set_offsets([NODES[data["node"]]])
        self.formula.set_paths([text_outline(data["formula"], self.pt(12))])
        values = data["values"]
        for i, bar in enumerate(self.bars):
            bar.set_height(values[i] if i < values.size else 0.0)
        self.ticks.set_paths([text_outline(label, self.pt(7)) for label in data["labels"]])
        self.ticks.set_offsets(np.column_stack([np.arange(values.size), np.full(values.size, -2.3)]))

    def describe(self, data):
        values = ", ".join(f"{x:+.2f}" for x in data["values"][:3])
        more = ", ..." if data["values"].size > 3 else ""
        return f"{data['node']}: {data['plain']} = ({values}{more})"


FIGURE = AttentionGradientGraph
