"""A checklist: one row per item (code, environment, results, ...), each ok, missing or a
warning, with its detail and, where it has one, the claim, file and line it is about.

`judging check --json` prints the checklists as `CheckOutput`; `judging awards --checklists`
reads that output back with the same models."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    computed_field,
    model_serializer,
    model_validator,
)

from judging.models import StrictModel

OK, MISSING, WARNING = "ok", "missing", "warning"
STATUSES = (OK, MISSING, WARNING)
Status = Literal["ok", "missing", "warning"]


class Item(StrictModel):
    item: str
    """What is checked: code, environment, results, logs, verdict, trace, scale note, proof
    script, problem kind, personal data, claims, or a profile's structure item."""
    status: Status
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


class DerivedOnRead(StrictModel):
    """A model whose summary fields (`computed_field`s) are written for the JSON's reader and
    derived again on read, never trusted from the file; in the JSON the summary comes first
    and the long list (`LONG`) last, so a reader sees the answer first."""

    DERIVED: ClassVar[tuple[str, ...]] = ()
    LONG: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in cls.DERIVED}
        return data

    @model_serializer(mode="wrap")
    def _summary_first(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        summary = {name: data.pop(name) for name in self.DERIVED}
        long_list = data.pop(self.LONG)
        return {**summary, **data, self.LONG: long_list}


class Checklist(DerivedOnRead):
    """One submission's checklist. `ok` and `counts` follow from the items: the JSON shows them
    for its reader, and reading it back derives them from the items again."""

    source: str
    folder: str
    format: str
    """manifest | logbook | space | unknown"""
    submission_id: str | None = None
    profile: str | None = None
    items: list[Item] = Field(default_factory=list)

    DERIVED: ClassVar[tuple[str, ...]] = ("ok", "counts")
    LONG: ClassVar[str] = "items"

    def add(self, item: str, status: Status, detail: str, **where: Any) -> Item:
        row = Item(item=item, status=status, detail=detail, **where)
        self.items.append(row)
        return row

    @computed_field
    @property
    def ok(self) -> bool:
        """Nothing required is missing (warnings do not count)."""
        return all(i.status != MISSING for i in self.items)

    @computed_field
    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for i in self.items if i.status == s) for s in STATUSES}


class CheckOutput(DerivedOnRead):
    """`judging check SOURCE... --json`."""

    profile: str | None = None
    submissions: list[Checklist]

    DERIVED: ClassVar[tuple[str, ...]] = ("ok",)
    LONG: ClassVar[str] = "submissions"

    @computed_field
    @property
    def ok(self) -> bool:
        """No submission misses anything required."""
        return all(c.ok for c in self.submissions)
