"""Personal data out of everything that leaves the machine: emails, tokens and keys, home paths and
local paths are replaced; reviewers get stable pseudonyms."""

from __future__ import annotations

import hashlib
import ipaddress
import os
import secrets
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# The patterns and `scrub` itself live with `check` (judging/check/patterns.py), which reports what
# they find and sits below publish; they are re-exported here so that publish's modules and tests
# keep their names.
from judging.check import SCRUB_KINDS, SCRUB_PATTERNS, leftovers, scrub
from judging.models import ClaimInput
from judging.rundir import RunPaths

__all__ = ["SCRUB_KINDS", "SCRUB_PATTERNS", "Scrubber", "leftovers", "local_roots", "pseudonym",
           "public_endpoint", "publish_salt", "scrub"]


class Scrubber:
    """Scrubs every string of nested rows against this machine's paths, adding up the counts."""

    def __init__(self, local_paths: Iterable[str] = ()):
        self.local_paths = tuple(sorted(set(local_paths)))
        self.counts: Counter[str] = Counter()

    def text(self, value: str | None) -> str | None:
        if value is None:
            return None
        cleaned, counts = scrub(value, local_paths=self.local_paths)
        self.counts.update(counts)
        return cleaned

    def tree(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.tree(k) if isinstance(k, str) else k: self.tree(v)
                    for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.tree(v) for v in value]
        return value


def local_roots(run_dir: Path, claims: Iterable[ClaimInput], extra: Iterable[Path]) -> set[str]:
    """Absolute paths of this machine that must never appear in a published file: the run, the
    submission folders and files, the checkout, the working directory, and their parents (down to
    two levels, e.g. /work/main but not /work)."""
    paths: list[Path] = [run_dir, Path.cwd(), Path(__file__).resolve().parent.parent, *extra]
    for claim in claims:
        paths.append(claim.root)
        paths += [p for p in (claim.published_path, claim.reproduced_path,
                              claim.participant_reference_path) if p is not None]
        paths += list(claim.evidence_paths.values())
    roots: set[str] = set()
    for path in paths:
        for variant in {Path(os.path.abspath(path)), _resolved(path)}:
            for candidate in (variant, *variant.parents):
                if len(candidate.parts) >= 3:
                    roots.add(str(candidate))
    return roots


def _resolved(path: Path) -> Path:
    try:
        return Path(path).resolve()
    except OSError:
        return Path(os.path.abspath(path))


def public_endpoint(value: Any) -> Any:
    """A judge endpoint, unless it is on this machine or a private network."""
    if not isinstance(value, str):
        return value
    host = urlsplit(value).hostname or ""
    try:
        address = ipaddress.ip_address(host)
        local = address.is_private or address.is_loopback or address.is_link_local or \
            address.is_unspecified
    except ValueError:
        local = host in ("", "localhost") or "." not in host or \
            host.endswith((".local", ".localhost", ".internal", ".lan", ".home.arpa"))
    return "[local endpoint]" if local else value


def pseudonym(name: str, salt: str) -> str:
    """A stable, salted pseudonym for a reviewer. Construction labels (`construction:...`, written
    by a program) keep their name: they are not people."""
    if name.startswith("construction:"):
        return name
    digest = hashlib.sha256(f"{salt}\0{name}".encode()).hexdigest()
    return f"reviewer-{digest[:6]}"


def publish_salt(run_dir: Path) -> str:
    """A random salt kept in `RUN_DIR/.publish-salt` (never uploaded): pseudonyms stay the same
    from one publish of the run to the next. (The CLI's --salt / JUDGING_PUBLISH_SALT overrides
    it.)"""
    path = RunPaths(run_dir).publish_salt
    if path.is_file():
        salt = path.read_text(encoding="utf-8").strip()
        if salt:
            return salt
    salt = secrets.token_hex(16)
    path.write_text(salt + "\n", encoding="utf-8")
    return salt
