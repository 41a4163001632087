"""The code's docstrings and comments (memkit, tools, the tests, the benchmarks, the answer
keys) say what the code does now: no list of the modules it imports (the import graph says
it, tests/test_import_graph.py checks it), no issue numbers, nothing CI found. History lives
in CHANGELOG.md and git log.
"""

from __future__ import annotations

import ast
import io
import pathlib
import re
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HISTORY = re.compile(r"Depends on|\b[Ii]ssues? \d+|(?<![\w&/])#\d+\b|\bCI runs?\b")
BASES = ("memkit", "tools", "tests", "benchmarks", "solutions")
MODULES = sorted(p for base in BASES for p in (ROOT / base).rglob("*.py")
                 if "__pycache__" not in p.parts)


def history_in(source: str) -> list[str]:
    """What the docstrings (of the module, its classes and functions) and the comments of
    ``source`` say of history or dependencies."""
    tree = ast.parse(source)
    texts = [ast.get_docstring(node, clean=False) or "" for node in ast.walk(tree)
             if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                  ast.AsyncFunctionDef))]
    texts += [token.string for token in tokenize.generate_tokens(io.StringIO(source).readline)
              if token.type == tokenize.COMMENT]
    return [m.group(0) for text in texts for m in HISTORY.finditer(text)]


@pytest.mark.parametrize("doc,found", [
    ('"""Screening (issue 16)."""', ["issue 16"]),
    ('"""Fixed in #123, the CI run of May."""', ["#123", "CI run"]),
    ('"""Stage: none. Depends on: tools.grading.cells."""', ["Depends on"]),
    ('"""A colour #fff, an anchor page.html#intro, ``&#39;``, 3 issues raised."""', []),
    ('"""What the draw depends on: its parts."""', []),
    ('x = 1\n"""Issue 5: a string, not a docstring."""', []),
    ('def f():\n    """Issue 5: a function\'s docstring."""', ["Issue 5"]),
    ('class C:\n    """See #12."""', ["#12"]),
    ('x = 1  # the CI run of May\ny = "issue 7 in a string"', ["CI run"]),
])
def test_the_pattern_finds_history_only(doc, found):
    assert history_in(doc) == found


def test_every_module_of_the_code_and_its_tests_is_checked():
    assert len(MODULES) > 200
    assert {p.relative_to(ROOT).parts[0] for p in MODULES} == set(BASES)
    assert ROOT / "tests" / "support" / "simulate" / "classroom.py" in MODULES
    assert ROOT / "tests" / "hub" / "test_hub.py" in MODULES


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docstrings_and_comments_carry_no_history_or_dependency_list(path):
    assert history_in(path.read_text()) == []
