"""Manifest validation, per-claim problems and path confinement."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from judging.errors import ManifestError, SourceError
from judging.intake.manifest import load_submission
from judging.intake.registry import load_registry
from judging.intake.sources import expand_source
from judging.models import ClaimKind, ReferenceOrigin
from tests.conftest import REGISTRY, SUBMISSIONS, SubmissionBuilder


def test_examples_load_completely() -> None:
    registry = load_registry(REGISTRY)
    claims, problems = [], []
    for folder in expand_source(str(SUBMISSIONS), download_root=Path("/nonexistent")):
        loaded = load_submission(folder, registry=registry)
        claims += loaded.claims
        problems += loaded.problems
    assert problems == []
    assert len(claims) == 14
    kinds = {c.claim.kind for c in claims}
    assert kinds == {ClaimKind.figure, ClaimKind.number, ClaimKind.table, ClaimKind.theorem}
    # Two submissions reproduce the same registry claim: two claim keys.
    same = [c.key for c in claims if c.claim.claim_id == "neurips26-4821/c1"]
    assert len(same) == 2 and len(set(same)) == 2


def test_a_bad_claim_is_reported_and_the_others_load(submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c1")
    bad = submission.number_claim("paper-1/c2")
    del bad["verdict"]
    submission.number_claim("paper-1/c3")
    loaded = load_submission(submission.write())
    assert [c.claim.claim_id for c in loaded.claims] == ["paper-1/c1", "paper-1/c3"]
    (problem,) = loaded.problems
    assert problem.claim_id == "paper-1/c2"
    assert "verdict" in problem.reason and "Field required" in problem.reason
    assert problem.line is not None and problem.line > 1


def test_problem_line_points_at_the_bad_field(submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c1", tolerance={"absolute": 0.5, "relative": 0.1})
    folder = submission.write()
    loaded = load_submission(folder)
    (problem,) = loaded.problems
    lines = (folder / "submission.yaml").read_text().splitlines()
    assert "exactly one" in problem.reason
    assert lines[problem.line - 1].strip().startswith("tolerance")


def test_unknown_field_is_named(submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c1", reproduced_valeu=93.8)
    (problem,) = load_submission(submission.write()).problems
    assert "unknown field" in problem.reason and "reproduced_valeu" in problem.reason


@pytest.mark.parametrize("path, message", [
    ("../outside.txt", "'..'"),
    ("logs/../../outside.txt", "'..'"),
    ("/etc/passwd", "absolute"),
    ("C:\\Windows\\win.ini", "absolute"),
])
def test_paths_must_stay_inside(submission: SubmissionBuilder, path: str, message: str) -> None:
    claim = submission.number_claim("paper-1/c1")
    claim["evidence"]["logs"] = [path]
    submission.number_claim("paper-1/c2")
    loaded = load_submission(submission.write())
    assert [c.claim.claim_id for c in loaded.claims] == ["paper-1/c2"]
    assert message in loaded.problems[0].reason


def test_symlink_escaping_the_folder_is_refused(submission: SubmissionBuilder,
                                                tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("token=abc")
    submission.number_claim("paper-1/c1")
    claim = submission.number_claim("paper-1/c2")
    os.symlink(secret, submission.root / "logs" / "link.txt")
    claim["evidence"]["logs"] = ["logs/link.txt"]
    loaded = load_submission(submission.write())
    assert [c.claim.claim_id for c in loaded.claims] == ["paper-1/c1"]
    assert "resolves outside" in loaded.problems[0].reason


def test_symlink_inside_the_folder_is_fine(submission: SubmissionBuilder) -> None:
    claim = submission.number_claim("paper-1/c1")
    os.symlink("run.txt", submission.root / "logs" / "alias.txt")
    claim["evidence"]["logs"] = ["logs/alias.txt"]
    loaded = load_submission(submission.write())
    assert loaded.problems == []
    assert loaded.claims[0].evidence_paths["logs[0]"].name == "run.txt"


def test_duplicate_claim_ids(submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c1")
    submission.number_claim("paper-1/c1", reproduced=90.0)
    loaded = load_submission(submission.write())
    assert len(loaded.claims) == 1 and loaded.claims[0].claim.reproduced_value == 93.8
    assert "duplicate claim_id" in loaded.problems[0].reason


@pytest.mark.parametrize("claim, message", [
    ({"kind": "figure", "verdict": "verified", "published_figure": "a.png"}, "reproduced_figure"),
    ({"kind": "number", "verdict": "verified", "reported_value": 1.0}, "reproduced_value"),
    ({"kind": "theorem", "verdict": "verified", "reported_value": 1.0}, "no reported"),
    ({"kind": "number", "verdict": "verified", "reproduced_value": float("nan")}, "finite"),
    ({"kind": "number", "verdict": "maybe", "reproduced_value": 1.0}, "verdict"),
    ({"kind": "table", "verdict": "verified", "values": []}, "at least one"),
    ({"kind": "number", "verdict": "falsified", "reproduced_value": 1.0,
      "evidence": {"problem_kind": "other"}}, "problem_note"),
    ({"kind": "number", "verdict": "verified", "reproduced_value": 1.0,
      "justification": "x" * 20_001}, "at most 20000"),
])
def test_claim_rules(submission: SubmissionBuilder, claim: dict, message: str) -> None:
    submission.claims.append({"claim_id": "paper-1/c9", "statement": "s", **claim})
    (problem,) = load_submission(submission.write()).problems
    assert message in problem.reason


def test_inconclusive_claims_may_lack_results(submission: SubmissionBuilder) -> None:
    submission.claims.append({"claim_id": "paper-1/c1", "kind": "figure", "statement": "s",
                              "verdict": "inconclusive", "justification": "OOM at step 10"})
    loaded = load_submission(submission.write())
    assert loaded.problems == [] and loaded.claims[0].reproduced_path is None


@pytest.mark.parametrize("text, message", [
    ("- just\n- a list\n", "must be a mapping"),
    ("submission_id: a/b\nclaims: []\n", "paper_id"),
    ("submission_id: a/b\npaper_id: p\nclaims: {}\n", "'claims' must be a list"),
    ("submission_id: a/b\npaper_id: p\nclaims: [\n", "not valid YAML"),
    ("base: &b {x: 1}\nsubmission_id: a/b\npaper_id: p\nclaims: [*b]\n", "anchors and aliases"),
    ("submission_id: 'a b c'\npaper_id: p\nclaims: []\n", "submission_id"),
])
def test_manifest_level_errors(submission: SubmissionBuilder, text: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message) as caught:
        load_submission(submission.write(raw=text))
    assert "submission.yaml" in str(caught.value)


def test_invalid_utf8_manifest(submission: SubmissionBuilder) -> None:
    submission.write(raw="")
    (submission.root / "submission.yaml").write_bytes(b"submission_id: \xff\xfe\n")
    with pytest.raises(ManifestError, match="not valid UTF-8"):
        load_submission(submission.root)


def test_json_manifest(submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c1")
    submission.write(raw=json.dumps({**submission.header, "claims": submission.claims}),
                     name="submission.json")
    loaded = load_submission(submission.root)
    assert [c.claim.claim_id for c in loaded.claims] == ["paper-1/c1"]
    assert loaded.claims[0].reference is ReferenceOrigin.participant


def test_expand_source_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such folder"):
        expand_source(str(tmp_path / "missing"), download_root=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="no submission manifest"):
        expand_source(str(tmp_path / "empty"), download_root=tmp_path)


def test_duplicate_yaml_keys_are_refused(submission: SubmissionBuilder) -> None:
    text = ("submission_id: a/b\npaper_id: p\nclaims:\n- claim_id: p/c1\n  kind: number\n"
            "  statement: s\n  verdict: verified\n  reproduced_value: 1.0\n  verdict: falsified\n")
    with pytest.raises(ManifestError, match=r"submission.yaml:9: duplicate key 'verdict' "
                                            r"\(first at line 7\)"):
        load_submission(submission.write(raw=text))


def test_subfolders_without_a_manifest_are_reported(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    good = SubmissionBuilder(tmp_path / "all" / "good")
    good.number_claim()
    good.write()
    (tmp_path / "all" / "typo").mkdir()
    (tmp_path / "all" / "typo" / "submision.yaml").write_text("x: 1")
    assert expand_source(str(tmp_path / "all"), download_root=tmp_path) == [good.root]
    assert "typo" in caplog.text and "without a submission.yaml" in caplog.text


def test_figure_data_paths_are_resolved_inside_the_submission(
        submission: SubmissionBuilder) -> None:
    submission.figure_claim("paper-1/f1", published=b"png", reproduced=b"png",
                            reproduced_data=submission.file("figures/repro.csv", "x,y\n1,2\n"),
                            published_data=submission.file("figures/paper.json", "{}"))
    submission.figure_claim("paper-1/f2", published=b"png", reproduced=b"png",
                            reproduced_data="../outside.csv")
    submission.number_claim("paper-1/c3", reproduced_data="figures/repro.csv")
    folder = submission.write()
    loaded = load_submission(folder)
    (claim,) = loaded.claims
    assert claim.reproduced_data_path == (folder / "figures/repro.csv").resolve()
    assert claim.published_data_path == (folder / "figures/paper.json").resolve()
    reasons = {p.claim_id: p.reason for p in loaded.problems}
    assert "'..'" in reasons["paper-1/f2"] and "reproduced_data" in reasons["paper-1/f2"]
    assert "for figure claims, not number" in reasons["paper-1/c3"]


def test_a_figure_claim_without_data_has_no_data_paths(submission: SubmissionBuilder) -> None:
    submission.figure_claim("paper-1/f1", published=b"png", reproduced=b"png")
    (claim,) = load_submission(submission.write()).claims
    assert claim.published_data_path is None and claim.reproduced_data_path is None
