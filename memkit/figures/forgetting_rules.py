"""Figure forgetting-rules (Chapter 10): what add, decay and delta forget.

Drag the decay gamma. Each of 12 streams writes 24 random unit pairs in R^8 (three
times the key dimension) into a zero state with one rule; then every pair is asked
for again, and the mean relative error is plotted against the pair's age (0 = the
last pair written). Adding forgets nothing and so recalls everything equally badly;
decay (blue, the curve that moves) recalls recent pairs well and old ones worse,
more so for small gamma; the delta rule stores the newest pair exactly.
"""

from __future__ import annotations

import ipywidgets as widgets

from memkit import recurrent, style
from memkit.figures.base import InteractiveFigure, margins
from memkit.validation import as_positive

N_PAIRS = 24
D = 8
STREAMS = 12
SEED = 0
BETA = 1.0
RULES = ("add", "decay", "delta")
COLOURS = {"add": style.NEUTRAL, "decay": style.KEY, "delta": style.VALUE}


def forgetting_curves(gamma: float) -> dict:
    """Mean recall error against age for add, decay (gamma) and delta (beta = 1) (Chapter 10).

    :func:`memkit.recurrent.recall_errors_by_age` with 24 pairs in R^8 and 12 streams
    (seed 0, the same streams for every rule). Returns gamma, ages (24,) and errors,
    a dict rule -> (24,) mean errors, age 0 first.
    """
    gamma = as_positive(gamma, "gamma")
    if gamma > 1:
        raise ValueError(f"gamma must lie in (0, 1], got {gamma}")
    errors = {}
    for rule in RULES:
        ages, errors[rule] = recurrent.recall_errors_by_age(
            rule, gamma=gamma, beta=BETA, n_pairs=N_PAIRS, d=D, streams=STREAMS, seed=SEED)
    return {"gamma": gamma, "ages": ages, "errors": errors}


class ForgettingRules(InteractiveFigure):
    id = "forgetting-rules"
    chapter = "10"
    size = (7.0, 3.1)
    alt_text = ("The mean recall error against the age of a pair for three write rules: add, "
                "decay (blue) and delta.")
    prompt = ("Drag the decay γ: the blue decay curve tilts, recalling recent pairs well and "
              "old ones worse as γ gets smaller, between the flat add line and the delta rule.")
    compute = staticmethod(forgetting_curves)

    def make_controls(self):
        return {"gamma": widgets.FloatSlider(value=0.9, min=0.5, max=0.99, step=0.01,
                                             description="decay γ")}

    def build(self, figure):
        self.ax = figure.subplots()
        margins(figure, self.layout, left=0.1, right=0.98, top=0.86, bottom=0.25)
        # add and delta do not depend on gamma: drawn once, with the static background
        fixed = forgetting_curves(1.0)
        ages = fixed["ages"]
        self.lines = {}
        for rule in RULES:
            (line,) = self.ax.plot(ages, fixed["errors"][rule], "o-", ms=3, color=COLOURS[rule],
                                   lw=2.2 if rule == "decay" else 1.4, label=rule)
            self.lines[rule] = line
        self.ax.axhline(1.0, color=style.NEUTRAL, lw=0.6, ls=":")
        self.ax.set_xlim(-0.5, N_PAIRS - 0.5)
        self.ax.set_ylim(-0.05, 2.1)
        self.ax.set_xlabel("age of the pair (0 = written last)")
        self.ax.set_ylabel(r"mean $\Vert S k_i - v_i\Vert / \Vert v_i\Vert$")
        self.ax.set_title(f"{N_PAIRS} pairs in $\\mathbb{{R}}^{D}$, mean of {STREAMS} streams")
        self.ax.legend(loc="lower right", ncol=3, fontsize=8)
        self.dynamic(self.lines["decay"])

    def draw(self, data):
        self.lines["decay"].set_ydata(data["errors"]["decay"])

    def describe(self, data):
        e = data["errors"]
        return (f"γ = {data['gamma']:.2f}: newest/oldest error, add {e['add'][0]:.2f}/"
                f"{e['add'][-1]:.2f}, decay {e['decay'][0]:.2f}/{e['decay'][-1]:.2f},"
                f" delta {e['delta'][0]:.2f}/{e['delta'][-1]:.2f}")


FIGURE = ForgettingRules
