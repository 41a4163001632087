"""Figure capacity-vs-dimension (Chapter 6): each sharper score buys orders of magnitude.

Drag the dimension d. For each score function the curve is the predicted
interference-to-signal ratio of a memory of M random pairs (Chapters 3, 5 and 6):
linear sqrt((M-1)/d), ReLU^p sqrt((M-1) E[s^{2p}] / 2) with the exact moments, and
softmax with beta = sqrt(d), sqrt(M) e^{beta^2/d - beta} (D7). Each curve crosses the
dashed line (interference equals signal) at its capacity, marked with a dot and its
value. The softmax capacity e^{2 sqrt(d) - 2} leaves the chart for large d.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
from matplotlib.collections import PathCollection
from matplotlib.transforms import Affine2D

from memkit import capacity, style
from memkit.figures.base import InteractiveFigure, margins, panels, text_outline

#: the M axis of the chart
M_GRID = np.unique(np.round(np.logspace(np.log10(2), 7, 120))).astype(float)
M_MAX = float(M_GRID[-1])
#: type size of the capacity labels, in points
LABEL_PT = 9
#: (name, colour) of the five reads, from the linear memory to softmax
READS = (
    ("linear", style.NEUTRAL),
    ("ReLU", style.KEY),
    ("ReLU²", style.VALUE),
    ("ReLU³", style.POSITIVE),
    ("softmax, β = √d", style.QUERY),
)


def capacity_curves(d: int) -> dict:
    """Predicted ratio curves and capacities of five reads at dimension d (Chapter 6).

    Curves (5, len(M_GRID)) from :func:`memkit.capacity.hebbian_ratio`,
    :func:`~memkit.capacity.relu_power_ratio` (p = 1, 2, 3) and
    :func:`~memkit.capacity.softmax_ratio` at beta = sqrt(d); capacities (5,) the M at
    which each curve equals 1: d + 1, 1 + 2 / E[s^{2p}] and e^{2 beta (1 - beta/d)}
    (:func:`~memkit.capacity.softmax_capacity`). Returns d, beta, M (the grid), curves,
    capacities and on_chart (5,) booleans (capacity within the grid).
    """
    d = int(d)
    beta = float(np.sqrt(d))
    curves = [capacity.hebbian_ratio(M_GRID, d)]
    curves += [capacity.relu_power_ratio(M_GRID, d, p) for p in (1, 2, 3)]
    curves.append(capacity.softmax_ratio(M_GRID, d, beta))
    capacities = [d + 1.0] + [1.0 + 2.0 / capacity.unit_dot_moment(d, p) for p in (1, 2, 3)]
    capacities.append(capacity.softmax_capacity(d, beta))
    capacities = np.array(capacities)
    return {"d": d, "beta": beta, "M": M_GRID, "curves": np.array(curves),
            "capacities": capacities, "on_chart": capacities <= M_MAX}


def _short(value: float) -> str:
    return f"{value:.0f}" if value < 1e5 else f"{value:.1e}".replace("e+0", "e").replace("e+", "e")


def _value_outlines(data: dict, size: float = LABEL_PT) -> list:
    """The capacity labels of ``data`` as outlines of ``size`` points (five Texts drawn glyph
    by glyph would cost most of an update)."""
    return [text_outline(f"M ≈ {_short(cap)}" + ("" if inside else " (off the chart)"),
                         size, align="left")
            for cap, inside in zip(data["capacities"], data["on_chart"])]


class CapacityVsDimension(InteractiveFigure):
    id = "capacity-vs-dimension"
    chapter = "6"
    size = (7.6, 3.5)
    narrow_size = (4.4, 5.0)
    alt_text = ("The predicted interference-to-signal ratio against the number of stored pairs "
                "for the linear, ReLU-power and softmax reads, each crossing the dashed line of "
                "ratio 1 at its capacity, marked with a dot and its value.")
    prompt = ("Drag d up from 64: every dot moves right, the higher ReLU powers faster, and "
              "the softmax dot soon leaves the chart.")
    compute = staticmethod(capacity_curves)

    def make_controls(self):
        return {"d": widgets.IntSlider(value=64, min=8, max=128, step=4, description="dim d")}

    def build(self, figure):
        title = "predicted ratio of each read; capacity where it crosses 1"
        self.label_pt = self.pt(LABEL_PT)
        if self.layout == "wide":  # the labels right of the chart
            ax = figure.add_subplot(1, 1, 1)
            margins(figure, self.layout, left=0.09, right=0.72, top=0.9, bottom=0.2)
            line_step = 1.2 * LABEL_PT / 72 / self.size[1]  # one line of a label, in figure units
            where = figure.transFigure
            names = [(0.74, 0.82 - 0.12 * k + line_step / 2) for k in range(len(READS))]
            values = np.column_stack([np.full(len(READS), 0.74),
                                      0.82 - 0.12 * np.arange(len(READS)) - line_step * 0.85])
            under = Affine2D().scale(figure.dpi / 72)
        else:  # the labels under the chart, in two columns
            ax, key = panels(figure, self.layout, 2, heights=[2.4, 1])
            key.axis("off")
            title = title.replace("; ", ";\n")
            where = key.transAxes
            names = [(0.52 * (k % 2), 0.95 - 0.36 * (k // 2)) for k in range(len(READS))]
            values = np.array(names)
            # each value one line under its name (the outline's transform works in pixels)
            under = Affine2D().scale(figure.dpi / 72).translate(
                0, -2.0 * self.label_pt * figure.dpi / 72)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(2, M_MAX)
        ax.set_ylim(1e-3, 1e2)
        ax.axhline(1.0, color=style.INK, ls="--", lw=0.9)
        ax.set_xlabel("stored pairs $M$")
        ax.set_ylabel("interference / signal")
        ax.set_title(title)
        self.lines = []
        for (name, colour), (x, y) in zip(READS, names):
            (line,) = ax.plot([], [], color=colour, lw=1.6)
            self.lines.append(line)
            # each label: the read's name (drawn once), its capacity on the line under it
            figure.text(x, y, f"{name}:", color=colour, fontsize=self.label_pt,
                        va="center" if self.layout == "wide" else "top", transform=where)
        self.values = PathCollection([], offsets=values, offset_transform=where,
                                     transform=under,
                                     facecolors=[colour for _, colour in READS],
                                     edgecolors="none")
        figure.add_artist(self.values)
        self.dots = ax.scatter(np.ones(len(READS)), np.ones(len(READS)), s=30, zorder=4,
                               color=[colour for _, colour in READS])
        self.dynamic(self.lines, self.dots, self.values)
        # every value label of every step of the slider, outlined once now (about 0.1 s),
        # so that a step to a value not seen yet costs no more than any other
        slider = self.controls["d"]
        for d in range(slider.min, slider.max + 1, slider.step):
            _value_outlines(capacity_curves(d), self.label_pt)

    def draw(self, data):
        for line, curve in zip(self.lines, data["curves"]):
            line.set_data(data["M"], curve)
        caps = data["capacities"]
        # a dot off the chart is parked outside the axes, where it is clipped
        self.dots.set_offsets(np.column_stack([np.where(data["on_chart"], caps, 1e9),
                                               np.ones(len(caps))]))
        self.values.set_paths(_value_outlines(data, self.label_pt))

    def describe(self, data):
        caps = data["capacities"]
        return (f"d = {data['d']}: capacity {caps[0]:.0f} linear, {caps[3]:.3g} ReLU³,"
                f" {caps[4]:.2g} softmax (β = {data['beta']:.1f})")


FIGURE = CapacityVsDimension
