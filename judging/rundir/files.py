"""Crash-safe writes: a file is written beside its target and renamed over it, so a reader never
sees half a file. Every stage writes whole files through these."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judging.models import StrictModel

if TYPE_CHECKING:
    pass


def write_text_atomic(path: Path, text: str) -> None:
    """Write beside `path`, then rename over it: a reader sees the old file or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_jsonl_atomic(path: Path, items: Iterable[StrictModel]) -> None:
    """One model per line, written atomically (see `write_text_atomic`)."""
    write_text_atomic(path, "".join(item.model_dump_json() + "\n" for item in items))


def write_json_atomic(path: Path, payload: Any) -> None:
    write_text_atomic(path, json.dumps(payload, indent=2, default=str))
