"""What grading one submission came to: its ``Outcome`` and the statuses (``STATUSES``,
``status_of``), most serious first.

Stage: none (the record every later stage fills or reads).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

@dataclass
class Outcome:
    """The result of grading one submission."""

    student: str
    assignment: str
    score: float = 0.0
    max_score: float = 0.0
    status: str = "ok"  # ok, repaired, rejected, failed
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0
    needs_manual: bool = False
    note: str = ""  # what went wrong with the grader itself, not with the submission
    numbers: str = ""  # the student's own numbers, as the grader drew them (memkit.variants)
    choices: dict = field(default_factory=dict)  # notebook -> test id -> the letters chosen
    late: object = None  # tools.grading.lateness.Lateness: handed in, due, penalty

    @property
    def penalty(self) -> float:
        """The points lateness cost (0 when on time or with no due date)."""
        return float(getattr(self.late, "penalty", 0.0) or 0.0)

    @property
    def final_score(self) -> float:
        """The score after the late penalty (what grades.csv's ``score`` holds)."""
        return max(0.0, self.score - self.penalty)


STATUSES = {
    "failed": "nothing could be graded: scored 0",
    "rejected": "a notebook could not be read (not a notebook, not valid JSON): it scored 0",
    "missing": "no notebook of the assignment was handed in: scored 0",
    "incomplete": "a notebook of the assignment was not handed in: it scored 0, the others count",
    "overruled": "a test passed in the student's kernel but not when the grader checked the "
    "answers: its points were withdrawn",
    "repaired": "graded after a repair (reasons given)",
    "ok": "graded as handed in",
    "skipped": "not graded (reason given): the instructor must act",
}


# a name quoted in a reason (``repr``: the student's file, member or grade id) says
# nothing of the status: a file named 'not a notebook' does not reject a submission
QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")


def status_of(graded: bool, handed_in: bool, reasons: list[str], overruled: bool) -> str:
    reasons = [QUOTED.sub("''", r) for r in reasons]
    unreadable = any(("not valid JSON" in r or "not a notebook" in r) for r in reasons)
    missing = any("not handed in: scored 0" in r for r in reasons)
    if not graded:
        if unreadable:
            return "rejected"
        return "missing" if not handed_in and missing else "failed"
    if unreadable:
        return "rejected"
    if missing:
        return "incomplete"
    if overruled:
        return "overruled"
    if any("scored 0" in r for r in reasons):
        return "failed" if not handed_in else "repaired"
    return "repaired" if reasons else "ok"
