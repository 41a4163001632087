"""What every role's tools share: small helpers that import no role package.

==================  ================================================================
``text``            what a student wrote, shown as text: a CSV cell a spreadsheet
                    reads as text, a line a terminal shows with its control
                    characters escaped, a long list of like reasons counted
``sanitize``        what a submission shows a person (markdown, outputs, pages)
                    cleaned with nh3: nothing runs in the reader's browser (the
                    grader's feedback, the lab's Formgrader pages)
``nbgrader_cli``    nbgrader's commands run as the course runs them (its
                    environment, without the slow optional imports)
``student_run``     one student's run of an assignment's cells in this process
                    (their numbers drawn, the reference code importable)
``nbgrader_cells``  what nbgrader's metadata says a cell is (grade, solution, locked,
                    task, test), through ``nbgrader.utils``
``safe_files``      a file someone else controls read without trusting it: regular
                    files only, no link followed, every read bounded
``ports``           a free port of 127.0.0.1, and whether a port is free
``chromium``        Debian's chromium launched headless through Playwright, its
                    flags for a machine without internet
``environment``     the environment variables the course reads: each one's default,
                    who sets it, what it means, and their table for the docs
==================  ================================================================

Every package of ``tools`` may import this one; it imports none of them.
"""
