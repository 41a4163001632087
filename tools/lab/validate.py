"""The lab's Validate button says what ``make check`` says.

nbgrader's Validate button (its JupyterLab extension) posts the notebook's path to
``/assignments/validate`` and shows the answer in a dialog: nbgrader's own validator lists
every failing test cell with its traceback, so an unanswered question shows as a
``NameError`` from its test. This server extension answers that request instead (nbgrader's
``validate_assignment`` extension is turned off in ``jupyter/jupyter_server_config.py``): the
notebook is run as ``make check`` runs it (``tools.lab.check.check``), and each question that
is not answered or whose visible test failed is listed in nbgrader's answer format (its
``failed`` list: the question, then ``make check``'s line for it), with the notebook's
warnings (locked cells changed). A notebook whose questions all have the form asked for
gets nbgrader's empty answer ("Success!"). ``/nbgrader_version`` is nbgrader's own handler.

Depends on: ``tools.lab.check``.
"""

from __future__ import annotations

import asyncio
import html
import json
from pathlib import Path

from tornado import web

from tools.lab.check import FORMAT_OK, check


def answer(path: Path, timeout: int = 120) -> dict:
    """nbgrader's validate answer for the notebook at ``path``, from ``make check``'s run."""
    questions, warnings = check(path, timeout)
    failed = []
    for q in questions:
        if q.written or q.status == FORMAT_OK:
            continue
        said = f"{q.status}: {q.message}" if q.message else q.status
        if q.status == "not attempted":
            said += " (write your answer in place of `raise NotImplementedError()`, then run it)"
        title = f"{q.answer_id} ({q.points:g} pt{'s' if q.points != 1 else ''})"
        failed.append({"source": f"{title}  {q.title}".strip(), "error": html.escape(said),
                       "raw_error": said})
    failed += [{"source": "warning", "error": html.escape(w), "raw_error": w} for w in warnings]
    return {"failed": failed} if failed else {}


def _handlers():
    from jupyter_server.base.handlers import JupyterHandler
    from jupyter_server.utils import url_path_join
    from nbgrader.server_extensions.validate_assignment.handlers import NbGraderVersionHandler

    class ValidateHandler(JupyterHandler):
        """POST ``path``: the notebook checked as ``make check`` checks it."""

        @web.authenticated
        async def post(self):
            try:
                path = self.get_argument("path")
            except web.MissingArgumentError:
                path = (self.get_json_body() or {}).get("path", "")
            root = Path(self.settings["root_dir"]).resolve()
            target = (root / path).resolve()
            if not target.is_relative_to(root) or target.suffix != ".ipynb" or not target.is_file():
                raise web.HTTPError(403, "not a notebook of this course")
            try:
                value = await asyncio.get_running_loop().run_in_executor(None, answer, target)
                out = {"success": True, "value": value}
            except Exception as exc:  # noqa: BLE001 - the dialog says what went wrong
                out = {"success": False, "value": f"{type(exc).__name__}: {exc}"}
            self.finish(json.dumps(out))

    return url_path_join, [
        (r"/assignments/validate", ValidateHandler),
        (r"/nbgrader_version", NbGraderVersionHandler),
    ]


def _jupyter_server_extension_points():
    return [{"module": "tools.lab.validate"}]


def _load_jupyter_server_extension(serverapp) -> None:
    join, handlers = _handlers()
    base = serverapp.web_app.settings["base_url"]
    serverapp.web_app.add_handlers(".*$", [(join(base, pattern), h) for pattern, h in handlers])
