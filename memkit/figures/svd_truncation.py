"""Figure svd-truncation (Chapter 2): most of a structured matrix is in a few outer products.

Choose how many singular values to keep: the 8x8 pattern, its truncated SVD and the
energy kept; three terms carry most of it, and the squared error is the energy
discarded (Eckart-Young).
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import linalg, style
from memkit.figures.base import InteractiveFigure, cell_grid, panels
from memkit.validation import as_count


def truncation(r: int) -> dict:
    """The rank-r truncated SVD of the course's 8x8 pattern and its energy (Chapter 2).

    Returns pattern (8, 8), approx (8, 8), mu (8,) singular values, kept (fraction of
    sum mu_k^2 in the first r), error = ||pattern - approx||_F^2 and discarded =
    sum_{k > r} mu_k^2 (equal by Eckart-Young).
    """
    pattern = linalg.structured_pattern()
    r = as_count(r, "r", minimum=0)
    if r > pattern.shape[0]:
        raise ValueError(f"r must be between 0 and {pattern.shape[0]}, got {r}")
    approx = linalg.truncated_svd(pattern, r)
    mu = np.linalg.svd(pattern, compute_uv=False)
    energy = mu**2
    return {
        "r": r,
        "pattern": pattern,
        "approx": approx,
        "mu": mu,
        "kept": float(energy[:r].sum() / energy.sum()),
        "error": float(np.sum((pattern - approx) ** 2)),
        "discarded": linalg.discarded_energy(pattern, r),
    }


class SvdTruncation(InteractiveFigure):
    id = "svd-truncation"
    chapter = "2"
    size = (7.6, 2.9)
    narrow_size = (4.4, 4.6)
    alt_text = ("Three panels: an 8 x 8 pattern, its truncated SVD with the chosen number of "
                "terms, and bars of its singular values.")
    prompt = ("Drag the number of singular values kept r: three terms already rebuild most of "
              "the pattern, and the bars show the energy left out.")
    compute = staticmethod(truncation)

    def make_controls(self):
        return {"r": widgets.IntSlider(value=3, min=0, max=8, description="kept r")}

    def build(self, figure):
        self.ax_pattern, self.ax_approx, self.ax_bars = panels(
            figure, self.layout, 3, [1, 1, 1.3], rows=(2, 1), heights=[1.2, 1],
            wide=dict(left=0.02, right=0.98, top=0.86, bottom=0.2, wspace=0.25))
        pattern = linalg.structured_pattern()
        self.scale = float(np.max(np.abs(pattern)))
        self.ax_pattern.imshow(style.sign_colours(pattern, self.scale), interpolation="nearest")
        self.ax_pattern.set_title("8×8 pattern")
        self.approx_cells = cell_grid(self.ax_approx, *pattern.shape)
        self.ax_approx.set_title("truncated SVD")
        for ax in (self.ax_pattern, self.ax_approx):
            ax.set_xticks([])
            ax.set_yticks([])
        mu = np.linalg.svd(pattern, compute_uv=False)
        self.bars = self.ax_bars.bar(np.arange(1, 9), mu, color=style.NEUTRAL)
        self.ax_bars.set_title(r"singular values $\mu_k$")
        self.ax_bars.set_xticks(np.arange(1, 9))
        self.dynamic(self.approx_cells, self.bars)

    def draw(self, data):
        self.approx_cells.set_facecolor(
            style.sign_colours(data["approx"], self.scale).reshape(-1, 4))
        for k, bar in enumerate(self.bars):
            bar.set_color(style.VALUE if k < data["r"] else style.NEUTRAL)
            bar.set_alpha(1.0 if k < data["r"] else 0.35)

    def describe(self, data):
        return (
            f"{data['r']} of 8 outer products keep {100 * data['kept']:.1f}% of the energy;"
            f" squared error {data['error']:.3f} = discarded energy {data['discarded']:.3f}"
        )


FIGURE = SvdTruncation
