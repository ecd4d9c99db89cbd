"""The one reader of a judged run: per claim, its newest lines and, per rubric version it was
judged under, the line that speaks for the AI.

Every stage that needs "the AI's line for a claim" reads it here: resolve (the decisions, the
leaderboard's intervals), review push (the suggestions and the priority), calibrate (our
verdicts against a reference), consensus (the AI's outcome per reproduction) and the dashboard.
The report and the leaderboard show resolve's decisions, which name the judge of the line that
spoke (`RubricDecision.ai_judge`). No other module ranks judges: `tests/test_structure.py` fails
on a second chooser.

The rule (the product's, as the panel was built for it): a panel's line, else an LLM judge's
(a line that names a model), else the offline judge's; among those, a scored line before an
unscored or failed one; a tie goes to the line first in the run's file order (the order
`RunStore.latest_by_claim` gives), so the choice does not depend on how a caller sorts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator
from typing import NamedTuple

from judging.models import ChartTrace, Judgment, LineStatus
from judging.rundir.store import RunStore

#: A panel's judge name starts with it (`panel(offline×1, openai:gpt-4.1×2)`, see
#: `judges.panel.panel_name`).
PANEL_PREFIX = "panel("


def is_panel(judge: str) -> bool:
    """Whether a judge name is a panel's (the aggregate of several judges' or samples' lines)."""
    return judge.startswith(PANEL_PREFIX)


def _rank(line: Judgment) -> tuple[int, int]:
    kind = 2 if is_panel(line.judge) else 1 if line.provenance.model else 0
    return kind, 1 if line.status is LineStatus.scored else 0


def choose_judgment(lines: Iterable[Judgment]) -> Judgment | None:
    """The line that speaks for the AI among one (claim, rubric version)'s lines, by the rule
    above (`max` keeps the first of equals: file order breaks ties); None when no line names a
    rubric."""
    usable = [line for line in lines if line.rubric is not None]
    return max(usable, key=_rank) if usable else None


def claim_chart_trace(lines: Iterable[Judgment]) -> ChartTrace | None:
    """One claim's chart reading trace, from its lines: the figure rubric's lines carry it
    (`Rubric.reads_chart`), every line in runs written before issue 43; all are of the claim's
    one measurement, so the first found. None for a claim without one (not a figure claim, or
    measured without the chart reader)."""
    return next((line.chart_trace for line in lines if line.chart_trace is not None), None)


class Spoken(NamedTuple):
    """One rubric version of one claim: the line that speaks for the AI, and the version's
    lines (the panel's members beside it)."""

    line: Judgment
    group: list[Judgment]


def speaking_lines(lines: Iterable[Judgment]) -> Iterator[Spoken]:
    """Of one claim's newest lines (in file order), per rubric version it was judged under (in
    `id@version` order): the line that speaks for the AI and the version's lines. Lines that
    name no rubric (a claim that failed to load) speak for none."""
    groups: dict[str, list[Judgment]] = defaultdict(list)
    for line in lines:
        if line.rubric is not None:
            groups[str(line.rubric)].append(line)
    for _, group in sorted(groups.items()):
        chosen = choose_judgment(group)
        if chosen is not None:
            yield Spoken(chosen, group)


class JudgedClaim(NamedTuple):
    """One claim of a judged run: its key, its newest lines (file order) and what speaks."""

    key: str
    lines: list[Judgment]
    speaking: list[Spoken]


def judged_claims(store: RunStore, keys: Collection[str] | None = None
                  ) -> Iterator[JudgedClaim]:
    """Every claim of the run (of `keys` only, when given), sorted by claim key, one claim's
    lines in memory at a time."""
    for key, lines in store.latest_by_claim(keys):
        yield JudgedClaim(key, lines, list(speaking_lines(lines)))
