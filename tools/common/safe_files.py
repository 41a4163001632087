"""Files someone else controls, read without trusting them: regular files only, no link
followed, every read bounded.

A file a student hands in or leaves in a share may be a symbolic link (to a solution,
``/etc/shadow``, the gradebook, a classmate's notebook), a device (``/dev/zero``: a read
without end), a FIFO (a read that never returns) or a socket, and any file may be huge.
So every look is an ``lstat`` (a link is seen as a link, never as what it names), every
open is ``O_NOFOLLOW | O_NONBLOCK`` and checked on the descriptor itself (a file swapped
for a link or a FIFO between the look and the open is refused too), and no read goes
past its limit.

``kind(path)`` / ``kind_of(mode)``
    what a path is, as one of ``KINDS`` (a link is a link), ``refusal(kind)`` why that
    kind is not read, ``entries(folder)`` a folder's (name, kind), sorted.
``open_checked(name, dir_fd=None, folder=False)``
    (descriptor, its ``fstat``) of a regular file, or a folder, opened without following
    a link, relative to ``dir_fd`` when given; ``Refused`` for any other kind.
``read_bounded(path, limit)`` / ``copy_bounded(source, target, limit)``
    one regular file read, or copied to a new file, at most ``limit`` bytes (``TooLarge``
    beyond it, and no target left); ``copy_fd`` the same from an open descriptor.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CHUNK = 1 << 20  # bytes of one read

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


class TooLarge(Refused):
    """A regular file over the size limit it is read or copied with."""


def kind_of(mode: int) -> str:
    """The name in ``KINDS`` of a file of ``st_mode`` ``mode``."""
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
    """Why a file of ``kind_name`` is not read, as a phrase ("a FIFO (not read)")."""
    return KINDS.get(kind_name, KINDS["other"])


def entries(folder: Path) -> list[tuple[str, str]]:
    """(name, kind) of each entry of ``folder``, sorted, without following any link."""
    try:
        with os.scandir(folder) as it:
            found = [(e.name, kind_of(e.stat(follow_symlinks=False).st_mode)) for e in it]
    except OSError:
        return []
    return sorted(found)


def open_checked(name, dir_fd: int | None = None, folder: bool = False) -> tuple[int, os.stat_result]:
    """(descriptor, ``fstat``) of ``name`` (relative to ``dir_fd`` when given), opened
    ``O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC``: a regular file, or a folder with ``folder``.
    A link, or another kind found on the descriptor, raises ``Refused``; other errors of
    the open (a missing file) raise as they are."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags | (os.O_DIRECTORY if folder else 0), dir_fd=dir_fd)
    except OSError as exc:
        try:
            found = kind_of(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except OSError:
            raise exc from None
        if found != ("dir" if folder else "file"):
            raise Refused(f"{Path(name).name} is {refusal(found)}") from exc
        raise
    seen = os.fstat(fd)
    if not (stat.S_ISDIR(seen.st_mode) if folder else stat.S_ISREG(seen.st_mode)):
        os.close(fd)
        raise Refused(f"{Path(name).name} is {refusal(kind_of(seen.st_mode))}")
    return fd, seen


def _too_large(name, limit: int) -> TooLarge:
    return TooLarge(f"{Path(name).name} is larger than {limit // (1024 * 1024)} MB")


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (else ``TooLarge``;
    not a regular file: ``Refused``)."""
    fd, _ = open_checked(path)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(CHUNK, limit + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        raise _too_large(path, limit)
    finally:
        os.close(fd)


def copy_fd(fd: int, target: Path, limit: int, mode: int = 0o600, owner: int | None = None) -> int:
    """Copy what the open descriptor ``fd`` reads to the new file ``target`` (``O_EXCL``,
    ``O_NOFOLLOW``, ``mode``; ``owner``: the uid and gid it is given); its size. Past
    ``limit`` bytes: ``TooLarge``, and no target. ``fd`` stays open."""
    size = 0
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        try:
            while chunk := os.read(fd, min(CHUNK, limit + 1 - size)):
                size += len(chunk)
                if size > limit:
                    raise _too_large(target, limit)
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
    return size


def copy_bounded(source: Path, target: Path, limit: int, owner: int | None = None) -> int:
    """Copy the regular file ``source`` to the new file ``target`` (at most ``limit``
    bytes, else ``TooLarge`` and no target); its size. ``owner``: the uid it is given."""
    fd, _ = open_checked(source)
    try:
        try:
            return copy_fd(fd, target, limit, owner=owner)
        except TooLarge:
            raise _too_large(source, limit) from None
    finally:
        os.close(fd)
