"""Calibration of every graded question, before a term: honest answers pass, plausible wrong
answers fail, and each student's answers are their own.

    python -m tools.grading.calibration            the full run (make calibrate)
    python -m tools.grading.calibration --ids 20 --seeds 3 --only session-3/exercises
    python -m tools.grading.calibration --table    the instructor's guide's table of the
                                                   questions that vary

For every graded question of solutions/, the reference method runs in this process for many
student ids (and, for a Monte Carlo answer, with other seeds of the student's choosing),
and each answer is judged by the question's whole test as the grader's own check judges it
(``tools.grading.recheck``): no kernel is started. The report says, per question, the honest
answers tried and rejected, each slip's acceptance, the distinct keys, and each measured
answer's accepted band against its honest spread (docs/instructor.md, "Calibration").

=============  ===============================================================
``book``       the numbers the book prints (the built book, else its chapters)
``catalog``    the slips of each question, the questions common to everyone and
               why, the failures known and explained
``engine``     one notebook's cells run for one id; an answer judged whole; a seed
               moved; an accepted band found by bisection
``run``        one notebook calibrated over a sample of ids: the counts
``report``     the CSVs and the instructor's page, with the plots
=============  ===============================================================

Stage: none (beside the grader: used by ``make calibrate`` and the tests, nothing of the
grader imports it).
"""
