"""A run directory written before files named their schema version (tests/data/rundir-v1, by the
code of commit 3afcaac) is read, resumed without re-judging anything, and reported on; every
versioned model upgrades an old line to its current version."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.calibrate.artifacts import CalibrationArtifact
from judging.cli import main
from judging.hashing import content_hash
from judging.models import (
    ClaimInput,
    Fingerprint,
    Flag,
    IntegrityReport,
    Judgment,
    Label,
    VersionedModel,
)
from judging.resolve.decide import ClaimDecision, RubricDecision
from judging.run.lines import HASHED_ALWAYS, claim_fingerprint
from judging.rundir import (
    RUN_FILES,
    RunInfo,
    RunPaths,
    RunStore,
    flags_by_claim,
    judgments_with_flags,
    read_integrity,
    read_jsonl,
)
from judging.rundir.flags import FLAG_READERS
from judging.rundir.layout import (
    CLAIMS,
    DECISIONS,
    FINAL,
    FINGERPRINTS,
    INTEGRITY,
    JUDGMENTS,
)

from ..conftest import REGISTRY, ROOT, SUBMISSIONS

OLD_RUN = ROOT / "tests" / "data" / "rundir-v1"
OLD_LABELS = ROOT / "calibration" / "sets" / "examples" / "labels.jsonl"
OLD_ARTIFACT = next((OLD_RUN / "calibration" / "artifacts").rglob("*.json"))


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(OLD_RUN, copy)
    return copy


def _inputs_as_judged(where: Path) -> tuple[Path, Path]:
    """The example submissions and registry with the manifests and registry file as the old run
    judged them (kept in rundir-v1/inputs/): the examples have changed since (issue 29 gave three
    number claims a re-run script and the registry a re-run pattern), and a resume re-judges
    claims whose inputs changed, by design. The other files are byte-identical to then."""
    submissions, registry = where / "submissions", where / "registry"
    shutil.copytree(SUBMISSIONS, submissions)
    shutil.copytree(REGISTRY.parent, registry)
    kept = OLD_RUN / "inputs"
    for manifest in kept.glob("*.submission.yaml"):
        folder = manifest.name.removesuffix(".submission.yaml")
        shutil.copyfile(manifest, submissions / folder / "submission.yaml")
    shutil.copyfile(kept / "registry-claims.yaml", registry / REGISTRY.name)
    return submissions, registry / REGISTRY.name


def _first_line(path: Path) -> str:
    return path.read_text(encoding="utf-8").splitlines()[0]


def _model(dotted: str) -> type[VersionedModel]:
    module, name = dotted.split(":")
    return getattr(importlib.import_module(module), name)


# --- the table of files ----------------------------------------------------------------------


def test_the_layout_table_names_each_model_and_its_current_version() -> None:
    for run_file in RUN_FILES:
        model = _model(run_file.model)
        assert issubclass(model, VersionedModel), run_file
        assert model.current_schema() == run_file.schema, run_file
        assert next(iter(model.model_fields)) == "schema_", f"{run_file.name}: version first"
        if run_file.flags_side_file:
            assert run_file.name in FLAG_READERS


# --- reading, resuming and reporting the old run ---------------------------------------------


def test_the_old_run_reads_at_the_current_versions(old_run: Path) -> None:
    store = RunStore.open(old_run, create=False)
    assert store.info.schema_ == "judging.run/1"
    judgments = store.judgments()
    assert len(judgments) == 22
    assert {j.schema_ for j in judgments} == {"judging.judgment/1"}
    claims = store.claims()
    assert len(claims) == 14
    assert {c.schema_ for c in claims.values()} == {"judging.claim/1"}
    fingerprints = store.fingerprints()
    assert len(fingerprints) == 7
    assert {f.schema_ for f in fingerprints.values()} == {"judging.fingerprint/1"}
    assert read_integrity(old_run).schema_ == "judging.integrity/1"
    paths = RunPaths(old_run)
    assert {d.schema_ for d in read_jsonl(paths.decisions, RubricDecision)} == {
        "judging.decision/1"}
    assert {d.schema_ for d in read_jsonl(paths.final, ClaimDecision)} == {"judging.final/1"}
    assert CalibrationArtifact.from_file(OLD_ARTIFACT.read_bytes()).schema_ == \
        "judging.calibration/1"


def test_the_claim_fingerprint_is_the_one_old_runs_were_hashed_with(old_run: Path) -> None:
    # The resume below proves the recorded input hashes equal recomputed ones; this names why:
    # every field of the old claims enters as before (as the old run wrote it: fields added to
    # the models since, unset here, stay out), and the version does not enter at all.
    written = {}
    for line in (old_run / "claims.jsonl").read_text().splitlines():
        raw = json.loads(line)
        written[f"{raw['key']['submission_id']}::{raw['key']['claim_id']}"] = raw
    for claim in RunStore.open(old_run, create=False).claims().values():
        raw = written[str(claim.key)]
        old_view = {"key": str(claim.key),
                    "submission": raw["submission"],
                    "claim": raw["claim"],
                    "reference": claim.reference.value,
                    "flags": raw.get("flags", [])}
        new_view = claim_fingerprint(claim)
        assert {k: v for k, v in new_view.items() if k != "files"} == old_view
        assert "schema" not in json.dumps(new_view)


def test_resuming_the_old_run_rejudges_nothing_and_reports(old_run: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    # Judged with the rubrics the old run names (a newer default rubric adds its own lines).
    paths = RunPaths(old_run)
    before = paths.judgments.read_bytes()
    # The signals version is part of every input hash, by design: a run measured with other
    # signal definitions is re-judged. The format is what this test is about, so the code
    # measures as the old run did (its recorded version).
    recorded = json.loads(paths.run_json.read_text())["invocations"][0]["options"]["signals"]
    monkeypatch.setattr("judging.run.measure.SIGNALS_VERSION", recorded)
    submissions, registry = _inputs_as_judged(old_run.parent / "inputs")
    result = CliRunner().invoke(main, ["run", str(submissions), "--claims", str(registry),
                                       "--out", str(old_run), "--judge", "offline",
                                       "--rubric", "figure-match@1.2.0",
                                       "--rubric", "verdict-justification@1.0.0"])
    assert result.exit_code == 0, result.output
    assert "0 new judgment line(s), 22 already done (resumed)" in result.output
    assert paths.judgments.read_bytes() == before  # not a line re-judged, none rewritten
    info = RunInfo.from_file(paths.run_json.read_bytes())
    assert len(info.invocations) == 2
    assert info.invocations[-1].counts["written"] == 0
    assert info.invocations[-1].counts["skipped"] == 22
    # Files rewritten by the resume carry their version now.
    assert json.loads(paths.run_json.read_text())["schema"] == "judging.run/1"
    assert json.loads(paths.integrity.read_text())["schema"] == "judging.integrity/1"
    assert all(json.loads(line)["schema"] == "judging.claim/1"
               for line in paths.claims.read_text().splitlines()[14:])

    report = CliRunner().invoke(main, ["report", str(old_run)])
    assert report.exit_code == 0, report.output
    html = paths.report.read_text(encoding="utf-8")
    assert "neurips26-4821/c1" in html and "iclr27-0137/c5" in html


# --- one old line per model: it validates and comes out at the current version ---------------


OLD_LINES = {
    Judgment: lambda: _first_line(OLD_RUN / JUDGMENTS),
    ClaimInput: lambda: _first_line(OLD_RUN / CLAIMS),
    Fingerprint: lambda: _first_line(OLD_RUN / FINGERPRINTS),
    IntegrityReport: lambda: (OLD_RUN / INTEGRITY).read_text(),
    Label: lambda: _first_line(OLD_LABELS),
    RubricDecision: lambda: _first_line(OLD_RUN / DECISIONS),
    ClaimDecision: lambda: _first_line(OLD_RUN / FINAL),
    RunInfo: lambda: (OLD_RUN / "run.json").read_text(),
    CalibrationArtifact: lambda: OLD_ARTIFACT.read_text(),
}


@pytest.mark.parametrize("model", list(OLD_LINES), ids=lambda m: m.__name__)
def test_an_old_line_comes_out_at_the_current_version(model: type[VersionedModel]) -> None:
    old = OLD_LINES[model]()
    raw = json.loads(old)
    loaded = model.from_file(old)
    assert loaded.schema_ == model.current_schema()
    written = json.loads(loaded.model_dump_json())
    assert next(iter(written)) == "schema"
    assert written["schema"] == model.current_schema()
    # Nothing but the version is added, nothing is lost.
    assert {k: v for k, v in written.items() if k != "schema"} == \
        json.loads(model.model_validate({k: v for k, v in raw.items() if k != "schema"},
                                        context={"judging.from_file": True}).model_dump_json(
        exclude={"schema_"}))
    assert model.from_file(loaded.model_dump_json()) == loaded


def test_models_built_in_code_are_at_the_current_version() -> None:
    line = Fingerprint.model_validate({"claim": {"submission_id": "a", "claim_id": "b"},
                                       "phash": "00"})
    assert line.schema_ == "judging.fingerprint/1"
    assert json.loads(line.model_dump_json())["schema"] == "judging.fingerprint/1"


@pytest.mark.parametrize("schema", ["judging.fingerprint/2", "judging.claim/1", 3])
def test_an_unknown_or_foreign_version_is_refused(schema: object) -> None:
    line = json.dumps({"schema": schema, "claim": {"submission_id": "a", "claim_id": "b"},
                       "phash": "00"})
    with pytest.raises(ValueError, match="schema"):
        Fingerprint.from_file(line)


# --- input hashes ----------------------------------------------------------------------------


def test_a_new_optional_field_stays_out_of_input_hashes_until_set(old_run: Path) -> None:
    claim = next(iter(RunStore.open(old_run, create=False).claims().values()))
    claim_model = type(claim.claim)
    assert claim_model in HASHED_ALWAYS

    class LaterClaim(claim_model):  # the claim model once a new optional field is added
        reviewer_note: str | None = None

    later = LaterClaim.model_validate(claim.claim.model_dump())
    unset = claim.model_copy(update={"claim": later})
    assert content_hash(claim_fingerprint(unset)) == content_hash(claim_fingerprint(claim))
    used = claim.model_copy(update={"claim": later.model_copy(update={"reviewer_note": "x"})})
    assert content_hash(claim_fingerprint(used)) != content_hash(claim_fingerprint(claim))


def test_figure_data_enters_input_hashes_only_when_a_claim_has_it(old_run: Path,
                                                                   tmp_path: Path) -> None:
    claims = RunStore.open(old_run, create=False).claims().values()
    claim = next(c for c in claims if c.claim.kind.value == "figure")
    before = claim_fingerprint(claim)
    assert "reproduced_data" not in before["claim"] and "reproduced_data" not in before["files"]
    data = tmp_path / "repro.csv"
    data.write_text("x,y\n1,2\n")
    used = claim.model_copy(update={
        "claim": claim.claim.model_copy(update={"reproduced_data": "repro.csv"}),
        "reproduced_data_path": data})
    after = claim_fingerprint(used)
    assert after["claim"]["reproduced_data"] == "repro.csv"
    assert after["files"]["reproduced_data"].startswith("sha256:")
    assert content_hash(after) != content_hash(before)


# --- side files of flags ---------------------------------------------------------------------


def test_flags_of_every_side_file_are_merged_on_read(old_run: Path) -> None:
    store = RunStore.open(old_run, create=False)
    first = store.latest()[0]
    report = IntegrityReport.model_validate({"figures": 2, "pairs": [{
        "kind": "duplicate_figure", "a": first.claim.model_dump(),
        "b": {"submission_id": "someone/else", "claim_id": "x"}, "score": 3.0}]})
    RunPaths(old_run).integrity.write_text(report.model_dump_json(), encoding="utf-8")
    flags = flags_by_claim(old_run)
    assert [f.name for f in flags[str(first.claim)]] == ["duplicate_figure"]
    merged = judgments_with_flags(old_run, [first])[0]
    assert merged.flags[-1] == Flag(name="duplicate_figure", detail=flags[str(first.claim)][0].detail)
    assert RunPaths(old_run).judgments.read_bytes() == (OLD_RUN / JUDGMENTS).read_bytes()
