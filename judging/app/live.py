"""The dashboard's data, following its run directory as it changes: judgments appended by a run or
`judging watch`, labels pulled, decisions resolved, a calibration written. Each page load (and each
API call) asks for the current data; it is read again only when a file it depends on changed
since the last read (size or modification time), so an unchanged run costs a directory listing.

A read that fails (a file being replaced at that very moment, a half-written run) keeps the last
good data and says so in the page's header; the next load tries again.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from judging.app.data import AppData
from judging.errors import JudgingError

log = logging.getLogger(__name__)

Signature = tuple[tuple[str, int, int], ...]


def files_signature(roots: Iterable[Path]) -> Signature:
    """(path, size, mtime) of the regular files directly in each folder; a missing folder
    counts as empty."""
    found = []
    for root in roots:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_file():
                    stat = entry.stat()
                    found.append((entry.path, stat.st_size, stat.st_mtime_ns))
            except OSError:
                continue  # replaced between the listing and the stat: the next load sees it
    return tuple(sorted(found))


def run_roots(run_dir: Path, calibration_dir: Path | None) -> Callable[[], list[Path]]:
    """The folders whose files a run's dashboard depends on: the run directory's own files
    (judgments, labels, claims, decisions, side files, pushed records) and the calibration
    artifacts (one folder per rubric version)."""
    from judging.calibrate import calibration_root

    artifacts = calibration_root(calibration_dir) / "artifacts"

    def roots() -> list[Path]:
        found = [Path(run_dir)]
        if artifacts.is_dir():
            found += sorted(p for p in artifacts.iterdir() if p.is_dir())
        return found

    return roots


class LiveData:
    """The current `AppData`: `current()` re-reads it when the watched files changed."""

    def __init__(self, load: Callable[[], AppData],
                 roots: Callable[[], list[Path]] | None = None):
        self._load = load
        self._roots = roots
        self._lock = threading.Lock()
        self._signature: Signature | None = None
        self._data: AppData | None = None
        self.problem: str | None = None
        """Why the last re-read failed (the data shown is the one before), if it did."""
        self.read_at = ""
        """When the data shown was read (local time, HH:MM:SS)."""

    @classmethod
    def fixed(cls, data: AppData) -> LiveData:
        """Data that never changes (a published dataset, a test's records)."""
        live = cls(lambda: data)
        live._data = data
        live.read_at = time.strftime("%H:%M:%S")
        return live

    def current(self) -> AppData:
        with self._lock:
            if self._roots is None:
                if self._data is None:
                    self._data, self.read_at = self._load(), time.strftime("%H:%M:%S")
                return self._data
            signature = files_signature(self._roots())
            if self._data is not None and signature == self._signature:
                return self._data
            try:
                data = self._load()
            except (JudgingError, OSError, ValueError) as exc:
                if self._data is None:
                    raise
                self.problem = f"could not re-read the run ({exc}); showing it as it was"
                log.warning("%s", self.problem)
                return self._data
            self._data, self._signature, self.problem = data, signature, None
            self.read_at = time.strftime("%H:%M:%S")
            return data
