"""The environment's install step is as contained as the run (issue 38, part 2): hostile
submissions built here, real bubblewrap, real uv, packages from the registry.

- its own network namespace: the only way out is the route to the package index, never this
  machine's loopback (a requirements file's `--index-url http://127.0.0.1:PORT`, an sdist whose
  build connects to this machine);
- the environment marker lives outside the folder the install writes: a link planted there by a
  build is never written through;
- one submission's install cannot change another's environment through uv's cache;
- an environment that names the submission's own files is not shared with another submission;
  the files it names are read confined;
- the install's limits are the organizer's (`--build-timeout`, shown by `--estimate`).
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from judging.models import RerunStatus
from judging.rerun.cgroup import probe
from judging.rerun.environment import (
    BUILD_LIMITS,
    EnvironmentFileError,
    EnvRequest,
    environment_key,
    find_interpreter,
)
from judging.rerun.index_route import Destination, IndexRoute, allowed_destinations
from judging.rundir import read_reruns
from tests.rerun.conftest import REQUIREMENT, judged_run, judging, need_sandbox, script_claim

PRINT = "import json\nprint(json.dumps({'top1': 93.8}))\n"
#: A local package's build configuration (setuptools from the registry, through the route).
PYPROJECT = ('[build-system]\nrequires = ["setuptools>=61"]\n'
             'build-backend = "setuptools.build_meta"\n\n'
             '[project]\nname = "{name}"\nversion = "0.1.0"\n')


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    need_sandbox()


class Canary:
    """A TCP server on this machine's loopback that counts connections (and answers 404)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.received: list[bytes] = []
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
            try:
                conn.settimeout(1)
                self.received.append(conn.recv(4096))
                conn.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def canary():
    server = Canary()
    yield server
    server.close()


def _local_package(builder, folder: str, name: str, setup_py: str | None = None,
                   module: str = "") -> None:
    """A package of the submission's own, built at install time (its setup.py runs then)."""
    builder.file(f"{folder}/pyproject.toml", PYPROJECT.format(name=name))
    builder.file(f"{folder}/{name}.py", module or "VALUE = 1\n")
    if setup_py is not None:
        builder.file(f"{folder}/setup.py", setup_py)


def _record(run: Path, key: str):
    return read_reruns(run)[key]


# --- row 4: no route to this machine ---------------------------------------------------------

CONNECT_OUT = """
import os, socket, sys, urllib.request
tried = []
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    tried.append("direct: connected")
except OSError as exc:
    tried.append("direct: " + type(exc).__name__)
try:
    urllib.request.urlopen("http://127.0.0.1:{port}/from-setup", timeout=5)
    tried.append("proxied: answered")
except Exception as exc:
    tried.append("proxied: " + str(exc)[:80])
raise SystemExit("tried " + "; ".join(tried))
"""


def test_the_install_cannot_reach_this_machines_loopback(tmp_path: Path, make_submission,
                                                          canary: Canary) -> None:
    index = make_submission("index", "attacker/index", requirements=(
        f"--index-url http://127.0.0.1:{canary.port}/simple/\n" + REQUIREMENT))
    script_claim(index, "paper-1/c1", "run.py", PRINT)
    index.write()
    build = make_submission("build", "attacker/build", requirements="./evil\n")
    _local_package(build, "evil", "evil", CONNECT_OUT.format(port=canary.port))
    script_claim(build, "paper-1/c1", "run.py", PRINT)
    build.write()
    run = judged_run(index.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"))
    assert canary.connections == 0
    for key in ("attacker/index::paper-1/c1", "attacker/build::paper-1/c1"):
        record = _record(run, key)
        assert record.status is RerunStatus.not_run and record.attempted, record.reason
        assert record.reason.startswith("environment failed"), record.reason
    # the index was refused by the route, in the build log
    log = (run / "reruns").rglob("build.txt")
    text = "\n".join(path.read_text(errors="replace") for path in log)
    assert f"refused 127.0.0.1:{canary.port}: not a package index host" in text, text
    # the sdist's build ran and could reach neither the loopback directly nor through the route
    assert "tried direct: ConnectionRefusedError" in text, text
    assert "proxied: HTTP Error 403" in text, text


def test_the_route_refuses_an_index_name_that_resolves_to_this_machine(canary: Canary) -> None:
    def ask(route: IndexRoute) -> bytes:
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(10)
            client.connect(str(route.folder / "proxy.sock"))
            client.sendall(f"GET http://localhost:{canary.port}/simple/ HTTP/1.1\r\n"
                           f"Host: localhost\r\n\r\n".encode())
            return client.recv(4096)

    listed = {("localhost", canary.port): Destination("localhost", canary.port, "http")}
    with IndexRoute(listed) as route:
        assert b"403" in ask(route).split(b"\r\n")[0]
        assert route.refusals == ["localhost: resolves to a loopback address"]
    assert canary.connections == 0
    # the same index named by the organizer themselves is theirs to allow
    named = {("localhost", canary.port): Destination("localhost", canary.port, "http",
                                                     named=True)}
    with IndexRoute(named) as route:
        assert b"404" in ask(route).split(b"\r\n")[0]
    assert canary.connections == 1


def _connect(route: IndexRoute, target: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(str(route.folder / "proxy.sock"))
        client.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        return client.recv(4096)


def test_the_route_allows_the_organizers_indexes_and_chains_to_their_proxy(
        canary: Canary) -> None:
    allowed = allowed_destinations({"UV_INDEX": "internal=https://mirror.example:8443/simple",
                                    "UV_EXTRA_INDEX_URL": "file:///opt/wheels"})
    assert set(allowed) == {("pypi.org", 443), ("files.pythonhosted.org", 443),
                            ("mirror.example", 8443)}
    assert allowed[("mirror.example", 8443)].named
    proxies = {"https": f"http://user:secret@127.0.0.1:{canary.port}"}
    with IndexRoute(allowed, proxies=proxies) as route:
        assert _connect(route, "127.0.0.1:6900").startswith(b"HTTP/1.1 403")
        assert canary.connections == 0  # refused before it reaches the organizer's proxy
        # the organizer's proxy (here: one that refuses) is asked, with its credentials
        assert _connect(route, "pypi.org:443").startswith(b"HTTP/1.1 403")
    assert canary.connections == 1
    assert canary.received[0].startswith(b"CONNECT pypi.org:443 HTTP/1.1\r\n")
    assert b"Proxy-Authorization: Basic dXNlcjpzZWNyZXQ=\r\n" in canary.received[0]
    assert route.refusals == ["127.0.0.1:6900: not a package index host",
                              "pypi.org: the organizer's proxy refused it"]


# --- row 3: the marker -----------------------------------------------------------------------

PLANT_LINKS = """
import os
for name in (".judging-env.json", "planted-link"):
    try:
        os.symlink({victim!r}, "/env/" + name)
    except OSError:
        pass
from setuptools import setup
setup()
"""


def test_a_link_planted_in_the_environment_is_never_written_through(
        tmp_path: Path, make_submission) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the organizer's file\n")
    builder = make_submission(requirements="./plant\n")
    _local_package(builder, "plant", "plant", PLANT_LINKS.format(victim=str(victim)))
    script_claim(builder, "paper-1/c1", "run.py", PRINT)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    cache = tmp_path / "cache"
    judging("rerun", str(run), "--env-cache", str(cache))
    record = _record(run, "tester/sub-1::paper-1/c1")
    assert record.status is RerunStatus.reproduced, record.reason
    env = cache / "envs" / record.environment.key
    assert os.path.islink(env / ".judging-env.json")  # the build did plant it
    assert victim.read_text() == "the organizer's file\n"
    # the marker is ours, beside the folder, a regular file
    marker = cache / "envs" / f"{record.environment.key}.json"
    assert marker.is_file() and not marker.is_symlink()
    assert json.loads(marker.read_text())["key"] == record.environment.key
    again = judging("rerun", str(run), "--env-cache", str(cache), "--force")
    assert "0 to build" in again
    assert victim.read_text() == "the organizer's file\n"


# --- row 5: the uv cache ---------------------------------------------------------------------

POISON_CACHE = """
import os, pathlib, subprocess
cache = os.environ.get("UV_CACHE_DIR", "/uv-cache")
uv = os.environ.get("UVBIN", "/opt/judging/uv")
subprocess.run([uv, "venv", "--quiet", "/tmp/fill"], check=False)
subprocess.run([uv, "pip", "install", "--quiet", "--python", "/tmp/fill/bin/python",
                "iniconfig==2.0.0"], check=False)
poisoned = 0
for path in pathlib.Path(cache).rglob("__init__.py"):
    if path.parent.name == "iniconfig":
        path.chmod(0o644)
        with open(path, "a") as handle:
            handle.write("\\nPOISONED = True\\n")
        poisoned += 1
pathlib.Path("/env/poisoned").write_text(str(poisoned))
from setuptools import setup
setup()
"""
VICTIM = ("import json, iniconfig\n"
          "print(json.dumps({'top1': 0.0 if hasattr(iniconfig, 'POISONED') else 93.8}))\n")


def test_one_install_cannot_change_another_submissions_environment(
        tmp_path: Path, make_submission) -> None:
    attacker = make_submission("a-attacker", "attacker/sub", requirements="./poison\n")
    _local_package(attacker, "poison", "poison", POISON_CACHE)
    script_claim(attacker, "paper-1/c1", "run.py", PRINT)
    attacker.write()
    victim = make_submission("b-victim", "victim/sub",
                             requirements="# the victim's own\n" + REQUIREMENT)
    script_claim(victim, "paper-1/c1", "run.py", VICTIM)
    victim.write()
    run = judged_run(attacker.root.parent, tmp_path / "run")
    cache = tmp_path / "cache"
    judging("rerun", str(run), "--env-cache", str(cache))
    first = _record(run, "attacker/sub::paper-1/c1")
    second = _record(run, "victim/sub::paper-1/c1")
    assert first.status is RerunStatus.reproduced, first.reason
    assert first.finished_at <= second.started_at  # the attacker's install came first
    # it did poison the cache it was given (its own)
    poisoned = cache / "envs" / first.environment.key / "poisoned"
    assert int(poisoned.read_text()) >= 1
    assert second.status is RerunStatus.reproduced, second.reason
    assert second.values[0].rerun == 93.8
    # each build's cache is gone with it (in the sandbox's /tmp: nothing of it on this machine)
    assert not (cache / "uv-cache").exists() or not any((cache / "uv-cache").iterdir())


# --- row 6: local paths in the key -----------------------------------------------------------

def test_environments_that_name_local_code_are_not_shared(tmp_path: Path,
                                                          make_submission) -> None:
    keys = []
    for name, value in (("one", 93.8), ("two", 12.0)):
        builder = make_submission(name, f"team-{name}/sub", requirements="./lib-src\n")
        _local_package(builder, "lib-src", "libsrc", module=f"VALUE = {value}\n")
        script_claim(builder, "paper-1/c1", "run.py",
                     "import json, libsrc\nprint(json.dumps({'top1': libsrc.VALUE}))\n",
                     reproduced=value, reported=value)
        builder.write()
        keys.append(f"team-{name}/sub::paper-1/c1")
    run = judged_run(tmp_path / "subs", tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"))
    one, two = (_record(run, key) for key in keys)
    assert one.environment.key != two.environment.key
    assert one.status is RerunStatus.reproduced and one.values[0].rerun == 93.8
    assert two.status is RerunStatus.reproduced and two.values[0].rerun == 12.0, two.reason


def _key(root: Path, file: str = "requirements.txt", kind: str = "requirements.txt") -> str:
    request = EnvRequest(kind=kind, file=file, python=None)  # type: ignore[arg-type]
    return environment_key(root, request, find_interpreter(None))


def test_the_key_covers_included_files_and_shares_registry_only_environments(
        tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        root.mkdir()
        (root / "requirements.txt").write_text("-r base.txt\n")
        (root / "base.txt").write_text(REQUIREMENT)
        (root / "run.py").write_text(f"# {root.name}\n")
    assert _key(a) == _key(b)  # registry packages only: one environment for both
    (b / "base.txt").write_text("iniconfig==1.1.1\n")
    assert _key(a) != _key(b)
    # a link out of the submission is not read here: the environment is the submission's own
    outside = tmp_path / "outside.txt"
    outside.write_text(REQUIREMENT)
    (b / "base.txt").unlink()
    (b / "base.txt").symlink_to(outside)
    first = _key(b)
    (b / "run.py").write_text("# changed\n")
    assert _key(b) != first
    # a requirements file that is a link out, or a FIFO, is refused in our words (never a hang)
    (b / "requirements.txt").unlink()
    (b / "requirements.txt").symlink_to(outside)
    with pytest.raises(EnvironmentFileError, match="a link that leaves the submission"):
        _key(b)
    (b / "requirements.txt").unlink()
    os.mkfifo(b / "requirements.txt")
    errors: list[BaseException] = []

    def read() -> None:
        try:
            _key(b)
        except BaseException as exc:  # noqa: B036 - handed to the test's thread
            errors.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a FIFO hung"
    assert len(errors) == 1 and isinstance(errors[0], EnvironmentFileError)
    assert "not a regular file" in str(errors[0])


LOCK = '''version = 1
requires-python = ">=3.11"

[[package]]
name = "iniconfig"
version = "2.0.0"
source = {{ registry = "https://pypi.org/simple" }}

[[package]]
name = "repro"
version = "0.1.0"
source = {{ editable = "." }}

[[package]]
name = "mylib"
version = "0.1.0"
source = {{ {mylib} }}
'''
PROJECT = ('[project]\nname = "repro"\nversion = "0.1.0"\ndependencies = ["iniconfig==2.0.0"]'
           '\n')


def test_path_sources_in_a_lock_or_a_pyproject_make_the_environment_the_submissions(
        tmp_path: Path) -> None:
    cases = iter(range(100))

    def keys(kind: str, files: dict[str, str]) -> tuple[str, str]:
        found = []
        case = next(cases)
        for name in ("a", "b"):
            root = tmp_path / f"{case}" / name
            root.mkdir(parents=True)
            for relative, text in files.items():
                (root / relative).write_text(text)
            (root / "lib.py").write_text(f"# {name}\n")
            found.append(_key(root, kind, kind))
        return found[0], found[1]

    registry = LOCK.format(mylib='registry = "https://pypi.org/simple"')
    one, two = keys("uv.lock", {"uv.lock": registry, "pyproject.toml": PROJECT})
    assert one == two  # the project itself (editable ".") is not installed: shared
    one, two = keys("uv.lock", {"uv.lock": LOCK.format(mylib='directory = "lib"'),
                                "pyproject.toml": PROJECT})
    assert one != two
    one, two = keys("pyproject.toml", {"pyproject.toml": PROJECT})
    assert one == two
    sources = PROJECT + '\n[tool.uv.sources]\niniconfig = { path = "lib" }\n'
    one, two = keys("pyproject.toml", {"pyproject.toml": sources})
    assert one != two


# --- row 13: the organizer's build limits ----------------------------------------------------

def test_the_build_limits_are_the_organizers(tmp_path: Path, make_submission) -> None:
    builder = make_submission(requirements="./slow\n")
    _local_package(builder, "slow", "slow",
                   "import time\ntime.sleep(600)\nfrom setuptools import setup\nsetup()\n")
    script_claim(builder, "paper-1/c1", "run.py", PRINT)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    cache = str(tmp_path / "cache")
    estimate = judging("rerun", str(run), "--env-cache", cache, "--estimate",
                       "--build-memory", "3000", "--build-disk", "2000", "--build-timeout", "5")
    assert ("1 to build (installs under 3000 MiB of memory per process, 2000 MiB of disk, "
            "5 s each)") in estimate.replace("\n", " ")
    started = time.monotonic()
    judging("rerun", str(run), "--env-cache", cache, "--build-timeout", "5")
    took = time.monotonic() - started
    record = _record(run, "tester/sub-1::paper-1/c1")
    assert record.status is RerunStatus.not_run
    assert record.reason.startswith("environment failed (stopped at the wall time limit)"), \
        record.reason
    assert took < 60
    # the same limits: already re-run; others: it runs again
    same = judging("rerun", str(run), "--env-cache", cache, "--estimate", "--build-timeout", "5")
    assert "1 already re-run with the same inputs, 0 to run" in same
    more = judging("rerun", str(run), "--env-cache", cache, "--estimate", "--build-timeout", "900")
    assert "0 already re-run with the same inputs, 1 to run" in more


def test_an_install_cannot_fill_this_machines_disk_through_its_environment(
        tmp_path: Path, make_submission) -> None:
    """The environment's folder was this machine's folder, written by the install: bounded per
    file (--build-disk) but not in total, so a build (an in-tree backend, the submission's own
    code) filled this machine's disk with as many files as it liked; uv's cache, a folder of
    this machine too, the same. Both are written in the sandbox's own disk, --build-disk each
    in total; the environment is kept once the install succeeds."""
    need_sandbox()
    builder = make_submission(requirements="./fill\n")
    builder.file("fill/pyproject.toml", '[project]\nname = "fill"\nversion = "1"\n\n'
                 '[build-system]\nrequires = []\nbuild-backend = "fillbackend"\n'
                 'backend-path = ["."]\n')
    builder.file("fill/fillbackend.py", """
import os, sys

def fill(folder):
    written = 0
    try:
        for i in range(6):
            with open(f"{folder}/junk{i}", "wb") as handle:
                for _ in range(30):
                    handle.write(b"x" * (1 << 20))
                    handle.flush()
                    written += 1
    except OSError:
        pass
    return written

sys.stderr.write(f"FILLED {fill('/env')} MiB\\n")
sys.stderr.write(f"CACHED {fill(os.environ.get('UV_CACHE_DIR', '/uv-cache'))} MiB\\n")
raise SystemExit(1)
""")
    script_claim(builder, "paper-1/c1", "run.py", PRINT)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--build-disk", "64")
    record = _record(run, "tester/sub-1::paper-1/c1")
    assert record.status is RerunStatus.not_run, record.reason
    log = (run / record.logs / "build.txt").read_text()
    for word in ("FILLED", "CACHED"):  # the environment, then uv's cache
        found = re.search(rf"{word} (\d+) MiB", log)
        assert found is not None and int(found[1]) <= 64, (word, log[-2000:])


def test_an_install_out_of_space_names_build_disk(tmp_path: Path, make_submission) -> None:
    """An install that fills the sandbox's disk (`--build-disk`: the environment and uv's cache
    are written there) was recorded "environment failed (exit code 1): Using Python ...
    environment at: /env", final, with "No space left on device" only in its tail: the
    organizer's limit looked like the submission's fault. The reason names the limit now."""
    need_sandbox()
    builder = make_submission(requirements="scipy==1.14.1\n")  # about 120 MB installed
    script_claim(builder, "paper-1/c1", "eval.py", PRINT)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--build-disk", "64")
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.not_run and record.attempted, record
    assert record.reason.startswith(
        "environment failed (out of space: the install said its disk is full, --build-disk "
        "64 MiB"), record.reason


def test_an_install_out_of_memory_names_build_memory(tmp_path: Path, make_submission) -> None:
    """An install stopped at its memory limit (`--build-memory`) was recorded "exit code 134"
    (uv's "memory allocation of N bytes failed") or a kill, final, as if the submission's
    environment were broken. The reason names the limit now. A package the test builds (no
    network) larger than the limit: what a registry package needs varies with uv's cache."""
    need_sandbox()
    run = _judged_with_a_big_wheel(make_submission, tmp_path / "run", megabytes=300)
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--build-memory", "256")
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.not_run and record.attempted, record
    assert record.reason.startswith("environment failed (") \
        and "--build-memory 256 MiB" in record.reason, (record.reason, record.stderr_tail)


def _judged_with_a_big_wheel(make_submission, out: Path, *, megabytes: int) -> Path:
    """A judged run of one submission whose requirements are a wheel of `megabytes` it carries
    (`_big_wheel`), and one script claim printing its figure."""
    builder = make_submission(requirements="./bigpkg-1.0-py3-none-any.whl\n")
    _big_wheel(builder.root / "bigpkg-1.0-py3-none-any.whl", megabytes)
    script_claim(builder, "paper-1/c1", "eval.py", PRINT)
    builder.write()
    return judged_run(builder.root.parent, out)


def _big_wheel(path: Path, megabytes: int) -> None:
    """A wheel of one package holding `megabytes` of random bytes (stored: as large unpacked)."""
    import zipfile

    files = {"bigpkg/__init__.py": b"", "bigpkg/blob.bin": os.urandom(megabytes << 20),
             "bigpkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: bigpkg\n"
                                              b"Version: 1.0\n",
             "bigpkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\n"
                                           b"Root-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + "bigpkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, data in {**files, "bigpkg-1.0.dist-info/RECORD": record.encode()}.items():
            archive.writestr(name, data)


def test_an_install_holds_its_packages_once_in_memory(tmp_path: Path, make_submission) -> None:
    """uv's cache was in the install's /tmp and the environment a copy of it in another tmpfs:
    every package was held twice in memory (both charged to the install's memory limit), so a
    torch environment from the registry (5.4 GB, its cache as much) needed 11 GB. The
    environment's files are hard links to a cache in its own disk now: once."""
    need_sandbox()
    if probe(BUILD_LIMITS) is not None:
        pytest.skip("no cgroup here: tmpfs files are not charged to the install's memory")
    run = _judged_with_a_big_wheel(make_submission, tmp_path / "run", megabytes=200)
    # the submission's copy (200 MiB) and the cache (200), with the environment as links (none
    # more), fit 580 MiB with uv itself; as a copy (200 more: 600 before uv) they cannot. uv's
    # own share varies with the machine's load: 120 MiB of room (520) ran out once in a full
    # suite of three test processes, never alone.
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--build-memory", "580")
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.reproduced, (record.reason, record.stderr_tail)
    built = tmp_path / "cache" / "envs" / record.environment.key
    assert not (built / ".judging-uv-cache").exists()
    assert sum(p.stat().st_size for p in built.rglob("blob.bin")) == 200 << 20
