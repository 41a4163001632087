"""What a student controls (file and folder names, ids, notebook text, messages), written
so that it is read as text wherever the course writes it.

``csv_cell(value)``
    a CSV cell a spreadsheet reads as text (OWASP, *CSV Injection*): a text cell that
    starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a single
    quote in front, so Excel, LibreOffice and Google Sheets show it instead of running it
    as a formula, and its control characters are escaped as ``shown`` escapes them (the
    file may be read in a terminal); a number (an ``int``, a ``float``, or text that is
    only a number such as a late penalty ``-2``) is left as it is, so it stays a number.
``shown(text, lines=False)``
    a line (or, with ``lines``, lines) for a terminal or a log: every character that is not printable (ESC, the
    other C0 and C1 controls, a newline, bidirectional overrides) shown escaped as
    Python's ``repr`` shows it (``\\x1b``, ``\\n``, ``\\u202e``), so nothing a student
    named moves the cursor, clears the screen or hides a line.
``quoted(name)``
    a name put in a sentence: ``repr``'s quotes, its control characters escaped.
``counted(items, more, listed=3)``
    the first ``listed`` of a list of like lines, the rest counted in one line
    (``more`` says what they are: ``"19,900 more files left out (extra files)"``).

Stage: none (under every role).
"""

from __future__ import annotations

import re

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value):
    """``value`` as a CSV cell that is read as text (a number stays a number)."""
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_START) and not NUMBER.fullmatch(value):
        value = "'" + value
    return shown(value)


def csv_row(values) -> list:
    """Every cell of a row through ``csv_cell``."""
    return [csv_cell(v) for v in values]


def shown(text, lines: bool = False) -> str:
    """``text`` with every character a terminal would act on shown escaped (with
    ``lines``, its newlines are kept: a message of several lines)."""
    if lines:
        return "\n".join(shown(line) for line in str(text).split("\n"))
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def quoted(name) -> str:
    """``name`` in quotes, as ``repr`` writes it (its control characters escaped)."""
    return repr(str(name))


def counted(items: list[str], more: str, listed: int = 3) -> list[str]:
    """The first ``listed`` of ``items``, then ``"<n> more <more>"`` for the rest."""
    if len(items) <= listed + 1:
        return list(items)
    return list(items[:listed]) + [f"{len(items) - listed:,} more {more}"]
