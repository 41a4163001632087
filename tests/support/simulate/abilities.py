"""Classes whose students differ in ability, and questions broken on purpose: what the
item analysis (``tools.grading.item_analysis``) must tell apart.

Two ways to make such a class:

``scores(rng, classes, students, questions, ...)``
    the scores alone, drawn from the Rasch model (Rasch 1960; the two-parameter logistic
    of item response theory): student ``s`` of ability ``theta_s ~ N(0, 1)`` answers
    question ``q`` of difficulty ``b_q`` right with probability
    ``1 / (1 + exp(-a (theta_s - b_q)))``, independently across questions; every class at
    once (arrays ``(classes, students, questions)``). A multiple-choice question is
    answered with its key by a student who knows it, else with an option drawn at random
    (a guess); ``planted_wrong_key`` grades such a question against a distractor, and
    ``planted_slip`` grades a question against a slip the weaker students make.
``write_class(root, assignment, answers)``
    nbgrader's ``submitted/`` tree of a class whose every answer is given: the solution's
    code, the released stub (blank), the letter of an option of a multiple-choice
    question (``choose``), or any code; ``plant`` changes a source notebook's hidden test
    (a wrong key, a broken question) in a copy of the course.

Stage: none (beside the grader, for its tests). It imports ``tools.grading.cells``, ``tools.common.nbgrader_cells``,
``tools.grading.hidden``, ``tools.grading.item_analysis`` (which answer a multiple-choice
question binds) and ``tools.release.assignments``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from tools.common import nbgrader_cells
from tools.grading.cells import cell_text
from tools.grading.hidden import solution_text
from tools.grading.item_analysis import choices
from tools.release import assignments as course


# -- scores drawn from the Rasch model ---------------------------------------------------
def abilities(rng: np.random.Generator, classes: int, students: int) -> np.ndarray:
    """Each student's ability, ``(classes, students)``, standard normal."""
    return rng.standard_normal((classes, students))


def knows(rng: np.random.Generator, theta: np.ndarray, difficulty, slope: float = 1.7
          ) -> np.ndarray:
    """Whether each student answers each question right, ``(classes, students, questions)``:
    a Bernoulli draw of probability ``1 / (1 + exp(-slope (theta - difficulty)))``."""
    b = np.asarray(difficulty, float)
    p = 1.0 / (1.0 + np.exp(-slope * (theta[..., None] - b)))
    return rng.random(p.shape) < p


def picks(rng: np.random.Generator, knew: np.ndarray, key: int, options: int) -> np.ndarray:
    """The option each student chooses: the key when they know it, else a guess among all
    ``options`` (the key included)."""
    guess = rng.integers(0, options, size=knew.shape)
    return np.where(knew, key, guess)


def planted_wrong_key(picked: np.ndarray, graded_key: int) -> np.ndarray:
    """A multiple-choice question graded against ``graded_key``, not the option the
    knowing students choose: 1 for those who picked it."""
    return (picked == graded_key).astype(float)


def planted_slip(rng: np.random.Generator, theta: np.ndarray, slip: float = 0.6) -> np.ndarray:
    """A question whose test accepts a slip (the theory value for the measurement, a
    missed factor) and rejects the right answer: a student makes the slip with probability
    ``slip / (1 + exp(theta))`` (the weaker, the likelier), and only that scores."""
    p = slip / (1.0 + np.exp(theta))
    return (rng.random(theta.shape) < p).astype(float)


# -- a class as nbgrader's submitted tree -----------------------------------------------
def choose(source_nb: dict, answer_id: str, option: int) -> str:
    """The code of answer cell ``answer_id`` that chooses the solution's ``option``
    (0, 1, ...) of its multiple-choice question, under the student's own letter."""
    text = answer(source_nb, answer_id)
    for choice in choices(source_nb).values():
        if text.lstrip().startswith(f"{choice.answer} ="):
            var = text.split("=", 1)[1].strip().split(".", 1)[0]
            return f"{choice.answer} = {var}.key({int(option)})"
    raise ValueError(f"{answer_id} is not a multiple-choice answer of this notebook")


def answer(source_nb: dict, answer_id: str) -> str:
    """The solution's code of answer cell ``answer_id`` (nbgrader's markers dropped)."""
    return solution_text(_cell(source_nb, answer_id))


def _cell(nb: dict, grade_id: str) -> dict:
    for cell in nb["cells"]:
        if nbgrader_cells.grade_id(cell) == grade_id:
            return cell
    raise KeyError(f"no cell {grade_id}")


def plant(root: Path, assignment: str, notebook: str, grade_id: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the cell ``grade_id`` of a source notebook of the
    course at ``root`` (a copy: a wrong key, a broken test)."""
    path = Path(root) / course.SOURCE / assignment / notebook
    nb = json.loads(path.read_text())
    cell = _cell(nb, grade_id)
    text = cell_text(cell)
    if text.count(old) != 1:
        raise ValueError(f"{notebook} {grade_id}: {old!r} is not in it once")
    cell["source"] = text.replace(old, new)
    path.write_text(json.dumps(nb, indent=1) + "\n")


def write_class(root: Path, assignment: str, answers: dict[str, dict[str, dict[str, str | None]]]
                ) -> None:
    """``submitted/<student>/<assignment>/`` for each student of ``answers``: student ->
    notebook -> answer grade id -> its code (``"solution"``: the solution's; None or
    absent: the released stub)."""
    root = Path(root)
    for student, notebooks in answers.items():
        folder = root / "submitted" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for release in course.notebooks(root, assignment, course.RELEASE):
            source = json.loads((root / course.SOURCE / assignment / release.name).read_text())
            nb = copy.deepcopy(json.loads(release.read_text()))
            given = notebooks.get(release.name, {})
            for cell in nb["cells"]:
                code = given.get(nbgrader_cells.grade_id(cell))
                if nbgrader_cells.is_solution(cell) and code is not None:
                    cell["source"] = (answer(source, nbgrader_cells.grade_id(cell))
                                      if code == "solution" else code)
            (folder / release.name).write_text(json.dumps(nb, indent=1) + "\n")
