"""The irregular logbook shapes found in unseen real sets (issue 26, item 5), each built here: a
workspace made with the real trackio CLI and then edited by hand the way participants did, or
pages written by hand."""

from __future__ import annotations

import base64
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from judging.intake import load_folder
from judging.intake.logbook import read_logbook
from judging.models import Verdict
from tests.intake.test_logbook import cell, png_bytes, trackio_or_skip, write_page
from tests.trackio_batch import tk_batch


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A trackio workspace: claim 1 with its verdict only in a cell title, claim 2 whose verdict
    changes down the page (a later cell), claim 3 with no verdict of its own, a page holding
    claims 4 and 5 as sections; `metadata.json` without tags (the paper tag is in
    logbook.json)."""
    trackio_or_skip()
    ws = tmp_path_factory.mktemp("shapes")
    # Two trackio interpreters (tests/trackio_batch.py): the second a second after the first.
    first = tk_batch(
        ws, ["open", "--no-serve", "--title", "Reproduction: Shapes"],
        *(["page", title] for title in ("Claim 1: bound holds", "Claim 2: rate",
                                         "Claim 3: scaling", "Claim 4 and Claim 5: shared setup")),
        ["cell", "markdown", "--page", "claim-1-bound-holds", "--title", "Falsified",
         "The bound fails at n=3: the ratio is 1.4."],
        ["cell", "markdown", "--page", "claim-2-rate", "--title", "First run",
         "**Verdict: FAILED** on the small grid."])
    time.sleep(1.1)  # the next cell is written a second later: a later verdict, not a conflict
    second = tk_batch(
        ws, ["cell", "markdown", "--page", "claim-2-rate", "--title", "Full grid",
             "**Verdict: VERIFIED** on the full grid."],
        ["cell", "markdown", "--page", "claim-3-scaling", "--title", "Run",
         "We ran the scaling sweep."],
        ["cell", "markdown", "--page", "claim-4-and-claim-5-shared-setup", "--title", "Two claims",
         "## Claim 4: first\n\n**Verdict: VERIFIED**\n\n## Claim 5: second\n\n"
         "**Verdict: INCONCLUSIVE**\n"])
    assert [done.returncode for done in first + second] == [0] * 10
    book = ws / ".trackio" / "logbook"
    manifest = json.loads((book / "logbook.json").read_text())
    manifest["tags"] = ["icml2026-repro", "paper-Shape0001"]
    (book / "logbook.json").write_text(json.dumps(manifest))
    assert "tags" not in json.loads((ws / ".trackio" / "metadata.json").read_text())
    return ws


def _copy(ws: Path, tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(ws, target)
    return target


def _claims(ws: Path, tmp_path: Path):
    loaded = load_folder(ws, logbooks_dir=tmp_path / "out")
    return loaded, {c.claim.claim_id: c for c in loaded.claims}


def test_trackio_shapes_titles_changes_two_claims_and_a_tagless_metadata(built: Path,
                                                                         tmp_path: Path
                                                                         ) -> None:
    loaded, claims = _claims(_copy(built, tmp_path), tmp_path)
    # metadata.json without tags: the paper id from logbook.json
    assert loaded.header.paper_id == "Shape0001"
    assert set(claims) == {f"Shape0001/c{n}" for n in (1, 2, 3, 4, 5)}
    c1 = claims["Shape0001/c1"].claim
    assert c1.verdict is Verdict.falsified and c1.provenance["verdict"].place == "cell title"
    c2 = claims["Shape0001/c2"]
    assert c2.claim.verdict is Verdict.verified
    [changed] = [f for f in c2.flags if f.name == "verdict_changed"]
    assert "FAILED" in changed.detail and "VERIFIED" in changed.detail
    c3 = claims["Shape0001/c3"].claim
    assert c3.verdict is None and c3.absent["verdict"]
    # two claims on one page: its sections
    assert claims["Shape0001/c4"].claim.verdict is Verdict.verified
    assert claims["Shape0001/c5"].claim.verdict is Verdict.inconclusive
    assert claims["Shape0001/c4"].origin.endswith("section 1")


def test_a_claims_table_before_pages_and_links_as_page_md(built: Path, tmp_path: Path) -> None:
    ws = _copy(built, tmp_path)
    index = ws / ".trackio" / "logbook" / "pages" / "index.md"
    head, pages = index.read_text().split("## Pages", 1)
    pages = pages.replace("(#/claim-3-scaling)", "(pages/claim-3-scaling/page.md)")
    index.write_text(head + "## Claims\n\n| Claim | Verdict |\n|---|---|\n| C3 | CONFIRMED |\n"
                     "| C1 | FALSIFIED |\n\n## Pages" + pages)
    logbook = read_logbook(ws)
    assert logbook.order_from == "index"
    assert not [w for w in logbook.warnings if "orphan" in w]  # pages/<slug>/page.md links
    loaded, claims = _claims(ws, tmp_path)
    c3 = claims["Shape0001/c3"].claim
    # the page states none: the index's claims table does (a lower tier)
    assert c3.verdict is Verdict.verified
    assert c3.provenance["verdict"].place == "claims table on index"


def test_a_cell_header_never_closed_is_read_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "lb"
    write_page(root, "claim-1-a", "# Claim 1: a\n\n---\n<!-- trackio-cell\n"
               '{"type": "markdown", "id": "c1", "title": "Result"}\n'
               "**Verdict: VERIFIED** and the rest of the page.\n")
    loaded, claims = _claims(root, tmp_path)
    assert claims["lb/c1"].claim.verdict is Verdict.verified
    assert any("never closed" in w for w in loaded.header.warnings)


def test_an_orphan_page_newer_than_the_listed_one_is_judged(tmp_path: Path) -> None:
    root = tmp_path / "lb"
    (root / "pages").mkdir(parents=True)
    (root / "logbook.json").write_text(json.dumps({"tags": ["paper-Orph0001"]}))
    (root / "pages" / "index.md").write_text(
        "# Reproduction: O\n\n## Pages\n\n| Page |\n| --- |\n| [Claim 1](#/claim-1-old) |\n")
    write_page(root, "claim-1-old", "# Claim 1: old"
               + cell("markdown", "r", created_at="2026-07-01T10:00:00+00:00")
               + "**Verdict: FALSIFIED**\n")
    write_page(root, "claim-1-new", "# Claim 1: new"
               + cell("markdown", "r", created_at="2026-07-09T10:00:00+00:00")
               + "**Verdict: VERIFIED**\n")
    loaded, claims = _claims(root, tmp_path)
    assert claims["Orph0001/c1"].origin == "pages/claim-1-new/page.md"
    assert claims["Orph0001/c1"].claim.verdict is Verdict.verified
    assert any("claim-1-old" in w and "not judged" in w for w in loaded.header.warnings)
    # an orphan that is not newer loses to the listed page
    (root / "pages" / "claim-1-new" / "page.md").write_text(
        "# Claim 1: new" + cell("markdown", "r", created_at="2026-06-01T10:00:00+00:00")
        + "**Verdict: VERIFIED**\n")
    loaded, claims = _claims(root, tmp_path)
    assert claims["Orph0001/c1"].origin == "pages/claim-1-old/page.md"


def test_one_image_on_several_pages_and_a_1mb_poster_page(tmp_path: Path) -> None:
    root = tmp_path / "lb"
    png = base64.b64encode(png_bytes()).decode()
    for n in (1, 2, 3):
        write_page(root, f"claim-{n}-x", f"# Claim {n}: x" + cell("figure", "fig")
                   + f'```html\n<img src="data:image/png;base64,{png}">\n```\n'
                   + cell("markdown") + "**Verdict: VERIFIED**\n")
    poster = base64.b64encode(os.urandom(700_000)).decode()
    write_page(root, "conclusion", "# Conclusion" + cell("figure", "Poster", poster=True)
               + f'```html\n<img src="data:image/webp;base64,{poster}">\n```\n'
               + cell("markdown") + "All three claims hold.\n")
    assert (root / "pages" / "conclusion" / "page.md").stat().st_size > 900_000
    start = time.monotonic()
    loaded, claims = _claims(root, tmp_path)
    assert time.monotonic() - start < 60
    assert len(claims) == 3 and all(c.claim.kind.value == "figure" for c in claims.values())
    # the same image on every claim page is specific to none of them
    for claim in claims.values():
        [flag] = [f for f in claim.flags if f.name == "figure_reused"]
        assert "claim-" in flag.detail
    assert not [p for p in loaded.problems]


def test_a_repository_readme_that_disagrees_with_the_logbook_is_flagged(tmp_path: Path
                                                                        ) -> None:
    repo = tmp_path / "repo"
    book = repo / ".trackio" / "logbook"
    write_page(book, "claim-c4-count", "# Claim C4 — count" + cell("markdown", "Falsified")
               + "B = C n^2 is not Theta(log n).\n")
    (repo / ".trackio" / "metadata.json").write_text(json.dumps({"tags": ["paper-Read0001"]}))
    (repo / "README.md").write_text("# Audit\n\n| Claim | Verdict |\n|---|---|\n"
                                    "| C4 | **VERIFIED, HIGH.** |\n")
    loaded, claims = _claims(repo, tmp_path)
    claim = claims["Read0001/c4"]
    assert claim.claim.verdict is Verdict.falsified  # the logbook's verdict stands
    [flag] = [f for f in claim.flags if f.name == "readme_disagrees"]
    assert "VERIFIED" in flag.detail
