"""The numbers the book prints: no student's key may be one of them (a student who copies the
book's number must not get the points).

Each chapter is read from its built HTML page when there is one (``_build/html/book/``:
every number of the page, the executed cells' outputs included), else from its notebook as
the build executed it (``_build/jupyter_execute/book/``: sources and text outputs), else
from its source (``book/*.md``: prose and code, no outputs). ``source`` says what was read.
The sessions' pages (``session-N``) are left out: they show the assignments' own set-up,
the ranges each student's numbers are drawn from.

Only numbers a key could match by more than chance are kept: a decimal with at least
``MIN_DIGITS`` significant digits (``0.8077``, not ``1.05``: a measurement's key may print
as that by chance), or a whole number of at least
``MIN_WHOLE`` (``218 103 808``); a key matches one when it prints the same at the book's
precision.

Stage: none (the calibration).
"""

from __future__ import annotations

import collections
import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

MIN_DIGITS = 4
MIN_WHOLE = 1000
DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w.])")
WHOLE = re.compile(r"(?<![\w.,])\d{1,3}(?:(?:[ ,_\u202f\u00a0])\d{3})+(?![\w.])|(?<![\w.])\d{4,}(?![\w.])")
TAG = re.compile(r"<[^>]*>")


@dataclass
class Printed:
    """The book's numbers: decimals by their number of decimal places, and whole numbers."""

    source: str
    decimals: dict[int, set[str]] = field(default_factory=dict)
    wholes: set[int] = field(default_factory=set)

    def add_text(self, text: str) -> None:
        for found in DECIMAL.findall(text):
            digits = found.lstrip("-").replace(".", "").strip("0")
            if len(digits) >= MIN_DIGITS:
                places = len(found.split(".")[1])
                self.decimals.setdefault(places, set()).add(f"{abs(float(found)):.{places}f}")
        for found in WHOLE.findall(text):
            value = int(re.sub(r"\D", "", found))
            if value >= MIN_WHOLE:
                self.wholes.add(value)

    def match(self, x: float) -> str:
        """The book's number ``x`` prints as, or ''."""
        if x == int(x) and abs(x) < 2**53:
            return str(int(abs(x))) if int(abs(x)) in self.wholes else ""
        for places, values in self.decimals.items():
            shown = f"{abs(x):.{places}f}"
            if shown in values:
                return shown
        return ""

    def __len__(self) -> int:
        return len(self.wholes) + sum(len(v) for v in self.decimals.values())


def printed(root: Path) -> Printed:
    """The numbers the book under ``root`` prints, each chapter read from the first found of:
    its built HTML page, its executed notebook (the build's execution, outputs included), its
    source."""
    read = collections.Counter()
    found = Printed("")
    for page in sorted((root / "book").glob("*.md")):
        if _session(page):
            continue
        built = root / "_build" / "html" / "book" / f"{page.stem}.html"
        executed = root / "_build" / "jupyter_execute" / "book" / f"{page.stem}.ipynb"
        if built.is_file():
            text = built.read_text(encoding="utf-8", errors="replace")
            text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S | re.I)
            found.add_text(html.unescape(TAG.sub(" ", text)))
            read["built HTML pages"] += 1
        elif executed.is_file():
            found.add_text(_notebook_text(executed))
            read["executed notebooks of the build (_build/jupyter_execute)"] += 1
        else:
            found.add_text(page.read_text(encoding="utf-8", errors="replace"))
            read["chapter sources (book/*.md, no outputs)"] += 1
    found.source = ", ".join(f"{n} {what}" for what, n in read.items()) or "no chapter found"
    return found


def _notebook_text(path: Path) -> str:
    """The text of an executed notebook: its cells' sources and text outputs."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return ""
    parts = []
    for cell in nb.get("cells", []):
        parts.append("".join(cell.get("source", "")))
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")))
            parts.append("".join(output.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def _session(page: Path) -> bool:
    """A session's page: the assignments themselves (their set-up's ranges), not the book's
    text."""
    return page.stem.startswith("session-")
