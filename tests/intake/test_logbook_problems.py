"""Loads what it can, says why for the rest (issue 25, item 6; issue 26, item 1): claims-table
rows without a verdict load and are judged with the verdict criteria unscored; a logbook with
pages and no claim is an error naming its pages; no validation library's wording, link or
traceback reaches a claim problem, the judgments, the report or the console."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from pydantic import ValidationError

from judging.cli import main
from judging.intake import load_folder
from judging.intake.engine import in_our_words
from judging.models import Claim
from tests.intake.test_logbook import cell, write_page

#: What a pydantic message looks like: none of it may reach a user.
LEAKS = ("pydantic", "errors.pydantic.dev", "validation error for", "Traceback",
         "input_value=", "[type=", "Value error,")


def _ledger(tmp_path: Path) -> Path:
    """A generated-style logbook: one claims table whose rows are the claims, two of them with
    no verdict (an empty cell, a cell that is no label)."""
    root = tmp_path / "lb"
    (root / "pages").mkdir(parents=True)
    (root / "logbook.json").write_text(json.dumps({"space_id": "erin/ledger",
                                                   "tags": ["paper-Ledger01"]}))
    (root / "pages" / "index.md").write_text(
        "# Repro - ledger\n\n## Pages\n\n| Page |\n| --- |\n| [Claims](#/claims) |\n")
    write_page(root, "claims", "# Claims" + cell("markdown", "Claim ledger")
               + "| Claim | Paper prediction | Observed evidence | Status |\n"
                 "|---|---|---|---|\n"
                 "| C1 bound | ratio `<= 1` | `0.87` | **VERIFIED** |\n"
                 "| C2 rate | slope `0.5` | see the evidence page |  |\n"
                 "| C3 limit | n/a | not run | see notes |\n")
    return root


def test_claims_table_rows_without_a_verdict_load_and_are_judged_unscored(tmp_path: Path
                                                                         ) -> None:
    root = _ledger(tmp_path)
    loaded = load_folder(root, logbooks_dir=tmp_path / "figs")
    assert loaded.problems == []
    claims = {c.claim.claim_id: c.claim for c in loaded.claims}
    assert set(claims) == {"Ledger01/c1", "Ledger01/c2", "Ledger01/c3"}
    assert claims["Ledger01/c1"].verdict is not None
    for cid in ("Ledger01/c2", "Ledger01/c3"):
        assert claims[cid].verdict is None and claims[cid].absent["verdict"]
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(root), "--out", str(out), "--judge",
                                       "offline"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    by_claim = {line["claim"]["claim_id"]: line for line in lines}
    assert set(by_claim) == set(claims)
    for cid in ("Ledger01/c2", "Ledger01/c3"):
        line = by_claim[cid]
        assert line["status"] != "error" and line["verdict"] is None
        answers = {a["criterion_id"]: a for a in line["answers"]}
        assert answers["proof_for_falsified"]["status"] == "unscored"
    assert CliRunner().invoke(main, ["report", str(out)]).exit_code == 0
    for text in (result.output, (out / "judgments.jsonl").read_text(),
                 (out / "report.html").read_text()):
        assert not any(leak in text for leak in LEAKS)


def test_a_logbook_with_pages_and_no_claim_is_an_error_naming_its_pages(tmp_path: Path
                                                                        ) -> None:
    root = tmp_path / "lb"
    write_page(root, "overview", "# Overview" + cell("markdown") + "We looked at the paper.\n")
    write_page(root, "methods", "# Methods" + cell("markdown") + "Numpy, CPU.\n")
    loaded = load_folder(root, logbooks_dir=tmp_path / "figs")
    assert loaded.claims == []
    [problem] = loaded.problems
    assert "no claim found" in problem.reason
    assert "overview" in problem.reason and "methods" in problem.reason
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(root), "--out", str(out), "--judge",
                                       "offline"])
    [line] = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    assert line["status"] == "error" and "no claim found" in line["reason"]
    assert not any(leak in result.output for leak in LEAKS)


def test_a_claim_that_does_not_fit_the_model_is_described_in_our_words() -> None:
    try:
        Claim.model_validate({"claim_id": "p/c1", "kind": "number", "statement": "s",
                              "reported_value": "not a number", "verdict": "verified"})
    except ValidationError as exc:
        text = in_our_words(exc)
    assert text == "reported_value: not a number"
    assert not any(leak in text for leak in LEAKS)
    try:
        Claim.model_validate({"claim_id": "p/c1", "kind": "theorem", "statement": "s"})
    except ValidationError as exc:
        text = in_our_words(exc)
    assert text == "verdict: Field required (verified, falsified or inconclusive)"
