"""Capacities of every memory in the course: closed forms and Monte Carlo estimates.

One convention throughout (Chapter 3): keys are random unit vectors, values are
independent random unit vectors, and the capacity is the number of stored pairs
``M`` at which the interference of a recall reaches the size of its signal
(interference-to-signal ratio 1). Under that convention:

- Hebbian write, linear read (Chapter 3, D1): ratio ``sqrt((M-1)/d_k)``, capacity of order ``d_k``;
- least-squares write (Chapter 4, D3): ratio ``sqrt(M/d_k - 1)``, capacity ``2 d_k``;
- ReLU^p read (Chapter 5, D2): ratio ``sqrt((M-1) E[s^{2p}] / 2)``, capacity ``2 / E[s^{2p}]``,
  asymptotically ``2d``, ``(2/3) d^2``, ``(2/15) d^3``;
- softmax read (Chapter 6, D7): ratio ``sqrt(M) exp(beta^2/d - beta)``,
  capacity ``exp(2 beta (1 - beta/d))``; this Gaussian form holds for ``beta << d``
  only, and :func:`softmax_capacity_exact` uses the exact moment on the sphere.

Chapter 12 collects them in one table (:func:`capacity_table`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .memory import _chunks, random_unit_vectors
from .validation import as_count, as_positive, as_rng, as_vector

__all__ = [
    "unit_dot_moment_exact",
    "unit_dot_moment",
    "hebbian_capacity",
    "hebbian_ratio",
    "least_squares_capacity",
    "least_squares_ratio",
    "relu_power_capacity",
    "relu_power_ratio",
    "softmax_capacity",
    "softmax_ratio",
    "capacity_table",
    "unit_dot_moments_mc",
    "dot_product_variance_mc",
    "score_interference_mc",
    "capacity_mc",
    "softmax_moment_gaussian",
    "softmax_moment_exact",
    "softmax_capacity_exact",
    "softmax_ratio_exact",
    "HOPFIELD_CLASSICAL_LOAD",
    "hopfield_classical_capacity",
]


def _memory_counts(M):
    """``M`` as a float (a single count) or a float array (a grid of counts), all >= 1."""
    if np.ndim(M) == 0:
        return float(as_count(M, "M"))
    counts = as_vector(M, "M")
    if np.any(counts < 1):
        raise ValueError(f"M must hold counts >= 1, got minimum {counts.min()}")
    return counts


def _as_result(value):
    return float(value) if np.ndim(value) == 0 else value


def unit_dot_moment_exact(d, p):
    """Exact moment ``E[s^{2p}]`` of the dot product s of two random unit vectors in R^d.

    Appendix D, D2 (Chapter 5), eq.
    ``E[s^{2p}] = prod_{j<p} (1/2 + j)/(d/2 + j) = 1*3*...*(2p-1) / (d (d+2) ... (d+2p-2))``:
    ``1/d``, ``3/(d(d+2))``, ``15/(d(d+2)(d+4))`` for p = 1, 2, 3. Integers
    ``d >= 1``, ``p >= 0``; returns a ``fractions.Fraction``.
    """
    d = as_count(d, "d")
    p = as_count(p, "p", minimum=0)
    moment = Fraction(1)
    for j in range(p):
        moment *= Fraction(2 * j + 1, d + 2 * j)
    return moment


def unit_dot_moment(d, p):
    """``E[s^{2p}]`` for random unit vectors in R^d, as a float (see :func:`unit_dot_moment_exact`).

    Appendix D, D2, eq. ``E[s^{2p}] = prod_{j<p} (1/2 + j)/(d/2 + j)``.
    """
    return float(unit_dot_moment_exact(d, p))


def hebbian_capacity(d_k):
    """Capacity of the Hebbian (outer-product) store: of order ``d_k``.

    Chapter 3, eq. ratio ``sqrt((M-1)/d_k) = 1`` at ``M = d_k + 1``; the
    monograph's convention quotes this as ``M ~ d_k``, and so does this
    function (returns the int ``d_k``).
    """
    return as_count(d_k, "d_k")


def hebbian_ratio(M, d_k):
    """Predicted interference-to-signal ratio of a Hebbian store of M random pairs.

    Chapter 3 (D1), eq. ``sqrt((M - 1)/d_k)``. ``M`` a count or an array of counts;
    returns a float or an array of the same shape.
    """
    M = _memory_counts(M)
    d_k = as_count(d_k, "d_k")
    return _as_result(np.sqrt((M - 1) / d_k))


def least_squares_capacity(d_k):
    """Capacity of the least-squares store: ``2 d_k``, twice the Hebbian one.

    Chapter 4 (D3), eq. ``sqrt(M/d_k - 1) = 1`` at ``M = 2 d_k``. Returns an int.
    """
    return 2 * as_count(d_k, "d_k")


def least_squares_ratio(M, d_k):
    """Predicted interference-to-signal ratio of a least-squares store of M random pairs.

    Chapter 4 (D3), eq. ``sqrt(M/d_k - 1)`` for ``M >= d_k`` and 0 for ``M <= d_k``
    (the store is exact). ``M`` a count or an array; returns a float or an array.
    """
    M = _memory_counts(M)
    d_k = as_count(d_k, "d_k")
    return _as_result(np.sqrt(np.maximum(M / d_k - 1.0, 0.0)))


def relu_power_capacity(d, p, exact=False):
    """Capacity of a ReLU^p memory in R^d.

    Chapter 5 (D2), eq. ``M = 2 / E[s^{2p}]`` (``exact=True``) or its large-d form
    ``M = 2 d^p / (2p-1)!!`` (default): ``2d``, ``(2/3) d^2``, ``(2/15) d^3`` for
    p = 1, 2, 3. At d = 64, p = 2: 2730.7 (the monograph's 2731) and exact 2816.
    Returns a float.
    """
    d = as_count(d, "d")
    p = as_count(p, "p")
    if exact:
        return 2.0 / unit_dot_moment(d, p)
    return 2.0 * d**p / math.prod(range(1, 2 * p, 2))


def relu_power_ratio(M, d, p):
    """Predicted interference-to-signal ratio of a ReLU^p memory of M random pairs.

    Chapter 5 (D2), eq. ``sqrt((M - 1) E[s^{2p}] / 2)``, with the exact moment
    (the ReLU keeps half of a symmetric ``s``, so ``E[ReLU(s)^{2p}] = E[s^{2p}]/2``).
    ``M`` a count or an array; returns a float or an array.
    """
    M = _memory_counts(M)
    return _as_result(np.sqrt((M - 1) * unit_dot_moment(d, p) / 2.0))


def softmax_capacity(d, beta):
    """Capacity of the softmax (exponential-score) memory in R^d at inverse temperature beta.

    Chapter 6 (D7), eq. ``M = exp(2 beta (1 - beta/d))``; d = 64, beta = 8 gives
    ``e^14 ~ 1.2e6``. Returns a float.

    Range of validity: the formula replaces the similarity ``s`` of two random unit
    vectors by a Gaussian ``N(0, 1/d)``, which is right only while ``beta << d``
    (the tilted law ``e^{2 beta s}`` must stay near 0, where ``|s| <= 1`` does not
    bite). For larger ``beta`` it underestimates: at d = 16, beta = 4 it gives
    ``e^6 ~ 403`` where the exact moment (:func:`softmax_capacity_exact`) gives
    about 483 and the Monte Carlo of :func:`capacity_mc` about 500. Its maximum at
    ``beta = d/2`` and its fall to 1 at ``beta = d`` are artefacts of the
    approximation: with the exact moment the capacity keeps growing with ``beta``.
    """
    d = as_count(d, "d")
    beta = as_positive(beta, "beta", allow_zero=True)
    return math.exp(2.0 * beta * (1.0 - beta / d))


def softmax_ratio(M, d, beta):
    """Predicted interference-to-signal ratio of a softmax memory of M random pairs.

    Chapter 6 (D7), eq. ``sqrt(M) exp(beta^2/d - beta)`` (Gaussian approximation of
    ``s``, valid for ``beta << d``; :func:`softmax_ratio_exact` uses the exact moment).
    ``M`` a count or an array; returns a float or an array.
    """
    M = _memory_counts(M)
    d = as_count(d, "d")
    beta = as_positive(beta, "beta", allow_zero=True)
    return _as_result(np.sqrt(M) * np.exp(beta**2 / d - beta))


def capacity_table(d=64, beta=8):
    """The capacities of Chapter 12's table at dimension d and inverse temperature beta.

    Chapter 12: Hebbian ``d``, least squares ``2d``, ReLU ``2d``, ReLU^2 ``(2/3) d^2``,
    ReLU^3 ``(2/15) d^3`` (asymptotic forms), softmax ``exp(2 beta (1 - beta/d))``.
    At d = 64, beta = 8: 64, 128, 128, 2731, 34953 (rounded) and 1.2e6.
    Returns a dict name -> float, keys ``hebbian``, ``least_squares``, ``relu``,
    ``relu2``, ``relu3``, ``softmax``.
    """
    return {
        "hebbian": float(hebbian_capacity(d)),
        "least_squares": float(least_squares_capacity(d)),
        "relu": relu_power_capacity(d, 1),
        "relu2": relu_power_capacity(d, 2),
        "relu3": relu_power_capacity(d, 3),
        "softmax": softmax_capacity(d, beta),
    }


def _unit_dots(rng, n, d):
    """``n`` dot products of independent pairs of random unit vectors in R^d."""
    keys = random_unit_vectors(2, d, rng, trials=n)
    return np.sum(keys[:, 0] * keys[:, 1], axis=-1)


def unit_dot_moments_mc(d, p_values, n, seed):
    """Monte Carlo estimates of ``E[s^{2p}]`` for the dot product of random unit vectors.

    Chapter 5 / Appendix D (D2 check). ``p_values`` a 1-D sequence of integers >= 0;
    ``n`` independent pairs in R^d, drawn in batches. Returns an array with one
    estimate per p, to compare with :func:`unit_dot_moment`.
    """
    d = as_count(d, "d")
    p = as_vector(p_values, "p_values")
    if np.any(p < 0) or np.any(p != np.round(p)):
        raise ValueError(f"p_values must hold integers >= 0, got {p_values!r}")
    n = as_count(n, "n")
    rng = as_rng(seed)
    total = np.zeros(p.size)
    for size in _chunks(n, 2 * d + p.size):
        s = _unit_dots(rng, size, d)
        total += np.sum(s[:, None] ** (2 * p[None, :]), axis=0)
    return total / n


def dot_product_variance_mc(d_k, n, seed):
    """Monte Carlo variance of ``q^T k`` for independent standard Gaussian q, k in R^{d_k}.

    Chapter 6 (D13), eq. ``Var(q^T k) = d_k`` (the reason for the ``1/sqrt(d_k)``
    scaling); the monograph checks 4000 draws at d_k = 64 to within 10 %.
    Returns the sample variance (float).
    """
    d_k = as_count(d_k, "d_k")
    n = as_count(n, "n", minimum=2)
    pairs = as_rng(seed).standard_normal((n, 2, d_k))
    return float(np.var(np.sum(pairs[:, 0] * pairs[:, 1], axis=-1), ddof=1))


def _check_score(score):
    if not callable(score):
        raise TypeError(f"score must be a callable score function, got {type(score).__name__}")
    signal = float(np.asarray(score(1.0)))
    if signal == 0.0:
        raise ValueError("score must give the target a nonzero weight: score(1.0) is 0")
    return abs(signal)


def _leak(rng, others, query, d_v, score):
    """Weighted values ``score(k_i^T q) v_i`` that leak into the read of ``q``.

    ``others`` (size, n, d) keys, ``query`` (size, d); draws the values (unit, in
    R^{d_v}) and returns an array (size, n, d_v).
    """
    weights = np.asarray(score(np.einsum("tid,td->ti", others, query)), dtype=float)
    values = random_unit_vectors(others.shape[1], d_v, rng, trials=others.shape[0])
    return weights[..., None] * values


def score_interference_mc(M, d, score, trials, seed, d_v=64):
    """Monte Carlo interference-to-signal ratio of a memory read with a score function.

    Chapters 5-6: the query is key 0 (unit), the other ``M - 1`` keys are random
    unit vectors in R^d with similarities ``s_i``, values are random unit vectors in
    R^{d_v}; the ratio is ``||sum_{i>0} sigma(s_i) v_i|| / |sigma(1)|``. For softmax
    pass ``score("exponential", beta=...)``: the normalisation cancels in the ratio.
    ``score`` is a callable acting entrywise. Returns the mean over ``trials``
    (float), computed in batches. Compare with :func:`hebbian_ratio`,
    :func:`relu_power_ratio` and :func:`softmax_ratio` (they predict the root mean
    square, which the mean of the norm sits slightly below).
    """
    M = as_count(M, "M", minimum=2)
    d = as_count(d, "d")
    trials = as_count(trials, "trials")
    d_v = as_count(d_v, "d_v")
    signal = _check_score(score)
    rng = as_rng(seed)
    total = 0.0
    for size in _chunks(trials, M * (d + 2 * d_v + 1)):
        keys = random_unit_vectors(M, d, rng, trials=size)
        interference = _leak(rng, keys[:, 1:], keys[:, 0], d_v, score).sum(axis=1)
        total += np.linalg.norm(interference, axis=-1).sum()
    return total / (trials * signal)


def capacity_mc(d, score, trials=64, seed=0, d_v=32, max_M=2**20):
    """Monte Carlo capacity: the smallest M whose measured mean ratio reaches 1.

    Chapters 3-6 (the convention of Chapter 3, measured instead of derived). Each
    trial fixes a unit query and adds random memories block after block (blocks
    doubling from 64), keeping the running sum ``sum_{i<M} sigma(s_i) v_i``; the
    ratio ``||running sum|| / |sigma(1)|``, averaged over trials, is read for every
    M at once, and the first M where it reaches 1 is returned (an int). The same
    draws serve every M, so the curve is smooth in M. ``score`` is a callable.
    Because the mean of a norm sits below its root mean square, the estimate is a
    few percent above the closed forms for small d (e.g. ReLU at d = 16: about 35
    against 2d = 32). Raises ``ValueError`` if the ratio stays below 1 up to ``max_M``.
    """
    d = as_count(d, "d")
    trials = as_count(trials, "trials")
    d_v = as_count(d_v, "d_v")
    max_M = as_count(max_M, "max_M", minimum=2)
    signal = _check_score(score)
    rng = as_rng(seed)
    queries = random_unit_vectors(1, d, rng, trials=trials)[:, 0]
    sums = np.zeros((trials, d_v))
    stored = 1  # the target itself
    block = 64
    while stored < max_M:
        block = min(block, max_M - stored)
        curve = np.zeros(block)
        start = 0
        for size in _chunks(trials, block * (d + 3 * d_v + 1)):
            rows = slice(start, start + size)
            others = random_unit_vectors(block, d, rng, trials=size)
            running = np.cumsum(_leak(rng, others, queries[rows], d_v, score), axis=1)
            running += sums[rows, None, :]
            curve += np.linalg.norm(running, axis=-1).sum(axis=0)
            sums[rows] = running[:, -1]
            start += size
        crossed = np.nonzero(curve / (trials * signal) >= 1.0)[0]
        if crossed.size:
            return stored + int(crossed[0]) + 1
        stored += block
        block = stored - 1
    raise ValueError(f"the ratio stays below 1 up to max_M = {max_M}; raise max_M")


def softmax_moment_gaussian(d, beta):
    """``E[e^{2 beta s}]`` with ``s ~ N(0, 1/d)``: the Gaussian approximation of D7.

    Chapter 6 (D7), eq. ``E[e^{2 beta s}] = e^{2 beta^2 / d}``. Integer ``d >= 1``,
    ``beta >= 0``; returns a float. Valid for ``beta << d`` only (see
    :func:`softmax_moment_exact`).
    """
    d = as_count(d, "d")
    beta = as_positive(beta, "beta", allow_zero=True)
    return math.exp(2.0 * beta * beta / d)


def _log_moment_exact(d, beta):
    """``log E[e^{2 beta s}]`` for s the dot product of two random unit vectors in R^d."""
    # E[e^{t s}] = 0F1(; d/2; t^2/4) = sum_n (t^2/4)^n / (n! (d/2)_n) with t = 2 beta;
    # every term is positive, so the sum is taken in log space (no overflow for large beta)
    if beta == 0.0:
        return 0.0
    terms = int(4 * beta + 60)
    n = np.arange(terms, dtype=float)
    log_terms = (2.0 * n * math.log(beta)
                 - np.array([math.lgamma(k + 1.0) + math.lgamma(d / 2.0 + k) for k in n])
                 + math.lgamma(d / 2.0))
    top = log_terms.max()
    return float(top + math.log(np.exp(log_terms - top).sum()))


def softmax_moment_exact(d, beta):
    """Exact ``E[e^{2 beta s}]`` for the dot product s of two random unit vectors in R^d.

    Chapter 6 (range of validity of D7). The law of ``s`` on the sphere has density
    proportional to ``(1 - s^2)^{(d-3)/2}`` on ``[-1, 1]``, and its exponential moment
    is the series ``sum_n beta^{2n} / (n! (d/2)(d/2 + 1)...(d/2 + n - 1))``, whose
    terms use the even moments ``E[s^{2n}]`` of D2. For ``beta << d`` it is close to
    the Gaussian ``e^{2 beta^2/d}``; for larger ``beta`` it is much smaller, because
    ``s <= 1`` (d = 64, beta = 8: 6.98 against 7.39). Integer ``d >= 2``, ``beta >= 0``;
    returns a float (``inf`` if it overflows a float).
    """
    d = as_count(d, "d", minimum=2)
    beta = as_positive(beta, "beta", allow_zero=True)
    log_value = _log_moment_exact(d, beta)
    return math.exp(log_value) if log_value < 709.0 else math.inf


def softmax_capacity_exact(d, beta):
    """Capacity of the softmax memory with the exact moment on the sphere.

    Chapter 6 (D7 without the Gaussian approximation), eq.
    ``(M - 1) E[e^{2 beta s}] e^{-2 beta} = 1``, i.e.
    ``M = 1 + e^{2 beta} / E[e^{2 beta s}]`` with :func:`softmax_moment_exact`.
    It agrees with :func:`softmax_capacity` for ``beta << d`` and keeps growing with
    ``beta`` where the Gaussian form turns down (d = 16: 483 at beta = 4 against 403;
    about 2.4e5 at beta = 12 against 403). Integer ``d >= 2``, ``beta >= 0``;
    returns a float.
    """
    d = as_count(d, "d", minimum=2)
    beta = as_positive(beta, "beta", allow_zero=True)
    log_ratio = 2.0 * beta - _log_moment_exact(d, beta)
    return 1.0 + (math.exp(log_ratio) if log_ratio < 709.0 else math.inf)


def softmax_ratio_exact(M, d, beta):
    """Interference-to-signal ratio of a softmax memory of M random pairs, exact moment.

    Chapter 6 (D7 without the Gaussian approximation), eq.
    ``sqrt((M - 1) E[e^{2 beta s}]) e^{-beta}`` (root mean square). ``M`` a count
    or an array of counts; returns a float or an array of the same shape.
    """
    M = _memory_counts(M)
    d = as_count(d, "d", minimum=2)
    beta = as_positive(beta, "beta", allow_zero=True)
    log_moment = _log_moment_exact(d, beta)
    return _as_result(np.sqrt(M - 1) * math.exp(0.5 * log_moment - beta))


#: Load ``P / N`` at which the classical (binary, Hebbian) Hopfield network stops
#: retrieving its patterns: Amit, Gutfreund and Sompolinsky (1985), cited in Chapter 6.
HOPFIELD_CLASSICAL_LOAD = 0.138


def hopfield_classical_capacity(N):
    """Number of random patterns a classical Hopfield network of N units retrieves.

    Chapter 6 (cited, Amit, Gutfreund and Sompolinsky 1985): ``P ~ 0.138 N``, linear
    in the number of units, against the modern (exponential) network of D8.
    Integer ``N >= 1``; returns a float.
    """
    return HOPFIELD_CLASSICAL_LOAD * as_count(N, "N")


def softmax_beta_for(M, d):
    """Smallest inverse temperature at which the D7 formula holds M pairs in R^d.

    Chapter 6 (the length scaling of ``beta``), eq. ``beta - beta^2/d = (1/2) ln M``,
    i.e. ``beta = (d/2) (1 - sqrt(1 - 2 ln M / d))``, which is close to
    ``(1/2) ln M`` while ``ln M << d``: ``beta`` has to grow with the log of the
    number of stored pairs. ``M >= 1`` a count, integer ``d >= 1`` with
    ``ln M <= d/2`` (beyond that the Gaussian formula, whose peak is ``e^{d/2}`` at
    ``beta = d/2``, never reaches M). Returns a float.
    """
    M = as_count(M, "M")
    d = as_count(d, "d")
    half_log = 0.5 * math.log(M)
    if 2.0 * half_log > d / 2.0:
        raise ValueError(f"M must satisfy ln M <= d/2 = {d / 2:g} for the D7 formula, got ln M = "
                         f"{2 * half_log:.3g}")
    return 0.5 * d * (1.0 - math.sqrt(1.0 - 4.0 * half_log / d))
