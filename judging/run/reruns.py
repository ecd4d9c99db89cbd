"""The re-run facts: rubrics that read `judging rerun`'s results (verdict-justification 1.1.0's
`rerun_reproduces`) get each claim's newest re-run as the `rerun.*` signals, recorded on the
line, and in the line's input hash, so that a claim re-run with another result is judged again
and the others resume."""

from __future__ import annotations

from judging.models import ClaimInput, RerunRecord, Signal, rerun_signals
from judging.rubrics import Rubric
from judging.rundir import RunStore, read_reruns


def reads_rerun(rubric: Rubric) -> bool:
    """Whether a rubric's offline answers read the re-run's facts."""
    return any(c.offline is not None and (c.offline.rule == "rerun_reproduces" or (
        c.offline.signal or "").startswith("rerun.")) for c in rubric.criteria)


class RerunFacts:
    """The `rerun.*` signals of a claim, from reruns.jsonl (read once per run)."""

    def __init__(self, store: RunStore):
        self.store = store
        self._records: dict[str, RerunRecord] | None = None

    def facts(self, claim: ClaimInput) -> dict[str, Signal]:
        if self._records is None:
            self._records = read_reruns(self.store.root)
        return rerun_signals(self._records.get(str(claim.key)))

    def with_facts(self, rubric: Rubric, claim: ClaimInput, signals: dict[str, Signal]
                   ) -> dict[str, Signal]:
        """`signals`, plus the claim's re-run facts when the rubric reads them."""
        return {**signals, **self.facts(claim)} if reads_rerun(rubric) else signals
