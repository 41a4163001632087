"""Figure temperature (Chapter 6): the inverse temperature turns an average into a lookup.

Drag beta. Seven memories have fixed similarities s_i to the query (unit keys at the
angles KEY_ANGLES from it); the bars are their weights a = softmax(beta s). At beta = 0
every bar stands at 1/7 (dashed line); as beta grows the best match takes almost all of
the weight. The right panel shows what that costs: the largest weight rises toward 1
(capacity), while the size of the softmax Jacobian with respect to the logits,
diag(a) - a a^T, through which every gradient of the logits passes, peaks near beta = 2.5
and then falls toward 0 (trainability).
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import attention, style
from memkit.figures.base import InteractiveFigure, panels

#: angles between the query and the seven unit keys, in degrees
KEY_ANGLES = np.array([0.0, 40.0, 70.0, 105.0, 145.0, 200.0, 250.0])
#: their similarities s_i = cos(angle)
SIMILARITIES = np.cos(np.radians(KEY_ANGLES))
BETA_MAX = 14.0
#: the beta grid of the right panel
BETA_GRID = np.linspace(0.0, BETA_MAX, 141)


def temperature_weights(beta: float) -> dict:
    """Softmax weights of the seven memories at inverse temperature beta (Chapter 6).

    ``a = softmax(beta s)`` with :func:`memkit.attention.softmax` and the fixed
    SIMILARITIES (7,). Returns beta, weights (7,), uniform (1/7), top (largest weight),
    ratio12 (a_1 / a_2 = e^{beta (s_1 - s_2)}), jacobian (Frobenius norm of
    :func:`memkit.attention.softmax_jacobian` at the logits beta s) and the curves
    top_curve, jacobian_curve over BETA_GRID (141,).
    """
    beta = float(beta)
    a = attention.softmax(beta * SIMILARITIES)
    logits = BETA_GRID[:, None] * SIMILARITIES[None, :]
    curve = attention.softmax(logits)
    # ||diag(a) - a a^T||_F^2 = sum_i a_i^2 - 2 sum_i a_i^3 + (sum_i a_i^2)^2, row by row
    squares = np.sum(curve**2, axis=1)
    jac_curve = np.sqrt(squares - 2 * np.sum(curve**3, axis=1) + squares**2)
    return {
        "beta": beta,
        "weights": a,
        "uniform": 1.0 / SIMILARITIES.size,
        "top": float(a.max()),
        "ratio12": float(a[0] / a[1]),
        "jacobian": float(np.linalg.norm(attention.softmax_jacobian(beta * SIMILARITIES))),
        "top_curve": curve.max(axis=1),
        "jacobian_curve": jac_curve,
    }


class Temperature(InteractiveFigure):
    id = "temperature"
    chapter = "6"
    size = (7.6, 3.1)
    alt_text = ("Bars of the softmax weights of seven memories against their similarity to the "
                "query, with a dashed line at 1/7, beside two curves against β: the largest "
                "weight and the size of the softmax Jacobian with respect to the logits.")
    prompt = ("Drag β from 0: the bars leave the 1/7 line, the best match takes nearly all "
              "the weight, and the Jacobian with respect to the logits sinks toward 0.")
    compute = staticmethod(temperature_weights)

    def make_controls(self):
        return {"beta": widgets.FloatSlider(value=3.0, min=0.0, max=BETA_MAX, step=0.5,
                                            description="β")}

    def build(self, figure):
        left, right = panels(
            figure, self.layout, 2, [1.3, 1.0],
            wide=dict(left=0.08, right=0.97, top=0.86, bottom=0.27, wspace=0.3))
        index = np.arange(1, SIMILARITIES.size + 1)
        self.bars = left.bar(index, np.zeros(SIMILARITIES.size), color=style.KEY, width=0.6)
        left.axhline(1.0 / SIMILARITIES.size, color=style.NEUTRAL, ls="--", lw=1)
        left.set_ylim(0, 1.0)
        left.set_xticks(index, [f"{s:+.2f}" for s in SIMILARITIES])
        left.set_xlabel("similarity $s_i$ of each memory to the query")
        left.set_title(r"weights $a = \mathrm{softmax}(\beta s)$; dashed: $1/7$")
        data = temperature_weights(0.0)
        right.plot(BETA_GRID, data["top_curve"], color=style.INK, lw=1.6,
                   label="largest weight")
        right.plot(BETA_GRID, data["jacobian_curve"], color=style.NEUTRAL, lw=1.6,
                   label=r"$\|\partial a/\partial\ell\| = \|\mathrm{diag}(a) - aa^\top\|$")
        right.set_xlim(0, BETA_MAX)
        right.set_ylim(0, 1.02)
        right.set_xlabel(r"$\beta$")
        right.set_title("selectivity against gradient")
        right.legend(loc="center right", fontsize=8)
        (self.marker,) = right.plot([0, 0], [0, 1.02], color=style.INK, lw=0.8, ls=":")
        self.dynamic(list(self.bars), self.marker)

    def draw(self, data):
        for bar, a in zip(self.bars, data["weights"]):
            bar.set_height(a)
        self.marker.set_xdata([data["beta"], data["beta"]])

    def describe(self, data):
        return (f"β = {data['beta']:.1f}: top weight {data['top']:.2f} (uniform 1/7 = 0.14),"
                f" Jacobian w.r.t. the logits {data['jacobian']:.2f}")


FIGURE = Temperature
