"""Figure mlp-lookup (Chapter 5): an MLP is a lookup in two matrices.

Turn the input x = (cos t, sin t) around the circle. Each of the six hidden units
is a key k_i (a row of W_1, blue) matched against x (copper); the ReLU keeps the
positive matches, and each kept score weights its value v_i (a column of W_2,
violet). The weighted values, laid head to tail, add up to the output
f(x) = V^T ReLU(K x).
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.colors import to_rgba
from matplotlib.transforms import Affine2D

from memkit import scores, style
from memkit.figures.base import InteractiveFigure, text_outline, panels

#: directions of the six keys, in degrees (unit keys in R^2)
KEY_ANGLES = np.array([15.0, 80.0, 140.0, 195.0, 250.0, 320.0])
KEYS = np.stack([np.cos(np.radians(KEY_ANGLES)), np.sin(np.radians(KEY_ANGLES))], axis=1)
#: the value each unit writes into the output, one row per unit (R^2)
VALUES = np.array([[0.9, -0.3], [0.4, 0.8], [-0.6, 0.7], [-0.8, -0.5], [0.2, -0.9], [0.7, 0.5]])
UNITS = len(KEYS)
#: half-width of the output plane: the weighted values and f(x) stay inside it
OUTPUT_LIMIT = 1.7


def mlp_lookup(t: float) -> dict:
    """Read the six-unit ReLU MLP of Chapter 5 at the input x = (cos t, sin t), t in degrees.

    Uses :func:`memkit.scores.mlp_read` with keys KEYS (6, 2) and values VALUES (6, 2).
    Returns t, x (2,), similarities k_i^T x (6,), weights ReLU(k_i^T x) (6,), weighted
    (6, 2) = weights[i] * v_i, starts (6, 2) where each weighted value begins when
    they are laid head to tail (start of unit i = sum of the weighted values before
    it), output f(x) (2,) = their sum, and firing, the indices of the units with a
    positive weight.
    """
    angle = np.radians(float(t))
    x = np.array([np.cos(angle), np.sin(angle)])
    output, weights = scores.mlp_read(KEYS, VALUES, x, scores.relu)
    weighted = weights[:, None] * VALUES
    starts = np.cumsum(weighted, axis=0) - weighted
    return {
        "t": float(t),
        "x": x,
        "similarities": KEYS @ x,
        "weights": weights,
        "weighted": weighted,
        "starts": starts,
        "output": output,
        "firing": np.flatnonzero(weights > 0),
    }


class MlpLookup(InteractiveFigure):
    id = "mlp-lookup"
    chapter = "5"
    size = (7.6, 3.3)
    narrow_size = (4.4, 6.8)
    alt_text = ("Six keys (the rows of W₁, blue) around a circle with the copper input, bars of "
                "their ReLU scores, and the weighted values (violet) laid head to tail to the "
                "output.")
    prompt = ("Turn the input around the circle: only the keys close to it keep a positive "
              "score, and the chain of weighted values swings to a new output.")
    units = {"t": "degrees"}
    compute = staticmethod(mlp_lookup)

    def make_controls(self):
        return {"t": widgets.IntSlider(value=40, min=0, max=355, step=5, description="input t°")}

    def build(self, figure):
        self.ax_keys, self.ax_scores, self.ax_out = panels(
            figure, self.layout, 3, [1, 1.1, 1], heights=[1, 0.8, 1],
            wide=dict(left=0.03, right=0.98, top=0.88, bottom=0.2, wspace=0.3))
        units = np.arange(UNITS)
        labels = [str(i + 1) for i in units]

        # left: the keys (fixed) and the input (moves)
        circle = np.linspace(0, 2 * np.pi, 200)
        self.ax_keys.plot(np.cos(circle), np.sin(circle), color=style.NEUTRAL, lw=0.6)
        self.ax_keys.quiver(np.zeros(UNITS), np.zeros(UNITS), KEYS[:, 0], KEYS[:, 1], color=style.KEY,
                            angles="xy", scale_units="xy", scale=1, width=0.012)
        for label, key in zip(labels, KEYS):
            self.ax_keys.text(*(1.2 * key), label, color=style.KEY, ha="center", va="center")
        self.input_arrow = self.ax_keys.arrow(0, 0, 1, 0, color=style.QUERY, width=0.035,
                                              head_width=0.13, head_length=0.15,
                                              length_includes_head=True)
        self.ax_keys.set_title(r"keys $k_i$ and input $x$")

        # middle: the similarity of each key and what the ReLU keeps of it
        self.ax_scores.axhline(0, color=style.NEUTRAL, lw=0.8)
        self.weight_bars = self.ax_scores.bar(units, np.zeros(UNITS), width=0.6, color=style.KEY)
        (self.similarity_marks,) = self.ax_scores.plot(
            units, np.zeros(UNITS), "_", color=style.INK, markersize=16, mew=1.5,
            label=r"$k_i^\top x$",
        )
        self.ax_scores.bar([0], [0], color=style.KEY, label=r"$\sigma_i$")
        self.ax_scores.set_xticks(units, labels)
        self.ax_scores.set_xlabel("hidden unit i")
        self.ax_scores.set_ylim(-1.15, 1.5)
        self.ax_scores.legend(loc="upper center", ncol=2, fontsize=8, handlelength=1)
        self.ax_scores.set_title(r"scores $\sigma_i = \mathrm{ReLU}(k_i^\top x)$")

        # right: the weighted values head to tail, and their sum
        self.ax_out.axhline(0, color=style.NEUTRAL, lw=0.6)
        self.ax_out.axvline(0, color=style.NEUTRAL, lw=0.6)
        self.output_arrow = self.ax_out.arrow(0, 0, 1, 0, color=style.INK, alpha=0.35, width=0.05,
                                              head_width=0.2, head_length=0.22,
                                              length_includes_head=True)
        zeros = np.zeros(UNITS)
        self.chain = self.ax_out.quiver(zeros, zeros, zeros, zeros, color=style.VALUE, angles="xy",
                                        scale_units="xy", scale=1, minlength=0, width=0.015)
        # the number of each weighted value beside it, and the name of the output at its tip
        self.labels = PathCollection(
            [text_outline(label, self.pt(8)) for label in labels]
            + [text_outline("f(x)", self.pt(9))],
            offsets=np.zeros((UNITS + 1, 2)), offset_transform=self.ax_out.transData,
            transform=Affine2D().scale(figure.dpi / 72), edgecolors="none",
        )
        self.labels.set_clip_on(False)
        self.ax_out.add_collection(self.labels, autolim=False)
        self.ax_out.set_title(r"$\sigma_1 v_1 + \cdots + \sigma_6 v_6 = f(x)$")

        for ax, limit in ((self.ax_keys, 1.35), (self.ax_out, OUTPUT_LIMIT)):
            ax.set_xlim(-limit, limit)
            ax.set_ylim(-limit, limit)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.spines[:].set_visible(False)
        self.dynamic(self.input_arrow, self.weight_bars, self.similarity_marks, self.output_arrow,
                     self.chain, self.labels)

    def draw(self, data):
        self.input_arrow.set_data(dx=data["x"][0], dy=data["x"][1])
        for bar, weight in zip(self.weight_bars, data["weights"]):
            bar.set_height(weight)
        self.similarity_marks.set_ydata(data["similarities"])
        self.chain.set_offsets(data["starts"])
        self.chain.set_UVC(data["weighted"][:, 0], data["weighted"][:, 1])
        output = data["output"]
        self.output_arrow.set_data(dx=output[0], dy=output[1])
        # a unit's number beside the middle of its weighted value (if long enough to label),
        # outside the polygon the values make with the output arrow; f(x) on the output's
        # other side
        steps = np.vstack([data["weighted"], output])
        middles = np.vstack([data["starts"] + data["weighted"] / 2, output / 2])
        normals = steps[:, ::-1] * [-1, 1] / np.maximum(np.linalg.norm(steps, axis=1), 1e-9)[:, None]
        outward = middles[:-1] - output / 2
        outward = np.vstack([outward, -np.mean(outward[data["firing"]], axis=0)])
        normals *= np.where(np.sum(normals * outward, axis=1) < 0, -1, 1)[:, None]
        gaps = np.append(np.full(UNITS, 0.16), 0.28)[:, None]
        self.labels.set_offsets(middles + gaps * normals)
        shown = np.append(data["weights"] > 0.15, True)
        self.labels.set_facecolors([to_rgba(style.VALUE if i < UNITS else style.INK, float(on))
                                    for i, on in enumerate(shown)])

    def describe(self, data):
        fired = ", ".join(f"{i + 1} ({data['weights'][i]:.2f})" for i in data["firing"])
        out = data["output"]
        return f"t = {data['t']:.0f}°: units {fired} fire; f(x) = ({out[0]:+.2f}, {out[1]:+.2f})"


FIGURE = MlpLookup
