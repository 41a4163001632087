"""nbgrader's exchange through the course's exchange service (``tools.hub.hub_exchange``):
the plugins of ``c.ExchangeFactory`` that carry nbgrader's commands to it with the user's
hub API token, so ``nbgrader release_assignment``, ``fetch_assignment``, ``submit``,
``list``, ``collect``, ``release_feedback`` and ``fetch_feedback`` (and the lab's
Assignments tab and Formgrader, which call them) work unchanged where every student's
server runs as one Unix user.

The service's address is ``MEMCOURSE_EXCHANGE_URL`` (the hub's pre-spawn hook sets it:
``http://127.0.0.1:<port>/services/exchange/`` locally, the hub's service address on
Kubernetes); the token is ``JUPYTERHUB_API_TOKEN`` (the one the hub gives the user's
server). Who hands in is the hub's user of that token: ``--student`` naming another is
refused here, and the service never reads a name from the request. A submission's time
is the service's clock; collect writes it into ``timestamp.txt``.

    c.ExchangeFactory.<operation> = "tools.hub.hub_exchange_client.<class>"  (``PLUGINS``)
"""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from nbgrader.exchange.abc import (Exchange, ExchangeCollect, ExchangeFetchAssignment,
                                   ExchangeFetchFeedback, ExchangeList,
                                   ExchangeReleaseAssignment, ExchangeReleaseFeedback,
                                   ExchangeSubmit)
from nbgrader.utils import get_username, parse_utc
from traitlets import Bool, Unicode

URL_ENV, TOKEN_ENV = "MEMCOURSE_EXCHANGE_URL", "JUPYTERHUB_API_TOKEN"


class ServiceExchange(Exchange):
    """What every plugin shares: the service's requests, the files of a folder sent and
    written back."""

    url = Unicode(help="The exchange service's address (default: $MEMCOURSE_EXCHANGE_URL)"
                  ).tag(config=True)

    def api(self, method: str, path: str, body: dict | None = None):
        base = self.url or os.environ.get(URL_ENV, "")
        token = os.environ.get(TOKEN_ENV, "")
        if not base or not token:
            self.fail(f"The course's exchange needs {URL_ENV} and {TOKEN_ENV} (set by the hub "
                      "in your server): run nbgrader in a terminal of your lab.")
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            base.rstrip("/") + "/api/" + path, data=data, method=method,
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=300) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error") or exc.reason
            except ValueError:
                message = exc.reason
            self.fail(f"The exchange refused: {message} (HTTP {exc.code})")
        except OSError as exc:
            self.fail(f"The exchange cannot be reached at {base}: {exc}")

    def read_folder(self, folder: Path) -> dict[str, str]:
        """The files of ``folder`` nbgrader would copy (its ignore rules, ``max_file_size``
        per file, ``max_dir_size`` in all, in kB), as the service's JSON; links refused."""
        cd = self.coursedir
        files, total = {}, 0
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if any(fnmatch.fnmatch(part, pat) for part in rel.parts for pat in cd.ignore):
                continue
            if path.is_symlink():
                self.fail(f"{rel} is a link: hand in files only")
            if not path.is_file():
                continue
            size = path.stat().st_size
            if size > 1000 * cd.max_file_size:
                self.log.warning("%s left out: over %s kB", rel, cd.max_file_size)
                continue
            total += size
            if total > 1000 * cd.max_dir_size:
                self.fail(f"{folder} is over the size limit of {cd.max_dir_size / 1000:g} MB")
            files[rel.as_posix()] = base64.b64encode(path.read_bytes()).decode()
        return files

    def write_folder(self, folder: Path, files: dict[str, str]) -> None:
        for name, data in files.items():
            target = folder.joinpath(*name.split("/"))
            if ".." in name.split("/") or not target.resolve().is_relative_to(folder.resolve()):
                self.fail(f"the exchange sent a file outside the folder: {name!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(base64.b64decode(data))

    def assignment_path(self, assignment: str) -> Path:
        parts = [self.assignment_dir]
        if self.path_includes_course:
            parts.append(self.coursedir.course_id)
        return Path(*parts, assignment)

    def need_assignment(self) -> str:
        if not self.coursedir.assignment_id:
            self.fail("No assignment specified.")
        return self.coursedir.assignment_id

    path_includes_course = Bool(False, help="As nbgrader's default exchange: the course id "
                                "between the assignment folder and the assignment").tag(config=True)

    def init_src(self):
        pass

    def init_dest(self):
        pass


class ServiceReleaseAssignment(ServiceExchange, ExchangeReleaseAssignment):
    """The instructor's release/<assignment> sent to the service."""

    def copy_files(self):
        assignment = self.need_assignment()
        source = Path(self.coursedir.format_path(self.coursedir.release_directory, ".", assignment))
        if not source.is_dir():
            self.fail(f"Assignment not found: {source} (run nbgrader generate_assignment first)")
        released = self.api("POST", f"assignments/{assignment}?force={int(self.force)}",
                            {"files": self.read_folder(source)})
        self.log.info("Released %s: %s", assignment, ", ".join(released))


class ServiceFetchAssignment(ServiceExchange, ExchangeFetchAssignment):
    """A released assignment written into the student's assignment folder."""

    def copy_files(self):
        assignment = self.need_assignment()
        dest = self.assignment_path(assignment)
        files = self.api("GET", f"assignments/{assignment}")
        if dest.exists() and not self.replace_missing_files:
            self.fail(f"You already have a copy of the assignment in {dest}: rename or remove "
                      "it, or fetch with --replace to add only the missing files")
        files = {n: d for n, d in files.items() if not (dest / n).exists()}
        self.write_folder(dest, files)
        self.log.info("Fetched as: %s %s", self.coursedir.course_id, assignment)


class ServiceSubmit(ServiceExchange, ExchangeSubmit):
    """The student's assignment folder handed in, as the hub's user of their token."""

    def copy_files(self):
        assignment = self.need_assignment()
        named = self.coursedir.student_id
        if named not in ("", "*", get_username()) and named != os.environ.get("JUPYTERHUB_USER"):
            self.fail(f"You hand in as yourself: --student {named} is refused.")
        source = self.assignment_path(assignment)
        if not source.is_dir():
            self.fail(f"Assignment not found: {source}")
        files = self.read_folder(source)
        released = {a["assignment_id"]: a["notebooks"] for a in self.api("GET", "assignments")}
        missing = sorted(set(released.get(assignment, [])) - {Path(n).stem for n in files
                                                                if n.endswith(".ipynb")})
        if missing:
            message = f"Notebooks missing from your submission: {', '.join(missing)}"
            if self.strict:
                self.fail(message)
            self.log.warning(message)
        entry = self.api("POST", f"submissions/{assignment}", {"files": files})
        self.log.info("Submitted as: %s %s %s", self.coursedir.course_id, assignment,
                      entry["timestamp"])


class ServiceList(ServiceExchange, ExchangeList):
    """``nbgrader list``: the released assignments, or (``--inbound``, and ``--cached``, which
    the lab's Assignments tab and the scores page ask for) the submissions the service shows
    the caller (a student: their own), in nbgrader's list format."""

    def info(self, course: str, assignment: str, submission: dict | None) -> dict:
        folder = self.assignment_path(assignment)
        if submission is None:
            status = "fetched" if folder.is_dir() else "released"
            return {"course_id": course, "assignment_id": assignment, "status": status,
                    "path": str(folder.resolve()) if status == "fetched" else assignment,
                    "notebooks": [{"notebook_id": n, "path": str(folder / f"{n}.ipynb")}
                                  for n in (self._released.get(assignment) or [])]}
        stamp = submission["timestamp"]
        local = folder / "feedback" / stamp
        notebooks = []
        for name in submission["notebooks"]:
            here = (local / f"{name}.html").is_file()
            notebooks.append({"notebook_id": name, "path": name, "has_local_feedback": here,
                              "has_exchange_feedback": submission["feedback"],
                              "local_feedback_path": str(local / f"{name}.html") if here else None,
                              "feedback_updated": False})
        here = bool(notebooks) and all(n["has_local_feedback"] for n in notebooks)
        return {"course_id": course, "student_id": submission["student_id"],
                "assignment_id": assignment, "timestamp": stamp, "status": "submitted",
                "path": submission["id"], "notebooks": notebooks,
                "has_local_feedback": here, "has_exchange_feedback": submission["feedback"],
                "feedback_updated": False,
                "local_feedback_path": str(local) if here else None}

    def parse_assignments(self) -> list[dict]:
        course, wanted = self.coursedir.course_id, self.coursedir.assignment_id
        self._released = {a["assignment_id"]: a["notebooks"] for a in self.api("GET", "assignments")}
        if not (self.inbound or self.cached):  # cached: the lab's list of what was handed in
            return [self.info(course, a, None) for a in self._released
                    if not wanted or a == wanted]
        query = f"?assignment={wanted}" if wanted else ""
        grouped: dict[tuple, list] = {}
        for sub in self.api("GET", f"submissions{query}"):
            grouped.setdefault((sub["student_id"], sub["assignment_id"]), []).append(
                self.info(course, sub["assignment_id"], sub))
        return [{"course_id": course, "student_id": s, "assignment_id": a,
                 "status": "submitted", "submissions": subs}
                for (s, a), subs in sorted(grouped.items())]

    def copy_files(self):
        """Listing copies nothing."""

    def list_files(self):
        assignments = self.parse_assignments()
        for info in assignments:
            for sub in info.get("submissions", [info]):
                self.log.info("%s %s %s", sub["course_id"], sub.get("student_id", ""),
                              sub["assignment_id"] + " " + sub.get("timestamp", sub["status"]))
        return assignments

    def remove_files(self):
        """Withdraw the released assignment (the graders'; submissions are kept)."""
        if self.inbound or self.cached:
            self.fail("The exchange keeps submissions: only a release may be removed.")
        assignments = self.parse_assignments()
        for info in assignments:
            self.api("DELETE", f"assignments/{info['assignment_id']}")
            info["status"] = "removed"
        return assignments


class ServiceCollect(ServiceExchange, ExchangeCollect):
    """Each student's newest submission (with ``--before-duedate``, the newest before the
    due date if there is one) into ``submitted/<student>/<assignment>/``, with the
    service's time in ``timestamp.txt``."""

    def copy_files(self):
        from nbgrader.api import Gradebook, MissingEntry

        assignment = self.need_assignment()
        student = self.coursedir.student_id
        query = f"?assignment={assignment}" + (f"&student={student}" if student not in ("", "*") else "")
        by_student: dict[str, list] = {}
        for sub in self.api("GET", f"submissions{query}"):
            by_student.setdefault(sub["student_id"], []).append(sub)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                due = gb.find_assignment(assignment).duedate
            except MissingEntry:
                due = None
            for name, subs in sorted(by_student.items()):
                subs.sort(key=lambda s: parse_utc(s["timestamp"]), reverse=True)
                chosen = subs[0]
                if self.before_duedate and due is not None:
                    chosen = next((s for s in subs if parse_utc(s["timestamp"]) <= due), chosen)
                dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory,
                                                       name, assignment))
                if dest.exists():
                    have = self.coursedir.get_existing_timestamp(str(dest))
                    if not self.update or (have and have >= parse_utc(chosen["timestamp"])):
                        self.log.info("Skipping %s: collected already (--update for a newer one)", name)
                        continue
                    shutil.rmtree(dest)
                entry = self.api("GET", f"submissions/{assignment}/{name}/{chosen['id']}")
                self.write_folder(dest, entry["files"])
                (dest / "timestamp.txt").write_text(entry["timestamp"])
                gb.update_or_create_student(name)
                self.log.info("Collected submission from %s: %s", name, entry["timestamp"])


class ServiceReleaseFeedback(ServiceExchange, ExchangeReleaseFeedback):
    """``feedback/<student>/<assignment>/*.html`` sent for the time in its
    ``timestamp.txt`` (the submission's, as collect wrote it)."""

    def copy_files(self):
        assignment = self.need_assignment()
        student = self.coursedir.student_id or "*"
        pattern = self.coursedir.format_path(self.coursedir.feedback_directory, student, assignment)
        excluded = set(filter(None, self.coursedir.student_id_exclude.split(",")))
        for folder in sorted(Path("/").glob(pattern.lstrip("/"))):
            name = folder.parent.name
            pages = {p.name: base64.b64encode(p.read_bytes()).decode()
                     for p in sorted(folder.glob("*.html"))}
            if name in excluded or not pages or not (folder / "timestamp.txt").is_file():
                continue
            stamp = (folder / "timestamp.txt").read_text().strip()
            self.api("POST", f"feedback/{assignment}/{name}", {"timestamp": stamp, "files": pages})
            self.log.info("Released feedback for %s on %s (%s)", name, assignment, stamp)


class ServiceFetchFeedback(ServiceExchange, ExchangeFetchFeedback):
    """The caller's feedback into ``<assignment>/feedback/<time>/``."""

    def copy_files(self):
        assignment = self.need_assignment()
        released = self.api("GET", f"feedback/{assignment}")
        if not released:
            self.log.warning("No feedback available for %s", assignment)
        for entry in released:
            stamp = entry["timestamp"]
            parse_utc(stamp)  # a time, not a path
            dest = self.assignment_path(assignment) / "feedback" / stamp
            self.write_folder(dest, entry["files"])
            self.log.info("Fetched feedback for %s (%s) into %s", assignment, stamp, dest)


PLUGINS = {"release_assignment": ServiceReleaseAssignment, "fetch_assignment": ServiceFetchAssignment,
           "submit": ServiceSubmit, "list": ServiceList, "collect": ServiceCollect,
           "release_feedback": ServiceReleaseFeedback, "fetch_feedback": ServiceFetchFeedback}


def config_lines() -> list[str]:
    """The nbgrader configuration that routes every operation to the service."""
    return [f"c.ExchangeFactory.{op} = 'tools.hub.hub_exchange_client.{cls.__name__}'"
            for op, cls in PLUGINS.items()]

