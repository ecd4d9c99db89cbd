"""One lifecycle for the background services (the local Argilla review server, the dashboard):
start detached with the output in HOME/<log> and the pid, start time and URL in HOME/<pid file>,
wait until it answers, tell whether it runs, stop it (SIGTERM, then SIGKILL).

Standard library and httpx only: the review server's environment imports it too. Hand-written
because no maintained library starts a detached server, records its pid with its start time (to
tell a reused pid from ours) and waits for its health URL; the pid-file checks are `pidfile`'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx

import judging.services.pidfile as pidfile
from judging.errors import JudgingError

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class BackgroundService:
    """One kind of background service and the words its messages use."""

    name: str
    """As messages name it: "the review server", "the dashboard"."""
    one: str
    """One of them: "a review server", "a dashboard"."""
    pid_file: str
    log_file: str
    health_path: str
    """Answers 200 once the service is up."""
    stop_command: str
    """The command that stops the service of a home, without the home: "judging app stop
    --app-home"."""
    error: Callable[[str, str | None], JudgingError]
    """The error to raise, from a message and the log lines that explain it (or None)."""
    last_line: Callable[[str], str]
    """The line of its log that says what went wrong."""
    log_name: str = "log"
    """As messages name its log ("(no server log)")."""
    tail_lines: int = 20
    """Lines of its log read for an error."""

    def pid_path(self, home: Path) -> Path:
        return Path(home).resolve() / self.pid_file

    def read(self, home: Path) -> dict | None:
        return pidfile.read_pid_file(self.pid_path(home))

    def write(self, home: Path, data: dict) -> None:
        pidfile.write_pid_file(self.pid_path(home), data)

    def running(self, home: Path) -> dict | None:
        """The pid file's data if its service is running; a stale pid file is removed."""
        return pidfile.running(self.pid_path(home))

    def log_tail(self, home: Path, *, lines: int | None = None, since: int = 0) -> str:
        """The last lines of the log written from byte `since` on."""
        return pidfile.log_tail(Path(home).resolve() / self.log_file,
                                lines=lines or self.tail_lines, since=since, what=self.log_name)

    def healthy(self, url: str, timeout: float = 1.0) -> bool:
        try:
            return httpx.get(url + self.health_path, timeout=timeout).status_code == 200
        except httpx.HTTPError:
            return False

    def refuse_if_running(self, home: Path) -> None:
        data = self.running(home)
        if data is not None:
            raise self.error(f"{self.one} from {home} is already running at {data.get('url')} "
                             f"(pid {data['pid']}); stop it with `{self.stop_command} {home}`",
                             None)

    def start(self, home: Path, *, host: str, port: int, url: str,
              command: Callable[[], list[str]], ready: Callable[[int], T | None],
              timeout: float, env: Mapping[str, str] | None = None,
              pid_data: dict | None = None) -> T:
        """Start `command()` detached (checked after the service is found not running and its
        port free) and wait until its health URL answers and `ready(pid)` gives what to
        return; a service that exits first, or does not answer in time, is an error with the
        line of its log that says why."""
        home = Path(home).resolve()
        home.mkdir(parents=True, exist_ok=True)
        self.refuse_if_running(home)
        if not pidfile.port_free(host, port):
            raise self.error(f"port {port} on {host} is already in use: pick another with "
                             f"--port", None)
        argv = command()
        log_path = home / self.log_file
        with log_path.open("ab") as handle:
            handle.write(f"\n--- starting {time.strftime('%Y-%m-%d %H:%M:%S')} on {host}:{port}\n"
                         .encode())
            offset = handle.tell()
        with log_path.open("ab") as handle:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=handle,
                                       stderr=subprocess.STDOUT, start_new_session=True,
                                       close_fds=True,
                                       env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        self.write(home, {"pid": process.pid, "start_time": pidfile.start_time(process.pid),
                          "url": url, "host": host, "port": port, "log": str(log_path),
                          **(pid_data or {})})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_path(home).unlink(missing_ok=True)
                tail = self.log_tail(home, since=offset)
                raise self.error(f"{self.name} exited with code {process.returncode} before "
                                 f"answering: {self.last_line(tail)} (log: {log_path})", tail)
            if self.healthy(url):
                found = ready(process.pid)
                if found is not None:
                    return found
            time.sleep(0.2)
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)
        self.pid_path(home).unlink(missing_ok=True)
        tail = self.log_tail(home, since=offset)
        raise self.error(f"{self.name} did not answer at {url} within {timeout:.0f} s: "
                         f"{self.last_line(tail)} (log: {log_path})", tail)

    def stop(self, home: Path, timeout: float = 20) -> bool:
        """Stop the service of this home (SIGTERM, then SIGKILL); False if none was running."""
        home = Path(home).resolve()
        data = self.running(home)
        if data is None:
            return False
        pid = int(data["pid"])
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        except PermissionError:
            raise self.error(f"not allowed to stop {self.name} of {home} (pid {pid}, another "
                             f"user's process)", None) from None
        deadline = time.monotonic() + timeout
        while pidfile.alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if pidfile.alive(pid):
            log.warning("%s (pid %d) did not stop within %.0f s: killing it", self.name, pid,
                        timeout)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 5
            while pidfile.alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
        self.pid_path(home).unlink(missing_ok=True)
        return True
