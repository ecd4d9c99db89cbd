"""Running untrusted code: bubblewrap (Debian `bubblewrap`) around every local process of a
re-run, with limits set by util-linux's `prlimit`.

What the sandbox does (`Sandbox.run`):

- **no network** (a new network namespace of its own, with only its own loopback), the
  environment's install step included: its only way out is the route to the package index
  (`index_route.py`: a proxy on this machine that allows the index hosts and nothing else,
  reached through a socket mounted into the sandbox), never this machine's loopback;
- **a read-only system**: /usr, /bin, /lib*, /sbin and a short list of /etc files, read-only;
  nothing else of the host is there (no /root, no /home, no /work, no other submission);
- **the submission copied into a scratch folder** (/work, a tmpfs of `disk_mb`), the working
  directory; its own folder is mounted read-only at /submission only to be copied;
- **an empty home** (/home/sandbox, a tmpfs) and an empty /tmp (a tmpfs);
- **what an install keeps** (`keep`: the environment) is written in a tmpfs of its own, and
  copied into this machine's folder by the sandbox's root once the command exited 0 and every
  other process of the sandbox was killed: as root, no folder of this machine is writable
  inside (as a user, that folder is within the command's reach);
- **a clean environment**: PATH, HOME, TMPDIR, LANG and VIRTUAL_ENV, nothing of ours (no token,
  no JUDGING_* or HF_* variable);
- **limits**: CPU time (RLIMIT_CPU: SIGXCPU, then SIGKILL), address space (RLIMIT_AS), processes
  (RLIMIT_NPROC, for a uid of its own), file size (RLIMIT_FSIZE), the tmpfs sizes, wall time and
  output size (watched here: the run is stopped when either is exceeded); memory and processes
  summed over the whole tree by a cgroup (`cgroup.TreeLimits`) where one can be made (as root,
  or delegated), which charges tmpfs files, memfd, shared memory and inodes too; every tmpfs
  (/tmp, /work, home, /dev/shm) bounded in bytes and, as root, in files (`FILE_BYTES`); its own
  IPC namespace (System V shared memory dies with it);
- **the whole process tree killed at the limit**: the run is pid 1's child in a pid namespace of
  its own; bubblewrap is killed, `--die-with-parent` kills pid 1, and the kernel kills every
  process left in the namespace (daemons included) with it;
- run as root (the organizers' machines and CI), bubblewrap sets up the namespaces and the
  copy, then `setpriv` drops to an unprivileged uid with no capabilities and no-new-privs
  before the script starts; run as a user, bubblewrap makes a user namespace and drops every
  capability.

What it does not do: no seccomp filter (the kernel's whole system-call surface is reachable: a
kernel exploit escapes); without a cgroup (not root and nothing delegated), memory is bounded
per process by address space only, not in total (tmpfs files, memfd, shared memory and inodes
are not bounded in total: `check` and every record say so); CPU time per process, the tree's by
the wall time; no GPU. The number a script prints is
the script's: the sandbox keeps the script from the host, not from lying.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from judging.errors import JudgingError
from judging.models import RerunLimits
from judging.rerun.cgroup import MIB, TreeLimits
from judging.rerun.cgroup import probe as probe_cgroup

#: The defaults of `judging rerun` (each an option): generous for a CPU re-run, bounded for a
#: hostile one.
DEFAULT_LIMITS = RerunLimits(wall_s=600, cpu_s=600, memory_mb=4096, processes=64, output_mb=8,
                             disk_mb=1024)
#: The uids a sandboxed process runs as when judging runs as root: one per process of ours, so
#: that RLIMIT_NPROC counts one sandbox's processes only.
SANDBOX_UID_BASE = 64000
SANDBOX_UID_SLOTS = 1000
#: How long the kernel gets to tear down a killed sandbox's namespace before the output pipes are
#: given up on.
TEARDOWN_S = 10.0
#: Results files are read up to this size (bytes).
MAX_RESULTS_BYTES = 1024 * 1024
#: Read-only system folders; /etc only in part (no secrets, no host identity).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ssl", "ca-certificates",
             "alternatives", "localtime", "timezone", "nsswitch.conf", "mime.types", "fonts",
             "os-release", "debian_version", "protocols", "services", "host.conf", "gai.conf",
             "hosts", "matplotlibrc")
#: As root, each tmpfs of the sandbox holds at most one file per this many bytes of its size: a
#: folder of small files fits, a flood of empty ones (each an inode of kernel memory) does not.
FILE_BYTES = 4096
MIN_FILES = 4096
SANDBOX_HOME = "/home/sandbox"
WORK = "/work"
SUBMISSION = "/submission"
#: Where a `keep` folder of this machine is bound (as root, only the sandbox's root enters it).
KEEP_OUT = "/run/judging-keep"


def disk_files(limits: RerunLimits) -> int:
    """The files (and folders) each tmpfs of the sandbox holds at most, as root (FILE_BYTES); a
    submission with more is not copied in, as a user too."""
    return max(MIN_FILES, limits.disk_mb * MIB // FILE_BYTES)


class SandboxUnavailable(JudgingError):
    """bubblewrap is missing or cannot make its namespaces here."""


@dataclass(frozen=True)
class Mount:
    source: Path
    target: str
    writable: bool = False


@dataclass
class ProcessOutcome:
    """What a sandboxed process did."""

    exit_code: int | None
    """None when it was stopped here (wall time, output)."""
    stopped: str | None = None
    """Why it was stopped here: "wall time" or "output"."""
    duration_s: float = 0.0
    cpu_s: float = 0.0
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    results: bytes | None = None
    """The results file's bytes (when one was named and written), at most MAX_RESULTS_BYTES."""
    memory_limit: str | None = None
    """"process tree" (a cgroup held memory and processes) or "per process"."""
    memory_peak_mb: float | None = None
    oom_kills: int = 0
    """Processes of the tree the kernel killed at the cgroup's memory limit."""

    @property
    def signal_name(self) -> str | None:
        """The signal that ended the command (exit codes above 128 by the shell's convention)."""
        if self.exit_code is None or self.exit_code <= 128:
            return None
        try:
            return signal.Signals(self.exit_code - 128).name
        except ValueError:
            return None


@dataclass
class _Capture:
    path: Path | None
    limit: int
    written: int = 0
    exceeded: bool = False
    data: bytearray = field(default_factory=bytearray)


def _drain(stream, capture: _Capture, on_exceeded) -> None:
    """Copy a stream to its file (or memory) up to its limit; past it, stop the run."""
    handle = capture.path.open("wb") if capture.path is not None else None
    try:
        while chunk := stream.read(65536):
            room = capture.limit - capture.written
            if room > 0:
                part = chunk[:room]
                if handle is not None:
                    handle.write(part)
                else:
                    capture.data += part
                capture.written += len(part)
            if len(chunk) > room and not capture.exceeded:
                capture.exceeded = True
                on_exceeded()
    finally:
        stream.close()
        if handle is not None:
            handle.close()


def _bwrap() -> str | None:
    return shutil.which("bwrap")


def _own_processes() -> int:
    """Processes (threads count too) of this uid, for RLIMIT_NPROC when not root."""
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(entry / "task"))
            except OSError:
                continue
    return count


def _parents(targets: list[str]) -> list[str]:
    """`--dir` for the folders above mount points, readable by all (bubblewrap makes them 0700
    when run as root, which the sandbox's uid could not enter)."""
    system = tuple(f"{d}/" for d in SYSTEM_DIRS)
    made: list[str] = []
    for target in targets:
        if target.startswith(system):
            continue
        for parent in reversed(Path(target).parents[:-1]):
            if str(parent) not in made:
                made.append(str(parent))
    return [arg for folder in made for arg in ("--perms", "0755", "--dir", folder)]


class Sandbox:
    """bubblewrap around one process at a time (or nothing, with `enabled=False`)."""

    def __init__(self, *, enabled: bool = True):
        self.enabled = enabled
        self.privileged = os.geteuid() == 0
        self.uid = SANDBOX_UID_BASE + os.getpid() % SANDBOX_UID_SLOTS
        self._description: str | None = None
        self._no_tree: str | None | bool = False  # False: not probed yet

    # --- limits over the process tree ------------------------------------------------------

    @property
    def tree_limits_missing(self) -> str | None:
        """None when memory and processes are bounded over the whole process tree (a cgroup
        can be made here), else why not (memory is then bounded per process only)."""
        if self._no_tree is False:
            self._no_tree = probe_cgroup(DEFAULT_LIMITS)
        return self._no_tree  # type: ignore[return-value]

    def memory_note(self) -> str:
        """One line for the organizer: how memory is bounded here."""
        missing = self.tree_limits_missing
        if missing is None:
            return "memory and processes bounded over each run's whole process tree (cgroup)"
        return (f"memory is bounded per process only (address space), not in total: {missing}; "
                f"tmpfs files, memfd, shared memory and inodes of a run are not bounded in "
                f"total")

    # --- availability ----------------------------------------------------------------------

    def check(self) -> str:
        """What contains the runs, e.g. "bubblewrap 0.8.0, no network" (None-like "" when
        disabled); raises SandboxUnavailable with the reason when the sandbox cannot start."""
        if not self.enabled:
            return ""
        if self._description is not None:
            return self._description
        bwrap = _bwrap()
        if bwrap is None:
            raise SandboxUnavailable("bubblewrap is not installed (Debian: apt-get install -y "
                                     "bubblewrap); --no-sandbox runs untrusted code on this "
                                     "machine")
        if shutil.which("prlimit") is None or (self.privileged and shutil.which("setpriv") is None):
            raise SandboxUnavailable("prlimit and setpriv (util-linux) are needed to set the "
                                     "sandbox's limits")
        with tempfile.TemporaryDirectory(prefix="judging-probe-") as tmp:
            command = [bwrap, *self._namespace_options(),
                       *self._system_options(Path(tmp)), "--", "/bin/true"]
            probe = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if probe.returncode != 0:
            raise SandboxUnavailable("bubblewrap cannot start here: " + (
                probe.stderr.strip().splitlines() or ["no reason given"])[-1] +
                " (user namespaces may be disabled); --no-sandbox runs untrusted code on this "
                "machine")
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True
                                 ).stdout.strip() or "bubblewrap"
        scope = ("memory per process tree" if self.tree_limits_missing is None
                 else "memory per process only")
        self._description = (f"{version}, no network, uid "
                             f"{self.uid if self.privileged else 'own'}, {scope}")
        return self._description

    # --- the command line ------------------------------------------------------------------

    def _namespace_options(self) -> list[str]:
        # a network namespace of its own always, the install step's too (its way to the index is
        # a socket mounted in, see index_route.py): this machine's loopback is never reachable
        options = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc",
                   "--unshare-uts", "--hostname", "sandbox", "--unshare-cgroup-try",
                   "--unshare-net"]
        if not self.privileged:
            options += ["--unshare-user", "--cap-drop", "ALL"]
        return options

    def _system_options(self, private: Path) -> list[str]:
        options: list[str] = ["--perms", "0755", "--dir", "/etc"]
        for folder in SYSTEM_DIRS:
            path = Path(folder)
            if path.is_symlink():
                options += ["--symlink", os.readlink(path), folder]
            elif path.is_dir():
                options += ["--ro-bind", folder, folder]
        for name in ETC_FILES:
            options += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        # Who the sandbox's uid is, for programs that ask (getpass, torch): a passwd of its own.
        uid = self.uid if self.privileged else os.getuid()
        passwd = private / "passwd"
        passwd.write_text(f"root:x:0:0::/root:/bin/sh\nsandbox:x:{uid}:{uid}::{SANDBOX_HOME}:"
                          f"/bin/sh\nnobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n")
        group = private / "group"
        group.write_text(f"root:x:0:\nsandbox:x:{uid}:\nnogroup:x:65534:\n")
        for path in (passwd, group):
            path.chmod(0o644)
        options += ["--ro-bind", str(passwd), "/etc/passwd", "--ro-bind", str(group), "/etc/group",
                    "--proc", "/proc", "--dev", "/dev"]
        return options

    def _limits(self, limits: RerunLimits) -> list[str]:
        processes = limits.processes if self.privileged else _own_processes() + limits.processes
        size = limits.disk_mb * 1024 * 1024
        return ["prlimit", f"--cpu={limits.cpu_s}:{limits.cpu_s + 5}",
                f"--as={limits.memory_mb * 1024 * 1024}", f"--nproc={processes}",
                f"--fsize={size}", "--core=0", "--"]

    # --- running ---------------------------------------------------------------------------

    def run(self, command: list[str], *, submission: Path | None, limits: RerunLimits,
            mounts: list[Mount] = (), env: dict[str, str] | None = None,
            stdout: Path | None = None, stderr: Path | None = None,
            results: str | None = None, keep: Mount | None = None) -> ProcessOutcome:
        """Run `command` in /work, a copy of `submission` (read-only at /submission), under
        `limits`; stdout and stderr to those files (at most `output_mb` each); `results` (a path
        relative to /work, no `..`) removed from the copy before the command runs and read back
        after it ends, when the command wrote it as a regular file inside /work. `keep`: a
        tmpfs of `disk_mb` at `keep.target`, copied into the folder `keep.source` of this
        machine when the command exits 0, after every other process of the sandbox is killed
        (the command writes this machine's disk only as much as its own). Without the sandbox
        (`enabled` False), the same in a temporary copy on this machine, with the same limits
        (`keep` is then the caller's to do without)."""
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", **(env or {})}
        if results is not None and not _relative_inside(results):
            results = None  # never read: a path that could leave the working folder
        read_end, write_end = os.pipe()
        with tempfile.TemporaryDirectory(prefix="judging-sandbox-") as tmp:
            private = Path(tmp)
            inner = _INNER.format(limit=MAX_RESULTS_BYTES)
            if self.enabled:
                size = str(limits.disk_mb * 1024 * 1024)
                options = [*self._namespace_options(),
                           *self._system_options(private),
                           *_parents([SANDBOX_HOME, *(m.target for m in mounts),
                                      *([KEEP_OUT] if keep is not None else [])]),
                           "--perms", "1777", "--size", size, "--tmpfs", "/tmp",
                           "--perms", "0755", "--size", size, "--tmpfs", WORK,
                           "--perms", "0700", "--size", size, "--tmpfs", SANDBOX_HOME,
                           "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
                if submission is not None:
                    options += ["--ro-bind", str(submission), SUBMISSION]
                for mount in mounts:
                    options += ["--bind" if mount.writable else "--ro-bind", str(mount.source),
                                mount.target]
                if keep is not None:
                    options += ["--perms", "0755", "--size", size, "--tmpfs", keep.target,
                                "--bind", str(keep.source), KEEP_OUT]
                options += ["--chdir", "/", "--clearenv"]
                for name, value in {"HOME": SANDBOX_HOME, "TMPDIR": "/tmp", "USER": "sandbox",
                                    **env}.items():
                    options += ["--setenv", name, value]
                boot = _BOOT_ROOT if self.privileged else _BOOT_USER
                # A tmpfs's inode bound counts its own root folder: one more than the files
                # and folders it holds (`disk_files`, what the plan lets in).
                inodes = disk_files(limits) + 1
                argv = [*self._limits(limits), _bwrap() or "bwrap", *options, "--",
                        "/bin/bash", "-c", boot, str(write_end), str(self.uid), str(inodes),
                        inner, keep.target if keep is not None else "", results or "",
                        *command]
                cwd = None
                process_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
            else:
                work = private / "work"
                if submission is not None:
                    shutil.copytree(submission, work, symlinks=True)
                else:
                    work.mkdir()
                home = private / "home"
                home.mkdir()
                argv = [*self._limits(limits), "/bin/bash", "-c", _BOOT_PLAIN, str(write_end), "",
                        "", inner, "", results or "", *command]
                cwd = work
                process_env = {"HOME": str(home), "TMPDIR": str(private), **env}
            return self._in_tree(argv, cwd=cwd, env=process_env, limits=limits, stdout=stdout,
                                 stderr=stderr, read_end=read_end, write_end=write_end)

    def _in_tree(self, argv: list[str], *, limits: RerunLimits, **watch) -> ProcessOutcome:
        """`_watch` inside a cgroup of the run's own (when one can be made): entered before
        anything of the submission starts, read and removed after the tree has ended."""
        tree = TreeLimits.make(limits) if self.tree_limits_missing is None else None
        if not isinstance(tree, TreeLimits):
            outcome = self._watch(argv, limits=limits, **watch)
            outcome.memory_limit = "per process"
            return outcome
        try:
            outcome = self._watch(tree.wrap(argv), limits=limits, **watch)
            peak, killed = tree.peak_bytes(), tree.oom_kills()
        finally:
            tree.remove()
        outcome.memory_limit = "process tree"
        outcome.memory_peak_mb = round(peak / MIB, 1) if peak is not None else None
        outcome.oom_kills = killed
        return outcome

    def _watch(self, argv: list[str], *, cwd: Path | None, env: dict[str, str],
               limits: RerunLimits, stdout: Path | None, stderr: Path | None, read_end: int,
               write_end: int) -> ProcessOutcome:
        cap = int(limits.output_mb * 1024 * 1024)
        captures = (_Capture(stdout, cap), _Capture(stderr, cap),
                    _Capture(None, MAX_RESULTS_BYTES + 256))
        stopped: list[str] = []
        started = time.monotonic()
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       pass_fds=(write_end,), start_new_session=True)
        finally:
            os.close(write_end)
        lock = threading.Lock()

        def stop(why: str) -> None:
            with lock:
                if not stopped:
                    stopped.append(why)
                # bubblewrap and its session; --die-with-parent takes the namespace with it
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

        readers = [threading.Thread(target=_drain, args=(stream, capture, lambda: stop("output")),
                                    daemon=True)
                   for stream, capture in ((process.stdout, captures[0]),
                                           (process.stderr, captures[1]),
                                           (os.fdopen(read_end, "rb"), captures[2]))]
        for reader in readers:
            reader.start()
        timer = threading.Timer(limits.wall_s, stop, args=("wall time",))
        timer.daemon = True
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        duration = time.monotonic() - started
        # A command that left a process holding its output (outside a sandbox) is ended with
        # its session.
        for reader in readers:
            reader.join(TEARDOWN_S)
        if any(reader.is_alive() for reader in readers):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            for reader in readers:
                reader.join(TEARDOWN_S)
        code = process.returncode
        if code is not None and code < 0:  # killed by a signal: the shell's convention
            code = 128 - code
        why = stopped[0] if stopped else None
        cpu, results = _split_times(bytes(captures[2].data))
        if captures[2].exceeded or not results:
            results = None
        if cpu is None:  # stopped before `times`: what the waited processes used
            cpu = usage.ru_utime + usage.ru_stime
        return ProcessOutcome(exit_code=None if why else code, stopped=why,
                              duration_s=round(duration, 3), cpu_s=round(cpu, 3),
                              stdout_bytes=captures[0].written, stderr_bytes=captures[1].written,
                              results=results)


# Inside the sandbox, as root (judging run as root): copy the submission into /work, hand /work
# and home (and the `keep` tmpfs) to the sandbox's uid, and run the command as that uid with no
# capabilities; each tmpfs bounded in files as well as bytes (bubblewrap's --size sets only the
# bytes; as root in the sandbox's mount namespace, a remount sets the inodes). When the command
# exits 0 and a `keep` tmpfs was given, every other process of the sandbox is killed (as root:
# daemons included) and the tmpfs copied into KEEP_OUT, which the uid cannot write (its owner
# kept, set-uid and set-gid bits dropped: this machine's disk holds no set-uid file). $0: the
# results pipe's fd (moved to 3), $1: the uid, $2: the inodes per tmpfs, $3: the inner script,
# $4: the `keep` tmpfs (or "").
_BOOT_ROOT = """eval "exec 3>&$0 $0>&-"
uid=$1; files=$2; inner=$3; keep=$4; shift 4
for fs in /tmp /work /home/sandbox /dev/shm $keep; do
  mount -o remount,nr_inodes="$files" "$fs" || exit 125
done
if [ -d /submission ]; then cp -R -P /submission/. /work/ || exit 125; fi
chown -R "$uid:$uid" /work /home/sandbox $keep || exit 125
cd /work || exit 125
setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all --bounding-set=-all \
  --no-new-privs -- /bin/sh -c "$inner" "$@"
code=$?
if [ -n "$keep" ]; then
  kill -KILL -1 2>/dev/null
  if [ $code -eq 0 ]; then
    cp -a "$keep"/. """ + KEEP_OUT + """/ && chmod -R u-s,g-s """ + KEEP_OUT + """ || code=125
  fi
fi
exit $code
"""
# The same as the user who runs judging (bubblewrap made a user namespace without capabilities):
# the command runs as this same user, so the `keep` folder is within its reach too (bounded in
# total as root only).
_BOOT_USER = """eval "exec 3>&$0 $0>&-"
inner=$3; keep=$4; shift 4
if [ -d /submission ]; then cp -R -P /submission/. /work/ || exit 125; fi
cd /work || exit 125
/bin/sh -c "$inner" "$@"
code=$?
if [ -n "$keep" ]; then
  kill -KILL -1 2>/dev/null
  if [ $code -eq 0 ]; then cp -a "$keep"/. """ + KEEP_OUT + """/ || code=125; fi
fi
exit $code
"""
# Without the sandbox: the working directory is already the copy.
_BOOT_PLAIN = """eval "exec 3>&$0 $0>&-"
inner=$3; shift 4
exec /bin/sh -c "$inner" "$@"
"""
# In /work: the declared results file removed from the copy first (a result comes only from
# this run, never from a file the submission ships); the command without the results pipe;
# then, into it, the CPU time of the command's process tree (the shell's `times`: its own,
# then its children's) and the results file, when the command wrote one: a regular file, not a
# link, whose real path is inside the working folder. $0: the results file (relative, checked
# by `Sandbox.run`); the rest: the command.
_INNER = """results=$0
work=$(pwd -P)
if [ -n "$results" ]; then rm -rf -- "$results" || exit 125; fi
"$@" 3>&-
code=$?
times >&3
if [ -n "$results" ] && [ -f "$results" ] && [ ! -L "$results" ]; then
  case "$(realpath -e -- "$results" 2>/dev/null)" in
    "$work"/*) head -c {limit} -- "$results" >&3 ;;
  esac
fi
exit $code
"""
_TIMES = re.compile(rb"^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$")


def _split_times(data: bytes) -> tuple[float | None, bytes]:
    """(CPU seconds of the command's process tree, the rest: the results file) from the
    results pipe: `times` prints the shell's own times, then its children's, one line each."""
    lines = data.split(b"\n", 2)
    if len(lines) < 2:
        return None, b""
    children = _TIMES.match(lines[1].strip())
    cpu = (int(children[1]) * 60 + float(children[2]) + int(children[3]) * 60
           + float(children[4])) if children else None
    return cpu, lines[2] if len(lines) > 2 else b""


def _relative_inside(path: str) -> bool:
    """A relative path with no `..` and no leading dash (it is an argument of rm and head)."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts \
        and not path.startswith("-") and "\0" not in path

