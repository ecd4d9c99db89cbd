"""`judging` as real processes without an interpreter start each (issue 43).

A test that runs the CLI as a user does (its exit code, what it prints to stdout and stderr, a
traceback it must never print, the files it writes under the process's umask) needs a process of
its own; starting one costs an interpreter and the import of the package, about 1.5 s of CPU on
this 2-core machine for a `judging run` that only refuses its input. A `ForkedCli` server imports
the package once and forks a child per invocation: the child is a real process (its own pid,
environment, working folder, umask and standard streams, given by the caller), runs the CLI's
`main` at the top of the interpreter, and ends as the console script would (an uncaught exception
prints its traceback and exits 1, `sys.exit` gives the code, atexit handlers and non-daemon threads
run). The caller gets the child's exit status as `subprocess.run` gives it.

Hand-written: multiprocessing's forkserver runs a function and returns a value, not a command
line with the caller's streams and exit status; no package does that for a click CLI.

What the child shares with the server is what was imported: a module that reads the environment
when imported reads the server's (started with the environment the module's tests give, see
`ForkedCli.start`), as a process imports it at start. Tests about signals and kill -9 keep real
processes (tests/run/test_crash_safety.py, tests/run/test_interrupt.py).

The client side (`call`, and `python -S -E tests/forked_cli.py call SOCKET ARGS...` for a shell
script) imports the standard library only, so a page's `judging` stays cheap to start.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The modules the server imports before forking: the CLI and what `judging run` loads, so that a
#: child imports (almost) nothing. A command loading more imports the rest itself.
PRELOAD = ("judging.cli", "judging.run.runner", "judging.report", "numpy", "PIL.Image")
#: The longest a server may take to import PRELOAD on a loaded 2-core machine.
START_TIMEOUT_S = 120
_HEADER = struct.Struct("!Q")


# --- the server (python tests/forked_cli.py serve SOCKET ENTRY) -------------------------------

def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    header, fds, _, _ = socket.recv_fds(connection, _HEADER.size, 3)
    (size,) = _HEADER.unpack(header)
    body = bytearray()
    while len(body) < size:
        chunk = connection.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the caller went away mid-request")
        body += chunk
    return json.loads(body), fds


def _become(request: dict, fds: list[int]) -> None:
    """This (forked) process becomes the invocation: its streams, folder, mask, environment."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()  # in place: what read os.environ (rich's console) sees the caller's
    os.environ.update(request["env"])
    sys.argv = [request["argv0"], *request["args"]]
    for name in ("SIGCHLD", "SIGPIPE", "SIGTERM"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _supervise(connection: socket.socket, request: dict, fds: list[int]) -> None:
    """In a child of the server: fork the invocation, tell the caller its pid, then its status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the server's SIG_IGN would reap it for us
    pid = os.fork()
    if pid == 0:
        connection.close()
        _become(request, fds)
        return
    for fd in fds:
        os.close(fd)
    connection.sendall(f"pid {pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    connection.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
    os._exit(0)


def serve(path: str, preload: list[str]) -> None:
    """Accept invocations for ever (the caller stops the server); returns only in an invocation's
    process, set up to run the CLI."""
    for name in preload:
        __import__(name)
    # What was imported is shared with every child until written: kept out of the collector's
    # reach, a child's collections do not copy its pages (the pre-fork servers' practice).
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped by the kernel
    print("ready", flush=True)
    while True:  # until the caller stops the server (`ForkedCli.stop`)
        connection, _ = listener.accept()
        try:
            request, fds = _receive(connection)
        except (ConnectionError, ValueError, OSError):
            connection.close()
            continue
        if os.fork() == 0:
            listener.close()
            try:
                _supervise(connection, request, fds)
            except BaseException:  # noqa: BLE001 - a supervisor ends here, whatever happened
                os._exit(1)
            return  # the invocation's process
        connection.close()
        for fd in fds:
            os.close(fd)


# --- the client ---------------------------------------------------------------------------------

def _send(path: str, args: list[str], *, env: dict[str, str], cwd: str, umask: int,
          argv0: str, fds: list[int]) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(path)
    body = json.dumps({"args": args, "env": env, "cwd": cwd, "umask": umask,
                       "argv0": argv0}).encode()
    socket.send_fds(connection, [_HEADER.pack(len(body))], fds)
    connection.sendall(body)
    return connection


def _replies(connection: socket.socket):
    buffer = b""
    for chunk in iter(lambda: connection.recv(4096), b""):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            kind, value = line.decode().split()
            yield kind, int(value)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def call(path: str, args: list[str]) -> int:
    """This process's invocation, forwarded with its own streams, folder, mask and environment
    (a shell script's `judging`); returns the exit status as a shell reports it."""
    connection = _send(path, args, env=dict(os.environ), cwd=os.getcwd(), umask=_current_umask(),
                       argv0="judging", fds=[0, 1, 2])
    child = None

    def forward(number: int, _frame: object) -> None:
        if child is not None:
            os.kill(child, number)

    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, forward)
    for kind, value in _replies(connection):
        if kind == "pid":
            child = value
        else:
            return value if value >= 0 else 128 - value
    return 255  # the server went away (it is stopped only after the tests)


@dataclass
class ForkedCli:
    """A running server: `run(...)` is `subprocess.run([judging, ...], capture_output=True,
    text=True)` in a forked process."""

    process: subprocess.Popen
    socket_path: str
    argv0: str

    @classmethod
    def start(cls, folder: Path, *, env: dict[str, str] | None = None,
              argv0: str = "judging", umask: int = -1, preload: tuple[str, ...] = PRELOAD
              ) -> ForkedCli:
        """A server importing `preload` under `env` (the environment the invocations will
        mostly have: what a module reads when imported is read from it) and `umask` (-1: this
        process's)."""
        path = str(folder / "judging.sock")
        process = subprocess.Popen([sys.executable, __file__, "serve", path, ",".join(preload)],
                                   stdout=subprocess.PIPE, text=True, umask=umask,
                                   env=env if env is not None else dict(os.environ))
        import selectors

        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(START_TIMEOUT_S) and process.stdout.readline().strip()
        if ready != "ready":
            process.kill()
            raise RuntimeError(f"the forked CLI server did not start (exit {process.poll()})")
        return cls(process, path, argv0)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.process.stdout.close()

    def run(self, args: list[str], *, env: dict[str, str] | None = None,
            cwd: Path | str | None = None, umask: int | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
                open(os.devnull, "rb") as stdin:
            connection = _send(self.socket_path, [str(a) for a in args],
                               env=dict(os.environ) if env is None else env,
                               cwd=str(cwd or os.getcwd()),
                               umask=_current_umask() if umask is None else umask,
                               argv0=self.argv0, fds=[stdin.fileno(), out.fileno(),
                                                      err.fileno()])
            connection.settimeout(timeout)
            child, code = None, None
            try:
                for kind, value in _replies(connection):
                    child, code = (value, code) if kind == "pid" else (child, value)
            except TimeoutError:
                if child is not None:
                    os.kill(child, signal.SIGKILL)
                raise subprocess.TimeoutExpired(args, timeout) from None
            finally:
                connection.close()
            if code is None:
                raise RuntimeError("the forked CLI server went away")
            out.seek(0)
            err.seek(0)
            return subprocess.CompletedProcess(
                list(args), code, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"))

    def shell_command(self) -> str:
        """A command line a shell script runs as `judging` (the tutorials' reader's PATH)."""
        return f"'{sys.executable}' -S -E '{__file__}' call '{self.socket_path}'"


if __name__ == "__main__":
    # Run as a file: its folder (tests/) is not where modules are imported from.
    sys.path.pop(0)
    if sys.argv[1] == "call":
        sys.exit(call(sys.argv[2], sys.argv[3:]))
    serve(sys.argv[2], sys.argv[3].split(","))
    # Here only in an invocation's process: the CLI at the top of the interpreter, as the
    # console script runs it.
    from judging.cli import main

    main(prog_name="judging")
