"""The course's tools, one package for each person they serve (run as ``python -m tools.X``).

==================  ================================================================
``tools.release``   the instructor's release of the assignments: exercises/ and the
                    session pages, generated from solutions/ (``make assignments``)
``tools.book``      the book's build: MathJax, the execution cache, the Sphinx
                    extensions of the HTML and PDF books (``make book``, ``make pdf``)
``tools.lab``       the student's JupyterLab: the launcher, the chapters as notebooks,
                    the visible tests (``make lab``, ``make check``)
``tools.grading``   the instructor's autograder (``make grade``): staging, sandbox,
                    re-check, cluster, gradebook, feedback, report
``tools.hub``       the course on a JupyterHub (``make hub``): its set-up and config
``tools.common``    what every role shares (no role of its own): what a student
                    named, written as text in a CSV cell or on a terminal, what a
                    submission shows cleaned (the sanitizer), ports, Chromium
==================  ================================================================

The packages import each other one way (``tests/test_import_graph.py``): ``grading``
imports ``release`` (where the assignments live, nbgrader's environment), ``hub`` imports
``lab`` (the lab each user gets), ``lab`` imports ``grading`` (a student grades a notebook
with the grader itself; the instructor's kernels run in the grader's box), ``book`` (a
chapter opened in the lab gets the book's substitutions) and ``release`` (the assignments'
layout, the schedule), and no other package imports another; every package may import ``common``, which imports none.
"""

from pathlib import Path

#: the course's folder: the repository root, which holds tools/, book/, solutions/ ...
ROOT = Path(__file__).resolve().parents[1]


def npm(args: list[str], cwd: Path, attempts: int = 3):
    """Run ``npm *args`` in ``cwd`` with a cache of its own, and again when it fails.

    Each try starts from an empty ``cwd/node_modules`` and ``cwd/.npm-cache``: npm's shared
    cache (~/.npm) is written by every npm on the machine, and a tarball read from it
    corrupted once made ``npm ci`` retry into a folder it had just removed (CI, stop 35).
    Returns the last try's ``subprocess.CompletedProcess`` (output captured); the caller
    checks it. Raises SystemExit when npm is not installed.
    """
    import shutil
    import subprocess

    exe = shutil.which("npm")
    if exe is None:
        raise SystemExit("npm is missing: run `make system-deps` (as root) first")
    cwd = Path(cwd)
    for _ in range(attempts):
        for stale in (cwd / "node_modules", cwd / ".npm-cache"):
            shutil.rmtree(stale, ignore_errors=True)
        done = subprocess.run([exe, *args, "--cache", str(cwd / ".npm-cache")], cwd=cwd,
                              capture_output=True, text=True, check=False)
        if done.returncode == 0:
            break
    shutil.rmtree(cwd / ".npm-cache", ignore_errors=True)
    return done
