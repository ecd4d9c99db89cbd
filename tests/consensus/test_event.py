"""Acceptance: a generated event (4 registry claims x 5 submissions, tests/consensus/event.py)
with one value outlier, one verified-against-falsified contradiction, one copied figure and one
false falsification. `judging consensus` flags exactly those, review priorities rise for them
(planned and as the records pushed to the real Argilla server carry them), the consensus
verdicts and supports are right, and the leaderboard, the report and `publish` (to a Hub
stand-in on 127.0.0.1) carry the consensus table."""

from __future__ import annotations

import csv
import json
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

from judging.cli import main
from judging.consensus import compute_consensus, is_current, load_consensus
from judging.models import ConsensusReport
from judging.review.dataset import record_id
from judging.review.push import PushOptions, connect, plan_records, push_run
from judging.rubrics import RubricLibrary
from judging.rundir import RunStore, flags_by_claim, read_consensus
from tests.conftest import RUBRICS
from tests.consensus.event import (
    C1,
    C2,
    C3,
    C4,
    CONTRADICTION,
    COPIED,
    COPY,
    FALSE_FALSIFICATION,
    OUTLIER,
    TRACEBACK_LOG,
    write_event,
)
from tests.fakehub import patch_hub
from tests.publish.test_publish import HF_TOKEN, REPO, MiniHub

EXPECTED_FLAGS = {OUTLIER: ["value_outlier"], CONTRADICTION: ["contradicts_consensus"],
                  COPY: ["not_independent"], FALSE_FALSIFICATION: ["contradicts_consensus"]}


def _priorities(run: Path, calibration: Path) -> dict[tuple[str, str], tuple[float, list[str]]]:
    store = RunStore.open(run, create=False)
    _, records, _ = plan_records(store, RubricLibrary(RUBRICS),
                                 PushOptions(blind_share=0.0, calibration_dir=calibration))
    return {(r.claim_key, r.dataset): (r.priority.value, r.priority.reasons) for r in records}


@pytest.fixture(scope="module")
def event(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from judging.run.runner import RunRequest, run_judging

    base = tmp_path_factory.mktemp("consensus")
    registry, folders = write_event(base)
    run = base / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUDGING_CACHE_DIR", str(base / "cache"))
        for name in ("JUDGING_JUDGE", "OPENAI_BASE_URL", "OPENAI_API_KEY", "JUDGING_RUBRICS_DIR"):
            mp.delenv(name, raising=False)
        run_judging(RunRequest(sources=[str(f) for f in folders], out=run, registry=registry))
    calibration = base / "no-calibration"
    # `judging run` ends by writing the consensus side file; without it, the priorities are
    # those of the judgments alone.
    written_by_run = read_consensus(run)
    (run / "consensus.json").unlink()
    before = _priorities(run, calibration)
    judgments = (run / "judgments.jsonl").read_bytes()
    result = CliRunner().invoke(main, ["consensus", str(run)])
    assert result.exit_code == 0, result.output
    assert read_consensus(run).model_copy(update={"computed_at": None}) == \
        written_by_run.model_copy(update={"computed_at": None})  # the same consensus
    return {"base": base, "run": run, "calibration": calibration, "before": before,
            "after": _priorities(run, calibration), "judgments": judgments,
            "output": result.output}


def test_the_event_is_what_it_says(event) -> None:
    claims = RunStore.open(event["run"], create=False).claims()
    assert len(claims) == 20 and {c.reference.value for c in claims.values()} == {"registry"}
    assert all(not c.flags for c in claims.values())  # no doctored reference anywhere
    false = claims[FALSE_FALSIFICATION]
    log = false.evidence_paths["logs[0]"].read_text()
    assert log == TRACEBACK_LOG and log.rstrip().splitlines()[-1].startswith("ZeroDivisionError")
    assert false.claim.evidence.proof_script == "proof_c4.py"


def test_consensus_flags_exactly_those(event) -> None:
    report = read_consensus(event["run"])
    assert report is not None and report.schema_ == "judging.consensus/1"
    flagged = {key: sorted(f.name for f in flags) for key, flags in report.flags().items()}
    assert flagged == EXPECTED_FLAGS
    # Merged on read with the integrity side file's flags; judgment lines are never rewritten.
    merged = flags_by_claim(event["run"])
    assert {f.name for f in merged[COPY]} == {"duplicate_figure", "not_independent"}
    assert {f.name for f in merged[COPIED]} == {"duplicate_figure"}
    assert (event["run"] / "judgments.jsonl").read_bytes() == event["judgments"]
    for key in EXPECTED_FLAGS:
        assert key in " ".join(event["output"].split())
    assert report.agrees(FALSE_FALSIFICATION) is False and report.agrees(COPIED) is True
    assert report.agrees("nobody::paper-9/c9") is None
    (detail,) = [f.detail for f in report.flags()[FALSE_FALSIFICATION]]
    assert detail.startswith("falsified against a verified consensus (4 of 5")


def test_consensus_verdicts_supports_and_spread(event) -> None:
    report = read_consensus(event["run"])
    got = {c.claim_id: (c.verdict, c.support, c.independent, len(c.reproductions), c.agreement)
           for c in report.claims}
    assert got == {C1: ("verified", 5, 5, 5, 1.0), C2: ("falsified", 4, 5, 5, 0.8),
                   C3: ("verified", 4, 4, 5, 1.0), C4: ("verified", 4, 5, 5, 0.8)}
    c1 = report.claim(C1)
    (spread,) = c1.spread
    assert (spread.n, spread.median, spread.mad, spread.floor) == (5, 80.1, pytest.approx(0.1),
                                                                   0.5)
    assert [str(k) for k in spread.outliers] == [OUTLIER]
    z = {str(r.claim): r.values[0].z for r in c1.reproductions}
    assert z[OUTLIER] == pytest.approx(0.6745 * (86.0 - 80.1) / 0.5, abs=1e-3)
    assert all(abs(v) < 3.5 for k, v in z.items() if k != OUTLIER)
    c3 = report.claim(C3)
    copy, original = c3.reproduction(COPY), c3.reproduction(COPIED)
    assert (copy.independent, copy.counted, original.independent, original.counted) == (
        False, False, True, True)
    assert [str(k) for k in copy.copy_of] == [COPIED]
    # Side by side: values, verdicts, scale, figure-match outcomes, agent.
    row = report.claim(C2).reproduction(CONTRADICTION)
    assert row.verdict.value == "verified" and row.agent == "agent-5 (some-model)"
    assert row.outcomes["figure-match@1.4.0"] in ("pass", "fail", "incomplete")
    assert row.toy is False and row.values == []
    # The dashboard's entry point gives the same table, from the side file while it is current.
    assert is_current(event["run"], report)
    assert load_consensus(event["run"]) == report


def test_review_priorities_rise_for_the_flagged_claims(event) -> None:
    before, after = event["before"], event["after"]
    assert set(before) == set(after)
    for (key, dataset), (value, reasons) in after.items():
        old_value, old_reasons = before[(key, dataset)]
        if key in EXPECTED_FLAGS:
            assert value > old_value, (key, dataset, old_value, value)
            assert EXPECTED_FLAGS[key][0] in reasons
        else:
            assert (value, reasons) == (old_value, old_reasons), key


def test_pushed_records_carry_the_raised_priority(event, argilla) -> None:
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    push_run(event["run"], client=client, rubrics_dir=RUBRICS,
             options=PushOptions(workspace=workspace, blind_share=0.0,
                                 calibration_dir=event["calibration"]))
    dataset = client.datasets(name="verdict-justification-1.2.0", workspace=workspace)
    records = {str(r.id): r for r in dataset.records()}
    for key in [*EXPECTED_FLAGS, COPIED]:
        record = records[record_id(key, "verdict-justification", "1.2.0")]
        value, reasons = event["after"][(key, "verdict-justification-1.2.0")]
        assert record.metadata["priority"] == pytest.approx(value)
        assert sorted(record.metadata["priority_reasons"]) == sorted(reasons)
        if key in EXPECTED_FLAGS:
            assert EXPECTED_FLAGS[key][0] in record.metadata["flags"]
            assert EXPECTED_FLAGS[key][0] in record.fields["claim"]  # shown to the reviewer
    assert "not_independent" not in records[record_id(COPIED, "verdict-justification",
                                                      "1.2.0")].metadata["flags"]


def test_report_and_leaderboard_show_the_consensus(event) -> None:
    run = event["run"]
    assert CliRunner().invoke(main, ["report", str(run)]).exit_code == 0
    page = (run / "report.html").read_text()
    assert "Consensus per registry claim" in page
    for name in ("value_outlier", "contradicts_consensus", "not_independent"):
        assert name in page
    from judging.resolve import resolve_run

    resolve_run(run, calibration_dir=event["calibration"], rubrics_dir=RUBRICS)
    result = CliRunner().invoke(main, ["leaderboard", str(run)])
    assert result.exit_code == 0, result.output
    rows = {r["registry_claim"]: r for r in csv.DictReader(
        (run / "leaderboard_consensus.csv").open(encoding="utf-8"))}
    assert {k: (r["consensus"], r["support"], r["contradicting"], r["value_outliers"])
            for k, r in rows.items()} == {C1: ("verified", "5", "0", "1"),
                                          C2: ("falsified", "4", "1", "0"),
                                          C3: ("verified", "4", "0", "0"),
                                          C4: ("verified", "4", "1", "0")}
    assert "median 80.1, MAD 0.1, 79.9..86 (n=5)" in rows[C1]["spread"]
    assert "Consensus per registry claim" in (run / "leaderboard.html").read_text()


def test_publish_writes_the_consensus_table(event, monkeypatch, tmp_path) -> None:
    run = event["run"]
    if not (run / "final.jsonl").is_file():
        from judging.resolve import resolve_run

        resolve_run(run, calibration_dir=event["calibration"], rubrics_dir=RUBRICS)
    with MiniHub() as hub:
        patch_hub(monkeypatch, hub.url, tmp_path / "hf", token=HF_TOKEN)
        out = tmp_path / "stage"
        result = CliRunner().invoke(main, ["publish", str(run), "--repo", REPO, "--calibration",
                                           str(event["calibration"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert {"data/consensus.parquet", "data/consensus.jsonl", "README.md"} <= set(hub.files)
    table = pq.read_table(out / "data" / "consensus.parquet").to_pylist()
    assert table == [json.loads(line) for line in
                     hub.files["data/consensus.jsonl"].decode().splitlines()]
    got = {r["claim_id"]: (r["consensus"], r["support"], r["independent"], r["contradicting"],
                           r["value_outliers"], r["not_independent"]) for r in table}
    assert got == {C1: ("verified", 5, 5, [], [OUTLIER], []),
                   C2: ("falsified", 4, 5, [CONTRADICTION], [], []),
                   C3: ("verified", 4, 4, [], [], [COPY]),
                   C4: ("verified", 4, 5, [FALSE_FALSIFICATION], [], [])}
    side_by_side = json.loads(next(r for r in table if r["claim_id"] == C1)["rows"])
    assert [r["values"][0]["reproduced"] for r in side_by_side] == [80.1, 79.9, 80.2, 80.0, 86.0]
    assert json.loads(next(r for r in table if r["claim_id"] == C1)["spread"])[0]["median"] == 80.1
    card = hub.files["README.md"].decode()
    front = yaml.safe_load(card.split("---\n")[1])
    assert "consensus" in {c["config_name"] for c in front["configs"]}
    assert "### Consensus per registry claim" in card
    assert f"| {C2} | 5 | 5 | 1 / 4 / 0 | falsified | 4 | 1 | 0 |" in card


def test_a_later_run_makes_the_stored_consensus_stale(event, tmp_path) -> None:
    report = read_consensus(event["run"])
    changed = report.model_copy(update={"inputs_hash": "sha256:" + "0" * 64})
    assert not is_current(event["run"], changed)
    # The side file round-trips through its versioned model, also without a schema field.
    raw = json.loads(report.model_dump_json())
    del raw["schema"]
    assert ConsensusReport.from_file(json.dumps(raw)) == report
    assert compute_consensus(event["run"]).claims == report.claims


def test_the_falsification_audit_reads_the_consensus_of_the_others(event) -> None:
    """`judging run` judges the falsification audit after the other lines, on their consensus:
    the false falsification (against a verified consensus, its proof a traceback) fails "it was
    run" and is answered "no" on "the other reproductions agree"; the falsifications of C2, a
    falsified consensus, are answered "yes"; the fact is on the line as the signal."""
    store = RunStore.open(event["run"], create=False)
    audits = {str(j.claim): j for j in store.latest()
              if j.rubric is not None and j.rubric.id == "falsification-audit"}
    assert FALSE_FALSIFICATION in audits
    answers = {a.criterion_id: a for a in audits[FALSE_FALSIFICATION].answers}
    assert answers["reproductions_agree"].value is False, answers["reproductions_agree"]
    assert answers["proof_was_run"].value is False
    assert audits[FALSE_FALSIFICATION].signals["consensus.agrees"].value is False
    falsified_c2 = [key for key in audits if key.endswith(f"::{C2}")]
    assert falsified_c2
    for key in falsified_c2:
        agree = {a.criterion_id: a for a in audits[key].answers}["reproductions_agree"]
        assert agree.value is True, (key, agree)
