"""The local Argilla review server: argilla-server in one process, without Elasticsearch or Redis.

`serve()` runs argilla-server 2.8 on its own SQLite database with the in-memory search engine of
:mod:`judging.review.search_engine` (rebuilt from SQLite at every start) and an in-process Redis
stand-in (fakeredis). The jobs argilla-server enqueues (e.g. recomputing record statuses after a
change of a dataset's task distribution) are run by a worker task inside the server's event loop,
as an `rq` worker would.

`start_background()` / `stop()` / `status()` manage such a server as a detached process whose pid,
URL and login are kept in ``HOME/server.pid`` (JSON) and whose output goes to ``HOME/server.log``.
Everything (database, secret key, logs) lives under one home folder, so the same home gives back
the same users, datasets, records and responses after a restart.

Run ``python -m judging.review.server --home DIR [--host H] [--port P]`` for the foreground server
(the background process is exactly that).

The server runs in an environment of its own (argilla-server 2.8.0 pins pydantic ~2.9, httpx ~0.27
and typer<0.10, which the product environment must not carry): `start_background()` and
`serve_foreground()` start it with that environment's interpreter (`server_python()`). This module
imports only the standard library, httpx, judging.errors, judging.services and (inside functions)
argilla_server and fakeredis, so that environment holds judging without its dependencies.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import inspect
import io
import logging
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from judging.errors import JudgingError, ReviewServerError
from judging.review.server.patches import BUILD_HINT, SUPPORTED_VERSION, apply_patches
from judging.services import pidfile
from judging.services.background import BackgroundService

log = logging.getLogger(__name__)


DEFAULT_HOST = "127.0.0.1"


DEFAULT_PORT = 6900


DEFAULT_USERNAME = "argilla"


DEFAULT_PASSWORD = "12345678"


DEFAULT_API_KEY = "argilla.apikey"


SEARCH_ENGINE = "judging-memory"


PID_FILE = "server.pid"


LOG_FILE = "server.log"


SECRET_FILE = "secret_key"


DATABASE_FILE = "argilla.db"


HEALTH_PATH = "/api/v1/status"


JOB_POLL_SECONDS = 0.1


@dataclasses.dataclass(frozen=True)
class ServerInfo:
    """A running review server: where it is, how to log in, where it logs."""

    url: str
    pid: int
    api_key: str
    username: str
    password: str | None  # None when the owner existed with another password than configured
    log_path: Path | None  # None when the server writes to a terminal
    home: Path

    def login_lines(self, *, secrets: bool = True) -> list[str]:
        """What to tell the person who started the server. Without `secrets` (the background
        server's log file), the password and the API key are left out: logs must not hold them."""
        password = self.password if self.password is not None else "(set earlier; not the configured one)"
        lines = [f"Argilla review server: {self.url}"]
        if secrets:
            lines += [f"  login:   {self.username} / {password}", f"  API key: {self.api_key}"]
        else:
            lines.append(f"  login:   {self.username} (password and API key: judging review status)")
        lines.append(f"  home:    {self.home}")
        if self.log_path is not None:
            lines.append(f"  log:     {self.log_path}")
        return lines


def credentials() -> tuple[str, str, str]:
    """The owner's username, password and API key (env JUDGING_ARGILLA_USERNAME/_PASSWORD/_API_KEY)."""
    return (os.environ.get("JUDGING_ARGILLA_USERNAME") or DEFAULT_USERNAME,
            os.environ.get("JUDGING_ARGILLA_PASSWORD") or DEFAULT_PASSWORD,
            os.environ.get("JUDGING_ARGILLA_API_KEY") or DEFAULT_API_KEY)


def server_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else ("localhost" if host == "::" else host)
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def _secret_key(home: Path) -> str:
    """A signing key for session tokens, kept under home so that tokens survive restarts."""
    path = home / SECRET_FILE
    if path.exists():
        key = path.read_text().strip()
        if key:
            return key
    key = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    return key


def prepare_environment(home: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> dict[str, str]:
    """Set the ARGILLA_* variables for a server on `home`; returns what was set.

    argilla-server reads its settings when first imported: call this before importing it.
    (`host` and `port` go to uvicorn, not to argilla-server's settings; they are accepted so that
    callers describe the whole server in one place.)
    """
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "ARGILLA_HOME_PATH": str(home),
        "ARGILLA_DATABASE_URL": f"sqlite+aiosqlite:///{home / DATABASE_FILE}",
        "ARGILLA_SEARCH_ENGINE": SEARCH_ENGINE,
        # Never contacted: redis.from_url is replaced by fakeredis before argilla_server is imported.
        "ARGILLA_REDIS_URL": "redis://127.0.0.1:6379/0",
        "ARGILLA_REDIS_USE_CLUSTER": "false",
        "ARGILLA_AUTH_SECRET_KEY": _secret_key(home),
        # An .oauth.yaml in the working directory must not change the login.
        "ARGILLA_AUTH_OAUTH_CFG": str(home / ".oauth.yaml"),
        # argilla-server 2.8 telemetry goes through huggingface_hub (ARGILLA_ENABLE_TELEMETRY=0
        # is deprecated there and only sets this one).
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "ARGILLA_ENABLE_SHARE_YOUR_PROGRESS": "false",
    }
    os.environ.update(env)
    return env


def _migrate() -> None:
    """Bring the database to the latest schema (argilla-server's own alembic migrations)."""
    from argilla_server.cli.database.migrate import migrate_db

    echoed = io.StringIO()
    # (alembic's logging.config.fileConfig is disarmed by patches.keep_logging_through_migrations.)
    with contextlib.redirect_stdout(echoed):
        migrate_db(revision="head")
    log.debug("%s", echoed.getvalue().strip())


async def _ensure_owner(username: str, password: str, api_key: str) -> tuple[str, str | None]:
    """Create the owner if missing; returns its actual API key and the password if it still works."""
    from argilla_server.cli.database.users.utils import get_or_new_workspace
    from argilla_server.contexts import accounts
    from argilla_server.database import AsyncSessionLocal
    from argilla_server.models import User, UserRole

    async with AsyncSessionLocal() as session:
        user = await accounts.get_user_by_username(session, username)
        if user is None:
            if await accounts.get_user_by_api_key(session, api_key):
                raise ReviewServerError(f"another user already has the API key {api_key!r}: set "
                                        f"JUDGING_ARGILLA_API_KEY to a different one")
            # As argilla_server.cli.database.users.create_default, with our username and password.
            user = await User.create(
                session,
                first_name="",
                username=username,
                role=UserRole.owner,
                api_key=api_key,
                password_hash=accounts.hash_password(password),
                workspaces=[await get_or_new_workspace(session, username)],
            )
            return user.api_key, password
        return user.api_key, password if accounts.verify_password(password, user.password_hash) else None


async def _rebuild_index() -> tuple[int, int]:
    """Index every dataset and record of the database (argilla-server's own reindexer)."""
    from argilla_server.cli.search_engine.reindex import Reindexer
    from argilla_server.database import AsyncSessionLocal

    from judging.review.server.search_engine import InMemorySearchEngine, reset

    reset()
    engine = InMemorySearchEngine()
    datasets = records = 0
    async with AsyncSessionLocal() as db:
        async for dataset in Reindexer.reindex_datasets(db, engine):
            datasets += 1
            async for batch in Reindexer.reindex_dataset_records(db, engine, dataset):
                records += len(batch)
    return datasets, records


async def _perform(job: Any) -> None:
    from rq.job import JobStatus

    attempts = 1 + max(0, int(getattr(job, "retries_left", None) or 0))
    job.set_status(JobStatus.STARTED)
    for attempt in range(attempts):
        try:
            result = job.func(*job.args, **job.kwargs)
            if inspect.isawaitable(result):
                await result
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("job %s (%s) failed (attempt %d of %d)", job.id, job.func_name, attempt + 1,
                          attempts)
            await asyncio.sleep(min(2.0, 0.2 * 2 ** attempt))
        else:
            job.set_status(JobStatus.FINISHED)
            return
    job.set_status(JobStatus.FAILED)


async def _run_jobs() -> None:
    """An rq worker inside the event loop: the jobs are coroutines that use the server's database
    engine and search engine, so they must run on this loop (not rq's fresh loop in a thread)."""
    from argilla_server.jobs.queues import DEFAULT_QUEUE, HIGH_QUEUE, REDIS_CONNECTION
    from rq import Queue

    queues = [HIGH_QUEUE, DEFAULT_QUEUE]
    while True:
        try:
            found = Queue.dequeue_any(queues, None, connection=REDIS_CONNECTION)
        except Exception:
            log.exception("could not read the job queues")
            found = None
        if found is None:
            await asyncio.sleep(JOB_POLL_SECONDS)
            continue
        job, _queue = found
        await _perform(job)


def _static_dirs(app: Any) -> list[Path]:
    """The temporary copies of the web UI that argilla_server._app makes at import."""
    found = []
    tmp = os.path.realpath(tempfile.gettempdir())
    for route in getattr(app, "routes", []):
        directory = getattr(getattr(route, "app", None), "directory", None)
        if directory and Path(directory).name == "statics" and os.path.realpath(directory).startswith(tmp):
            found.append(Path(directory).parent)
    return found


def serve(home: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Run the review server in this process until SIGTERM/SIGINT (blocks)."""
    home = Path(home).resolve()
    prepare_environment(home, host, port)
    stop_requested: list[int] = []

    def request_stop(signum: int, frame: Any) -> None:
        stop_requested.append(signum)

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        _claim_pid_file(home, host, port)
        apply_patches()  # checks the argilla-server version first
        started = time.monotonic()
        from argilla_server._app import app

        import judging.review.server.search_engine  # noqa: F401  (registers the engine)

        try:
            _migrate()
            asyncio.run(_serve_async(app, home, host, port, started, stop_requested))
        finally:
            for directory in _static_dirs(app):
                shutil.rmtree(directory, ignore_errors=True)
    finally:
        _release_pid_file(home)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


async def _serve_async(app: Any, home: Path, host: str, port: int, started: float,
                       stop_requested: list[int]) -> None:
    import uvicorn

    username, password, api_key = credentials()
    actual_key, actual_password = await _ensure_owner(username, password, api_key)
    datasets, records = await _rebuild_index()
    url = server_url(host, port)
    log_path = _stdout_log(home)
    SERVICE.write(home, {"pid": os.getpid(), "start_time": pidfile.start_time(os.getpid()), "url": url,
                           "host": host, "port": port, "username": username,
                           "password": actual_password, "api_key": actual_key,
                           "log": str(log_path) if log_path else None})
    if stop_requested:
        return

    access_log = os.environ.get("JUDGING_REVIEW_ACCESS_LOG", "") not in ("", "0", "false")
    config = uvicorn.Config(app, host=host, port=port, log_level="info" if access_log else "warning",
                            access_log=access_log, lifespan="on", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    info = ServerInfo(url=url, pid=os.getpid(), api_key=actual_key, username=username,
                      password=actual_password, log_path=log_path, home=home)

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.05)
        print("\n".join(info.login_lines(secrets=sys.stdout.isatty())), flush=True)
        print(f"  ready in {time.monotonic() - started:.1f} s ({datasets} datasets, {records} records "
              f"indexed); stop with Ctrl+C or `judging review stop --home {home}`", flush=True)

    worker = asyncio.create_task(_run_jobs())
    announcer = asyncio.create_task(announce())
    try:
        await server.serve()
    finally:
        for task in (worker, announcer):
            task.cancel()
        await asyncio.gather(worker, announcer, return_exceptions=True)
        from argilla_server.database import async_engine

        await async_engine.dispose()
    if not server.started and not stop_requested:
        raise ReviewServerError(f"the server could not listen on {host}:{port} (see the messages above)")


def _stdout_log(home: Path) -> Path | None:
    """HOME/server.log when this process's output goes there (a background server), else None."""
    path = home / LOG_FILE
    try:
        return path if os.path.samestat(os.fstat(sys.stdout.fileno()), os.stat(path)) else None
    except (OSError, ValueError, io.UnsupportedOperation):
        return None


def _claim_pid_file(home: Path, host: str, port: int) -> None:
    data = SERVICE.running(home)
    if data is not None and int(data["pid"]) != os.getpid():
        raise ReviewServerError(f"a review server from {home} is already running at {data.get('url')} "
                                f"(pid {data['pid']}); stop it with `judging review stop --home {home}`")
    if data is None:
        SERVICE.write(home, {"pid": os.getpid(), "start_time": pidfile.start_time(os.getpid()),
                             "url": server_url(host, port), "host": host, "port": port})


def _release_pid_file(home: Path) -> None:
    data = SERVICE.read(home)
    if data is not None and int(data["pid"]) == os.getpid():
        SERVICE.pid_path(home).unlink(missing_ok=True)


def _info(home: Path, data: dict) -> ServerInfo:
    username, password, api_key = credentials()
    return ServerInfo(url=data["url"], pid=int(data["pid"]), api_key=data.get("api_key") or api_key,
                      username=data.get("username") or username,
                      password=data["password"] if "password" in data else password,
                      log_path=Path(data["log"]) if data.get("log") else None,
                      home=Path(home).resolve())


def log_tail(home: Path, lines: int = 30, since: int = 0) -> str:
    """The last lines of the server log (written from byte `since` on)."""
    return SERVICE.log_tail(home, lines=lines, since=since)


def _last_line(text: str) -> str:
    """The line of the log that says what went wrong: the last exception or error line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^([A-Za-z_][\w.]*(Error|Exception)\b|error:)", line):
            return line if len(line) <= 300 else line[:297] + "..."
    return lines[-1] if lines else "no output"


SERVICE = BackgroundService(
    name="the review server", one="a review server", pid_file=PID_FILE, log_file=LOG_FILE,
    health_path=HEALTH_PATH, stop_command="judging review stop --home",
    error=lambda message, tail: ReviewServerError(message, log_tail=tail), last_line=_last_line,
    log_name="server log", tail_lines=30)


#: Where the server's environment is looked for when no interpreter is given (`make argilla-env`
#: builds it there), relative to the current directory.
DEFAULT_SERVER_PYTHON = Path(".venv-argilla") / "bin" / "python"

_PROBE = ("import importlib.metadata as m, importlib.util as u\n"
          "try:\n    print(m.version('argilla-server'))\nexcept m.PackageNotFoundError:\n    print('-')\n"
          "print(u.find_spec('judging.review.server') is not None)\n")


def server_python(python: str | os.PathLike | None = None) -> Path:
    """The interpreter of the server's environment: `python` if given, else
    ``.venv-argilla/bin/python`` under the current directory if it exists; checked to hold
    argilla-server 2.8.0 (patches.SUPPORTED_VERSION) and this package. (The CLI passes ``--server-python`` or
    JUDGING_ARGILLA_PYTHON as `python`.)"""
    if python is not None and str(python) != "":
        # absolute(), not resolve(): a venv's python is a symlink to the base interpreter.
        path = Path(python).expanduser().absolute()
        where = f"the server python {path}"
        if not path.is_file() or not os.access(path, os.X_OK):
            raise ReviewServerError(f"{where} (--server-python / JUDGING_ARGILLA_PYTHON) is not an "
                                    f"executable file; {BUILD_HINT}, then point "
                                    f"JUDGING_ARGILLA_PYTHON at its bin/python")
    else:
        path = DEFAULT_SERVER_PYTHON.absolute()
        where = f"the server python {path}"
        if not path.is_file():
            raise ReviewServerError(
                f"no environment for the local Argilla server (argilla-server {SUPPORTED_VERSION} "
                f"runs apart from judging's own dependencies): {BUILD_HINT}, then give "
                f"--server-python or set JUDGING_ARGILLA_PYTHON to its bin/python (default: "
                f"{DEFAULT_SERVER_PYTHON} under the current directory)")
    try:
        probe = subprocess.run([str(path), "-c", _PROBE], capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
        version, has_judging = probe.stdout.split()[:2]
    except (OSError, subprocess.SubprocessError, ValueError):
        raise ReviewServerError(f"{where} does not run; {BUILD_HINT}") from None
    if version == "-":
        raise ReviewServerError(f"{where} has no argilla-server; {BUILD_HINT}")
    if version != SUPPORTED_VERSION:
        raise ReviewServerError(f"{where} has argilla-server {version}, but the local review server "
                                f"supports argilla-server {SUPPORTED_VERSION} only; {BUILD_HINT}")
    if has_judging != "True":
        raise ReviewServerError(f"{where} has argilla-server but not the judging package: install "
                                f"it there without its dependencies (`{path} -m pip install "
                                f"--no-deps judging`, or `--no-deps -e .` from a checkout)")
    return path


def _server_command(python: Path, home: Path, host: str, port: int) -> list[str]:
    return [str(python), "-m", "judging.review.server", "--home", str(home), "--host", host,
            "--port", str(port)]


def serve_foreground(home: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                     python: str | os.PathLike | None = None) -> int:
    """Run the server in the foreground in its own environment (`server_python(python)`) until it
    stops; returns its exit code. SIGINT (Ctrl+C), SIGTERM and SIGHUP are passed on to it once."""
    command = _server_command(server_python(python), Path(home).resolve(), host, port)
    # Its own process group: a Ctrl+C at the terminal reaches this process only, which passes it
    # on once (uvicorn takes a second SIGINT as "exit now, skip the graceful shutdown").
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, process_group=0)

    def forward(signum: int, frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signum)

    forwarded = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, forward) for sig in forwarded}
    try:
        code = process.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if process.poll() is None:  # this process is going away for another reason
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(20)
    return code if code >= 0 else 128 - code


def start_background(home: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                     timeout: float = 60, python: str | os.PathLike | None = None) -> ServerInfo:
    """Start `python -m judging.review.server` detached, with the interpreter of the server's
    environment (`server_python(python)`), and wait until it answers."""
    home = Path(home).resolve()

    def ready(pid: int) -> ServerInfo | None:
        data = SERVICE.read(home)  # complete once the server has its owner and API key
        return _info(home, data) if data is not None and "api_key" in data and \
            int(data["pid"]) == pid else None

    return SERVICE.start(home, host=host, port=port, url=server_url(host, port),
                         command=lambda: _server_command(server_python(python), home, host, port),
                         ready=ready, timeout=timeout)


def stop(home: Path, timeout: float = 20) -> bool:
    """Stop the server of this home (SIGTERM, then SIGKILL); False if none was running."""
    return SERVICE.stop(home, timeout)


def status(home: Path) -> ServerInfo | None:
    """The server running from this home, or None."""
    data = SERVICE.running(home)
    return _info(home, data) if data is not None else None


def is_responding(info: ServerInfo) -> bool:
    return SERVICE.healthy(info.url)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judging.review.server",
                                     description="Run the local Argilla review server (foreground).")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("judging").setLevel(logging.INFO)
    try:
        serve(args.home, args.host, args.port)
    except JudgingError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0
