"""The answer cache: LLM answers on disk, one JSON file per request hash, shared by the judges
and the extractor (a rerun, or another run over the same claims, asks the endpoint only for what
it has not answered yet)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from judging.atomic import write_text_atomic
from judging.judges.openai.endpoint import LLMOptions

log = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    env = os.environ.get("JUDGING_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "judging" / "answers"


class AnswerCache:
    """LLM answers on disk, one JSON file per request hash (the full request: messages with
    images, model, settings, sample index). Only answers the endpoint actually gave are stored."""

    def __init__(self, root: Path):
        self.root = root

    def _path(self, request_hash: str) -> Path:
        digest = request_hash.split(":", 1)[-1]
        return self.root / digest[:2] / f"{digest}.json"

    def get(self, request_hash: str) -> dict[str, Any] | None:
        path = self._path(request_hash)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring an unreadable cache entry %s (%s)", path, exc)
            return None
        return entry if isinstance(entry, dict) and entry.get("request_hash") == request_hash \
            else None

    def put(self, request_hash: str, entry: dict[str, Any]) -> None:
        path = self._path(request_hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps({"request_hash": request_hash, **entry}))


def answer_cache(options: LLMOptions) -> AnswerCache | None:
    """The cache the options ask for: its --cache-dir, else the default; None
    with --no-cache."""
    return AnswerCache(options.cache_dir or default_cache_dir()) if options.use_cache else None
