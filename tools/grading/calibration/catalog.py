"""What calibration asks of each question: its slips, the questions common to everyone, and
the failures known and explained. One place: the instructor's guide's table of the questions
that vary (docs/instructor.md, "Each student's own numbers") is ``varied_table()`` of it.

**Slips** are the wrong answers a student plausibly hands in. Every question gets the
generic ones (``generic``): the answers of another id and of the default id ``self-study``
(copied work, or a notebook run without setting one's id), half of each number it asks for
(a missed factor, such as the ReLU's 1/2), one more for each whole number it asks for
(``M`` for ``M - 1``), the next letter for each letter, and a function whose results are
halved. ``SLIPS`` adds each question's own: the theory value handed in as the measurement,
the number the book prints, a formula with a factor missed. A slip is an expression per
answer name, evaluated where the test runs, with the honest answers bound.

A slip must be rejected for at least ``SLIP_LIMIT`` of the ids it changes the answer of,
unless ``EXPLAINED`` (or ``explained``) says why it cannot be. A failure calibration finds
and that the course knows of (a false reject, a slip accepted, a key shared) is ``KNOWN``,
with its reason, until the question is mended: the report lists it, and the test suite fails
on any failure not listed here.

Stage: none (the calibration).
"""

from __future__ import annotations

from dataclasses import dataclass

SLIP_LIMIT = 0.99  # a slip is rejected for at least this share of ids
SURE = 100  # from this many ids a slip's observed share is held to SLIP_LIMIT; below, only
UNLIKELY = 1e-3  # acceptances this unlikely for a slip accepted for 1 % of all ids fail
HONEST_PER_MC = 2000  # honest answers per Monte Carlo question in the full run
LETTERS = set("abcdefghijklmnopqrstuvwxyz")
LARGE = 10_000  # a whole number from here is checked to a relative tolerance: no "one more"
NEAR_ZERO = 1e-6  # a gap at rounding level: halving it is no slip

FUNCTION = "a function the student writes: tested on the same inputs for everyone, right or wrong whoever runs it"

# The graded questions common to everyone, and why (every other graded question draws its
# numbers or its options per student: memkit.variants.Numbers.varied)
COMMON: dict[str, dict[str, str]] = {
    "session-1/exercises": {"q5": FUNCTION},
    "session-3/exercises": {"q3": FUNCTION},
    "session-3/exit-test": {"q2": FUNCTION},
    "session-4/exercises": {"q3": FUNCTION},
    "session-5/exit-test": {"q1": FUNCTION},
    "session-6/exercises": {"q1": FUNCTION},
    "session-6/exit-test": {
        "q1": FUNCTION, "q2": FUNCTION,
        "q3": "the mistake in a classmate's fixed code: the point is one fixed fact",
    },
    "session-7/exit-test": {"q1": FUNCTION, "q3": FUNCTION},
    "session-8/exit-test": {
        "q1": FUNCTION, "q3": FUNCTION, "q8": FUNCTION,
        "q5": "the table of Chapter 12's layers: the point is one fixed fact",
    },
    "session-9/exit-test": {"q1": "the four questions of Chapter 15: the point is one fixed fact"},
}


@dataclass(frozen=True)
class Slip:
    """A wrong answer: ``changes`` maps answer names to Python expressions, evaluated in the
    test's namespace with the honest answers bound."""

    label: str
    changes: tuple[tuple[str, str], ...]


def slip(label: str, **changes: str) -> Slip:
    return Slip(label, tuple(sorted(changes.items())))


THEORY = "the theory value handed in as the measurement"
BOOK = "the number the book prints that the key prints as"  # tried for every single-number answer

# Each question's own slips, by notebook and question
SLIPS: dict[str, dict[str, list[Slip]]] = {
    "session-2/exercises": {
        "q1": [slip(THEORY, measured="predicted"),
               slip("the book's dimensions (4, 16, 64)", measured="1 / np.array([4.0, 16.0, 64.0])")],
        "q2": [slip(THEORY, measured="predicted"),
               slip("M for M - 1", predicted="np.sqrt(Ms2 / d_k2)")],
    },
    "session-2/exit-test": {
        "q3": [slip("M for M - 1", predicted_3="float(np.sqrt(M3 / d_k3))")],
    },
    "session-3/exercises": {
        "q1": [slip(THEORY, hebbian_measured="hebbian_predicted", ls_measured="ls_predicted"),
               slip("the least-squares measurement alone as its theory", ls_measured="ls_predicted"),
               slip("M for M - 1", hebbian_predicted="float(np.sqrt(M1 / d_k1))"),
               slip("the book's store (d_k = 16, M = 32)",
                    hebbian_predicted="float(np.sqrt(31 / 16))", ls_predicted="1.0")],
    },
    "session-4/exercises": {
        "q2": [slip(THEORY, mc_moments="exact_moments"),
               slip("the Gaussian moments 1/d, 3/d^2, 15/d^3",
                    exact_moments="np.array([1, 3, 15]) / d_moments ** np.array([1, 2, 3])")],
        "q5": [slip(THEORY, measured="predicted"),
               slip("the ReLU's 1/2 missed", predicted="predicted * np.sqrt(2)")],
    },
    "session-4/exit-test": {
        "q2": [slip(THEORY, m4_mc="m4"),
               slip("the Gaussian E[s^4] = 3/d^2 as the measurement", m4_mc="3 / d2 ** 2")],
    },
    "session-5/exercises": {
        "q4": [slip("D7's Gaussian ratio as the measurement",
                    mc_ratio="float(np.sqrt((M4 - 1) * np.exp(2 * beta_mc4 ** 2 / d4 - 2 * beta_mc4)))")],
        "q6": [slip(THEORY, var_ratio_sign="1.0")],
    },
    "session-5/exit-test": {
        "q6": [slip("the Gaussian moment as the measurement", moment_mc="moment_gauss")],
    },
    "session-9/exercises": {
        "q1": [slip(THEORY, ratios_hebbian="np.sqrt((np.array(M_GRID) - 1) / d_k1)"),
               slip("M for M - 1", ratios_hebbian="np.sqrt(np.array(M_GRID) / d_k1)")],
        "q2": [slip("the exact form as the measurement", relu2_measured_d2="relu2_exact_d2"),
               slip("the large-d form as the measurement", relu2_measured_d2="relu2_asymptotic_d2")],
    },
}

# Answers the student chooses freely (a sample size, a seed): not keys, and no slip of theirs
FREE: dict[tuple[str, str], set[str]] = {
    ("session-4/exercises", "q2"): {"n_pairs"},
    ("session-9/exercises", "q1"): {"trials_q1", "seed_q1"},
    ("session-9/exercises", "q2"): {"trials_q2", "seed_q2"},
}

# Questions whose lists of names are in an order the question asks for (no honest answer
# in the other order), by notebook
ORDERED: dict[str, set[str]] = {
    "session-5/exercises": {"q5"},  # the kinds of fixed point for beta = 0.5, 6, 40, in that order
    "session-9/exit-test": {"q1"},  # Chapter 15's four questions in the course's order
}

# Slips that cannot be rejected for 99 % of ids, and why: {(notebook, question, label): why}
EXPLAINED: dict[tuple[str, str, str], str] = {
    ("session-6/exercises", "q2", "bias_mean: halved (a factor missed)"):
        "a measured gap to zero, bounded above only: half of an honest gap is a gap an honest run gives",
    ("session-8/exercises", "q6", "W_new: halved (a factor missed)"):
        "W_new is graded through hit_gap, computed from it: a halved W_new hands in a hit_gap that fails",
}

# Failures calibration finds in today's questions, until they are mended:
# {(notebook, question): {kind: why}}, the kind "honest" (false rejects), "shared" (one key
# for most ids) or a slip's label (run.BOOK: a key the book prints)
KNOWN: dict[tuple[str, str], dict[str, str]] = {
    ('session-3/exercises', 'q2'): {
        "the default id's answers":
            "two ids' answers are the same for 19 of 200 ids: few values drawn",
        "another id's answers":
            "two ids' answers are the same for 15 of 192 ids: few values drawn",
    },
    ('session-5/exercises', 'q2'): {
        "the default id's answers":
            "two ids' answers are the same for 10 of 195 ids: few values drawn",
        "another id's answers":
            "two ids' answers are the same for 7 of 189 ids: few values drawn",
    },
    ('session-6/exercises', 'q2'): {
        "the default id's answers":
            "two ids' answers are the same for 4 of 200 ids: few values drawn",
    },
    ('session-7/exercises', 'q1'): {
        "another id's answers":
            "two ids' answers are the same for 8 of 191 ids: few values drawn (a feature count for d_k = 3 or 5)",
    },
    ('session-9/exit-test', 'q5'): {
        BOOK:
            'for 4 of 200 ids a ratio prints at 4 digits as a number the book prints (1.299, 1.852, 1.3919); '
            'M - 1 = 2 d_k or 3 d_k and M = 3 d_k or 4 d_k (sqrt(2), sqrt(3)) are avoided',
    },
    ('session-9/exit-test', 'q6'): {
        'shared':
            'rank_bound_ex2 = min(r6, m6, n6) takes a few values only (in a small sample one key may be most ids\')',
    },
}


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    import math

    return sum(math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(k, n + 1))


def explained(notebook: str, question: str, label: str, changed: set[str], letters: bool) -> str:
    """Why a slip may be accepted for more than 1 % of ids ('' when it may not): listed in
    ``EXPLAINED``; or another id's answers where every answer that differs is a letter (the key
    of a multiple-choice question: one id in k shares its letter, by design)."""
    if (notebook, question, label) in EXPLAINED:
        return EXPLAINED[(notebook, question, label)]
    if label in ("another id's answers", "the default id's answers") and changed and letters:
        return "only letters differ: one id in k (k options) shares the key's letter"
    return ""


def generic(answers: dict, own: set[str]) -> list[Slip]:
    """The generic slips of a question whose honest answers are ``answers`` (``own``: the
    names its answer cell binds; another id's answers are made by the runner)."""
    import numpy as np

    found = []
    for name in sorted(own & set(answers)):
        value = answers[name]
        if callable(value) and not isinstance(value, type):
            found.append(slip(f"{name}: its results halved", **{name: f"_halved({name})"}))
        elif isinstance(value, str):
            if value.strip().lower() in LETTERS and len(value.strip()) == 1:
                found.append(slip(f"{name}: the next letter", **{name: f"_next_letter({name})"}))
        elif isinstance(value, (bool, np.bool_)):
            found.append(slip(f"{name}: the other truth value", **{name: f"not {name}"}))
        elif isinstance(value, (int, np.integer)):
            if abs(int(value)) < LARGE:
                found.append(slip(f"{name}: one more (M for M - 1)", **{name: f"{name} + 1"}))
        elif isinstance(value, (float, np.floating, np.ndarray, list, tuple)) and _numeric(value) \
                and np.max(np.abs(np.asarray(value, dtype=float))) > NEAR_ZERO:
            found.append(slip(f"{name}: halved (a factor missed)", **{name: f"0.5 * np.asarray({name}, dtype=float)"}))
    return found


def _numeric(value) -> bool:
    import numpy as np

    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return array.size > 0 and bool(np.all(np.isfinite(array)))


def helpers() -> dict:
    """The functions the generic slips' expressions call."""
    import numpy as np

    def halve(x):
        if isinstance(x, tuple):
            return tuple(halve(v) for v in x)
        if isinstance(x, list):
            return [halve(v) for v in x]
        if isinstance(x, dict):
            return {k: halve(v) for k, v in x.items()}
        try:
            return 0.5 * np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            return x

    def _halved(fn):
        return lambda *args, **kwargs: halve(fn(*args, **kwargs))

    def _next_letter(letter):
        text = letter.strip()
        base = "A" if text.isupper() else "a"
        return chr(ord(base) + (ord(text.lower()) - ord("a") + 1) % 4)

    return {"_halved": _halved, "_next_letter": _next_letter}


def varied_table(questions: dict[str, list[str]]) -> str:
    """The instructor's guide's table of the questions that vary (``questions``: every graded
    question of each notebook, ``"session-N/exit-test"`` -> ``["q1", ...]``): all but
    ``COMMON``'s."""
    def cell(notebook: str) -> str:
        common = COMMON.get(notebook, {})
        return ", ".join(q[1:] for q in questions.get(notebook, []) if q not in common)

    sessions = sorted({int(n.split("/")[0].split("-")[1]) for n in questions})
    lines = ["| session | exit test | exercises |", "| --- | --- | --- |"]
    lines += [f"| {s} | {cell(f'session-{s}/exit-test')} | {cell(f'session-{s}/exercises')} |"
              for s in sessions]
    return "\n".join(lines)
