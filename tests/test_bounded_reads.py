"""Bounded no-follow reads: ``tools.common.safe_files`` (every role's tools) and the copy in
``memkit.class_list`` (memkit imports nothing of tools/, and a student's lab has memkit
alone) read the same hostile files the same way.

Each file below is handed to both: a link to a secret, a link to a folder, a FIFO, a
socket, a device, a folder, a file over the limit, a missing file, and a file they may
read. Both must refuse the same ones and read the same bytes from the others.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from memkit import class_list
from tools.common import safe_files

LIMIT = 64


def hostile(folder: Path) -> dict[str, Path]:
    secret = folder / "secret.txt"
    secret.write_text("seat,student\n1,the-instructor\n")
    files = {"link": folder / "link.csv", "folder link": folder / "dirlink.csv",
             "fifo": folder / "fifo.csv", "socket": folder / "socket.csv",
             "device": Path("/dev/zero"), "folder": folder / "folder.csv",
             "too large": folder / "big.csv", "missing": folder / "missing.csv",
             "at the limit": folder / "fits.csv"}
    files["link"].symlink_to(secret)
    files["folder link"].symlink_to(folder)
    os.mkfifo(files["fifo"])
    files["folder"].mkdir()
    files["too large"].write_bytes(b"x" * (LIMIT + 1))
    files["at the limit"].write_bytes(b"y" * LIMIT)
    return files


def shared_reading(path: Path):
    try:
        return safe_files.read_bounded(path, LIMIT)
    except FileNotFoundError:
        return "missing"
    except safe_files.Refused:
        return "refused"


def memkit_reading(path: Path):
    try:
        raw = class_list._read_regular(path)
    except class_list.ClassListError:
        return "refused"
    return "missing" if raw is None else raw


def test_both_readers_refuse_and_read_the_same_files(tmp_path, monkeypatch):
    monkeypatch.setattr(class_list, "MAX_BYTES", LIMIT)
    files = hostile(tmp_path)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(files["socket"]))
    try:
        shared = {name: shared_reading(path) for name, path in files.items()}
        own = {name: memkit_reading(path) for name, path in files.items()}
    finally:
        server.close()
    assert shared == own
    refused = {name for name, got in shared.items() if got == "refused"}
    assert refused == {"link", "folder link", "fifo", "socket", "device", "folder", "too large"}
    assert shared["missing"] == "missing" and shared["at the limit"] == b"y" * LIMIT


def test_a_descriptor_relative_open_refuses_what_is_not_asked_for(tmp_path):
    hostile(tmp_path)
    top = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in ("link.csv", "dirlink.csv", "fifo.csv", "folder.csv"):
            with pytest.raises(safe_files.Refused):
                safe_files.open_checked(name, dir_fd=top)
        fd, seen = safe_files.open_checked("folder.csv", dir_fd=top, folder=True)
        os.close(fd)
        assert seen.st_ino == os.lstat(tmp_path / "folder.csv").st_ino
        with pytest.raises(safe_files.Refused):
            safe_files.open_checked("dirlink.csv", dir_fd=top, folder=True)
    finally:
        os.close(top)


def test_a_copy_stops_at_its_limit_and_leaves_no_target(tmp_path):
    hostile(tmp_path)
    with pytest.raises(safe_files.TooLarge, match="big.csv is larger"):
        safe_files.copy_bounded(tmp_path / "big.csv", tmp_path / "copy.csv", LIMIT)
    assert not (tmp_path / "copy.csv").exists()
    assert safe_files.copy_bounded(tmp_path / "fits.csv", tmp_path / "copy.csv", LIMIT) == LIMIT
    assert (tmp_path / "copy.csv").read_bytes() == b"y" * LIMIT
    with pytest.raises(FileExistsError):  # a new file only: never through a planted one
        safe_files.copy_bounded(tmp_path / "fits.csv", tmp_path / "copy.csv", LIMIT)
