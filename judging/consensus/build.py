"""Build the consensus of a run: every reproduction of each registry claim side by side.

Reads the run directory's claims, judgments and integrity side file (what `judging run` wrote);
writes the consensus side file (consensus.json). Nothing here changes a judgment, a decision or
an outcome: the flags raise review priority and inform people.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from judging.consensus.rules import consensus_verdict, modified_z, value_scale
from judging.hashing import canonical_json
from judging.models import (
    CONTRADICTS_CONSENSUS,
    NOT_INDEPENDENT,
    VALUE_OUTLIER,
    ClaimConsensus,
    ClaimInput,
    ClaimKind,
    ConsensusReport,
    ConsensusRules,
    Flag,
    Judgment,
    LineStatus,
    ReferenceOrigin,
    ReproducedValue,
    Reproduction,
    Tolerance,
    ValueSpread,
    Verdict,
    natural_key,
)
from judging.rundir import (
    RunStore,
    Spoken,
    iter_final_verdicts,
    iter_integrity_pairs,
    judged_claims,
    read_consensus,
    write_consensus,
)

#: The judgment flag of a reproduced figure that copies the published one (run/measure.py): not
#: a reproduction at all, so it adds no support.
COPY_OF_PUBLISHED = "copy"

#: Integrity pairs that make two reproductions of one claim one source of evidence.
#: Two submissions of one user for one paper (`duplicate_submission`) are one source too.
COPY_KINDS = ("duplicate_figure", "copied_justification", "duplicate_submission")

#: Reference values a spread needs before any value is called an outlier.
MIN_VALUES = 3


class _Chosen(NamedTuple):
    """What the consensus reads of a claim's chosen lines (one per rubric `id@version`, the line
    that speaks for the AI): its outcomes, and whether one flags its figure as a copy of the
    published one. Kept per registry claim instead of the lines, so that memory does not grow
    with the judgments of a large run."""

    outcomes: dict[str, str]
    copy: bool


def _chosen(speaking: list[Spoken]) -> _Chosen:
    """Of one claim's lines that speak for the AI (one per rubric `id@version`): its outcomes
    and copy flag."""
    chosen = {str(line.rubric): line for line, _ in speaking}
    return _Chosen(outcomes={rubric: _outcome(line) for rubric, line in chosen.items()},
                   copy=any(f.name == COPY_OF_PUBLISHED for line in chosen.values()
                            for f in line.flags))


def _outcome(line: Judgment) -> str:
    if line.status is LineStatus.error:
        return "error"
    return line.aggregate.outcome.value if line.aggregate else line.status.value


def _floor(tolerance: Tolerance | None, reported: float | None, median: float) -> float | None:
    """The tolerance in the value's units (a relative one of the reported value, else of the
    median)."""
    if tolerance is None:
        return None
    if tolerance.absolute is not None:
        return tolerance.absolute
    base = reported if reported not in (None, 0) else median
    return abs(base) * (tolerance.relative or 0.0)


def _values(claim: ClaimInput) -> list[tuple[ReproducedValue, Tolerance | None]]:
    c = claim.claim
    if c.kind is ClaimKind.table:
        return [(ReproducedValue(name=v.name, reported=v.reported, reproduced=v.reproduced),
                 v.tolerance or c.tolerance) for v in c.values or [] if v.reproduced is not None]
    if c.reproduced_value is not None:
        return [(ReproducedValue(name="value", reported=c.reported_value,
                                 reproduced=c.reproduced_value), c.tolerance)]
    return []


def _agent(claim: ClaimInput) -> str | None:
    agent = claim.submission.agent
    if agent is None:
        return None
    return f"{agent.name} ({agent.model})" if agent.model else agent.name


def _copies(run_root: Path, keys: set[str]) -> dict[str, list[str]]:
    """The integrity pairs that join two of `keys` as copies (`COPY_KINDS`), as each pair's
    second key by its first: the pairs are read one at a time and only these kept, not the
    pairs (tens of thousands in a large run)."""
    found: dict[str, list[str]] = defaultdict(list)
    for pair in iter_integrity_pairs(run_root):
        a, b = str(pair.a), str(pair.b)
        if pair.kind in COPY_KINDS and a in keys and b in keys:
            found[a].append(b)
    return found


def _copy_groups(keys: list[str], copies: dict[str, list[str]]) -> list[list[str]]:
    """Groups of reproductions joined by shared figures or justifications (connected components:
    A copies B and B copies C make one group)."""
    index = {key: i for i, key in enumerate(keys)}
    edges = [(index[a], index[b]) for a in keys for b in copies.get(a, ()) if b in index]
    rows = [a for a, _ in edges]
    cols = [b for _, b in edges]
    graph = coo_matrix((np.ones(len(edges)), (rows, cols)), shape=(len(keys), len(keys)))
    _, labels = connected_components(graph, directed=False)
    groups: dict[int, list[str]] = defaultdict(list)
    for key, label in zip(keys, labels):
        groups[int(label)].append(key)
    return [sorted(group) for group in groups.values()]


#: Final verdicts the consensus counts (toy settles no direction: like a toy run, not counted).
COUNTED_FINALS = ("verified", "falsified", "inconclusive")


def read_final_verdicts(store: RunStore) -> dict[str, str]:
    """The claims' decided final verdicts from `resolve` (final.jsonl), by claim key: pending
    ones and claims whose rubrics ask for none are left out."""
    return {key: verdict for key, verdict in iter_final_verdicts(store.root)
            if verdict not in (None, "pending")}


def _claim_consensus(claim_id: str, claims: list[ClaimInput],
                     chosen: dict[str, _Chosen],
                     copies: dict[str, list[str]], rules: ConsensusRules,
                     finals: dict[str, str] | None = None) -> ClaimConsensus:
    claims = sorted(claims, key=lambda c: str(c.key))
    rows: dict[str, Reproduction] = {}
    tolerances: dict[str, Tolerance | None] = {}
    for claim in claims:
        key = str(claim.key)
        lines = chosen.get(key) or _Chosen(outcomes={}, copy=False)
        values = _values(claim)
        for value, tolerance in values:
            tolerances.setdefault(value.name, tolerance)
        row = Reproduction(
            claim=claim.key, agent=_agent(claim),
            human_help=claim.submission.human_help.value if claim.submission.human_help
            else None,
            verdict=claim.claim.verdict, source_verdict=claim.claim.source_verdict,
            toy=claim.claim.toy, scale_note=claim.claim.scale_note,
            values=[v for v, _ in values],
            outcomes=dict(lines.outcomes))
        if lines.copy:
            row.independent = False
            row.flags.append(Flag(name=NOT_INDEPENDENT,
                                  detail="its reproduced figure is a copy of the published "
                                         "figure: it adds no support to the consensus"))
        rows[key] = row

    # A group of copies counts once: its first eligible member (not toy, with a verdict, not a
    # copy of the published figure) speaks for it, the others add no support.
    for group in _copy_groups(list(rows), copies):
        if len(group) < 2:
            continue
        eligible = [k for k in group if rows[k].independent and not rows[k].toy
                    and rows[k].verdict is not None]
        speaker = (eligible or group)[0]
        for key in group:
            row = rows[key]
            row.copy_of = [rows[k].claim for k in group if k != key]
            if key != speaker and row.independent:
                row.independent = False
                row.flags.append(Flag(
                    name=NOT_INDEPENDENT,
                    detail=f"shares its figure or justification with {speaker}: the "
                           f"{len(group)} copies count once (as {speaker}), this one adds no "
                           f"support"))
    for key, row in rows.items():
        final = (finals or {}).get(key)
        row.final_verdict = final
        if final is not None:
            row.counted_from = "final"
            row.counted_verdict = final if final in COUNTED_FINALS else None
        elif row.verdict is not None and not row.toy:
            row.counted_from = "participant"
            row.counted_verdict = row.verdict.value
        row.counted = row.independent and row.counted_verdict is not None

    votes = Counter(r.counted_verdict for r in rows.values() if r.counted and r.counted_verdict)
    sources = Counter(r.counted_from for r in rows.values() if r.counted and r.counted_from)
    verdict, support, reason = consensus_verdict(votes, min_support=rules.min_support)
    if sources:
        reason += " (counted: " + ", ".join(
            f"{n} {'final verdict(s)' if what == 'final' else 'participant verdict(s)'}"
            for what, n in sorted(sources.items())) + ")"
    counted = sum(votes.values())
    if verdict is not None:
        opposite = Verdict.falsified if verdict == "verified" else Verdict.verified
        for row in rows.values():
            shown = row.final_verdict or (row.verdict.value if row.verdict else None)
            if shown == opposite.value:
                row.flags.append(Flag(
                    name=CONTRADICTS_CONSENSUS,
                    detail=f"{opposite.value} against a {verdict} consensus ({support} of "
                           f"{counted} independent, full-scale reproductions)"))

    spreads = []
    for name, tolerance in tolerances.items():
        spreads.append(_spread(name, tolerance, list(rows.values()), rules))
    return ClaimConsensus(
        claim_id=claim_id, paper_id=claims[0].submission.paper_id, kind=claims[0].claim.kind,
        statement=claims[0].claim.statement, reproductions=list(rows.values()),
        independent=sum(1 for r in rows.values() if r.independent),
        votes=dict(sorted(votes.items())), counted_from=dict(sorted(sources.items())),
        verdict=verdict, support=support,
        agreement=round(max(votes.values()) / counted, 3) if counted else None,
        reason=reason, spread=spreads)


def _spread(name: str, tolerance: Tolerance | None, rows: list[Reproduction],
            rules: ConsensusRules) -> ValueSpread:
    """Median, MAD and outliers of one value; every reproduction's value gets its z-score against
    the independent, full-scale ones (copies and toy runs are scored, not used as reference; a
    toy run is never called an outlier)."""
    found = [(row, v) for row in rows for v in row.values if v.name == name]
    reference = [v.reproduced for row, v in found if row.independent and not row.toy]
    reported = next((v.reported for _, v in found if v.reported is not None), None)
    spread = ValueSpread(name=name, reported=reported, n=len(reference))
    if reference:
        spread.minimum, spread.maximum = min(reference), max(reference)
    if len(reference) < MIN_VALUES:
        return spread
    floor = _floor(tolerance, reported, float(np.median(reference)))
    median, mad, scale = value_scale(reference, floor=floor)
    spread.median, spread.mad, spread.floor = median, mad, floor
    label = "" if name == "value" else f" ({name})"
    floored = f", floored at the tolerance {floor:g}" if floor is not None else ""
    for row, value in found:
        z = modified_z(value.reproduced, median=median, scale=scale)
        value.z = None if z is None else round(z, 3)
        # A toy run's value is scored but not flagged: its declared scale explains a distance.
        if z is not None and abs(z) > rules.outlier_z and not row.toy:
            value.outlier = True
            spread.outliers.append(row.claim)
            row.flags.append(Flag(
                name=VALUE_OUTLIER,
                detail=f"reproduced value{label} {value.reproduced:g} is far from the other "
                       f"reproductions: median {median:g}, modified z-score {z:.2f} (MAD "
                       f"{mad:g}{floored}; above {rules.outlier_z:g} is an outlier)"))
    return spread


def inputs_hash(store: RunStore) -> str:
    """What a consensus is computed from: the claims' stored contents' judgment input hashes and
    the integrity pairs (a later run that changes either makes a stored consensus stale).

    `content_hash` of {"claims": ..., "finals": ..., "lines": ..., "pairs": ...}, its canonical
    JSON fed to the hash a part at a time (keys in sorted order, as `canonical_json` writes
    them): the pairs are read one at a time and never held, the lines kept only as the fields
    hashed. Hand-written because the json module writes a value only whole."""
    digest = hashlib.sha256()

    def put(text: str) -> None:
        digest.update(text.encode("utf-8"))

    put('{"claims":' + canonical_json(sorted(store.claim_keys())))
    finals = read_final_verdicts(store)
    if finals:  # left out while there is none, so that earlier consensus files stay current
        put(',"finals":' + canonical_json(sorted(finals.items())))
    # The lines are read one at a time and only these fields kept (not the judgments).
    lines = sorted((str(j.claim), str(j.rubric), j.judge, j.sample, j.input_hash)
                   for j in store.iter_latest_heads())
    put(',"lines":[')
    for i, line in enumerate(lines):
        put(("," if i else "") + canonical_json(line))
    del lines
    put('],"pairs":[')
    for i, pair in enumerate(iter_integrity_pairs(store.root)):
        put(("," if i else "") + canonical_json(pair.model_dump(mode="json")))
    put("]}")
    return "sha256:" + digest.hexdigest()


def note_reproduction(reproductions: dict[str, list[str]], claim: ClaimInput) -> None:
    """Add a claim read from the run to `reproductions` (registry claim id -> the keys of the
    run's claims that reproduce it, in the order read) when it reproduces a registry claim."""
    if claim.reference is ReferenceOrigin.registry:
        reproductions.setdefault(claim.claim.claim_id, []).append(str(claim.key))


def compute_consensus(run_dir: Path, *, rules: ConsensusRules | None = None,
                      store: RunStore | None = None,
                      reproductions: dict[str, list[str]] | None = None) -> ConsensusReport:
    """The consensus of every registry claim that the run's submissions reproduce (nothing is
    written).

    Streams the run: the claims are read one at a time and only the registry ones' keys kept
    (`note_reproduction`; `judging run` gives them from its own one read of the claims as
    `reproductions`), the chosen lines are read per claim and kept as their outcomes, and each
    registry claim's reproductions are read back by key when its consensus is made; what grows
    with the run is the report itself (a row per reproduction)."""
    rules = rules or ConsensusRules()
    # `judging run` gives its own store, which knows its lines (no second read of the file); it
    # stays open for the caller.
    opened = store is None
    store = store or RunStore.open(Path(run_dir), create=False)
    by_claim = reproductions
    if by_claim is None:
        by_claim = {}
        for claim in store.iter_claims():
            note_reproduction(by_claim, claim)
    registry_keys = {key for keys in by_claim.values() for key in keys}
    chosen = {key: _chosen(speaking) for key, _, speaking in judged_claims(store, registry_keys)}
    copies = _copies(store.root, registry_keys)
    finals = read_final_verdicts(store)
    consensus = []
    # Registry claims in natural order of their ids (r2 before r10), as every table shows them.
    for claim_id, keys in sorted(by_claim.items(), key=lambda item: natural_key(item[0])):
        claims = [claim for claim in map(store.claim, keys) if claim is not None]
        consensus.append(_claim_consensus(claim_id, claims, chosen, copies, rules, finals))
    report = ConsensusReport(computed_at=datetime.now(UTC),
                             inputs_hash=inputs_hash(store), rules=rules,
                             claims=consensus)
    if opened:
        store.close()
    return report


def run_consensus(run_dir: Path, *, rules: ConsensusRules | None = None,
                  store: RunStore | None = None,
                  reproductions: dict[str, list[str]] | None = None) -> ConsensusReport:
    """`judging consensus RUN_DIR`: compute the consensus and write RUN_DIR/consensus.json."""
    report = compute_consensus(run_dir, rules=rules, store=store, reproductions=reproductions)
    write_consensus(Path(run_dir), report)
    return report


def is_current(run_dir: Path, report: ConsensusReport) -> bool:
    """Whether `report` was computed from the run directory as it is now."""
    store = RunStore.open(Path(run_dir), create=False)
    return report.inputs_hash == inputs_hash(store)


def load_consensus(run_dir: Path | str) -> ConsensusReport:
    """The consensus of a run, per registry claim: the stored side file when it is current, else
    computed afresh (and not written: writing is `judging consensus`'s job). For the dashboard
    and any reader that needs the table without running the command."""
    run_dir = Path(run_dir)
    stored = read_consensus(run_dir)
    if stored is not None and is_current(run_dir, stored):
        return stored
    return compute_consensus(run_dir, rules=stored.rules if stored is not None else None)
