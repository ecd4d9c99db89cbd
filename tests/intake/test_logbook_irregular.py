"""Irregular shapes seen in real logbooks, written by hand: several paper tags, `paper: null`, a
run killed by Ctrl-C (exit 130), a run's printout against the page's own verdict, a ~1 MB page of
one image repeated, a bare poster `<iframe>`, and a verifier printout as the only verdict."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from judging.intake import load_folder
from judging.models import Verdict
from tests.intake.test_logbook import cell, png_bytes, write_page


def workspace(tmp_path: Path, metadata: dict) -> Path:
    root = tmp_path / "ws"
    (root / ".trackio").mkdir(parents=True)
    (root / ".trackio" / "metadata.json").write_text(json.dumps(metadata))
    return root


def logbook(root: Path) -> Path:
    return root / ".trackio" / "logbook"


def test_several_paper_tags_take_the_first_with_a_warning_and_paper_null_is_fine(tmp_path):
    root = workspace(tmp_path, {"space_id": "bob/x", "paper": None,
                                "tags": ["icml2026-repro", "paper-AAA111", "paper-BBB222"]})
    write_page(logbook(root), "claim-1-a", "# Claim 1: a" + cell("markdown")
               + "**Verdict: VERIFIED**\n")
    loaded = load_folder(root, logbooks_dir=tmp_path / "out")
    assert loaded.header.paper_id == "AAA111"
    assert [c.claim.claim_id for c in loaded.claims] == ["AAA111/c1"]
    assert any("BBB222" in w and "first" in w for w in loaded.header.warnings)


def test_no_paper_tag_and_paper_null_falls_back_with_a_warning(tmp_path):
    root = workspace(tmp_path, {"space_id": "bob/untagged-repro", "paper": None, "tags": []})
    write_page(logbook(root), "claim-1-a", "# Claim 1: a" + cell("markdown") + "CONFIRMED.\n")
    loaded = load_folder(root, logbooks_dir=tmp_path / "out")
    assert loaded.header.paper_id == "untagged-repro"
    assert any("paper id" in w for w in loaded.header.warnings)


def test_a_run_printout_against_the_pages_verdict_is_a_self_contradiction(tmp_path):
    root = workspace(tmp_path, {"space_id": "bob/x", "tags": ["paper-AAA111"]})
    write_page(logbook(root), "claim-1-a", "# Claim 1: a"
               + cell("code", "run", command=["python", "check.py"], exit_code=130,
                      duration_s=2.5)
               + "```output\nresult: not verified\nKeyboardInterrupt\n```\n"
               + cell("markdown", "Verdict") + "**Verdict: VERIFIED**\n")
    loaded = load_folder(root, logbooks_dir=tmp_path / "out")
    claim = loaded.claims[0]
    # the participant's own final label is the verdict; the printout does not overrule it
    assert claim.claim.verdict is Verdict.verified
    flag = next(f for f in claim.flags if f.name == "self_contradiction")
    assert "VERIFIED" in flag.detail and "not verified" in flag.detail
    log = Path(claim.evidence_paths["logs[0]"]).read_text()
    assert "exit code: 130" in log and "KeyboardInterrupt" in log


def test_a_verifier_printout_is_the_verdict_when_the_prose_states_none(tmp_path):
    root = workspace(tmp_path, {"space_id": "bob/x", "tags": ["paper-AAA111"]})
    write_page(logbook(root), "claim-1-a", "# Claim 1: a" + cell("markdown")
               + "We ran the verifier below." + cell("code", "verify", command=["python", "v.py"],
                                                      exit_code=0, duration_s=1.0)
               + "```output\n[PASS] bound holds on 100 seeds\n```\n")
    claim = load_folder(root, logbooks_dir=tmp_path / "out").claims[0]
    assert claim.claim.verdict is Verdict.verified
    assert claim.claim.source_verdict.startswith("[PASS]")


def test_a_page_of_one_image_repeated_is_decoded_once_and_a_bare_iframe_is_no_figure(tmp_path):
    root = workspace(tmp_path, {"space_id": "bob/x", "tags": ["paper-AAA111"]})
    image = base64.b64encode(png_bytes()).decode()
    repeated = "".join(f'<img src="data:image/png;base64,{image}">' for _ in range(3000))
    assert len(repeated) > 500_000
    write_page(logbook(root), "claim-1-big", "# Claim 1: big" + cell("figure", "fig")
               + "```html\n" + repeated + "\n```\n" + cell("markdown") + "Verdict: VERIFIED\n")
    write_page(logbook(root), "claim-2-poster", "# Claim 2: poster"
               + cell("figure", "Poster", pinned=True) + '<iframe src="poster.html"></iframe>\n'
               + cell("markdown") + "Verdict: CONFIRMED\n")
    out = tmp_path / "out"
    loaded = load_folder(root, logbooks_dir=out)
    claims = {c.claim.claim_id: c for c in loaded.claims}
    assert claims["AAA111/c1"].reproduced_path is not None
    assert len(list(out.rglob("*.png"))) == 1
    assert claims["AAA111/c2"].reproduced_path is None
    assert claims["AAA111/c2"].claim.verdict is Verdict.verified
    assert not list(root.rglob("*.png"))
