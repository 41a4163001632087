"""Figure softmax-lifts-rank (Chapter 6): the softmax lifts a low-rank score matrix.

Drag beta. Ten queries and ten keys live in R^2 (d_k = 2), so the score matrix
Q K^T (left) has rank 2. The attention matrix A = softmax(beta Q K^T), row by row
(middle, coloured up to its largest entry), is a nonlinear function of each row and has full rank 10 for every
beta > 0 shown; at beta = 0 every row is uniform and the rank falls to 1. As beta grows
each row sharpens toward one entry. The right panel shows the ten singular values of
A on a log scale: the rank counts those above the numerical tolerance.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import attention, linalg, style
from memkit.figures.base import InteractiveFigure, cell_grid, panels

N, D_K = 10, 2
SEED = 0
_rng = np.random.default_rng(SEED)
#: the ten queries and keys, rows of (10, 2) standard normal matrices (seed 0)
Q = _rng.standard_normal((N, D_K))
K = _rng.standard_normal((N, D_K))
SCORES = Q @ K.T


def rank_lift(beta: float) -> dict:
    """Score matrix, attention matrix and their ranks at inverse temperature beta (Chapter 6).

    ``A = softmax(beta Q K^T)`` row-wise with :func:`memkit.attention.attention_matrix`,
    ranks with :func:`memkit.linalg.rank`. Returns beta, scores (10, 10), A (10, 10),
    rank_scores, rank_A, singular (10,) the singular values of A, largest to smallest,
    and peak (the mean over rows of the largest entry of each row of A).
    """
    beta = float(beta)
    A = attention.attention_matrix(Q, K, beta)
    return {
        "beta": beta,
        "scores": SCORES,
        "A": A,
        "rank_scores": linalg.rank(SCORES),
        "rank_A": linalg.rank(A),
        "singular": np.linalg.svd(A, compute_uv=False),
        "peak": float(A.max(axis=1).mean()),
    }


class SoftmaxLiftsRank(InteractiveFigure):
    id = "softmax-lifts-rank"
    chapter = "6"
    size = (7.6, 3.0)
    narrow_size = (4.4, 4.8)
    alt_text = ("Three panels: the rank-2 score matrix, the attention matrix softmax(βQKᵀ), and "
                "its ten singular values on a logarithmic scale.")
    prompt = ("Drag β off 0: all ten singular values rise (rank 10) while the scores keep "
              "rank 2; drag on and each row gathers on one entry.")
    compute = staticmethod(rank_lift)

    def make_controls(self):
        return {"beta": widgets.FloatSlider(value=1.0, min=0.0, max=12.0, step=0.25,
                                            description="β")}

    def build(self, figure):
        left, middle, right = panels(
            figure, self.layout, 3, [1.0, 1.0, 1.1], rows=(2, 1), heights=[1.2, 1],
            wide=dict(left=0.03, right=0.98, top=0.84, bottom=0.2, wspace=0.3))
        scale = float(np.abs(SCORES).max())
        left.imshow(SCORES, cmap=style.SIGN_CMAP, vmin=-scale, vmax=scale)
        left.set_title(rf"$QK^\top$: rank {linalg.rank(SCORES)}")
        self.cells = cell_grid(middle, N, N)
        self.title = middle.set_title("")
        for ax in (left, middle):
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_xlabel("key $j$")
            ax.set_ylabel("query $i$")
        self.bars = right.bar(np.arange(1, N + 1), np.ones(N), color=style.POSITIVE, width=0.6)
        right.set_yscale("log")
        right.set_ylim(1e-18, 10)
        right.set_xticks([1, 5, 10])
        right.set_xlabel("index")
        right.set_title("singular values of $A$")
        self.dynamic(self.cells, self.title, list(self.bars))

    def draw(self, data):
        top = float(data["A"].max())  # the colour scale follows the largest weight
        self.cells.set_facecolor(style.SIGN_CMAP((data["A"] / top + 1) / 2).reshape(-1, 4))
        self.title.set_text(f"A at β = {data['beta']:g}: rank {data['rank_A']}")
        for bar, mu in zip(self.bars, data["singular"]):
            bar.set_height(max(mu, 1e-18))

    def describe(self, data):
        return (f"β = {data['beta']:g}: rank of QKᵀ {data['rank_scores']}, rank of A"
                f" {data['rank_A']}, mean top entry of a row {data['peak']:.2f}")


FIGURE = SoftmaxLiftsRank
