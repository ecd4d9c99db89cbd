"""What a run's pending work would cost (`judging run --estimate`), per judge, without calling
any endpoint: each request is built exactly as it would be sent, so that answers already in the
cache are not counted."""

from __future__ import annotations

from collections.abc import Iterable

from judging.judges import JudgeTask
from judging.run.inflight import InFlight
from judging.run.lines import WorkItem
from judging.run.request import Estimate
from judging.run.reruns import RerunFacts


async def estimate_items(items: Iterable[WorkItem], *, inflight: InFlight, reruns: RerunFacts
                         ) -> dict[str, Estimate]:
    """One row per judge spec: the calls it would send, those the cache answers, and the work
    that needs no endpoint (the offline judge, figures that cannot be read)."""
    rows: dict[str, Estimate] = {}
    for item in items:
        row = rows.setdefault(item.judge.spec, Estimate(judge=item.judge.spec))
        if item.judge.model is None:  # the offline judge: no endpoint
            row.local += 1
            continue
        measurement = await inflight.measure(item.claim)
        if item.rubric.applies_to == "figure" and measurement.figure_error:
            row.local += 1
            continue
        call = item.judge.estimate(JudgeTask(
            claim=item.claim, rubric=item.rubric,
            signals=reruns.with_facts(item.rubric, item.claim, measurement.signals),
            images=measurement.images, sample=item.sample, swapped=item.swapped))
        if call is not None:
            row.add(call)
    return rows
