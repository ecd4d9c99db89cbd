"""falsification-audit 1.0.0 end to end (issue 16, part 2): the offline answers on the bundled
examples through `judging run`, an LLM judge's answers through the fake server (parsed, stored,
pushed to the real Argilla server, reviewed, pulled and calibrated like any rubric's), and the
review priority of falsified claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.calibrate import TrustOptions, calibrate_run
from judging.cli import main
from judging.judges import LLMOptions
from judging.models import AnswerStatus, ConfidenceSource, Judgment, Signal
from judging.review.dataset import PRIORITY_WEIGHTS, record_id
from judging.review.pull import pull_run, read_labels
from judging.review.push import PushOptions, connect, plan_records, push_run
from judging.rubrics import RubricLibrary
from judging.run.runner import RunRequest, run_judging
from judging.rundir.store import RunStore
from judging.testing.fake_openai import FakeOpenAI, answer_json, default_policy
from tests.conftest import EXAMPLES, REGISTRY, RUBRICS, SUBMISSIONS, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

AUDIT = "falsification-audit"
BOB_C3 = "bob/neurips26-4821-check::neurips26-4821/c3"
CAROL_C1 = "carol/iclr27-0137-repro::iclr27-0137/c1"
CAROL_C2 = "carol/iclr27-0137-repro::iclr27-0137/c2"
OFFLINE = ("proof_script_present", "proof_was_run", "problem_kind_given")
LEFT_TO_PEOPLE = ("proof_shows_problem", "claim_stated_correctly")


def _audits(run: Path) -> dict[str, Judgment]:
    return {str(j.claim): j for j in RunStore.open(run, create=False).latest()
            if j.rubric is not None and j.rubric.id == AUDIT and not j.judge.startswith("panel")}


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit") / "run"
    result = CliRunner().invoke(main, [
        "run", str(SUBMISSIONS), str(EXAMPLES / "logbooks"), "--claims", str(REGISTRY),
        "--judge", "offline", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_the_rubric_is_published_and_applies_to_falsified_claims_only(offline_run: Path) -> None:
    library = RubricLibrary(RUBRICS)
    rubric = library.load(f"{AUDIT}@1.0.0")
    assert library.lock[f"{AUDIT}@1.0.0"] == rubric.content_hash()
    assert rubric in library.defaults()
    # every falsified claim of the examples, and no other claim, has an audit line
    store = RunStore.open(offline_run, create=False)
    falsified = {key for key, claim in store.claims().items()
                 if claim.claim.verdict is not None and claim.claim.verdict.value == "falsified"}
    assert falsified == {BOB_C3, CAROL_C1, CAROL_C2}
    assert set(_audits(offline_run)) == falsified


@pytest.mark.parametrize("claim", [BOB_C3, CAROL_C1])
def test_a_falsification_with_a_run_proof_passes_the_offline_criteria(offline_run: Path,
                                                                      claim: str) -> None:
    line = _audits(offline_run)[claim]
    answers = {a.criterion_id: a for a in line.answers}
    for criterion in OFFLINE:
        assert answers[criterion].status is AnswerStatus.scored, answers[criterion].reason
        assert answers[criterion].value is True, answers[criterion].rationale
    proof = "proof_c3.py" if claim == BOB_C3 else "proof_c1.py"
    assert f'"$ python {proof}"' in answers["proof_was_run"].rationale
    assert ("code-bug" if claim == BOB_C3 else "paper-error") in \
        answers["problem_kind_given"].rationale
    # what the offline judge cannot read is left to an LLM or a person, with the reason
    for criterion in LEFT_TO_PEOPLE:
        assert answers[criterion].status is AnswerStatus.unscored
        assert "needs an LLM or a human" in answers[criterion].reason
    assert answers["reproductions_agree"].status is AnswerStatus.unscored
    assert answers["reproductions_agree"].reason.startswith("no consensus available")
    assert line.aggregate.outcome.value == "incomplete" and not line.aggregate.failed_gates


def test_a_falsification_without_proof_fails(offline_run: Path) -> None:
    line = _audits(offline_run)[CAROL_C2]
    answers = {a.criterion_id: a for a in line.answers}
    # No proof script: "no" on its presence (a gate: the audit fails) and on the problem kind;
    # whether it was run is not asked of a script that does not exist (no answer, not "no").
    assert [answers[c].value for c in OFFLINE] == [False, None, False]
    assert answers["proof_script_present"].rationale == "no proof_script is named"
    assert "no proof_script is named" in answers["proof_was_run"].reason
    assert line.aggregate.outcome.value == "fail"
    assert set(line.aggregate.failed_gates) == {"proof_script_present", "problem_kind_given"}


def test_the_verdict_rubric_is_unchanged_beside_the_audit(offline_run: Path) -> None:
    verdicts = {str(j.claim): j for j in RunStore.open(offline_run, create=False).latest()
                if j.rubric is not None and j.rubric.id == "verdict-justification"}
    proof = {key: verdicts[key].answer("proof_for_falsified").value
             for key in (BOB_C3, CAROL_C1, CAROL_C2)}
    assert proof == {BOB_C3: True, CAROL_C1: True, CAROL_C2: False}


def test_falsifications_are_reviewed_first_unless_audit_and_consensus_support_them(
        offline_run: Path) -> None:
    store = RunStore.open(offline_run, create=False)
    _, records, _ = plan_records(store, RubricLibrary(RUBRICS), PushOptions(blind_share=0))
    by_claim: dict[str, list] = {}
    for planned in records:
        by_claim.setdefault(planned.claim_key, []).append(planned.priority)
    for key in (BOB_C3, CAROL_C1, CAROL_C2):
        assert len(by_claim[key]) == 3 if key == CAROL_C1 else 2  # carol c1 is a figure claim
        for priority in by_claim[key]:
            assert "falsification_unconfirmed" in priority.reasons
            assert priority.value >= PRIORITY_WEIGHTS["falsification_unconfirmed"]
    verified = [p for key, ps in by_claim.items() if key not in (BOB_C3, CAROL_C1, CAROL_C2)
                for p in ps]
    assert verified and all("falsification_unconfirmed" not in p.reasons for p in verified)


def test_a_passing_audit_with_a_supporting_consensus_waits_its_turn() -> None:
    from judging.models import Aggregate, ClaimKey, LineStatus, Outcome, Provenance, Verdict
    from judging.review.dataset import falsification_supported, review_priority

    def line(outcome: Outcome, agrees: bool | None) -> Judgment:
        signals = {} if agrees is None else {"consensus.agrees": Signal(value=agrees)}
        return Judgment(
            run_id="r", claim=ClaimKey(submission_id="s/x", claim_id="p/c1"), rubric=None,
            judge="j", input_hash="h", status=LineStatus.scored, verdict=Verdict.falsified,
            aggregate=Aggregate(score=1.0, coverage=1.0, outcome=outcome), signals=signals,
            provenance=Provenance(judge="j", model="j", template_hash="t",
                                  timestamp="2026-12-01T00:00:00Z", code_version="t"))

    supported = line(Outcome.passed, True)
    assert falsification_supported(supported)
    for unsupported in (line(Outcome.passed, None), line(Outcome.passed, False),
                        line(Outcome.incomplete, True), line(Outcome.failed, True), None):
        assert not falsification_supported(unsupported)
    waits = review_priority([supported], falsification_supported=True)
    first = review_priority([supported], falsification_supported=False)
    assert waits.reasons == ["falsified"] and first.reasons == ["falsification_unconfirmed"]
    assert first.value > PRIORITY_WEIGHTS["copy"] > waits.value


# --- an LLM judge through the fake server, then Argilla -----------------------------------------

#: What the scripted LLM answers on the audit, per claim (the other rubrics get the default).
SCRIPTED = {
    BOB_C3: {"proof_script_present": "yes", "proof_was_run": "yes", "problem_kind_given": "yes",
             "proof_shows_problem": "yes", "reproductions_agree": "cannot_tell",
             "claim_stated_correctly": "yes"},
    CAROL_C1: {"proof_script_present": "yes", "proof_was_run": "yes",
               "problem_kind_given": "yes", "proof_shows_problem": "yes",
               "reproductions_agree": "cannot_tell", "claim_stated_correctly": "no"},
    CAROL_C2: {"proof_script_present": "no", "proof_was_run": "no", "problem_kind_given": "no",
               "proof_shows_problem": "no", "reproductions_agree": "cannot_tell",
               "claim_stated_correctly": "yes"},
}


def _policy(request: dict) -> str:
    text = json.dumps(request)
    if "proof_shows_problem" not in text:
        return default_policy(request)
    claim = next(key for key in SCRIPTED if f"claim key: {key}" in text)
    return answer_json(SCRIPTED[claim], confidence=0.85, rationale=f"Audit of {claim}.")


def test_llm_audit_answers_are_stored_pushed_reviewed_and_calibrated(argilla, tmp_path: Path
                                                                     ) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(_policy) as fake:
        result = run_judging(RunRequest(
            sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY,
            judges=["openai:fake-judge"], measure_cache=module_measure_cache(),
            llm=LLMOptions(base_url=fake.url, api_key="sk-test-not-a-secret", max_retries=0,
                           timeout=10.0)))
        requests = [r for r in fake.requests if "proof_shows_problem" in json.dumps(r)]
    assert not result.failed
    assert len(requests) == 3
    # the judge read the proof script and its run's output
    bob = next(json.dumps(r) for r in requests if f"claim key: {BOB_C3}" in json.dumps(r))
    assert "1893 also in the training subset" in bob
    assert "released_split(n=50000, seed=SEED)" in bob

    audits = _audits(out)
    assert set(audits) == {BOB_C3, CAROL_C1, CAROL_C2}
    for key, line in audits.items():
        assert line.judge == "openai:fake-judge" and line.provenance.model == "fake-judge"
        for answer in line.answers:
            wanted = SCRIPTED[key][answer.criterion_id]
            if wanted == "cannot_tell":
                assert answer.status is AnswerStatus.unscored
                assert answer.reason.startswith("the judge could not tell")
            else:
                assert answer.status is AnswerStatus.scored
                assert answer.value is (wanted == "yes")
                assert answer.confidence == 0.85
                assert answer.confidence_source is ConfidenceSource.self_reported
    assert audits[CAROL_C1].aggregate.failed_gates == ["claim_stated_correctly"]
    assert audits[BOB_C3].aggregate.outcome.value == "incomplete"

    client = connect(argilla.url, argilla.api_key)
    workspace = "ws-audit"
    pushed = push_run(out, client=client, options=PushOptions(workspace=workspace,
                                                              blind_share=0.0))
    assert pushed.records[f"{AUDIT}-1.0.0"] == 3
    dataset = client.datasets(name=f"{AUDIT}-1.0.0", workspace=workspace)
    assert [q.name for q in dataset.settings.questions] == [
        *SCRIPTED[BOB_C3], "overall_verdict", "note"]
    assert "claims with verdict falsified" in dataset.settings.guidelines
    records = {str(r.id): r for r in dataset.records(with_suggestions=True)}
    bob_record = records[record_id(BOB_C3, AUDIT, "1.0.0")]
    suggestions = {s.question_name: s for s in bob_record.suggestions}
    assert suggestions["proof_shows_problem"].value == "yes"
    assert suggestions["proof_shows_problem"].agent == "openai:fake-judge"
    assert suggestions["proof_shows_problem"].score == pytest.approx(0.85)
    assert "reproductions_agree" not in suggestions  # unscored: no suggestion
    assert bob_record.metadata["verdict"] == "falsified"
    # reviewers read what the proof printed, and the script (a field of the audit datasets only)
    assert "proof" in [f.name for f in dataset.settings.fields]
    assert "proof" not in [f.name for f in client.datasets(
        name="verdict-justification-1.2.0", workspace=workspace).settings.fields]
    proof = bob_record.fields["proof"]
    assert "=== log logs/proof_c3.txt (ran to its end) ===" in proof
    assert "1893 also in the training subset" in proof and "released_split(n=50000" in proof
    assert "no cited log shows a run" in records[record_id(CAROL_C2, AUDIT, "1.0.0")].fields[
        "proof"]
    assert "falsification_unconfirmed" in bob_record.metadata["priority_reasons"]
    assert bob_record.metadata["priority"] >= PRIORITY_WEIGHTS["falsification_unconfirmed"]

    # a reviewer answers; the labels come back and calibrate the judge on this rubric
    reviewer = argilla.create_user(workspaces=[workspace])
    with argilla.http(reviewer.api_key) as http:
        for key, record in records.items():
            values = {"proof_shows_problem": "yes" if key != record_id(
                CAROL_C2, AUDIT, "1.0.0") else "no", "overall_verdict": "fail"}
            response = http.post(f"/api/v1/records/{record._server_id}/responses",
                                 json={"values": {k: {"value": v} for k, v in values.items()},
                                       "status": "submitted"})
            assert response.status_code in (200, 201), response.text
    pulled = pull_run(out, client=client, workspace=workspace)
    labels = [label for label in read_labels(out / "labels.jsonl") if label.rubric.id == AUDIT]
    assert {(str(label.claim), label.criterion, label.value) for label in labels
            if label.criterion == "proof_shows_problem"} == {
        (BOB_C3, "proof_shows_problem", True), (CAROL_C1, "proof_shows_problem", True),
        (CAROL_C2, "proof_shows_problem", False)}
    assert pulled.responses["submitted"] >= 3
    results = calibrate_run(out, out=tmp_path / "calibration", rubrics_dir=RUBRICS,
                            options=TrustOptions(include_anchored=True, bootstrap=100))
    audit = next(r for r in results if r.artifact.rubric.id == AUDIT)
    criterion = next(c for c in audit.artifact.criteria if c.criterion == "proof_shows_problem")
    assert criterion.support == 3 and criterion.accuracy == 1.0
    assert criterion.decision != "trusted"  # three labels trust nothing
    assert (audit.report_dir / "report.json").is_file()
