"""Reference code of the session 8 solutions: what the hidden tests compute each student's
expected values with.

Never released: nbgrader leaves it out of exercises/ and of the autograded folders
(``CourseDirectory.ignore``), and ``make assignments`` refuses it there. The hidden tests run
only in the grader's own process, where it is importable. The exercises allow memkit, and so
does their reference code.
"""

from __future__ import annotations

import math

import numpy as np


def taylor_errors(q, k, beta: float, degrees) -> np.ndarray:
    """``|Phi_P(q)^T Phi_P(k) - e^{beta q^T k}|`` for each P of ``degrees``, with the truncated
    features ``memkit.recurrent.exp_kernel_features`` (D15)."""
    from memkit import recurrent

    exact = math.exp(beta * float(np.asarray(q) @ np.asarray(k)))
    return np.array([abs(recurrent.exp_kernel_features(q, beta, P) @ recurrent.exp_kernel_features(k, beta, P)
                         - exact) for P in degrees])


def edit_costs(keys, W, k_star, v_star) -> tuple[float, float]:
    """The cost on typical keys (``memkit.edit.edit_cost`` with the sample keys' second moment)
    of the whitened edit (D17) and of the plain delta-rule edit, both mapping k* to v*."""
    from memkit import edit

    C = edit.key_covariance(keys)
    whitened = edit.rank_one_edit(W, k_star, v_star, C) - W
    plain = np.outer(v_star - W @ k_star, k_star) / (k_star @ k_star)
    return float(edit.edit_cost(whitened, C)), float(edit.edit_cost(plain, C))


def distance_to_least_squares(X, Y, x_q, layers: int) -> float:
    """``||y_hat_L - W_LS x_q||`` after ``layers`` in-context layers (``memkit.icl.icl_layers``,
    Chapter 11, D12) with half the divergence threshold, ``eta = 1 / lambda_max(X^T X)``: each
    layer shrinks the distance by at most ``1 - lambda_min / lambda_max``, which the examples set."""
    from memkit import icl

    eta = 1 / np.linalg.eigvalsh(X.T @ X).max()
    return float(np.linalg.norm(icl.icl_layers(X, Y, x_q, eta, layers)[-1] - icl.least_squares_fit(X, Y) @ x_q))
