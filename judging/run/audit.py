"""The consensus fact of the second pass: rubrics that read `consensus.agrees` (the falsification
audit's "the other reproductions agree") are judged after every other line of the run, on the
consensus of a registry claim's reproductions as those lines make it (`judging consensus`)."""

from __future__ import annotations

from judging.consensus import compute_consensus
from judging.models import ClaimInput, ConsensusReport, Signal, SignalStatus
from judging.rubrics import Rubric
from judging.rules import CONSENSUS_AGREES
from judging.rundir import RunStore


def reads_consensus(rubric: Rubric) -> bool:
    """Whether a rubric's offline answers read `consensus.agrees` (the falsification audit's
    "the other reproductions agree"): it is judged after the consensus of the others."""
    return any(c.offline is not None and (c.offline.rule == "consensus_agrees"
                                          or c.offline.signal == CONSENSUS_AGREES)
               for c in rubric.criteria)


class ConsensusFacts:
    """`consensus.agrees` per claim, from the consensus computed once when the second pass
    meets the first claim an audit rubric applies to (a run without one reads no lines)."""

    def __init__(self, store: RunStore):
        self.store = store
        self.report: ConsensusReport | None = None
        self.due = False
        """The second pass has begun and the consensus is not computed yet."""
        self.reproductions: dict[str, list[str]] | None = None
        """The registry claims' reproductions, from the run's one read of its claims."""

    def begin_second_pass(self, reproductions: dict[str, list[str]] | None = None) -> None:
        self.due = True
        self.reproductions = reproductions

    def read_judged(self) -> None:
        """The consensus of the lines already judged (`--estimate`: as a run would see it
        after its first pass; new claims may still change it)."""
        self.report = compute_consensus(self.store.root)

    def fact(self, claim: ClaimInput) -> Signal:
        """Whether the claim's verdict is its registry claim's consensus verdict, absent with
        the reason when there is none."""
        if self.due:
            # No line is written between the first pass and this: the same consensus as one
            # computed when the second pass began.
            self.report = compute_consensus(self.store.root, store=self.store,
                                            reproductions=self.reproductions)
            self.due = False
        report = self.report
        found = report.of(claim.key) if report is not None else None
        if found is None:
            return Signal(status=SignalStatus.absent,
                          reason="not a registry claim with reproductions judged in this run")
        consensus, _ = found
        agrees = report.agrees(claim.key)
        if agrees is None:
            return Signal(status=SignalStatus.absent,
                          reason=f"no consensus verdict for {consensus.claim_id}: "
                                 f"{consensus.reason}")
        return Signal(value=agrees, reason=f"consensus of {consensus.claim_id}: "
                                           f"{consensus.verdict} (support {consensus.support})")
