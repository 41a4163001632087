"""Figure matmul-four-readings (Chapter 2): one product C = AB, four readings.

Pick a reading (entry, row, column, outer) and an index: the outlined cells of A
and B are what that reading multiplies, the outlined cells of C what it produces.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import Rectangle

from memkit import linalg, style
from memkit.figures.base import InteractiveFigure, panels

#: A is 3x3 (m = 3, r = 3) and B is 3x4 (n = 4)
A = np.array([[1.0, -2.0, 0.5], [0.0, 1.5, -1.0], [2.0, 0.5, 1.0]])
B = np.array([[0.5, 1.0, -1.0, 2.0], [-1.0, 0.0, 1.5, 0.5], [1.0, -0.5, 0.5, -1.0]])

READINGS = ("entry", "row", "column", "outer")
FORMULAS = {
    "entry": r"$C_{ij} = a_i^\top b_j$",
    "row": r"$C_{i\cdot} = \sum_k A_{ik} \rho_k^\top$",
    "column": r"$C_{\cdot j} = \sum_k B_{kj} \alpha_k$",
    "outer": r"$C = \sum_k \alpha_k \rho_k^\top$",
}


def _block(rows: slice, cols: slice, shape: tuple[int, int]) -> tuple[int, int, int, int]:
    """(first row, first column, height, width) of a rectangular block of a grid."""
    r = range(shape[0])[rows]
    c = range(shape[1])[cols]
    return r.start, c.start, len(r), len(c)


def reading_cells(reading: str, index: int) -> dict:
    """Which cells of A, B and C one reading uses, and what it computes (Chapter 2).

    ``index`` is i (entry and row readings), j (column reading) or k (outer reading);
    for the entry reading it picks i = index mod 3 and j = index. Returns the blocks
    of A, B and C as (row, col, height, width), the value the reading produces on
    its block of C, and that block of A @ B, so the two can be compared.
    """
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    m, r = A.shape
    n = B.shape[1]
    every = slice(None)
    if reading == "entry":
        i, j = index % m, index % n
        blocks = (_block(slice(i, i + 1), every, A.shape), _block(every, slice(j, j + 1), B.shape),
                  _block(slice(i, i + 1), slice(j, j + 1), (m, n)))
        produced = np.array([[linalg.matmul_entry(A, B)[i, j]]])
        target = (A @ B)[i : i + 1, j : j + 1]
    elif reading == "row":
        i = index % m
        blocks = (_block(slice(i, i + 1), every, A.shape), _block(every, every, B.shape),
                  _block(slice(i, i + 1), every, (m, n)))
        produced = linalg.matmul_row(A, B)[i : i + 1]
        target = (A @ B)[i : i + 1]
    elif reading == "column":
        j = index % n
        blocks = (_block(every, every, A.shape), _block(every, slice(j, j + 1), B.shape),
                  _block(every, slice(j, j + 1), (m, n)))
        produced = linalg.matmul_column(A, B)[:, j : j + 1]
        target = (A @ B)[:, j : j + 1]
    else:
        k = index % r
        blocks = (_block(every, slice(k, k + 1), A.shape), _block(slice(k, k + 1), every, B.shape),
                  _block(every, every, (m, n)))
        produced = linalg.outer_terms(A, B).sum(axis=0)
        target = A @ B
    return {"reading": reading, "index": index, "blocks": blocks, "produced": produced,
            "target": target, "C": A @ B}


class MatmulFourReadings(InteractiveFigure):
    id = "matmul-four-readings"
    chapter = "2"
    size = (7.2, 2.9)
    narrow_size = (4.4, 4.6)
    alt_text = ("The matrices A, B and C = AB as grids of numbers, with the cells of A and B "
                "that one reading multiplies outlined, and the cells of C it produces.")
    prompt = ("Pick a reading and drag the index: the outlines move to the cells that reading "
              "multiplies and the cells of C it fills.")
    compute = staticmethod(reading_cells)

    def make_controls(self):
        return {
            "reading": widgets.ToggleButtons(options=list(READINGS), value="entry", description="reading"),
            "index": widgets.IntSlider(value=0, min=0, max=3, description="index"),
        }

    def build(self, figure):
        if self.layout == "wide":  # the formulas in a row over the three matrices
            axes = panels(
                figure, self.layout, 3, [3, 4, 4],
                wide=dict(left=0.03, right=0.99, top=0.80, bottom=0.2, wspace=0.25))
            where = figure.transFigure
            spots = [((i + 0.5) / 4, 0.92) for i in range(4)]
            box = (0.24, 0.135)
            frame_at = [(i / 4 + 0.005, 0.85) for i in range(4)]
        else:  # the formulas two by two, over A beside B, over C
            grid = figure.add_gridspec(3, 2, height_ratios=[0.55, 1, 1], width_ratios=[3, 4])
            key = figure.add_subplot(grid[0, :])
            key.axis("off")
            axes = [figure.add_subplot(grid[1, 0]), figure.add_subplot(grid[1, 1]),
                    figure.add_subplot(grid[2, :])]
            where = key.transAxes
            spots = [(0.25 + 0.5 * (i % 2), 0.75 - 0.5 * (i // 2)) for i in range(4)]
            box = (0.49, 0.48)
            frame_at = [(x - box[0] / 2, y - box[1] / 2) for x, y in spots]
        self.outlines = []
        for ax, matrix, name in zip(axes, (A, B, A @ B), ("A (3×3)", "B (3×4)", "C = AB")):
            ax.imshow(style.sign_colours(matrix), interpolation="nearest")
            for (row, col), value in np.ndenumerate(matrix):
                ax.text(col, row, f"{value:g}", ha="center", va="center", fontsize=7, color=style.INK)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(name)
            outline = Rectangle((0, 0), 1, 1, fill=False, lw=2.5, ec=style.QUERY)
            ax.add_patch(outline)
            self.outlines.append(outline)
        # the four formulas are static; a frame (dynamic) marks the current one
        self.formulas = {
            name: figure.text(x, y, f"{name}: {FORMULAS[name]}", ha="center", va="center",
                              fontsize=8.5, color=style.INK, transform=where)
            for (x, y), name in zip(spots, READINGS)
        }
        self._frame_at = frame_at
        self.frame = Rectangle(self._frame_at[0], *box, transform=where, fill=False,
                               lw=1.5, ec=style.QUERY)
        figure.add_artist(self.frame)
        self.dynamic(self.outlines, self.frame)

    def draw(self, data):
        for outline, (row, col, height, width) in zip(self.outlines, data["blocks"]):
            outline.set_xy((col - 0.5, row - 0.5))
            outline.set_width(width)
            outline.set_height(height)
        self.frame.set_xy(self._frame_at[READINGS.index(data["reading"])])

    def describe(self, data):
        gap = float(np.max(np.abs(data["produced"] - data["target"])))
        what = {
            "entry": "one row of A against one column of B gives one entry of C",
            "row": "row i of A weights the rows of B to give row i of C",
            "column": "column j of B weights the columns of A to give column j of C",
            "outer": "column k of A times row k of B is one rank-one layer of all of C",
        }[data["reading"]]
        agreement = "equal to AB there" if gap < 1e-12 else f"off from AB by {gap:.1e}"
        return f"{data['reading']} reading, index {data['index']}: {what} ({agreement})"


FIGURE = MatmulFourReadings
