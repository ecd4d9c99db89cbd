"""Scale notes from the Executive summary's "Scope & cost" table, scripts of run cells as the
claim's evidence, and logbook warnings kept on the submission and shown in report.html."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from judging.cli import main
from judging.hashing import hash_view
from judging.intake.logbook import load_logbook
from judging.judges.prompt import describe_claim
from judging.models import Evidence, SubmissionHeader
from judging.report import write_html_report
from judging.run.lines import HASHED_ALWAYS
from judging.rundir import RunStore
from tests.intake.test_logbook import cell, made, needs_trackio, write_page  # noqa: F401

SCOPE = ("# Executive summary" + cell("markdown", "Executive summary", pinned=True)
         + "Two claims.\n\n## Scope & cost\n\n"
         "|  | This reproduction | Full replication |\n| --- | --- | --- |\n"
         "| Hardware | 1 CPU core | 8 A100 |\n| Wall time | 12 s | 3 days |\n"
         "| Claims 2\u20133 | 1/10 of the data | all of it |\n"
         "| Cost | |  |\n\n## Next\n\n| Item | Value |\n| --- | --- |\n| Not | scope |\n")


def _published(tmp_path: Path, summary: str = SCOPE) -> Path:
    root = tmp_path / "lb"
    write_page(root, "executive-summary", summary)
    write_page(root, "claim-1-a", "# Claim 1: a" + cell("markdown")
               + "**Verdict: VERIFIED.** The paper reports 1.0; measured 1.0.\n")
    write_page(root, "claim-2-b", "# Claim 2: b" + cell("markdown")
               + "**Verdict: TOY-VERIFIED.** Measured 2.0 in a toy-scale run.\n")
    return root


def test_scale_note_from_scope_and_cost_rows_named_and_general(tmp_path: Path) -> None:
    root = _published(tmp_path)
    loaded = load_logbook(root, out_dir=tmp_path / "out")
    claims = {c.claim.claim_id.split("/")[-1]: c.claim for c in loaded.claims}
    one, two = claims["c1"], claims["c2"]
    assert one.scale_note == ("Scope & cost (executive-summary): Hardware: 1 CPU core; "
                              "Wall time: 12 s")
    # the toy quote stays first (the verdict rubric's scale_disclosed reads "toy: ...")
    assert two.scale_note.startswith("toy: ")
    # the note reads as text (no Markdown asterisks); the quote's provenance stays verbatim
    assert "*" not in two.scale_note and "TOY-VERIFIED" in two.scale_note
    assert "**Verdict: TOY-VERIFIED.**" in two.provenance["verdict"].quote
    assert two.scale_note.endswith("Claims 2\u20133: 1/10 of the data")
    assert "A100" not in two.scale_note and "Not: scope" not in two.scale_note
    page = (root / "pages/executive-summary/page.md").read_text()
    quote = two.provenance["scale_note"]
    assert quote.how == "declared"
    assert all(line in page for line in quote.quote.splitlines())
    assert "| Claims 2\u20133 |" in quote.quote


def test_no_scope_table_no_scale_note(tmp_path: Path) -> None:
    root = _published(tmp_path, "# Executive summary" + cell("markdown") + "Nothing on cost.\n")
    loaded = load_logbook(root, out_dir=tmp_path / "out")
    one = next(c.claim for c in loaded.claims if c.claim.claim_id.endswith("/c1"))
    assert one.scale_note is None and "scale_note" not in one.provenance


@needs_trackio
def test_run_cell_scripts_are_the_claims_evidence(made: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "out"
    loaded = load_logbook(made, out_dir=out)
    c1 = next(c for c in loaded.claims if c.claim.claim_id.endswith("/c1"))
    evidence = c1.claim.evidence
    assert evidence.script is not None and evidence.script.endswith("run.py")
    assert [Path(s).name for s in evidence.scripts] == ["killed.py"]
    assert (out / evidence.script).read_text().startswith("import sys")
    assert set(c1.evidence_paths) >= {"script", "scripts[0]"}
    assert not list(made.rglob("scripts"))  # written under the run directory only


@needs_trackio
def test_scripts_reach_the_verdict_rubric_and_the_prompt(made: Path, tmp_path: Path  # noqa: F811
                                                         ) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(made), "--out", str(out), "--judge",
                                       "offline"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    c1 = next(x for x in lines if x["claim"]["claim_id"].endswith("/c1"))
    cited = next(a for a in c1["answers"] if a["criterion_id"] == "cites_evidence")
    assert cited["passed"] is True
    assert "run.py" in cited["rationale"] and "killed.py" in cited["rationale"]
    stored = RunStore.open(out, create=False).claims()
    content = next(v for k, v in stored.items() if k.endswith("/c1"))
    assert "killed.py" in describe_claim(content) and "run.py" in describe_claim(content)


def test_a_script_named_but_not_recorded_is_read_from_the_workspace_or_said_absent(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    root = ws / ".trackio" / "logbook"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "train.py").write_text("print(1)\n")
    (tmp_path / "outside.py").write_text("secret\n")
    write_page(root, "claim-1-a", "# Claim 1: a"
               + cell("code", "Run", command=["python", "src/train.py", "--lr", "1"],
                      exit_code=0, duration_s=1.0)
               + "````output\nok\n````\n"
               + cell("code", "Run 2", command=["bash", "../outside.py", "gone.sh"],
                      exit_code=1, duration_s=1.0)
               + cell("markdown") + "**Verdict: VERIFIED.** measured 1.0\n")
    out = tmp_path / "out"
    loaded = load_logbook(ws, out_dir=out)
    claim = loaded.claims[0].claim
    assert claim.evidence.script == "scripts/claim-1-a/run-1/src/train.py"
    assert (out / claim.evidence.script).read_text() == "print(1)\n"
    assert claim.evidence.scripts == []
    assert "../outside.py" in claim.absent["scripts"] and "gone.sh" in claim.absent["scripts"]


def test_logbook_warnings_on_the_header_and_in_the_report(tmp_path: Path) -> None:
    root = _published(tmp_path)
    (root / "pages" / "index.md").write_text(
        "# Reproduction: X\n\n| [Claim 1](#/claim-1-a) | [Gone](#/claim-9-<b>gone</b>) |\n"
        "| [Claim 2](#/claim-2-b) | [Summary](#/executive-summary) |\n")
    write_page(root, "orphan-<script>", "# Old\n")
    loaded = load_logbook(root, out_dir=tmp_path / "out")
    warnings = loaded.header.warnings
    assert any("dangling" in w for w in warnings)
    assert any("orphan" in w and "orphan-<script>" in w for w in warnings)
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(root), "--out", str(out), "--judge",
                                       "offline"])
    assert result.exit_code == 0, result.output
    html = write_html_report(out).read_text()
    assert "submission-warnings" in html and "orphan page" in html
    assert "orphan-<script>" not in html and "orphan-&lt;script&gt;" in html


def test_new_optional_fields_are_left_out_of_input_hashes_while_unset() -> None:
    header = SubmissionHeader(submission_id="s", paper_id="p")
    assert "warnings" not in hash_view(header, HASHED_ALWAYS)
    assert "warnings" in hash_view(header.model_copy(update={"warnings": ["w"]}), HASHED_ALWAYS)
    assert "scripts" not in hash_view(Evidence(), HASHED_ALWAYS)
    assert "scripts" in hash_view(Evidence(scripts=["a.py"]), HASHED_ALWAYS)


def test_plain_text_examples_hold() -> None:
    import doctest

    from judging.intake import extract

    failed, attempted = doctest.testmod(extract, verbose=False)
    assert attempted >= 2 and failed == 0
