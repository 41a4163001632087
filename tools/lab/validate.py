"""The lab's Validate button says what ``make check`` says.

nbgrader's Validate button (its JupyterLab extension) saves the notebook, posts its path
to ``/assignments/validate`` and shows the answer in a dialog. nbgrader's own validator
lists every failing test cell with its traceback, so an unanswered question shows as a
``NameError`` from its test. This server extension answers that request instead
(nbgrader's ``validate_assignment`` extension is turned off in
``jupyter/jupyter_server_config.py``): the notebook is run as ``make check`` runs it
(``tools.lab.notebook_check.check``), and each question that is not attempted or whose visible test
failed is listed in nbgrader's answer format (its ``failed`` list: the question, then
``make check``'s words for it, HTML-escaped, since the dialog shows them as HTML), then the
notebook's warnings (locked cells changed). A notebook whose questions all have the form
asked for gets nbgrader's empty answer ("Success!"). ``/nbgrader_version`` is answered by
nbgrader's own handler. Only a notebook under the server's root is run, and never one in a
folder of students' work (``tools.lab.student_work.STUDENT_FOLDERS``): in the instructor's
lab that would run a student's code as the instructor, outside the grader's box.
"""

from __future__ import annotations

import asyncio
import html
import json
from pathlib import Path

from tornado import web

from tools.lab.notebook_check import FORMAT_OK, NOT_ATTEMPTED, check
from tools.lab.student_work import STUDENT_FOLDERS

HINT = "write your answer in place of `raise NotImplementedError()`, then run it"


def answer(path: Path, timeout: int = 120) -> dict:
    """nbgrader's validate answer for the notebook at ``path``, from ``make check``'s run."""
    questions, warnings = check(path, timeout)
    failed = []
    for q in questions:
        if q.written or q.status == FORMAT_OK:
            continue
        said = f"{q.status}: {q.message}" if q.message else q.status
        if q.status == NOT_ATTEMPTED:
            said += f" ({HINT})"
        title = f"{q.answer_id} ({q.points:g} pt{'s' if q.points != 1 else ''})"
        failed.append({"source": f"{title}  {q.title}".strip(), "error": html.escape(said),
                       "raw_error": said})
    failed += [{"source": "warning", "error": html.escape(w), "raw_error": w} for w in warnings]
    return {"failed": failed} if failed else {}


def refusal(root: Path, target: Path) -> str:
    """Why the notebook at ``target`` (resolved) is not run for the lab whose root is ``root``
    (resolved), or ``""``: only a notebook of the lab, and no student's submission."""
    if not target.is_relative_to(root) or target.suffix != ".ipynb" or not target.is_file():
        return "not a notebook of this course"
    if STUDENT_FOLDERS & set(target.relative_to(root).parts):
        return "a student's submission is checked by grading it, not here"
    return ""


def _handlers(root: Path) -> list:
    from jupyter_server.base.handlers import JupyterHandler
    from nbgrader.server_extensions.validate_assignment.handlers import NbGraderVersionHandler

    class ValidateHandler(JupyterHandler):
        """POST ``path``: the notebook checked as ``make check`` checks it."""

        @web.authenticated
        async def post(self):
            try:
                path = self.get_argument("path")
            except web.MissingArgumentError:
                path = (self.get_json_body() or {}).get("path", "")
            target = (root / str(path)).resolve()
            why = refusal(root, target)
            if why:
                raise web.HTTPError(403, why)
            try:
                value = await asyncio.get_running_loop().run_in_executor(None, answer, target)
                out = {"success": True, "value": value}
            except Exception as exc:  # noqa: BLE001 - the dialog says what went wrong
                out = {"success": False, "value": f"{type(exc).__name__}: {exc}"}
            self.finish(json.dumps(out))

    return [(r"/assignments/validate", ValidateHandler),
            (r"/nbgrader_version", NbGraderVersionHandler)]


def _jupyter_server_extension_points():
    return [{"module": "tools.lab.validate"}]


def _load_jupyter_server_extension(serverapp) -> None:
    from jupyter_server.utils import url_path_join

    base = serverapp.web_app.settings["base_url"]
    handlers = _handlers(Path(serverapp.root_dir).expanduser().resolve())
    serverapp.web_app.add_handlers(".*$", [(url_path_join(base, p), h) for p, h in handlers])
