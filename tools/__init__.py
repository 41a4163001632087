"""The course's tools, one package for each person they serve (run as ``python -m tools.X``).

==================  ================================================================
``tools.release``   the instructor's release of the assignments: exercises/ and the
                    session pages, generated from solutions/ (``make assignments``)
``tools.book``      the book's build: MathJax, the execution cache, the Sphinx
                    extensions of the HTML and PDF books (``make book``, ``make pdf``)
``tools.lab``       the student's JupyterLab: the launcher, the chapters as notebooks,
                    the visible tests (``make lab``, ``make check``), the test driver
``tools.grading``   the instructor's autograder (``make grade``): staging, sandbox,
                    re-check, cluster, gradebook, feedback, report
``tools.hub``       the course on a JupyterHub (``make hub``): its set-up and config
==================  ================================================================

The packages import each other one way (``tests/test_import_graph.py``): ``grading``
imports ``release`` (where the assignments live, nbgrader's environment), ``hub`` imports
``lab`` (the lab each user gets), ``lab`` imports ``grading``'s sanitizer (the instructor's
Formgrader shows a submission cleaned as the grader cleans its feedback), and no other
package imports another.
"""

from pathlib import Path

#: the course's folder: the repository root, which holds tools/, book/, solutions/ ...
ROOT = Path(__file__).resolve().parents[1]
