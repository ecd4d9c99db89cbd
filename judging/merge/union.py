"""`judging merge RUN_DIR... --out DIR`: the append-only union of run directories.

The shards of one run (`judging run --shard I/N`) are merged into one directory that is the run
as if it had been judged in one go: the same judgment lines, claims, fingerprints, registry
claims not addressed, labels and files (diffs/, sources/, logbooks/), run.json's invocations
from every shard plus a record of the merge, and the integrity flags recomputed over the union
(a figure copied between two submissions that were judged in different shards is found only
here). Merging into a directory that exists appends to it (nothing is rewritten or removed), so
shards can be merged as they finish, and a repeated merge adds nothing.

Which line counts, per (claim, rubric, judge, sample, order) -- a line's identity:
- within one directory, its newest line, as `RunStore.latest()` reads it (a non-final line, e.g.
  a budget stop, followed by a final one: the final one);
- across directories, the final lines; when they agree (same status and the same answer to every
  criterion), the newest of them; when they disagree, that is a **conflict**: the line already in
  DIR, else the newest, is the one `latest()` shows, every line of the conflict is kept in
  conflicts.json, the claim is flagged `merge_conflict` (a side file, like integrity), and
  `judging merge` exits with status 1. Nothing is chosen silently;
- no final line anywhere: the newest line.
The line that counts is written last of its identity, so that every reader (which takes the
newest line) sees it.

Memory: one input's files are read at a time; across inputs only digests are kept.
"""

from __future__ import annotations

import filecmp
import hashlib
import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging.consensus import run_consensus
from judging.errors import RunStoreError
from judging.hashing import canonical_json
from judging.models import (
    ClaimInput,
    ConflictSide,
    Fingerprint,
    Judgment,
    Label,
    MergeConflict,
    NotAddressed,
)
from judging.run import IntegritySearch
from judging.rundir import (
    Invocation,
    Merge,
    MergeInput,
    RunInfo,
    RunPaths,
    RunStore,
    append_jsonl,
    read_conflicts,
    read_jsonl,
    read_judgments,
    read_not_addressed,
    utc_now,
    write_conflicts,
    write_integrity_pairs,
    write_not_addressed,
)
from judging.version import code_version

Identity = tuple[str, str | None, str, int, bool]


def identity(line: Judgment) -> Identity:
    """The store's identity of a line: claim, rubric id@version, judge, sample, order."""
    return (str(line.claim), str(line.rubric) if line.rubric else None, line.judge, line.sample,
            line.swapped)


def answers_digest(line: Judgment) -> str:
    """What two lines must share to agree: the line's status and every criterion's status and
    value (not rationales, confidences or error texts, which differ in wording and paths)."""
    view = [line.status.value, [(a.criterion_id, a.status.value, a.value) for a in line.answers]]
    return hashlib.sha256(canonical_json(view).encode()).hexdigest()


def line_digest(line: Judgment) -> str:
    return hashlib.sha256(line.model_dump_json(by_alias=True).encode()).hexdigest()


@dataclass(frozen=True)
class _Candidate:
    """The line that counts for one identity within one directory."""

    source: int
    digest: str
    final: bool
    answers: str
    timestamp: str


@dataclass
class _Source:
    path: Path
    info: RunInfo
    label: str

    @property
    def paths(self) -> RunPaths:
        return RunPaths(self.path)


@dataclass
class MergeResult:
    out: Path
    run_id: str
    inputs: list[MergeInput]
    added: int = 0
    """Judgment lines appended."""
    already: int = 0
    """Lines of the inputs already in DIR (a repeated merge)."""
    conflicts: list[MergeConflict] = field(default_factory=list)
    """Conflicts this merge met (including ones an earlier merge recorded, still unresolved)."""
    integrity_pairs: Counter[str] = field(default_factory=Counter)
    """The integrity pairs found over the union, by kind (written to integrity.json one at a
    time, never held)."""
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.conflicts)


def _open_inputs(inputs: Sequence[Path], out: Path) -> list[_Source]:
    if not inputs:
        raise RunStoreError("give at least one RUN_DIR to merge")
    target = out.resolve()
    seen: dict[Path, Path] = {}
    sources = []
    for given in inputs:
        where = given.resolve()
        if where == target:
            raise RunStoreError(f"{given}: is the --out directory; a directory cannot be merged "
                                f"into itself (merge the other directories into it)")
        if where in seen:
            raise RunStoreError(f"{given}: given twice (also as {seen[where]})")
        seen[where] = given
        store = RunStore.open(given, create=False)
        sources.append(_Source(given, store.info, str(given)))
    return sources


def _rubric_set(info: RunInfo) -> frozenset[str]:
    return frozenset(r for inv in info.invocations for r in inv.rubrics)


def _check_rubrics(sources: Sequence[_Source]) -> None:
    """All directories must have been judged with the same rubrics (id@version#hash): a union of
    runs under different rubric versions is not one run (re-judge instead: `judging run`)."""
    sets = {s.label: _rubric_set(s.info) for s in sources if s.info.invocations}
    hashes: dict[str, tuple[str, str]] = {}
    for label, refs in sets.items():
        for ref in refs:
            name, _, digest = ref.partition("#")
            if name in hashes and hashes[name][0] != digest:
                raise RunStoreError(f"rubric {name} has different content in {hashes[name][1]} "
                                    f"and {label} (an edited rubric file): these runs cannot be "
                                    f"merged")
            hashes.setdefault(name, (digest, label))
    distinct = set(sets.values())
    if len(distinct) > 1:
        listing = "; ".join(f"{label}: {', '.join(sorted(r.partition('#')[0] for r in refs))}"
                            for label, refs in sets.items())
        raise RunStoreError(f"the run directories were judged with different rubric sets "
                            f"({listing}); merge runs of one rubric set, or re-judge them with "
                            f"the same --rubric options")


def _shard_warnings(sources: Sequence[_Source]) -> list[str]:
    shards = [s.info.shard for s in sources if s.info.shard is not None]
    if not shards:
        return []
    counts = {s.count for s in shards}
    if len(counts) > 1:
        return [f"the inputs are shards of different counts ({', '.join(map(str, shards))}): "
                f"claims may be judged in more than one"]
    count = counts.pop()
    indices = [s.index for s in shards]
    warnings = []
    missing = sorted(set(range(1, count + 1)) - set(indices))
    if missing:
        warnings.append("shard(s) " + ", ".join(f"{i}/{count}" for i in missing)
                        + " not merged yet: the merged run is incomplete")
    twice = sorted({i for i in indices if indices.count(i) > 1})
    if twice:
        warnings.append("shard(s) " + ", ".join(f"{i}/{count}" for i in twice)
                        + " given more than once")
    return warnings


def _rebase(claim: ClaimInput, roots: Sequence[Path], out: Path) -> ClaimInput:
    """Paths under a directory the input was written at (its logbook figures, Hub downloads)
    point to the same files under `out`, where the merge copies them."""

    def move(path: Path | None) -> Path | None:
        if path is None:
            return None
        for root in roots:
            if path.is_relative_to(root):
                return out / path.relative_to(root)
        return path

    update: dict[str, Any] = {name: move(getattr(claim, name)) for name in (
        "root", "published_path", "reproduced_path", "published_data_path",
        "reproduced_data_path", "participant_reference_path")}
    update["evidence_paths"] = {role: move(p) for role, p in claim.evidence_paths.items()}
    return claim.model_copy(update=update)


def _digest(record: Any) -> str:
    return hashlib.sha256(record.model_dump_json(by_alias=True).encode()).hexdigest()


def _union_lines(model: type, paths: Sequence[Path], target: Path,
                 transform: Any = None) -> tuple[int, list[Any]]:
    """Append to `target` every line of `paths` not already in it (exact content); returns the
    number appended and every new record."""
    present = {_digest(r) for r in read_jsonl(target, model)}
    added = []
    for path in paths:
        for record in read_jsonl(path, model):
            if transform is not None:
                record = transform(path, record)
            digest = _digest(record)
            if digest not in present:
                present.add(digest)
                added.append(record)
    append_jsonl(target, added)
    return len(added), added


def _copy_tree(source: Path, target: Path, warnings: list[str]) -> int:
    """Copy the files of `source` missing under `target` (diffs, downloads, logbook figures:
    content that a measurement or a download wrote once)."""
    if not source.is_dir():
        return 0
    copied = 0
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        dest = target / path.relative_to(source)
        if dest.exists():
            if not filecmp.cmp(path, dest, shallow=False):
                warnings.append(f"{dest}: differs in {path}; the first one is kept")
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
        copied += 1
    return copied


def merge_runs(inputs: Sequence[Path], out: Path) -> MergeResult:
    """Merge the run directories `inputs` into `out` (created, or appended to)."""
    sources = _open_inputs(inputs, out)
    if RunPaths(out).run_json.exists():
        info = RunStore.open(out, create=False).info
        if info.shard is not None:
            raise RunStoreError(f"{out}: is shard {info.shard} of a run; merge into a new "
                                f"directory or into the unsharded run")
        _check_rubrics([_Source(out, info, str(out)), *sources])
    else:
        _check_rubrics(sources)
    base_store = RunStore.open(out, create=True)  # checked first: a refused merge writes nothing
    base = _Source(out, base_store.info, f"{out} (the merged directory)")
    base_store.write_info()  # a run directory from now on, even if the merge is interrupted
    started = utc_now()
    result = MergeResult(out=out, run_id=base.info.run_id, inputs=[])
    result.warnings += _shard_warnings(sources)
    every = [base, *sources]  # index 0: the merged directory itself

    # Pass 1: per directory, the line that counts for each identity; then, across directories,
    # the winner of each identity and the conflicts.
    candidates: dict[Identity, list[_Candidate]] = {}
    for number, source in enumerate(every):
        latest: dict[Identity, _Candidate] = {}
        lines = read_judgments(source.paths.judgments)
        for line in lines:
            latest[identity(line)] = _Candidate(number, line_digest(line), line.final,
                                                answers_digest(line),
                                                line.provenance.timestamp.isoformat())
        for key, candidate in latest.items():
            candidates.setdefault(key, []).append(candidate)
        if number:
            result.inputs.append(MergeInput(path=str(source.path), run_id=source.info.run_id,
                                            shard=str(source.info.shard)
                                            if source.info.shard else None, lines=len(lines)))
    winners: dict[Identity, _Candidate] = {}
    conflicting: dict[Identity, tuple[_Candidate, list[_Candidate]]] = {}
    for key, found in candidates.items():
        finals = [c for c in found if c.final]
        if not finals:
            winners[key] = max(found, key=lambda c: (c.timestamp, c.source))
            continue
        in_base = next((c for c in finals if c.source == 0), None)
        kept = in_base or max(finals, key=lambda c: (c.timestamp, c.source))
        winners[key] = kept
        others = [c for c in finals if c.answers != kept.answers]
        if others:
            conflicting[key] = (kept, others)

    # Pass 2: append every new line except the winners, which come last (pass 3).
    written = {line_digest(line) for line in read_judgments(base.paths.judgments)}
    touched: set[Identity] = set()
    full: dict[tuple[int, str], Judgment] = {}
    conflict_digests = {(c.source, c.digest) for kept, others in conflicting.values()
                        for c in (kept, *others)}
    new: list[Judgment] = []
    for number, source in enumerate(every):
        for line in read_judgments(source.paths.judgments):
            digest = line_digest(line)
            if (number, digest) in conflict_digests:
                full[(number, digest)] = line
            if number == 0:
                continue
            key = identity(line)
            if digest in written:
                result.already += 1
                continue
            if digest == winners[key].digest:
                continue
            written.add(digest)
            touched.add(key)
            new.append(line)
        if new:
            result.added += append_jsonl(base.paths.judgments, new)
            new = []
    # Pass 3: the winners, where they are new or were followed by other lines of their identity.
    last = {}
    for key, winner in winners.items():
        if winner.source == 0 and key not in touched:
            continue
        last.setdefault(winner.source, set()).add(winner.digest)
    for number, source in enumerate(every):
        wanted = last.get(number)
        if not wanted:
            continue
        lines = [line for line in read_judgments(source.paths.judgments)
                 if line_digest(line) in wanted]
        chosen = {}
        for line in lines:
            chosen.setdefault(line_digest(line), line)
        result.added += append_jsonl(base.paths.judgments, list(chosen.values()))

    # Conflicts: the side file keeps every line of each conflict (and the earlier merges' ones).
    report = read_conflicts(out)
    known = {canonical_json([c.claim.model_dump(), c.rubric, c.judge, c.sample, c.swapped,
                             sorted(line_digest(s.line) for s in (c.kept, *c.others))])
             for c in report.conflicts}

    def side(candidate: _Candidate) -> ConflictSide:
        source = every[candidate.source]
        return ConflictSide(source=str(source.path), run_id=source.info.run_id,
                            shard=str(source.info.shard) if source.info.shard else None,
                            line=full[(candidate.source, candidate.digest)])

    for key, (kept, others) in conflicting.items():
        line = full[(kept.source, kept.digest)]
        conflict = MergeConflict(claim=line.claim, rubric=key[1], judge=key[2], sample=key[3],
                                 swapped=key[4], kept=side(kept), others=[side(c) for c in others])
        signature = canonical_json([conflict.claim.model_dump(), conflict.rubric, conflict.judge,
                                    conflict.sample, conflict.swapped,
                                    sorted(line_digest(s.line)
                                           for s in (conflict.kept, *conflict.others))])
        result.conflicts.append(conflict)  # met again by a repeated merge: still unresolved
        if signature not in known:
            known.add(signature)
            report.conflicts.append(conflict)
    write_conflicts(out, report)

    # Claims (paths rebased onto `out`), fingerprints, labels, not addressed, files.
    roots = {s.paths.claims: [s.path.resolve(), *map(Path, s.info.roots)] for s in sources}
    target = out.resolve()
    claims_added, new_claims = _union_lines(
        ClaimInput, [s.paths.claims for s in sources], base.paths.claims,
        transform=lambda path, claim: _rebase(claim, roots[path], target))
    by_key: dict[str, ClaimInput] = {}
    for claim in new_claims:
        earlier = by_key.get(str(claim.key))
        if earlier is not None and earlier != claim:
            result.warnings.append(f"claim {claim.key} differs between the inputs (read from "
                                   f"different submission versions?); the last one given counts")
        by_key[str(claim.key)] = claim
    result.counts["claims_added"] = claims_added
    result.counts["fingerprints_added"], _ = _union_lines(
        Fingerprint, [s.paths.fingerprints for s in sources], base.paths.fingerprints)
    result.counts["labels_added"], _ = _union_lines(
        Label, [s.paths.labels for s in sources], base.paths.labels)
    not_addressed: dict[str, NotAddressed] = {}
    for source in every:
        for record in read_not_addressed(source.path):
            not_addressed.setdefault(_digest(record), record)
    write_not_addressed(out, not_addressed.values())
    result.counts["not_addressed"] = len(not_addressed)
    copied = 0
    for source in sources:
        for name in ("diffs", "sources", "logbooks"):
            copied += _copy_tree(getattr(source.paths, name), getattr(base.paths, name),
                                 result.warnings)
    result.counts["files_copied"] = copied

    # Integrity over the union: copies between submissions judged in different shards.
    # Written as they are found, as `judging run` writes them (`judging.run.memory`): a merged
    # run is the largest there is.
    merged = RunStore.open(out, create=False)
    search = IntegritySearch(merged.iter_fingerprints(), merged.iter_claims())
    result.integrity_pairs = write_integrity_pairs(
        out, figures=search.figures, justifications=search.justifications, pairs=search.pairs())
    del search
    # Consensus over the union too: the reproductions of one registry claim judged in
    # different shards are set side by side only here.
    run_consensus(out)

    # run.json: every input's invocations, each naming the directory and shard it ran in.
    info = base.info
    seen = {(inv.run_id or info.run_id, inv.started_at) for inv in info.invocations}
    for source in sources:
        for invocation in source.info.invocations:
            tagged: Invocation = invocation.model_copy(update={
                "run_id": invocation.run_id or source.info.run_id,
                "shard": invocation.shard or (str(source.info.shard)
                                              if source.info.shard else None)})
            if (tagged.run_id, tagged.started_at) not in seen:
                seen.add((tagged.run_id, tagged.started_at))
                info.invocations.append(tagged)
    result.counts |= {"added": result.added, "already_present": result.already,
                      "conflicts": len(result.conflicts),
                      "integrity_pairs": sum(result.integrity_pairs.values())}
    info.merges.append(Merge(started_at=started, ended_at=utc_now(), code_version=code_version(),
                             inputs=result.inputs, counts=dict(result.counts),
                             warnings=result.warnings))
    base_store.write_info()
    return result
