"""Claim outcomes, "upheld", and the leaderboard (judging.resolve.leaderboard) built from them."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from judging.cli import main
from judging.resolve.decide import resolve_run
from judging.resolve.leaderboard import write_leaderboard
from judging.rundir.store import read_jsonl
from tests.conftest import RUBRICS
from tests.constructed import _claims, _judgment, _label, _run


def test_outcomes_upheld_and_leaderboard(tmp_path: Path, verdict_rubric) -> None:
    claims = _claims(5)
    full = {"verdict_consistent": True, "scale_disclosed": True, "cites_evidence": True,
            "value_in_logs": True, "justification_quality": 4}
    judgments, labels = [], []
    for i, claim in enumerate(claims):
        judgments.append(_judgment(verdict_rubric, claim, {}))
        answers = dict(full)
        if i == 1:
            answers["value_in_logs"] = False  # a failed gate
        if i == 4:
            del answers["justification_quality"]  # nobody answered it: pending
        labels += [_label(verdict_rubric, claim, cid, v) for cid, v in answers.items()]
    run = _run(tmp_path, judgments, labels)
    _, finals = resolve_run(run, calibration_dir=tmp_path / "none", rubrics_dir=RUBRICS)
    by_id = {f.claim.claim_id: f for f in finals}
    assert [by_id[f"p/c{i}"].outcome for i in range(5)] == ["pass", "fail", "pass", "pass",
                                                          "pending"]
    assert [by_id[f"p/c{i}"].upheld for i in range(5)] == ["yes", "no", "yes", "yes", "pending"]
    assert by_id["p/c0"].decided_by == ["humans"]
    paths = write_leaderboard(run)
    import csv
    rows = list(csv.DictReader(paths[0].open()))
    tally = {row["submission"]: row for row in rows}
    # claims 0..4 are in submissions s0..s4 (one each)
    assert tally["s1"]["failed"] == "1" and tally["s4"]["pending"] == "1"
    assert sum(int(r["passed"]) for r in rows) == 3
    papers = list(csv.DictReader(paths[1].open()))
    assert papers == [{"paper": "p", "submissions": "5", "claims": "5", "passed": "3",
                       "failed": "1", "not_addressed": "0", "pending": "1", "incomplete": "0",
                       "upheld": "3", "pass_rate": "0.75"}]
    html = paths[2].read_text()
    assert "<h2>Submissions</h2>" in html and "s4" in html
    finals_file = read_jsonl(run / "final.jsonl", type(finals[0]))
    assert len(finals_file) == 5


def test_leaderboard_needs_resolve(tmp_path: Path, verdict_rubric) -> None:
    run = _run(tmp_path, [], [])
    result = CliRunner().invoke(main, ["leaderboard", str(run)])
    assert result.exit_code == 1 and "judging resolve" in result.output
