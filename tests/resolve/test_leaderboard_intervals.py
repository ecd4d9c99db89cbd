"""Intervals and rank intervals in `judging leaderboard` once a random sample is reviewed
(issue 42)."""

from __future__ import annotations

import csv
import html
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner

from judging.cli import main
from judging.publish import stage
from judging.report import write_html_report
from judging.resolve import read_plan, resolve_run, run_claim_rows, run_leaderboard
from tests.conftest import RUBRICS
from tests.constructed import _claims, _judgment, _label, _run

GOOD = {"verdict_consistent": (True, 0.9), "scale_disclosed": (True, 0.9),
        "cites_evidence": (True, 0.9), "value_in_logs": (True, 0.9),
        "justification_quality": (4, 0.9)}


def test_leaderboard_shows_intervals_and_ranks(tmp_path: Path, verdict_rubric) -> None:
    claims = _claims(70)  # ten claims for each of 7 submissions
    judgments = [_judgment(verdict_rubric, c, {**GOOD, "value_in_logs": (i % 3 != 0, 0.9)})
                 for i, c in enumerate(claims)]
    run = _run(tmp_path, judgments, [])
    runner = CliRunner()
    before = runner.invoke(main, ["leaderboard", str(run)])
    # Nothing resolved yet: the leaderboard asks for resolve, changes nothing.
    assert before.exit_code != 0
    resolve_run(run, calibration_dir=tmp_path / "none", rubrics_dir=RUBRICS)
    plain = runner.invoke(main, ["leaderboard", str(run)])
    assert plain.exit_code == 0, plain.output
    assert "AI-only, uncalibrated" in plain.output

    plan = runner.invoke(main, ["review", "plan", str(run), "--budget", "30", "--top", "3",
                                "--random-share", "1"])
    assert plan.exit_code == 0, plan.output
    sample = [p for p in read_plan(run) if p.part == "random"]
    assert len(sample) == 30
    # People answer the random sample; they disagree with the AI on one claim in five.
    by_key = {str(c): c for c in claims}
    labels = []
    for n, entry in enumerate(sample):
        claim = by_key[entry.claim_key]
        passes = (entry.ai_outcome == "pass") != (n % 5 == 0)
        labels += [_label(verdict_rubric, claim, cid, v, annotator="h1")
                   for cid, v in {**{k: v for k, (v, _) in GOOD.items()},
                                  "value_in_logs": passes}.items()]
    with (run / "labels.jsonl").open("w") as handle:
        handle.writelines(label.model_dump_json() + "\n" for label in labels)
    resolve_run(run, calibration_dir=tmp_path / "none", rubrics_dir=RUBRICS)
    rows = run_claim_rows(run)
    assert sum(r.labelled for r in rows) == 30

    result = runner.invoke(main, ["leaderboard", str(run)])
    assert result.exit_code == 0, result.output
    assert "Event pass rate:" in result.output and "30 random human labels" in result.output
    assert "Top 6:" in result.output  # of 7 submissions
    table = list(csv.DictReader((run / "leaderboard_submissions.csv").open()))
    (paper,) = csv.DictReader((run / "leaderboard_papers.csv").open())
    # The paper's 70 claims hold the 30 random labels: an interval, and the human-only one.
    low, high = (float(x) for x in paper["pass_rate_95"].split("[")[1].rstrip("]").split(","))
    c_low, c_high = (float(x) for x in paper["human_only_95"].strip("[]").split(","))
    # Never wider than the human-only interval but for the degree of freedom PPI++'s lambda,
    # fitted on these same 30 labels, costs: t(28) * sqrt(30 / 28) = 2.120303 against t(29) *
    # sqrt(30 / 29) = 2.080193 (1.019282x; the AI says little of people's answers here, so its
    # lambda is near 0 and buys nothing back), plus the 3-decimal rounding of the bounds.
    assert 0 <= low <= high <= 1
    assert high - low <= (c_high - c_low) * 1.019282 + 0.002
    for row in table:
        # About 4 random labels per submission: no interval, and it says why.
        assert "random human labels, fewer than 10: no interval" in row["pass_rate_95"], row
        assert row["rank_95"] and row["rank_settled"] in ("yes", "no")
        first = int(row["rank_95"].split("–")[0])
        assert first <= int(row["rank"])  # the interval reaches the point rank or above
    page = (run / "leaderboard.html").read_text()
    assert "<th title='the rank&#x27;s 95% interval" in page and "Event pass rate:" in page
    assert table[0]["rank_95"] in page
    # The report carries the same figures: the event line, each row's rank and rate interval.
    report = html.unescape(write_html_report(run, rubrics_dir=RUBRICS).read_text())
    board = run_leaderboard(run)
    assert board.uncertainty[0] in report and board.uncertainty[1] in report
    for row in table:
        assert f"<td>{row['rank_95']}</td>" in report and row["pass_rate_95"] in report
    explain = runner.invoke(main, ["review", "plan", str(run), "--budget", "5", "--top", "3",
                                   "--explain"])
    assert explain.exit_code == 0, explain.output
    assert "top 3: " in explain.output and "cannot say" not in explain.output
    # The rule line of i39a stays, beside the intervals.
    assert "Ranked by passes (more first)" in result.output

    # The published dataset carries the same intervals as numbers (data/leaderboard.*).
    staged = stage(run, out=tmp_path / "publish", calibration_dir=tmp_path / "none")
    assert staged.rows["leaderboard"] == 1 + len(table)
    published = pq.read_table(staged.folder / "data" / "leaderboard.parquet").to_pylist()
    board = run_leaderboard(run)
    event = published[0]
    assert event["scope"] == "event" and event["random_labels"] == 30
    assert (event["pass_rate_low"], event["pass_rate_high"]) == board.event.interval
    assert (event["human_only_low"], event["human_only_high"]) == board.event.classical
    assert event["pass_rate_low"] < event["pass_rate_estimate"] < event["pass_rate_high"]
    assert board.event.text().startswith(f"{event['pass_rate_estimate']:.3f} [")
    for row, shown in zip(published[1:], table, strict=True):
        assert row["submission_id"] == shown["submission"] and row["rank"] == int(shown["rank"])
        assert row["pass_rate_low"] is None and "fewer than 10" in row["interval_note"]
        # The leaderboard's own pass rate under its own name; no estimated point where the
        # leaderboard shows none (no interval): one figure per name on every surface.
        assert row["pass_rate"] == (float(shown["pass_rate"]) if shown["pass_rate"] else None)
        assert row["pass_rate_estimate"] is None
        span = f"{row['rank_low']}–{row['rank_high']}" if row["rank_low"] != row["rank_high"] \
            else str(row["rank_low"])
        assert span == shown["rank_95"]
        assert row["rank_settled"] == (shown["rank_settled"] == "yes")
    assert "`leaderboard` (8 rows, `data/leaderboard.parquet`)" in staged.card
