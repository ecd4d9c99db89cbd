"""Stable hashes of JSON-able content and of files (the inputs a judgment depends on)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

#: Fields that never enter an input hash: the schema version of a file is not content.
NOT_HASHED = frozenset({"schema_"})


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)


def content_hash(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def hash_view(model: BaseModel, hashed_always: Mapping[type, Collection[str]], *,
              exclude: Collection[str] = ()) -> dict[str, Any]:
    """`model.model_dump(mode="json")` as an input hash sees it: every field named for its class
    in `hashed_always` (the fields when input hashes were first recorded) is kept as dumped, even
    at its default, so existing hashes do not change; any other field is left out while it is at
    its default, so that adding an optional field never changes the hash of content that does not
    use it. The schema version (`NOT_HASHED`) is never hashed. Nested models are treated alike."""
    data = model.model_dump(mode="json", by_alias=False, exclude=set(exclude) or None)
    _prune(model, data, hashed_always)
    return data


_DEFAULTS: dict[tuple[type, str], Any] = {}


def _default(cls: type[BaseModel], name: str) -> Any:
    """A field's default, made once per class and field: pydantic's `get_default` inspects the
    default factory's signature on every call (0.1 ms for a builtin such as `list`, several per
    claim in every run's plan). Only compared with, never handed out: a mutable default stays
    unchanged."""
    key = (cls, name)
    if key not in _DEFAULTS:
        _DEFAULTS[key] = cls.model_fields[name].get_default(call_default_factory=True)
    return _DEFAULTS[key]


def _prune(model: BaseModel, data: dict[str, Any],
           hashed_always: Mapping[type, Collection[str]]) -> None:
    fixed = next((hashed_always[cls] for cls in type(model).__mro__ if cls in hashed_always),
                 None)
    cls = type(model)
    for name in cls.model_fields:
        if name not in data:
            continue
        value = getattr(model, name)
        if name in NOT_HASHED or (
                fixed is not None and name not in fixed and value == _default(cls, name)):
            del data[name]
        else:
            _prune_value(value, data[name], hashed_always)


def _prune_value(value: Any, data: Any, hashed_always: Mapping[type, Collection[str]]) -> None:
    if isinstance(value, BaseModel) and isinstance(data, dict):
        _prune(value, data, hashed_always)
    elif isinstance(value, (list, tuple)) and isinstance(data, list):
        for item, dumped in zip(value, data, strict=False):
            _prune_value(item, dumped, hashed_always)
    elif isinstance(value, dict) and isinstance(data, dict):
        for item, dumped in zip(value.values(), data.values(), strict=False):
            _prune_value(item, dumped, hashed_always)


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
