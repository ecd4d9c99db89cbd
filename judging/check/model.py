"""A checklist: one row per item (code, environment, results, ...), each ok, missing or a
warning, with its detail and, where it has one, the claim, file and line it is about."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

OK, MISSING, WARNING = "ok", "missing", "warning"
STATUSES = (OK, MISSING, WARNING)


@dataclass
class Item:
    item: str
    """What is checked: code, environment, results, logs, verdict, trace, scale note, proof
    script, problem kind, personal data, claims, or a profile's structure item."""
    status: str
    """ok | missing (something required: the check fails) | warning (does not fail)."""
    detail: str
    claim: str | None = None
    file: str | None = None
    """Relative to the submission folder."""
    line: int | None = None

    @property
    def where(self) -> str:
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line is not None else self.file


@dataclass
class Checklist:
    source: str
    folder: str
    format: str
    """manifest | logbook | space | unknown"""
    submission_id: str | None = None
    profile: str | None = None
    items: list[Item] = field(default_factory=list)

    def add(self, item: str, status: str, detail: str, **where: Any) -> Item:
        assert status in STATUSES, status
        row = Item(item=item, status=status, detail=detail, **where)
        self.items.append(row)
        return row

    @property
    def ok(self) -> bool:
        """Nothing required is missing (warnings do not count)."""
        return all(i.status != MISSING for i in self.items)

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for i in self.items if i.status == s) for s in STATUSES}

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "folder": self.folder, "format": self.format,
                "submission_id": self.submission_id, "profile": self.profile, "ok": self.ok,
                "counts": self.counts(), "items": [asdict(i) for i in self.items]}
