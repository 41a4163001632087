"""The course's exchange as a JupyterHub service: who is who comes from the hub, not from
Unix owners, so it holds where every student's server runs as one Unix user (Kubernetes'
pods, ``make hub ONE_UNIX_USER=1``).

    python -m tools.hub.hub_exchange --root DIR [--course memcourse] [--share-mb 30]
        [--share-files 400] [--submission-mb 20] [--release-mb 200] [--ip 127.0.0.1]

The hub starts it (a managed service, ``c.JupyterHub.services``) with the environment of a
service (``JUPYTERHUB_API_TOKEN``, ``JUPYTERHUB_SERVICE_URL``, ...); it listens on
``--ip`` (127.0.0.1) at the port of that URL. Every request carries a user's hub API token
(``Authorization: token ...``, the ``JUPYTERHUB_API_TOKEN`` of the user's server); the
caller is the user the hub names for that token (``HubAuthenticated``), never a name in
the request. Their role is their hub groups (``c.JupyterHub.load_groups``):
``formgrade-<course>`` (the instructor and the teaching assistants) may release, list,
collect and clear everything and release feedback; ``nbgrader-<course>`` (the students)
fetch the released assignments, hand in as themselves and read their own submissions and
feedback; anyone else is refused (403).

The files live under ``--root`` (``Store``), a folder only this service writes (0700, the
hub's user): each request's files are JSON, ``{"files": {"<relative path>": "<base64>"}}``,
so there is no archive to unpack and no link to follow; each path is checked (``safe_path``).
A submission's time is the server's clock when it is stored. Each student's submissions
together are bounded by a share of ``--share-mb`` and ``--share-files``; one by
``--submission-mb``; a request's body by the largest of these. The nbgrader plugins that
talk to it are ``tools.hub.hub_exchange_client``.

API (under the service's prefix, ``/services/exchange/``), JSON both ways:

=======================================================  ================================
``GET  api/assignments``                                 released assignments, notebooks
``GET  api/assignments/<a>``                             a release's files (fetch)
``POST api/assignments/<a>`` (graders; ``force``)        release
``DELETE api/assignments/<a>`` (graders)                 withdraw a release
``POST api/submissions/<a>``                             hand in as the caller; its time
``GET  api/submissions[?assignment=&student=]``          submissions: a student's own only
``GET  api/submissions/<a>/<student>/<id>`` (graders)    one submission's files (collect)
``POST api/feedback/<a>/<student>`` (graders)            feedback for a submission's time
``GET  api/feedback/<a>``                                the caller's feedback, by time
=======================================================  ================================
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

MB = 1000 * 1000
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}\Z")  # an assignment, a user, an entry
PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 ._()+,=@-]{0,127}\Z")  # one part of a file's path
MAX_DEPTH = 8
STAMP = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's timestamp format, in UTC
STAMP_RE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})? [A-Za-z+0-9:-]+\Z")


class Refused(Exception):
    """A request the store does not carry out; ``status`` is its HTTP status, the message
    what the user is told."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def check_id(value: str, what: str) -> str:
    if not isinstance(value, str) or not ID.match(value):
        raise Refused(f"{what} {value!r} is not a name the exchange takes "
                      "(letters, digits, . _ @ -, at most 64)")
    return value


def safe_path(name: str) -> tuple[str, ...]:
    """The parts of a file's relative path, each a plain name (no ``..``, no leading dot
    or slash, no backslash), at most ``MAX_DEPTH`` deep; else Refused."""
    parts = tuple(name.split("/")) if isinstance(name, str) else ()
    if not parts or len(parts) > MAX_DEPTH or not all(PART.match(p) for p in parts):
        raise Refused(f"the file name {name!r} is not one the exchange takes")
    return parts


def decode_files(payload: dict, limit: int, max_files: int) -> dict[tuple[str, ...], bytes]:
    """The files of a request (path parts -> bytes), at most ``limit`` bytes and
    ``max_files`` files together; else Refused."""
    files = payload.get("files") if isinstance(payload, dict) else None
    if not isinstance(files, dict) or not files:
        raise Refused("no files sent")
    if len(files) > max_files:
        raise Refused(f"{len(files)} files: at most {max_files}", 413)
    out, total = {}, 0
    for name, data in files.items():
        parts = safe_path(name)
        try:
            content = base64.b64decode(data, validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise Refused(f"{name!r} is not base64") from None
        total += len(content)
        if total > limit:
            raise Refused(f"over the size limit of {limit / MB:g} MB", 413)
        out[parts] = content
    paths = set(out)
    for parts in paths:  # a file's path may not run through another file
        if any(parts[:i] in paths for i in range(1, len(parts))):
            raise Refused(f"{'/'.join(parts)!r} is inside a file")
    return out


def encode_files(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (written by the store: folders and regular files only)."""
    return {str(p.relative_to(folder)): base64.b64encode(p.read_bytes()).decode()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def now_stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime(STAMP)


@dataclass
class Limits:
    share_bytes: int = 30 * MB      # each student's submissions together
    share_files: int = 400
    submission_bytes: int = 20 * MB  # one submission
    release_bytes: int = 200 * MB    # one release, one feedback
    max_files: int = 200             # files of one request

    @property
    def body_bytes(self) -> int:
        """The largest request body: base64 (4/3) of the largest payload, and its JSON."""
        return max(self.submission_bytes, self.release_bytes) * 4 // 3 + 64 * 1024 * (self.max_files + 1)


class Store:
    """The exchange's files under ``root`` (only this process writes there)::

        releases/<assignment>/<files>
        submissions/<student>/<assignment>/<id>/{files/..., entry.json}
        feedback/<student>/<assignment>/<key>/{files/..., entry.json}

    An entry is written into a temporary folder of ``root`` and renamed into place whole.
    """

    def __init__(self, root: Path, limits: Limits | None = None):
        self.root = Path(root)
        self.limits = limits or Limits()
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        for name in ("releases", "submissions", "feedback", "tmp"):
            (self.root / name).mkdir(exist_ok=True)

    # -- writing ------------------------------------------------------------------------
    def _write(self, files: dict[tuple[str, ...], bytes], meta: dict | None) -> Path:
        staging = Path(tempfile.mkdtemp(dir=self.root / "tmp"))
        for parts, content in files.items():
            target = staging.joinpath("files", *parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(content)
        if meta is not None:
            (staging / "entry.json").write_text(json.dumps(meta))
        return staging

    # -- releases -----------------------------------------------------------------------
    def release(self, assignment: str, payload: dict, force: bool = False) -> list[str]:
        check_id(assignment, "assignment")
        target = self.root / "releases" / assignment
        if target.exists() and not force:
            raise Refused(f"{assignment} is released already (release again with --force)", 409)
        files = decode_files(payload, self.limits.release_bytes, self.limits.max_files)
        staging = self._write(files, {"released": now_stamp()})
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
        return sorted("/".join(p) for p in files)

    def released(self) -> list[dict]:
        out = []
        for folder in sorted((self.root / "releases").iterdir()):
            files = folder / "files"
            out.append({"assignment_id": folder.name,
                        "notebooks": sorted(p.stem for p in files.glob("*.ipynb"))})
        return out

    def release_files(self, assignment: str) -> dict[str, str]:
        folder = self.root / "releases" / check_id(assignment, "assignment") / "files"
        if not folder.is_dir():
            raise Refused(f"{assignment} is not released", 404)
        return encode_files(folder)

    def withdraw(self, assignment: str) -> bool:
        folder = self.root / "releases" / check_id(assignment, "assignment")
        if folder.is_dir():
            shutil.rmtree(folder)
            return True
        return False

    # -- submissions --------------------------------------------------------------------
    def used(self, student: str) -> tuple[int, int]:
        """(bytes, files) of the student's submissions together."""
        size = count = 0
        for path in (self.root / "submissions" / student).rglob("*"):
            if path.is_file() and path.name != "entry.json":
                size += path.stat().st_size
                count += 1
        return size, count

    def submit(self, student: str, assignment: str, payload: dict) -> dict:
        """Store a submission of ``student`` (the hub's name for the caller) at the
        server's time; Refused past the submission's limit or the student's share."""
        check_id(student, "student")
        check_id(assignment, "assignment")
        if not (self.root / "releases" / assignment).is_dir():
            raise Refused(f"{assignment} is not released", 404)
        lim = self.limits
        files = decode_files(payload, lim.submission_bytes, lim.max_files)
        size, count = self.used(student)
        new = sum(len(c) for c in files.values())
        if size + new > lim.share_bytes or count + len(files) > lim.share_files:
            raise Refused(
                f"Not handed in: your share of the exchange is full ({size / MB:.1f} MB in "
                f"{count} files of {lim.share_bytes / MB:g} MB and {lim.share_files} files; "
                f"this submission is {new / MB:.1f} MB in {len(files)} files). Ask your "
                "instructor to clear your older submissions.", 507)
        stamp = now_stamp()
        entry = f"{stamp[:19].replace(' ', 'T').replace(':', '')}-{secrets.token_hex(4)}"
        target = self.root / "submissions" / student / assignment / entry
        target.parent.mkdir(parents=True, exist_ok=True)
        self._write(files, {"timestamp": stamp}).rename(target)
        return {"student_id": student, "assignment_id": assignment, "id": entry,
                "timestamp": stamp}

    def submissions(self, student: str | None = None, assignment: str | None = None) -> list[dict]:
        """Every submission (``student``, ``assignment``: only theirs, only its), oldest
        first, with its notebooks and whether feedback waits for its time."""
        base = self.root / "submissions"
        students = [check_id(student, "student")] if student else sorted(p.name for p in base.iterdir())
        out = []
        for name in students:
            folder = base / name
            wanted = [check_id(assignment, "assignment")] if assignment else (
                sorted(p.name for p in folder.iterdir()) if folder.is_dir() else [])
            for task in wanted:
                for entry in sorted((folder / task).glob("*/entry.json")):
                    stamp = json.loads(entry.read_text())["timestamp"]
                    files = entry.parent / "files"
                    out.append({"student_id": name, "assignment_id": task,
                                "id": entry.parent.name, "timestamp": stamp,
                                "notebooks": sorted(p.stem for p in files.glob("*.ipynb")),
                                "feedback": self._feedback_dir(name, task, stamp).is_dir()})
        return out

    def submission_files(self, student: str, assignment: str, entry: str) -> dict:
        folder = (self.root / "submissions" / check_id(student, "student")
                  / check_id(assignment, "assignment") / check_id(entry, "submission"))
        if not folder.is_dir():
            raise Refused("no such submission", 404)
        return {"timestamp": json.loads((folder / "entry.json").read_text())["timestamp"],
                "files": encode_files(folder / "files")}

    # -- feedback -----------------------------------------------------------------------
    def _feedback_dir(self, student: str, assignment: str, stamp: str) -> Path:
        key = re.sub(r"[^0-9A-Za-z]", "", stamp)[:40]
        return self.root / "feedback" / student / assignment / key

    def release_feedback(self, student: str, assignment: str, payload: dict) -> str:
        """Feedback for the submission of ``student`` handed in at ``payload["timestamp"]``."""
        check_id(student, "student")
        check_id(assignment, "assignment")
        stamp = payload.get("timestamp") if isinstance(payload, dict) else None
        if not isinstance(stamp, str) or not STAMP_RE.match(stamp.strip()):
            raise Refused(f"feedback needs its submission's time, not {stamp!r}")
        stamp = stamp.strip()
        files = decode_files(payload, self.limits.release_bytes, self.limits.max_files)
        target = self._feedback_dir(student, assignment, stamp)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = self._write(files, {"timestamp": stamp})
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
        return stamp

    def feedback(self, student: str, assignment: str) -> list[dict]:
        folder = self.root / "feedback" / check_id(student, "student") / check_id(assignment, "assignment")
        return [{"timestamp": json.loads((entry / "entry.json").read_text())["timestamp"],
                 "files": encode_files(entry / "files")}
                for entry in sorted(folder.iterdir())] if folder.is_dir() else []


# -- the service (tornado, behind the hub) --------------------------------------------
def make_app(store: Store, course: str, prefix: str):
    """The service's tornado application; the roles of ``course``'s hub groups."""
    from jupyterhub.services.auth import HubAuth, HubAuthenticated
    from tornado import web
    from tornado.httpclient import AsyncHTTPClient

    hub_auth = HubAuth()
    graders, students = f"formgrade-{course}", f"nbgrader-{course}"

    class Handler(HubAuthenticated, web.RequestHandler):
        """The caller is the hub's user of the request's token (HubAuthenticated)."""

        def check_xsrf_cookie(self):
            """Token requests only: a browser's cookie does not identify a caller here."""

        def write_error(self, status_code, **kwargs):
            exc = kwargs.get("exc_info", (None, None))[1]
            message = str(exc) if isinstance(exc, Refused) else self._reason
            self.finish({"error": message})

        async def caller(self) -> tuple[str, str]:
            """(name, role) of the caller: role "grader" or "student"; 403 otherwise."""
            user = self.current_user
            if not user:
                raise web.HTTPError(403)
            name = user["name"]
            response = await AsyncHTTPClient().fetch(
                f"{hub_auth.api_url}/users/{name}",
                headers={"Authorization": f"token {hub_auth.api_token}"})
            groups = set(json.loads(response.body).get("groups", []))
            if graders in groups:
                return name, "grader"
            if students in groups:
                return name, "student"
            raise web.HTTPError(403, f"{name} is not in the course {course}")

        async def grader(self) -> str:
            name, role = await self.caller()
            if role != "grader":
                raise web.HTTPError(403, "only the course's graders may do this")
            return name

        def payload(self) -> dict:
            try:
                return json.loads(self.request.body or b"{}")
            except ValueError:
                raise web.HTTPError(400, "the body is not JSON") from None

        async def _run(self, work):
            try:
                self.finish(json.dumps(work()))
            except Refused as exc:
                self.set_status(exc.status)
                self.finish({"error": str(exc)})

    class Assignments(Handler):
        @web.authenticated
        async def get(self, assignment=None):
            await self.caller()
            await self._run(lambda: store.release_files(assignment) if assignment
                            else store.released())

        @web.authenticated
        async def post(self, assignment):
            await self.grader()
            force = self.get_argument("force", "0") == "1"
            await self._run(lambda: store.release(assignment, self.payload(), force))

        @web.authenticated
        async def delete(self, assignment):
            await self.grader()
            await self._run(lambda: store.withdraw(assignment))

    class Submissions(Handler):
        @web.authenticated
        async def get(self, assignment=None, student=None, entry=None):
            name, role = await self.caller()
            if entry:
                await self.grader()
                await self._run(lambda: store.submission_files(student, assignment, entry))
                return
            wanted = self.get_argument("student", None) if role == "grader" else name
            await self._run(lambda: store.submissions(wanted, self.get_argument("assignment", None)))

        @web.authenticated
        async def post(self, assignment, student=None, entry=None):
            name, role = await self.caller()
            if student or entry:
                raise web.HTTPError(405)
            await self._run(lambda: store.submit(name, assignment, self.payload()))

    class Feedback(Handler):
        @web.authenticated
        async def get(self, assignment, student=None):
            name, role = await self.caller()
            if student and student != name and role != "grader":
                raise web.HTTPError(403, "a student reads their own feedback only")
            await self._run(lambda: store.feedback(student or name, assignment))

        @web.authenticated
        async def post(self, assignment, student=None):
            await self.grader()
            if not student:
                raise web.HTTPError(405)
            await self._run(lambda: store.release_feedback(student, assignment, self.payload()))

    seg = r"([^/]+)"
    base = prefix.rstrip("/") + "/api"
    return web.Application([
        (rf"{base}/assignments/?", Assignments),
        (rf"{base}/assignments/{seg}", Assignments),
        (rf"{base}/submissions/?", Submissions),
        (rf"{base}/submissions/{seg}", Submissions),
        (rf"{base}/submissions/{seg}/{seg}/{seg}", Submissions),
        (rf"{base}/feedback/{seg}", Feedback),
        (rf"{base}/feedback/{seg}/{seg}", Feedback),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.hub.hub_exchange", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="the folder only this service writes")
    parser.add_argument("--course", default="memcourse")
    defaults = Limits()
    parser.add_argument("--share-mb", type=float, default=defaults.share_bytes / MB)
    parser.add_argument("--share-files", type=int, default=defaults.share_files)
    parser.add_argument("--submission-mb", type=float, default=defaults.submission_bytes / MB)
    parser.add_argument("--release-mb", type=float, default=defaults.release_bytes / MB)
    parser.add_argument("--ip", default="127.0.0.1",
                        help="the address to listen on (0.0.0.0 in the hub's pod on Kubernetes)")
    args = parser.parse_args(argv)
    from tornado import httpserver, ioloop

    limits = Limits(share_bytes=int(args.share_mb * MB), share_files=args.share_files,
                    submission_bytes=int(args.submission_mb * MB),
                    release_bytes=int(args.release_mb * MB))
    store = Store(Path(args.root), limits)
    url = urlsplit(os.environ["JUPYTERHUB_SERVICE_URL"])
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/exchange/")
    server = httpserver.HTTPServer(make_app(store, args.course, prefix),
                                   max_body_size=limits.body_bytes)
    server.listen(url.port, args.ip)
    print(f"the course's exchange on {args.ip}:{url.port}{prefix} (files in {store.root})",
          flush=True)
    ioloop.IOLoop.current().start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
