"""Claims found from structure, not from one naming convention (issue 26, item 1), on pages
written by hand: claim slugs numbered or not, "C3 —" titles, numbered claims lists with keyed
verifier printouts, `## Claim N` sections of a single-page report, historical pages of a stale
index; claim ids record whether their number came from the text or from order."""

from __future__ import annotations

import json
from pathlib import Path

from judging.intake import load_folder
from judging.models import Verdict
from tests.intake.test_logbook import cell, write_page


def _load(root: Path, tmp_path: Path):
    loaded = load_folder(root, logbooks_dir=tmp_path / "out")
    return loaded, {c.claim.claim_id: c for c in loaded.claims}


def _book(tmp_path: Path, tag: str) -> Path:
    root = tmp_path / "lb"
    (root / "pages").mkdir(parents=True)
    (root / "logbook.json").write_text(json.dumps({"tags": [f"paper-{tag}"]}))
    return root


def test_claim_pages_of_any_naming(tmp_path: Path) -> None:
    root = _book(tmp_path, "Slug0001")
    write_page(root, "claim-c1-rate", "# Claim C1 — rate" + cell("markdown", "Verified")
               + "Done.\n")
    write_page(root, "current-claim-2", "# Current verification" + cell("markdown")
               + "**Verdict: FALSIFIED.**\n")
    write_page(root, "stability-check", "# C3 — stability" + cell("markdown")
               + "Status: INCONCLUSIVE\n")
    write_page(root, "claim-drive-ablation", "# DRIVE ablation" + cell("markdown")
               + "Ablation run, no verdict.\n")
    write_page(root, "00-claim-scorecard", "# Scorecard" + cell("markdown")
               + "All claims above.\n")
    loaded, claims = _load(root, tmp_path)
    assert set(claims) == {"Slug0001/c1", "Slug0001/c2", "Slug0001/c3",
                           "Slug0001/claim-drive-ablation"}
    assert claims["Slug0001/c1"].claim.verdict is Verdict.verified
    assert claims["Slug0001/c2"].claim.verdict is Verdict.falsified
    assert claims["Slug0001/c3"].claim.verdict is Verdict.inconclusive
    # the number's source: the text, with its quote, or (no number) the order of the page
    assert claims["Slug0001/c3"].claim.provenance["claim_id"].how == "declared"
    assert claims["Slug0001/c3"].claim.provenance["claim_id"].quote == "C3"
    unnumbered = claims["Slug0001/claim-drive-ablation"].claim
    assert unnumbered.provenance["claim_id"].how == "order"
    assert unnumbered.verdict is None and unnumbered.absent["verdict"]


def test_a_numbered_claims_list_with_verdicts_from_keyed_printouts(tmp_path: Path) -> None:
    root = _book(tmp_path, "List0001")
    (root / "pages" / "index.md").write_text(
        "# Repro\n\n## Pages\n\n| Page |\n| --- |\n| [Claims](#/claims) |\n"
        "| [Verification run](#/verification-run) |\n")
    write_page(root, "claims", "# Claims" + cell("markdown", "Claims to reproduce")
               + "## Claims to reproduce\n\n1. The error is bounded by 2T eps.\n"
                 "2. Samples grow exponentially without reward.\n"
                 "3. The particle bound holds.\n")
    write_page(root, "verification-run", "# Verification run"
               + cell("code", "verify all", command=["python", "v.py"], exit_code=0,
                      duration_s=1.0)
               + "````output\n  [PASS] c1_bounded_tv\n  [FAIL] c2_exponential\n"
                 "  2/3 claims verified.\n````\n")
    loaded, claims = _load(root, tmp_path)
    assert set(claims) == {"List0001/c1", "List0001/c2", "List0001/c3"}
    assert claims["List0001/c1"].claim.verdict is Verdict.verified
    assert claims["List0001/c1"].claim.provenance["verdict"].place == \
        "run printout on verification-run"
    assert claims["List0001/c2"].claim.verdict is Verdict.falsified
    assert claims["List0001/c3"].claim.verdict is None  # no printout names claim 3
    assert claims["List0001/c1"].origin == "pages/claims/page.md item 1"


def test_a_single_page_report_and_its_claim_sections(tmp_path: Path) -> None:
    root = tmp_path / "space"
    (root / "pages").mkdir(parents=True)
    (root / "README.md").write_text("---\ntags:\n  - paper-Sect0001\n---\n")
    (root / "pages" / "index.md").write_text(
        "# Report\n\nAll on one page.\n\n## Claim 1: slope\n\nLocal outcome: `consistent`.\n\n"
        "## Claim 2: intercept\n\nThe paper reports 0.5 and we measured 0.7.\n\n"
        "**Verdict: FALSIFIED**\n")
    loaded, claims = _load(root, tmp_path)
    assert set(claims) == {"Sect0001/c1", "Sect0001/c2"}
    assert claims["Sect0001/c1"].claim.verdict is Verdict.verified
    c2 = claims["Sect0001/c2"].claim
    assert c2.verdict is Verdict.falsified
    assert (c2.reported_value, c2.reproduced_value) == (0.5, 0.7)
    assert claims["Sect0001/c2"].origin == "pages/index.md section 2"


def test_a_stale_index_and_historical_pages_in_logbook_json(tmp_path: Path) -> None:
    root = _book(tmp_path, "Hist0001")
    (root / "pages" / "index.md").write_text(
        "# Repro\n" + cell("markdown", "index", created_at="2026-07-30T07:00:00+00:00")
        + "## Pages\n\n| Page |\n| --- |\n| [Claim 1: old](#/claim-1-old) |\n")
    (root / "logbook.json").write_text(json.dumps({
        "tags": ["paper-Hist0001"], "updated_at": "2026-08-02T08:00:00+00:00",
        "root": {"children": [
            {"slug": "current-claim-1", "title": "Current Claim 1 — VERIFIED"},
            {"slug": "historical-baseline", "title": "Historical rejected baseline",
             "children": [{"slug": "claim-1-old", "title": "Historical: Claim 1"}]}]}}))
    write_page(root, "claim-1-old", "# Claim 1: old" + cell("markdown")
               + "**Verdict: FALSIFIED**\n")
    write_page(root, "current-claim-1", "# Current verification — Claim 1\n\nPlain text.\n")
    write_page(root, "historical-baseline", "# Historical\n\nOld pages.\n")
    loaded, claims = _load(root, tmp_path)
    [claim] = claims.values()
    assert claim.origin == "pages/current-claim-1/page.md"
    assert claim.claim.verdict is Verdict.verified
    assert claim.claim.provenance["verdict"].place == "page title in logbook.json"
    assert any("logbook.json is followed" in w for w in loaded.header.warnings)
    assert any("claim-1-old" in w and "historical" in w for w in loaded.header.warnings)


def test_claims_opened_by_bold_leads_on_a_single_page(tmp_path: Path) -> None:
    root = _book(tmp_path, "Bold0001")
    (root / "pages" / "index.md").write_text(
        "# Report\n\n**Claim 1 (Theorem 2).** The bound holds.\n\nVerdict: VERIFIED\n\n"
        "**Claim 2 (Table 1).** Accuracy 94.1%.\n\nVerdict: NOT REPRODUCED\n")
    loaded, claims = _load(root, tmp_path)
    assert claims["Bold0001/c1"].claim.verdict is Verdict.verified
    assert claims["Bold0001/c2"].claim.verdict is Verdict.inconclusive
