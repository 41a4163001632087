"""The environment variables the course reads: each one's name, default, who sets it, meaning.

``VARIABLES`` holds one ``Variable`` for each ``MEMCOURSE_*`` name the course's code,
configuration and tests read or set, sorted by name. Its fields are short Markdown text:
``default`` is the value used when the variable is unset, or ``unset:`` and what happens
then; ``set_by`` says who gives it a value. ``table()`` renders them as the table of
docs/maintainer.md, *Environment variables* (tests/test_environment_variables.py checks
that the page shows it, and that the registry and the repository's files name the same
variables).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    name: str
    default: str  # the value used when unset, or "unset: <what happens>"
    set_by: str
    meaning: str


MAKE_HUB = "`tools/hub/local.py`"  # `make hub`: for the proxy and JupyterHub it starts
AT_SPAWN = "the hub, at each user's spawn"  # tools/hub/jupyterhub_config.py's pre_spawn_hook

VARIABLES = (
    Variable("MEMCOURSE_CELL_TIMEOUT", "`30`", "the instructor",
             "seconds one cell may run when autograding (nbgrader's `Execute.timeout`, "
             "`make grade`'s `--cell-timeout`)"),
    Variable("MEMCOURSE_DB_URL", "unset: `sqlite:///<course>/gradebook.db`",
             "the instructor (a PostgreSQL server for a cluster or several graders)",
             "SQLAlchemy URL of nbgrader's gradebook"),
    Variable("MEMCOURSE_EXCHANGE", "`/srv/nbgrader/exchange`",
             f"{MAKE_HUB}; {AT_SPAWN}",
             "nbgrader's exchange folder (where `make hub` makes it, where a lab looks for it)"),
    Variable("MEMCOURSE_EXCHANGE_FOUND", "unset: as `0`",
             f"`make lab` (`tools/lab/launch.py`); `binder/start` (`0`); {AT_SPAWN} (`1`); "
             "the Kubernetes values (`1`)",
             "`1`: an exchange exists, so the lab shows the assignment list, nbgitpuller "
             "and a student's scores page"),
    Variable("MEMCOURSE_EXCHANGE_URL", "unset: the exchange service's plugins stop and say so",
             f"{AT_SPAWN} (one-user mode); the Kubernetes values' pre-spawn hook",
             "address of the course's exchange service (`tools/hub/hub_exchange.py`), "
             "`.../services/exchange/`, for its nbgrader plugins"),
    Variable("MEMCOURSE_EXTENSIONS", "unset: no extension", f"{AT_SPAWN} (a student's server)",
             "the student's own due dates, JSON `{session: due date}` from `extensions.yml`, "
             "shown on their scores page"),
    Variable("MEMCOURSE_HUB_API_PORT", "`8081`", f"{MAKE_HUB}, a free port",
             "port of JupyterHub's own API on 127.0.0.1"),
    Variable("MEMCOURSE_HUB_CLASS_LIST", "unset: no seat given",
             f"{MAKE_HUB}, once the instructor exists",
             "the instructor's `class-list.csv`, whose seats the hub gives its students"),
    Variable("MEMCOURSE_HUB_COURSE", "unset: no course folder",
             f"{MAKE_HUB} (`tools/hub/staff.py`)",
             "the instructor's course folder: the graders' lab root, the students' "
             "`extensions.yml`"),
    Variable("MEMCOURSE_HUB_COURSE_REPO", "unset: students start at `/lab`", MAKE_HUB,
             "URL of the published course repository a student's first page pulls "
             "(nbgitpuller)"),
    Variable("MEMCOURSE_HUB_EXCHANGE_ARGS", "unset: the service's defaults",
             f"{MAKE_HUB} (one-user mode)",
             "the exchange service's limits: `--share-mb`, `--submission-mb`"),
    Variable("MEMCOURSE_HUB_EXCHANGE_PORT", "unset: no exchange service",
             f"{MAKE_HUB} (one-user mode), a free port",
             "port of the course's exchange service on 127.0.0.1, which the hub then runs"),
    Variable("MEMCOURSE_HUB_EXPOSE_APP", "unset: not exposed", "the hub's end-to-end tests (`1`)",
             "`1`: each user's JupyterLab exposes its app object to the page"),
    Variable("MEMCOURSE_HUB_GRADERS", "unset: no grader",
             f"{MAKE_HUB} (`tools/hub/staff.py`), from `TAS=`",
             "comma-separated teaching assistants: the instructor's lab, in the course folder"),
    Variable("MEMCOURSE_HUB_GROUP", "`memcourse`", MAKE_HUB,
             "the Unix group whose users may log in (`<group>-instructors`: the "
             "instructor's lab)"),
    Variable("MEMCOURSE_HUB_INSTRUCTORS", "`mc-instructor`", MAKE_HUB,
             "comma-separated instructors: the hub's admins, with the instructor's lab"),
    Variable("MEMCOURSE_HUB_LAB", "`/srv/memcourse/lab`", MAKE_HUB,
             "the copy of the lab's files (`jupyter/`, `tools/lab/`, `book/`) users' servers run"),
    Variable("MEMCOURSE_HUB_LIMITS", "unset: `make hub`'s limits",
             f"{MAKE_HUB}, from `HUB_LIMITS=`",
             "each user's cgroup and rlimits, `key=value,...` (`tools/hub/limits.py`)"),
    Variable("MEMCOURSE_HUB_ONE_USER", "unset: each user's server as that user",
             f"{MAKE_HUB}, from `ONE_UNIX_USER=1` (`mc-pod`)",
             "the Unix user every student's server runs as (one-user mode, as on Kubernetes)"),
    Variable("MEMCOURSE_HUB_PORT", "`8000`", f"{MAKE_HUB}, from `HUB_PORT=`",
             "the hub's public port (the proxy's) on 127.0.0.1"),
    Variable("MEMCOURSE_HUB_PREFIX", "`/srv/memcourse`", "the person running `make hub`",
             "where `make hub` keeps the users' environment, node, the lab's files and its state"),
    Variable("MEMCOURSE_HUB_PROXY_API", "`8001`", f"{MAKE_HUB}, a free port",
             "port of the proxy's API on 127.0.0.1"),
    Variable("MEMCOURSE_HUB_START_TIMEOUT", "`180`", "the person running `make hub`",
             "seconds a user's server may take to start and to answer"),
    Variable("MEMCOURSE_HUB_STATE", "`/srv/memcourse/hub`", MAKE_HUB,
             "the hub's folder: its database, cookie secret and PID file"),
    Variable("MEMCOURSE_HUB_SUBDOMAINS", "`1`", "the person running `make hub`",
             "`1`: each user's server on an origin of its own, `<user>.localhost`"),
    Variable("MEMCOURSE_HUB_USERS", "unset: no student in nbgrader's group", MAKE_HUB,
             "comma-separated hub users; those neither instructor nor grader are nbgrader's "
             "students"),
    Variable("MEMCOURSE_HUB_VENV", "`/srv/memcourse/venv`", MAKE_HUB,
             "the users' virtual environment (`jupyterhub-singleuser`, the kernel's Python)"),
    Variable("MEMCOURSE_PAPER", "`letter`", "`make pdf` (`PAPER=`)",
             "the PDF book's paper, `letter` or `a4`"),
    Variable("MEMCOURSE_PUBLIC_REPO", "`/srv/memcourse/public/memcourse`",
             f"{AT_SPAWN} (from a `file://` course repository)",
             "the bare repository `make publish` publishes the course to"),
    Variable("MEMCOURSE_ROLE", "`student`",
             f"`make lab` (`ROLE=`); `binder/start`; {AT_SPAWN}; the Kubernetes values",
             "`student` or `instructor` (Formgrader, the course list, sandboxed kernels)"),
    Variable("MEMCOURSE_SANDBOX", "`bwrap`",
             "the grader, for nbgrader (from `--sandbox`); the instructor (`--sandbox`'s default)",
             "`bwrap`: every graded kernel in the sandbox; `off`: run as the grader (the default of "
             "`c.Sandbox.mode`)"),
    Variable("MEMCOURSE_SANDBOX_DISK_MB", "`512`", "the instructor",
             "MB of a sandboxed kernel's private folder, and of its `/tmp` (the default of "
             "`c.Sandbox.disk_mb`)"),
    Variable("MEMCOURSE_SANDBOX_FSIZE_MB", "`512`", "the instructor",
             "largest file in MB a sandboxed kernel writes (the grader run as root; the default "
             "of `c.Sandbox.fsize_mb`)"),
    Variable("MEMCOURSE_SANDBOX_MEMKIT", "unset: no memkit in the sandbox",
             "the grader, for nbgrader",
             "the memkit package folder, bound read-only in the sandbox (the default of "
             "`c.Sandbox.memkit`)"),
    Variable("MEMCOURSE_SANDBOX_NPROC", "`256`", "the instructor",
             "processes of a sandboxed kernel's user (the grader run as root; the default of "
             "`c.Sandbox.nproc`)"),
    Variable("MEMCOURSE_SANDBOX_TMP", "unset: the system's temporary folder",
             "the grader, for nbgrader (the run's folder of boxes)",
             "where the sandboxes' private folders are made (the default of `c.Sandbox.tmp`)"),
    Variable("MEMCOURSE_SCHEDULER", "unset: a local cluster of `--jobs` workers", "the instructor",
             "address of the Dask scheduler `make grade` grades on (`tcp://host:8786`)"),
    Variable("MEMCOURSE_SEAT", "unset: options shuffled from the student id",
             f"{AT_SPAWN} (the class list); the grader, for each submission",
             "the student's seat on the class list, which orders their options"),
    Variable("MEMCOURSE_SECRET_TOKEN", "unset: nothing reads it", "the grader's sandbox test",
             "a secret in the grader's environment that no graded kernel may see"),
    Variable("MEMCOURSE_STUDENT_ID", "unset: `JUPYTERHUB_USER`, the id file, or `self-study`",
             "the grader, in the sandboxed kernel and its own check; the instructor (to see a "
             "student's numbers)",
             "the student id whose numbers `memkit.variants` draws"),
    Variable("MEMCOURSE_WARM_TEST", "unset: nothing reads it", "the warm nbgrader's test",
             "a marker given to a warm nbgrader run and read back from inside it"),
)

COLUMNS = ("variable", "default", "set by", "meaning")


def _row(cells) -> str:
    return "| " + " | ".join(cell.replace("|", r"\|") for cell in cells) + " |"


def table() -> str:
    """``VARIABLES`` as a Markdown table: variable, default, set by, meaning."""
    lines = [_row(COLUMNS), _row(["---"] * len(COLUMNS))]
    lines += [_row([f"`{v.name}`", v.default, v.set_by, v.meaning]) for v in VARIABLES]
    return "\n".join(lines)
