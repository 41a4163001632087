"""The student's JupyterLab: the course opened, read and checked as a student meets it.

In the order a student meets them:

====================  ================================================================
``launch``            ``make lab``: JupyterLab with the course's configuration
                      (``jupyter/``), as a student or an instructor; also the server
                      extension that serves the lab's custom CSS
``contents``          the contents manager: chapters (MyST Markdown) open as notebooks
                      drawn as the book draws them, and are saved unchanged
``student_work``      a student's work shown runs nothing: Formgrader's pages sanitized
                      and guarded, every page under a Content-Security-Policy, a
                      student's files sent as downloads without scripts
``boxed_kernels``     a student's notebook in the instructor's lab runs in the
                      grader's box (unless "Python 3 (as me)" is chosen)
``notebook_check``    ``make check``: the visible tests of the student's notebooks
``self_grade``        ``make check GRADE=1``: a notebook graded by the course's own grader
                      for a student alone (where ``solutions/`` is present)
``validate``          the lab's Validate button says what ``make check`` says
``scores_page``       on the course hub: the student's scores page (every session's
                      score, late penalty and feedback, fetched from nbgrader's exchange)
====================  ================================================================

Each module imports only the ones above it, and of another package of ``tools`` only
the grader's sandbox check and box (``boxed_kernels``: ``tools.grading.kernels``), and,
for ``self_grade``, which runs the grader, its sandbox check, its gradebook and the
assignments' layout (``tools.release.layout``), and, for ``contents``, the texts the book's
extensions fill its substitutions with (``tools.book.study_time``, ``tools.book.take_away``),
besides the layer every role shares (``student_work`` cleans a submission with
``tools.common.sanitize``, the sanitizer the grader cleans feedback with;
``notebook_check`` prints through ``tools.common.text``).
"""
