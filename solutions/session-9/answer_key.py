"""Reference code of the session 9 solutions: what the hidden tests compute each student's
expected values with.

Never released: nbgrader leaves it out of exercises/ and of the autograded folders
(``CourseDirectory.ignore``), and ``make assignments`` refuses it there. The hidden tests run
only in the grader's own process, where it is importable.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=64)
def interference_runs(d_k: int, grid: tuple[int, ...], trials: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The Hebbian and the least-squares interference-to-signal ratios (Chapters 3 and 4) that
    ``memory.hebbian_interference_mc`` and ``memory.least_squares_interference_mc`` measure
    for each ``M`` of ``grid`` with keys in R^{d_k}, ``trials`` trials and the seed ``seed``:
    two arrays of shape ``(len(grid),)``, read-only (kept for the next check of the same run).
    """
    from memkit import memory

    hebbian = np.array([memory.hebbian_interference_mc(M, d_k, trials, seed) for M in grid])
    least_squares = np.array([memory.least_squares_interference_mc(M, d_k, trials, seed) for M in grid])
    hebbian.flags.writeable = least_squares.flags.writeable = False
    return hebbian, least_squares


def measured_capacity(d: int, trials: int, seed: int) -> int:
    """The capacity of a squared-ReLU memory in R^d (Chapter 5) that ``capacity.capacity_mc``
    measures with ``trials`` trials and the seed ``seed``."""
    from memkit import capacity, scores

    return capacity.capacity_mc(d, scores.score("relu_power", p=2), trials, seed)
