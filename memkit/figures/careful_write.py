"""Figure careful-write (Chapter 4): a least-squares write is exact up to d_k memories.

Drag the number M of stored pairs (random unit keys in R^16, mean of three draws):
the outer-product (Hebbian) store misrecalls as soon as two keys overlap, while the
least-squares store recalls every value exactly until M = d_k and then degrades
gracefully, staying below the Hebbian curve.
"""

from __future__ import annotations

import functools

import ipywidgets as widgets
import numpy as np

from memkit import memory, style
from memkit.figures.base import InteractiveFigure, margins
from memkit.validation import as_count

D_K = 16
DRAWS = 3
M_MAX = 48
SEED = 0


@functools.lru_cache(maxsize=1)
def _curves() -> memory.CarefulWriteErrors:
    """Both error curves over M = 1 .. M_MAX (the same draws for every position of the slider)."""
    return memory.careful_write_errors(np.arange(1, M_MAX + 1), d_k=D_K, draws=DRAWS, seed=SEED)


def write_errors(M: int) -> dict:
    """Recall error of the Hebbian and least-squares stores, over M = 1..48 and at M (Chapter 4).

    The error is ``mean_i ||W k_i - v_i|| / ||v_i||`` over the stored pairs and three
    draws of random unit keys in R^16 (:func:`memkit.memory.careful_write_errors`).
    Returns M, the curves (M_values, hebbian, least_squares: arrays over 1..48) and
    the two errors at the chosen M.
    """
    M = as_count(M, "M")
    if M > M_MAX:
        raise ValueError(f"M must be at most {M_MAX}, got {M}")
    curves = _curves()
    return {
        "M": M,
        "M_values": curves.M,
        "hebbian_curve": curves.hebbian,
        "least_squares_curve": curves.least_squares,
        "hebbian": float(curves.hebbian[M - 1]),
        "least_squares": float(curves.least_squares[M - 1]),
    }


class CarefulWrite(InteractiveFigure):
    id = "careful-write"
    chapter = "4"
    size = (7.0, 3.0)
    alt_text = ("Recall error against the number of stored pairs for the outer-product "
                "(Hebbian) store and the least-squares store, with the line M = d_k marked.")
    prompt = ("Drag the number of stored pairs M: the least-squares error stays at zero up to M "
              "= d_k, while the Hebbian error rises as soon as a second pair is stored.")
    compute = staticmethod(write_errors)

    def make_controls(self):
        return {"M": widgets.IntSlider(value=20, min=1, max=M_MAX, description="stored M")}

    def build(self, figure):
        ax = figure.subplots()
        margins(figure, self.layout, left=0.09, right=0.98, top=0.88, bottom=0.24)
        curves = _curves()
        ax.plot(curves.M, curves.hebbian, color=style.VALUE, lw=2, label="Hebbian (outer products)")
        ax.plot(curves.M, curves.least_squares, color=style.KEY, lw=2, label="least squares")
        ax.axvline(D_K, color=style.NEUTRAL, lw=1, ls="--")
        ax.text(D_K + 0.5, 0.97, r"$M = d_k$", color=style.NEUTRAL, va="top",
                transform=ax.get_xaxis_transform())
        ax.set_xlim(0, M_MAX + 1)
        ax.set_ylim(-0.05, 1.12 * float(curves.hebbian.max()))
        ax.set_xlabel("stored pairs M")
        ax.set_ylabel(r"recall error $\|Wk_i - v_i\| / \|v_i\|$")
        ax.set_title(f"Writing more carefully: $d_k = {D_K}$, mean of {DRAWS} draws")
        ax.legend(loc="lower left", bbox_to_anchor=(0.55, 0.0))
        self.marker = ax.axvline(0, color=style.QUERY, lw=1.5)
        (self.hebbian_dot,) = ax.plot([], [], "o", color=style.VALUE, ms=7)
        (self.least_squares_dot,) = ax.plot([], [], "o", color=style.KEY, ms=7)
        self.dynamic(self.marker, self.hebbian_dot, self.least_squares_dot)

    def draw(self, data):
        M = data["M"]
        self.marker.set_xdata([M, M])
        self.hebbian_dot.set_data([M], [data["hebbian"]])
        self.least_squares_dot.set_data([M], [data["least_squares"]])

    def describe(self, data):
        M = data["M"]
        if M <= D_K:
            return (
                f"M = {M} ≤ d_k = {D_K}: Hebbian error {data['hebbian']:.2f},"
                f" least squares {data['least_squares']:.2f} (exact recall)"
            )
        return (
            f"M = {M} > d_k = {D_K}: Hebbian error {data['hebbian']:.2f},"
            f" least squares {data['least_squares']:.2f}"
        )


FIGURE = CarefulWrite
