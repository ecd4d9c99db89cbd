"""The consensus counts final verdicts (resolve: human, else trusted AI) where they exist, the
participants' own verdicts elsewhere, and says which it counted."""

from __future__ import annotations

from pathlib import Path

from judging.consensus import compute_consensus, is_current
from judging.models import OWN_VERDICT, ClaimKey
from judging.resolve.decide import resolve_run
from judging.rubrics import RubricLibrary
from tests.conftest import RUBRICS
from tests.consensus.test_rules import _run
from tests.constructed import _label


def test_final_verdicts_are_counted_where_they_exist(tmp_path: Path) -> None:
    # Five teams all say "verified"; three of them reproduced 60.0 against the paper's 80.0
    # (tolerance 0.5), and reviewers gave those three the final verdict "falsified".
    run = _run(tmp_path, [{"value": 60.0}, {"value": 60.2}, {"value": 59.8}, {"value": 80.0},
                          {"value": 80.1}])
    before = compute_consensus(run)
    (claim,) = before.claims
    assert (claim.verdict, claim.counted_from) == ("verified", {"participant": 5})
    assert "5 participant verdict(s)" in claim.reason
    rubric = RubricLibrary(RUBRICS).load("verdict-justification@1.2.0")
    labels = [_label(rubric, ClaimKey(submission_id=f"team{n}/p", claim_id="p/c"), OWN_VERDICT,
                     "falsified", annotator=who) for n in range(3) for who in ("h1", "h2")]
    with (run / "labels.jsonl").open("w") as handle:
        handle.writelines(label.model_dump_json() + "\n" for label in labels)
    _, finals = resolve_run(run, calibration_dir=tmp_path / "none", rubrics_dir=RUBRICS)
    assert sorted(f.final_verdict for f in finals) == ["falsified"] * 3 + ["pending"] * 2
    assert not is_current(run, before)  # a resolve changes what the consensus counts
    (claim,) = compute_consensus(run).claims
    assert claim.votes == {"falsified": 3, "verified": 2}
    assert claim.counted_from == {"final": 3, "participant": 2}
    assert claim.verdict == "falsified" and claim.support == 3
    assert "(counted: 3 final verdict(s), 2 participant verdict(s))" in claim.reason
    row = claim.reproduction("team0/p::p/c")
    assert (row.verdict.value, row.final_verdict, row.counted_verdict, row.counted_from) == \
        ("verified", "falsified", "falsified", "final")
    other = claim.reproduction("team3/p::p/c")
    assert (other.final_verdict, other.counted_verdict, other.counted_from) == \
        (None, "verified", "participant")
    # the verified ones now contradict the (final-verdict) consensus
    assert "contradicts_consensus" in [f.name for f in other.flags]
