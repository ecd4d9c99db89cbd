"""Paths named by a submission, confined to its folder: no `..`, no absolute paths, no symlink that
leaves it."""

from __future__ import annotations

import re
import stat
from pathlib import Path

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
        raise UnsafePathError(f"{relative!r} resolves outside the submission folder "
                              f"(a symlink to {resolved})")
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
