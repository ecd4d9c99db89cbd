"""Personal data out of everything that leaves the machine: emails, tokens and keys, home paths and
local paths are replaced; reviewers get stable pseudonyms."""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import os
import re
import secrets
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from judging.models import ClaimInput
from judging.rundir import RunPaths

_KEY_NAMES = (r"api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|"
              r"client[_-]?secret|access[_-]?token|auth[_-]?token|token|secret|password|passwd")


#: (kind, name, pattern, replacement), applied in order to every text that leaves the machine.
#: Values that merely look random (content hashes such as `sha256:<hex>`, request ids) match none.
SCRUB_PATTERNS: tuple[tuple[str, str, re.Pattern[str], str], ...] = (
    ("token", "jwt", re.compile(
        r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), "[token]"),
    ("token", "bearer", re.compile(
        r"\b(?P<scheme>Bearer\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,}",
        re.IGNORECASE), r"\g<scheme>[token]"),
    ("token", "huggingface", re.compile(r"\b(?:hf|api_org)_[A-Za-z0-9]{20,}\b"), "[token]"),
    ("token", "openai", re.compile(
        r"\bsk-(?:proj-|svcacct-|admin-|ant-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"), "[token]"),
    ("token", "github", re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b"), "[token]"),
    ("token", "aws", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[token]"),
    ("token", "slack", re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"), "[token]"),
    ("token", "assignment", re.compile(
        r"(?P<key>\b(?:[A-Za-z0-9]+[_-])*(?:" + _KEY_NAMES + r")\b[\"']?\s*[:=]\s*[\"']?)"
        r"(?!sha256:)(?=[^\s\"'`,;]*\d)[^\s\"'`,;]{8,}", re.IGNORECASE), r"\g<key>[token]"),
    ("email", "email", re.compile(
        r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"), "[email]"),
    ("home", "posix", re.compile(r"(?<![\w.~-])/(?:home|Users)/[^/\s\"'`<>|:;,()\[\]]+"),
     "[home]"),
    ("home", "windows", re.compile(r"\b[A-Za-z]:[\\/]+Users[\\/]+[^\\/\s\"'`<>|:;,()\[\]]+",
                                   re.IGNORECASE), "[home]"),
    ("home", "root", re.compile(r"(?<![\w.~-])/root(?![\w.-])"), "[home]"),
)


SCRUB_KINDS = ("email", "token", "home", "local_path")


@functools.lru_cache(maxsize=32)
def _local_pattern(paths: tuple[str, ...]) -> re.Pattern[str] | None:
    usable = sorted({p.rstrip("/\\") for p in paths if len(p.rstrip("/\\")) > 1},
                    key=len, reverse=True)
    if not usable:
        return None
    return re.compile("(?:" + "|".join(map(re.escape, usable)) + r")(?![A-Za-z0-9_-])")


def scrub(text: str, *, local_paths: Sequence[str] = ()) -> tuple[str, Counter[str]]:
    """`text` with personal data replaced, and the replacements made per kind.

    Emails become `[email]`, tokens and keys `[token]`, home directories (`/home/<user>`,
    `/Users/<user>`, `C:\\Users\\<user>`, `/root`) `[home]`, and any of `local_paths` (absolute
    paths of this machine) `[local]`. Pure: the same input always gives the same output.
    """
    counts: Counter[str] = Counter()
    for kind, _name, pattern, replacement in SCRUB_PATTERNS:
        text, n = pattern.subn(replacement, text)
        if n:
            counts[kind] += n
    local = _local_pattern(tuple(local_paths))
    if local is not None:
        text, n = local.subn("[local]", text)
        if n:
            counts["local_path"] += n
    return text, counts


def leftovers(text: str) -> Counter[str]:
    """What `scrub` would still replace in `text` (the check run on every staged file)."""
    return scrub(text)[1]


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
