"""Crash-safe writes: a file is written beside its target and renamed over it, so a reader sees
the old file or the new one, never half of one. Every whole-file write of the package (run
directory files, rubric lock, answer cache, reviewer images, the review server's pid file) goes
through these.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from PIL import Image
from pydantic import BaseModel


def process_umask() -> int:
    """The process's umask, read without changing it (Linux reports it in /proc/self/status;
    elsewhere it is set and restored at once, as `os.umask` only reads by writing)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_file_mode() -> int:
    """The bits `open()` would give a new file: 0o666 less the umask (0o644 under 022)."""
    return 0o666 & ~process_umask()


def _temporary(path: Path, mode: int | None) -> tuple[int, str]:
    """A unique temporary beside `path` (two processes writing the same file, the answer cache,
    never share one), with `mode` or the bits a plain `open()` gives: `mkstemp` makes it 0600,
    which would leave every run file unreadable to a colleague or a web server."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, default_file_mode() if mode is None else mode)
    except BaseException:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    return fd, tmp


def _replace(path: Path, write: Callable[[IO[bytes]], None], *, mode: int | None = None) -> None:
    fd, tmp = _temporary(path, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` beside `path`, then rename over it (`mode`: permission bits, e.g. 0o600)."""
    _replace(path, lambda handle: handle.write(data), mode=mode)


def write_text_atomic(path: Path, text: str, *, mode: int | None = None) -> None:
    """UTF-8 text, written atomically (see `write_bytes_atomic`)."""
    write_bytes_atomic(path, text.encode("utf-8"), mode=mode)


def write_chunks_atomic(path: Path, chunks: Iterable[bytes]) -> None:
    """`chunks` one after the other, written atomically as they come (`chunks` may be a stream:
    a large file is never whole in memory)."""
    def write(handle: IO[bytes]) -> None:
        for chunk in chunks:
            handle.write(chunk)

    _replace(path, write)


def write_jsonl_atomic(path: Path, items: Iterable[BaseModel]) -> None:
    """One model per line, written atomically, one line at a time (`items` may be a stream)."""
    def write(handle: IO[bytes]) -> None:
        for item in items:
            handle.write(item.model_dump_json().encode("utf-8") + b"\n")

    _replace(path, write)


@contextlib.contextmanager
def atomic_lines(path: Path) -> Iterator[Callable[[BaseModel], None]]:
    """A function that appends one model as a line to `path`'s replacement; the replacement takes
    `path`'s place when the block ends without an error (several files can be written side by
    side, a line at a time)."""
    fd, tmp = _temporary(path, None)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield lambda item: handle.write(item.model_dump_json().encode("utf-8") + b"\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, payload: Any, *, mode: int | None = None) -> None:
    write_text_atomic(path, json.dumps(payload, indent=2, default=str), mode=mode)


def write_png_atomic(image: Image.Image, path: Path, **save_options: Any) -> None:
    """A PNG, written atomically (`save_options` go to `Image.save`)."""
    _replace(path, lambda handle: image.save(handle, format="PNG", **save_options))
