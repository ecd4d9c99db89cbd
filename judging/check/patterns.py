"""Personal data in text: the patterns of e-mail addresses, tokens and keys and home-directory
paths, the replacement of them (`scrub`) and where they are (`find_personal_data`).

`check` points participants at what is still in their logs, pages and traces, and `publish`
scrubs everything that leaves the machine with the same patterns. Both need them, and `check`
sits below publish (it cannot import publish's face): they live in the stage that finds personal
data, and publish takes them from check's face (its `scrub` module re-exports them).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class PersonalData:
    """One match of a scrub pattern: its kind (email, token, home), the pattern's name, the line
    (1-based) and column, and the matched text shown masked (never the whole secret)."""

    kind: str
    name: str
    line: int
    column: int
    masked: str


def mask(kind: str, value: str) -> str:
    """A found value as a participant can recognise it without the report copying it again: a
    token's first characters, an address's first letter and domain, a home path's first letter
    of the user name."""
    if kind == "email" and "@" in value:
        user, domain = value.split("@", 1)
        return f"{user[:1]}...@{domain}"
    if kind == "home":
        cut = max(value.rfind("/"), value.rfind("\\"))
        return value[:cut + 2] + "..." if 0 <= cut < len(value) - 2 else value
    keep = 4 if len(value) > 8 else 1
    return value[:keep] + "..."


def find_personal_data(text: str) -> list[PersonalData]:
    """Every place in `text` that `scrub` would replace, in order of position (an overlap of two
    patterns is reported once, for the pattern `scrub` applies first)."""
    found: list[tuple[int, int, str, str]] = []
    for kind, name, pattern, _replacement in SCRUB_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            # An assignment (`token=...`) or a `Bearer ...` header: the value, not its key.
            for group in ("key", "scheme"):
                if group in pattern.groupindex and match.group(group):
                    start += len(match.group(group))
            if any(start < e and s < end for s, e, _k, _n in found):
                continue
            found.append((start, end, kind, name))
    found.sort()
    results = []
    for start, end, kind, name in found:
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        results.append(PersonalData(kind=kind, name=name, line=line, column=column,
                                    masked=mask(kind, text[start:end])))
    return results
