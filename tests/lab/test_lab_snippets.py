"""The JavaScript that tests/support/lab_browser.py evaluates in the lab's page parses: each
snippet, its helpers (``PAGE_HELPERS``) included, is a function Node accepts
(``node --check``). Some run only in the hub's tests; a typo in one fails here, in a second,
not an hour into a hub."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from support import lab_browser

NODE = shutil.which("node")
SNIPPETS = sorted(name for name, value in vars(lab_browser).items()
                  if name.isupper() and isinstance(value, str) and value.startswith("async ("))


def node_check(snippet: str, tmp_path) -> subprocess.CompletedProcess:
    script = tmp_path / "snippet.js"
    script.write_text(f"const snippet = {snippet};\n")
    assert NODE, "node is missing: run `make system-deps` (as root) first"
    return subprocess.run([NODE, "--check", str(script)], capture_output=True, text=True,
                          check=False, timeout=60)


def test_every_page_function_is_found():
    assert {"APP_READY", "OPEN_AND_RUN", "FIGURES", "TERMINAL", "TRUST_HTML"} <= set(SNIPPETS)


def test_the_check_rejects_a_snippet_that_redeclares_a_helper(tmp_path):
    assert node_check(lab_browser.in_page("id", "const sleep = 1; return id;"), tmp_path).returncode
    assert node_check(lab_browser.in_page("id", "return widgetOf(id);"), tmp_path).returncode == 0


@pytest.mark.parametrize("name", SNIPPETS)
def test_each_snippet_parses(name, tmp_path):
    checked = node_check(getattr(lab_browser, name), tmp_path)
    assert checked.returncode == 0, checked.stderr
