"""Input checks shared by every memkit function.

Each helper converts its argument to a float ``numpy`` array and raises a
``ValueError`` (or ``TypeError``) whose message names the argument, the shape it
expected and the shape it got, so that a reader who passes a wrong array learns
which one and why.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "as_vector",
    "as_matrix",
    "as_positive",
    "as_count",
    "as_rng",
    "same_length",
]


def _shape_text(shape) -> str:
    return "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"


def _as_float_array(x, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric array-like, got {type(x).__name__}") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arr


def as_vector(x, name: str, dim: int | None = None) -> np.ndarray:
    """Return ``x`` as a 1-D float array of length ``dim`` (any length if None)."""
    arr = _as_float_array(x, name)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be a vector of shape {_shape_text((dim,))}, got an array of shape {arr.shape}"
        )
    if dim is not None and arr.shape[0] != dim:
        raise ValueError(f"{name} must have length {dim}, got shape {arr.shape}")
    return arr


def as_matrix(x, name: str, shape: tuple[int | None, int | None] = (None, None)) -> np.ndarray:
    """Return ``x`` as a 2-D float array; ``shape`` entries of None match any size."""
    arr = _as_float_array(x, name)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a matrix of shape {_shape_text(shape)}, got an array of shape {arr.shape}"
        )
    for axis, want in enumerate(shape):
        if want is not None and arr.shape[axis] != want:
            raise ValueError(
                f"{name} must have shape {_shape_text(shape)}, got {arr.shape}"
                f" (axis {axis} should be {want})"
            )
    return arr


def as_positive(x, name: str, allow_zero: bool = False) -> float:
    """Return ``x`` as a float that is > 0 (or >= 0 with ``allow_zero``)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__}")
    value = float(x)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {x!r}")
    return value


def as_count(x, name: str, minimum: int = 1) -> int:
    """Return ``x`` as an int that is at least ``minimum``."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__}")
    if x < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x}")
    return int(x)


def as_rng(seed) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a Generator or an integer seed.

    memkit never touches numpy's global random state: every random draw goes
    through the generator returned here, so every figure and number is
    reproducible from its seed.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(
            f"seed must be an int or a numpy.random.Generator, got {type(seed).__name__}"
        )
    return np.random.default_rng(int(seed))


def same_length(a: np.ndarray, a_name: str, b: np.ndarray, b_name: str) -> None:
    """Raise if the two arrays do not have the same number of rows."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{a_name} and {b_name} must have the same number of rows (one per stored pair),"
            f" got {a.shape[0]} and {b.shape[0]}"
        )
