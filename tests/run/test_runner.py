"""`judging run` and `judging report` end to end through the CLI: store, resume, errors, report."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.models import LineStatus, NotAddressed, ReferenceOrigin
from judging.rundir import read_not_addressed
from judging.rundir.store import RunStore
from tests.conftest import (
    ICML_EXTRA_CLAIM,
    JUDGING_SCRIPT,
    SUBMISSIONS,
    SubmissionBuilder,
    render_chart,
    write_icml_registry,
)

pytestmark = pytest.mark.usefixtures("shared_measurements")


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", *args])
    return result.exit_code, result.output


def _lines(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "judgments.jsonl").read_text().splitlines()]


@pytest.fixture
def examples_copy(tmp_path: Path) -> Path:
    target = tmp_path / "examples"
    shutil.copytree(SUBMISSIONS.parent, target)
    return target


def test_run_writes_the_store_and_resumes(tmp_path: Path, examples_copy: Path) -> None:
    out = tmp_path / "run"
    registry = examples_copy / "registry" / "claims.yaml"
    code, output = _run(str(examples_copy / "submissions"), "--claims", str(registry),
                        "--out", str(out))
    assert code == 0, output
    lines = _lines(out)
    # 14 claims: 8 figure claims x 2 rubrics + 6 others x 1, + the falsification audit of the
    # 3 falsified claims
    assert len(lines) == 25
    assert len({(l["claim"]["submission_id"], l["claim"]["claim_id"]) for l in lines}) == 14
    info = json.loads((out / "run.json").read_text())
    (invocation,) = info["invocations"]
    assert invocation["status"] == "finished" and invocation["judges"] == ["offline"]
    assert {r.split("#")[0] for r in invocation["rubrics"]} == {
        "falsification-audit@1.0.0", "figure-match@1.4.0", "verdict-justification@1.2.0"}
    assert re.match(r"judging \S+( git:[0-9a-f]{12}(\+dirty)?)?$", invocation["code_version"])
    for line in lines:
        assert line["provenance"]["code_version"] == invocation["code_version"]
        assert line["input_hash"].startswith("sha256:")
    diffs = [l["artifacts"]["diff"] for l in lines if l["artifacts"]["diff"]]
    assert diffs and all((out / d).is_file() for d in diffs)
    assert "judgments" in output and "new judgment line" in output

    # A second run over the same inputs adds nothing.
    code, output = _run(str(examples_copy / "submissions"), "--claims", str(registry),
                        "--out", str(out))
    assert code == 0 and len(_lines(out)) == 25
    assert "0 new judgment line(s), 25 already done" in output

    # Changing one claim's file re-judges that claim only (both of its rubrics).
    log = examples_copy / "submissions" / "alice-neurips26-4821" / "logs" / "train_vit_sparse.txt"
    log.write_text(log.read_text() + "\n# appended note\n")
    code, output = _run(str(examples_copy / "submissions"), "--claims", str(registry),
                        "--out", str(out))
    new = _lines(out)[25:]
    assert code == 0 and new
    assert {l["claim"]["claim_id"] for l in new} <= {"neurips26-4821/c1", "neurips26-4821/c3"}
    assert len(RunStore.open(out, create=False).latest()) == 25


def test_torn_last_line_is_survived(tmp_path: Path, examples_copy: Path) -> None:
    out = tmp_path / "run"
    source = str(examples_copy / "submissions" / "carol-iclr27-0137")
    assert _run(source, "--out", str(out))[0] == 0
    path = out / "judgments.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    # Simulate a crash in the middle of writing the last line.
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    code, output = _run(source, "--out", str(out))
    assert code == 0, output
    assert len(_lines(out)) == len(lines)  # the torn line is replaced, nothing duplicated


def test_bad_claims_and_sources_are_recorded(tmp_path: Path, submission: SubmissionBuilder
                                             ) -> None:
    submission.number_claim("paper-1/c1")
    submission.claims.append({"claim_id": "paper-1/c2", "kind": "number", "statement": "s",
                              "verdict": "verified", "reproduced_value": 1.0,
                              "evidence": {"logs": ["../../etc/passwd"]}})
    good = submission.write()
    out = tmp_path / "run"
    code, output = _run(str(good), str(tmp_path / "does-not-exist"), "--out", str(out))
    assert code == 1  # a source that is not there: refused before anything is written
    assert "does-not-exist: no such folder" in output
    assert not out.exists()
    code, output = _run(str(good), "--out", str(out))
    assert code == 0, output
    lines = _lines(out)
    by_claim = {l["claim"]["claim_id"]: l for l in lines}
    assert by_claim["paper-1/c1"]["status"] == "scored"  # one bad claim sinks nothing
    error = by_claim["paper-1/c2"]
    assert error["status"] == LineStatus.error and "'..'" in error["reason"]
    assert "submission.yaml:" in error["reason"]
    assert "Traceback" not in output
    # Rerun: the error line is not written again.
    _run(str(good), "--out", str(out))
    assert len(_lines(out)) == len(lines)


def test_out_must_be_a_run_directory(tmp_path: Path, submission: SubmissionBuilder) -> None:
    submission.number_claim()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("x")
    code, output = _run(str(submission.write()), "--out", str(tmp_path / "notes"))
    assert code == 1 and "not a run directory" in output


def test_rubric_and_judge_options(tmp_path: Path, examples_copy: Path) -> None:
    out = tmp_path / "run"
    code, output = _run(str(examples_copy / "submissions" / "alice-neurips26-4821"),
                        "--rubric", "figure-match@1.0.0", "--out", str(out))
    assert code == 0, output
    assert {l["rubric"]["id"] for l in _lines(out)} == {"figure-match"}
    code, output = _run(str(examples_copy / "submissions"), "--judge", "sorcery",
                        "--out", str(tmp_path / "other"))
    assert code == 1 and "unknown judge 'sorcery'" in output


def test_report_shows_figures_and_escapes_participant_text(tmp_path: Path,
                                                           submission: SubmissionBuilder) -> None:
    chart = render_chart()
    submission.figure_claim("paper-1/f1", published=chart, reproduced=chart,
                            justification="<script>alert('x')</script> trust me")
    out = tmp_path / "run"
    assert _run(str(submission.write()), "--out", str(out))[0] == 0
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0, result.output
    html = (out / "report.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    images = re.findall(r'<img src="([^"]+)"', html)
    # published, reproduced, diff and the overlay of the data read from both charts
    assert len(images) == 4 and all((out / src).is_file() for src in images)
    assert "independent_reproduction" in html and "Does the reproduced figure" in html


def test_icml_registry_claims_not_addressed(tmp_path: Path, examples_copy: Path) -> None:
    registry = write_icml_registry(tmp_path / "icml", extra_papers={
        "unjudged-1": [{"text": "No submission reproduces this paper."}, {"text": "Nor this."}]})
    out = tmp_path / "run"
    code, output = _run(str(examples_copy / "submissions"), "--claims", str(registry),
                        "--out", str(out))
    assert code == 0, output
    records = read_not_addressed(out)
    assert {(r.submission_id, r.claim_id) for r in records} == {
        ("alice/repro-neurips26-4821", "neurips26-4821/c6"),
        ("alice/repro-neurips26-4821", "neurips26-4821/c7"),
        ("bob/neurips26-4821-check", "neurips26-4821/c4"),
        ("bob/neurips26-4821-check", "neurips26-4821/c5"),
        ("bob/neurips26-4821-check", "neurips26-4821/c7")}
    # carol's paper and unjudged-1 are not both in the registry and in the run: nothing for them
    assert {r.paper_id for r in records} == {"neurips26-4821"}
    extra = next(r for r in records if r.claim_id == "neurips26-4821/c7")
    assert extra.statement == ICML_EXTRA_CLAIM and extra.source is None
    assert "5 registry claim(s) not addressed by 2 submission(s)" in output
    assert json.loads((out / "run.json").read_text())["invocations"][0]["counts"][
        "not_addressed"] == 5
    claims = RunStore.open(out, create=False).claims()
    alice_c3 = claims["alice/repro-neurips26-4821::neurips26-4821/c3"]
    assert alice_c3.reference is ReferenceOrigin.registry
    assert alice_c3.claim.reported_value == 94.1
    assert {c.reference for k, c in claims.items() if k.startswith("carol/")} == {
        ReferenceOrigin.participant}


def test_a_submission_addressing_one_of_three_claims(tmp_path: Path,
                                                     submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c2")
    submission.number_claim("paper-1/own", statement="A number the registry does not list")
    folder = submission.write()
    registry = tmp_path / "icml.json"
    registry.write_text(json.dumps({"paper-1": [
        {"text": "Loss falls below 0.2", "source": "Figure 1"},
        {"text": "Top-1 accuracy is 94.1%", "reported_value": 94.1},
        {"text": "<b>bold</b> claim three"}]}))
    out = tmp_path / "run"
    code, output = _run(str(folder), "--claims", str(registry), "--out", str(out))
    assert code == 0, output
    assert read_not_addressed(out) == [
        NotAddressed(submission_id="tester/sub-1", paper_id="paper-1", claim_id="paper-1/c1",
                     statement="Loss falls below 0.2", source="Figure 1"),
        NotAddressed(submission_id="tester/sub-1", paper_id="paper-1", claim_id="paper-1/c3",
                     statement="<b>bold</b> claim three")]
    lines = (out / "not_addressed.jsonl").read_text().splitlines()
    assert all(json.loads(line)["schema"] == "judging.not_addressed/1" for line in lines)
    references = {c.claim.claim_id: c.reference
                  for c in RunStore.open(out, create=False).claims().values()}
    assert references == {"paper-1/c2": ReferenceOrigin.registry,
                          "paper-1/own": ReferenceOrigin.participant}
    # Rewritten only from complete inputs: a run without a registry cannot tell what is not
    # addressed, so the file is left as the last run with one wrote it.
    kept = (out / "not_addressed.jsonl").read_bytes()
    code, output = _run(str(folder), "--out", str(out))
    assert code == 0, output
    assert (out / "not_addressed.jsonl").read_bytes() == kept
    assert "not addressed" not in output


def test_report_of_a_missing_run(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["report", str(tmp_path / "empty")])
    assert result.exit_code == 1 and "not a run directory" in result.output


def test_console_script_help() -> None:
    for args in (["--help"], ["run", "--help"], ["rubric", "--help"], ["similarity", "--help"],
                 ["report", "--help"]):
        completed = subprocess.run([str(JUDGING_SCRIPT), *args], capture_output=True, text=True,
                                   timeout=60)
        assert completed.returncode == 0, completed.stderr
        assert "Usage: judging" in completed.stdout
