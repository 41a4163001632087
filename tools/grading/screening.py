"""Stage 1, screening: a submitted notebook checked against its source before nbgrader sees it.

The rules: a file that is not a notebook is rejected (scored 0); locked cells that were
deleted, copied, retyped or edited are put back as released; a deleted answer cell comes
back as its stub; cells the student added are kept after the graded cell they followed;
graded cells go back in the release's order. Each test cell gets the grader's export
cells around it (``tools.grading.recheck``: the answers it reads and the calls it makes, printed
as plain data). Every change is given as a reason.

Depends on: ``tools.grading.cells``, ``tools.grading.recheck``.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field

import nbformat

from tools.grading import recheck
from tools.grading.cells import cell_meta, cell_text, new_cell

@dataclass
class Screened:
    """A submitted notebook after screening.

    ``notebook`` is what nbgrader grades (locked cells as released) and ``probe`` the
    same with the locked cells of the source (hidden tests in), which is what nbgrader
    executes. Both are None when the notebook is rejected.
    """

    notebook: dict | None
    probe: dict | None
    reasons: list[str] = field(default_factory=list)
    rejected: bool = False
    graded_ids: list[str | None] = field(default_factory=list)  # grade id per cell, None if plain


def screen(text: str, source: dict, release: dict) -> Screened:
    """Check a submitted notebook (its file text) against its source and release; repair it."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        where = f", line {exc.lineno}" if hasattr(exc, "lineno") else ""
        return Screened(
            None, None, [f"not valid JSON ({getattr(exc, 'msg', exc)}{where}): scored 0"], True
        )
    upgraded = []
    if isinstance(data, dict) and "worksheets" in data and data.get("nbformat", 3) < 4:
        old = data.get("nbformat", 3)
        try:
            data = json.loads(json.dumps(nbformat.convert(nbformat.from_dict(data), 4)))
            upgraded = [f"an nbformat {old} notebook: upgraded to nbformat 4"]
        except Exception as exc:  # a broken old notebook
            return Screened(
                None,
                None,
                [f"not a notebook (an old format nbformat cannot read: {exc}): scored 0"],
                True,
            )
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return Screened(None, None, ["not a notebook (no list of cells): scored 0"], True)

    released = [c for c in release["cells"] if cell_meta(c).get("grade_id")]
    known = {cell_meta(c)["grade_id"]: c for c in released}
    order = [cell_meta(c)["grade_id"] for c in released]
    source_text = {
        cell_meta(c).get("grade_id"): cell_text(c)
        for c in source["cells"]
        if cell_meta(c).get("grade_id")
    }
    answers = {g for g, c in known.items() if cell_meta(c).get("solution")}
    reasons: list[str] = list(upgraded)
    occurrences: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    extras: dict[str | None, list[tuple[str, str]]] = collections.defaultdict(list)
    seen_order: list[str] = []
    anchor = None
    dropped = 0
    for raw in data["cells"]:
        if not isinstance(raw, dict):
            dropped += 1
            continue
        ctype = (
            raw.get("cell_type") if raw.get("cell_type") in ("code", "markdown", "raw") else "raw"
        )
        text_ = cell_text(raw)
        gid = cell_meta(raw).get("grade_id")
        if not isinstance(gid, str) or gid not in known:
            if isinstance(gid, str) and gid:
                reasons.append(f"a cell with the unknown grade id {gid!r} was kept as a plain cell")
            extras[anchor].append((ctype, text_))
            continue
        if gid not in occurrences:
            seen_order.append(gid)
        occurrences[gid].append((ctype, text_))
        anchor = gid
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
        elif text_ != cell_text(rc):
            reasons.append(f"locked cell {gid} was edited: restored")
    if [g for g in seen_order] != [g for g in order if g in occurrences]:
        reasons.append("graded cells were out of order: put back in the order of the release")

    graded, probe, ids = [], [], []

    def emit(cell_type, text_, metadata, cell_id, gid, probe_text=None):
        graded.append(new_cell(cell_type, text_, metadata, cell_id))
        probe.append(
            new_cell(cell_type, text_ if probe_text is None else probe_text, metadata, cell_id)
        )
        ids.append(gid)

    counter = iter(range(1, 1_000_000))

    def emit_extras(key):
        for ctype, text_ in extras.get(key, []):
            emit(ctype, text_, {}, f"student-{next(counter)}", None)

    # the grader's exporter first, then each graded test cell preceded by its export cell
    # (tools.grading.recheck: the answers the test reads, printed as plain data)
    locked_names = set()
    for c in source["cells"]:
        m = cell_meta(c)
        if m.get("locked") or (m.get("grade") and not m.get("solution")):
            locked_names |= recheck.names_bound(cell_text(c))
    functions = recheck.callable_names(source)
    emit("code", recheck.EXPORTER, {}, f"{recheck.EXPORT_ID}-def", None)
    emit_extras(None)
    for gid in order:
        rc = known[gid]
        metadata = json.loads(json.dumps(rc.get("metadata", {})))
        cell_id = rc.get("id") or gid
        is_test = (
            cell_meta(rc).get("grade")
            and not cell_meta(rc).get("solution")
            and rc["cell_type"] == "code"
        )
        if is_test:
            needed = recheck.names_read(source_text.get(gid, cell_text(rc))) - locked_names
            source = recheck.export_cell_source(
                sorted(needed - functions), sorted(needed & functions)
            )
            emit("code", source, {}, f"{recheck.EXPORT_ID}-{gid}", None)
        if gid in answers:
            found = occurrences.get(gid) or [(rc["cell_type"], cell_text(rc))]
            for ctype, text_ in found[:-1]:
                emit(ctype, text_, {}, f"student-{next(counter)}", None)
            emit(rc["cell_type"], found[-1][1], metadata, cell_id, gid)
        else:
            emit(
                rc["cell_type"],
                cell_text(rc),
                metadata,
                cell_id,
                gid,
                source_text.get(gid, cell_text(rc)),
            )
        if is_test:
            emit("code", recheck.CALLS_SOURCE, {}, f"{recheck.CALLS_ID}-{gid}", None)
        emit_extras(gid)

    def notebook(cells):
        nb = nbformat.v4.new_notebook(cells=cells)
        nb.metadata = json.loads(json.dumps(release.get("metadata", {})))
        return nb

    return Screened(notebook(graded), notebook(probe), reasons, False, ids)
