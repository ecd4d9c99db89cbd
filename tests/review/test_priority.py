"""What raises a claim's review priority: a logbook page that contradicts itself, an identical
re-render."""

from __future__ import annotations

from datetime import UTC, datetime

from judging.models import ClaimKey, Judgment, LineStatus, Provenance
from judging.review.dataset import PRIORITY_WEIGHTS, review_priority


def line() -> Judgment:
    return Judgment(run_id="r", claim=ClaimKey(submission_id="s/x", claim_id="p/c1"),
                    rubric=None, judge="j", input_hash="h", status=LineStatus.scored,
                    provenance=Provenance(judge="j", model="j", template_hash="t",
                                          timestamp=datetime.now(UTC), code_version="t"))


def test_self_contradiction_raises_the_review_priority() -> None:
    plain = review_priority([line()])
    flagged = review_priority([line()], claim_flags=["self_contradiction", "toy"])
    assert flagged.reasons == ["self_contradiction"]
    assert flagged.value == PRIORITY_WEIGHTS["self_contradiction"] > plain.value
    assert PRIORITY_WEIGHTS["self_contradiction"] > PRIORITY_WEIGHTS["falsified"]


def test_an_identical_rerender_is_reviewed_as_early_as_a_copy() -> None:
    from judging.models import Flag

    def flagged(name: str) -> Judgment:
        return line().model_copy(update={"flags": [Flag(name=name, detail="d")]})

    rerender = review_priority([flagged("identical_rerender")])
    assert rerender.reasons == ["identical_rerender"]
    assert rerender.value == review_priority([flagged("copy")]).value == PRIORITY_WEIGHTS["copy"]
