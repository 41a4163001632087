"""A student's work shown in the course's lab runs nothing in the reader's browser.

A submission is written by someone who may want the instructor's account: raw HTML in a
markdown cell, an ``onerror`` in an ``<img>``, ``display(HTML("<script>..."))`` in an
answer. The instructor meets it in Formgrader (nbgrader's pages,
served by this lab: the manual grading of a submission renders the autograded notebook
as HTML in the instructor's origin), in the files of a submission, and in the lab itself
(a notebook, a feedback page opened with *Trust HTML*). This server extension, loaded by
every course lab (``jupyter/jupyter_server_config.py``), makes each of them safe without
changing nbgrader or JupyterLab:

* **Formgrader's page of one submission** is nbgrader's own handler, given the notebook
  through ``tools.common.sanitize.clean_notebook`` (the grader's sanitizer: no script,
  event handler or external URL in markdown or outputs), its markdown rendered by
  nbconvert and cleaned again (``clean_html``: markdown's own links), cells whose nbgrader grade id is
  not one nbgrader accepts (``[A-Za-z0-9_-]+``; it is written into the page's attributes)
  shown as plain cells; its Content-Security-Policy allows only nbgrader's static scripts,
  the lab's MathJax folder and the inline scripts of nbgrader's
  template, hashed from the same page rendered with no cells, so a script that got
  through would not run either. The page's maths is typeset by the lab's own MathJax
  (jupyter_server_mathjax's MathJax 2, where nbgrader's template names a CDN).
* **Formgrader's other pages** take only ids in their path (an assignment, a notebook, a
  student: nbgrader writes them into inline scripts unescaped), else 404; their policy
  hashes their own inline scripts.
* **A submission's files** (``/formgrader/submissions/<id>/<file>``, served by nbgrader
  from the student's autograded folder) and **nbconvert's exports** are sent with
  ``sandbox``: a unique origin, no script. Jupyter's ``/files/`` sandboxes a page but
  lets its scripts run (``sandbox allow-scripts``): a file under a folder of students'
  work (``submitted/``, ``autograded/``, ``feedback/``: ``STUDENT_FOLDERS``) is sent
  with ``sandbox`` alone, and one a browser would show as a page (HTML, SVG, XML) as a
  download (``Content-Disposition: attachment``).
* **JupyterLab's pages** (and every other HTML page of the server) get a policy whose
  ``script-src`` is the server's own script folders (``static/``, ``lab/extensions/``,
  ``formgrader/static/``, nbgitpuller's ``git-pull/static/`` under its base URL: not ``/files/``, where a student's files are,
  nor another server on the same origin), ``'unsafe-eval'`` (JupyterLab compiles its
  settings' schemas) and the hashes of the page's own inline scripts. The HTML viewer's document
  is a ``blob:`` of the lab's page and inherits this policy: after *Trust HTML* a page's
  inline scripts, handlers and scripts from its folder still do not run. JupyterLab
  itself draws an untrusted notebook's HTML sanitized and runs none of its scripts.

``page_policy`` builds a policy; ``inline_hashes`` finds a page's inline scripts and
event-handler attributes (with Python's HTML parser, never a regular expression).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import re
from html.parser import HTMLParser

from tornado import web

GRADE_ID = re.compile(r"[A-Za-z0-9_-]+")  # nbgrader's own rule for a grade id
PATH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*")  # an assignment, notebook, student
SANDBOX = ("sandbox; default-src 'none'; img-src 'self' data:; style-src 'self' "
           "'unsafe-inline'; font-src 'self' data:; frame-ancestors 'self'")
STUDENT_FOLDERS = {"submitted", "autograded", "feedback"}  # a student's files, wherever
ACTIVE_TYPES = ("text/html", "image/svg+xml", "application/xhtml+xml", "text/xml",
                "application/xml", "application/javascript", "text/javascript")
# the maths of Formgrader's page of a submission: MathJax 2 as the lab serves it
# (jupyter_server_mathjax, loaded by the instructor's lab), in place of the CDN that
# nbgrader's template (nbconvert's mathjax macro) names
MATHJAX = "static/jupyter_server_mathjax"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
# the template's settings as the object MathJax reads before it loads ($...$ inline); its
# text/x-mathjax-config block, which MathJax 2 would eval (the policy has no 'unsafe-eval':
# MathJax's start-up would wait on it for ever), is left as plain text
MATHJAX_EVAL = '<script type="text/x-mathjax-config">'
MATHJAX_SETTINGS = (
    "<script>window.MathJax = {tex2jax: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], "
    "displayMath: [['$$', '$$'], ['\\\\[', '\\\\]']], processEscapes: true, "
    "processEnvironments: true}, TeX: {equationNumbers: {autoNumber: 'AMS', "
    "useLabelIds: true}}, displayAlign: 'center', messageStyle: 'none'};</script>")
MATHJAX_CDN = re.compile(r'<script src="https://cdnjs\.cloudflare\.com/ajax/libs/mathjax/[^"<>]*">')
SCRIPT_TYPES = {"", "text/javascript", "application/javascript", "module",
                "text/ecmascript", "application/ecmascript"}


# -- what a page runs ----------------------------------------------------------------
class _InlineScripts(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scripts: list[str] = []
        self.handlers: list[str] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.handlers += [value or "" for name, value in attrs if name.startswith("on")]
        if tag == "script" and "src" not in attributes \
                and (attributes.get("type") or "").strip().lower() in SCRIPT_TYPES:
            self._open = []

    def handle_data(self, data):
        if self._open is not None:
            self._open.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._open is not None:
            self.scripts.append("".join(self._open))
            self._open = None


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def inline_hashes(html: str) -> set[str]:
    """CSP hash sources of the inline scripts and event-handler attributes of ``html``."""
    parser = _InlineScripts()
    parser.feed(html)
    parser.close()
    return {_sha256(text) for text in parser.scripts + parser.handlers}


def page_policy(origin: str, base_url: str, hashes: set[str], lab: bool,
                remote: tuple[str, ...] = ()) -> str:
    """The Content-Security-Policy of a page of this server: scripts from its own script
    folders only (and the ``remote`` folders, with their fonts), and the inline ones of
    ``hashes`` (JupyterLab also needs eval)."""
    base = origin + base_url.rstrip("/") + "/"
    # (git-pull/static/: nbgitpuller's page, which pulls the course into a student's home)
    folders = [f"{base}formgrader/static/"] + ([f"{base}static/", f"{base}lab/extensions/",
                                                 f"{base}git-pull/static/"] if lab else [])
    scripts = folders + list(remote) + sorted(hashes) + (["'unsafe-hashes'"] if hashes else [])
    if lab:
        scripts.append("'unsafe-eval'")
    ws = origin.replace("http", "ws", 1)
    return "; ".join([
        "default-src 'self'",
        "script-src " + " ".join(scripts),
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        " ".join(["font-src 'self' data:", *remote]),
        f"connect-src 'self' {ws}",
        "frame-src 'self' blob:",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ])


def _origin(request) -> str:
    return f"{request.protocol}://{request.host}"


# -- the pages ---------------------------------------------------------------------
def policy_transform(base_url: str):
    """The output transform that puts every HTML page of the server under
    ``page_policy`` (hashing the page's own inline scripts), unless its handler set a
    policy of its own; nbconvert's exports (a notebook's HTML) in the sandbox."""
    from tornado.web import OutputTransform

    class PagePolicy(OutputTransform):
        def __init__(self, request):
            self.request = request

        def transform_first_chunk(self, status_code, headers, chunk, finishing):
            if students_file(self.request.path, base_url):
                headers["Content-Security-Policy"] = SANDBOX
                if headers.get("Content-Type", "").split(";")[0].strip() in ACTIVE_TYPES:
                    headers["Content-Disposition"] = "attachment"
                headers["X-Content-Type-Options"] = "nosniff"
                return status_code, headers, chunk
            policy = headers.get("Content-Security-Policy", "")
            if headers.get("Content-Type", "").startswith("text/html") \
                    and "sandbox" not in policy and "script-src" not in policy:
                path = self.request.path
                if path.startswith(base_url.rstrip("/") + "/nbconvert/"):
                    headers["Content-Security-Policy"] = SANDBOX
                else:
                    page = chunk.decode("utf-8", "replace") if finishing else ""
                    headers["Content-Security-Policy"] = page_policy(
                        _origin(self.request), base_url, inline_hashes(page),
                        lab=not path.startswith(base_url.rstrip("/") + "/formgrader/"))
            return status_code, headers, chunk

    return PagePolicy


def students_file(path: str, base_url: str) -> bool:
    """Whether a request's path is a file served raw (``/files/``) from a folder of
    students' work: ``submitted/``, ``autograded/`` or ``feedback/`` anywhere in it."""
    from urllib.parse import unquote

    files = base_url.rstrip("/") + "/files/"
    if not path.startswith(files):
        return False
    return bool(STUDENT_FOLDERS & set(unquote(path[len(files):]).split("/")))


def _guarded(handler_class):
    """nbgrader's page handler taking only ids in its path."""

    class Guarded(handler_class):
        def prepare(self):
            for value in list(self.path_args) + list(self.path_kwargs.values()):
                if value is not None and not PATH_ID.fullmatch(value):
                    raise web.HTTPError(404, "not an id")
            return super().prepare()

    Guarded.__name__ = Guarded.__qualname__ = handler_class.__name__
    return Guarded


def _plain_grade_ids(nb):
    """Cells whose nbgrader grade id nbgrader would not accept, shown as plain cells."""
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader")
        if isinstance(meta, dict) and "grade_id" in meta \
                and not (isinstance(meta["grade_id"], str) and GRADE_ID.fullmatch(meta["grade_id"])):
            cell["metadata"]["nbgrader"] = {}
    return nb


def _clean_markdown2html(exporter):
    """nbconvert's markdown filter, its HTML cleaned: markdown's own syntax makes links and
    images too (``[x](javascript:...)``), after the source's HTML was cleaned."""
    from jinja2 import pass_context
    from tools.common.sanitize import clean_html

    @pass_context
    def markdown2html(context, source):
        return clean_html(exporter.markdown2html(context, source))

    return markdown2html


class _CleanExporter:
    """Formgrader's exporter, given the sanitized notebook, its markdown rendered and
    cleaned again, its page's MathJax the lab's own (``mathjax``: the URL of
    jupyter_server_mathjax's ``MathJax.js``, where nbgrader's template names a CDN);
    keeps the hashes of the template's own inline scripts."""

    def __init__(self, exporter, mathjax: str):
        self.exporter = exporter
        self.mathjax = mathjax
        self.hashes: set[str] = set()

    def from_filename(self, filename, resources=None, **kw):
        import nbformat
        from tools.common.sanitize import clean_notebook

        self.exporter.register_filter("markdown2html", _clean_markdown2html(self.exporter))
        nb = nbformat.from_dict(_plain_grade_ids(clean_notebook(nbformat.read(filename, 4))))
        blank = nbformat.v4.new_notebook()
        html, _ = self.exporter.from_notebook_node(blank, resources=copy.deepcopy(resources))
        self.hashes = inline_hashes(html) | inline_hashes(MATHJAX_SETTINGS)
        html, out = self.exporter.from_notebook_node(nb, resources=copy.deepcopy(resources), **kw)
        # the template's own tag (the notebook's cells carry no script: clean_notebook)
        local = f'{MATHJAX_SETTINGS}<script src="{self.mathjax}?config={MATHJAX_CONFIG}">'
        html = MATHJAX_CDN.sub(lambda _: local, html, count=1)
        return html.replace(MATHJAX_EVAL, '<script type="text/plain">', 1), out


def _submission_page(handler_class):
    class SubmissionPage(_guarded(handler_class)):
        """nbgrader's manual grading of one submission, rendered from the sanitized
        notebook, under a policy of nbgrader's template's own inline scripts."""

        @property
        def exporter(self):
            if not hasattr(self, "_clean_exporter"):
                from jupyter_server.utils import url_path_join

                self._clean_exporter = _CleanExporter(
                    self.settings["nbgrader_exporter"],
                    url_path_join(self.base_url, MATHJAX, "MathJax.js"))
            return self._clean_exporter

        def finish(self, chunk=None):
            if getattr(self, "_clean_exporter", None) is not None:
                mathjax = _origin(self.request) + self._clean_exporter.mathjax.rsplit("/", 1)[0]
                self.set_header("Content-Security-Policy", page_policy(
                    _origin(self.request), self.base_url, self._clean_exporter.hashes, lab=False,
                    remote=(mathjax + "/",)))
            return super().finish(chunk)

    return SubmissionPage


def _sandboxed(handler_class):
    class SubmissionFile(handler_class):
        """A file of a submission, served in a sandbox (a unique origin, no script)."""

        @property
        def content_security_policy(self):
            return SANDBOX

    return SubmissionFile


def formgrader_handlers() -> list[tuple]:
    """Formgrader's handlers (nbgrader's list, in its order), its pages guarded as the
    module's docstring says."""
    from nbgrader.server_extensions.formgrader import handlers as nb

    out = []
    for pattern, handler, *rest in nb.default_handlers:
        if handler is nb.SubmissionHandler:
            handler = _submission_page(handler)
        elif handler is nb.SubmissionFilesHandler:
            handler = _sandboxed(handler)
        elif issubclass(handler, nb.BaseHandler):
            handler = _guarded(handler)
        out.append((pattern, handler, *rest))
    return out


# -- the server extension --------------------------------------------------------------
def _jupyter_server_extension_points():
    return [{"module": "tools.lab.student_work"}]


def _load_jupyter_server_extension(serverapp) -> None:
    from jupyter_server.utils import url_path_join

    web_app = serverapp.web_app
    base = web_app.settings.get("base_url", "/")
    web_app.transforms.insert(0, policy_transform(base))  # before compression: it reads pages
    if not serverapp.jpserver_extensions.get("nbgrader.server_extensions.formgrader"):
        return  # no Formgrader in this lab (a student's)
    rules = [(url_path_join(base, pattern.lstrip("/")), *rest)
             for pattern, *rest in formgrader_handlers()]
    # before every other rule (nbgrader's own among them): these answer Formgrader's pages
    # (add_handlers puts a host's rules last but one)
    web_app.add_handlers(".*$", rules)
    web_app.default_router.rules.insert(0, web_app.default_router.rules.pop(-2))
    serverapp.log.info("[memcourse] Formgrader's pages guarded (tools.lab.student_work)")
