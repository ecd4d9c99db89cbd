"""Serving the dashboard: in the foreground, or detached with a pid file (`judging app
--background`, stopped by `judging app stop`), as `judging review serve` runs the Argilla server
(both through judging/services/background.py: the same pid-file checks, so a reused pid is never
taken for ours and a stale pid file is removed).

The background server is `python -m judging.app ...` (this module's `main`), with its output in
HOME/app.log and its pid, start time and URL in HOME/app.pid (JSON). An Argilla API key travels
in the child's environment, never on its command line.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from judging.errors import JudgingError
from judging.services import APP_HOME
from judging.services.background import BackgroundService

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860
"""Gradio's usual port."""
DEFAULT_HOME = APP_HOME
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


# --- the background process (judging/services/background.py, as the review server) -------------


def _last_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("error:") or "Error" in line.split(":")[0]:
            return line[:300]
    return lines[-1][:300] if lines else "no output"


SERVICE = BackgroundService(
    name="the dashboard", one="a dashboard", pid_file=PID_FILE, log_file=LOG_FILE,
    health_path="/gradio_api/info", stop_command="judging app stop --app-home",
    error=lambda message, _tail: JudgingError(message), last_line=_last_error)


def _info(home: Path, data: dict) -> AppInfo:
    return AppInfo(url=data["url"], pid=int(data["pid"]),
                   log_path=Path(data["log"]) if data.get("log") else None,
                   home=Path(home).resolve(), mcp=bool(data.get("mcp")))


def log_tail(home: Path, lines: int = 20, since: int = 0) -> str:
    return SERVICE.log_tail(home, lines=lines, since=since)


def start_background(source: Source, *, home: Path = DEFAULT_HOME, host: str = DEFAULT_HOST,
                     port: int = DEFAULT_PORT, mcp: bool = False, argilla_url: str | None = None,
                     argilla_api_key: str | None = None, timeout: float = 120) -> AppInfo:
    """Start the dashboard detached and wait until it answers."""
    home = Path(home).resolve()
    url = app_url(host, port)
    command = [sys.executable, "-m", "judging.app", *source.arguments(), "--host", host,
               "--port", str(port), *(["--mcp"] if mcp else [])]
    env = {name: value for name, value in (("ARGILLA_API_URL", argilla_url),
                                           ("ARGILLA_API_KEY", argilla_api_key)) if value}
    return SERVICE.start(
        home, host=host, port=port, url=url, command=lambda: command, timeout=timeout, env=env,
        pid_data={"mcp": mcp},
        ready=lambda pid: _info(home, SERVICE.read(home) or {"pid": pid, "url": url}))


def stop(home: Path = DEFAULT_HOME, timeout: float = 20) -> bool:
    """Stop the dashboard of this home (SIGTERM, then SIGKILL); False if none was running."""
    return SERVICE.stop(home, timeout)


def status(home: Path = DEFAULT_HOME) -> AppInfo | None:
    data = SERVICE.running(home)
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
