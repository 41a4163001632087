"""Figure icl-gradient-steps (Chapter 11): each linear-attention layer is one gradient step.

Drag the number of layers: the copper line is the model after that many in-context
gradient steps from W_0 = 0 on the prompt (1,1), (2,2), (1,3) of Exercise 5, and it
approaches the least-squares line (dashed). The right panel tracks the slope.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import icl, style
from memkit.figures.base import InteractiveFigure, panels
from memkit.validation import as_count

X = np.array([[1.0], [2.0], [1.0]])
Y = np.array([[1.0], [2.0], [3.0]])
ETA = 0.05
MAX_LAYERS = 20
GRID = np.linspace(0.0, 3.0, 31)


def steps_picture(layers: int) -> dict:
    """The line after ``layers`` steps (0..MAX_LAYERS), the least-squares line, every slope.

    Chapter 11 (D11, D12): built on ``icl.line_after_layers`` with the prompt of
    Exercise 5 and step ``ETA``; ``slopes_all`` (MAX_LAYERS + 1,) is the slope after
    0..MAX_LAYERS steps, for the right panel.
    """
    layers = as_count(layers, "layers", minimum=0)
    if layers > MAX_LAYERS:
        raise ValueError(f"layers must be at most {MAX_LAYERS}, got {layers}")
    data = icl.line_after_layers(X, Y, ETA, layers, GRID)
    data["layers"] = layers
    data["slopes_all"] = icl.line_after_layers(X, Y, ETA, MAX_LAYERS, GRID[-1:])["slopes"]
    return data


class IclGradientSteps(InteractiveFigure):
    id = "icl-gradient-steps"
    chapter = "11"
    size = (7.2, 3.0)
    alt_text = ("Left, the three points of the prompt with the least-squares line (dashed) and "
                "the model's copper line after k gradient steps; right, the slope after each "
                "step.")
    prompt = ("Drag the number of layers k: with each layer, one gradient step, the copper line "
              "turns toward the dashed least-squares line.")
    compute = staticmethod(steps_picture)

    def make_controls(self):
        return {"layers": widgets.IntSlider(value=1, min=0, max=MAX_LAYERS, description="layers k")}

    def build(self, figure):
        left, right = panels(
            figure, self.layout, 2, [3, 2],
            wide=dict(left=0.08, right=0.98, top=0.86, bottom=0.27, wspace=0.3))
        left.scatter(X[:, 0], Y[:, 0], s=40, color=style.VALUE, zorder=3, label="prompt pairs")
        w_ls = float(icl.least_squares_fit(X, Y)[0, 0])
        left.plot(GRID, w_ls * GRID, ls="--", color=style.INK, lw=1.2, label="least squares")
        (self.line,) = left.plot(GRID, 0 * GRID, color=style.QUERY, lw=2.2, label="after k layers")
        left.set_xlim(0, 3)
        left.set_ylim(-0.2, 4.2)
        left.set_xlabel("input x")
        left.set_ylabel("prediction")
        left.set_title(r"prompt $(x_i, y_i)$, step $\eta = 0.05$")
        left.legend(loc="upper left", fontsize=7)
        ks = np.arange(MAX_LAYERS + 1)
        right.plot(ks, icl.line_after_layers(X, Y, ETA, MAX_LAYERS, GRID[-1:])["slopes"],
                   color=style.NEUTRAL, lw=1, marker="o", ms=2.5)
        right.axhline(w_ls, ls="--", color=style.INK, lw=1.2)
        (self.dot,) = right.plot([0], [0], "o", color=style.QUERY, ms=8)
        right.set_xlabel("layers k")
        right.set_ylabel(r"slope $w_k$")
        right.set_title("the slope, step by step")
        self.dynamic(self.line, self.dot)

    def draw(self, data):
        self.line.set_ydata(data["line"])
        self.dot.set_data([data["layers"]], [data["w"]])

    def describe(self, data):
        k = data["layers"]
        return (f"after {k} layer{'' if k == 1 else 's'}: slope {data['w']:.3f},"
                f" least squares {data['w_ls']:.3f}, gap {abs(data['w_ls'] - data['w']):.3f}")


FIGURE = IclGradientSteps
