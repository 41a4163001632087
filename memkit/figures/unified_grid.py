"""Figure unified-grid (Chapter 12): two questions sort every layer into a 2 x 2 grid.

Pick a cell: rows say whether the state is fixed or grows with the sequence, columns
whether the read is linear or nonlinear in the query. The cell growing + linear is
empty: such a read collapses into the fixed + linear cell (arrow, Derivation D10).
The right panel counts the numbers the cell's memory holds as tokens are read.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

from memkit import style, unified
from memkit.figures.base import InteractiveFigure, panels

CELLS = ("fixed + linear", "fixed + nonlinear", "growing + linear", "growing + nonlinear")
D_K = D_V = 4
N_MAX = 40
TOKENS = np.arange(N_MAX + 1)
SEED = 12
LABELS = {layer.name: layer.label for layer in unified.LAYERS}
SHORT = {"linear_layer": "linear layer", "mlp": "MLP", "softmax_attention": "softmax",
         "linear_attention": "linear attention", "decay": "decay", "delta_rule": "delta",
         "test_time_training": "TTT", "hopfield": "Hopfield"}


def _position(state_kind: str, read_kind: str) -> tuple[int, int]:
    """(column, row) of a cell in the drawing: linear left, fixed on top."""
    return unified.READ_KINDS.index(read_kind), 1 - unified.STATE_KINDS.index(state_kind)


def grid_state(cell: str) -> dict:
    """What the picked cell holds (Chapter 12, D10), for a stream of up to N_MAX pairs in R^4.

    Returns the cell's kinds, its members (names from ``unified.LAYERS``), ``stored``
    (N_MAX + 1,), the numbers its memory holds after 0..N_MAX tokens as written
    (a cache holds ``n (d_k + d_v)``, a linear state ``d_k d_v``, the degree-2 state
    of a nonlinear fixed read ``d_v d_k^2``), ``after_collapse`` (the same once a linear
    read is folded into ``S = V^T K``, or None) and ``gap``, the largest difference
    between the growing read and the fixed one on a random stream of N_MAX pairs
    (None where nothing collapses).
    """
    if cell not in CELLS:
        raise ValueError(f"cell must be one of {CELLS}, got {cell!r}")
    state_kind, read_kind = cell.split(" + ")
    rng = np.random.default_rng(SEED)
    K, V = rng.standard_normal((N_MAX, D_K)), rng.standard_normal((N_MAX, D_V))
    q = rng.standard_normal(D_K)
    gaps = unified.collapse_gaps(K, V, q)
    cache = TOKENS * (D_K + D_V)
    after, gap = None, None
    if (state_kind, read_kind) == ("fixed", "linear"):
        stored = np.full(TOKENS.shape, D_K * D_V)
    elif (state_kind, read_kind) == ("fixed", "nonlinear"):
        stored = np.full(TOKENS.shape, int(np.prod(gaps["poly_shape"])))
        gap = gaps["poly_gap"]
    elif read_kind == "linear":
        stored = cache
        after = np.full(TOKENS.shape, int(np.prod(gaps["linear_shape"])))
        gap = gaps["linear_gap"]
    else:
        stored = cache
    return {"cell": cell, "state_kind": state_kind, "read_kind": read_kind,
            "members": unified.cell_members(state_kind, read_kind), "stored": stored,
            "after_collapse": after, "gap": gap}


class UnifiedGrid(InteractiveFigure):
    id = "unified-grid"
    chapter = "12"
    size = (7.4, 3.3)
    narrow_size = (4.4, 6.0)
    alt_text = ("A 2 x 2 grid of layers, state fixed or growing against a linear or nonlinear "
                "read, with an arrow from the growing linear cell to the fixed linear one, "
                "beside the numbers the chosen cell holds against the tokens read.")
    prompt = ("Pick a cell: a frame marks it in the grid, and the plot on the right shows how "
              "many numbers its memory holds as tokens are read.")
    compute = staticmethod(grid_state)

    def make_controls(self):
        return {"cell": widgets.ToggleButtons(options=list(CELLS), value=CELLS[0], description="cell")}

    def build(self, figure):
        grid, count = panels(
            figure, self.layout, 2, [3, 2], heights=[1.5, 1],
            wide=dict(left=0.1, right=0.98, top=0.88, bottom=0.24, wspace=0.28))
        grid.set_xlim(0, 2)
        grid.set_ylim(0, 2)
        grid.set_xticks([0.5, 1.5], ["linear read", "nonlinear read"])
        grid.set_yticks([1.5, 0.5], ["fixed\nstate", "growing\nstate"])
        grid.tick_params(length=0)
        for spine in grid.spines.values():
            spine.set_visible(False)
        for state_kind in unified.STATE_KINDS:
            for read_kind in unified.READ_KINDS:
                col, row = _position(state_kind, read_kind)
                grid.add_patch(Rectangle((col + 0.03, row + 0.03), 0.94, 0.94, fc="#f4f4f6",
                                         ec=style.NEUTRAL, lw=0.8))
                members = unified.cell_members(state_kind, read_kind)
                text = "\n".join(LABELS[m] for m in members) or "(empty: collapses)"
                if (state_kind, read_kind) == ("fixed", "linear"):
                    text += "\n(and state-space models)"
                grid.text(col + 0.5, row + 0.5, text, ha="center", va="center", fontsize=7.5,
                          color=style.INK if members else style.NEUTRAL)
        grid.add_patch(FancyArrowPatch((0.5, 0.66), (0.5, 1.12), arrowstyle="-|>",
                                       mutation_scale=14, color=style.QUERY, lw=1.6))
        grid.set_title("state x read")
        self.frame = Rectangle((0.02, 1.02), 0.96, 0.96, fill=False, ec=style.QUERY, lw=3)
        grid.add_patch(self.frame)
        (self.stored,) = count.plot(TOKENS, 0 * TOKENS, color=style.KEY, lw=2, label="as written")
        (self.after,) = count.plot(TOKENS, 0 * TOKENS, color=style.QUERY, lw=2, ls="--",
                                   label="after the collapse")
        count.set_xlim(0, N_MAX)
        count.set_ylim(0, N_MAX * (D_K + D_V) * 1.05)
        count.set_xlabel("tokens read n")
        count.set_ylabel("numbers held")
        count.set_title(r"$d_k = d_v = 4$")
        count.legend(loc="upper left", fontsize=7)
        self.dynamic(self.frame, self.stored, self.after)

    def draw(self, data):
        col, row = _position(data["state_kind"], data["read_kind"])
        self.frame.set_xy((col + 0.02, row + 0.02))
        self.stored.set_ydata(data["stored"])
        after = data["after_collapse"]
        self.after.set_ydata(np.full(TOKENS.shape, np.nan) if after is None else after)

    def describe(self, data):
        n = int(data["stored"][-1])
        if data["after_collapse"] is not None:
            return (f"growing + linear: {n} numbers fold into {int(data['after_collapse'][-1])}"
                    f" (read gap {data['gap']:.0e})")
        names = ", ".join(SHORT[m] for m in data["members"])
        if data["gap"] is not None:
            return f"{data['cell']}: {names}; a degree-2 read holds {n} (gap {data['gap']:.0e})"
        return f"{data['cell']}: {names}; {n} numbers after {N_MAX} tokens"


FIGURE = UnifiedGrid
