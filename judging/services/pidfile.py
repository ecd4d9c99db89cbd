"""Background services' pid files: the local Argilla review server (`judging review`) and the
dashboard (`judging app`) each record their process in a JSON pid file under their home, and
ask whether that process is still the one that wrote it.

Standard library only: the review server's own environment (argilla-server's pins, apart from
judging's dependencies) imports this module too. Hand-written because no maintained library
records a pid with its start time (to tell a reused pid from ours) and its URL in one file.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from pathlib import Path


def read_pid_file(path: Path) -> dict | None:
    """The pid file's data; None when it is missing, unreadable or holds no integer pid."""
    try:
        data = json.loads(path.read_text())
        int(data["pid"])
        return data
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_pid_file(path: Path, data: dict) -> None:
    """Written beside and renamed over (a reader never sees half of it), readable by its owner
    only (it may hold the server's password)."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle, indent=2)
    os.replace(tmp, path)


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (our own exited child is reaped first)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def start_time(pid: int) -> int | None:
    """The process start time (clock ticks since boot), to tell a reused pid from ours."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def is_ours(data: dict) -> bool:
    """The pid file's process is alive and is the one that wrote it (pids get reused)."""
    pid = int(data["pid"])
    if not alive(pid):
        return False
    recorded, actual = data.get("start_time"), start_time(pid)
    return recorded is None or actual is None or int(recorded) == actual


def running(path: Path) -> dict | None:
    """The pid file's data if its process is running; a stale or unreadable pid file is removed."""
    data = read_pid_file(path)
    if data is not None and is_ours(data):
        return data
    path.unlink(missing_ok=True)
    return None


def port_free(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def log_tail(path: Path, *, lines: int, since: int = 0, what: str = "log") -> str:
    """The last `lines` lines of a log written from byte `since` on."""
    try:
        with path.open("rb") as handle:
            handle.seek(since)
            text = handle.read().decode(errors="replace")
    except OSError:
        return f"(no {what})"
    return "\n".join(text.strip().splitlines()[-lines:]) or f"(empty {what})"
