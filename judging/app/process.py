"""Serving the dashboard: in the foreground, or detached with a pid file (`judging app
--background`, stopped by `judging app stop`), as `judging review serve` runs the Argilla server
(judging/review/server/process.py: the same pid-file checks, so a reused pid is never taken for
ours and a stale pid file is removed).

The background server is `python -m judging.app ...` (this module's `main`), with its output in
HOME/app.log and its pid, start time and URL in HOME/app.pid (JSON). An Argilla API key travels
in the child's environment, never on its command line.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from judging import pidfile
from judging.errors import JudgingError

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860
"""Gradio's usual port."""
DEFAULT_HOME = Path(".judging") / "app"
PID_FILE = "app.pid"
LOG_FILE = "app.log"


@dataclass
class Source:
    """What the dashboard reads: a run directory, or a published dataset on the Hub."""

    run_dir: Path | None = None
    dataset: str | None = None
    revision: str | None = None
    calibration_dir: Path | None = None
    rubrics_dir: Path | None = None
    workspace: str | None = None
    download_dir: Path | None = None
    """Where a dataset is downloaded as real files (default: the Hub cache)."""
    event: Path | None = None
    """The event's rules the leaderboard applies (`--event`)."""

    def arguments(self) -> list[str]:
        args = []
        for flag, value in (("--run-dir", self.run_dir), ("--dataset", self.dataset),
                            ("--event", self.event),
                            ("--revision", self.revision),
                            ("--calibration", self.calibration_dir),
                            ("--rubrics-dir", self.rubrics_dir),
                            ("--workspace", self.workspace),
                            ("--download-dir", self.download_dir)):
            if value is not None:
                args += [flag, str(Path(value).resolve()) if isinstance(value, Path) else value]
        return args


@dataclass
class AppInfo:
    url: str
    pid: int
    log_path: Path | None
    home: Path
    mcp: bool = False

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/gradio_api/mcp/"


def app_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def load(source: Source, *, argilla_url: str | None = None, argilla_api_key: str | None = None):
    """The dashboard's data for `source`: a run directory's as `LiveData` (read again when the
    run changes), a dataset's as `AppData`. Read once here, so a bad source fails at start."""
    from judging.app.data import load_dataset, load_run
    from judging.app.live import LiveData, run_roots
    from judging.resolve import load_event_rules

    rules = load_event_rules(source.event)
    if source.dataset:
        return load_dataset(source.dataset, revision=source.revision,
                            local_dir=source.download_dir, rules=rules)
    if source.run_dir is None:
        raise JudgingError("give a run directory or --dataset OWNER/NAME")
    run_dir = source.run_dir
    live = LiveData(lambda: load_run(run_dir, calibration_dir=source.calibration_dir,
                                     rubrics_dir=source.rubrics_dir, argilla_url=argilla_url,
                                     argilla_api_key=argilla_api_key,
                                     workspace=source.workspace, rules=rules),
                    roots=run_roots(run_dir, source.calibration_dir))
    live.current()
    return live


def launch(data, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, mcp: bool = False,
           block: bool = True):
    """Launch the Blocks of `data` (`AppData`, or `LiveData` that follows a run directory) on
    host:port; returns the Blocks (running, when not `block`)."""
    from judging.app.live import LiveData
    from judging.app.ui import CSS, build_app, theme
    from judging.rundir import RunPaths

    app = build_app(data)
    current = data.current() if isinstance(data, LiveData) else data
    roots = [str(path.parent) for record in current.claims.values()
             for path in record.figures.values()]
    if current.run_dir is not None:
        # Figures of claims judged after the start land in the run's folders of figures.
        paths = RunPaths(Path(current.run_dir).resolve())
        roots += [str(paths.diffs), str(paths.logbooks)]
    app.launch(server_name=host, server_port=port, mcp_server=mcp, prevent_thread_lock=not block,
               quiet=True, show_error=True, theme=theme(), css=CSS,
               allowed_paths=sorted(set(roots)), footer_links=["api"], ssr_mode=False)
    return app


# --- the pid file (the pattern of judging/review/server/process.py) ------------------------------


def _pid_path(home: Path) -> Path:
    return Path(home).resolve() / PID_FILE


def _read_pid_file(home: Path) -> dict | None:
    return pidfile.read_pid_file(_pid_path(home))


def _write_pid_file(home: Path, data: dict) -> None:
    pidfile.write_pid_file(_pid_path(home), data)


def _running(home: Path) -> dict | None:
    """The pid file's data if its app is running; a stale pid file is removed."""
    return pidfile.running(_pid_path(home))


def _info(home: Path, data: dict) -> AppInfo:
    return AppInfo(url=data["url"], pid=int(data["pid"]),
                   log_path=Path(data["log"]) if data.get("log") else None,
                   home=Path(home).resolve(), mcp=bool(data.get("mcp")))


def _healthy(url: str, timeout: float = 1.0) -> bool:
    try:
        return httpx.get(url + "/gradio_api/info", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def log_tail(home: Path, lines: int = 20, since: int = 0) -> str:
    return pidfile.log_tail(Path(home).resolve() / LOG_FILE, lines=lines, since=since)


def _last_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("error:") or "Error" in line.split(":")[0]:
            return line[:300]
    return lines[-1][:300] if lines else "no output"


def start_background(source: Source, *, home: Path = DEFAULT_HOME, host: str = DEFAULT_HOST,
                     port: int = DEFAULT_PORT, mcp: bool = False, argilla_url: str | None = None,
                     argilla_api_key: str | None = None, timeout: float = 120) -> AppInfo:
    """Start the dashboard detached and wait until it answers."""
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    data = _running(home)
    if data is not None:
        raise JudgingError(f"a dashboard from {home} is already running at {data.get('url')} "
                           f"(pid {data['pid']}); stop it with `judging app stop --app-home "
                           f"{home}`")
    if not pidfile.port_free(host, port):
        raise JudgingError(f"port {port} on {host} is already in use: pick another with --port")
    log_path = home / LOG_FILE
    with log_path.open("ab") as handle:
        handle.write(f"\n--- starting {time.strftime('%Y-%m-%d %H:%M:%S')} on {host}:{port}\n"
                     .encode())
        offset = handle.tell()
    command = [sys.executable, "-m", "judging.app", *source.arguments(), "--host", host,
               "--port", str(port), *(["--mcp"] if mcp else [])]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for name, value in (("ARGILLA_API_URL", argilla_url), ("ARGILLA_API_KEY", argilla_api_key)):
        if value:
            env[name] = value
    with log_path.open("ab") as handle:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=handle,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   close_fds=True, env=env)
    url = app_url(host, port)
    _write_pid_file(home, {"pid": process.pid, "start_time": pidfile.start_time(process.pid),
                           "url": url, "host": host, "port": port, "log": str(log_path),
                           "mcp": mcp})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _pid_path(home).unlink(missing_ok=True)
            tail = log_tail(home, since=offset)
            raise JudgingError(f"the dashboard exited with code {process.returncode} before "
                               f"answering: {_last_error(tail)} (log: {log_path})")
        if _healthy(url):
            return _info(home, _read_pid_file(home) or {"pid": process.pid, "url": url})
        time.sleep(0.2)
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(5)
    _pid_path(home).unlink(missing_ok=True)
    raise JudgingError(f"the dashboard did not answer at {url} within {timeout:.0f} s: "
                       f"{_last_error(log_tail(home, since=offset))} (log: {log_path})")


def stop(home: Path = DEFAULT_HOME, timeout: float = 20) -> bool:
    """Stop the dashboard of this home (SIGTERM, then SIGKILL); False if none was running."""
    home = Path(home).resolve()
    data = _running(home)
    if data is None:
        return False
    pid = int(data["pid"])
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pidfile.alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if pidfile.alive(pid):
        log.warning("the dashboard (pid %d) did not stop within %.0f s: killing it", pid,
                    timeout)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    _pid_path(home).unlink(missing_ok=True)
    return True


def status(home: Path = DEFAULT_HOME) -> AppInfo | None:
    data = _running(home)
    return _info(home, data) if data is not None else None


def main(argv: list[str] | None = None) -> int:
    """`python -m judging.app`: the foreground dashboard (what `--background` runs)."""
    parser = argparse.ArgumentParser(prog="python -m judging.app",
                                     description="Serve the judging dashboard (foreground).")
    parser.add_argument("--run-dir", type=Path)
    parser.add_argument("--dataset")
    parser.add_argument("--revision")
    parser.add_argument("--calibration", type=Path)
    parser.add_argument("--rubrics-dir", type=Path)
    parser.add_argument("--workspace")
    parser.add_argument("--download-dir", type=Path)
    parser.add_argument("--event", type=Path)
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--mcp", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    source = Source(run_dir=args.run_dir, dataset=args.dataset, revision=args.revision,
                    calibration_dir=args.calibration, rubrics_dir=args.rubrics_dir,
                    workspace=args.workspace, download_dir=args.download_dir,
                    event=args.event)
    try:
        data = load(source, argilla_url=os.environ.get("ARGILLA_API_URL"),
                    argilla_api_key=os.environ.get("ARGILLA_API_KEY"))
    except JudgingError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"dashboard at {app_url(args.host, args.port)}", flush=True)
    launch(data, host=args.host, port=args.port, mcp=args.mcp, block=True)
    return 0
