"""Claim outcomes, "upheld", and the leaderboard (judging.resolve.leaderboard) built from them."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from judging.cli import main
from judging.models import NotAddressed
from judging.resolve.decide import resolve_run
from judging.resolve.leaderboard import leaderboard_rows, write_leaderboard
from judging.rundir import write_not_addressed
from judging.rundir.store import read_jsonl
from tests.conftest import RUBRICS
from tests.constructed import _claims, _judgment, _label, _run


def test_outcomes_upheld_and_leaderboard(tmp_path: Path, verdict_rubric) -> None:
    claims = _claims(5)
    full = {"verdict_consistent": True, "scale_disclosed": True, "cites_evidence": True,
            "value_in_logs": True, "justification_quality": 4}
    judgments, labels = [], []
    for i, claim in enumerate(claims):
        # The AI answered c4's justification_quality (4), which no reviewer did.
        judgments.append(_judgment(verdict_rubric, claim,
                                   {"justification_quality": (4, 0.9)} if i == 4 else {}))
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
    # Nobody answered c4's justification_quality and no calibration trusts the judge's
    # answer: the AI's own answers stand in provisionally, and they pass.
    assert by_id["p/c4"].ai_outcome == "pass" and by_id["p/c0"].ai_outcome is None
    paths = write_leaderboard(run)
    import csv
    rows = list(csv.DictReader(paths[0].open()))
    tally = {row["submission"]: row for row in rows}
    # claims 0..4 are in submissions s0..s4 (one each)
    assert tally["s1"]["failed"] == "1" and tally["s4"]["ai_passed"] == "1"
    assert sum(int(r["passed"]) for r in rows) == 4
    # s0, s2, s3 and s4 pass one claim each: a four-way tie for first, then s1.
    assert [(r["rank"], r["tie"], r["submission"]) for r in rows] == [
        ("1", "True", "s0"), ("1", "True", "s2"), ("1", "True", "s3"), ("1", "True", "s4"),
        ("5", "False", "s1")]
    papers = list(csv.DictReader(paths[1].open()))
    assert papers == [{"rank": "1", "paper": "p", "submissions": "5", "claims": "5",
                       "addressed": "5", "passed": "4", "ai_passed": "1", "failed": "1",
                       "ai_failed": "0", "undecided": "0", "not_addressed": "0",
                       "conflicts": "0", "upheld": "3", "pass_rate": "0.8",
                       # nobody reviewed a random sample: no interval, and it says so
                       "pass_rate_95": "AI-only, uncalibrated: no random human sample",
                       "human_only_95": "", "tie": "False"}]
    html = paths[2].read_text()
    assert "<h2>Submissions</h2>" in html and "s4" in html
    finals_file = read_jsonl(run / "final.jsonl", type(finals[0]))
    assert len(finals_file) == 5


def test_leaderboard_needs_resolve(tmp_path: Path, verdict_rubric) -> None:
    run = _run(tmp_path, [], [])
    result = CliRunner().invoke(main, ["leaderboard", str(run)])
    assert result.exit_code == 1 and "judging resolve" in result.output


def test_not_addressed_registry_claims_count_as_zero(tmp_path: Path, verdict_rubric) -> None:
    # s0 answers p/c0 and passes it; p/c1 and p/c2 of its paper it does not address. s1 answers
    # p/c1 and passes it. Without the records s0 would have a pass rate of 1.
    claims = _claims(2)  # p/c0 in s0, p/c1 in s1
    full = {"verdict_consistent": True, "scale_disclosed": True, "cites_evidence": True,
            "value_in_logs": True, "justification_quality": 4}
    judgments = [_judgment(verdict_rubric, claim, {}) for claim in claims]
    labels = [_label(verdict_rubric, claim, cid, v) for claim in claims for cid, v in full.items()]
    run = _run(tmp_path, judgments, labels)
    missing = [NotAddressed(submission_id="s0", paper_id="p", claim_id=f"p/c{n}",
                            statement=f"claim {n}") for n in (1, 2)]
    write_not_addressed(run, missing)
    _, finals = resolve_run(run, calibration_dir=tmp_path / "none", rubrics_dir=RUBRICS)
    assert {f.outcome for f in finals} == {"pass"}
    import csv
    paths = write_leaderboard(run)
    rows = {row["submission"]: row for row in csv.DictReader(paths[0].open())}
    assert rows["s0"] == {"rank": "2", "submission": "s0", "paper": "p", "participant": "s0",
                          "claims": "3", "addressed": "1", "passed": "1", "ai_passed": "0",
                          "failed": "0", "ai_failed": "0", "undecided": "0",
                          "not_addressed": "2", "conflicts": "0", "upheld": "1",
                          "pass_rate": "0.333",
                          "pass_rate_95": "AI-only, uncalibrated: no random human sample",
                          "human_only_95": "", "rank_95": "", "rank_settled": "",
                          "note": "", "tie": "False"}
    assert (rows["s1"]["claims"], rows["s1"]["pass_rate"]) == ("1", "1.0")
    # Same passes, no fails: the one that left fewer registry claims unaddressed ranks first.
    assert (rows["s1"]["rank"], rows["s1"]["tie"]) == ("1", "False")
    (paper,) = csv.DictReader(paths[1].open())
    assert (paper["submissions"], paper["claims"], paper["not_addressed"],
            paper["pass_rate"]) == ("2", "4", "2", "0.5")
    assert ">not_<wbr>addressed</th>" in paths[2].read_text()  # breaks after "_" (1400 px)
    # A claim with a final decision is never also counted as not addressed.
    by_submission, _ = leaderboard_rows(finals, [*missing, NotAddressed(
        submission_id="s0", paper_id="p", claim_id="p/c0")])
    assert next(r for r in by_submission if r["submission"] == "s0")["claims"] == 3
    # A submission with nothing judged but registry claims left: all zeros, rate 0.
    by_submission, by_paper = leaderboard_rows([], missing)
    assert by_submission == [{"submission": "s0", "paper": "p", "participant": "s0",
                              "claims": 2, "addressed": 0, "passed": 0, "ai_passed": 0,
                              "failed": 0, "ai_failed": 0, "undecided": 0, "not_addressed": 2,
                              "conflicts": 0, "upheld": 0, "pass_rate": 0.0, "note": "", "rank": 1,
                              "tie": False}]
