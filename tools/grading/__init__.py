"""Autograding a class with nbgrader so that no submission can stop the others.

``python -m tools.grading`` (``make grade``) is the command (``tools.grading.cli``; its
``--help`` says what it does). It serves the instructor. The code is split by stage, in the
order a submission flows through them, each module importing only the ones above it in
this list (``tests/test_import_graph.py`` checks it):

==========================  ============================================================
``cells``                   notebook cells as data (the helpers every stage uses)
``settings``                the settings of a run, nbgrader's environment
``outcome``                 what grading a submission came to, the statuses
``student_files``           a student's files read as regular files only: no link or
                            special file followed, every read bounded
``collect``                 the submissions to grade (submitted tree, class archives
                            screened: sizes, counts, ratio, paths, links)
``plain``                   plain data between kernel and grader, parsed and rebuilt
                            within bounds (depth, size, no key made to collide)
``forked``                  a function run in a forked child of the grader, with a time
                            and a memory limit (instructor code only)
``hidden``                  the hidden tests kept out of the kernel: the inputs of the
                            student's functions found in the grader's run of the solutions
``recheck``                 the grader's own check: the answers exported as plain data
                            from the kernel, each test cell run whole in the grader
``calibration``             (a package, beside the grader: ``make calibrate``) every graded
                            question tried before a term on many ids and seeds, honest
                            answers and slips judged as the check judges them
``screening``               a notebook checked against its source: the screening rules
``lateness``                when a submission was handed in and due (schedule.yml), the
                            late penalty (nbgrader's LateSubmissionPlugin: FractionPerDay)
``staging``                 a submission's screened notebooks written for nbgrader
``process_limits``          a process run with wall-clock and memory limits, tree killed
``box``                     the bubblewrap box a kernel runs in: its command line, its
                            private folder's life
``kernels``                 every kernel in a box of its own, one started ahead
                            (nbgrader's kernel manager and client)
``preprocessors``           nbgrader's preprocessors as the grader runs them (Execute
                            sandboxed, the hidden tests cleared from test cells only)
``repair``                  the probe (where a run stops) and the cell replaced
``gradebook``               the gradebook: SQLite for one grader, PostgreSQL for several
``gradebook_guard``         what anything but the grader wrote to the gradebook, undone
``item_analysis``           how each question of a graded class behaved: facility,
                            discrimination, the options chosen (mapped back through each
                            student's order), the flags; a CSV and instructor-only pages
``judgement``               scores, reasons, the re-check applied, the status
``warm``                    nbgrader imported once per worker, each run a fork of it
``autograde``               nbgrader on a batch, or on one submission with repair
``cluster``                 the Dask cluster the batches run on (local or remote)
``feedback``                the HTML feedback without hidden tests
``similarity``              the pairs of submissions whose answers are unusually alike
                            (copydetect), an instructor-only page under autograded/
``report``                  grades.csv, the report CSV, the printed summary
``lms``                     the grades as Canvas's and Moodle's import CSVs (nbgrader
                            export plugins, a roster from the LMS)
``pipeline``                a class graded: screening here, autograding on the cluster
``cli``                     the command line
==========================  ============================================================

A simulated class to grade (each submission with the score it should get) is the tests'
and the benchmarks' (``tests/support/simulate/``), not the grader's. This package's
``__init__`` imports no stage: import the stage you need. It leaves out jsonschema's slow
optional import in every process that grades (the grader and the Dask workers:
``tools.common.nbgrader_cli.skip_slow_imports``), before nbformat is imported.
"""

from tools.common.nbgrader_cli import skip_slow_imports

skip_slow_imports()
