"""`judging calibrate RUN_DIR --retest N` through the fake OpenAI server over HTTP, scripted to
flip a known share of answers at random, to change its system_fingerprint, and to receive a
justification longer than the evidence budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.calibrate import calibrate_run, trusted_criteria
from judging.calibrate.artifacts import TrustOptions
from judging.calibrate.retest import read_retests, retest_criterion, retest_pairs, retest_run
from judging.cli import main
from judging.judges import LLMOptions
from judging.models import OWN_VERDICT, AnswerStatus, Label
from judging.rubrics import RubricLibrary
from judging.run.runner import RunRequest, run_judging
from judging.rundir import RunStore, drift_report, judgments_with_flags, read_drift
from judging.testing.fake_openai import FakeOpenAI
from tests.conftest import RUBRICS, SubmissionBuilder

JUDGE = "openai:fake-judge"
VERDICT = "verdict-justification@1.2.0"
N = 120


def _submission(root: Path, n: int = N, *, justification: str | None = None,
                submission_id: str = "team/p") -> Path:
    """n number claims, all 'verified' by the participant: the even ones reproduce the paper's
    value (within tolerance), the odd ones miss it by 10 points."""
    sub = SubmissionBuilder(root, submission_id, "p")
    for i in range(n):
        extra = {"justification": justification} if justification else {}
        sub.number_claim(f"p/c{i}", reported=80.0, reproduced=80.0 if i % 2 == 0 else 70.0,
                         statement=f"Claim {i}: accuracy is 80.0% on split {i}", **extra)
    return sub.write()


def _llm(fake: FakeOpenAI, tmp_path: Path, **extra) -> LLMOptions:
    return LLMOptions(base_url=fake.url, api_key="sk-test-not-a-secret", max_retries=1,
                      timeout=10.0, cache_dir=tmp_path / "cache", **extra)


def _run(tmp_path: Path, fake: FakeOpenAI, source: Path, name: str = "run", **llm) -> Path:
    out = tmp_path / name
    run_judging(RunRequest(sources=[str(source)], out=out, rubrics=[VERDICT], judges=[JUDGE],
                           concurrency=1, llm=_llm(fake, tmp_path, **llm), rubrics_dir=RUBRICS))
    return out


def _labels(run: Path, criterion: str) -> Path:
    """A reviewer's labels for `criterion` on every claim: the scripted judge's answer before
    any flip (verdict_consistent: yes within tolerance; own_verdict: verified / falsified)."""
    store = RunStore.open(run, create=False)
    labels = []
    for line in store.latest():
        if line.rubric is None or line.judge != JUDGE:
            continue
        within = line.claim.claim_id.endswith(tuple("02468"))
        value = within if criterion == "verdict_consistent" else \
            ("verified" if within else "falsified")
        labels.append(Label(claim=line.claim, rubric=line.rubric, criterion=criterion,
                            value=value, annotator="reviewer", annotator_id="r",
                            updated_at=line.provenance.timestamp, blind=True, dataset="d",
                            record_id=str(line.claim)))
    path = run / "labels.jsonl"
    path.write_text("".join(label.model_dump_json() + "\n" for label in labels))
    return path


def test_retest_measures_the_scripted_flip_rate(tmp_path: Path) -> None:
    p = 0.15
    with FakeOpenAI(flip_share=p, flip_seed=3) as fake:
        run = _run(tmp_path, fake, _submission(tmp_path / "sub"))
        before = (run / "judgments.jsonl").read_bytes()
        calls = fake.calls
        done = retest_run(run, N, llm=_llm(fake, tmp_path), seed=3, concurrency=1,
                          rubrics_dir=RUBRICS)
        # The answer cache was bypassed: every retest is a new call, with the very request.
        assert fake.calls == calls + N
    assert (done.drawn, done.written, done.different_request, done.failed) == (N, N, 0, 0)
    # The originals are untouched; the retests are beside them, marked as such.
    assert (run / "judgments.jsonl").read_bytes() == before
    retests = read_retests(RunStore.open(run, create=False))
    assert len(retests) == N and all(r.same_request for r in retests)
    assert {r.line.provenance.request_hash for r in retests} == \
        {r.original_request_hash for r in retests}

    rubric = RubricLibrary(RUBRICS).load(VERDICT)
    pairs = retest_pairs(RunStore.open(run, create=False), rubric, JUDGE)
    # yes/no: each answer flipped with probability p, so two answers differ with probability
    # 2p(1-p); half the claims are yes, so Krippendorff's alpha is 1 - p(1-p) / (1/2 * 1/2).
    yes_no = retest_criterion(rubric.criterion("verdict_consistent"),
                              pairs["verdict_consistent"], n_resamples=2000)
    assert yes_no.n == N
    expected = 2 * p * (1 - p)
    low, high = yes_no.agreement_interval
    assert low <= 1 - expected <= high, (yes_no.agreement, expected)
    alpha_low, alpha_high = yes_no.alpha_interval
    assert alpha_low <= 1 - p * (1 - p) / 0.25 <= alpha_high, yes_no.alpha
    assert set(yes_no.flips) <= {"yes -> no", "no -> yes"} and sum(yes_no.flips.values()) == \
        yes_no.disagreements
    # Four categories, a flip to one of the other three: differ with 2p(1-p) + p^2 * 2/3.
    own = retest_criterion(rubric.criterion(OWN_VERDICT), pairs[OWN_VERDICT], n_resamples=2000)
    expected = 2 * p * (1 - p) + p * p * 2 / 3
    low, high = own.agreement_interval
    assert low <= 1 - expected <= high, (own.agreement, expected)

    # Calibrated against a reviewer who gives the unflipped answers: agreement about 1 - p,
    # within the retest ceiling (1 + retest agreement) / 2; trust refused by the rubric's retest
    # alpha limit (0.8) although every other condition holds.
    labels = _labels(run, "verdict_consistent")
    lenient = TrustOptions(floor=0.5, tpr_floor=0.5, tnr_floor=0.5, bootstrap=500)
    (result,) = calibrate_run(run, labels_path=labels, out=tmp_path / "calibration",
                              options=lenient, rubrics_dir=RUBRICS)
    consistent = next(c for c in result.artifact.criteria if c.criterion == "verdict_consistent")
    assert consistent.retest is not None and consistent.retest.n == N
    assert consistent.accuracy <= consistent.retest.ceiling_interval[1]
    assert consistent.decision == "needs_humans"
    assert consistent.reasons == [f"retest alpha {consistent.retest.alpha:.3f} < 0.8 (the "
                                  f"rubric's limit)"]
    report = (result.report_dir / "report.md").read_text()
    assert "## The judge against itself (retest)" in report


def test_a_judge_that_agrees_with_itself_keeps_its_trust(tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        run = _run(tmp_path, fake, _submission(tmp_path / "sub", 60))
        result = CliRunner().invoke(main, [
            "calibrate", str(run), "--retest", "60", "--labels", str(_labels(run, OWN_VERDICT)),
            "--out", str(tmp_path / "calibration"), "--rubrics-dir", str(RUBRICS),
            "--bootstrap", "200"], env={"OPENAI_BASE_URL": fake.url,
                                        "OPENAI_API_KEY": "sk-test-not-a-secret",
                                        "JUDGING_CACHE_DIR": str(tmp_path / "cache")})
    assert result.exit_code == 0, result.output
    assert "re-judged 60" in result.output
    artifact = json.loads(next((tmp_path / "calibration" / "artifacts").rglob("*.json"))
                          .read_text())
    own = next(c for c in artifact["criteria"] if c["criterion"] == OWN_VERDICT)
    assert own["retest"]["agreement"] == 1.0 and own["retest"]["alpha"] == 1.0
    assert own["decision"] == "trusted", own["reasons"]


def test_a_fingerprint_change_mid_run_is_flagged_and_makes_trust_stale(tmp_path: Path) -> None:
    with FakeOpenAI(system_fingerprint="fp_a", provider="together") as fake:
        run = _run(tmp_path, fake, _submission(tmp_path / "sub", 60))
        labels = _labels(run, OWN_VERDICT)
        (result,) = calibrate_run(run, labels_path=labels, out=tmp_path / "calibration",
                                  options=TrustOptions(bootstrap=200), rubrics_dir=RUBRICS)
        assert result.artifact.served == ["fake-judge @ fp_a (x-inference-provider=together)"]
        own = next(c for c in result.artifact.criteria if c.criterion == OWN_VERDICT)
        assert own.decision == "trusted", own.reasons
        # The backend changes in the middle of the next run: after 20 more calls.
        count = fake.calls
        original = fake.policy

        def changing(request: dict) -> str:
            if fake.calls > count + 20:
                fake.system_fingerprint = "fp_b"
            return original(request)

        fake.policy = changing
        other = _run(tmp_path, fake, _submission(tmp_path / "sub2", 40, submission_id="team/q"),
                     name="later")
    store = RunStore.open(other, create=False)
    lines = store.latest()
    served = {line.provenance.served() for line in lines}
    assert served == {"fake-judge @ fp_a (x-inference-provider=together)",
                      "fake-judge @ fp_b (x-inference-provider=together)"}
    report = drift_report(store)
    assert len(report.changes) == 20 and report.served[JUDGE][1].startswith("fake-judge @ fp_b")
    # The run itself wrote drift.json: the change is flagged on the lines it served.
    assert read_drift(other) == report
    # `judging resolve` writes drift.json and says so; its flags are merged on read.
    result = CliRunner().invoke(main, ["resolve", str(other), "--calibration",
                                       str(tmp_path / "calibration"), "--rubrics-dir",
                                       str(RUBRICS)])
    assert result.exit_code == 0, result.output
    assert "drift: 20 line(s) were served by another model or build" in result.output
    flagged = [line for line in judgments_with_flags(other, lines)
               if any(f.name == "served_changed" for f in line.flags)]
    assert len(flagged) == 20
    # Trust holds for the lines served as calibrated, and is stale for the others.
    artifacts: dict = {}
    for line in lines:
        trusted, problem = trusted_criteria(tmp_path / "calibration", line, artifacts=artifacts)
        if "fp_b" in (line.provenance.served() or ""):
            assert trusted == set() and "the endpoint served another model or build" in problem
        else:
            assert OWN_VERDICT in trusted and problem is None


def test_a_justification_over_the_budget_is_cut_said_and_recorded(tmp_path: Path) -> None:
    long = "We ran the full schedule. " * 400 + "THE DECIDING TAIL: the numbers match."
    with FakeOpenAI() as fake:
        run = _run(tmp_path, fake, _submission(tmp_path / "sub", 2, justification=long),
                   evidence_budget=4000)
        sent = [r for r in fake.requests if "Claim 0" in json.dumps(r)]
    text = json.dumps(sent[0])
    # The model is told what was cut, and never sees the tail.
    assert "judging cut the justification to fit the judge's evidence budget" in text
    assert "THE DECIDING TAIL" not in text
    for line in RunStore.open(run, create=False).latest():
        if line.judge != JUDGE:
            continue
        cut = line.provenance.settings["evidence_cut"]
        assert cut.startswith("justification: ") and f"of {len(long)} characters shown" in cut
        # The verdict rubric reads the participant's text: its criteria are unscored.
        scored = [a for a in line.answers if a.status is AnswerStatus.scored]
        assert scored == []
        assert {a.reason for a in line.answers if a.status is AnswerStatus.unscored} == \
            {f"evidence truncated: {cut}"}


@pytest.mark.parametrize("budget", [None, 1_000_000])
def test_a_justification_that_fits_is_not_cut(tmp_path: Path, budget) -> None:
    with FakeOpenAI() as fake:
        run = _run(tmp_path, fake, _submission(tmp_path / "sub", 2), evidence_budget=budget)
    for line in RunStore.open(run, create=False).latest():
        if line.judge == JUDGE:
            assert "evidence_cut" not in line.provenance.settings
            assert any(a.status is AnswerStatus.scored for a in line.answers)
