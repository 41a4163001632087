"""Figure soft-dictionary (Chapter 6): attention returns a weighted average of values.

Turn the query q = (cos t, sin t) around the circle. Six unit keys sit on the circle
(blue); each dot grows with the weight a_i = softmax(beta K q)_i its memory receives
(beta = 6). The bars on the right list each weight a_i (top) beside the value v_i it
multiplies (bottom, violet, one number per memory); the black line across the value
bars is the answer o = sum_i a_i v_i, which moves toward the values of the keys near q.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import attention, style
from memkit.figures.base import InteractiveFigure

#: directions of the six keys, in degrees (unit keys in R^2)
KEY_ANGLES = np.array([20.0, 75.0, 130.0, 200.0, 255.0, 310.0])
KEYS = np.stack([np.cos(np.radians(KEY_ANGLES)), np.sin(np.radians(KEY_ANGLES))], axis=1)
#: the value stored with each key (one number per memory)
VALUES = np.array([0.9, -0.4, 0.6, -0.9, 0.2, -0.7])
#: inverse temperature of the read
BETA = 6.0
#: area of a key's dot (points^2) for weight 1
DOT_AREA = 900.0


def soft_read(t: float) -> dict:
    """Read the six-memory soft dictionary at the query q = (cos t, sin t), t in degrees.

    Chapter 6, ``a = softmax(beta K q)`` and ``o = sum_i a_i v_i`` with
    :func:`memkit.attention.attend`, keys KEYS (6, 2), values VALUES (6,), beta = BETA.
    Returns t, q (2,), weights a (6,), output o (float), best (index of the largest
    weight) and hard (the hard lookup v_best, the beta -> infinity answer).
    """
    angle = np.radians(float(t))
    q = np.array([np.cos(angle), np.sin(angle)])
    o, a = attention.attend(KEYS, VALUES[:, None], q, BETA)
    best = int(np.argmax(a))
    return {"t": float(t), "q": q, "weights": a, "output": float(o[0]), "best": best,
            "hard": float(attention.hard_lookup(KEYS, VALUES[:, None], q)[0])}


class SoftDictionary(InteractiveFigure):
    id = "soft-dictionary"
    chapter = "6"
    size = (7.6, 3.3)
    narrow_size = (4.4, 6.4)
    alt_text = ("Six keys on a circle with the copper query, each key's dot sized by the weight "
                "it gets; bars of the six weights and of the values, with a black line at the "
                "read.")
    prompt = ("Turn the query around the circle: the dots of the nearby keys swell, and the "
              "black line of the read slides toward their values.")
    units = {"t": "degrees"}
    compute = staticmethod(soft_read)

    def make_controls(self):
        return {"t": widgets.IntSlider(value=50, min=0, max=355, step=5,
                                       description="query t°")}

    def build(self, figure):
        if self.layout == "wide":  # the circle left of the weights over the values
            grid = figure.add_gridspec(2, 2, width_ratios=[1.0, 1.3], left=0.03, right=0.98,
                                       top=0.9, bottom=0.16, wspace=0.18, hspace=0.75)
            cells = grid[:, 0], grid[0, 1], grid[1, 1]
        else:  # the circle over the weights over the values
            grid = figure.add_gridspec(3, 1, height_ratios=[1.6, 0.8, 0.8])
            cells = grid[0], grid[1], grid[2]
        circle = figure.add_subplot(cells[0])
        theta = np.linspace(0, 2 * np.pi, 200)
        circle.plot(np.cos(theta), np.sin(theta), color=style.NEUTRAL, lw=0.8)
        circle.set_aspect("equal")
        circle.set_xlim(-1.45, 1.45)
        circle.set_ylim(-1.45, 1.45)
        circle.axis("off")
        circle.set_title(rf"keys on the circle, dot area $\propto a_i$ ($\beta = {BETA:g}$)")
        for i, (x, y) in enumerate(KEYS):
            circle.text(1.25 * x, 1.25 * y, f"$k_{i + 1}$", ha="center", va="center",
                        color=style.KEY)
        self.dots = circle.scatter(KEYS[:, 0], KEYS[:, 1], s=np.full(6, 50.0), color=style.KEY,
                                   alpha=0.85, zorder=3)
        (self.query,) = circle.plot([], [], color=style.QUERY, lw=2.2, zorder=4)
        self.query_label = circle.text(0, 0, "$q$", color=style.QUERY, ha="center",
                                       va="center", fontsize=11)

        index = np.arange(1, 7)
        top = figure.add_subplot(cells[1])
        self.weight_bars = top.bar(index, np.zeros(6), color=style.KEY, width=0.6)
        top.set_ylim(0, 1.05)
        top.set_xticks(index, [f"$a_{i}$" for i in index])
        top.set_title("weight $a_i$ of each memory")
        bottom = figure.add_subplot(cells[2])
        bottom.bar(index, VALUES, color=style.VALUE, width=0.6)
        bottom.axhline(0, color=style.NEUTRAL, lw=0.8)
        bottom.set_ylim(-1.1, 1.1)
        bottom.set_xlim(0.4, 6.6)
        bottom.set_xticks(index, [f"$v_{i}$" for i in index])
        bottom.set_title(r"value $v_i$ (black line: the read $o$)")
        (self.output_line,) = bottom.plot([0.4, 6.6], [0, 0], color=style.INK, lw=2.2)
        self.dynamic(self.dots, self.query, self.query_label, list(self.weight_bars),
                     self.output_line)

    def draw(self, data):
        q = data["q"]
        self.dots.set_sizes(25.0 + DOT_AREA * data["weights"])
        self.query.set_data([0, q[0]], [0, q[1]])
        self.query_label.set_position((1.12 * q[0], 1.12 * q[1]))
        for bar, a in zip(self.weight_bars, data["weights"]):
            bar.set_height(a)
        self.output_line.set_ydata([data["output"], data["output"]])

    def describe(self, data):
        best = data["best"]
        return (f"t = {data['t']:.0f}°: largest weight a_{best + 1} = {data['weights'][best]:.2f},"
                f" o = {data['output']:+.2f} (hard lookup {data['hard']:+.1f})")


FIGURE = SoftDictionary
