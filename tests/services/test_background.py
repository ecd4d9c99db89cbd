"""The background-service helper that the review server and the dashboard share: a real detached
process (Python's own http.server) started, found running, refused a second time, stopped; a
process that exits at once is an error with its log; a stop we may not make is an error."""

from __future__ import annotations

import os
import signal
import socket
import sys
from pathlib import Path

import pytest

from judging.app import process as app_process
from judging.errors import JudgingError
from judging.services.background import BackgroundService


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _service() -> BackgroundService:
    return BackgroundService(
        name="the file server", one="a file server", pid_file="files.pid", log_file="files.log",
        health_path="/", stop_command="stop-files --home",
        error=lambda message, tail: JudgingError(message + (f" [{tail}]" if tail else "")),
        last_line=lambda text: (text.strip().splitlines() or ["no output"])[-1])


def _start(service: BackgroundService, home: Path, port: int, *argv: str) -> dict:
    command = [sys.executable, *argv] if argv else \
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    return service.start(home, host="127.0.0.1", port=port, url=f"http://127.0.0.1:{port}",
                         command=lambda: command, ready=lambda pid: service.read(home),
                         timeout=30, pid_data={"what": "files"})


def test_start_status_refuse_and_stop(tmp_path: Path) -> None:
    service, port = _service(), _free_port()
    data = _start(service, tmp_path, port)
    try:
        assert data["what"] == "files" and data["url"] == f"http://127.0.0.1:{port}"
        assert service.running(tmp_path)["pid"] == data["pid"]
        with pytest.raises(JudgingError, match=r"a file server from .* is already running at "
                                               r"http://127\.0\.0\.1:\d+ \(pid \d+\); stop it "
                                               r"with `stop-files --home "):
            _start(service, tmp_path, _free_port())
    finally:
        assert service.stop(tmp_path)
    assert service.running(tmp_path) is None and not service.pid_path(tmp_path).exists()
    assert not service.stop(tmp_path)


def test_a_service_that_exits_at_once_is_an_error_with_its_log(tmp_path: Path) -> None:
    service = _service()
    with pytest.raises(JudgingError, match=r"the file server exited with code 3 before "
                                           r"answering: boom on purpose \(log: .*files\.log\)"):
        _start(service, tmp_path, _free_port(), "-c",
               "import sys; print('boom on purpose'); sys.exit(3)")
    assert not service.pid_path(tmp_path).exists()


def test_a_stop_that_is_not_allowed_is_one_line_for_the_dashboard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As root every kill is allowed: another user's process is played by os.kill refusing.
    port = _free_port()
    data = _start(_service(), tmp_path, port)
    os.replace(tmp_path / "files.pid", tmp_path / app_process.PID_FILE)
    real_kill = os.kill

    def refuse(pid: int, sig: int) -> None:
        if sig == signal.SIGTERM:
            raise PermissionError(1, "Operation not permitted")
        real_kill(pid, sig)

    try:
        monkeypatch.setattr(os, "kill", refuse)
        with pytest.raises(JudgingError, match=r"not allowed to stop the dashboard of .* \(pid "
                                               rf"{data['pid']}, another user's process\)"):
            app_process.stop(tmp_path)
    finally:
        monkeypatch.undo()
        os.killpg(data["pid"], signal.SIGKILL)
