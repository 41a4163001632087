"""Each student's own numbers: the parameters of an assignment drawn from the student's id.

Every number an assignment asks for is computed by code, so every student can be asked it
for numbers of their own: the set-up cell of an exit test draws the data of its
questions with a ``Numbers`` for the notebook and prints them ("your numbers"), and the
multiple-choice questions show their options in an order, with letters, of the student's
own (``Numbers.options``). Sharing ``q3 = 1e8`` then gives a classmate nothing: the grader
checks each submission against the numbers of the id it knows.

A draw depends on the course (``COURSE``), the notebook (``"session-2/exit-test"``), the
question (``"q3"``), the name of the parameter and the student id, and on nothing else:
``uniform`` hashes them with SHA-256, so the student's kernel, the grader's own check and
the instructor's solution notebook draw the same value on any machine, in any order, with
any version of Python or numpy. (Arrays are drawn by numpy from an integer ``seed`` made
the same way; memkit's seeded functions already rely on numpy's generator staying the same.)

The student id (``student``) is the first found of

1. ``MEMCOURSE_STUDENT_ID``: set by the grader for each submission (nbgrader's student id,
   the folder name under ``submitted/``), in the sandboxed kernel and in its own check;
2. ``JUPYTERHUB_USER``: the hub user on the course's JupyterHub, which is the student id
   nbgrader's exchange files the submission under;
3. the id file (``id_file``: ``~/.config/memcourse/student-id``), written once by
   ``make check ID=alice`` (``tools.lab.notebook_check``) for self-study;
4. ``DEFAULT_ID``, ``"self-study"``.

A student who sets another id gets another student's questions: the grader grades a
submission against the id it files it under, whatever the kernel drew.

**The class's seats.** A student on the instructor's class list (``memkit.class_list``) has
a seat there, ``MEMCOURSE_SEAT`` (1, 2, ...: set by the hub for its user and by the grader
for each submission). With a seat, the order of a question's options is a row of a Latin
square the class shares: each block of ``k`` seats (``k`` options) sees every option under
every letter once, so across the seats 1 to ``n`` no letter is the key of a question for
more than ``ceil(n / k)`` students (never more than half of a class of two or more, but for
an odd class and two options), and two students of one block never share a key's letter.
Without a seat (self-study, or a student the list does not hold) each student's order is a
shuffle of their own, drawn from the id.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

import numpy as np

__all__ = [
    "COURSE",
    "DEFAULT_ID",
    "ENV",
    "STUDENT_ID",
    "Numbers",
    "Options",
    "SEAT_ENV",
    "checked_id",
    "checked_seat",
    "class_seat",
    "id_file",
    "set_student",
    "forget_student",
    "student",
    "uniform",
]

COURSE = "memcourse"  # nbgrader's course id (nbgrader_config.py)
DEFAULT_ID = "self-study"
ENV = "MEMCOURSE_STUDENT_ID"
HUB_ENV = "JUPYTERHUB_USER"
SEAT_ENV = "MEMCOURSE_SEAT"
MAX_SEAT = 100_000
# what nbgrader can take as a student id (the grader skips a folder named otherwise)
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")
MAX_ID = 100
LETTERS = "abcdefghijklmnopqrstuvwxyz"
SOURCES = {
    ENV: "set by the grader",
    HUB_ENV: "your hub user name",
    "file": "set with make check ID=...",
    "default": "the default: set yours once with make check ID=<your id>",
}


def id_file() -> Path:
    """Where ``make check ID=...`` keeps a self-study student's id (``$XDG_CONFIG_HOME``,
    or ``~/.config``, then ``memcourse/student-id``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "memcourse" / "student-id"


def checked_id(value: str, where: str) -> str:
    """``value`` stripped, if nbgrader can take it as a student id; else ``ValueError``
    saying so (``where``: where the id was found)."""
    value = value.strip()
    if not value or len(value) > MAX_ID or not STUDENT_ID.match(value):
        raise ValueError(
            f"the student id {value[:MAX_ID]!r} ({where}) is not one the grader can use: "
            f"at most {MAX_ID} letters, digits and the signs . _ @ + -, starting with a letter "
            "or a digit (set yours with make check ID=<your id>)")
    return value


def student() -> tuple[str, str]:
    """The student id in effect and where it comes from (``ENV``, ``HUB_ENV``, ``"file"``
    or ``"default"``); an id that nbgrader could not take raises ``ValueError``."""
    for name in (ENV, HUB_ENV):
        if os.environ.get(name, "").strip():
            return checked_id(os.environ[name], name), name
    path = id_file()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_ID + 2)  # bounded: the file is the user's, whatever it holds
    except OSError:
        return DEFAULT_ID, "default"
    return checked_id(text, f"in {path}"), "file"


def checked_seat(value, where: str) -> int:
    """``value`` as a seat of the class list (1 to ``MAX_SEAT``); else ``ValueError``."""
    text = str(value).strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_SEAT:
        raise ValueError(f"the seat {text[:20]!r} ({where}) is not one of the class list's: "
                         f"a whole number from 1 to {MAX_SEAT}")
    return int(text)


def class_seat() -> int | None:
    """The student's seat on the class list (``SEAT_ENV``, set by the hub and the grader), or
    None where none is set; a value that is not a seat raises ``ValueError``."""
    value = os.environ.get(SEAT_ENV, "").strip()
    return checked_seat(value, SEAT_ENV) if value else None


def set_student(value: str) -> Path:
    """Keep ``value`` as this user's student id (the id file); return the file's path."""
    value = checked_id(value, "given")
    path = id_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = path.with_name(path.name + ".new")
    fresh.write_text(value + "\n", encoding="utf-8")
    os.replace(fresh, path)
    return path


def forget_student() -> bool:
    """Remove the id file (back to the default id); True if there was one."""
    try:
        id_file().unlink()
        return True
    except FileNotFoundError:
        return False


def uniform(*parts) -> float:
    """A number in [0, 1) that depends on ``parts`` only: the first 8 bytes of the SHA-256
    of ``COURSE`` and the parts joined by ``|``."""
    digest = hashlib.sha256("|".join([COURSE, *map(str, parts)]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


class Options:
    """The options of a multiple-choice question in one student's order, lettered.

    ``texts`` are given in the notebook's own order (index 0, 1, ...); letter ``j`` shows
    ``texts[order[j]]``. ``key(i)`` is the letter the student sees option ``i`` under, so
    that a hidden test names the right option by its index and the key follows the
    shuffle. Shown as a Markdown list in a notebook (``_repr_markdown_``).
    """

    def __init__(self, question: str, texts: list[str], order: list[int], letters: str,
                 title: str | None = None):
        self.question, self.texts, self.order = question, list(texts), list(order)
        self.letters, self.title = letters, title

    def key(self, index: int) -> str:
        """The letter of option ``index`` (its place in the notebook's list)."""
        if not 0 <= int(index) < len(self.texts):
            raise IndexError(f"{self.question} has {len(self.texts)} options, not {index + 1}")
        return self.letters[self.order.index(int(index))]

    def keys(self, indices) -> set[str]:
        """The letters of several options (a question with more than one right option)."""
        return {self.key(i) for i in indices}

    def shown(self) -> list[tuple[str, str]]:
        """(letter, text) in the order the student sees them."""
        return [(self.letters[j], self.texts[i]) for j, i in enumerate(self.order)]

    def _repr_markdown_(self) -> str:
        head = [f"*{self.title}*", ""] if self.title else []
        return "\n".join(head + [f"- **{letter}.** {text}" for letter, text in self.shown()])

    def __repr__(self) -> str:
        head = [self.title] if self.title else []
        return "\n".join(head + [f"{letter}. {text}" for letter, text in self.shown()])


class Numbers:
    """The draws of one notebook for one student: ``Numbers("session-2/exit-test")``.

    Each method draws one named parameter of one question (``integer``, ``real``,
    ``pick``, ``sample``, ``seed``, ``rng``, ``draw``) or the options of a multiple-choice question
    (``options``), records it, and returns it; ``show`` prints the record ("your
    numbers"), ``summary`` gives it on one line (the grader's report).
    """

    def __init__(self, notebook: str, student_id: str | None = None, seat: int | None = None):
        """``student_id`` and ``seat`` (the student's seat on the class list, or None):
        given, or both from the environment (``student``, ``class_seat``)."""
        if student_id is None:
            (student_id, source), seat = student(), class_seat()
        else:
            student_id, source = checked_id(student_id, "given"), "given"
            seat = None if seat is None else checked_seat(seat, "given")
        self.notebook, self.student, self.source = str(notebook), student_id, source
        self.seat = seat
        self.drawn: dict[str, dict[str, object]] = {}
        self.choices: dict[str, Options] = {}

    # ---------------------------------------------------------------- the draws

    def _u(self, question: str, name: str, attempt: int = 0) -> float:
        return uniform(self.notebook, question, self.student, name, attempt)

    def _record(self, question: str, name: str, value, shown=None):
        self.drawn.setdefault(str(question), {})[str(name)] = value if shown is None else shown
        return value

    def pick(self, question: str, name: str, values):
        """One of ``values``, each as likely."""
        values = list(values)
        if not values:
            raise ValueError(f"{question} {name}: nothing to pick from")
        value = values[int(self._u(question, name) * len(values))]
        return self._record(question, name, value)

    def integer(self, question: str, name: str, low: int, high: int, step: int = 1,
                avoid=()) -> int:
        """An int among ``low, low + step, ..., high`` (both ends included), none of ``avoid``
        (values the book prints, whose answers a student could copy from it)."""
        grid = [v for v in range(int(low), int(high) + 1, int(step)) if v not in set(avoid)]
        return int(self.pick(question, name, grid))

    def real(self, question: str, name: str, low: float, high: float, digits: int = 2,
             avoid=()) -> float:
        """A float in ``[low, high]`` rounded to ``digits`` decimals (the value printed is
        the value used), none of ``avoid``."""
        for attempt in range(1000):
            value = round(low + (high - low) * self._u(question, name, attempt), digits)
            if low <= value <= high and all(abs(value - a) > 10.0**-digits / 2 for a in avoid):
                return float(self._record(question, name, value))
        raise ValueError(f"{question} {name}: no value in [{low}, {high}] outside {avoid}")

    def sample(self, question: str, name: str, values, k: int, sort: bool = True) -> list:
        """``k`` distinct entries of ``values`` (in increasing order unless ``sort`` is False)."""
        values = list(values)
        ranked = sorted(range(len(values)), key=lambda i: self._u(question, f"{name}/{i}"))
        chosen = [values[i] for i in ranked[:k]]
        if sort:
            chosen.sort()
        return self._record(question, name, chosen)

    def seed(self, question: str, name: str) -> int:
        """An int seed for numpy's generator (``np.random.default_rng(seed)``, or memkit's
        ``seed=`` arguments): the data drawn with it are the student's own."""
        value = int(self._u(question, name) * 2.0**53)
        return self._record(question, name, value, _Seeded(value))

    def rng(self, question: str, name: str) -> np.random.Generator:
        """``np.random.default_rng(self.seed(question, name))``."""
        return np.random.default_rng(self.seed(question, name))

    def draw(self, question: str, name: str, make, accept=None, tries: int = 1000):
        """Data of a question, ``make(rng)`` with a generator of this student's; made again
        from the next generator until ``accept(data)`` holds (a premise of the question:
        one largest entry, independent columns, ...)."""
        for attempt in range(tries):
            found = make(np.random.default_rng(int(self._u(question, name, attempt) * 2.0**53)))
            if accept is None or accept(found):
                return self._record(question, name, found, _Drawn(found))
        raise ValueError(f"{question} {name}: no draw of {tries} met the question's premise")

    def options(self, question: str, texts, letters: str | None = None,
                title: str | None = None) -> Options:
        """The options of ``question`` (given in the notebook's order) in this student's
        order, lettered ``letters`` (default a, b, c, ...); shown at once in a notebook."""
        texts = list(texts)
        letters = letters or LETTERS[: len(texts)]
        if len(letters) != len(texts):
            raise ValueError(f"{question}: {len(texts)} options need {len(texts)} letters")
        if self.seat is None:
            order = sorted(range(len(texts)), key=lambda i: self._u(question, f"option/{i}"))
        else:
            order = self._latin_row(str(question), len(texts))
        found = Options(question, texts, order, letters, title)
        self.choices[str(question)] = found
        _display(found)
        return found

    def _latin_row(self, question: str, k: int) -> list[int]:
        """This seat's order of ``k`` options: row ``r`` of the Latin square of its block of
        ``k`` seats, ``order[j] = options[(rows[r] + places[j]) % k]``, with the three
        permutations (of the options, the letters' places and the block's seats) drawn for
        the block and the question, not for the student."""
        block, row = divmod(self.seat - 1, k)

        def permutation(what: str) -> list[int]:
            return sorted(range(k), key=lambda i: uniform(
                self.notebook, question, "class-list", block, what, i))

        options, places, rows = permutation("option"), permutation("place"), permutation("seat")
        return [options[(rows[row] + places[j]) % k] for j in range(k)]

    def key(self, question: str, index: int) -> str:
        """The letter this student sees option ``index`` of ``question`` under."""
        if str(question) not in self.choices:
            raise KeyError(f"the options of {question} are not drawn yet (run its cell)")
        return self.choices[str(question)].key(index)

    # ---------------------------------------------------------------- the record

    def varied(self) -> list[str]:
        """The questions whose numbers or options were drawn (``q3`` for a draw labelled
        ``"q3"``, ``"q1, q2"`` or ``"q6 state"``), in the notebook's order."""
        found = {q for label in [*self.drawn, *self.choices] for q in re.findall(r"\bq\d+\b", label)}
        return sorted(found, key=lambda q: int(q[1:]))

    def _lines(self, full: bool) -> list[tuple[str, str]]:
        found = []
        for question, values in self.drawn.items():
            found.append((question, ", ".join(
                value.text(name, full) if isinstance(value, (_Drawn, _Seeded)) else f"{name} = {value!r}"
                for name, value in values.items())))
        return found

    def report(self) -> str:
        """What ``show`` prints: the id, where it comes from, and every value drawn (small
        arrays in full)."""
        where = SOURCES.get(self.source, self.source)
        if self.seat is not None:
            where += f"; seat {self.seat} on the class list"
        lines = [f"Your numbers (student id {self.student!r}, {where}):"]
        width = max((len(q) for q in self.drawn), default=2)
        for question, text in self._lines(full=True):
            first, *rest = text.split("\n")
            lines.append(f"  {question:<{width}}  {first}")
            lines += [f"  {'':<{width}}  {line}" for line in rest]
        if not self.drawn:
            lines.append("  (none drawn)")
        return "\n".join(lines)

    def show(self) -> None:
        print(self.report())

    def summary(self) -> str:
        """One line: every value drawn and each question's option order (``q4 letters
        a=2 b=0 ...``: the option of the notebook's list each letter shows)."""
        parts = [f"seat {self.seat}"] if self.seat is not None else []
        parts += [f"{question}: {text}" for question, text in self._lines(full=False)]
        for question, found in self.choices.items():
            shown = " ".join(f"{found.letters[j]}={i}" for j, i in enumerate(found.order))
            parts.append(f"{question} letters {shown}")
        return "; ".join(parts)


class _Seeded:
    """The record of a seed (``Numbers.seed``): the data made with it are the student's."""

    def __init__(self, seed: int):
        self.seed = seed

    def text(self, name: str, full: bool) -> str:
        return f"{name}: drawn for you"

    def __eq__(self, other):
        return isinstance(other, _Seeded) and other.seed == self.seed


class _Drawn:
    """The record of data made by ``Numbers.draw``: shown in full when small."""

    SMALL = 30  # numbers at most, to be shown in full

    def __init__(self, value):
        self.parts = [np.asarray(v) for v in (value if isinstance(value, tuple) else (value,))]

    def text(self, name: str, full: bool) -> str:
        names = [n.strip() for n in name.split(",")]
        if len(names) != len(self.parts):
            names = [f"{name}[{i}]" for i in range(len(self.parts))]
        small = full and sum(p.size for p in self.parts) <= self.SMALL
        if not small:
            shapes = ", ".join(f"{n} {p.shape}" for n, p in zip(names, self.parts))
            return f"drawn for you ({shapes})"
        return "\n".join(
            f"{n} = " + np.array2string(p, separator=", ", prefix=f"{n} = ",
                                        formatter={"float_kind": lambda v: f"{v:g}"})
            for n, p in zip(names, self.parts))


def _display(found: Options) -> None:
    """Show ``found`` in the notebook running this code (nothing outside a kernel: where
    IPython is not imported already, none runs this code, and importing it would cost the
    grader's check of each notebook half a second)."""
    ipython = sys.modules.get("IPython")
    if ipython is None or ipython.get_ipython() is None:
        return
    from IPython.display import display

    display(found)
