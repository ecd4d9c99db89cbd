"""The offline judge on the bundled examples: answers that must pass, answers that must fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from judging.models import AnswerStatus, ConfidenceSource, Judgment, LineStatus, Outcome
from judging.rules import number_in_text
from judging.run.runner import RunRequest, run_judging
from tests.conftest import REGISTRY, SUBMISSIONS, SubmissionBuilder, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

FIG = "figure-match@1.0.0"
FIG11 = "figure-match@1.1.0"
VER = "verdict-justification@1.0.0"


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Judgment]:
    out = tmp_path_factory.mktemp("run") / "run"
    # 1.0.0 (pixel signals) and 1.1.0 (chart signals) side by side on the same claims.
    result = run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY,
                                    rubrics=["figure-match@1.0.0", FIG11,
                                             "verdict-justification@1.0.0"],
                                    measure_cache=module_measure_cache()))
    assert not result.failed
    from judging.rundir.store import RunStore
    lines = RunStore.open(out, create=False).latest()
    return {(f"{j.claim.submission_id}::{j.claim.claim_id}", str(j.rubric)): j for j in lines}


ALICE, BOB, CAROL = ("alice/repro-neurips26-4821", "bob/neurips26-4821-check",
                     "carol/iclr27-0137-repro")

# (submission, claim, rubric, criterion) -> expected answer ("yes"/"no"/"unscored"/"n/a").
# Each row says why it must be so, from how the example was built (examples/README.md).
EXPECTED = [
    # faithful restyle: same trend; not a copy
    (ALICE, "neurips26-4821/c1", FIG, "same_trend", "yes"),
    (ALICE, "neurips26-4821/c1", FIG, "independent_reproduction", "yes"),
    # log width axis bends the saturating curve into a straight line: trend differs
    (ALICE, "neurips26-4821/c2", FIG, "same_trend", "no"),
    # byte copy of the published figure
    (BOB, "neurips26-4821/c1", FIG, "independent_reproduction", "no"),
    # clearly different trend (rises then falls vs. saturates)
    (CAROL, "iclr27-0137/c1", FIG, "same_trend", "no"),
    (CAROL, "iclr27-0137/c5", FIG, "same_trend", "yes"),
    # criteria without offline rules stay unscored, never guessed
    (ALICE, "neurips26-4821/c1", FIG, "axes_and_scales", "unscored"),
    (ALICE, "neurips26-4821/c1", FIG, "overall_match", "unscored"),
    # numbers within tolerance, verified, value in the log
    (ALICE, "neurips26-4821/c3", VER, "verdict_consistent", "yes"),
    (ALICE, "neurips26-4821/c3", VER, "value_in_logs", "yes"),
    (ALICE, "neurips26-4821/c3", VER, "proof_for_falsified", "n/a"),
    (ALICE, "neurips26-4821/c3", VER, "scale_disclosed", "yes"),
    (ALICE, "neurips26-4821/c4", VER, "verdict_consistent", "yes"),
    (ALICE, "neurips26-4821/c4", VER, "value_in_logs", "yes"),
    # theorem, inconclusive: nothing numeric to check
    (ALICE, "neurips26-4821/c5", VER, "verdict_consistent", "unscored"),
    (ALICE, "neurips26-4821/c5", VER, "inconclusive_explains_blocker", "unscored"),
    (ALICE, "neurips26-4821/c5", VER, "value_in_logs", "n/a"),
    # outside tolerance, falsified with a proof script and a problem kind
    (BOB, "neurips26-4821/c3", VER, "verdict_consistent", "yes"),
    (BOB, "neurips26-4821/c3", VER, "proof_for_falsified", "yes"),
    (BOB, "neurips26-4821/c3", VER, "value_in_logs", "yes"),
    # outside tolerance, falsified without proof
    (CAROL, "iclr27-0137/c2", VER, "verdict_consistent", "yes"),
    (CAROL, "iclr27-0137/c2", VER, "proof_for_falsified", "no"),
    # verified within tolerance, but the log shows another value
    (CAROL, "iclr27-0137/c4", VER, "verdict_consistent", "yes"),
    (CAROL, "iclr27-0137/c4", VER, "value_in_logs", "no"),
    # falsified figure claim with a proof script
    (CAROL, "iclr27-0137/c1", VER, "proof_for_falsified", "yes"),
    (CAROL, "iclr27-0137/c1", VER, "verdict_consistent", "unscored"),
]


@pytest.mark.parametrize("submission, claim, rubric, criterion, expected", EXPECTED)
def test_offline_answers(example_run: dict, submission: str, claim: str, rubric: str,
                         criterion: str, expected: str) -> None:
    judgment = example_run[(f"{submission}::{claim}", rubric)]
    answer = judgment.answer(criterion)
    assert answer is not None
    if expected == "unscored":
        assert answer.status is AnswerStatus.unscored and answer.reason
        assert answer.value is None
    elif expected == "n/a":
        assert answer.status is AnswerStatus.not_applicable
    else:
        assert answer.status is AnswerStatus.scored, answer.reason
        assert answer.value is (expected == "yes"), answer.rationale
        assert answer.rationale
        assert answer.confidence_source in (ConfidenceSource.rule, ConfidenceSource.signal)
        assert 0.5 <= answer.confidence <= 1


@pytest.mark.parametrize("submission, claim, rubric, outcome", [
    (BOB, "neurips26-4821/c1", FIG, Outcome.failed),  # copy: gate
    (CAROL, "iclr27-0137/c2", VER, Outcome.failed),  # no proof: gate
    (CAROL, "iclr27-0137/c4", VER, Outcome.failed),  # value not in logs: gate
    (ALICE, "neurips26-4821/c1", FIG, Outcome.incomplete),  # needs an LLM or a human
    (ALICE, "neurips26-4821/c3", VER, Outcome.incomplete),  # justification quality unscored
])
def test_offline_outcomes(example_run: dict, submission: str, claim: str, rubric: str,
                          outcome: Outcome) -> None:
    judgment = example_run[(f"{submission}::{claim}", rubric)]
    assert judgment.aggregate.outcome is outcome
    assert judgment.provenance.judge == "offline"
    assert judgment.provenance.template_hash.startswith("sha256:")
    assert judgment.rubric.hash.startswith("sha256:")


def test_corrupt_figure_is_an_error_with_a_reason(example_run: dict) -> None:
    figure = example_run[(f"{CAROL}::iclr27-0137/c3", FIG)]
    assert figure.status is LineStatus.error
    assert "repro_fig3.png" in figure.reason and "corrupt" in figure.reason
    assert all(a.status is AnswerStatus.unscored for a in figure.answers)
    assert figure.signals["pixel.ssim"].status == "absent"
    # The claim's verdict is still judged: one bad file does not sink the claim.
    verdict = example_run[(f"{CAROL}::iclr27-0137/c3", VER)]
    assert verdict.status is LineStatus.scored


def test_flags_reach_the_judgments(example_run: dict) -> None:
    doctored = example_run[(f"{BOB}::neurips26-4821/c6", FIG)]
    assert "reference_mismatch" in {f.name for f in doctored.flags}
    copied = example_run[(f"{BOB}::neurips26-4821/c1", FIG)]
    assert "copy" in {f.name for f in copied.flags}
    outside = example_run[(f"{CAROL}::iclr27-0137/c5", FIG)]
    assert outside.reference == "participant-supplied"


def test_every_example_claim_is_judged(example_run: dict) -> None:
    claims = {key for key, _ in example_run}
    assert len(claims) == 14


@pytest.mark.parametrize("value, text, found", [
    (93.8, "final top1 93.80", True),
    (93.8, "final top1 93.79", True),   # rounds to 93.8
    (93.8, "final top1 93.7", False),
    (93.8, "top1=0.938", True),         # fraction form of a percentage
    (0.873, "acc 87.3%", True),
    (12.3, "final 13.9 and 123", False),
    (12.3, "step 12 loss 3.0", False),
    (1e-5, "lr 1e-05", True),
])
def test_number_in_text(value: float, text: str, found: bool) -> None:
    assert number_in_text(value, text) is found


def test_falsified_rule_checks_the_file(submission: SubmissionBuilder, tmp_path: Path) -> None:
    submission.number_claim("paper-1/c1", reproduced=91.0, verdict="falsified",
                            log="final top1 91.0\n",
                            evidence={"logs": ["logs/run.txt"], "proof_script": "proof.py",
                                      "problem_kind": "code-bug"})
    submission.file("logs/run.txt", "final top1 91.0\n")
    out = tmp_path / "run"
    run_judging(RunRequest(sources=[str(submission.write())], out=out))
    from judging.rundir.store import RunStore
    # the verdict rubric, and the falsification audit (a falsified claim)
    lines = {j.rubric.id: j for j in RunStore.open(out, create=False).latest()}
    assert set(lines) == {"verdict-justification", "falsification-audit"}
    answer = lines["verdict-justification"].answer("proof_for_falsified")
    assert answer.value is False and '"proof.py" not found' in answer.rationale
    audit = lines["falsification-audit"].answer("proof_script_present")
    assert audit.value is False and '"proof.py" not found' in audit.rationale
