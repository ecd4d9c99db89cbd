"""Paths named by a submission, confined to its folder: no `..`, no absolute paths, no symlink that
leaves it."""

from __future__ import annotations

import os
import re
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from judging.errors import UnsafePathError


def confine(root: Path, relative: str) -> Path:
    """`root / relative`, refusing anything that resolves outside `root` (.., absolute, symlinks).

    The file need not exist (a missing file is reported where it is used); the check follows every
    symlink on the way, so a link inside the folder that points outside is refused.
    """
    root_resolved = root.resolve()
    candidate = Path(relative)
    if candidate.is_absolute() or ".." in re.split(r"[\\/]", relative):
        raise UnsafePathError(f"{relative!r} is not a relative path inside the submission folder")
    try:
        resolved = (root_resolved / candidate).resolve()
    except RuntimeError as exc:  # Python < 3.13: "Symlink loop from ...", even when not strict
        raise UnsafePathError(f"{relative!r} is a symlink loop (a link that points back to "
                              f"itself)") from exc
    except (OSError, ValueError) as exc:
        raise UnsafePathError(f"{relative!r} cannot be resolved ({exc})") from exc
    if resolved.is_symlink():  # Python >= 3.13: a loop resolves to a link that leads nowhere
        raise UnsafePathError(f"{relative!r} is a symlink loop (a link that points back to "
                              f"itself)")
    if not resolved.is_relative_to(root_resolved):
        # the message names no resolved path: a link through /proc/self/cwd resolves to this
        # machine's own folders, which the line (and a published run) would then show
        raise UnsafePathError(f"{relative!r} resolves outside the submission folder "
                              f"(a symlink leaving it)")
    return resolved


def confine_file(root: Path, relative: str) -> Path:
    """`confine`, also refusing special files (FIFOs, sockets, devices): hashing or reading one
    could block forever or never end. A missing file or a folder is reported where it is used."""
    path = confine(root, relative)
    try:
        mode = path.stat().st_mode
    except OSError:
        return path
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise UnsafePathError(f"{relative!r} is not a regular file (a FIFO, socket or device)")
    return path


#: What a file name must not carry to be read: C0 and C1 control characters (a newline forged a
#: line of our console, an escape sequence cleared the terminal, and as a value's place one sank
#: the Space with a validation message), DEL, and the bidirectional overrides that reorder a line.
_NAME_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                            "\u2066-\u2069]")


def shown_name(relative: str) -> str:
    """A submission's file name as our lines show it: each control character as its escape
    (`\\x1b`), the rest as written."""
    return _NAME_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                              else f"\\u{ord(m.group()):04x}", relative)


def refusal(root: Path, relative: str) -> tuple[str, str] | None:
    """(the file as our lines name it, why it is not read) for a listed file of a submission
    that is not read, else None: a name with control characters, a link leaving `root`
    (followed, a host file was a Space's log every claim carried, and `check` scanned it) or a
    special file (a FIFO would block)."""
    if _NAME_CONTROLS.search(relative):
        return shown_name(relative), ("a file name with control characters (a newline, an "
                                      "escape sequence): not read")
    try:
        confine(root, relative)
    except UnsafePathError:
        return relative, "a link leaving the Space: not followed"
    try:
        confine_file(root, relative)
    except UnsafePathError:
        return relative, "not a regular file (a FIFO, socket or device): not read"
    return None


#: A Space's Markdown reports are read up to this many characters in all (four of the largest
#: one read): each costs the reader about 10 s a megabyte, and 2,000 reports of 2 MB held one
#: Space's intake for hours.
MAX_REPORTS_CHARS = 8 * 1024 * 1024


@dataclass
class TextBudget:
    """Files of one kind read up to `limit` characters in all, each also within its own limit:
    nothing bounded their sum. The files past it are named in one line (`problems`)."""

    what: str
    limit: int
    read: int = 0
    unread: list[str] = field(default_factory=list)

    @classmethod
    def reports(cls) -> TextBudget:
        return cls("the Space's reports", MAX_REPORTS_CHARS)

    def text(self, root: Path, relative: str, limit: int, errors: list[tuple[str, str]]
             ) -> str | None:
        """`read_text_confined` while the budget lasts (what is wrong one (file, reason) in
        `errors`); past it None, the file counted among those not read."""
        if self.read >= self.limit:
            self.unread.append(relative)
            return None
        text, error = read_text_confined(root, relative, limit=limit)
        if text is None:
            errors.append((relative, str(error)))
        self.read += len(text or "")
        return text

    def problems(self) -> list[tuple[str, str]]:
        if not self.unread:
            return []
        more = f" and {len(self.unread) - 5} more" if len(self.unread) > 5 else ""
        return [(self.what, f"read up to {self.limit:,} characters in all: "
                            f"{len(self.unread)} not read ({', '.join(self.unread[:5])}{more})")]


#: Size limits of the files read from a submission on this machine (bytes), by kind. A small
#: control file (`.python-version`) holds one line; an environment file (pyproject.toml, uv.lock,
#: requirements) is text a resolver reads; a logbook's index, manifest and a Space's README are
#: Markdown/JSON a person wrote (a 300 MB index is an attack, not a logbook).
MAX_CONTROL_FILE_BYTES = 4 * 1024
MAX_ENV_FILE_BYTES = 8 * 1024 * 1024
MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


def _kind_of(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"


def open_confined(root: Path, relative: str, *, links: bool = False) -> BinaryIO:
    """The submission's file `root/relative`, open for reading, without following anything out
    of the submission and without blocking. Raises UnsafePathError for a path that leaves the
    folder, a symbolic link (any, unless `links`: then only links that stay inside), or anything
    but a regular file (a FIFO or a device is refused before it is opened); FileNotFoundError
    when it is not there. The message is ours and names nothing of the file: the caller puts the
    path it asked for in front (`f"{relative}: {exc}"`).

    Hand-written because no library opens a path one component at a time with O_NOFOLLOW: each
    folder on the way is opened relative to the one before, so no link (nor a link swapped in
    meanwhile) is followed; the file is checked with lstat, opened with O_NONBLOCK (a FIFO never
    waits for a writer) and checked again with fstat on the open descriptor.
    """
    root_resolved = Path(root).resolve()
    if links:
        try:
            parts = confine(root_resolved, relative).relative_to(root_resolved).parts
        except UnsafePathError:
            raise UnsafePathError("a link that leaves the submission folder") from None
    elif Path(relative).is_absolute() or ".." in re.split(r"[\\/]", relative):
        raise UnsafePathError("a path that leaves the submission folder")
    else:
        parts = tuple(p for p in Path(relative).parts if p not in ("", "."))
    if not parts:
        raise UnsafePathError("the submission folder itself, not a file")
    folders: list[int] = []
    try:
        try:
            folders.append(os.open(root_resolved, _DIR_FLAGS))
            for part in parts[:-1]:
                folders.append(os.open(part, _DIR_FLAGS, dir_fd=folders[-1]))
            before = os.stat(parts[-1], dir_fd=folders[-1], follow_symlinks=False)
        except FileNotFoundError:
            raise
        except OSError:
            raise UnsafePathError("a folder on its way is a symbolic link or cannot be "
                                  "opened") from None
        if not stat.S_ISREG(before.st_mode):
            raise UnsafePathError(f"{_kind_of(before.st_mode)}, not a regular file")
        try:
            handle = os.open(parts[-1], _OPEN_FLAGS, dir_fd=folders[-1])
        except OSError as exc:
            raise UnsafePathError(f"cannot be opened ({exc.strerror or 'error'})") from None
    finally:
        for descriptor in folders:
            os.close(descriptor)
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise UnsafePathError("it changed while it was opened")
    return os.fdopen(handle, "rb")


def read_confined(root: Path, relative: str, *, limit: int, links: bool = False) -> bytes:
    """The bytes of the submission's file `root/relative` (see `open_confined`), refused
    (UnsafePathError) when it is over `limit` bytes: before a byte is read, and again if it
    grows while it is read, so memory stays within the limit."""
    with open_confined(root, relative, links=links) as stream:
        size = os.fstat(stream.fileno()).st_size
        if size > limit:
            raise UnsafePathError(f"{size:,} bytes, over the limit of {limit:,} for this kind "
                                  f"of file")
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise UnsafePathError(f"it grew over the limit of {limit:,} bytes while it was read")
    return data


def read_text_confined(root: Path, relative: str, *, limit: int) -> tuple[str | None, str | None]:
    """(the UTF-8 text of a regular file inside `root`, within `limit` bytes, or None; what is
    wrong with it in our own words, or None): a link leaving `root`, a special file, an
    unreadable, binary or non-UTF-8 file is one reason, never an exception."""
    try:
        confine(root, relative)
    except UnsafePathError:
        return None, "a link leaving the Space: not followed"
    try:  # a regular file (a FIFO or device is refused without blocking), within `limit`
        raw = read_confined(root, relative, limit=limit, links=True)
    except UnsafePathError as exc:
        return None, f"{exc}: not read"
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or type(exc).__name__})"
    if b"\x00" in raw:
        return None, "a binary file, not text: not read"
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte {exc.start}): not read"


#: Folders of tools and environments, never a submission's own files.
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".cache",
                       "site-packages"})


@dataclass
class Listing:
    """The files `list_files` found, and the folders it did not finish when it stopped at its
    limit (empty when it listed everything)."""

    files: list[str]
    unread: list[str]
    limit: int

    def problems(self, what: str) -> list[tuple[str, str]]:
        """("files", one line) when the limit cut the listing: which folders were not read to
        their end; else none."""
        if not self.unread:
            return []
        named = ", ".join("the top folder" if f == "." else f"{shown_name(f)}/"
                          for f in self.unread[:5])
        more = f" and {len(self.unread) - 5} more" if len(self.unread) > 5 else ""
        return [("files", f"{what} holds more than {self.limit:,} files: only the first "
                          f"{self.limit:,} (shallowest first) were read; not read to their "
                          f"end: {named}{more}")]


def list_files(root: Path, *, max_depth: int, max_files: int, ours: str) -> Listing:
    """Relative paths of the regular files and symlinks under `root` (symlinks are listed for
    the reader to refuse when they leave `root`; special files are not listed), up to
    `max_depth` folders down and `max_files` files. Hidden and tool folders are skipped, except
    judging's own folder `ours` (relative to `root`), which is walked at any depth.

    Shallowest first (judging's own folder, then the root, then each level), so that a folder of
    thousands of data files does not hide the reports and results beside it; the folders not
    listed to their end when the limit is reached are `unread`, for the reader to say so."""
    out: list[str] = []
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    while queue:
        here, depth = queue.popleft()
        try:
            children = sorted(here.iterdir())
        except OSError:
            continue
        folders = []
        for child in children:
            rel = child.relative_to(root).as_posix()
            if child.is_symlink() or child.is_file():
                if len(out) == max_files:
                    unread = [here.relative_to(root).as_posix()] + [
                        f.relative_to(root).as_posix() for f, _ in queue]
                    return Listing(sorted(out), unread, max_files)
                out.append(rel)
            elif child.is_dir():
                mine = rel == ours or ours.startswith(rel + "/")
                if mine or (child.name not in SKIP_DIRS and not child.name.startswith(".")):
                    if depth < max_depth or rel.startswith(ours):
                        folders.append((child, depth + 1, mine))
        # judging's own folder first: what it holds is bounded by our own fetch
        queue.extendleft((f, d) for f, d, mine in folders if mine)
        queue.extend((f, d) for f, d, mine in folders if not mine)
    return Listing(sorted(out), [], max_files)


#: A link's target stops at a `]`: a line of `](` read each target to its end (quadratic).
_MD_LINK = re.compile(r"\]\((?P<target>[^)\s\]]+)(?:\s+\"[^\"]*\")?\)")


def links_leaving(root: Path, texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(file, target) of each relative Markdown link of the texts (by their paths under `root`)
    that leaves `root`, once: never followed. URLs and anchors are not links to files."""
    out: list[tuple[str, str]] = []
    for where, text in texts:
        base = Path(where).parent
        for m in _MD_LINK.finditer(text):
            target = m.group("target").split("#", 1)[0]
            if not target or re.match(r"(?i)^[a-z][a-z0-9+.-]*:", target) or \
                    target.startswith("//"):
                continue  # a URL (never fetched) or an anchor
            rel = (base / target).as_posix() if not target.startswith("/") else target
            try:
                confine(root, rel)
            except UnsafePathError:
                if (where, target) not in out:
                    out.append((where, target))
    return out
