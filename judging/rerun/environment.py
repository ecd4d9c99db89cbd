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

The install runs in the sandbox too, as contained as a run: its own network namespace whose only
way out is the route to the package index (index_route.py; never this machine's loopback),
under the organizer's build limits (`--build-memory/--build-disk/--build-timeout`; the
environment itself is written in the sandbox's own disk, `--build-disk` in total, and copied into
the cache once the install succeeded and every process it started is gone), with a uv
cache of its own in that disk (the environment's files are hard links to it: the packages take
their size once), removed before it is kept (one submission's install cannot change what
another's copies). Building an sdist runs the package's own code: everything under an
environment folder is the submission's, and this machine never follows a link in it.

The key of an environment is the hash of the environment file (with its pyproject.toml for a
lock) and of every file it names (`-r`, `-c`), the interpreter's version and uv's; an
environment that names anything of the submission's own (a local path, `-e`, a local
`--find-links`, a path source in a lock or `[tool.uv.sources]`) adds the hash of the whole
submission, so it is never shared with another submission. `CACHE/envs/<key>/` holds it once its
build succeeded, recorded by the marker `CACHE/envs/<key>.json` beside it (outside the folder the
install writes, written by a rename in a folder no sandbox sees), and every claim with the same
key reuses it without an install. Builds of one key are serialized by a file lock, so concurrent
workers build it once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from judging.errors import JudgingError, UnsafePathError
from judging.intake import MAX_CONTROL_FILE_BYTES, MAX_ENV_FILE_BYTES, read_confined
from judging.models import RerunEnvironment, RerunLimits
from judging.rerun.index_route import ROUTE_MOUNT, IndexRoute
from judging.rerun.sandbox import Mount, ProcessOutcome, Sandbox

EnvKind = Literal["uv.lock", "pyproject.toml", "requirements.txt", "Dockerfile"]
#: The files that declare an environment, in the order they are looked for in a folder.
ENV_FILES: tuple[EnvKind, ...] = ("uv.lock", "pyproject.toml", "requirements.txt", "Dockerfile")
#: Where an environment is mounted in the sandbox (the same path when it is built and run).
ENV_MOUNT = "/env"
UV_MOUNT = "/opt/judging/uv"
#: uv's cache in the install's sandbox while the environment is made: in its /tmp (a tmpfs of
#: --build-disk), gone with it.
UV_CACHE_DIR = "/tmp/uv-cache"
#: uv's cache while the packages are installed (in the sandbox): a folder of the environment's
#: own tmpfs, so that the environment's files are hard links to the cache's, not copies (a
#: torch environment from the registry is 5.4 GB, and its cache as much: in /tmp the build held
#: both in memory); removed before the environment is kept.
INSTALL_CACHE = ".judging-uv-cache"
#: The resolver's last lines kept when an environment does not build.
RESOLVER_TAIL_LINES = 15
#: Default limits of an install (`--build-memory`, `--build-disk`, `--build-timeout` change
#: them): more time and memory than a run (large wheels), the same sandbox. The disk fits a
#: torch environment from the registry (torch, its CUDA libraries, numpy, scipy: 5.4 GB, 2026-12)
#: with room; its packages held once in memory (`INSTALL_CACHE`), it fits the memory too.
BUILD_LIMITS = RerunLimits(wall_s=1800, cpu_s=3600, memory_mb=8192, processes=256,
                           output_mb=8, disk_mb=8192)
#: An install's CPU time per process, as a multiple of its wall time (a compiler may use more
#: than one core's worth in threads).
BUILD_CPU_PER_WALL = 2
#: The organizer's settings that reach the package registry. Without the sandbox all of them
#: are passed to the install; in the sandbox the proxies stay here (the route chains to them,
#: credentials included) and only the CA bundle and uv's index settings go in. An index URL with
#: credentials in it is seen by the install's sandbox, where an sdist's build code runs: use a
#: credential-free mirror.
NETWORK_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                    "http_proxy", "https_proxy", "no_proxy", "UV_INDEX_URL", "UV_DEFAULT_INDEX",
                    "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_NATIVE_TLS")
SANDBOXED_NETWORK_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "UV_INDEX_URL",
                              "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_INDEX",
                              "UV_NATIVE_TLS")
#: `-r`/`-c` files followed from a requirements file (deeper, or more, counts as naming the
#: submission's own files: the environment is not shared).
MAX_INCLUDED_FILES = 32
#: A requirement that names one of these is a file of the submission, not a registry package.
ARCHIVE_SUFFIXES = (".whl", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".tar")
#: Schemes of a requirement's URL that reach the network (anything else is a local file).
NETWORK_SCHEMES = ("http", "https", "git+http", "git+https", "git+ssh")


#: How a failed install that a limit of ours stopped is described (its record's reason).
INSTALL_STOPPED = "stopped at the {limit} limit"


class EnvironmentError_(JudgingError):
    """An environment that cannot be built (the reason is the resolver's own words)."""

    def __init__(self, message: str, *, build_s: float | None = None):
        super().__init__(message)
        self.build_s = build_s
        """Seconds an install ran before it failed (None: none ran): spent all the same, so a
        `--budget` counts it (a failed install is tried again by the next claim that needs it)."""


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
    """An environment file (or a file it names) this machine does not read: a link out of the
    submission, not a regular file, over its size limit. The claim is not run."""


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


def build_limits(*, memory_mb: int | None = None, disk_mb: int | None = None,
                 wall_s: float | None = None) -> RerunLimits:
    """The install's limits: BUILD_LIMITS with the organizer's `--build-*` options."""
    update: dict[str, float | int] = {}
    if memory_mb is not None:
        update["memory_mb"] = memory_mb
    if disk_mb is not None:
        update["disk_mb"] = disk_mb
    if wall_s is not None:
        update["wall_s"] = wall_s
        update["cpu_s"] = max(1, int(wall_s * BUILD_CPU_PER_WALL))
    return BUILD_LIMITS.model_copy(update=update)


def describe_build_limits(limits: RerunLimits) -> str:
    return (f"installs under {limits.memory_mb} MiB of memory per process, {limits.disk_mb} MiB "
            f"of disk, {limits.wall_s:g} s each")


def read_env_file(root: Path, relative: str) -> bytes:
    """A file of the submission that the install reads, read here (`read_confined`: a link is
    followed only while it stays inside the submission; a regular file, a FIFO or a device
    refused before it is opened for reading; at most MAX_ENV_FILE_BYTES)."""
    try:
        return read_confined(root, relative, limit=MAX_ENV_FILE_BYTES, links=True)
    except FileNotFoundError:
        raise EnvironmentFileError(f"{relative} is not in the submission") from None
    except UnsafePathError as exc:
        raise EnvironmentFileError(f"{relative}: {exc}: not read") from None


def submission_hash(root: Path, *, limit: int | None = None,
                    max_entries: int | None = None) -> str | None:
    """Hash of everything an install or a run in the sandbox can read of a submission (its
    copy): every path, a regular file's bytes, a link's text (never followed), other kinds by
    kind. None when its regular files add up to more than `limit` bytes, or it holds more than
    `max_entries` files and folders (the sandbox's disk, where it is copied): it is not read
    further, so a huge or sparse file, or a million empty ones, cannot keep this machine
    hashing (and a Ray engine packing) before any limit applies."""
    digest = hashlib.sha256()
    total = entries = 0
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        entries += len(dirs) + len(files)
        if max_entries is not None and entries > max_entries:
            return None
        for name in sorted([*dirs, *files]):
            path = Path(folder) / name
            digest.update(os.fsencode(path.relative_to(root)) + b"\0")
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                digest.update(b"link:" + os.fsencode(os.readlink(path)))
            elif stat.S_ISREG(info.st_mode):
                total += info.st_size
                if limit is not None and total > limit:
                    return None
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
                with os.fdopen(fd, "rb") as handle:
                    for chunk in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(chunk)
            else:
                digest.update(f"kind:{stat.S_IFMT(info.st_mode)}".encode())
            digest.update(b"\0")
    return digest.hexdigest()


_HASH_OPTION = re.compile(r"\s+--hash[=\s]\S+")
_FILE_OPTIONS = ("-r", "--requirement", "-c", "--constraint")
_URL_OPTIONS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links")
#: Options of a requirements file that read nothing of the submission.
_PLAIN_OPTIONS = ("--no-index", "--pre", "--prefer-binary", "--only-binary", "--no-binary",
                  "--require-hashes", "--trusted-host")


def _logical_lines(text: str) -> list[str]:
    """A requirements file's lines: continuations joined, comments dropped."""
    joined = re.sub(r"\\\r?\n", " ", text)
    lines = []
    for line in joined.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if line:
            lines.append(line)
    return lines


def _requirement_is_local(text: str, folders: list[Path]) -> bool:
    """Whether a requirement names something other than a registry package (a path, a local
    URL, an archive, a name that is a file or folder of the submission)."""
    text = _HASH_OPTION.sub("", text).strip()
    if "${" in text or text.startswith("-"):  # uv expands variables; an option we do not know
        return True
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return True
    if requirement.url is not None:
        return urlsplit(requirement.url).scheme not in NETWORK_SCHEMES
    name = requirement.name
    return name.endswith(ARCHIVE_SUFFIXES) or any(os.path.lexists(folder / name)
                                                  for folder in folders)


def _requirements_local(root: Path, relative: str, digest, seen: set[str]) -> bool:
    """Whether a requirements file names anything of the submission's own; the files it
    includes (`-r`, `-c`) are added to `digest`."""
    seen.add(relative)
    text = read_env_file(root, relative).decode("utf-8", errors="replace")
    folder = Path(relative).parent
    folders = [root / folder, root]
    for line in _logical_lines(text):
        if not line.startswith("-"):
            if _requirement_is_local(line, folders):
                return True
            continue
        option, _, value = re.sub(r"\s*=\s*|\s+", " ", line, count=1).partition(" ")
        value = value.strip()
        if option in _FILE_OPTIONS:
            included = os.path.normpath(folder / value)
            if ("${" in value or "://" in value or included.startswith("..")
                    or os.path.isabs(value) or len(seen) >= MAX_INCLUDED_FILES):
                return True
            if included in seen:
                continue
            try:
                digest.update(b"include:" + included.encode() + b"\0"
                              + read_env_file(root, included) + b"\0")
            except EnvironmentFileError:
                return True  # what uv reads of it is in the submission's hash
            if _requirements_local(root, included, digest, seen):
                return True
        elif option in _URL_OPTIONS:
            if urlsplit(value).scheme not in ("http", "https"):
                return True
        elif option not in _PLAIN_OPTIONS:  # -e, --editable and anything we do not know
            return True
    return False


def _toml(data: bytes) -> dict | None:
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    return parsed


def _pyproject_local(data: dict | None, folders: list[Path]) -> bool:
    """Whether `uv pip install -r pyproject.toml` reads the submission's own files: uv sources
    or local find-links, dependencies only a build can tell (dynamic), or one that is local."""
    if data is None or not isinstance(data.get("project"), dict):
        return True
    tool = data.get("tool", {})
    uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
    if not isinstance(uv, dict) or any(k in uv for k in ("sources", "find-links", "workspace")):
        return True
    for index in uv.get("index", []) or []:
        if not isinstance(index, dict) or urlsplit(str(index.get("url", ""))).scheme not in (
                "http", "https"):
            return True
    project = data["project"]
    dynamic = project.get("dynamic", [])
    if not isinstance(dynamic, list) or {"dependencies", "optional-dependencies"} & set(
            map(str, dynamic)):
        return True
    dependencies = project.get("dependencies", [])
    return not isinstance(dependencies, list) or any(
        not isinstance(d, str) or _requirement_is_local(d, folders) for d in dependencies)


def _lock_local(lock: dict | None, pyproject: dict | None) -> bool:
    """Whether `uv sync --frozen --no-install-project` installs a package from the submission's
    own files (a path, directory or editable source other than the project itself) or from a
    local registry."""
    if lock is None or not isinstance(lock.get("package", []), list):
        return True
    project = (pyproject or {}).get("project")
    own = canonicalize_name(str(project.get("name", ""))) if isinstance(project, dict) else None
    for package in lock.get("package", []):
        source = package.get("source", {}) if isinstance(package, dict) else None
        if not isinstance(source, dict):
            return True
        for kind, where in source.items():
            if kind in ("registry", "url") and urlsplit(str(where)).scheme in ("http", "https"):
                continue
            if kind == "git":
                continue
            if (kind in ("editable", "virtual") and where == "."
                    and canonicalize_name(str(package.get("name", ""))) == own):
                continue  # the project itself: not installed (--no-install-project)
            return True
    return False


def environment_key(root: Path, request: EnvRequest, interpreter: Interpreter | None) -> str:
    """The hash an environment is built once for: its file (and the pyproject.toml beside a
    lock) and the files it includes, the interpreter's version, uv's version and this
    platform; for an environment that names anything of the submission's own, the whole
    submission too (it is not shared). Raises EnvironmentFileError for an environment file
    this machine does not read."""
    root = root.resolve()
    digest = hashlib.sha256()
    files = [request.file]
    if request.kind == "uv.lock":
        files.append(str(Path(request.file).with_name("pyproject.toml")))
    contents = {name: read_env_file(root, name) for name in files}
    for name in files:  # contents only: the same lock in two submissions is one environment
        digest.update(contents[name] + b"\0")
    folders = [root / request.folder, root]
    if request.kind == "requirements.txt":
        local = _requirements_local(root, request.file, digest, set())
    elif request.kind == "pyproject.toml":
        local = _pyproject_local(_toml(contents[request.file]), folders)
    elif request.kind == "uv.lock":
        # a pyproject.toml above the project may make it a workspace member: uv reads that too
        above = [parent for parent in (root / request.folder).parents
                 if parent.is_relative_to(root) and (parent / "pyproject.toml").exists()]
        local = bool(above) or _lock_local(_toml(contents[request.file]),
                                           _toml(contents[files[1]]))
    else:
        local = False
    if local:
        digest.update(b"submission:" + (submission_hash(root) or "").encode())
    digest.update(json.dumps([request.kind, interpreter.version if interpreter else None,
                              uv_version(), platform.machine()]).encode())
    return digest.hexdigest()[:24]


def _build_script(request: EnvRequest, interpreter: Interpreter, *,
                  cache_in_env: bool = False) -> str:
    """The install, as the sandbox's shell runs it in the submission's copy ($ENVDIR: where the
    environment goes, $UVBIN: uv). `cache_in_env` (in the sandbox): uv's cache for the install
    is a folder of the environment's own disk, whose files the environment's are hard links
    to, removed once the install succeeded (before the environment is kept): the packages take
    their size once in that disk (and in memory: a tmpfs), not twice (`INSTALL_CACHE`)."""
    python = shlex.quote(interpreter.path)  # ours (found by judging), quoted all the same
    venv = f'"$UVBIN" venv --relocatable --quiet --python {python} "$ENVDIR"'
    if request.kind == "uv.lock":
        install = (f'UV_PROJECT_ENVIRONMENT="$ENVDIR" "$UVBIN" sync --frozen '
                   f'--no-install-project --python {python} '
                   f'--project {shlex.quote("./" + request.folder)}')
    else:  # declared names quoted whole: a folder named `$(...)` is a name, not a command
        install = (f'"$UVBIN" pip install --python "$ENVDIR/bin/python" -r '
                   f'{shlex.quote("./" + request.file)}')
    if not cache_in_env:
        return f"set -e\n{venv}\n{install}\n"
    cache = f'"$ENVDIR/{INSTALL_CACHE}"'
    return (f"set -e\n{venv}\nexport UV_CACHE_DIR={cache} UV_LINK_MODE=hardlink\n{install}\n"
            f"rm -rf {cache}\n")


class EnvCache:
    """Built environments under `root`: envs/<key>/ (a venv, the submission's: hostile) and
    envs/<key>.json (its marker, ours)."""

    def __init__(self, root: Path, build_limits: RerunLimits = BUILD_LIMITS):
        self.root = Path(root)
        self.build_limits = build_limits

    def path(self, key: str) -> Path:
        return self.root / "envs" / key

    def with_build_wall(self, wall_s: float) -> EnvCache:
        """The same cache whose installs stop after `wall_s` seconds (what a budget has left)."""
        cut = self.build_limits.model_copy(update={
            "wall_s": wall_s, "cpu_s": max(1, int(wall_s * BUILD_CPU_PER_WALL))})
        return EnvCache(self.root, build_limits=cut)

    def marker(self, key: str) -> Path:
        """Outside the environment's folder: the install never sees it."""
        return self.root / "envs" / f"{key}.json"

    def is_built(self, key: str) -> bool:
        try:
            marker, folder = os.lstat(self.marker(key)), os.lstat(self.path(key))
        except FileNotFoundError:
            return False
        return stat.S_ISREG(marker.st_mode) and stat.S_ISDIR(folder.st_mode)

    def _write_marker(self, key: str, record: RerunEnvironment) -> None:
        """Written to a new file (O_EXCL: never through a link) in CACHE/envs, a folder no
        sandbox sees, then renamed over the marker (a rename replaces a link, never follows
        it)."""
        fd, temporary = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=self.root / "envs")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(record.model_dump_json())
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.marker(key))
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

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
            self.marker(key).unlink(missing_ok=True)
            started = time.monotonic()
            outcome = self._build(submission, request, interpreter, target, sandbox=sandbox,
                                  log=log)
            if outcome.exit_code != 0:
                shutil.rmtree(target, ignore_errors=True)
                raise EnvironmentError_(_resolver_tail(log, outcome, self.build_limits),
                                        build_s=round(time.monotonic() - started, 2))
            record = record.model_copy(update={"built": True,
                                               "build_s": round(time.monotonic() - started, 2)})
            self._write_marker(key, record)
        return BuiltEnv(target, interpreter, record)

    def _build(self, submission: Path, request: EnvRequest, interpreter: Interpreter,
               target: Path, *, sandbox: Sandbox, log: Path | None) -> ProcessOutcome:
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        if not sandbox.enabled:
            # uv's cache: one per build, removed afterwards (a build's code can write to it: it
            # must not reach another submission's install)
            (self.root / "uv-cache").mkdir(parents=True, exist_ok=True)
            cache = Path(tempfile.mkdtemp(prefix="build-", dir=self.root / "uv-cache"))
            try:
                return self._run_build(submission, request, interpreter, target, sandbox=sandbox,
                                       log=log, route=None, cache=cache)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        with IndexRoute.from_environment() as route:
            outcome = self._run_build(submission, request, interpreter, target,
                                      sandbox=sandbox, log=log, route=route)
        if outcome.exit_code != 0 and route.refusals and log is not None:
            with log.open("a", encoding="utf-8") as handle:
                for refusal in route.refusals:
                    handle.write(f"judging: the route to the package index refused "
                                 f"{refusal}\n")
        return outcome

    def _run_build(self, submission: Path, request: EnvRequest, interpreter: Interpreter,
                   target: Path, *, sandbox: Sandbox, log: Path | None,
                   route: IndexRoute | None, cache: Path | None = None) -> ProcessOutcome:
        """The install: without the sandbox, on this machine (uv's cache `cache`); in it, the
        environment in a tmpfs of its own (--build-disk: this machine's disk is written no
        more than that) with uv's cache in it (`INSTALL_CACHE`: the packages once), copied
        into `target` once the install succeeded (`Sandbox.run`'s keep). Each build's cache is its own and
        gone with it: a build's code can write there, and must not reach another submission's
        install."""
        uv = uv_binary()
        script = _build_script(request, interpreter, cache_in_env=route is not None)
        if route is None:  # --no-sandbox: on this machine, its network
            env = {"UV_CACHE_DIR": str(cache), "UVBIN": uv, "ENVDIR": str(target),
                   **{n: os.environ[n] for n in NETWORK_SETTINGS if n in os.environ}}
            mounts: list[Mount] = []
        else:
            env = {"UV_CACHE_DIR": UV_CACHE_DIR, "UVBIN": UV_MOUNT, "ENVDIR": ENV_MOUNT,
                   **{n: os.environ[n] for n in SANDBOXED_NETWORK_SETTINGS if n in os.environ},
                   **route.env}
            mounts = [Mount(Path(uv), UV_MOUNT), Mount(route.folder, ROUTE_MOUNT),
                      *_interpreter_mounts(interpreter), *_certificate_mounts()]
            script = route.start_relay(interpreter.path) + script
        env.update({"UV_PYTHON_DOWNLOADS": "never", "UV_NO_CONFIG": "1", "UV_LINK_MODE": "copy",
                    "UV_NO_PROGRESS": "1"})
        # uv writes its messages (and the resolver's) to stderr: build.txt
        return sandbox.run(["/bin/sh", "-c", script], submission=submission,
                           limits=self.build_limits, mounts=mounts, env=env, stdout=None,
                           stderr=log, keep=Mount(target, ENV_MOUNT) if route else None)

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


#: What an install says when a disk of its sandbox is full (uv's words, Python's, a shell's).
OUT_OF_SPACE = re.compile(r"No space left on device|Disk quota exceeded|os error 28\b|"
                          r"Errno 28\b")
#: What an install says when a process of it met the memory limit (uv's words, Python's, C++'s).
OUT_OF_MEMORY = re.compile(r"memory allocation of \d+ bytes failed|MemoryError|"
                           r"Cannot allocate memory|std::bad_alloc")


def _resolver_tail(log: Path | None, outcome: ProcessOutcome, limits: RerunLimits) -> str:
    """Why an install failed, then the resolver's last lines. A limit of the organizer's that
    the install met is named with its option (the environment may build under a larger one):
    the disk when the install said its disk is full or wrote a file over it, the memory when
    the kernel killed it there; an install's own words are said to be its own."""
    lines: list[str] = []
    if log is not None and log.is_file():
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    lines = [line for line in lines if line.strip()][-RESOLVER_TAIL_LINES:]
    disk = (f"--build-disk {limits.disk_mb} MiB, where the environment and uv's cache are "
            f"written; a larger --build-disk may build it")
    tail = "\n".join(lines) or "the resolver said nothing"
    if outcome.stopped:
        return f"environment failed ({INSTALL_STOPPED.format(limit=outcome.stopped)}): {tail}"
    if outcome.oom_kills:
        why = (f"memory limit reached: the kernel killed it at --build-memory "
               f"{limits.memory_mb} MiB, which the files it writes count in too")
    elif any(OUT_OF_MEMORY.search(line) for line in lines):
        why = (f"memory limit reached: the install said it could not allocate, --build-memory "
               f"{limits.memory_mb} MiB per process; a larger --build-memory may build it")
    elif outcome.signal_name == "SIGXFSZ":
        why = f"wrote a file over the file-size limit, {disk}"
    elif any(OUT_OF_SPACE.search(line) for line in lines):
        why = f"out of space: the install said its disk is full, {disk}"
    else:
        return f"environment failed (exit code {outcome.exit_code}): {tail}"
    return f"environment failed ({why})\n{tail}"  # the limit alone is the reason's line


def _certificate_mounts() -> list[Mount]:
    """The organizer's CA bundle (SSL_CERT_FILE, SSL_CERT_DIR) where the install looks for it,
    when it is not in the sandbox's system already (/etc/ssl, /usr)."""
    mounts = []
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        given = os.environ.get(name)
        if given and os.path.isabs(given) and os.path.exists(given) and not given.startswith(
                ("/etc/ssl/", "/etc/ca-certificates", "/usr/")):
            mounts.append(Mount(Path(given), given))
    return mounts
