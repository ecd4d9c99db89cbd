"""`judging awards` on a constructed event whose best reproduction and best falsification are
known by construction (issue 42)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from judging.cli import main
from judging.models import ClaimKey
from judging.resolve import ClaimDecision
from judging.resolve.awards import read_picks, shortlists

AUDIT, VERDICT = "falsification-audit@1.0.0", "verdict-justification@1.2.0"


def _final(submission: str, n: int, verdict: str, outcome: str, *, by: str = "humans",
           audit: str | None = None, final_verdict: str | None = None,
           ai_outcome: str | None = None) -> ClaimDecision:
    outcomes = {VERDICT: outcome, **({AUDIT: audit} if audit else {})}
    return ClaimDecision(claim=ClaimKey(submission_id=submission, claim_id=f"p/c{n}"),
                         paper_id="p", kind="number", verdict=verdict, outcomes=outcomes,
                         outcome=outcome, upheld="yes" if outcome == "pass" else "no",
                         decided_by=[by] if outcome != "pending" else [],
                         ai_outcome=ai_outcome, final_verdict=final_verdict,
                         final_verdict_by=by if final_verdict else None)


def _event() -> list[ClaimDecision]:
    return [
        # careful: three verified claims pass by people, none fails -> best reproduction
        *[_final("careful", i, "verified", "pass", final_verdict="verified") for i in range(3)],
        # sloppy: more verified claims pass, but only two, one fails
        _final("sloppy", 0, "verified", "pass"), _final("sloppy", 1, "verified", "pass"),
        _final("sloppy", 2, "verified", "fail"),
        # loud: two falsifications, only one proven (audit pass + final verdict falsified)
        _final("loud", 0, "falsified", "pass", audit="pass", final_verdict="falsified"),
        _final("loud", 1, "falsified", "fail", audit="fail", final_verdict="verified"),
        # prover: two falsifications, both proven by people -> best falsification
        *[_final("prover", i, "falsified", "pass", audit="pass", final_verdict="falsified")
          for i in range(2)],
        # hopeful: a falsification whose audit passes but people call it verified
        _final("hopeful", 0, "falsified", "pass", audit="pass", final_verdict="verified"),
        # waiting: only an AI provisional pass
        _final("waiting", 0, "verified", "pending", ai_outcome="pass"),
    ]


def test_shortlists_known_by_construction() -> None:
    lists = shortlists(_event())
    assert [p.submission for p in lists["best_reproduction"]] == ["careful", "sloppy", "waiting"]
    assert [p.submission for p in lists["best_falsification"]] == ["prover", "loud"]
    first = lists["best_reproduction"][0]
    assert first.evidence[0].startswith("3 of 3 verified claims pass (3 decided by people")
    assert "not read" in first.evidence[-1]  # re-runs are not guessed
    assert lists["best_falsification"][1].evidence[0].startswith("1 of 2 falsified claims proven")


def test_awards_command_records_a_human_pick(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "final.jsonl").write_text("".join(f.model_dump_json(by_alias=True) + "\n"
                                             for f in _event()))
    runner = CliRunner()
    shown = runner.invoke(main, ["awards", str(run)])
    assert shown.exit_code == 0, shown.output
    assert "1. careful" in shown.output and "1. prover" in shown.output
    assert "picked: nobody yet" in shown.output
    refused = runner.invoke(main, ["awards", str(run), "--pick", "best_falsification=ghost",
                                   "--by", "jury"])
    assert refused.exit_code != 0 and "not a submission" in refused.output
    assert not (run / "awards.jsonl").exists()  # a failing invocation writes nothing
    picked = runner.invoke(main, ["awards", str(run), "--pick", "best_falsification=prover",
                                  "--by", "Ada (jury)"])
    assert picked.exit_code == 0, picked.output
    assert "picked: prover by Ada (jury)" in picked.output
    (pick,) = read_picks(run)
    assert (pick.award, pick.submission, pick.by, pick.shortlisted_place) == (
        "best_falsification", "prover", "Ada (jury)", 1)
