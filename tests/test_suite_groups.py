"""The suite's groups (tests/conftest.py) reach pytest-xdist: a module's tests run on one
worker, each test's id carrying its group, so a module's fixtures (a PDF build, a graded
class, a hub) are made once. Run with two workers on a module of quick tests."""

import re
import subprocess
import sys

from support import ROOT


def test_a_modules_tests_run_on_one_worker_as_one_group():
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_import_graph.py", "-n", "2", "-v",
         "-p", "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    ran = re.findall(r"^\[(gw\d+)\] .*?PASSED (\S+)", run.stdout, re.MULTILINE)
    assert len(ran) > 1, run.stdout[-3000:]
    assert {worker for worker, _ in ran} == {ran[0][0]}, ran
    assert all(nodeid.endswith("@test_import_graph") for _, nodeid in ran), ran
