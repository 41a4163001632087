"""The due date in each released notebook's header: an nbgrader preprocessor of the release.

``DueDateHeader`` runs first in ``nbgrader generate_assignment`` (``nbgrader_config.py``
puts it at the head of ``GenerateAssignment.preprocessors``, before nbgrader locks the
cells and computes their checksums). It reads the course's ``schedule.yml``
(``tools.release.schedule``) and, when the assignment has a due date, adds a line to the
notebook's header cell (grade id ``header``, else the first markdown cell) saying when it
is due and what lateness costs (the ``describe()`` of the late-submission plugin the
course configures; nbgrader's own plugins have none, and then only the date is said). A
session without a due date is released unchanged, so ``exercises/`` only changes when a
term's dates are set.
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor

from tools.common import nbgrader_cells
from tools.release import schedule
from tools.release.schedule import MARK, due_line, with_due_line

class DueDateHeader(NbGraderPreprocessor):
    """Adds the assignment's due date (``schedule.yml``) to the released notebook's header."""

    def _policy_text(self) -> str:
        from nbgrader.preprocessors import AssignLatePenalties

        try:
            plugin = AssignLatePenalties(config=self.config).plugin_class(config=self.config)
        except Exception as exc:  # noqa: BLE001 - the release says the date all the same
            self.log.warning("late-submission plugin not loaded for the header: %s", exc)
            return ""
        describe = getattr(plugin, "describe", None)
        return describe() if callable(describe) else ""

    def preprocess(self, nb, resources):
        assignment = resources["nbgrader"]["assignment"]
        term = schedule.load(Path.cwd())  # nbgrader converts from the course's root
        line = due_line(term, assignment, self._policy_text())
        cells = nb.cells
        header = next((c for c in cells if nbgrader_cells.grade_id(c) == "header"), None)
        header = header or next((c for c in cells if c.cell_type == "markdown"), None)
        if header is not None and (line or MARK in header.source):
            header.source = with_due_line(header.source, line)
        return nb, resources
