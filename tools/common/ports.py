"""Ports of 127.0.0.1: one free to listen on, and whether one is free (the servers the
course starts, the hub's and the lab's, each on a port of its own)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now (the system's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_free(port: int) -> bool:
    """Whether ``port`` of 127.0.0.1 can be bound (nothing listens on it)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as a proxy binds it
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
