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


def _replace(path: Path, write: Callable[[IO[bytes]], None], *, mode: int | None = None) -> None:
    # A unique temporary name per writer: two processes writing the same file (the answer cache)
    # never share a half-written temporary.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        if mode is not None:
            os.chmod(tmp, mode)
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
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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
