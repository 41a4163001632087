# The course's JupyterLab (`make lab`, `python -m tools.lab.launch`): read by Jupyter because
# tools/lab/launch.py puts this folder on JUPYTER_CONFIG_PATH. MEMCOURSE_ROLE is "student"
# (the default) or "instructor"; MEMCOURSE_EXCHANGE_FOUND says whether an nbgrader
# exchange exists (a hub's), which decides whether the assignment list is shown.
import os

c = get_config()  # noqa: F821 (Jupyter's config loader provides it)
instructor = os.environ.get("MEMCOURSE_ROLE", "student") == "instructor"
exchange = os.environ.get("MEMCOURSE_EXCHANGE_FOUND") == "1"

# chapters: rendered as the book (badges, links, glossary) and saved unchanged
c.ServerApp.contents_manager_class = "tools.lab.contents.CourseContentsManager"
# jupyter/custom/custom.css: the badges' colours, no Validate button on chapters
c.LabApp.custom_css = True
c.ServerApp.jpserver_extensions = {
    "tools.lab.launch": True,
    # what a student wrote runs in nobody's browser: Formgrader's pages sanitized, every
    # page under a Content-Security-Policy, a submission's files in a sandbox
    "tools.lab.student_work": True,
    # nbgrader's Validate button answered as `make check` answers (tools/lab/validate.py):
    # "not attempted", or the visible test's message, not its traceback
    "nbgrader.server_extensions.validate_assignment": False,
    "tools.lab.validate": True,
    "nbgrader.server_extensions.formgrader": instructor,
    # MathJax 2 served by the lab: Formgrader's page of a submission typesets its maths
    # with it, not from a CDN (tools/lab/student_work.py)
    "jupyter_server_mathjax": instructor,
    "nbgrader.server_extensions.course_list": instructor,
    "nbgrader.server_extensions.assignment_list": instructor or exchange,
    # on the course hub: the course pulled into the home (nbgitpuller's git-pull links),
    # and the student's scores page (every session's score, late penalty and feedback)
    "nbgitpuller": exchange,
    "tools.lab.scores_page": exchange and not instructor,
}

# a student's notebook (under submitted/, autograded/, feedback/) opened in the instructor's
# lab runs in the grader's box, "Python 3 (sandboxed)", unless the instructor picks
# "Python 3 (as me)" for it (tools/lab/boxed_kernels.py); a student's lab has Python 3 only
if instructor:
    c.ServerApp.kernel_manager_class = "tools.lab.boxed_kernels.CourseKernels"
else:
    c.KernelSpecManager.allowed_kernelspecs = {"python3"}

# a terminal is the server's own environment (the course's Python first on PATH, as the
# server was started with): not a login shell, whose /etc/profile would put it back
c.ServerApp.terminado_settings = {"shell_command": [os.environ.get("SHELL") or "/bin/sh"]}

# kernels talk to the server over encrypted channels (CurveZMQ), so they print no
# warning about plain-text TCP
c.KernelManager.transport_encryption = "auto"

# Formgrader and the other nbgrader pages are shown in JupyterLab in an iframe of the same
# server: allow that framing ('self'), which JupyterHub's single-user server otherwise
# forbids ("frame-ancestors 'none'", and Formgrader's tab says "refused to connect").
# (HTML pages get a fuller policy from tools/lab/student_work.py, with the same framing.)
c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
