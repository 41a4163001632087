"""Open the course in JupyterLab, as a student (the default) or as an instructor.

    python -m tools.lab.launch                      (make lab)
    python -m tools.lab.launch --role instructor    (make lab ROLE=instructor)
    python -m tools.lab.launch --port 8890 --no-browser

The course's lab is JupyterLab with the configuration in ``jupyter/`` (put on
JUPYTER_CONFIG_PATH and JUPYTER_PATH for this server only; nothing is written to
~/.jupyter):

* chapters (``book/*.md``) open as notebooks, drawn as the book draws them (MyST boxes,
  maths, badges, links to the other chapters, the glossary's terms) and saving one
  changes no byte of it unless a cell was edited (``tools/lab/contents.py``);
* the kernel is "Python 3", the name the chapters' front matter carries;
* no pop-up asking to fetch Jupyter news;
* a student sees nbgrader's Validate button on assignment notebooks (not on chapters)
  and the Assignments tab only where an nbgrader exchange exists (a course hub); an
  instructor also gets Create Assignment, Formgrader and the course list.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from tools import ROOT

CONFIG = ROOT / "jupyter"
GENERATED = ROOT / "_build" / "lab"
DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"  # nbgrader's default; MEMCOURSE_EXCHANGE overrides
ROLES = ("student", "instructor")

# nbgrader's JupyterLab plugins a student does not use
INSTRUCTOR_PLUGINS = [
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:course-list",
]
ASSIGNMENT_LIST = "@jupyter/nbgrader:assignment-list"
MENU = "@jupyter/nbgrader:menu"  # a student's way to the assignment list, where there is one


def exchange_dir(env: dict | None = None) -> Path:
    """nbgrader's exchange for a server started with ``env`` (default: this process's)."""
    return Path((os.environ if env is None else env).get("MEMCOURSE_EXCHANGE", DEFAULT_EXCHANGE))


def page_config(role: str, exchange: bool) -> dict:
    """JupyterLab's page config: the nbgrader plugins this role does not see."""
    disabled = [] if role == "instructor" else list(INSTRUCTOR_PLUGINS)
    if role != "instructor" and not exchange:
        disabled += [ASSIGNMENT_LIST, MENU]
    return {"disabledExtensions": {name: True for name in disabled}}


def _path(*parts, inherited: str | None = None) -> str:
    items = [str(p) for p in parts]
    if inherited:
        items.append(inherited)
    return os.pathsep.join(items)


def environment(role: str = "student", base: dict | None = None) -> dict:
    """The environment the course's server runs in (its page config written first)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, not {role!r}")
    env = dict(os.environ if base is None else base)
    exchange = exchange_dir(env).is_dir()
    generated = GENERATED / role
    (generated / "labconfig").mkdir(parents=True, exist_ok=True)
    (generated / "labconfig" / "page_config.json").write_text(
        json.dumps(page_config(role, exchange), indent=1) + "\n"
    )
    env["JUPYTER_CONFIG_PATH"] = _path(generated, CONFIG, inherited=env.get("JUPYTER_CONFIG_PATH"))
    env["JUPYTER_PATH"] = _path(CONFIG, inherited=env.get("JUPYTER_PATH"))
    env["PYTHONPATH"] = _path(ROOT, inherited=env.get("PYTHONPATH"))
    # a terminal of the lab finds the course's nbgrader, python, jupyter first
    env["PATH"] = _path(Path(sys.executable).parent, inherited=env.get("PATH"))
    env["MEMCOURSE_ROLE"] = role
    env["MEMCOURSE_EXCHANGE_FOUND"] = "1" if exchange else "0"
    return env


def command(port: int | None = None, open_browser: bool = True, extra=()) -> list[str]:
    """The command line of the course's JupyterLab server."""
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={ROOT}",
            "--LabApp.default_url=/lab/tree/book"]
    if port is not None:
        argv += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if not open_browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # a container's root; JupyterLab refuses it otherwise
    return argv + list(extra)


def say_where(role: str, env: dict) -> None:
    print(f"The course's JupyterLab, as {'an instructor' if role == 'instructor' else 'a student'}.")
    if role == "student":
        if env["MEMCOURSE_EXCHANGE_FOUND"] == "1":
            print(f"nbgrader exchange: {exchange_dir(env)} (the Assignments tab fetches and submits).")
        else:
            print("No nbgrader exchange on this machine, so no Assignments tab: your exercises are"
                  " in exercises/; check them with `make check`, hand them in as your teacher says.")
        print("Instructors: make lab ROLE=instructor")


# -- the server extension (custom CSS from jupyter/custom) ----------------------------
def _jupyter_server_extension_points():
    return [{"module": "tools.lab.launch"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Serve jupyter/custom/custom.css as JupyterLab's custom CSS (LabApp.custom_css)."""
    paths = serverapp.web_app.settings.setdefault("static_custom_path", [])
    custom = str(CONFIG / "custom")
    if custom not in paths:
        paths.insert(0, custom)  # the list LabApp's /custom/ handler searches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.lab.launch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--role", choices=ROLES, default=os.environ.get("ROLE") or "student")
    parser.add_argument("--port", type=int)
    parser.add_argument("--no-browser", action="store_true")
    args, extra = parser.parse_known_args(argv)
    env = environment(args.role)
    say_where(args.role, env)
    argv = command(args.port, not args.no_browser, extra)
    os.execvpe(argv[0], argv, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
