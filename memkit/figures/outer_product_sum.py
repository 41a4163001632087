"""Figure outer-product-sum (Chapter 2): a product is a sum of outer products.

Choose how many rank-one terms alpha_k rho_k^T to add (m = 0..4): the partial sum
(left) approaches AB (right) and equals it at m = 4.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import linalg, style
from memkit.figures.base import InteractiveFigure, cell_grid, panels
from memkit.validation import as_count

#: A is 5x4 and B is 4x6, so AB is a sum of r = 4 outer products
A = np.array(
    [[1.0, 0.2, -0.5, 0.3], [0.8, -1.0, 0.1, 0.6], [-0.4, 0.9, 1.0, -0.2],
     [0.3, 0.5, -0.8, 1.0], [-1.0, 0.1, 0.4, 0.7]]
)
B = np.array(
    [[1.0, 0.5, -0.5, 0.2, 0.8, -1.0], [0.3, -0.7, 1.0, 0.6, -0.2, 0.4],
     [-0.6, 0.2, 0.4, -1.0, 0.5, 0.3], [0.4, 0.9, -0.3, 0.1, -0.8, 0.6]]
)


def partial_sums(m: int) -> dict:
    """The first m rank-one terms of AB and their sum (Chapter 2, C = sum_k alpha_k rho_k^T).

    Returns terms (4, 5, 6), partial (5, 6) = sum of the first m terms, C = AB,
    the rank of the partial sum and its Frobenius distance to AB.
    """
    m = as_count(m, "m", minimum=0)
    if m > A.shape[1]:
        raise ValueError(f"m must be between 0 and {A.shape[1]}, got {m}")
    terms = linalg.outer_terms(A, B)
    partial = terms[:m].sum(axis=0)
    C = A @ B
    return {"m": m, "terms": terms, "partial": partial, "C": C,
            "rank": linalg.rank(partial), "gap": float(np.linalg.norm(C - partial))}


class OuterProductSum(InteractiveFigure):
    id = "outer-product-sum"
    chapter = "2"
    size = (6.4, 3.0)
    alt_text = ("Two grids side by side: the partial sum of the first m outer products and the "
                "full product AB.")
    prompt = ("Drag the number of terms m: the partial sum fills in toward AB and matches it at "
              "m = 4.")
    compute = staticmethod(partial_sums)

    def make_controls(self):
        return {"m": widgets.IntSlider(value=2, min=0, max=4, description="terms m")}

    def build(self, figure):
        self.ax_sum, self.ax_full = panels(
            figure, self.layout, 2,
            wide=dict(left=0.03, right=0.97, top=0.86, bottom=0.16, wspace=0.15))
        self.scale = float(np.max(np.abs(A @ B)))
        self.sum_cells = cell_grid(self.ax_sum, *(A @ B).shape)
        self.ax_full.imshow(style.sign_colours(A @ B, scale=self.scale), interpolation="nearest")
        self.ax_full.set_title("AB")
        self.ax_sum.set_title(r"partial sum $\sum_{k\leq m} \alpha_k \rho_k^\top$")
        for ax in (self.ax_sum, self.ax_full):
            ax.set_xticks([])
            ax.set_yticks([])
        self.dynamic(self.sum_cells)

    def draw(self, data):
        self.sum_cells.set_facecolor(
            style.sign_colours(data["partial"], scale=self.scale).reshape(-1, 4))

    def describe(self, data):
        if data["gap"] < 1e-12:
            return f"m = {data['m']}: all four outer products added, the sum equals AB (gap {data['gap']:.0e})"
        return (
            f"m = {data['m']} of 4 terms: the partial sum has rank {data['rank']}"
            f" and lies {data['gap']:.2f} (Frobenius) from AB"
        )


FIGURE = OuterProductSum
