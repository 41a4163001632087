"""Figure recall-noise (Chapter 3): recall is the signal plus a random walk.

Drag the number M of stored memories (random unit keys in R^16): the weight of the
memory asked for stays 1 while the weights k_i^T k_j that leak the other values into
the answer grow in number and in total size. Every bar weighs a stored value, so all
are violet (the value colour of Chapter 0): the target's in full, the leaks paler.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import capacity, memory, style
from memkit.figures.base import InteractiveFigure, margins
from memkit.validation import as_count

D_K = 16
D_V = 32
M_MAX = 64
SEED = 3
#: opacity of the leaking values' bars (the target's is 1)
LEAK_ALPHA = 0.45


def leak_weights(M: int) -> dict:
    """Weights of a Hebbian recall of memory 0 among M stored pairs (Chapter 3).

    Keys are the first M of 64 fixed random unit vectors in R^16 and values the first
    M of 64 random unit vectors in R^32. Returns weights (M,) = K k_0 (weights[0] = 1 is
    the signal), the measured ratio ||sum_{i>0} w_i v_i|| / ||v_0|| and the predicted
    sqrt((M - 1) / d_k).
    """
    M = as_count(M, "M", minimum=1)
    if M > M_MAX:
        raise ValueError(f"M must be at most {M_MAX}, got {M}")
    rng = np.random.default_rng(SEED)
    keys = memory.random_unit_vectors(M_MAX, D_K, rng)[:M]
    values = memory.random_unit_vectors(M_MAX, D_V, rng)[:M]
    weights = memory.hebbian_recall_weights(keys)[0]
    interference = weights[1:] @ values[1:]
    return {
        "M": M,
        "weights": weights,
        "measured": float(np.linalg.norm(interference) / np.linalg.norm(values[0])),
        "predicted": capacity.hebbian_ratio(M, D_K),
    }


class RecallNoise(InteractiveFigure):
    id = "recall-noise"
    chapter = "3"
    size = (7.0, 3.0)
    alt_text = ("Bars of the weight each stored memory gets when memory 0 is recalled: a dark "
                "violet bar of height 1 for the one asked for, and pale violet bars for the "
                "memories that leak in.")
    prompt = ("Drag the number of stored memories M: the target's bar stays at 1 while the "
              "leaking bars grow in number and the interference grows with them.")
    compute = staticmethod(leak_weights)

    def make_controls(self):
        return {"M": widgets.IntSlider(value=16, min=1, max=M_MAX, description="stored M")}

    def build(self, figure):
        self.ax = figure.subplots()
        margins(figure, self.layout, left=0.1, right=0.98, top=0.86, bottom=0.24)
        # the target's bar, and one collection of thin bars for the M - 1 leaking weights
        self.target = self.ax.bar([0], [1.0], color=style.VALUE, width=0.8)
        self.leaks = self.ax.vlines(np.arange(1, M_MAX), 0, 0, colors=style.VALUE, linewidth=5,
                                    alpha=LEAK_ALPHA)
        self.ax.axhline(0, color=style.NEUTRAL, lw=0.8)
        self.ax.set_xlim(-1, M_MAX)
        self.ax.set_ylim(-0.7, 1.1)
        self.ax.set_xlabel("stored memory i (i = 0 is the one asked for)")
        self.ax.set_ylabel(r"weight $k_i^\top k_0$")
        self.ax.set_title(f"Hebbian recall of memory 0, $d_k = {D_K}$")
        self.dynamic(self.leaks)

    def draw(self, data):
        heights = np.zeros(M_MAX - 1)
        heights[: data["M"] - 1] = data["weights"][1:]
        positions = np.arange(1, M_MAX)
        self.leaks.set_segments(np.stack([np.stack([positions, 0 * heights], 1),
                                          np.stack([positions, heights], 1)], 1))

    def describe(self, data):
        return (
            f"M = {data['M']}: target weight 1, {data['M'] - 1} leaks;"
            f" interference/signal {data['measured']:.2f} (predicted {data['predicted']:.2f})"
        )


FIGURE = RecallNoise
