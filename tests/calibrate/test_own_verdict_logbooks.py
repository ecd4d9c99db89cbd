"""The judge's own verdict on REAL logbooks (the developers' set, read in place from
../shared/datasets/trackio-logbooks: public logbooks without a licence, used as fixtures and never
copied), judged through the fake OpenAI server over HTTP, calibrated against the set's hand-made
labels (the participant's verdict read by a person: verified / falsified / inconclusive, toy
when the participant calls the evidence toy), and set beside a reference the test writes in the
ICML verdicts.json shape with `judging compare`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from judging.calibrate import calibrate_run
from judging.calibrate.artifacts import TrustOptions
from judging.calibrate.reference import LABELS, claim_number, compare_reference
from judging.cli import main
from judging.judges import LLMOptions
from judging.models import OWN_VERDICT, AnswerStatus, Label
from judging.run.runner import RunRequest, run_judging
from judging.rundir import RunStore
from judging.testing.fake_openai import FakeOpenAI
from tests.conftest import ROOT, RUBRICS

SETS = [ROOT.parent / "shared" / "datasets", Path("/work/shared/datasets")]
LOGBOOKS = next((s / "trackio-logbooks" for s in SETS if (s / "trackio-logbooks").is_dir()), None)
pytestmark = pytest.mark.skipif(LOGBOOKS is None, reason="the trackio-logbooks dev set is absent")
JUDGE = "openai:fake-judge"


def _hand_labels() -> dict[tuple[str, int], str]:
    """(logbook folder, claim number) -> the hand-made own verdict."""
    found = {}
    for line in (LOGBOOKS / "labels.jsonl").read_text().splitlines():  # type: ignore[operator]
        row = json.loads(line)
        label = "toy" if row["toy"] else row["verdict_3way"]
        if label is not None and row["claim_index"] is not None:
            found[(row["logbook"], int(row["claim_index"]))] = label
    return found


@pytest.fixture(scope="module")
def judged(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("logbooks")
    folders = sorted(p for p in LOGBOOKS.iterdir() if p.is_dir())  # type: ignore[union-attr]
    with FakeOpenAI() as fake:
        run_judging(RunRequest(
            sources=[str(p) for p in folders], out=base / "run", rubrics=[
                "verdict-justification@1.2.0"], judges=[JUDGE], concurrency=4,
            llm=LLMOptions(base_url=fake.url, api_key="sk-test-not-a-secret",
                           cache_dir=base / "cache", max_retries=1), rubrics_dir=RUBRICS))
        calls, requests = fake.calls, fake.requests
    store = RunStore.open(base / "run", create=False)
    return {"base": base, "run": base / "run", "store": store, "calls": calls,
            "requests": requests,
            "claims": {str(c.key): c for c in store.iter_claims()}, "folders": folders}


def _meta() -> dict[str, dict]:
    """The dev set's logbooks.jsonl, by folder."""
    rows = [json.loads(x) for x in (LOGBOOKS / "logbooks.jsonl").read_text().splitlines()]  # type: ignore[operator]
    return {row["folder"]: row for row in rows}


def _folder(claim) -> str | None:
    """The dev-set folder a run claim was read from: its submission id is the logbook's space
    id, or the folder's name when the logbook names none."""
    for folder, row in _meta().items():
        if claim.key.submission_id in (row["space_id"], folder):
            return folder
    return None


def test_the_own_verdict_is_judged_with_a_quote(judged) -> None:
    lines = [j for j in judged["store"].latest() if j.judge == JUDGE]
    assert judged["calls"] == len(lines) >= 40
    answers = [j.answer(OWN_VERDICT) for j in lines]
    scored = [a for a in answers if a is not None and a.status is AnswerStatus.scored]
    assert len(scored) == len(lines)  # the scripted judge always answers, quoting the statement
    assert all(a.value in LABELS and a.quote for a in scored)
    for line in lines:
        # the quote is a passage of the claim's own statement, as shown to the judge
        answer = line.answer(OWN_VERDICT)
        statement = " ".join(judged["claims"][str(line.claim)].claim.statement.split())
        assert " ".join(answer.quote.split()) in statement


def test_the_sonar_claim_gets_its_own_verdict_on_its_whole_text(judged) -> None:
    # gopaljigaur--sonar-icml-repro claim 1: the page says "This claim is left unverified at the
    # numeric level". Whatever the participant's verdict was read as, the judge is asked for its
    # own verdict on the whole justification, and told of any cut (there is none here).
    (key,) = [k for k, c in judged["claims"].items()
              if _folder(c) == "gopaljigaur--sonar-icml-repro" and claim_number(c) == 1]
    (sent,) = [r for r in judged["requests"] if key in json.dumps(r)]
    text = "\n".join(part.get("text", "") for m in sent["messages"] if m["role"] == "user"
                     for part in m["content"])
    assert "### own_verdict (categorical" in text
    assert "left unverified at the numeric level" in text
    assert "(a working `job.write`-scoped token + normal Hub bandwidth)" in text  # the tail
    assert "judging cut the justification" not in text
    (line,) = [j for j in judged["store"].latest() if str(j.claim) == key and j.judge == JUDGE]
    own = line.answer(OWN_VERDICT)
    assert own.status is AnswerStatus.scored and own.value == "inconclusive"  # no numbers
    assert "evidence_cut" not in line.provenance.settings


def test_calibrated_against_the_hand_made_labels(judged) -> None:
    hand = _hand_labels()
    labels, pairs = [], []
    for line in judged["store"].latest():
        if line.judge != JUDGE or line.rubric is None:
            continue
        claim = judged["claims"][str(line.claim)]
        folder = _folder(claim)
        number = claim_number(claim)
        gold = hand.get((folder, number)) if folder and number is not None else None
        if gold is None:
            continue
        labels.append(Label(claim=line.claim, rubric=line.rubric, criterion=OWN_VERDICT,
                            value=gold, annotator="dev-set", annotator_id="dev-set",
                            updated_at=line.provenance.timestamp, blind=True, dataset="dev",
                            record_id=str(line.claim)))
        pairs.append((gold, line.answer(OWN_VERDICT).value))
    assert len(pairs) >= 30
    path = judged["base"] / "labels.jsonl"
    path.write_text("".join(label.model_dump_json() + "\n" for label in labels))
    (result,) = calibrate_run(judged["run"], labels_path=path, out=judged["base"] / "cal",
                              options=TrustOptions(bootstrap=300), rubrics_dir=RUBRICS)
    own = next(c for c in result.artifact.criteria if c.criterion == OWN_VERDICT)
    gold, ours = zip(*pairs)
    assert own.confusion_labels == LABELS and own.support == len(pairs)
    assert own.confusion == confusion_matrix(gold, ours, labels=LABELS).tolist()
    assert own.kappa == pytest.approx(cohen_kappa_score(gold, ours, labels=LABELS))
    # The scripted judge reads numbers, not prose: far from the people, never trusted.
    assert own.decision == "needs_humans"
    assert own.baseline is not None and own.accuracy is not None


def test_compare_with_a_reference_in_the_icml_shape(judged, tmp_path: Path) -> None:
    hand = _hand_labels()
    meta = _meta()
    records = []
    for folder in judged["folders"]:
        numbered = sorted((n, label) for (f, n), label in hand.items() if f == folder.name)
        if not numbered or [n for n, _ in numbered] != list(range(1, len(numbered) + 1)):
            continue  # the ICML shape numbers claims by position: only gap-free logbooks
        space = meta[folder.name]["space_id"] or folder.name.replace("--", "/", 1)
        records.append({"space_id": space, "sha": "0" * 40,
                        "claims": [{"claim": f"claim {n}", "verdict": label}
                                   for n, label in numbered]})
    reference = tmp_path / "verdicts.json"
    reference.write_text(json.dumps(records))
    result = compare_reference(judged["run"], reference)
    assert result.matched and result.sources == {"ai": len(result.matched)}
    assert all(m.how == "index" for m in result.matched)  # "claim N" names no statement
    gold = [m.reference for m in result.matched]
    ours = [m.ours for m in result.matched]
    assert result.metrics.accuracy == pytest.approx(sum(g == o for g, o in zip(gold, ours))
                                                    / len(gold))
    assert result.metrics.kappa == pytest.approx(cohen_kappa_score(gold, ours, labels=LABELS))
    assert result.reference_claims == sum(len(r["claims"]) for r in records)
    assert len(result.matched) + len(result.unmatched_reference) == result.reference_claims
    cli = CliRunner().invoke(main, ["compare", str(judged["run"]), "--reference",
                                    str(reference), "--out", str(tmp_path / "cal")])
    assert cli.exit_code == 0, cli.output
    # the agreement and kappa come with their 95% intervals (or "too few to say"), not bare
    shown = result.intervals.show(result.metrics.accuracy, "accuracy")
    assert result.intervals.n == len(result.matched)
    assert shown.replace(" ", "") in cli.output.replace(" ", "").replace("\n", "") or \
        shown.split(" [")[0] in cli.output and "agreement [95%]" in " ".join(cli.output.split())
    report = (tmp_path / "cal" / "reports" / "table" / "compare-verdicts" / "report.md")
    text = report.read_text()
    assert f"| {shown} |" in text
    assert "## Confusion (rows: reference, columns: ours)" in text
    assert "↳ chance" in text
