"""Figure cache-vs-state (Chapter 9): a cache grows, a state does not.

Drag the number of tokens read. Left, the key-value cache of softmax attention: one
key row (blue) and one value row (violet) per token, so it grows with the stream.
Middle, the linear-attention state S_t = sum_{i<=t} v_i k_i^T: a 4 x 4 matrix
whatever t is (teal positive, rose negative). Right, the error each one makes when
asked for the first value, ||o - v_1||: the cache's softmax read stays near zero,
while the state, past its capacity of order d_k = 4, soon answers badly.
"""

from __future__ import annotations

from functools import lru_cache

import ipywidgets as widgets
import numpy as np

from memkit import memory, recurrent, style
from memkit.figures.base import InteractiveFigure, cell_grid, panels
from memkit.validation import as_count

D_K = 4
N_MAX = 10
BETA = 30.0
SEED = 0


@lru_cache(maxsize=1)
def _stream() -> recurrent.CacheVsState:
    return recurrent.cache_vs_state_errors(N_MAX, d_k=D_K, beta=BETA, seed=SEED)


def cache_and_state(n: int) -> dict:
    """The cache, the state and both recall errors after n tokens (Chapter 9).

    One fixed stream of N_MAX = 10 random unit keys and values in R^4
    (:func:`memkit.recurrent.cache_vs_state_errors`, beta = 30, seed 0). Returns n,
    cache (n, 8): the key row then the value row of each token read; state (4, 4):
    ``sum_{i<=n} v_i k_i^T`` (:func:`memkit.memory.hebbian_write`);
    tokens (n,) = 1..n with cache_error (n,) and state_error (n,), the error of
    recalling v_1 with the query k_1 after each number of tokens.
    """
    n = as_count(n, "n")
    if n > N_MAX:
        raise ValueError(f"n must be at most {N_MAX}, got {n}")
    run = _stream()
    keys, values = run.keys[:n], run.values[:n]
    return {
        "n": n,
        "cache": np.hstack([keys, values]),
        "state": memory.hebbian_write(keys, values),
        "tokens": run.tokens[:n],
        "cache_error": run.cache_error[:n],
        "state_error": run.state_error[:n],
    }


class CacheVsState(InteractiveFigure):
    id = "cache-vs-state"
    chapter = "9"
    size = (7.6, 3.2)
    narrow_size = (4.4, 5.4)
    alt_text = ("Three panels: a key row and a value row for every token read (the cache), the "
                "4 x 4 linear-attention state, and the error each makes recalling the first "
                "value against the tokens read.")
    prompt = ("Drag the tokens read: the cache gains two rows a token while the state keeps its "
              "size, and past four tokens the state's error climbs while the cache's stays near "
              "zero.")
    compute = staticmethod(cache_and_state)

    def make_controls(self):
        return {"n": widgets.IntSlider(value=10, min=1, max=N_MAX, description="tokens read")}

    def build(self, figure):
        # narrow: the cache beside the state, the errors under both
        self.ax_cache, self.ax_state, self.ax_error = panels(
            figure, self.layout, 3, [0.9, 1.0, 1.6], rows=(2, 1), heights=[1.0, 1.1],
            wide=dict(left=0.04, right=0.98, top=0.86, bottom=0.24, wspace=0.35))
        # the cache: a grid of N_MAX rows, filled row by row; keys on the left, values right
        self.cache_cells = cell_grid(self.ax_cache, N_MAX, 2 * D_K, aspect="auto")
        self.ax_cache.axvline(D_K - 0.5, color=style.INK, lw=0.8)
        self.ax_cache.set_xticks([(D_K - 1) / 2, D_K + (D_K - 1) / 2], ["keys", "values"])
        for tick, colour in zip(self.ax_cache.get_xticklabels(), (style.KEY, style.VALUE)):
            tick.set_color(colour)
        self.ax_cache.set_yticks([0, N_MAX - 1], ["1", str(N_MAX)])
        self.ax_cache.set_ylabel("token")
        self.ax_cache.set_title("KV cache (grows)")
        # the state: always 4 x 4
        self.state_cells = cell_grid(self.ax_state, D_K, D_K)
        self.ax_state.set_xticks([])
        self.ax_state.set_yticks([])
        self.ax_state.set_title(r"state $S_t$ (4$\times$4)")
        # (its longest text, for the layout to leave it room; draw writes the state's)
        self.state_size = self.ax_state.text(0.5, -0.1, self._sizes(N_MAX),
                                             transform=self.ax_state.transAxes,
                                             ha="center", va="top")
        # the two errors against the number of tokens read
        (self.cache_line,) = self.ax_error.plot([], [], "o-", color=style.KEY, ms=3,
                                                label="cache, softmax read")
        (self.state_line,) = self.ax_error.plot([], [], "s-", color=style.NEGATIVE, ms=3,
                                                label="state, linear read")
        self.ax_error.set_xlim(0.5, N_MAX + 0.5)
        self.ax_error.set_ylim(-0.05, 1.6)
        self.ax_error.set_xlabel("tokens read")
        self.ax_error.set_ylabel(r"$\Vert o - v_1\Vert$")
        self.ax_error.set_title(r"recalling $v_1$ with the query $k_1$")
        self.ax_error.legend(loc="upper left", fontsize=8)
        self.dynamic(self.cache_cells, self.state_cells, self.state_size, self.cache_line,
                     self.state_line)

    def draw(self, data):
        n = data["n"]
        colours = np.ones((N_MAX, 2 * D_K, 4))
        colours[:n] = style.sign_colours(data["cache"], scale=1.0)
        self.cache_cells.set_facecolor(colours.reshape(-1, 4))
        self.state_cells.set_facecolor(style.sign_colours(data["state"], scale=1.5).reshape(-1, 4))
        self.state_size.set_text(self._sizes(n))
        self.cache_line.set_data(data["tokens"], data["cache_error"])
        self.state_line.set_data(data["tokens"], data["state_error"])

    @staticmethod
    def _sizes(n: int) -> str:
        return f"{D_K * D_K} numbers; cache {2 * D_K * n}"

    def describe(self, data):
        n = data["n"]
        return (f"{n} tokens: cache holds {2 * D_K * n} numbers, error {data['cache_error'][-1]:.2f};"
                f" state {D_K * D_K}, error {data['state_error'][-1]:.2f}")


FIGURE = CacheVsState
