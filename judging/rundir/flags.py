"""Flags computed after judging live in side files of the run directory and are merged into
judgments on read, never by rewriting judgment lines (integrity: copies across submissions;
consensus: reproductions of one registry claim that contradict the others or stand out).

A side file of flags is marked `flags_side_file` in `layout.RUN_FILES` and has a reader here
(`FLAG_READERS`); `flags_by_claim` reads them all, `with_flags` merges them into a judgment.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import ijson
from pydantic import BaseModel

from judging.atomic import write_chunks_atomic, write_text_atomic
from judging.models import (
    ConflictReport,
    ConsensusReport,
    DriftReport,
    Flag,
    IntegrityPair,
    IntegrityReport,
    Judgment,
    ServedChange,
    integrity_flags,
)
from judging.rundir.layout import CONFLICTS, CONSENSUS, DRIFT, INTEGRITY, RUN_FILES, RunPaths
from judging.rundir.store import RunStore, judgment_head

_Report = TypeVar("_Report", IntegrityReport, ConsensusReport, ConflictReport, DriftReport)


def _write_side(path: Path, report: BaseModel, **dump: Any) -> Path:
    """A side file, replaced whole (atomically: a reader sees the old one or the new one)."""
    write_text_atomic(path, report.model_dump_json(indent=2, **dump))
    return path


def _read_side(path: Path, model: type[_Report], missing: _Report | None) -> _Report | None:
    """A side file, or `missing` when the stage that writes it has not run."""
    return model.from_file(path.read_bytes()) if path.is_file() else missing


def write_integrity(run_root: Path, report: IntegrityReport) -> Path:
    """Write the integrity side file (duplicate figures, copied justifications)."""
    write_integrity_pairs(run_root, figures=report.figures,
                          justifications=report.justifications, pairs=report.pairs)
    return RunPaths(run_root).integrity


#: Where the pairs go in the header `IntegrityReport.model_dump_json(indent=2)` writes for a
#: report without pairs (its last field).
_NO_PAIRS = '"pairs": []\n}'


def write_integrity_pairs(run_root: Path, *, figures: int, justifications: int,
                          pairs: Iterable[IntegrityPair]) -> Counter[str]:
    """Write the integrity side file a pair at a time as `pairs` makes them (a stream: a run
    never holds its pairs, `judging.run.memory`), atomically; returns the pairs written by
    kind. The bytes are those of `write_side` of the whole `IntegrityReport` (tested):
    pydantic writes each part (the header, each pair, indented as a list item), and only the
    list's brackets and commas are written here, because pydantic and the json module write a
    value only whole and no maintained streaming writer gives pydantic's layout."""
    header = IntegrityReport(figures=figures, justifications=justifications).model_dump_json(
        indent=2)
    assert header.endswith(_NO_PAIRS), header  # pairs is the report's last field
    kinds: Counter[str] = Counter()

    def chunks() -> Iterator[bytes]:
        yield header[:-len(_NO_PAIRS)].encode("utf-8") + b'"pairs": ['
        for pair in pairs:
            item = textwrap.indent(pair.model_dump_json(indent=2), "    ")
            yield (",\n" if kinds else "\n").encode("utf-8") + item.encode("utf-8")
            kinds[pair.kind] += 1
        yield b"\n  ]\n}" if kinds else b"]\n}"

    write_chunks_atomic(RunPaths(run_root).integrity, chunks())
    return kinds


def read_integrity(run_root: Path) -> IntegrityReport:
    """The integrity side file, its pairs all in memory (small runs and tests; a large run's
    readers take `iter_integrity_pairs`); an empty report when the run has none yet."""
    return _read_side(RunPaths(run_root).integrity, IntegrityReport, IntegrityReport())


def iter_integrity_pairs(run_root: Path) -> Iterator[IntegrityPair]:
    """The integrity side file's pairs one at a time, in file order (none when the run has no
    side file), so that a large run's pairs are never all in memory (`read_integrity` reads them
    whole)."""
    path = RunPaths(run_root).integrity
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for item in ijson.items(handle, "pairs.item", use_float=True):
            yield IntegrityPair.model_validate(item)


def write_consensus(run_root: Path, report: ConsensusReport) -> Path:
    """Write the consensus side file (`judging consensus`): replaced whole each time."""
    return _write_side(RunPaths(run_root).consensus, report)


def read_consensus(run_root: Path) -> ConsensusReport | None:
    """The consensus side file; None when `judging consensus` has not run on this run yet."""
    return _read_side(RunPaths(run_root).consensus, ConsensusReport, None)


def _consensus_flags(run_root: Path) -> dict[str, list[Flag]]:
    report = read_consensus(run_root)
    return report.flags() if report is not None else {}


def write_conflicts(run_root: Path, report: ConflictReport) -> Path:
    """Write the conflicts side file (lines that run directories merged disagree on)."""
    return _write_side(RunPaths(run_root).conflicts, report, by_alias=True)


def read_conflicts(run_root: Path) -> ConflictReport:
    """The conflicts side file; an empty report when the run has none (never merged)."""
    return _read_side(RunPaths(run_root).conflicts, ConflictReport, ConflictReport())


_ServedHead = judgment_head(
    "_ServedHead", "What the drift report reads of a judgment line: who judged what, and the "
    "call's provenance; the answers, signals and flags (most of a line) are skipped.",
    "judge", "claim", "rubric", "provenance")


CallOrder = tuple[datetime, int]
"""When a call was made, and its line's place among the run's newest lines (ties keep file
order)."""


def _served_calls(store: RunStore) -> Iterator[tuple[CallOrder, _ServedHead, str]]:
    """The newest lines whose endpoint said what served them (cached answers left out), read
    one at a time."""
    for index, head in enumerate(store.iter_latest_as(_ServedHead)):
        served = head.provenance.served()
        if served is not None and not head.provenance.cached:
            yield (head.provenance.timestamp, index), head, served


def drift_report(store: RunStore) -> DriftReport:
    """What each judge's endpoint said it served, over the run's newest lines in the order of
    their calls (`Provenance.timestamp`), and the lines served by another model or build than the
    judge's first calls. Lines whose endpoint said nothing (the offline judge, a server that names
    no model) are not compared.

    Two passes over the lines, one line at a time (a run of 36k claims has too many to hold):
    the first finds when each judge was first served by each model or build, the second the
    lines served by another than the judge's first; only the report is kept."""
    first_call: dict[str, dict[str, CallOrder]] = {}
    for order, head, served in _served_calls(store):
        seen = first_call.setdefault(head.judge, {})
        if served not in seen or order < seen[served]:
            seen[served] = order
    report = DriftReport(served={
        judge: sorted(seen, key=seen.__getitem__)
        for judge, seen in sorted(first_call.items(), key=lambda item: min(item[1].values()))})
    changes: list[tuple[CallOrder, ServedChange]] = []
    for order, head, served in _served_calls(store):
        first = report.served[head.judge][0]
        if served != first:
            changes.append((order, ServedChange(
                judge=head.judge, claim=head.claim, rubric=str(head.rubric) if head.rubric
                else None, served=served, first=first, at=head.provenance.timestamp)))
    report.changes = [change for _, change in sorted(changes, key=lambda found: found[0])]
    return report


def write_drift(run_root: Path, report: DriftReport) -> Path:
    """Write the drift side file (what the endpoint served): replaced whole each time."""
    return _write_side(RunPaths(run_root).drift, report)


def read_drift(run_root: Path) -> DriftReport:
    """The drift side file; an empty report when the run has none."""
    return _read_side(RunPaths(run_root).drift, DriftReport, DriftReport())


#: How to read the flags of each side file (by its name in `layout`), as claim key -> flags. A new
#: side file adds its reader here and `flags_side_file=True` in `RUN_FILES`.
FLAG_READERS: dict[str, Callable[[Path], dict[str, list[Flag]]]] = {
    # The pairs read one at a time: only the flags (the reader's answer) are kept.
    INTEGRITY: lambda run_root: integrity_flags(iter_integrity_pairs(run_root)),
    CONSENSUS: _consensus_flags,
    CONFLICTS: lambda run_root: read_conflicts(run_root).flags(),
    DRIFT: lambda run_root: read_drift(run_root).flags(),
}


def flags_by_claim(run_root: Path, *, consensus: ConsensusReport | None = None
                   ) -> dict[str, list[Flag]]:
    """Claim key -> the flags of every side file of the run, in `RUN_FILES` order.

    `consensus`: a report to take the consensus flags from instead of the stored side file (a
    reader that shows a consensus recomputed because consensus.json is stale, such as the
    dashboard and `publish`, shows the flags of that same consensus)."""
    merged: dict[str, list[Flag]] = {}
    for run_file in RUN_FILES:
        if run_file.flags_side_file:
            read = FLAG_READERS[run_file.name]
            found = consensus.flags() if consensus is not None and run_file.name == CONSENSUS \
                else read(run_root)
            for claim, flags in found.items():
                merged.setdefault(claim, []).extend(flags)
    return merged


def with_flags(judgment: Judgment, flags: dict[str, list[Flag]]) -> Judgment:
    """`judgment` with the side-file flags of its claim (`flags_by_claim`) added."""
    extra = flags.get(str(judgment.claim), [])
    return judgment.model_copy(update={"flags": [*judgment.flags, *extra]}) if extra else judgment


def judgments_with_flags(run_root: Path, judgments: Iterable[Judgment], *,
                         consensus: ConsensusReport | None = None) -> list[Judgment]:
    """`judgments` with the flags of every side file of the run merged in (`consensus`: as in
    `flags_by_claim`)."""
    flags = flags_by_claim(run_root, consensus=consensus)
    return [with_flags(judgment, flags) for judgment in judgments]
