"""Write the construction labels of the bundled examples (calibration/sets/examples/labels.jsonl).

Each label states what a criterion's answer must be *by construction* of an example pair (see
examples/README.md): e.g. a byte copy is not an independent reproduction, a log-scaled width axis
is another scale type. Only criteria that the construction settles are labelled. These are
construction labels, not human labels: `source` says so on every line.

    .venv/bin/python calibration/sets/examples/build.py
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from judging.models import ClaimKey, Label  # noqa: E402
from judging.review.dataset import record_id  # noqa: E402
from judging.rubrics import RubricLibrary  # noqa: E402

ALICE, BOB, CAROL = ("alice/repro-neurips26-4821", "bob/neurips26-4821-check",
                     "carol/iclr27-0137-repro")
FIGURE, VERDICT = "figure-match@1.0.0", "verdict-justification@1.0.0"
AUDIT = "falsification-audit@1.0.0"
WHEN = datetime(2026, 11, 29, tzinfo=UTC)
ANNOTATOR = "construction:examples/generate.py"

# (submission, claim, rubric) -> {criterion: answer}, with the reason from examples/README.md.
CONSTRUCTION: dict[tuple[str, str, str], dict[str, bool | int]] = {
    # 1. faithful reproduction in another style: same data, same axes
    (ALICE, "neurips26-4821/c1", FIGURE): {
        "same_trend": True, "axes_and_scales": 5, "same_series": True,
        "values_within_tolerance": True, "no_misleading_cropping": True,
        "independent_reproduction": True, "overall_match": 5},
    (ALICE, "neurips26-4821/c1", VERDICT): {"verdict_consistent": True, "cites_evidence": True,
                                            "scale_disclosed": True},
    # 2. the width axis is logarithmic where the paper's is linear
    (ALICE, "neurips26-4821/c2", FIGURE): {
        "axes_and_scales": 2, "same_series": True, "independent_reproduction": True,
        "overall_match": 2},
    # 3. 93.8 vs 94.1 within ±0.5, "final top1 93.80" in the cited log
    (ALICE, "neurips26-4821/c3", VERDICT): {"verdict_consistent": True, "value_in_logs": True,
                                            "cites_evidence": True, "scale_disclosed": True},
    # 4. three table cells within 2%, all in the cited log
    (ALICE, "neurips26-4821/c4", VERDICT): {"verdict_consistent": True, "value_in_logs": True,
                                            "cites_evidence": True},
    # 5. inconclusive theorem: names the unstated assumption and the 3-of-5-seeds check
    (ALICE, "neurips26-4821/c5", VERDICT): {"verdict_consistent": True,
                                            "inconclusive_explains_blocker": True,
                                            "scale_disclosed": True},
    # 6. a byte copy of the published figure
    (BOB, "neurips26-4821/c1", FIGURE): {"independent_reproduction": False},
    # 7. one of the three series is missing
    (BOB, "neurips26-4821/c2", FIGURE): {"same_series": False, "axes_and_scales": 5,
                                         "independent_reproduction": True, "overall_match": 2},
    # 8. 91.2 vs 94.1 outside ±0.5, falsified with a proof script and a problem kind
    (BOB, "neurips26-4821/c3", VERDICT): {"verdict_consistent": True,
                                          "proof_for_falsified": True, "value_in_logs": True,
                                          "cites_evidence": True},
    # ... and its proof holds up: proof_c3.py is present, logs/proof_c3.txt shows its run, whose
    # output counts the 1893 overlapping images and recovers 94.06 on the leaky split
    (BOB, "neurips26-4821/c3", AUDIT): {"proof_script_present": True, "proof_was_run": True,
                                        "problem_kind_given": True,
                                        "proof_shows_problem": True},
    # 9. matches a doctored copy: against the registry's figure the spike is lower and later
    (BOB, "neurips26-4821/c6", FIGURE): {"values_within_tolerance": False,
                                         "independent_reproduction": True},
    # 10. rises then falls where the paper saturates; falsified with proof
    (CAROL, "iclr27-0137/c1", FIGURE): {"same_trend": False, "independent_reproduction": True,
                                        "overall_match": 1},
    (CAROL, "iclr27-0137/c1", VERDICT): {"verdict_consistent": True,
                                         "proof_for_falsified": True},
    # logs/proof_c1.txt shows proof_c1.py's run: non-monotonic under alpha/r, saturating under
    # alpha/sqrt(r), the paper-error stated
    (CAROL, "iclr27-0137/c1", AUDIT): {"proof_script_present": True, "proof_was_run": True,
                                       "problem_kind_given": True, "proof_shows_problem": True},
    # 11. outside tolerance, falsified without a proof script or problem kind
    (CAROL, "iclr27-0137/c2", VERDICT): {"verdict_consistent": True,
                                         "proof_for_falsified": False, "value_in_logs": True},
    (CAROL, "iclr27-0137/c2", AUDIT): {"proof_script_present": False, "proof_was_run": False,
                                       "problem_kind_given": False},
    # 13. the cited log ends at 13.90, not the claimed 12.3: the evidence contradicts "verified"
    (CAROL, "iclr27-0137/c4", VERDICT): {"verdict_consistent": False, "value_in_logs": False},
    # 14. faithful restyle of a figure outside the registry
    (CAROL, "iclr27-0137/c5", FIGURE): {
        "same_trend": True, "axes_and_scales": 5, "same_series": True,
        "values_within_tolerance": True, "no_misleading_cropping": True,
        "independent_reproduction": True, "overall_match": 5},
}


def main() -> None:
    library = RubricLibrary(ROOT / "rubrics")
    lines = []
    # figure-match 1.1.0 to 1.4.0 ask the same questions as 1.0.0 (1.1.0 changed the offline
    # rules, 1.2.0 made overall_match a gate, 1.3.0 abstains before failing, 1.4.0 answers only on
    # confirmed evidence): the construction answers hold for all five.
    items = [(s, c, r, a) for (s, c, r), a in CONSTRUCTION.items()]
    items += [(s, c, later, a) for later in ("figure-match@1.1.0", "figure-match@1.2.0",
                                             "figure-match@1.3.0", "figure-match@1.4.0")
              for (s, c, r), a in CONSTRUCTION.items() if r == FIGURE]
    # verdict-justification 1.1.0 asks 1.0.0's questions, plus rerun_reproduces (which reads a
    # re-run, not the construction): the same answers hold. 1.2.0 (the default) asks 1.1.0's
    # questions, plus own_verdict (the judge's own verdict from the evidence: whether a run was
    # at the paper's scale or a toy is a judgement call the construction does not settle, so it
    # is left out): the same answers hold.
    items += [(s, c, later, a)
              for later in ("verdict-justification@1.1.0", "verdict-justification@1.2.0")
              for (s, c, r), a in CONSTRUCTION.items() if r == VERDICT]
    for submission, claim, ref, answers in items:
        rubric = library.load(ref)
        key = ClaimKey(submission_id=submission, claim_id=claim)
        for criterion, value in answers.items():
            rubric.criterion(criterion)  # fails loudly on a typo
            lines.append(Label(
                claim=key, rubric=rubric.ref(), criterion=criterion, value=value,
                annotator=ANNOTATOR, annotator_id=ANNOTATOR, updated_at=WHEN, blind=True,
                dataset="examples-construction",
                record_id=record_id(str(key), rubric.id, rubric.version),
                source="construction"))
    out = Path(__file__).with_name("labels.jsonl")
    out.write_text("".join(json.dumps(json.loads(label.model_dump_json()), sort_keys=True)
                           + "\n" for label in lines), encoding="utf-8")
    print(f"wrote {len(lines)} construction labels to {out}")


if __name__ == "__main__":
    main()
