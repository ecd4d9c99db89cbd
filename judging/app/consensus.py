"""The consensus panel of the claim view: every reproduction of one registry claim side by side.

`consensus_rows(data, claim_id)` is the one function the dashboard (and its API) asks. Today it
is computed from the judgment lines and claims the app already holds (no statistics, no
consensus verdict); when `judging consensus` writes its side file, this function is where to read
it instead (the rows keep their shape, the consensus verdict joins them).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from judging.app.data import AppData, ClaimRecord

#: Flags that say a reproduction is not independent evidence (a copy adds no support).
NOT_INDEPENDENT = frozenset({"copy", "duplicate_figure", "copied_justification",
                             "identical_rerender"})


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
    independent: bool
    flags: list[str]

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


def consensus_rows(data: AppData, claim_id: str) -> list[ConsensusRow]:
    """Every reproduction of registry claim `claim_id` in `data`, by submission."""
    rows = []
    for record in sorted(data.claims.values(), key=lambda r: r.submission_id):
        if record.claim_id != claim_id:
            continue
        rows.append(ConsensusRow(
            submission=record.submission_id, agent=record.agent,
            reported=_values(record, "reported"), reproduced=_values(record, "reproduced"),
            verdict=record.verdict, source_verdict=record.source_verdict, toy=record.toy,
            scale_note=record.scale_note, figure_match=record.figure_match_outcome(),
            figure_match_ai=record.figure_match_ai_outcome(),
            outcome=record.outcome, upheld=record.upheld,
            independent=not (set(record.flags) & NOT_INDEPENDENT), flags=list(record.flags)))
    return rows
