"""Panels and sample sets: several judges, several samples, both figure orders → one answer per
criterion (majority for yes/no, lower median for ordinal levels), with the agreement and spread.
Which line speaks for the AI (a panel's first) is the run reader's rule: `rundir.speaking`."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence

from judging.models import (
    MAX_RATIONALE_CHARS,
    AnswerStatus,
    ConfidenceSource,
    CriterionAnswer,
    Flag,
    Judgment,
)
from judging.rubrics import Criterion, Rubric, Scale
from judging.rundir.speaking import PANEL_PREFIX

AGGREGATION = "majority (yes/no), lower median (ordinal); ties unscored"


def panel_name(members: Sequence[Judgment]) -> str:
    counts = Counter(m.judge for m in members)
    return PANEL_PREFIX + ", ".join(f"{judge}×{n}" for judge, n in sorted(counts.items())) + ")"


def _aggregate_criterion(criterion: Criterion, answers: list[CriterionAnswer]) -> CriterionAnswer:
    if answers and all(a.status is AnswerStatus.not_applicable for a in answers):
        return answers[0].model_copy()
    scored = [a for a in answers if a.status is AnswerStatus.scored and a.value is not None]
    if not scored:
        reasons = sorted({a.reason for a in answers if a.reason})
        return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.unscored,
                               reason="no member answered: " + ("; ".join(reasons)[:400] or "?"),
                               members=0)
    values = [a.value for a in scored]
    n = len(values)
    if criterion.scale is Scale.categorical:
        counts = Counter(map(str, values)).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            split = ", ".join(f"{v}: {k}" for v, k in counts)
            return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.unscored,
                                   reason=f"the members split evenly ({split})", members=n,
                                   agreement=round(counts[0][1] / n, 4),
                                   spread=round(1 - counts[0][1] / n, 4))
        value: bool | int | str = counts[0][0]
        agreeing = counts[0][1]
        spread = (n - agreeing) / n
    elif criterion.scale is Scale.binary:
        yes = sum(1 for v in values if v)
        if yes * 2 == n:
            return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.unscored,
                                   reason=f"the members split evenly ({yes} yes, {n - yes} no)",
                                   members=n, agreement=0.5, spread=0.5)
        value = yes * 2 > n
        agreeing = yes if value else n - yes
        spread = (n - agreeing) / n
    else:
        value = int(statistics.median_low(int(v) for v in values))
        agreeing = sum(1 for v in values if int(v) == value)
        spread = float(max(int(v) for v in values) - min(int(v) for v in values))
    example = next(a for a in scored if a.value == value)
    shown = ("yes" if value else "no") if isinstance(value, bool) else \
        value if isinstance(value, str) else f"level {value}"
    return CriterionAnswer(
        criterion_id=criterion.id, status=AnswerStatus.scored, value=value,
        passed=criterion.passes(value), quote=example.quote,
        rationale=f"{agreeing}/{n} scored members: {shown}. {example.rationale}"[:MAX_RATIONALE_CHARS],
        confidence=round(agreeing / n, 4), confidence_source=ConfidenceSource.sample_agreement,
        members=n, agreement=round(agreeing / n, 4), spread=round(spread, 4))


def aggregate_panel(rubric: Rubric, members: Sequence[Judgment]) -> tuple[list[CriterionAnswer],
                                                                           list[Flag]]:
    """One answer per criterion from the members' lines, and an order-consistency flag."""
    by_criterion: dict[str, list[CriterionAnswer]] = defaultdict(list)
    for member in members:
        for answer in member.answers:
            by_criterion[answer.criterion_id].append(answer)
    answers = [_aggregate_criterion(c, by_criterion.get(c.id, [])) for c in rubric.criteria]
    split = orders_disagree(members)
    answers = [_order_doubt(a, split[a.criterion_id]) if a.criterion_id in split else a
               for a in answers]
    return answers, order_consistency(members)


def orders_disagree(members: Sequence[Judgment]) -> dict[str, str]:
    """Criterion id -> the answers of a judge (and sample) that answered it otherwise when the
    figures were shown in the other order."""
    pairs: dict[tuple[str, int], dict[bool, Judgment]] = defaultdict(dict)
    for member in members:
        pairs[(member.judge, member.sample)][member.swapped] = member
    split: dict[str, str] = {}
    for (judge, sample), orders in sorted(pairs.items()):
        if len(orders) != 2:
            continue
        straight = {a.criterion_id: a.value for a in orders[False].answers
                    if a.status is AnswerStatus.scored}
        swapped = {a.criterion_id: a.value for a in orders[True].answers
                   if a.status is AnswerStatus.scored}
        for criterion in sorted(straight.keys() & swapped.keys()):
            if straight[criterion] != swapped[criterion]:
                split.setdefault(criterion, f"{judge} sample {sample}: published first "
                                            f"{straight[criterion]!r}, reproduced first "
                                            f"{swapped[criterion]!r}")
    return split


def _order_doubt(answer: CriterionAnswer, detail: str) -> CriterionAnswer:
    """A figure criterion whose answer changed with the order of the figures is in doubt: its
    answer leans on where a figure is shown, not on what it shows. Unscored, with the doubt."""
    if answer.status is AnswerStatus.not_applicable:
        return answer
    return CriterionAnswer(criterion_id=answer.criterion_id, status=AnswerStatus.unscored,
                           reason=f"the two figure orders disagree ({detail}); a human should "
                                  f"look", members=answer.members, agreement=answer.agreement,
                           spread=answer.spread)


def order_consistency(members: Sequence[Judgment]) -> list[Flag]:
    """Flag criteria whose answer changed when the same judge saw the figures in swapped order."""
    pairs: dict[tuple[str, int], dict[bool, Judgment]] = defaultdict(dict)
    for member in members:
        pairs[(member.judge, member.sample)][member.swapped] = member
    changed: list[str] = []
    compared = 0
    for (judge, sample), orders in sorted(pairs.items()):
        if len(orders) != 2:
            continue
        compared += 1
        straight = {a.criterion_id: a.value for a in orders[False].answers
                    if a.status is AnswerStatus.scored}
        swapped = {a.criterion_id: a.value for a in orders[True].answers
                   if a.status is AnswerStatus.scored}
        differing = sorted(c for c in straight.keys() & swapped.keys()
                           if straight[c] != swapped[c])
        if differing:
            changed.append(f"{judge} sample {sample}: {', '.join(differing)}")
    if not changed:
        return []
    return [Flag(name="order_inconsistent",
                 detail="answers changed when the figures were shown in the other order ("
                        + "; ".join(changed) + ")")]
