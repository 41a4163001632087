"""``make check`` prints what a notebook holds with its control characters escaped."""

from pathlib import Path

from tools.lab import notebook_check


def test_a_notebook_cannot_clear_the_terminal_of_whoever_checks_it():
    q = notebook_check.Question("q1\x1b[2J", title="# \x1b]0;title\x07", points=1, status="failed",
                       message="AssertionError: \x1b[31mred\nsecond line")
    printed = notebook_check.report(Path("nb.ipynb"), [q], ["a warning \x1b[2J"])
    assert "\x1b" not in printed and "\x07" not in printed
    assert "q1\\x1b[2J" in printed and "\\x1b[31mred\\nsecond line" in printed
    assert len(printed.splitlines()) == 4  # the notebook, the question, the counts, the warning
