"""The environment a submission declares, built with uv from the package registry, once per
hash of what it is built from, and reused.

Found beside the script, then in each folder up to the submission's root (or named by the
claim's `evidence.rerun.environment`), in this order: `uv.lock` (with its pyproject.toml:
`uv sync --frozen`), `pyproject.toml` (its dependencies: `uv pip install -r pyproject.toml`),
`requirements.txt` (`uv pip install -r`), `Dockerfile` (only an engine that runs containers
builds it: HF Jobs). The Python is the one pinned (the claim's `python`, else `.python-version`
beside the file, else the file's `requires-python`), found among this machine's interpreters:
uv never downloads one. A pin is a version or a version specifier only (`python_request`): a
path or a program's name never reaches uv, and only interpreters on judging's own search path
run. The submission's files read here are read confined (intake's `read_confined`).

The install runs in the sandbox too (the registry reachable, nothing else of the host): building
an sdist runs the package's own code. The key of an environment is the hash of the environment
file (with its pyproject.toml for a lock), the interpreter's version and uv's; `CACHE/envs/<key>/`
holds it once its build succeeded (a marker file records it), and every claim with the same key
reuses it without an install. Builds of one key are serialized by a file lock, so concurrent
workers build it once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from judging.errors import JudgingError, UnsafePathError
from judging.intake import MAX_CONTROL_FILE_BYTES, MAX_ENV_FILE_BYTES, read_confined
from judging.models import RerunEnvironment, RerunLimits
from judging.rerun.sandbox import Mount, ProcessOutcome, Sandbox

EnvKind = Literal["uv.lock", "pyproject.toml", "requirements.txt", "Dockerfile"]
#: The files that declare an environment, in the order they are looked for in a folder.
ENV_FILES: tuple[EnvKind, ...] = ("uv.lock", "pyproject.toml", "requirements.txt", "Dockerfile")
#: Where an environment is mounted in the sandbox (the same path when it is built and run).
ENV_MOUNT = "/env"
UV_MOUNT = "/opt/judging/uv"
UV_CACHE_MOUNT = "/uv-cache"
#: The resolver's last lines kept when an environment does not build.
RESOLVER_TAIL_LINES = 15
#: Limits of an install: more time and memory than a run (large wheels), the same sandbox.
BUILD_LIMITS = RerunLimits(wall_s=1800, cpu_s=3600, memory_mb=8192, processes=256,
                           output_mb=8, disk_mb=4096)
MARKER = ".judging-env.json"
#: The organizer's settings that reach the package registry, passed to the install step (never to
#: a run): the CA bundle, proxies and uv's index. An index URL with credentials in it is seen by
#: the install's sandbox, where an sdist's build code runs: use a credential-free mirror.
NETWORK_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                    "http_proxy", "https_proxy", "no_proxy", "UV_INDEX_URL", "UV_DEFAULT_INDEX",
                    "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_NATIVE_TLS")


class EnvironmentError_(JudgingError):
    """An environment that cannot be built (the reason is the resolver's own words)."""


@dataclass(frozen=True)
class EnvRequest:
    """What a claim's environment is built from."""

    kind: EnvKind
    file: str
    """The environment file, relative to the submission folder."""
    python: str | None
    """The Python version asked for (None: any)."""

    @property
    def folder(self) -> str:
        parent = str(Path(self.file).parent)
        return "" if parent == "." else parent


@dataclass(frozen=True)
class Interpreter:
    path: str
    prefix: str
    """sys.base_prefix: mounted read-only into the sandbox."""
    version: str


@dataclass(frozen=True)
class BuiltEnv:
    path: Path
    interpreter: Interpreter
    record: RerunEnvironment


def find_environment(root: Path, script: Path, declared: Path | None) -> EnvRequest | None:
    """The environment file of a script: the declared one, else the first of ENV_FILES beside
    the script, then in each parent folder up to `root`. Only a regular file inside the
    submission counts (a link is followed only while it stays inside; a FIFO, a device or a
    link out of the submission is not used)."""
    root = root.resolve()
    if declared is not None:
        kind = _kind(declared.name)
        if kind is None or not _inside_file(root, declared):
            return None
        return EnvRequest(kind=kind, file=declared.resolve().relative_to(root).as_posix(),
                          python=None)
    folder = script.resolve().parent
    while True:
        for name in ENV_FILES:
            candidate = folder / name
            if _inside_file(root, candidate):
                if name == "uv.lock" and not _inside_file(root, folder / "pyproject.toml"):
                    continue
                return EnvRequest(kind=name, file=candidate.relative_to(root).as_posix(),
                                  python=None)
        if folder == root or not folder.is_relative_to(root):
            return None
        folder = folder.parent


def _inside_file(root: Path, path: Path) -> bool:
    """A regular file whose real path is inside `root` (checked without opening it). Raises
    EnvironmentFileError for one over MAX_ENV_FILE_BYTES: the host reads it whole (its hash)."""
    try:
        real = path.resolve()
        info = real.lstat()
    except (OSError, RuntimeError):
        return False
    if not (real.is_relative_to(root) and stat.S_ISREG(info.st_mode)):
        return False
    if info.st_size > MAX_ENV_FILE_BYTES:
        raise EnvironmentFileError(f"the environment file {path.name} is refused "
                                   f"({info.st_size:,} bytes, over the limit of "
                                   f"{MAX_ENV_FILE_BYTES:,}): not run")
    return True


def _kind(name: str) -> EnvKind | None:
    if name == "uv.lock" or name == "pyproject.toml" or name == "Dockerfile":
        return name  # type: ignore[return-value]
    if name.endswith(".txt"):
        return "requirements.txt"
    return None


class EnvironmentFileError(EnvironmentError_):
    """An environment file that is refused before anything reads it (over its size limit): the
    claim is not run."""


class PythonRequestError(EnvironmentError_):
    """A Python request that is not a version or a version specifier (a path, a program's name),
    or a file holding it that is refused: the claim is not run. The message is ours: it never
    repeats the file's text."""


#: The longest Python request read: a version specifier is short; anything longer is not one.
MAX_PYTHON_REQUEST_CHARS = 100
#: A plain version ("3", "3.11", "3.11.4"), and the interpreter names uv also reads
#: ("cpython-3.12", "python3.12"): mapped to their version, nothing else of a name is kept.
_PLAIN_VERSION = re.compile(r"\d{1,2}(?:\.\d{1,3}){0,2}")
_NAMED_VERSION = re.compile(r"(?:cpython|python)[-@]?(\d{1,2}(?:\.\d{1,3}){0,2})",
                            re.IGNORECASE)
#: The comparison operators of a Python request (not `===`, PEP 440's arbitrary equality, which
#: matches any string).
_OPERATORS = frozenset({"==", "!=", "<=", ">=", "<", ">", "~="})
_SPEC_VERSION = re.compile(r"\d{1,2}(?:\.\d{1,3}){0,2}(?:\.\*)?")


def python_request(text: str, where: str) -> str:
    """`text` as a Python request judging passes to uv: a plain version ("3.11") or a version
    specifier (">=3.10,<3.13", re-spelled by `packaging`), else PythonRequestError naming
    `where` (our words for the source, never the text)."""
    text = text.strip()
    named = _NAMED_VERSION.fullmatch(text)
    if named is not None:
        text = named.group(1)
    if len(text) <= MAX_PYTHON_REQUEST_CHARS:
        if _PLAIN_VERSION.fullmatch(text):
            return text
        try:
            specifiers = SpecifierSet(text)
        except InvalidSpecifier:
            specifiers = None
        if specifiers is not None and len(specifiers) > 0 and all(
                s.operator in _OPERATORS and _SPEC_VERSION.fullmatch(s.version)
                for s in specifiers):
            return str(specifiers)
    raise PythonRequestError(f"the Python asked for in {where} is not a version or a version "
                             f"specifier (such as 3.11 or >=3.10,<3.13): not run")


def _read_control(root: Path, relative: str, limit: int, where: str, *,
                  links: bool = False) -> str | None:
    """A file of the submission read on this machine (confined: see `read_confined`; `links`:
    a link that stays inside is followed), as text; None when it is not there."""
    try:
        data = read_confined(root, relative, limit=limit, links=links)
    except FileNotFoundError:
        return None
    except UnsafePathError as exc:
        raise PythonRequestError(f"{where} is refused ({exc}): not run") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PythonRequestError(f"{where} is not UTF-8 text: not run") from None


def pinned_python(root: Path, request: EnvRequest, declared: str | None) -> str | None:
    """The Python an environment asks for, validated (`python_request`): the claim's
    `evidence.rerun.python`, `.python-version` beside the file (its first line that is not a
    comment), the lock's or pyproject's `requires-python`. Raises PythonRequestError (the claim
    is not run) for a request that is not a version, or a file holding it that is refused (a
    link, a FIFO, over its size limit)."""
    if declared and declared.strip():
        return python_request(declared, "evidence.rerun.python")
    prefix = f"{request.folder}/" if request.folder else ""
    text = _read_control(root, f"{prefix}.python-version", MAX_CONTROL_FILE_BYTES,
                         ".python-version")
    if text is not None:
        lines = [line.strip() for line in text.splitlines()
                 if line.strip() and not line.strip().startswith("#")]
        if lines:
            return python_request(lines[0], ".python-version")
    for name in (("uv.lock", "pyproject.toml") if request.kind == "uv.lock" else
                 ("pyproject.toml",) if request.kind == "pyproject.toml" else ()):
        text = _read_control(root, f"{prefix}{name}", MAX_ENV_FILE_BYTES, name, links=True)
        try:
            data = tomllib.loads(text) if text is not None else {}
        except (tomllib.TOMLDecodeError, RecursionError):
            continue
        project = data.get("project")
        found = data.get("requires-python") or (
            project.get("requires-python") if isinstance(project, dict) else None)
        if found is not None:
            if not isinstance(found, str):
                raise PythonRequestError(f"requires-python in {name} is not text: not run")
            if found.strip():
                return python_request(found, f"requires-python in {name}")
    return None


def uv_binary() -> str:
    """The uv executable of the `uv` package (a dependency), else the one on PATH."""
    try:
        from uv import find_uv_bin
        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise EnvironmentError_("uv is not installed (pip install uv)") from None
        return found


def python_search_path() -> str:
    """Where interpreters are looked for (uv's search path): JUDGING_RERUN_PYTHONS (folders,
    os.pathsep-separated), else pyenv's versions, uv's own installs and the system's. pyenv's
    shims are left out: they choose a version by the caller's settings, not by the request."""
    given = os.environ.get("JUDGING_RERUN_PYTHONS")
    if given:
        return given
    folders: list[str] = []
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    uv_pythons = Path(os.environ.get("UV_PYTHON_INSTALL_DIR")
                      or Path.home() / ".local" / "share" / "uv" / "python")
    for base in (pyenv, uv_pythons):
        if base.is_dir():
            folders += [str(p / "bin") for p in sorted(base.iterdir(), key=_version_order,
                                                       reverse=True) if (p / "bin").is_dir()]
    folders += ["/usr/local/bin", "/usr/bin"]
    return os.pathsep.join(folders)


def _version_order(path: Path) -> tuple[int, ...]:
    """"3.13.0" after "3.9.18" (names that hold no version first)."""
    return tuple(int(part) for part in re.findall(r"\d+", path.name)[:3]) or (0,)


#: An environment that pins no Python gets the minor version judging runs on (the newest patch
#: found): the same on every machine of an event, recorded on each result.
DEFAULT_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"

_INTERPRETERS: dict[str | None, Interpreter | str] = {}


def find_interpreter(request: str | None) -> Interpreter:
    """A local interpreter that satisfies `request` (uv's `python find` over judging's own
    search path, no downloads). Only a request `python_request` accepts is passed to uv (never a
    path or a program's name from a submission), and only an interpreter in a folder of
    `python_search_path` is run: what runs here is what judging found itself."""
    if request is not None:
        request = python_request(request, "the request")
    if request in _INTERPRETERS:
        found = _INTERPRETERS[request]
        if isinstance(found, str):
            raise EnvironmentError_(found)
        return found
    search = python_search_path()
    env = {"PATH": search, "UV_PYTHON_DOWNLOADS": "never", "HOME":
           os.environ.get("HOME", "/"), "UV_NO_CONFIG": "1"}
    command = [uv_binary(), "python", "find", "--no-project", "--system",
               request or DEFAULT_PYTHON]
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd="/",
                            timeout=60)
    path = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    folders = {os.path.realpath(folder) for folder in search.split(os.pathsep) if folder}
    if result.returncode != 0 or os.path.realpath(os.path.dirname(path)) not in folders:
        message = (f"no Python {request or ''} on this machine (uv downloads none): "
                   + " ".join(result.stderr.strip().splitlines()[:2]))
        _INTERPRETERS[request] = message
        raise EnvironmentError_(message)
    probe = subprocess.run([path, "-c", "import json, platform, sys; print(json.dumps("
                            "[sys.executable, sys.base_prefix, platform.python_version()]))"],
                           capture_output=True, text=True, env=env, cwd="/", timeout=60)
    executable, prefix, version = json.loads(probe.stdout)
    found = Interpreter(path=os.path.realpath(executable), prefix=os.path.realpath(prefix),
                        version=version)
    _INTERPRETERS[request] = found
    return found


def uv_version() -> str:
    result = subprocess.run([uv_binary(), "--version"], capture_output=True, text=True)
    return result.stdout.strip()


def environment_key(root: Path, request: EnvRequest, interpreter: Interpreter | None) -> str:
    """The hash an environment is built once for: its file (and the pyproject.toml beside a
    lock), the interpreter's version, uv's version and this platform."""
    digest = hashlib.sha256()
    files = [request.file]
    if request.kind == "uv.lock":
        files.append(str(Path(request.file).with_name("pyproject.toml")))
    for name in files:  # contents only: the same lock in two submissions is one environment
        digest.update((root / name).read_bytes() + b"\0")
    digest.update(json.dumps([request.kind, interpreter.version if interpreter else None,
                              uv_version(), platform.machine()]).encode())
    return digest.hexdigest()[:24]


def _build_script(request: EnvRequest, interpreter: Interpreter) -> str:
    """The install, as the sandbox's shell runs it in the submission's copy ($ENVDIR: where the
    environment goes, $UVBIN: uv)."""
    venv = f'"$UVBIN" venv --relocatable --quiet --python {interpreter.path} "$ENVDIR"'
    if request.kind == "uv.lock":
        install = (f'UV_PROJECT_ENVIRONMENT="$ENVDIR" "$UVBIN" sync --frozen '
                   f'--no-install-project --python {interpreter.path} '
                   f'--project "./{request.folder}"')
    else:
        install = f'"$UVBIN" pip install --python "$ENVDIR/bin/python" -r "./{request.file}"'
    return f"set -e\n{venv}\n{install}\n"


class EnvCache:
    """Built environments under `root`: envs/<key>/ (a venv) and a uv download cache."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / "envs" / key

    def is_built(self, key: str) -> bool:
        return (self.path(key) / MARKER).is_file()

    def ensure(self, submission: Path, request: EnvRequest, *, sandbox: Sandbox,
               log: Path | None = None) -> BuiltEnv:
        """The built environment of `request` (built now if the cache has none; the
        resolver's last lines in the error when it does not build)."""
        if request.kind == "Dockerfile":
            raise EnvironmentError_("needs a container engine: the environment is a Dockerfile "
                                    "(re-run it with --engine hf-jobs)")
        interpreter = find_interpreter(request.python)
        key = environment_key(submission, request, interpreter)
        target = self.path(key)
        record = RerunEnvironment(kind=request.kind, file=request.file, key=key,
                                  python=interpreter.version)
        (self.root / "envs").mkdir(parents=True, exist_ok=True)
        with (self.root / "envs" / f"{key}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.is_built(key):
                return BuiltEnv(target, interpreter, record)
            started = time.monotonic()
            outcome = self._build(submission, request, interpreter, target, sandbox=sandbox,
                                  log=log)
            if outcome.exit_code != 0:
                shutil.rmtree(target, ignore_errors=True)
                raise EnvironmentError_(_resolver_tail(log, outcome))
            record = record.model_copy(update={"built": True,
                                               "build_s": round(time.monotonic() - started, 2)})
            (target / MARKER).write_text(record.model_dump_json())
        return BuiltEnv(target, interpreter, record)

    def _build(self, submission: Path, request: EnvRequest, interpreter: Interpreter,
               target: Path, *, sandbox: Sandbox, log: Path | None) -> ProcessOutcome:
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        # uv's download cache, one per sandbox uid (as root, each process of ours has a uid of
        # its own: Ray workers, parallel runs), since its files belong to the uid that wrote them
        owner = sandbox.uid if sandbox.enabled and sandbox.privileged else os.getuid()
        cache = self.root / "uv-cache" / str(owner)
        cache.mkdir(parents=True, exist_ok=True)
        if sandbox.enabled and sandbox.privileged:
            # the install runs as the sandbox's uid: it owns what it writes
            for path in (target, cache):
                os.chown(path, sandbox.uid, sandbox.uid)
        uv = uv_binary()
        inside = sandbox.enabled
        env = {"UV_CACHE_DIR": UV_CACHE_MOUNT if inside else str(cache),
               "UV_PYTHON_DOWNLOADS": "never", "UV_NO_CONFIG": "1", "UV_LINK_MODE": "copy",
               "UV_NO_PROGRESS": "1", "UVBIN": UV_MOUNT if inside else uv,
               "ENVDIR": ENV_MOUNT if inside else str(target),
               **{name: os.environ[name] for name in NETWORK_SETTINGS if name in os.environ}}
        mounts: list[Mount] = []
        if inside:
            mounts = [Mount(target, ENV_MOUNT, writable=True),
                      Mount(cache, UV_CACHE_MOUNT, writable=True), Mount(Path(uv), UV_MOUNT),
                      *_interpreter_mounts(interpreter)]
        # uv writes its messages (and the resolver's) to stderr: build.txt
        return sandbox.run(["/bin/sh", "-c", _build_script(request, interpreter)],
                           submission=submission, limits=BUILD_LIMITS, mounts=mounts, env=env,
                           network=True, stdout=None, stderr=log)

    @staticmethod
    def run_mounts(env: BuiltEnv) -> list[Mount]:
        """The environment (read-only at ENV_MOUNT) and its interpreter, for a run."""
        return [Mount(env.path, ENV_MOUNT), *_interpreter_mounts(env.interpreter)]


def _interpreter_mounts(interpreter: Interpreter) -> list[Mount]:
    # /usr is the sandbox's anyway; another prefix (pyenv's, uv's) is mounted at its own path,
    # where the environment's python links to.
    if interpreter.prefix == "/usr" or interpreter.prefix.startswith("/usr/"):
        return []
    return [Mount(Path(interpreter.prefix), interpreter.prefix)]


def _resolver_tail(log: Path | None, outcome: ProcessOutcome) -> str:
    lines: list[str] = []
    if log is not None and log.is_file():
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    lines = [line for line in lines if line.strip()][-RESOLVER_TAIL_LINES:]
    why = (f"stopped at the {outcome.stopped} limit" if outcome.stopped
           else f"exit code {outcome.exit_code}")
    return f"environment failed ({why}): " + ("\n".join(lines) or "the resolver said nothing")
