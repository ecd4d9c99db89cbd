"""A Space's claims-table row with no claim number of its own meets the registry claim it names
(issue 40): a cell "c1", "claim 2" in its text, or the full id; a row naming several registry
claims, or one another claim already is, stays unmatched with the reason as a flag; a bare "C4"
in a row's text (a corpus's name as often as a claim's) names nothing."""

from __future__ import annotations

from pathlib import Path

import yaml

from judging.intake import load_folder, load_registry

ARXIV = "2508.18741"
PAPER = "neurips26-4821"


def space(tmp_path: Path, rows: list[str]) -> Path:
    folder = tmp_path / "space"
    folder.mkdir()
    (folder / "README.md").write_text(
        f"---\ntitle: Slopes\nsdk: static\ntags:\n  - arxiv:{ARXIV}\n---\n\n# Slopes\n\n"
        "| Claim | Registry claim | Paper | Ours | Verdict |\n|---|---|---|---|---|\n"
        + "".join(f"{row}\n" for row in rows))
    return folder


def registry(tmp_path: Path) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({
        "papers": [{"paper_id": PAPER, "arxiv": ARXIV}],
        "claims": [{"claim_id": f"{PAPER}/c{n}", "paper_id": PAPER, "kind": "number",
                    "statement": f"Registry statement {n}.", "reported_value": float(n)}
                   for n in (1, 2, 3, 4)]}))
    return path


def claims_of(tmp_path: Path, rows: list[str], *, with_registry: bool = True) -> dict:
    loaded = load_folder(space(tmp_path, rows),
                         registry=load_registry(registry(tmp_path)) if with_registry else None)
    return {c.claim.claim_id: c for c in loaded.claims}


def test_a_row_naming_one_registry_claim_is_that_claim(tmp_path: Path) -> None:
    claims = claims_of(tmp_path, [
        "| The slope is one | c1 | 1.0 | 0.98 | ✅ |",
        "| The intercept holds (claim 2) | - | 2.0 | 2.9 | ❌ |",
        f"| The third holds | {PAPER}/c3 | 3.0 | 3.0 | ✅ |",
    ])
    assert set(claims) == {f"{PAPER}/c1", f"{PAPER}/c2", f"{PAPER}/c3"}
    c1 = claims[f"{PAPER}/c1"]
    assert c1.reference.value == "registry"
    assert c1.claim.statement == "Registry statement 1."
    assert c1.claim.verdict.value == "verified" and c1.claim.reproduced_value == 0.98
    id_from = c1.claim.provenance["claim_id"]
    assert (id_from.how, id_from.quote) == ("declared", "c1")
    assert id_from.place == "registry claim named in the table row"
    assert claims[f"{PAPER}/c2"].claim.provenance["claim_id"].quote == \
        "The intercept holds (claim 2)"
    assert claims[f"{PAPER}/c2"].claim.verdict.value == "falsified"
    assert not any(f.name == "registry_claim_unmatched" for c in claims.values() for f in c.flags)


def test_a_row_naming_several_registry_claims_stays_unmatched_with_the_reason(tmp_path: Path
                                                                              ) -> None:
    claims = claims_of(tmp_path, ["| Both hold | c1, c2 | 1.0 | 1.0 | ✅ |"])
    [(claim_id, claim)] = claims.items()
    assert claim_id == f"{PAPER}/README-r1" and claim.reference.value == "participant-supplied"
    [flag] = [f for f in claim.flags if f.name == "registry_claim_unmatched"]
    assert f"{PAPER}/c1" in flag.detail and f"{PAPER}/c2" in flag.detail


def test_a_registry_claim_already_taken_is_not_given_twice(tmp_path: Path) -> None:
    claims = claims_of(tmp_path, [
        "| C1 The slope is one | - | 1.0 | 0.98 | ✅ |",   # numbered: claim 1 itself
        "| Slope again | c1 | 1.0 | 0.97 | ✅ |",
        "| Intercept | c2 | 2.0 | 2.0 | ✅ |",
        "| Intercept again | claim 2 | 2.0 | 2.1 | ✅ |",
    ])
    assert set(claims) == {f"{PAPER}/c1", f"{PAPER}/README-r2", f"{PAPER}/README-r3",
                           f"{PAPER}/README-r4"}
    assert claims[f"{PAPER}/c1"].claim.reproduced_value == 0.98
    for rid, why in (("r2", "another claim of the submission is that claim"),
                     ("r3", "another row names it too"), ("r4", "another row names it too")):
        [flag] = [f for f in claims[f"{PAPER}/README-{rid}"].flags
                  if f.name == "registry_claim_unmatched"]
        assert why in flag.detail


def test_a_corpus_name_in_the_text_names_no_claim(tmp_path: Path) -> None:
    claims = claims_of(tmp_path, ["| Perplexity on C4 holds | - | 4.0 | 4.1 | ✅ |",
                                  "| Part C2.1 of the second claim | - | 2.0 | 2.0 | ✅ |"])
    assert set(claims) == {f"{PAPER}/README-r1", f"{PAPER}/README-r2"}
    assert all(not c.flags or all(f.name != "registry_claim_unmatched" for f in c.flags)
               for c in claims.values())


def test_without_a_registry_the_row_keeps_its_own_id(tmp_path: Path) -> None:
    claims = claims_of(tmp_path, ["| The slope is one | c1 | 1.0 | 0.98 | ✅ |"],
                       with_registry=False)
    assert set(claims) == {f"{ARXIV}/README-r1"}
