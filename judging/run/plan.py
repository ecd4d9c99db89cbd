"""The work of a run: a work item per (claim, rubric, judge, sample, figure order) that applies,
with its input hash (everything the line depends on: the claim's fingerprint with its files'
contents, the rubric's content, the judge and the settings that change an answer, the template,
the measuring options, and for an audit rubric the consensus it reads). A rerun skips an item
whose line with this input hash is written; the hashes must stay byte for byte what they were,
or a resume re-judges finished work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from judging.hashing import content_hash
from judging.judges import Judge
from judging.models import ClaimInput, Signal
from judging.rubrics import Rubric
from judging.run.audit import reads_consensus
from judging.run.lines import WorkItem, claim_fingerprint, samples_for
from judging.run.reruns import reads_rerun


@dataclass(frozen=True)
class Plan:
    """How a run's claims become work items."""

    judges: list[Judge]
    samples: int
    """Answers per LLM judge and claim (the offline judge is deterministic: always 1)."""
    swap: bool
    """LLM judges see figure claims in both figure orders (RunRequest.swap)."""
    measure_settings: dict[str, int | str | bool]
    consensus_fact: Callable[[ClaimInput], Signal]
    """`consensus.agrees` of a claim, for the rubrics that read it (`audit`)."""
    rerun_facts: Callable[[ClaimInput], dict[str, Signal]] | None = None
    """The `rerun.*` signals of a claim, for the rubrics that read them (`reruns`)."""

    def items(self, claims: list[ClaimInput], rubrics: list[Rubric]) -> list[WorkItem]:
        items = []
        for claim in claims:
            # Made when a rubric applies (it hashes the claim's files): the second pass of the
            # audit rubrics meets every claim of the run and applies to few.
            fingerprint = None
            for rubric in rubrics:
                if not rubric.applies_to_input(claim):
                    continue
                if fingerprint is None:
                    fingerprint = claim_fingerprint(claim)
                for judge in self.judges:
                    items += self._judge_items(claim, rubric, judge, fingerprint)
        return items

    def _judge_items(self, claim: ClaimInput, rubric: Rubric, judge: Judge,
                     fingerprint: dict[str, object]) -> list[WorkItem]:
        orders = [False, True] if (self.swap and judge.model is not None
                                   and rubric.applies_to == "figure") else [False]
        items = []
        for sample in range(samples_for(judge, self.samples)):
            for swapped in orders:
                inputs = {
                    "claim": fingerprint, "rubric": rubric.content_hash(),
                    "judge": judge.spec, "settings": judge.answer_settings,
                    "template": judge.template_hash(rubric), "sample": sample,
                    "swapped": swapped, "measure": self.measure_settings}
                if reads_rerun(rubric) and self.rerun_facts is not None:
                    # A claim re-run again with another result is judged again; the others
                    # resume.
                    inputs["rerun"] = {name: signal.model_dump(mode="json") for name, signal
                                       in sorted(self.rerun_facts(claim).items())}
                if reads_consensus(rubric):
                    # A consensus that changes (more reproductions judged) is a new input: the
                    # audit is judged again.
                    inputs["consensus"] = self.consensus_fact(claim).model_dump(mode="json")
                items.append(WorkItem(claim, rubric, judge, sample, swapped,
                                      content_hash(inputs)))
        return items
