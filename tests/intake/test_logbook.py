"""Logbooks made by the real trackio CLI (its own environment: `make trackio-env`) and small
hand-written irregular pages, read by the importer and judged end to end."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from judging.cli import main
from judging.intake import expand_source, load_folder
from judging.intake.logbook import load_logbook, map_verdict, read_logbook
from judging.models import Verdict
from tests.conftest import needs_trackio, trackio_cli  # noqa: F401
from tests.trackio_batch import built_once, tk_batch

ROOT = Path(__file__).resolve().parents[2]



def png_bytes(color=(200, 20, 20)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), color).save(out, format="PNG")
    return out.getvalue()


def trackio_or_skip() -> None:
    """Skip without the trackio CLI; fail when JUDGING_TRACKIO names one that is not there."""
    if trackio_cli() is None:
        if os.environ.get("JUDGING_TRACKIO"):
            pytest.fail(f"JUDGING_TRACKIO={os.environ['JUDGING_TRACKIO']} is not a file")
        pytest.skip("no trackio CLI")


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A workspace built with trackio: a claim page with a failing run and a PNG figure, a
    TOY-VERIFIED page with a Plotly-like figure (raw data) and a CSV-only figure, a trace.
    Built once a test run for this module and test_logbook_scale_scripts.py, which read it."""
    trackio_or_skip()
    return built_once(tmp_path_factory, "made", _make)


def _make(ws: Path) -> None:
    (ws / "run.py").write_text("import sys\nprint('loss=0.51')\nsys.exit(3)\n")
    (ws / "killed.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    (ws / "fig.png").write_bytes(png_bytes())
    (ws / "session.jsonl").write_text(json.dumps({"type": "session", "model": "m"}) + "\n")
    # One trackio interpreter for the dozen commands (tests/trackio_batch.py).
    codes = [done.returncode for done in tk_batch(
        ws, ["open", "--no-serve", "--title", "Reproduction: Test paper"],
        ["page", "Claim 1: loss halves"],
        ["run", "--page", "claim-1-loss-halves", "--", "python3", "run.py"],
        ["run", "--page", "claim-1-loss-halves", "--", "python3", "killed.py"],
        ["cell", "figure", "--page", "claim-1-loss-halves", "--title", "Loss curve",
         "--image", "fig.png"],
        ["cell", "markdown", "--page", "claim-1-loss-halves", "--title",
         "Verdict: VERIFIED", "The paper reports 0.50 and we measured **0.51**."],
        ["page", "Claim 2: scaling"],
        ["cell", "figure", "--page", "claim-2-scaling", "--title", "Scaling (plotly)",
         "--html-text", "<div id='p'></div><script>Plotly.newPlot('p', [])</script>",
         "--raw-text", "step,loss\n1,2.0\n2,1.0\n3,0.5"],
        ["cell", "figure", "--page", "claim-2-scaling", "--title", "Table only",
         "--html-text", "<p>the numbers</p>", "--raw-text", "a,b\n1,2"],
        ["cell", "markdown", "--page", "claim-2-scaling",
         "**TOY-VERIFIED.** Within this toy scope the slope is reproduced."],
        ["attach", "trace", "session.jsonl"])]
    # the failing run exits 3; the killed one exits with its signal (not checked)
    assert codes[:2] == [0, 0] and codes[2] == 3 and codes[4:] == [0] * 7, codes
    meta = ws / ".trackio" / "metadata.json"
    data = json.loads(meta.read_text())
    data["tags"] = ["icml2026-repro", "paper-AbCd1234"]
    meta.write_text(json.dumps(data))


@needs_trackio
def test_a_trackio_workspace_loads_with_runs_figures_trace_and_toy(made: Path, tmp_path: Path
                                                                    ) -> None:
    out = tmp_path / "out"
    loaded = load_logbook(made, out_dir=out)
    assert loaded.header.paper_id == "AbCd1234"
    assert loaded.header.agent is not None and loaded.header.agent.name
    claims = {c.claim.claim_id: c for c in loaded.claims}
    c1, c2 = claims["AbCd1234/c1"], claims["AbCd1234/c2"]
    assert c1.claim.verdict is Verdict.verified and c1.claim.kind.value == "figure"
    assert c1.claim.provenance["verdict"].how == "declared"
    assert c1.claim.reproduced_value == 0.51
    assert c1.claim.provenance["reproduced_value"].quote in \
        (made / ".trackio/logbook/pages/claim-1-loss-halves/page.md").read_text()
    assert any(f.name == "figure_match_not_applicable" for f in c1.flags)
    logs = [out / p for p in c1.claim.evidence.logs]
    assert len(logs) == 2
    assert "exit code: 3" in logs[0].read_text()
    assert "exit code: -15" in logs[1].read_text()
    assert (out / c1.claim.reproduced_figure).is_file()
    assert c2.claim.toy and c2.claim.verdict is Verdict.verified
    assert c2.claim.scale_note.startswith("toy: ")
    assert "raw-data plot): decoded" in c2.claim.justification
    assert "(raw data): data-only" in c2.claim.justification
    # nothing was written into the source folder
    assert not list(made.rglob("figures"))


@needs_trackio
def test_judging_run_end_to_end_on_a_trackio_logbook(made: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(made), "--out", str(out), "--judge",
                                       "offline"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    judged = {line["claim"]["claim_id"] for line in lines if line["status"] != "error"}
    assert {"AbCd1234/c1", "AbCd1234/c2"} <= judged
    # figure-match is not applicable (no published figure): only the verdict rubric judged
    assert {line["rubric"]["id"] for line in lines} == {"verdict-justification"}
    assert (out / "logbooks").is_dir()


def write_page(root: Path, slug: str, text: str) -> None:
    (root / "pages" / slug).mkdir(parents=True, exist_ok=True)
    (root / "pages" / slug / "page.md").write_text(text)


def cell(kind: str, title: str = "", **meta: object) -> str:
    header = json.dumps({"type": kind, "id": f"c{len(title)}", "title": title, **meta})
    return f"\n---\n<!-- trackio-cell\n{header}\n-->\n"


@pytest.fixture
def handmade(tmp_path: Path) -> Path:
    root = tmp_path / "published"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "index.md").write_text(
        "# Reproduction: X\n\n## Pages\n\n| Page |\n| --- |\n| [Summary](#/summary) |\n"
        "| [Claim 1](#/claim-1-a) |\n| [Claim 2](#/claim-2-b) |\n| [Gone](#/claim-9-gone) |\n"
        "| [Bad](#/claim-3-bad) |\n")
    (root / "logbook.json").write_text(json.dumps({"space_id": "alice/repro-x",
                                                   "tags": ["paper-Xyz12345"]}))
    png = base64.b64encode(png_bytes()).decode()
    write_page(root, "summary", "# Summary\nText before the first cell." + cell("markdown")
               + "| Claim | Verdict |\n|---|---|\n| C1 | VERIFIED |\n| C2 | FAIL |\n"
               + f"![hot](https://example.org/fig.png)\n![inline](data:image/png;base64,{png})\n")
    write_page(root, "claim-1-a", "# Claim 1: a\n\nNo cell markers here.\n\n"
               "**Verdict: FAIL** at first.\n\nThen fixed.\n\n**Verdict: VERIFIED**\n")
    write_page(root, "claim-2-b", "# Claim 2: b" + cell("markdown", "Result")
               + "Verdict: NOT REPLICATED. The paper reports 1.5; measured 0.9.\n")
    write_page(root, "claim-3-bad", "# Claim 3\n---\n<!-- trackio-cell\n{not json\n-->\nx\n")
    write_page(root, "orphan-page", "# Old\n**FALSIFIED**\n")
    return root


def test_page_order_orphans_dangling_and_cells(handmade: Path) -> None:
    logbook = read_logbook(handmade)
    assert logbook.order_from == "index"
    assert [p.slug for p in logbook.pages][:3] == ["summary", "claim-1-a", "claim-2-b"]
    assert any("dangling" in w and "claim-9-gone" in w for w in logbook.warnings)
    assert any("orphan" in w and "orphan-page" in w for w in logbook.warnings)
    summary = logbook.pages[0]
    assert summary.cells[0].type == "preamble" and "before the first" in summary.cells[0].body
    cellless = logbook.pages[1]
    assert not cellless.has_markers and len(cellless.cells) == 1
    bad = next(p for p in logbook.pages if p.slug == "claim-3-bad")
    assert bad.error and "JSON" in bad.error


def test_logbook_order_from_manifest_then_folder(tmp_path: Path) -> None:
    root = tmp_path / "lb"
    write_page(root, "b", "# B\n")
    write_page(root, "a", "# A\n")
    assert read_logbook(root).order_from == "folder listing"
    (root / "logbook.json").write_text(json.dumps(
        {"root": {"children": [{"slug": "b"}, {"slug": "a"}]}}))
    logbook = read_logbook(root)
    assert logbook.order_from == "logbook.json" and [p.slug for p in logbook.pages] == ["b", "a"]


def test_claims_contradiction_and_bad_page_from_a_published_logbook(handmade: Path,
                                                                     tmp_path: Path) -> None:
    loaded = load_folder(handmade, logbooks_dir=tmp_path / "out")
    claims = {c.claim.claim_id: c for c in loaded.claims}
    assert loaded.header.submission_id == "alice/repro-x"
    c1 = claims["Xyz12345/c1"]
    # two labels of one cell that disagree, with no order in time: left for the judge, never
    # resolved by their position on the page
    assert c1.claim.verdict is None and "conflicting labels" in c1.claim.absent["verdict"]
    assert any(f.name == "self_contradiction" and "FAIL" in f.detail for f in c1.flags)
    c2 = claims["Xyz12345/c2"]
    assert c2.claim.verdict is Verdict.inconclusive
    assert c2.claim.reported_value == 1.5 and c2.claim.reproduced_value == 0.9
    assert c2.claim.provenance["reproduced_value"].place == "sentence pairing both"
    assert c2.claim.provenance["claim_id"].how == "declared"
    assert [p for p in loaded.problems if "claim-3-bad" in p.reason]
    # the index links a claim page that is not there: a claim recorded with "page absent"
    gone = claims["Xyz12345/c9"]
    assert gone.claim.verdict is None and "page absent" in gone.claim.absent["verdict"]
    assert any(f.name == "page_absent" for f in gone.flags)
    assert not list(handmade.rglob("*.png"))


def test_claims_table_rows_and_figures_of_a_summary_page(handmade: Path, tmp_path: Path
                                                         ) -> None:
    for slug in ("claim-1-a", "claim-2-b", "claim-3-bad"):
        shutil.rmtree(handmade / "pages" / slug)
    (handmade / "pages" / "index.md").write_text(
        "# Reproduction: X\n\n## Pages\n\n| Page |\n| --- |\n| [Summary](#/summary) |\n")
    loaded = load_folder(handmade, logbooks_dir=tmp_path / "out")
    claims = {c.claim.claim_id: c.claim for c in loaded.claims}
    assert claims["Xyz12345/c1"].verdict is Verdict.verified
    assert claims["Xyz12345/c2"].verdict is Verdict.falsified
    assert claims["Xyz12345/c1"].provenance["verdict"].how == "declared"
    justification = claims["Xyz12345/c1"].justification
    assert "not fetched https://example.org/fig.png" in justification
    assert "decoded" in justification


def test_a_claim_without_verdict_is_judged_with_verdict_criteria_unscored(tmp_path: Path) -> None:
    root = tmp_path / "lb"
    write_page(root, "claim-1-x", "# Claim 1: x" + cell("markdown") + "We ran things.\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(root), "--out", str(out), "--judge",
                                       "offline"])
    assert result.exit_code == 0, result.output
    line = json.loads((out / "judgments.jsonl").read_text().splitlines()[0])
    assert line["status"] != "error" and line["verdict"] is None
    answers = {a["criterion_id"]: a for a in line["answers"]}
    assert answers["proof_for_falsified"]["status"] == "unscored"
    assert "verdict was not found" in answers["proof_for_falsified"]["reason"]


def test_expand_source_finds_nested_workspaces(tmp_path: Path) -> None:
    for name in ("one", "two"):
        write_page(tmp_path / "all" / name / "logbook" / ".trackio" / "logbook", "claim-1-a",
                   "# Claim 1\n")
    assert [p.name for p in expand_source(str(tmp_path / "all"), download_root=tmp_path)] == \
        ["one", "two"]
    assert expand_source(str(tmp_path / "all" / "one"), download_root=tmp_path) == \
        [tmp_path / "all" / "one"]


@pytest.mark.parametrize(("label", "verdict", "toy"), [
    ("Aligned", Verdict.verified, False), ("CONFIRMED", Verdict.verified, False),
    ("mixed", Verdict.inconclusive, False), ("PARTIAL / BLOCKED.", Verdict.inconclusive, False),
    ("TOY-VERIFIED", Verdict.verified, True), ("NOT REPLICATED", Verdict.inconclusive, False),
    ("[PASS]", Verdict.verified, False), ("FALSIFIED AS STATED.", Verdict.falsified, False),
    ("NOT_REPRODUCED", Verdict.inconclusive, False), ("toy", Verdict.inconclusive, True),
])
def test_verdict_table(label: str, verdict: Verdict, toy: bool) -> None:
    mapped = map_verdict(label)
    assert (mapped.verdict, mapped.toy) == (verdict, toy)
