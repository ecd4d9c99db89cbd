"""Hostile scripts in the real sandbox (bubblewrap, prlimit): each is stopped or denied, reported
in one line, leaves nothing running, and the next claim runs.

One submission holds a claim per hostile script, then an honest claim; a second submission holds
a secret another script tries to read; a canary server on this machine's loopback counts the
connections a script manages to make.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from judging.models import RerunRecord, RerunStatus
from judging.rundir import RunPaths, read_reruns
from tests.rerun.conftest import judged_run, judging, need_sandbox, script_claim

SECRET = "s3cret-of-another-submission"
TOKEN = "hf_notarealtoken_butsecret_1234567890"
DAEMON_MARK = "31337"

HOSTILE = {
    "socket": """
import json, socket, sys
s = socket.create_connection(("127.0.0.1", {port}), timeout=3)
s.sendall(b"hello from the sandbox")
print(json.dumps({{"top1": 93.8}}))
""",
    "ssh": """
import os, pathlib
key = pathlib.Path(os.path.expanduser("~/.ssh/id_rsa"))
print("home holds:", sorted(os.listdir(os.path.expanduser("~"))))
print(pathlib.Path("/root/.ssh/id_rsa").read_text())
""",
    "environ": """
print(open("/proc/self/environ", "rb").read().decode(errors="replace"))
print(open("/proc/1/environ", "rb").read().decode(errors="replace"))
""",
    "other_submission": """
print(open({secret!r}).read())
""",
    "fork_bomb": """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
""",
    "write_10gb": """
block = b"x" * (1 << 20)
with open("big.bin", "wb") as handle:
    for _ in range(10 * 1024):
        handle.write(block)
print('{"top1": 93.8}')
""",
    "sleep_forever": """
import time
time.sleep(10 ** 9)
""",
    "daemon": """
import json, os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "DAEMON_MARK"])
    os._exit(0)
print(json.dumps({"top1": 93.8}))
""".replace("DAEMON_MARK", DAEMON_MARK),
    "print_1gb": """
import sys
line = "y" * (1 << 20)
for _ in range(1024):
    sys.stdout.write(line)
""",
    "honest": """
import json, iniconfig
print(json.dumps({"top1": 93.8}))
""",
}


class Canary:
    """A TCP server on 127.0.0.1 that counts the connections it gets."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def _sandbox_processes(run: Path) -> list[str]:
    """Processes of the uids this run's sandboxes ran as (its records name them; any sandbox uid
    when they do not), or sleeping with the daemon's mark, on this machine. Only this run's:
    another test's sandbox may be running beside it (the suite runs in two processes)."""
    used = {int(uid) for uid in re.findall(r"\buid (\d+)", RunPaths(run).reruns.read_text())}
    out = subprocess.run(["ps", "-eo", "uid=,args="], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        uid, _, args = line.strip().partition(" ")
        ours = uid.isdigit() and (int(uid) in used if used else 64000 <= int(uid) < 65000)
        if ours or f"sleep {DAEMON_MARK}" in args:
            found.append(line.strip())
    return found


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory, env_cache: Path):
    need_sandbox()
    from tests.conftest import SubmissionBuilder
    root = tmp_path_factory.mktemp("hostile")
    other = SubmissionBuilder(root / "subs" / "other", "victim/sub", "paper-1")
    secret = other.file("secret.txt", SECRET + "\n")
    script_claim(other, "paper-1/c1", "run.py", "print('{\"top1\": 93.8}')\n")
    other.file("requirements.txt", "iniconfig==2.0.0\n")
    other.write()
    canary = Canary()
    builder = SubmissionBuilder(root / "subs" / "hostile", "attacker/sub", "paper-1")
    builder.file("requirements.txt", "iniconfig==2.0.0\n")
    for name, body in HOSTILE.items():
        text = body.format(port=canary.port, secret=str((other.root / secret).resolve())) \
            if name in ("socket", "other_submission") else body
        script_claim(builder, f"paper-1/{name}", f"hostile_{name}.py", text)
    builder.write()
    run = judged_run(root / "subs", root / "run")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_TOKEN", TOKEN)
        patch.setenv("JUDGING_SECRET_SETTING", TOKEN)
        started = time.monotonic()
        output = judging("rerun", str(run), "--env-cache", str(env_cache), "--timeout", "8",
                         "--cpu", "6", "--memory", "1024", "--processes", "32", "--output", "1",
                         "--disk", "64")
        took = time.monotonic() - started
    canary.close()
    return run, output, canary, took


def _record(run: Path, name: str) -> RerunRecord:
    return read_reruns(run)[f"attacker/sub::paper-1/{name}"]


def _log(run: Path, record: RerunRecord, stream: str) -> str:
    assert record.logs is not None
    return (run / record.logs / f"{stream}.txt").read_text(errors="replace")


def test_each_hostile_script_is_stopped_or_denied_in_one_line(hostile_run) -> None:
    run, output, _, _ = hostile_run
    lines = {line.split(": ")[0]: line for line in output.splitlines() if "attacker/sub::" in line}
    assert len(lines) == len(HOSTILE)
    for name in HOSTILE:
        line = lines[f"attacker/sub::paper-1/{name}"]
        assert "\n" not in line and len(line) < 400, line
    expected = {"socket": RerunStatus.failed, "ssh": RerunStatus.failed,
                "environ": RerunStatus.failed, "other_submission": RerunStatus.failed,
                "fork_bomb": RerunStatus.timeout, "write_10gb": RerunStatus.failed,
                "sleep_forever": RerunStatus.timeout, "print_1gb": RerunStatus.failed,
                "daemon": RerunStatus.reproduced, "honest": RerunStatus.reproduced}
    got = {name: _record(run, name).status for name in HOSTILE}
    assert got == expected, {n: _record(run, n).reason for n in HOSTILE}
    assert "no network in the sandbox" in _record(run, "socket").reason
    assert "output limit" in _record(run, "print_1gb").reason
    write = _record(run, "write_10gb")
    assert "disk limit" in write.reason or "file-size limit" in write.reason, write.reason
    assert "wall-time" in _record(run, "sleep_forever").reason
    # every result says it ran in the sandbox, under the limits given
    for name in HOSTILE:
        record = _record(run, name)
        assert record.sandbox and "bubblewrap" in record.sandbox
        assert record.limits is not None and record.limits.processes == 32


def test_nothing_reaches_the_host_network_or_files(hostile_run) -> None:
    run, _, canary, _ = hostile_run
    assert canary.connections == 0
    environ = _log(run, _record(run, "environ"), "stdout")
    assert TOKEN not in environ and "JUDGING_SECRET_SETTING" not in environ
    assert "PATH=" in environ and "HOME=/home/sandbox" in environ
    for name in ("ssh", "other_submission"):
        record = _record(run, name)
        assert SECRET not in _log(run, record, "stdout") + _log(run, record, "stderr")
        assert "No such file or directory" in (record.stderr_tail or ""), record.stderr_tail
    assert "home holds: []" in _log(run, _record(run, "ssh"), "stdout")
    # the big output and the big file were cut at their limits
    assert (run / _record(run, "print_1gb").logs / "stdout.txt").stat().st_size <= 1 << 20


def test_nothing_is_left_running_and_the_next_claim_runs(hostile_run) -> None:
    run, _, _, took = hostile_run
    assert _sandbox_processes(run) == []
    honest = _record(run, "honest")
    assert honest.status is RerunStatus.reproduced and honest.values[0].rerun == 93.8
    # the limits stopped the hostile ones (two of them at the 8-second wall time)
    assert took < 8 * len(HOSTILE)
    assert read_reruns(run)["victim/sub::paper-1/c1"].status is RerunStatus.reproduced


def test_the_sandbox_refuses_to_start_with_the_reason_and_no_sandbox_is_recorded(
        tmp_path: Path, make_submission, env_cache: Path, monkeypatch: pytest.MonkeyPatch
        ) -> None:
    builder = make_submission()
    script_claim(builder, "paper-1/c1", "run.py", "print('{\"top1\": 93.8}')\n")
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    # a bubblewrap that cannot make its namespaces (as where user namespaces are disabled)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    from click.testing import CliRunner

    from judging.cli import main
    refused = CliRunner().invoke(main, ["rerun", str(run), "--env-cache", str(env_cache)])
    assert refused.exit_code == 1
    assert "bubblewrap cannot start here: bwrap: No permissions to create new namespace" in \
        refused.output.replace("\n", " ")
    assert not RunPaths(run).reruns.exists()
    output = judging("rerun", str(run), "--env-cache", str(env_cache), "--no-sandbox")
    assert "--no-sandbox" in output
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.reproduced and record.sandbox is None
    assert json.loads(RunPaths(run).reruns.read_text().splitlines()[-1])["sandbox"] is None
