"""Screening: a submitted notebook checked against its source before nbgrader sees it.

The rules: a file that is not a notebook is rejected (scored 0): not JSON, nested too
deep, not a dict with a list of cells, an old format with a field of the wrong type;
locked cells that were deleted, copied, retyped or edited are put back as released; a
deleted answer cell comes back as its stub; cells the student added are kept after the
graded cell they followed; graded cells go back in the release's order; a markdown or
raw cell is cut to what a page shows (``tools.common.sanitize.MAX_CELL``). Each test cell
keeps its visible part only (the release's) and gets the grader's export cell before it
(``tools.grading.recheck``: the answers the whole test reads and the results of the
student's functions on the test's inputs, printed as plain data). Every change is given
as a reason.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field

import nbformat

from tools.common.text import counted, quoted
from tools.grading import hidden, recheck
from tools.release import schedule
from tools.common import nbgrader_cells
from tools.grading.cells import cell_text, new_cell
from tools.common.sanitize import MAX_CELL, trimmed

@dataclass
class Screened:
    """A submitted notebook after screening.

    ``notebook`` is what nbgrader grades and its kernel runs (locked cells as released,
    so test cells without their hidden part); None when the notebook is rejected.
    """

    notebook: dict | None
    reasons: list[str] = field(default_factory=list)
    rejected: bool = False
    graded_ids: list[str | None] = field(default_factory=list)  # grade id per cell, None if plain


def parse_notebook(text: str) -> tuple[dict | None, list[str]]:
    """The JSON of a submitted notebook and what was done to it, or None and why it is
    not a notebook. (``json`` bounds its own recursion: a nesting too deep is refused.)"""
    try:
        data = json.loads(text)
    except RecursionError:
        return None, ["not a notebook (nested deeper than any notebook is): scored 0"]
    except ValueError as exc:
        where = f", line {exc.lineno}" if hasattr(exc, "lineno") else ""
        return None, [f"not valid JSON ({getattr(exc, 'msg', exc)}{where}): scored 0"]
    notes = []
    if isinstance(data, dict) and "worksheets" in data and "cells" not in data:
        old = data.get("nbformat", 3)
        if type(old) is not int or old >= 4:
            return None, ["not a notebook (worksheets with no usable nbformat number): scored 0"]
        try:
            data = json.loads(json.dumps(nbformat.convert(nbformat.from_dict(data), 4)))
        except Exception as exc:  # noqa: BLE001 - a broken old notebook
            return None, [f"not a notebook (an old format nbformat cannot read: {str(exc)[:200]}): scored 0"]
        notes.append(f"an nbformat {old} notebook: upgraded to nbformat 4")
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None, ["not a notebook (no list of cells): scored 0"]
    return data, notes


def screen(text: str, source: dict, release: dict, split: hidden.Split | None = None,
           student: str | None = None, seat: int | None = None) -> Screened:
    """Check a submitted notebook (its file text) against its source and release; repair it.

    ``split``: the calls of the source's tests (``tools.grading.hidden.discover``).
    ``student``: the id the notebook is graded for, and ``seat`` the student's seat on the
    class list (or None); the kernel gets them first of all (``recheck.student_cell_source``),
    so that its set-up draws that student's numbers and options.
    """
    data, upgraded = parse_notebook(text)
    if data is None:
        return Screened(None, upgraded, True)
    split = split or hidden.Split()

    released = [c for c in release["cells"] if nbgrader_cells.grade_id(c)]
    known = {nbgrader_cells.grade_id(c): c for c in released}
    order = [nbgrader_cells.grade_id(c) for c in released]
    source_text = {
        nbgrader_cells.grade_id(c): cell_text(c)
        for c in source["cells"]
        if nbgrader_cells.grade_id(c)
    }
    answers = {g for g, c in known.items() if nbgrader_cells.is_solution(c)}
    reasons: list[str] = list(upgraded)
    occurrences: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    extras: dict[str | None, list[tuple[str, str]]] = collections.defaultdict(list)
    seen_order: list[str] = []
    anchor = None
    dropped = 0
    unknown: list[str] = []
    long_cells = 0
    for raw in data["cells"]:
        if not isinstance(raw, dict):
            dropped += 1
            continue
        ctype = (
            raw.get("cell_type") if raw.get("cell_type") in ("code", "markdown", "raw") else "raw"
        )
        text_ = cell_text(raw)
        if ctype != "code" and len(text_) > MAX_CELL:  # no page shows more (sanitize)
            text_ = trimmed(text_, MAX_CELL)
            long_cells += 1
        gid = nbgrader_cells.grade_id(raw)
        if not isinstance(gid, str) or gid not in known:
            if isinstance(gid, str) and gid:
                unknown.append(f"a cell with the unknown grade id {quoted(gid)} was kept as a plain cell")
            extras[anchor].append((ctype, text_))
            continue
        if gid not in occurrences:
            seen_order.append(gid)
        occurrences[gid].append((ctype, text_))
        anchor = gid
    reasons += counted(unknown, "cells with an unknown grade id kept as plain cells")
    if long_cells:
        reasons.append(f"{long_cells} markdown or raw cell{'s' if long_cells > 1 else ''} "
                       f"longer than {MAX_CELL:,} characters trimmed to {MAX_CELL:,}, with a note")
    if dropped:
        reasons.append(
            f"{dropped} entr{'y' if dropped == 1 else 'ies'} of the cell list "
            "that were not cells dropped"
        )

    for gid in order:
        rc = known[gid]
        found = occurrences.get(gid, [])
        if gid in answers:
            if not found:
                reasons.append(f"answer cell {gid} was deleted: counted as not answered")
            elif len(found) > 1:
                reasons.append(
                    f"answer cell {gid} appears {len(found)} times: the last one is graded"
                )
            if found and found[-1][0] != rc["cell_type"]:
                reasons.append(
                    f"answer cell {gid} was turned into a {found[-1][0]} cell: "
                    f"graded as {rc['cell_type']}"
                )
            continue
        if not found:
            reasons.append(f"locked cell {gid} was deleted: restored")
            continue
        if len(found) > 1:
            reasons.append(
                f"locked cell {gid} was copied ({len(found)} copies): the copies were removed"
            )
        ctype, text_ = found[0]
        if ctype != rc["cell_type"]:
            reasons.append(f"locked cell {gid} was turned into a {ctype} cell: restored")
        elif text_ != cell_text(rc) and not _same_but_due_date(text_, cell_text(rc)):
            reasons.append(f"locked cell {gid} was edited: restored")
    if [g for g in seen_order] != [g for g in order if g in occurrences]:
        reasons.append("graded cells were out of order: put back in the order of the release")

    graded, ids = [], []

    def emit(cell_type, text_, metadata, cell_id, gid):
        graded.append(new_cell(cell_type, text_, metadata, cell_id))
        ids.append(gid)

    counter = iter(range(1, 1_000_000))

    def emit_extras(key):
        for ctype, text_ in extras.get(key, []):
            emit(ctype, text_, {}, f"student-{next(counter)}", None)

    # the student's id and the grader's exporter first, then each graded test cell preceded
    # by its export cell (tools.grading.recheck: the answers the test reads and the calls)
    if student is not None:
        emit("code", recheck.student_cell_source(student, seat), {}, recheck.STUDENT_CELL_ID, None)
    emit("code", recheck.EXPORTER, {}, f"{recheck.EXPORT_ID}-def", None)
    emit_extras(None)
    for gid in order:
        rc = known[gid]
        metadata = json.loads(json.dumps(rc.get("metadata", {})))
        cell_id = rc.get("id") or gid
        if nbgrader_cells.is_test(rc):
            names, _ = hidden.exported_names(source, source_text.get(gid, cell_text(rc)))
            emit("code", recheck.export_cell_source(names, split.calls.get(gid, [])), {},
                 f"{recheck.EXPORT_ID}-{gid}", None)
        if gid in answers:
            found = occurrences.get(gid) or [(rc["cell_type"], cell_text(rc))]
            for ctype, text_ in found[:-1]:
                emit(ctype, text_, {}, f"student-{next(counter)}", None)
            emit(rc["cell_type"], found[-1][1], metadata, cell_id, gid)
        else:
            emit(rc["cell_type"], cell_text(rc), metadata, cell_id, gid)
        emit_extras(gid)

    nb = nbformat.v4.new_notebook(cells=graded)
    nb.metadata = json.loads(json.dumps(release.get("metadata", {})))
    return Screened(nb, reasons, False, ids)


def _same_but_due_date(handed_in: str, released: str) -> bool:
    """A header that differs from the release only in its due line (the schedule changed
    after the student fetched it): not an edit (it is put back as released all the same)."""
    if schedule.MARK not in handed_in + released:
        return False
    return schedule.with_due_line(handed_in, "") == schedule.with_due_line(released, "")
