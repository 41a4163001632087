"""Figure cache-vs-weights (Chapter 9): past a few tens of thousands of tokens the context
outweighs the weights.

Drag the context length n (powers of two, logarithmic axis) of one sequence read by a
model of width d = 4096 with 32 layers in 16-bit numbers. The weights, 12 d^2 L
parameters, cost the same at every length (about 12.9 GB); the key-value cache,
2 d L numbers per token, grows in proportion to n and crosses them at n* = 6 d =
24 576 tokens (the tick on the axis). The bars on the right compare the two at the
chosen length.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from memkit import costs, style
from memkit.figures.base import InteractiveFigure, panels
from memkit.validation import as_count

D = 4096
LAYERS = 32
BYTES = 2
#: the slider's range, as powers of two of the context length
LOG2_MIN, LOG2_MAX = 10, 20
GB = 1e9


def bytes_at(log2_n: int) -> dict:
    """Weight bytes and cache bytes of one sequence of n = 2**log2_n tokens (Chapter 9).

    d = 4096, L = 32, 2 bytes a number, through :mod:`memkit.costs`. Returns log2_n, n,
    weights (bytes, the same at every n), cache (bytes at n), ratio = cache / weights,
    the crossing length n_star = 6 d and, for the curve, lengths (the powers of two
    of the slider's range) with cache_curve (their cache bytes).
    """
    log2_n = as_count(log2_n, "log2_n", minimum=0)
    n = 2**log2_n
    weights = costs.param_bytes(D, LAYERS, BYTES)
    cache = costs.cache_bytes(n, D, LAYERS, BYTES)
    lengths = 2 ** np.arange(LOG2_MIN, LOG2_MAX + 1)
    return {
        "log2_n": log2_n,
        "n": n,
        "weights": weights,
        "cache": cache,
        "ratio": cache / weights,
        "n_star": costs.crossover_tokens(D, LAYERS),
        "lengths": lengths,
        "cache_curve": costs.cache_bytes(1, D, LAYERS, BYTES) * lengths,
    }


class CacheVsWeights(InteractiveFigure):
    id = "cache-vs-weights"
    chapter = "9"
    size = (7.6, 3.1)
    narrow_size = (4.4, 5.2)
    alt_text = ("Memory in gigabytes against the context length on a logarithmic axis: a flat "
                "line for the weights, a rising line for the key-value cache crossing it at the "
                "marked length, and two bars comparing them at the chosen length.")
    prompt = ("Drag the context length: the cache's bar grows with it and overtakes the "
              "weights' bar past the crossing marked on the axis.")
    compute = staticmethod(bytes_at)

    def make_controls(self):
        return {"log2_n": widgets.IntSlider(value=15, min=LOG2_MIN, max=LOG2_MAX,
                                            description="log2 tokens")}

    def build(self, figure):
        self.ax, self.ax_bars = panels(
            figure, self.layout, 2, [2.4, 1], heights=[1.7, 1],
            wide=dict(left=0.1, right=0.98, top=0.86, bottom=0.24, wspace=0.35))
        data = bytes_at(LOG2_MIN)
        lengths = data["lengths"]
        self.ax.set_xscale("log", base=2)
        self.ax.set_yscale("log")
        self.ax.plot(lengths, np.full(len(lengths), data["weights"] / GB), color=style.KEY,
                     label=r"weights, $12d^2L$")
        self.ax.plot(lengths, data["cache_curve"] / GB, color=style.VALUE,
                     label=r"cache, $2dL$ per token")
        self.ax.set_xlim(lengths[0] / 1.3, lengths[-1] * 1.3)
        self.ax.set_ylim(0.3, 2000)
        n_star = data["n_star"]
        self.ax.axvline(n_star, color=style.NEUTRAL, lw=0.8, ls=":")
        self.ax.plot([n_star], [0.3], marker="|", ms=14, color=style.INK,
                     clip_on=False)
        self.ax.text(n_star, data["weights"] / GB * 2.2, f"n* = {n_star:,.0f}", ha="center",
                     fontsize=8, color=style.INK)
        (self.marker,) = self.ax.plot([], [], "o", color=style.QUERY, ms=7)
        self.cursor = self.ax.axvline(lengths[0], color=style.QUERY, lw=1)
        self.ax.set_xlabel("context length n (tokens)")
        self.ax.set_ylabel("GB")
        self.ax.set_title(f"d = {D}, {LAYERS} layers, 16-bit")
        self.ax.legend(loc="upper left", fontsize=8)
        self.bars = self.ax_bars.bar([0, 1], [1, 1], bottom=0.3, color=[style.KEY, style.VALUE], width=0.6)
        self.ax_bars.set_xticks([0, 1], ["weights", "cache"])
        self.ax_bars.set_yscale("log")
        self.ax_bars.set_ylim(0.3, 2000)
        self.ax_bars.set_ylabel("GB")
        self.ax_bars.set_title("at the chosen n")
        self.dynamic(self.marker, self.cursor, self.bars)

    def draw(self, data):
        self.marker.set_data([data["n"]], [data["cache"] / GB])
        self.cursor.set_xdata([data["n"], data["n"]])
        self.bars[0].set_height(data["weights"] / GB - 0.3)
        self.bars[1].set_height(data["cache"] / GB - 0.3)

    def describe(self, data):
        return (f"n = {data['n']:,} tokens: cache {data['cache'] / GB:.1f} GB against weights"
                f" {data['weights'] / GB:.1f} GB ({data['ratio']:.2f}x)")


FIGURE = CacheVsWeights
