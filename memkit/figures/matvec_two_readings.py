"""Figure matvec-two-readings (Chapter 1): the same product y = Wx read by rows and by columns.

Drag the first coordinate of x. By rows every output y_i = w_i^T x can change; by
columns only the first column c_1 is rescaled before the columns are added; both
readings end at the same y. The columns are contents, so their shares are violet (the
value colour of Chapter 0), column 1's in full and hatched, the others paler; the
figure has no query, so no copper.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import linalg, style
from memkit.figures.base import InteractiveFigure, panels

#: the matrix and input of the figure (3 outputs, 3 inputs)
W = np.array([[1.0, -0.5, 0.8], [0.6, 1.2, -0.4], [-0.9, 0.3, 1.0]])
X_REST = np.array([0.8, -0.6])
#: opacity of the three columns' shares: column 1, the one the slider moves, in full
COLUMN_ALPHAS = (1.0, 0.35, 0.6)


def readings(x1: float) -> dict:
    """Both readings of y = Wx for x = (x1, 0.8, -0.6) (Chapter 1).

    Returns x (3,), y_rows (3,) = the row dot products w_i^T x, terms (3, 3) with
    terms[i, j] = W_ij x_j (row i sums to y_i), contributions (3, 3)
    whose row j is x_j c_j (the scaled column j), and y_columns (3,) = their sum.
    """
    x = np.concatenate([[float(x1)], X_REST])
    y_rows, terms = linalg.matvec_by_rows(W, x)
    y_columns, scaled = linalg.matvec_by_columns(W, x)
    return {"x": x, "y_rows": y_rows, "terms": terms, "contributions": scaled, "y_columns": y_columns}


class MatvecTwoReadings(InteractiveFigure):
    id = "matvec-two-readings"
    chapter = "1"
    size = (7.2, 3.0)
    alt_text = ("The product y = Wx twice: by rows, each output a dot product of a row with x; "
                "by columns, the columns of W scaled by the entries of x and added.")
    prompt = ("Drag x₁: by rows every output can change, by columns only the first column is "
              "rescaled, and both readings reach the same y.")
    compute = staticmethod(readings)

    def make_controls(self):
        return {
            "x1": widgets.FloatSlider(
                value=1.0, min=-2.0, max=2.0, step=0.1, description="x₁", readout_format=".1f"
            )
        }

    def build(self, figure):
        self.ax_rows, self.ax_cols = panels(figure, self.layout, 2, wide=dict(
            left=0.08, right=0.98, top=0.84, bottom=0.24, wspace=0.12))
        self.ax_cols.sharey(self.ax_rows)
        if self.layout == "wide":  # side by side, the rows' y axis serves both
            self.ax_cols.tick_params(labelleft=False)
        outputs = np.arange(3)
        self.row_bars = self.ax_rows.bar(outputs, np.zeros(3), width=0.6, color=style.KEY)
        self.ax_rows.set_title(r"by rows: $y_i = w_i^\top x$ (rows detect)")
        width = 0.25
        self.col_bars = [
            self.ax_cols.bar(
                outputs + (j - 1) * width,
                np.zeros(3),
                width=width,
                color=style.VALUE,
                alpha=COLUMN_ALPHAS[j],
                hatch="///" if j == 0 else None,
                edgecolor=style.INK if j == 0 else "none",
                linewidth=0.6,
                label=f"$x_{j + 1} c_{j + 1}$",
            )
            for j in range(3)
        ]
        self.ax_cols.set_title(r"by columns: $y = \sum_j x_j c_j$ (columns carry content)")
        (self.sum_marks,) = self.ax_cols.plot(
            outputs, np.zeros(3), "_", color=style.INK, markersize=26, mew=2, label="y"
        )
        (self.row_marks,) = self.ax_rows.plot(
            outputs, np.zeros(3), "_", color=style.INK, markersize=26, mew=2
        )
        for ax in (self.ax_rows, self.ax_cols):
            ax.axhline(0, color=style.NEUTRAL, lw=0.8)
            ax.set_xticks(outputs, ["y₁", "y₂", "y₃"])
            ax.set_ylim(-3.2, 3.2)
        self.ax_cols.legend(loc="upper right", fontsize=7, ncol=2)
        self.dynamic(self.row_bars, self.col_bars, self.sum_marks, self.row_marks)

    def draw(self, data):
        for bar, value in zip(self.row_bars, data["y_rows"]):
            bar.set_height(value)
        for j, bars in enumerate(self.col_bars):
            for bar, value in zip(bars, data["contributions"][j]):
                bar.set_height(value)
        self.row_marks.set_ydata(data["y_rows"])
        self.sum_marks.set_ydata(data["y_columns"])

    def describe(self, data):
        y = ", ".join(f"{v:+.2f}" for v in data["y_columns"])
        return f"x₁ = {data['x'][0]:+.1f}: y = ({y}) either way; by columns only x₁c₁ moved"


FIGURE = MatvecTwoReadings
