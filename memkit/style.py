"""The course's colour code and matplotlib defaults, in one place (Chapter 0).

Three roles run through every figure: a key is blue, a value violet, a query
copper. Inside a grid of numbers a cell is teal when positive and rose when
negative, with opacity for magnitude; that pair carries sign only.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import LinearSegmentedColormap

KEY = "#2f6db5"  # blue: the address a memory is matched by
VALUE = "#7b4fb0"  # violet: the content stored and returned
QUERY = "#c0712b"  # copper: the question being asked
POSITIVE = "#1f9e89"  # teal: a positive grid cell
NEGATIVE = "#d1495b"  # rose: a negative grid cell
NEUTRAL = "#8a8f98"  # grey: structure, arrows, reference lines
INK = "#22262e"  # text and outlines
HIGHLIGHT = "#f2c14e"  # outline of the cells a reading uses

ROLE_COLOURS = {"key": KEY, "value": VALUE, "query": QUERY}

SIGN_CMAP = LinearSegmentedColormap.from_list(
    "memkit_sign", [NEGATIVE, "#f7f7f7", POSITIVE]
)

RC = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": NEUTRAL,
    "axes.labelcolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "legend.frameon": False,
    "figure.facecolor": "white",
}

#: Resolution of every rendered figure (pixels per inch).
DPI = 80


def sign_colours(values: np.ndarray, scale: float | None = None) -> np.ndarray:
    """RGBA colours of grid cells: teal if positive, rose if negative, alpha = |value| / scale.

    values: any shape; returns shape values.shape + (4,). ``scale`` defaults to max |value|.
    """
    values = np.asarray(values, dtype=float)
    scale = float(np.max(np.abs(values))) if scale is None else float(scale)
    alpha = np.zeros_like(values) if scale == 0 else np.clip(np.abs(values) / scale, 0.0, 1.0)
    rgba = np.empty(values.shape + (4,))
    pos = np.array(_hex_rgb(POSITIVE))
    neg = np.array(_hex_rgb(NEGATIVE))
    rgba[..., :3] = np.where((values >= 0)[..., None], pos, neg)
    rgba[..., 3] = 0.08 + 0.92 * alpha
    return rgba


def _hex_rgb(colour: str) -> tuple[float, float, float]:
    colour = colour.lstrip("#")
    return tuple(int(colour[i : i + 2], 16) / 255 for i in (0, 2, 4))
