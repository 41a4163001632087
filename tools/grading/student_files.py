"""A student's files, read without trusting them: regular files only, no link followed,
every read bounded.

What a student hands in may be a symbolic link (to a solution, ``/etc/shadow``, the
gradebook, a classmate's notebook), a device (``/dev/zero``: a read without end), a FIFO
(a read that never returns) or a socket, and any file may be huge. So every look is an
``lstat`` (a link is seen as a link, never as what it names), every open is
``O_NOFOLLOW | O_NONBLOCK`` and checked to be a regular file on the descriptor itself (a
file swapped for a link or a FIFO between the look and the open is refused too), and no
read goes past its limit.

``entries(folder)`` lists a folder as (name, kind), ``refusal(kind)`` says why a kind is
not read, ``read_bounded(path, limit)`` reads one regular file, ``copy_bounded`` copies one.

Stage: none (under collect, staging and the sandbox, which read the student's files).
Depends on nothing of the course.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_NOTEBOOK = 50 * 1024 * 1024  # bytes of one submitted notebook
MAX_FILE = 50 * 1024 * 1024  # bytes of one other file of a submission
MAX_FILES = 100  # other files of one submission given to its kernel
MAX_FILES_TOTAL = 200 * 1024 * 1024  # their bytes together

KINDS = {
    "file": "a regular file",
    "dir": "a folder",
    "link": "a symbolic link (not followed)",
    "device": "a device (not read)",
    "fifo": "a FIFO (not read)",
    "socket": "a socket (not read)",
    "other": "not a regular file (not read)",
}


class Refused(OSError):
    """A file that is not read: a link, a special file, or over its size limit."""


def kind_of(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "other"


def kind(path: Path) -> str:
    """What ``path`` itself is (a link is a link), or ``"missing"``."""
    try:
        return kind_of(os.lstat(path).st_mode)
    except OSError:
        return "missing"


def refusal(kind_name: str) -> str:
    return KINDS.get(kind_name, KINDS["other"])


def entries(folder: Path) -> list[tuple[str, str]]:
    """(name, kind) of each entry of ``folder``, sorted, without following any link."""
    try:
        with os.scandir(folder) as it:
            found = [(e.name, kind_of(e.stat(follow_symlinks=False).st_mode)) for e in it]
    except OSError:
        return []
    return sorted(found)


def _open(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if kind(path) == "link":
            raise Refused(f"{Path(path).name} is {refusal('link')}") from exc
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise Refused(f"{Path(path).name} is {refusal(kind_of(mode))}")
    return fd


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (else ``Refused``)."""
    fd = _open(path)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        raise Refused(f"{Path(path).name} is larger than {limit // (1024 * 1024)} MB")
    finally:
        os.close(fd)


def copy_bounded(source: Path, target: Path, limit: int, owner: int | None = None) -> int:
    """Copy the regular file ``source`` to the new file ``target`` (at most ``limit``
    bytes, else ``Refused`` and no target); its size. ``owner``: the uid it is given."""
    fd = _open(source)
    size = 0
    try:
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise Refused(f"{Path(source).name} is larger than {limit // (1024 * 1024)} MB")
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
            if owner is not None:
                os.fchown(out, owner, owner)
        finally:
            os.close(out)
    except BaseException:
        Path(target).unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    return size
