"""The consensus panel of the claim view: every reproduction of one registry claim side by side.

`consensus_view(data, claim_id)` is the one function the dashboard (and its API) asks. The
consensus itself is the consensus stage's (`judging consensus`): in a run directory
`judging.consensus.load_consensus` (the side file, or computed afresh when it is stale), in a
published dataset its `consensus` table (`AppData.consensus` holds either). This module only
joins it with what the claim records hold (values as the participant gave them, scale note,
final and AI figure-match outcome, final outcome, upheld), so both modes show the same panel.

A claim that is no registry claim (its reference is participant-supplied: consensus covers
registry claims only), or a dataset published before the consensus table existed, gets the rows
of the claims with that id and no statistics; `reason` says why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from judging.app.data import AppData, ClaimRecord
from judging.models import CONSENSUS_FLAGS, ClaimConsensus, Reproduction, ValueSpread


@dataclass
class ConsensusRow:
    """One reproduction of a registry claim."""

    submission: str
    agent: str | None
    reported: str | None
    reproduced: str | None
    verdict: str | None
    source_verdict: str | None
    toy: bool
    scale_note: str | None
    figure_match: str | None
    """The final outcome of figure-match on this reproduction (figure claims)."""
    figure_match_ai: str | None
    """The AI judge's own figure-match outcome (before human review and calibration)."""
    outcome: str
    upheld: str
    independent: bool | None
    """False for a copy (it adds no support); None where there is no consensus to say."""
    flags: list[str]
    """Every flag name of the claim (its own, its judgments', the side files')."""
    counted: bool | None = None
    """Its verdict counts toward the consensus (independent, full-scale, with a verdict)."""
    copy_of: list[str] = field(default_factory=list)
    """Claim keys of the reproductions it shares a figure or justification with."""
    values: list[dict[str, Any]] = field(default_factory=list)
    """Each reproduced value: name, reported, reproduced, z (modified z-score against the
    other reproductions; None: too few to compare), outlier."""
    consensus_flags: list[dict[str, str]] = field(default_factory=list)
    """The consensus stage's flags of this reproduction, with their details
    (contradicts_consensus, value_outlier, not_independent)."""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class SpreadView:
    """The spread of one reproduced value (a number claim's, or a table cell's)."""

    name: str
    reported: float | None
    n: int
    """Values of independent, full-scale reproductions: the reference of the z-scores."""
    median: float | None
    mad: float | None
    floor: float | None
    """The tolerance floor of the deviation, in the value's units."""
    minimum: float | None
    maximum: float | None
    outliers: list[str]


@dataclass
class ConsensusView:
    """The consensus of one registry claim and its reproductions."""

    claim_id: str
    registry: bool
    """Whether the consensus stage covers it (False: no statistics)."""
    verdict: str | None
    support: int
    agreement: float | None
    independent: int | None
    votes: dict[str, int]
    reason: str
    spread: list[SpreadView]
    rows: list[ConsensusRow]

    def as_dict(self) -> dict:
        return asdict(self)


def _number(value: float | None) -> str | None:
    return None if value is None else f"{value:g}"


def _values(record: ClaimRecord, side: str) -> str | None:
    if record.values:
        shown = [f"{v.get('name')}: {_number(v.get(side))}" for v in record.values
                 if v.get(side) is not None]
        return "; ".join(shown) or None
    return _number(record.reported_value if side == "reported" else record.reproduced_value)


def _row(record: ClaimRecord | None, reproduction: Reproduction | None) -> ConsensusRow:
    r = reproduction
    submission = record.submission_id if record is not None else r.claim.submission_id
    row = ConsensusRow(
        submission=submission, agent=record.agent if record else r.agent,
        reported=_values(record, "reported") if record else None,
        reproduced=_values(record, "reproduced") if record else None,
        verdict=record.verdict if record else (r.verdict.value if r.verdict else None),
        source_verdict=record.source_verdict if record else r.source_verdict,
        toy=record.toy if record else r.toy,
        scale_note=record.scale_note if record else r.scale_note,
        figure_match=record.figure_match_outcome() if record else None,
        figure_match_ai=record.figure_match_ai_outcome() if record else None,
        outcome=record.outcome if record else "pending",
        upheld=record.upheld if record else "pending",
        independent=r.independent if r else None,
        flags=list(record.flags) if record else sorted({f.name for f in r.flags}))
    if r is not None:
        row.counted = r.counted
        row.copy_of = [str(k) for k in r.copy_of]
        row.values = [v.model_dump(mode="json") for v in r.values]
        row.consensus_flags = [{"name": f.name, "detail": f.detail} for f in r.flags
                               if f.name in CONSENSUS_FLAGS]
    return row


def _spread(spread: ValueSpread) -> SpreadView:
    return SpreadView(name=spread.name, reported=spread.reported, n=spread.n,
                      median=spread.median, mad=spread.mad, floor=spread.floor,
                      minimum=spread.minimum, maximum=spread.maximum,
                      outliers=[str(k) for k in spread.outliers])


def _claim_consensus(data: AppData, claim_id: str) -> ClaimConsensus | None:
    return data.consensus.claim(claim_id) if data.consensus is not None else None


def consensus_view(data: AppData, claim_id: str) -> ConsensusView | None:
    """The consensus of registry claim `claim_id` with its reproductions (by claim key); None
    when no claim in `data` has that id."""
    records = sorted((r for r in data.claims.values() if r.claim_id == claim_id),
                     key=lambda r: r.key)
    consensus = _claim_consensus(data, claim_id)
    if consensus is None:
        if not records:
            return None
        if data.consensus is None:
            reason = "no consensus table in this dataset (published before it existed)"
        elif any(r.reference == "registry" for r in records):
            reason = "its consensus could not be read (see the notes at the top)"
        else:
            reason = ("not a registry claim (its reference is participant-supplied): consensus "
                      "covers the claims of the organizers' registry")
        return ConsensusView(claim_id=claim_id, registry=False, verdict=None, support=0,
                             agreement=None, independent=None, votes={}, reason=reason,
                             spread=[], rows=[_row(r, None) for r in records])
    by_key = {r.key: r for r in records}
    rows = [_row(by_key.pop(str(r.claim), None), r) for r in consensus.reproductions]
    # A claim with this id that the consensus does not cover (a participant-supplied reference
    # beside the registry's reproductions) is listed after them, without consensus columns.
    rows += [_row(r, None) for r in by_key.values()]
    return ConsensusView(
        claim_id=claim_id, registry=True, verdict=consensus.verdict, support=consensus.support,
        agreement=consensus.agreement, independent=consensus.independent,
        votes=dict(consensus.votes), reason=consensus.reason,
        spread=[_spread(s) for s in consensus.spread], rows=rows)


def consensus_rows(data: AppData, claim_id: str) -> list[ConsensusRow]:
    """Every reproduction of registry claim `claim_id` in `data` (the rows of
    `consensus_view`)."""
    view = consensus_view(data, claim_id)
    return view.rows if view is not None else []
