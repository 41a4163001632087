"""nbgrader's commands, run as the course runs them: in a course folder, with this Python's
scripts first on PATH (nbgrader calls alembic), the course's tools importable
(``nbgrader_config.py`` names its preprocessors and plugins), and without the optional
imports that cost every process seconds (``skip_slow_imports``).

Used by the release (``nbgrader generate_assignment``) and by grading (autograde, feedback,
export, the warm nbgrader of each worker).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tools import ROOT

# jsonschema (which nbformat, and so nbgrader, imports) loads the optional package
# rfc3987_syntax when it is installed, and that package compiles a grammar at import: about
# 1.5 s of CPU (3 s on a loaded machine) in every process that reads a notebook, more than
# an nbgrader process spends on a submission. It checks the "iri" formats of a JSON schema;
# the notebook schemas have none, so the course's processes do without it.
SLOW_OPTIONAL_IMPORTS = ("rfc3987_syntax",)


def skip_slow_imports() -> None:
    """Leave out ``SLOW_OPTIONAL_IMPORTS`` in this process (call it before nbformat is imported)."""
    for name in SLOW_OPTIONAL_IMPORTS:
        sys.modules.setdefault(name, None)  # an import of it raises ImportError


def nbgrader_command() -> list[str]:
    """The nbgrader of this Python environment (the course's .venv when run from it).

    nbgrader's own entry point (what the ``nbgrader`` script runs), started without
    ``SLOW_OPTIONAL_IMPORTS``.
    """
    launch = (
        "import sys; "
        + "".join(f"sys.modules.setdefault({name!r}, None); " for name in SLOW_OPTIONAL_IMPORTS)
        + "sys.argv[0] = 'nbgrader'; "
        "from nbgrader.apps.nbgraderapp import main; sys.exit(main())"
    )
    return [sys.executable, "-c", launch]


def tool_env(extra: dict | None = None) -> dict:
    """The environment for nbgrader: this Python's scripts first on PATH (it calls alembic),
    the course's tools importable (``nbgrader_config.py`` names its preprocessor and plugin)
    from whatever course folder it runs in."""
    env = {**os.environ, **(extra or {})}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(ROOT) not in paths:
        env["PYTHONPATH"] = os.pathsep.join(paths + [str(ROOT)])
    return env


def run_nbgrader(
    args: list[str], cwd: Path, timeout: float | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run one nbgrader command in the course directory ``cwd`` and capture its output."""
    return subprocess.run(
        nbgrader_command() + list(args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=tool_env(env),
    )
