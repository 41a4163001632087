"""Autograding a class with nbgrader so that no submission can stop the others.

``python -m tools.grading`` (``make grade``) is the command (``tools.grading.cli``; its
``--help`` says what it does). The code is split by stage, each module depending only on
the ones above it in this list (``tests/test_import_graph.py`` checks there is no cycle):

==========================  ============================================================
``cells``                   notebook cells as data (the helpers every stage uses)
``settings``                the settings of a run, nbgrader's environment
``outcome``                 what grading a submission came to, the statuses
``collect``                 the submissions to grade (submitted tree, class archives)
``screening``               a notebook checked against its source: the screening rules
``staging``                 a submission's screened notebooks written for nbgrader
``limits``                  a process run with wall-clock and memory limits, tree killed
``repair``                  the probe (where a run stops) and the cell replaced
``judgement``               scores, reasons, the grader's re-check, the status
``autograde``               nbgrader on a batch, or on one submission with repair
``feedback``                the HTML feedback without hidden tests
``report``                  grades.csv, the report CSV, the printed summary
``pipeline``                a class graded: screening here, autograding on the cluster
``cli``                     the command line
==========================  ============================================================

``tools.cluster`` (the Dask cluster the batches run on) sits between ``autograde`` and
``pipeline``. This package's ``__init__`` imports no stage: import the stage you need. It
leaves out jsonschema's slow optional import in every process that grades (the grader and
the Dask workers: ``tools.assignments.skip_slow_imports``), before nbformat is imported.
"""

from tools.assignments import skip_slow_imports

skip_slow_imports()
