"""Calibration of the questions of one notebook, over a sample of student ids.

``calibrate(path, ids, seeds, band_ids, printed)`` gives a ``Result`` per graded question:

- honest answers (``engine.honest``) for every id, ``seeds`` of them per id for a Monte Carlo
  answer (its solution's seed and ``seeds - 1`` of the id's own), one more in the other order
  of an answer whose order is free, and how many the test rejected;
- each slip (``catalog``): the ids it changed the answer of, and how many the test accepted
  (``BOOK``: a single-number key that prints as a number the book prints, ``book.Printed``,
  handed in as the book prints it)
- the keys (the reference answers) across the ids: how many distinct, the largest number of
  ids sharing one;
- for each measured answer of a Monte Carlo question, for the ids of ``band_ids``, the
  band of factors of the reference value the test accepts (``engine.band``) and the honest
  answers relative to the reference, with the test's assertions on it (``engine.assertions_on``).

Stage: none (the calibration).
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memkit.variants import DEFAULT_ID
from tools.common import student_run
from tools.grading import hidden
from tools.grading.calibration import catalog, engine
from tools.grading.calibration.book import Printed


@dataclass
class SlipResult:
    label: str
    tried: int = 0  # ids whose answer the slip changed
    accepted: int = 0  # of those, the ids the test accepted it for
    example: str = ""  # the first id it was accepted for
    why: str = ""  # the explanation, when one applies

    @property
    def rate(self) -> float:
        return self.accepted / self.tried if self.tried else 0.0

    @property
    def failed(self) -> bool:
        """Accepted for more than 1 % of the ids tried, unexplained; in a sample under
        ``catalog.SURE`` ids, only when so many acceptances are unlikely (``catalog.UNLIKELY``)
        for a slip accepted for 1 % of all ids."""
        if not self.tried or self.rate <= 1 - catalog.SLIP_LIMIT or self.why:
            return False
        return self.tried >= catalog.SURE or catalog.binomial_tail(
            self.accepted, self.tried, 1 - catalog.SLIP_LIMIT) < catalog.UNLIKELY


BOOK = catalog.BOOK
SUMMARY = 20  # a measured answer of at most this many numbers is plotted (not the draws)


@dataclass
class Band:
    """The accepted band of one measured answer, and its honest answers, relative to the
    reference answer of each id."""

    name: str
    low: list[float] = field(default_factory=list)  # accepted factors, one per id probed
    high: list[float] = field(default_factory=list)
    relative: list[float] = field(default_factory=list)  # honest values / reference value
    spread: list[float] = field(default_factory=list)  # the same less the id's mean
    rule: str = ""  # the test's assertions on it

    def sd(self) -> float:
        return float(np.std(self.spread, ddof=1)) if len(self.spread) > 1 else float("nan")

    def sigmas(self) -> tuple[float, float]:
        """The band's median edges, below and above the reference, in honest standard
        deviations."""
        sd = self.sd()
        if not self.low or not sd > 0:
            return float("nan"), float("nan")
        return (1 - float(np.median(self.low))) / sd, (float(np.median(self.high)) - 1) / sd


@dataclass
class Result:
    notebook: str
    question: str
    kind: str  # "Monte Carlo", "exact", "function"
    ids: int = 0
    honest: int = 0
    false_rejects: int = 0
    rejects: list[str] = field(default_factory=list)  # a few: "id seed k: message"
    slips: dict[str, SlipResult] = field(default_factory=dict)
    keys: collections.Counter = field(default_factory=collections.Counter)  # key -> ids
    seconds: float = 0.0  # the time spent on it
    common: str = ""  # why the question is common to everyone ('' if it varies)
    book_hits: list[str] = field(default_factory=list)  # "id: name = number"
    bands: dict[str, Band] = field(default_factory=dict)
    known: dict = field(default_factory=dict)  # the failures catalog.KNOWN lists: {kind: why}
    problem: str = ""  # the notebook's set-up failed

    @property
    def distinct_keys(self) -> int:
        return len(self.keys)

    @property
    def largest_share(self) -> int:
        """The most ids sharing one key."""
        return max(self.keys.values(), default=0)

    def merge(self, other: "Result") -> None:
        """Add ``other``'s counts (the same question, other ids) to these."""
        self.ids += other.ids
        self.honest += other.honest
        self.false_rejects += other.false_rejects
        self.rejects = (self.rejects + other.rejects)[:5]
        for label, theirs in other.slips.items():
            mine = self.slips.setdefault(label, SlipResult(label))
            mine.tried += theirs.tried
            mine.accepted += theirs.accepted
            mine.example = mine.example or theirs.example
            mine.why = mine.why or theirs.why
        self.keys.update(other.keys)
        self.seconds += other.seconds
        self.book_hits += other.book_hits
        self.problem = self.problem or other.problem
        for name, theirs in other.bands.items():
            mine = self.bands.setdefault(name, Band(name, rule=theirs.rule))
            for part in ("low", "high", "relative", "spread"):
                getattr(mine, part).extend(getattr(theirs, part))

    def failures(self) -> list[tuple[str, str]]:
        """What calibration finds wrong with the question: (kind, what), the kind ``honest``,
        ``shared``, ``problem`` or a slip's label (empty: nothing)."""
        found = [("problem", self.problem)] if self.problem else []
        if self.false_rejects:
            found.append(("honest", f"{self.false_rejects} of {self.honest} honest answers rejected"))
        found += [(s.label, f"slip accepted for {s.accepted} of {s.tried} ids: {s.label}")
                  for s in self.slips.values() if s.failed]
        if not self.common and self.ids > 1 and self.largest_share > max(1, self.ids // 2):
            found.append(("shared", f"one key shared by {self.largest_share} of {self.ids} ids, not listed as common"))
        return found

    def unlisted(self) -> list[str]:
        """The failures ``catalog.KNOWN`` does not list for the question."""
        return [what for kind, what in self.failures() if kind not in self.known]


def _kind(question: engine.Question) -> str:
    if question.seeded:
        return "Monte Carlo"
    return "function" if question.functions and not _own(question) else "exact"


def _own(question: engine.Question) -> list[str]:
    """The answer names of a question that its own answer cell binds (its free choices,
    ``catalog.FREE``, left out)."""
    bound = hidden.names_bound(hidden.solution_text({"source": question.answer}))
    free = catalog.FREE.get((question.notebook, question.name), set())
    return [n for n in question.names + question.functions if n in bound and n not in free]


def _measured(question: engine.Question, honest: list) -> list[str]:
    """The measured answers of a Monte Carlo question: its own numbers that another seed
    changes (``honest``: one id's honest answers, the solution's seed first)."""
    if len(honest) < 2 or honest[0] is None or honest[1] is None:
        return []
    first, second = honest[0], honest[1]
    return [n for n in _own(question) if n in first and n in second and n in question.names
            and catalog._numeric(first[n]) and engine.key_of({n: first[n]}) != engine.key_of({n: second[n]})]


def _apply(changes, solved: engine.Solved, question: engine.Question, answers: dict) -> dict:
    ns = {**solved.before_test[question.name], **answers, **catalog.helpers()}
    return {**answers, **{name: eval(expr, ns) for name, expr in changes}}  # noqa: S307 - our catalog


def calibrate(path: Path, ids: list[str], seeds: int, band_ids: set[str], printed: Printed) -> list[Result]:
    """Every graded question of the notebook at ``path``, over ``ids`` (``seeds`` honest
    answers per id for a Monte Carlo question; the bands of its measured answers probed
    for the ids of ``band_ids``). One id's run is held at a time (with the answers of the
    one before it, and of the default id)."""
    nb = engine.Notebook.read(path)
    folder = Path(path).parent
    results = {qid: Result(nb.name, qid, _kind(q), common=catalog.COMMON.get(nb.name, {}).get(qid, ""),
                           known=catalog.KNOWN.get((nb.name, qid), {}))
               for qid, q in nb.questions.items()}
    with student_run.as_student(DEFAULT_ID, folder):
        default = engine.solve(nb, DEFAULT_ID).answers
    before: dict | None = None
    for student in ids:
        with student_run.as_student(student, folder):
            solved = engine.solve(nb, student)
            for qid, question in nb.questions.items():
                start, result = time.perf_counter(), results[qid]
                result.ids += 1
                if solved.problem:
                    result.problem = solved.problem
                    continue
                honest = _honest(result, question, solved, seeds if question.seeded else 1)
                theirs = {"another id's answers": None if before is None else before.get(qid, {}),
                          "the default id's answers": default.get(qid, {})}
                _slips(result, question, solved, theirs)
                record_key(result, question, solved, printed)
                if question.seeded and student in band_ids:
                    _bands(result, question, solved, honest)
                result.seconds += time.perf_counter() - start
        before = solved.answers
    return list(results.values())


def _honest(result: Result, question, solved: engine.Solved, seeds: int) -> list:
    """Judge one id's honest answers; return them (the solution's seed first)."""
    found = []
    for k in range(seeds):
        answers = engine.honest(question, solved, k)
        found.append(answers)
        result.honest += 1
        message = "the reference method raised" if answers is None else engine.judge(question, solved, answers)
        if message:
            result.false_rejects += 1
            if len(result.rejects) < 5:
                result.rejects.append(f"{solved.student} seed {k}: {message}")
    # the other order of an unordered answer (a dict's items, a set of names as a list)
    flipped = engine.reordered(found[0]) if found[0] is not None else None
    if flipped is not None and question.name not in catalog.ORDERED.get(question.notebook, set()):
        result.honest += 1
        message = engine.judge(question, solved, flipped)
        if message:
            result.false_rejects += 1
            if len(result.rejects) < 5:
                result.rejects.append(f"{solved.student} the other order: {message}")
    return found


def _slips(result: Result, question, solved: engine.Solved, theirs: dict) -> None:
    """Judge one id's slips: ``theirs``, other ids' answers by label, then the catalog's."""
    own = set(_own(question))
    answers = solved.answers.get(question.name, {})
    honest_key = engine.key_of(answers)
    # other ids' answers, their functions the same (a function is right whoever runs it)
    tries = [(label, None if other is None else {**other, **{n: answers[n] for n in other
                                                               if callable(other[n]) and n in answers}})
             for label, other in theirs.items()]
    for each in catalog.generic(answers, own) + catalog.SLIPS.get(question.notebook, {}).get(question.name, []):
        try:
            tries.append((each.label, _apply(each.changes, solved, question, answers)))
        except Exception:  # noqa: BLE001 - a slip that cannot be made for this id
            continue
    for label, values in tries:
        if values is None or engine.key_of(values) == honest_key and not _functions_differ(values, answers):
            continue
        found = result.slips.setdefault(label, SlipResult(label))
        found.tried += 1
        if not engine.judge(question, solved, values):
            found.accepted += 1
            found.example = found.example or solved.student
            changed = {n for n in values if engine.key_of({n: values[n]}) != engine.key_of({n: answers.get(n)})}
            letters = all(isinstance(values[n], str) and len(values[n].strip()) == 1 for n in changed)
            found.why = catalog.explained(question.notebook, question.name, label, changed, letters)


def _functions_differ(values: dict, answers: dict) -> bool:
    return any(callable(v) and v is not answers.get(n) for n, v in values.items())


def record_key(result: Result, question, solved: engine.Solved, printed: Printed) -> None:
    """Count one id's key (its free choices left out) and, for a question that varies, try the
    slip ``BOOK``: a single-number answer that prints as a number of the book, handed in as
    the book prints it; accepted when the test passes it."""
    answers = solved.answers.get(question.name, {})
    free = catalog.FREE.get((question.notebook, question.name), set())
    result.keys[engine.key_of({n: v for n, v in answers.items() if n not in free})] += 1
    if result.common:
        return
    # a single number a student could copy from the book: the slip "the number the book prints",
    # handed in as the book prints it and graded
    single = [n for n in _own(question) if n in answers and not isinstance(answers[n], dict)
              and len(engine.numbers_in(answers[n])) == 1]
    if not single:
        return
    found = result.slips.setdefault(BOOK, SlipResult(BOOK))
    found.tried += 1
    for name in single:
        value = engine.numbers_in(answers[name])[0]
        hit = printed.match(value)
        if hit and not engine.judge(question, solved, {**answers, name: _as_answer(answers[name], hit, value)}):
            found.accepted += 1
            found.example = found.example or solved.student
            result.book_hits.append(f"{solved.student}: {name} = {hit}")
            break


def _as_answer(answer, printed: str, value: float):
    """The book's number ``printed`` (as the book shows it, no sign) in the form of ``answer``
    (a number, or an array or list holding one), with the sign of ``value``."""
    number = float(printed) * (-1.0 if value < 0 else 1.0)
    if isinstance(answer, (bool, np.bool_)):
        return answer
    if isinstance(answer, (int, np.integer)):
        return int(number)
    if isinstance(answer, np.ndarray):
        return np.full(answer.shape, number)
    if isinstance(answer, (list, tuple)):
        return type(answer)(_as_answer(a, printed, value) if engine.numbers_in(a) else a for a in answer)
    return number


def _bands(result: Result, question, solved: engine.Solved, honest: list) -> None:
    names = _measured(question, honest)
    if not names:
        return
    label = ", ".join(names)
    rule = "; ".join(dict.fromkeys(a for n in names for a in engine.assertions_on(question, n)))
    found = result.bands.setdefault(label, Band(label, rule=rule))
    edges = engine.band(question, solved, names)
    if edges is None:
        return
    found.low.append(edges[0])
    found.high.append(edges[1])
    # the honest answers relative to the reference, the summaries only (not the draws)
    reference = solved.answers[question.name]
    for name in [n for n in names if np.size(reference[n]) <= SUMMARY]:
        base = np.asarray(reference[name], dtype=float).ravel()
        keep = np.abs(base) > 1e-6 * np.max(np.abs(base))  # not the zeros of an exact recall
        rel = [np.asarray(a[name], dtype=float).ravel() for a in honest if a is not None]
        rel = [r[keep] / base[keep] for r in rel if r.shape == base.shape]
        if len(rel) > 1:
            stack = np.array(rel)
            found.relative += stack.ravel().tolist()
            found.spread += (stack - stack.mean(axis=0)).ravel().tolist()
