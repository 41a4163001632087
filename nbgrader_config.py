# nbgrader configuration of the course "Transformers as memory".
#
# nbgrader reads this file from the directory it runs in (the course root).
# The standard nbgrader layout, with two folders renamed:
#
#   solutions/<assignment>/    the instructor notebooks (nbgrader's "source")
#   exercises/<assignment>/    the student notebooks (nbgrader's "release"), generated
#   submitted/<student>/<assignment>/, autograded/, feedback/, gradebook.db, grades.csv
#                              the instructor's working places, all git-ignored
#
# Environment variables (all optional):
#   MEMCOURSE_DB_URL        SQLAlchemy URL of the gradebook, e.g.
#                           postgresql+psycopg2://user:password@host/memcourse
#                           (default: sqlite:///<course root>/gradebook.db)
#   MEMCOURSE_CELL_TIMEOUT  seconds one cell may run when autograding (default 30)
#   MEMCOURSE_EXCHANGE      nbgrader exchange folder of a shared JupyterHub
#                           (default: nbgrader's own, /srv/nbgrader/exchange)
#
# The sandbox graded kernels run in is set here too, as c.Sandbox.<trait> (disk_mb, nproc,
# fsize_mb, ...; each defaults to its MEMCOURSE_SANDBOX* variable): docs/grading-safely.md.
import os

c = get_config()  # noqa: F821  (injected by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "memcourse"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
# answer_key.py: the solutions' reference code (the hidden tests' answer keys), kept out of
# the release (generate_assignment) and of the autograded folders, whose other files reach
# the students' kernels (autograde copies the source folder's files there)
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                            "answer_key.py"]

# The gradebook: SQLite in the course root unless a URL is given (PostgreSQL for
# several graders working at once).
if os.environ.get("MEMCOURSE_DB_URL"):
    c.CourseDirectory.db_url = os.environ["MEMCOURSE_DB_URL"]

if os.environ.get("MEMCOURSE_EXCHANGE"):
    c.Exchange.root = os.environ["MEMCOURSE_EXCHANGE"]

# Autograding. Every cell gets a time limit (a cell of these assignments runs in a
# few seconds); a cell that overruns is interrupted and counts as failed.
c.Execute.timeout = int(os.environ.get("MEMCOURSE_CELL_TIMEOUT", "30"))
c.Execute.interrupt_on_timeout = True
c.Execute.startup_timeout = 120
# Plain tracebacks: the failing line of each frame, not the lines around it (which would
# show the hidden tests in the feedback).
c.Execute.extra_arguments = ["--InteractiveShell.xmode=Plain"]
# A test cell the student deleted is put back from the gradebook, so it still counts.
c.OverwriteCells.add_missing_cells = True
# A cell that prints without end keeps its first lines only.
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 60

# Feedback shows each test cell without its hidden tests, so that the hidden tests stay
# hidden from one class to the next. (`make grade` also reduces the error of a failing test
# to its message: the traceback would show the failing hidden line; tools/grading/feedback.py.)
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# The release: each notebook's header says when it is due (schedule.yml) and what lateness
# costs, added before nbgrader locks the cells (tools/release/due_header.py); then nbgrader's
# own preprocessors, in nbgrader's order. Where the course's tools cannot be imported (a
# lab of the hub, which has only tools/lab/), the release is nbgrader's own.
try:
    from tools.release.due_header import DueDateHeader
except ImportError:
    DueDateHeader = None
if DueDateHeader is not None:
    from nbgrader.converters import GenerateAssignment

    c.GenerateAssignment.preprocessors = [DueDateHeader] + list(
        GenerateAssignment.class_traits()["preprocessors"].default())

# Late submissions. A submission's time is its timestamp.txt (on the course hub, written by
# the collect step from the server's clock); its due date is schedule.yml's, written into the
# gradebook by `make grade`. The penalty: a fraction of each notebook's score per day (or part
# of a day) late, capped (nbgrader's LateSubmissionPlugin interface, tools/grading/lateness.py).
# It is shown in grades.csv (late_submission_penalty), the report and the feedback.
c.AssignLatePenalties.plugin_class = "tools.grading.lateness.FractionPerDay"
c.FractionPerDay.per_day = 0.10
c.FractionPerDay.cap = 0.50

# The stubs that replace the solutions in the released notebooks.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# zip_collect: a class archive holds one folder per student, named by the student id,
# with that student's notebooks in it (directly, or in the folder session-N/). `make grade
# ZIP=` screens the archive first and files each notebook under the student whose folder
# holds it (tools.grading.collect): a classmate's folder inside it is refused, not filed.
c.FileNameCollectorPlugin.named_regexp = (
    r".*/(?P<student_id>(?!session-\d+/)[^/.][^/]*)/(?:session-\d+/)?"
    r"(?P<file_id>[^/.][^/]*\.ipynb)$"
)
