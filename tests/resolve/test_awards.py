"""`judging awards` on a constructed event whose best reproduction and best falsification are
known by construction (issue 42)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from judging.cli import main
from judging.models import ClaimKey, RerunRecord
from judging.resolve import ClaimDecision
from judging.resolve.awards import read_checklists, read_picks, run_shortlists, shortlists
from judging.rundir import append_rerun
from tests.conftest import SUBMISSIONS

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
    # Without re-runs or checklists the evidence says so rather than guessing.
    assert "none recorded" in first.evidence[1] and "not given" in first.evidence[2]
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


def _rerun(run: Path, submission: str, n: int, status: str) -> None:
    at = datetime(2026, 12, 7, tzinfo=UTC)
    append_rerun(run, RerunRecord(claim=ClaimKey(submission_id=submission, claim_id=f"p/c{n}"),
                                  status=status, reason="constructed", attempted=True,
                                  input_hash="h", engine="local", sandbox=None, started_at=at,
                                  finished_at=at))


def _checklist(submission: str, missing: list[str]) -> dict:
    items = [{"item": i, "status": "missing", "detail": "absent", "claim": None, "file": None,
              "line": None} for i in missing]
    items.append({"item": "claims", "status": "ok", "detail": "3 claim(s)", "claim": None,
                  "file": None, "line": None})
    return {"source": submission, "folder": submission, "format": "manifest",
            "submission_id": submission, "profile": None, "ok": not missing,
            "counts": {"ok": 1, "missing": len(missing), "warning": 0}, "items": items}


def test_reruns_and_checklists_decide_between_equal_decisions(tmp_path: Path) -> None:
    # Equal final decisions everywhere: only the re-runs and the checklists tell them apart, and
    # the natural order of the names says the opposite of the answer known by construction.
    finals = [
        *[_final(s, i, "verified", "pass", final_verdict="verified") for i in range(3)
          for s in ("messy", "missing", "tidy")],
        *[_final(s, i, "falsified", "pass", audit="pass", final_verdict="falsified")
          for i in range(2) for s in ("bluff", "prover")]]
    run = tmp_path / "run"
    run.mkdir()
    (run / "final.jsonl").write_text("".join(f.model_dump_json(by_alias=True) + "\n"
                                             for f in finals))
    for i in range(3):
        _rerun(run, "tidy", i, "reproduced")       # easy to re-run, and complete
        _rerun(run, "missing", i, "reproduced")    # easy to re-run, the checklist lacks a trace
        _rerun(run, "messy", i, "differs" if i == 0 else "failed")
    for i in range(2):
        _rerun(run, "prover", i, "reproduced")     # the proof's re-run gives its number
        _rerun(run, "bluff", i, "differs")
    checked = tmp_path / "checklists.json"
    checked.write_text(json.dumps({"ok": False, "profile": None, "submissions": [
        _checklist("tidy", []), _checklist("missing", ["trace"]), _checklist("messy", []),
        _checklist("prover", []), _checklist("bluff", [])]}))
    result = CliRunner().invoke(main, ["awards", str(run), "--checklists", str(checked)])
    assert result.exit_code == 0, result.output
    lists = run_shortlists(run, checklists=checked)
    assert [p.submission for p in lists["best_reproduction"]] == ["tidy", "missing", "messy"]
    assert [p.submission for p in lists["best_falsification"]] == ["prover", "bluff"]
    tidy, missing, messy = lists["best_reproduction"]
    assert "re-runs of these claims: 3 reproduced (of 3)" in tidy.evidence
    assert "checklist: complete (1 ok, 0 missing, 0 warnings)" in tidy.evidence
    assert "checklist: incomplete, missing trace (1 ok, 1 missing, 0 warnings)" in \
        missing.evidence
    assert "re-runs of these claims: 1 differs, 2 failed (of 3)" in messy.evidence
    prover, bluff = lists["best_falsification"]
    assert "re-runs of the proven claims: 2 reproduced (of 2)" in prover.evidence
    assert "re-runs of the proven claims: 2 differs (of 2)" in bluff.evidence
    said = " ".join(result.output.split())
    assert "1. tidy" in said and "1. prover" in said and "3 reproduced (of 3)" in said
    # Without the checklists the re-runs still decide (tidy and missing tie, in name order,
    # messy last); the evidence says none was given.
    plain = run_shortlists(run)
    assert [p.submission for p in plain["best_reproduction"]] == ["missing", "tidy", "messy"]
    assert any("not given" in line for line in plain["best_reproduction"][0].evidence)


def test_checklists_are_read_from_judging_check_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check", str(SUBMISSIONS), "--json"])
    out = tmp_path / "checklists.json"
    out.write_text(result.output)
    checklists = read_checklists(out)
    assert checklists and all(c.submission_id == s for s, c in checklists.items())
    (tmp_path / "bad.json").write_text("{}")
    refused = CliRunner().invoke(main, ["awards", str(tmp_path), "--checklists",
                                        str(tmp_path / "bad.json")])
    assert refused.exit_code != 0
