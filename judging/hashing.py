"""Stable hashes of JSON-able content and of files (the inputs a judgment depends on)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)


def content_hash(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def file_sha256(path: Path, *, chunk: int = 1 << 20) -> str | None:
    """sha256 of a file's bytes, or None when it cannot be read (the caller reports why)."""
    digest = hashlib.sha256()
    try:
        # Non-blocking open and a regular-file check: a FIFO named as a log must not hang us.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            while block := handle.read(chunk):
                digest.update(block)
    except OSError:
        return None
    return "sha256:" + digest.hexdigest()


def slug(text: str, *, max_length: int = 60) -> str:
    """A path-safe, collision-resistant name: readable prefix + short hash of the full text."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:max_length] or "x"
    return f"{readable}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"
