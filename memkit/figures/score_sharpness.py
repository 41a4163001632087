"""Figure score-sharpness (Chapter 5): sharper scores leak less.

Drag the number M of stored memories (random unit keys in R^32, the query is key 0).
The same keys feed four score functions: linear, ReLU, ReLU^2 and ReLU^3. Each panel
shows the weight sigma(k_i^T q) every memory receives, divided by the target's
sigma(1), so the target has height 1 in all four; every bar weighs a stored value, so
all are violet, the target's in full and the leaks paler. The number under each panel
is that read's interference-to-signal ratio on this draw, with random unit values. The ReLU drops the negative similarities and each further power crushes the
small ones, so the ladder leaks less and less; softmax (Chapter 6) is the top rung.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import memory, scores, style
from memkit.figures.base import InteractiveFigure, margins
from memkit.validation import as_count

D = 32
M_MAX = 256
SEED = 1
#: the four reads, from the plain linear memory to the sharpest power
PANELS = (
    ("linear", r"linear, $\sigma(s) = s$", scores.identity),
    ("ReLU", r"ReLU", scores.relu),
    ("ReLU²", r"ReLU$^2$", scores.score("relu_power", p=2)),
    ("ReLU³", r"ReLU$^3$", scores.score("relu_power", p=3)),
)
#: where the target's bar stands, left of the other memories
TARGET_X = -0.04
#: opacity of the leaking values' bars (the target's is 1)
LEAK_ALPHA = 0.45


def score_weights(M: int) -> dict:
    """Weights and interference of four score functions reading the same M memories (Chapter 5).

    Keys are the first M of 256 fixed random unit vectors in R^32, values the first M
    of 256 random unit vectors in R^32, and the query is key 0. Each score function
    sigma reads the memory with :func:`memkit.scores.mlp_read`; weights (4, M) holds
    sigma(k_i^T q) / sigma(1) (column 0, the target, is 1), and ratios (4,) the measured
    ||read - sigma(1) v_0|| / ||sigma(1) v_0||, in the order of PANELS.
    """
    M = as_count(M, "M", minimum=2)
    if M > M_MAX:
        raise ValueError(f"M must be at most {M_MAX}, got {M}")
    rng = np.random.default_rng(SEED)
    keys = memory.random_unit_vectors(M_MAX, D, rng)[:M]
    values = memory.random_unit_vectors(M_MAX, D, rng)[:M]
    weights, ratios = [], []
    for _, _, sigma in PANELS:
        read, w = scores.mlp_read(keys, values, keys[0], sigma)
        signal = w[0] * values[0]
        weights.append(w / w[0])
        ratios.append(float(np.linalg.norm(read - signal) / np.linalg.norm(signal)))
    return {"M": M, "weights": np.array(weights), "ratios": np.array(ratios)}


class ScoreSharpness(InteractiveFigure):
    id = "score-sharpness"
    chapter = "5"
    size = (7.6, 3.1)
    narrow_size = (4.4, 5.4)
    alt_text = ("Four panels of the weight every stored memory gets, divided by the target's, "
                "under a linear, ReLU, ReLU² and ReLU³ score, each with its "
                "interference-to-signal ratio underneath.")
    prompt = ("Drag the number of stored memories M: from left to right the small weights "
              "shrink and each panel's ratio under it drops.")
    compute = staticmethod(score_weights)

    def make_controls(self):
        return {"M": widgets.IntSlider(value=64, min=2, max=M_MAX, description="stored M")}

    def build(self, figure):
        if self.layout == "wide":
            axes = figure.subplots(1, len(PANELS), sharey=True)
            margins(figure, self.layout, left=0.08, right=0.99, top=0.78, bottom=0.3, wspace=0.1)
        else:  # two by two, the type of each panel's ratio under it as large as the wide's
            axes = figure.subplots(2, len(PANELS) // 2, sharey=True).ravel()
        title = f"weight of each stored memory when the query is key 0 ($d = {D}$)"
        if self.layout == "wide":
            figure.suptitle(title, fontsize=10, y=0.97)
        else:
            figure.suptitle(title.replace(" when", "\nwhen"), fontsize=10.5)
        self.leaks, self.ratio_texts = [], []
        for ax, (_, title, _) in zip(axes, PANELS):
            ax.axhline(0, color=style.NEUTRAL, lw=0.8)
            ax.vlines([TARGET_X], 0, 1, colors=style.VALUE, linewidth=3)
            (leaks,) = ax.plot([], [], color=style.VALUE, alpha=LEAK_ALPHA, solid_capstyle="butt")
            self.leaks.append(leaks)
            ax.set_xlim(-0.08, 1.0)
            ax.set_ylim(-0.7, 1.1)
            ax.set_xticks([])
            ax.set_title(title)
            ax.set_xlabel("interference / signal", fontsize=8)
            self.ratio_texts.append(
                # (a ratio's width, for the layout to leave it room; draw writes the ratio)
                ax.text(0.5, -0.17, "0.00", transform=ax.transAxes, ha="center", va="top",
                        fontsize=10)
            )
        axes[0].set_ylabel(r"$\sigma(k_i^\top q) / \sigma(1)$")
        self.dynamic(self.leaks, self.ratio_texts)

    def draw(self, data):
        M = data["M"]
        # the M - 1 other memories spread evenly over the panel, thinner as they get more;
        # each panel's bars are one line, broken by NaN between the bars
        positions = np.repeat(np.arange(1, M) / M, 3)
        bottoms, breaks = np.zeros(M - 1), np.full(M - 1, np.nan)
        width = float(np.clip(150 / M, 0.6, 6.0))
        for leaks, weights, text, ratio in zip(self.leaks, data["weights"], self.ratio_texts,
                                               data["ratios"]):
            leaks.set_data(positions, np.column_stack([bottoms, weights[1:], breaks]).ravel())
            leaks.set_linewidth(width)
            text.set_text(f"{ratio:.2f}")

    def describe(self, data):
        # the two ends of the ladder; the panels show all four
        (first, _, _), (last, _, _) = PANELS[0], PANELS[-1]
        ratios = data["ratios"]
        return f"M = {data['M']}: interference/signal {ratios[0]:.2f} {first}, {ratios[-1]:.2f} {last}"


FIGURE = ScoreSharpness
