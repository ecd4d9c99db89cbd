"""Personal data left in a submission's files: e-mail addresses, tokens and keys, user names in
home-directory paths, each with its file and line (the scrubber's own patterns, judging.check.patterns)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from judging.check.model import WARNING, Checklist
from judging.check.patterns import find_personal_data

#: Files larger than this are not read (a logbook page of repeated base64 PNG is about 1 MB).
MAX_SCAN_BYTES = 20 * 1024 * 1024
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache",
             ".pytest_cache", ".ruff_cache"}
BINARY_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf", ".zip", ".gz", ".tar",
                   ".pt", ".pth", ".bin", ".safetensors", ".npy", ".npz", ".parquet", ".pkl",
                   ".so", ".whl", ".ico", ".woff", ".woff2", ".ttf"}
KIND_NAMES = {"email": "e-mail address", "token": "token or key", "home": "home-directory path"}


def text_files(folder: Path) -> Iterable[Path]:
    """Every file under `folder` that may hold text, in a stable order; no symlinks followed."""
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = sorted(current.iterdir(), reverse=True)
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir():
                if entry.name not in SKIP_DIRS:
                    stack.append(entry)
            elif entry.is_file() and entry.suffix.lower() not in BINARY_SUFFIXES:
                yield entry


def scan(checklist: Checklist, folder: Path, files: Iterable[Path], *, base: Path) -> int:
    """Add one warning per finding in `files` (paths shown relative to `base`); the count."""
    found = 0
    for path in sorted(set(files)):
        try:
            if path.stat().st_size > MAX_SCAN_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if b"\x00" in data[:8192]:
            continue
        text = data.decode("utf-8", errors="replace")
        try:
            shown = path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            shown = str(path)
        for hit in find_personal_data(text):
            found += 1
            checklist.add("personal data", WARNING,
                          f"{KIND_NAMES.get(hit.kind, hit.kind)} ({hit.name}) {hit.masked}: "
                          f"remove it before publishing", file=shown, line=hit.line)
    return found
