"""`judging check`: a complete and an incomplete submission of each format (our manifest, a
Trackio logbook made with the real trackio CLI), exit codes, personal data with its location,
the icml2026 profile on a canonical and a non-canonical logbook, and the JSON shape."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.check import check_folder
from judging.cli import main
from tests.conftest import needs_trackio, trackio_cli  # noqa: F401
from tests.trackio_batch import tk_batch

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "submissions" / "alice-neurips26-4821"
HF_TOKEN = "hf_" + "PlantedToken" + "0123456789abcdefXYZ"


def run_check(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["check", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def statuses(checklist: dict, item: str, claim: str | None = None) -> list[str]:
    return [i["status"] for i in checklist["items"] if i["item"] == item
            and (claim is None or i["claim"] == claim)]


# -- our manifest format ---------------------------------------------------------------------

@pytest.fixture
def complete_manifest(tmp_path: Path) -> Path:
    folder = tmp_path / "alice"
    shutil.copytree(EXAMPLE, folder)
    (folder / "requirements.txt").write_text("torch==2.4.0\nnumpy\n")
    (folder / "traces").mkdir()
    (folder / "traces" / "session.jsonl").write_text('{"role": "user", "content": "go"}\n')
    return folder


def test_a_complete_manifest_submission_passes(complete_manifest: Path) -> None:
    code, out = run_check(str(complete_manifest))
    assert code == 0
    [sub] = out["submissions"]
    assert sub["ok"] and sub["format"] == "manifest" and sub["counts"]["missing"] == 0
    for item in ("code", "environment", "trace", "personal data"):
        assert statuses(sub, item) == ["ok"], item
    for claim in [f"neurips26-4821/c{n}" for n in range(1, 6)]:
        for item in ("results", "logs", "verdict"):
            assert statuses(sub, item, claim) == ["ok"], (item, claim)
    # a missing scale note is a warning, which does not fail the check
    assert statuses(sub, "scale note", "neurips26-4821/c2") == ["warning"]
    human = CliRunner().invoke(main, ["check", str(complete_manifest)])
    assert human.exit_code == 0 and "complete" in human.output and "environment" in human.output


def test_an_incomplete_manifest_submission_fails_with_each_missing_piece(
        complete_manifest: Path) -> None:
    folder = complete_manifest
    (folder / "requirements.txt").unlink()
    (folder / "eval" / "requirements.txt").unlink()  # the re-run's environment (examples/)
    shutil.rmtree(folder / "traces")
    text = (folder / "submission.yaml").read_text()
    text = text.replace("  reproduced_value: 93.8\n", "")
    text = text.replace("    logs:\n    - logs/eval_table1.txt\n", "    logs: []\n")
    # c5 becomes a falsified claim with neither a proof script nor a kind of problem
    text = text.replace("  verdict: inconclusive\n", "  verdict: falsified\n")
    (folder / "submission.yaml").write_text(text)
    code, out = run_check(str(folder))
    assert code == 1
    [sub] = out["submissions"]
    assert not sub["ok"]
    assert statuses(sub, "environment") == ["missing"]
    assert statuses(sub, "trace") == ["missing"]
    assert statuses(sub, "results", "neurips26-4821/c3") == ["missing"]
    assert statuses(sub, "logs", "neurips26-4821/c4") == ["missing"]
    assert statuses(sub, "proof script", "neurips26-4821/c5") == ["missing"]
    assert statuses(sub, "problem kind", "neurips26-4821/c5") == ["missing"]
    # the log no claim names any more is pointed out (it may be a failed run's)
    stray = [i for i in sub["items"] if i["item"] == "logs" and i["claim"] is None]
    assert stray and "logs/eval_table1.txt" in stray[0]["detail"]


def test_a_named_file_that_is_not_there_is_named(complete_manifest: Path) -> None:
    # The manifest names them; the files are gone: each missing file is named, not "ok".
    (complete_manifest / "logs" / "width_sweep.txt").unlink()
    (complete_manifest / "figures" / "repro_fig3.png").unlink()
    code, out = run_check(str(complete_manifest))
    assert code == 1
    [sub] = out["submissions"]
    logs = [i for i in sub["items"] if i["item"] == "logs" and i["claim"] == "neurips26-4821/c2"]
    assert [i["status"] for i in logs] == ["missing"]
    assert "logs/width_sweep.txt" in logs[0]["detail"] and "not in the submission" in \
        logs[0]["detail"]
    figure = [i for i in sub["items"] if i["item"] == "results"
              and i["claim"] == "neurips26-4821/c1"]
    assert figure[0]["status"] == "missing" and "figures/repro_fig3.png" in figure[0]["detail"]
    (complete_manifest / "run.py").unlink()
    _, out = run_check(str(complete_manifest))
    [code_item] = [i for i in out["submissions"][0]["items"] if i["item"] == "code"]
    assert code_item["status"] == "missing" and "run.py" in code_item["detail"]


def test_an_unloadable_claim_and_a_missing_source_fail(complete_manifest: Path,
                                                       tmp_path: Path) -> None:
    text = (complete_manifest / "submission.yaml").read_text()
    (complete_manifest / "submission.yaml").write_text(text.replace("kind: number", "kind: nmbr"))
    code, out = run_check(str(complete_manifest), str(tmp_path / "nowhere"))
    assert code == 1
    first, second = out["submissions"]
    bad = [i for i in first["items"] if i["item"] == "claims" and i["status"] == "missing"]
    assert bad and bad[0]["file"] == "submission.yaml" and bad[0]["line"]
    assert second["format"] == "unknown" and statuses(second, "submission") == ["missing"]


def test_personal_data_is_found_with_its_file_and_line(complete_manifest: Path) -> None:
    log = complete_manifest / "logs" / "train_vit_dense.txt"
    lines = log.read_text().splitlines()
    lines[1:1] = ["contact: alice.smith@uni-example.org",
                  f"HF_TOKEN={HF_TOKEN}",
                  "checkpoint saved to /home/alice/ckpt/last.pt"]
    log.write_text("\n".join(lines) + "\n")
    code, out = run_check(str(complete_manifest))
    assert code == 0  # a warning: it is not a missing piece
    [sub] = out["submissions"]
    found = {(i["detail"].split(" (")[0], i["file"], i["line"]) for i in sub["items"]
             if i["item"] == "personal data" and i["status"] == "warning"}
    assert ("e-mail address", "logs/train_vit_dense.txt", 2) in found
    assert ("token or key", "logs/train_vit_dense.txt", 3) in found
    assert ("home-directory path", "logs/train_vit_dense.txt", 4) in found
    assert statuses(sub, "personal data").count("ok") == 0
    # the report names the place, never the whole secret
    assert HF_TOKEN not in json.dumps(out) and "alice.smith@" not in json.dumps(out)
    human = CliRunner().invoke(main, ["check", str(complete_manifest)])
    assert "logs/train_vit_dense.txt:3" in human.output.replace("\n", "")


def test_figure_data_files_are_read_and_a_bad_or_missing_one_fails(
        complete_manifest: Path) -> None:
    folder = complete_manifest
    (folder / "figures" / "repro_fig3.csv").write_text("step,val\n0,2.3\n250,x\n")
    (folder / "figures" / "repro_fig4.json").write_text(
        '{"series": [{"name": "dense", "x": [64, 128], "y": [70.1, 74.0]}]}')
    text = (folder / "submission.yaml").read_text()
    text = text.replace("  reproduced_figure: figures/repro_fig3.png\n",
                        "  reproduced_figure: figures/repro_fig3.png\n"
                        "  reproduced_data: figures/repro_fig3.csv\n")
    text = text.replace("  reproduced_figure: figures/repro_fig4.png\n",
                        "  reproduced_figure: figures/repro_fig4.png\n"
                        "  reproduced_data: figures/repro_fig4.json\n")
    (folder / "submission.yaml").write_text(text)
    code, out = run_check(str(folder))
    assert code == 1
    [sub] = out["submissions"]
    bad = [i for i in sub["items"] if i["claim"] == "neurips26-4821/c1"
           and i["item"] == "results" and i["status"] == "missing"]
    assert len(bad) == 1 and (bad[0]["file"], bad[0]["line"]) == ("figures/repro_fig3.csv", 3)
    assert "val 'x' is not a number" in bad[0]["detail"]
    assert "compared from its image only" in bad[0]["detail"]
    good = [i for i in sub["items"] if i["claim"] == "neurips26-4821/c2"
            and i["item"] == "results"]
    assert [i["status"] for i in good] == ["ok", "ok"]
    assert "1 panel, 1 series, 2 points" in good[1]["detail"]
    (folder / "figures" / "repro_fig4.json").unlink()
    code, out = run_check(str(folder))
    [sub] = out["submissions"]
    gone = [i for i in sub["items"] if i["claim"] == "neurips26-4821/c2"
            and i["status"] == "missing"]
    assert gone and "cannot read the figure data" in gone[0]["detail"]


def test_check_writes_nothing_into_the_submission(complete_manifest: Path) -> None:
    before = sorted(p.relative_to(complete_manifest) for p in complete_manifest.rglob("*"))
    check_folder(complete_manifest)
    assert sorted(p.relative_to(complete_manifest) for p in complete_manifest.rglob("*")) == before


# -- Trackio logbooks --------------------------------------------------------------------------

def make_logbook(ws: Path, *, canonical: bool) -> Path:
    ws.mkdir(parents=True)
    title = "Reproduction: Sparse warmup" if canonical else "My notes on sparse warmup"
    page = "claim-1-loss-halves"
    commands = [["open", "--no-serve", "--title", title]]
    if canonical:
        shutil.copy(EXAMPLE / "figures" / "repro_fig3.png", ws / "poster.png")
        (ws / "run.py").write_text("print('loss=0.51')\n")
        (ws / "fail.py").write_text("import sys\nprint('diverged')\nsys.exit(3)\n")
        (ws / "session.jsonl").write_text(json.dumps({"type": "session", "model": "m"}) + "\n")
        commands += [
            ["page", "Executive summary"],
            ["cell", "markdown", "--page", "executive-summary", "--title", "Executive summary",
             "One claim, verified at reduced scale.\\n\\n## Scope & cost\\n| scale | toy |"],
            ["pin", "--page", "executive-summary"],
            ["cell", "figure", "--page", "executive-summary", "--title", "Poster",
             "--image", "poster.png"],
            ["pin", "--page", "executive-summary"],
            ["page", "Claim 1: loss halves"],
            ["run", "--page", page, "--", "python3", "run.py"],
            ["run", "--page", page, "--", "python3", "fail.py"],
            ["cell", "markdown", "--page", page, "--title", "Verdict: VERIFIED",
             "The paper reports 0.50 and we measured **0.51**."],
            ["page", "Conclusion"],
            ["cell", "markdown", "--page", "conclusion", "Reproduced."],
            ["attach", "trace", "session.jsonl"]]
    else:
        commands += [["page", "Claim 1: loss halves"],
                     ["cell", "markdown", "--page", page,
                      "We looked at the loss; results in /home/bob/runs/out.txt."]]
    # One trackio interpreter for the commands (tests/trackio_batch.py); only fail.py's run fails.
    for args, done in zip(commands, tk_batch(ws, *commands), strict=True):
        expected = 3 if args[-1] == "fail.py" else 0
        assert done.returncode == expected, (args, done.stdout, done.stderr)
    if canonical:
        (ws / "requirements.txt").write_text("numpy\n")
        meta = ws / ".trackio" / "metadata.json"
        data = json.loads(meta.read_text())
        data["tags"] = ["icml2026-repro", "paper-AbCd1234"]
        meta.write_text(json.dumps(data))
    return ws


@pytest.fixture(scope="module")
def logbooks(tmp_path_factory) -> dict[str, Path]:
    if trackio_cli() is None:
        if os.environ.get("JUDGING_TRACKIO"):
            pytest.fail(f"JUDGING_TRACKIO={os.environ['JUDGING_TRACKIO']} is not a file")
        pytest.skip("no trackio CLI")
    base = tmp_path_factory.mktemp("logbooks")
    return {"canonical": make_logbook(base / "canonical", canonical=True),
            "rough": make_logbook(base / "rough", canonical=False)}


@needs_trackio
def test_a_complete_logbook_passes_with_and_without_the_icml2026_profile(logbooks) -> None:
    folder = logbooks["canonical"]
    code, out = run_check(str(folder))
    [sub] = out["submissions"]
    assert code == 0, [i for i in sub["items"] if i["status"] == "missing"]
    assert sub["format"] == "logbook" and sub["ok"]
    for item in ("code", "environment", "trace", "personal data"):
        assert statuses(sub, item) == ["ok"], item
    claim = "AbCd1234/c1"
    for item in ("results", "verdict"):
        assert statuses(sub, item, claim) == ["ok"], item
    logs = [i for i in sub["items"] if i["item"] == "logs" and i["claim"] is None]
    assert "2 run cell(s), 1 failed (exit 3)" in logs[0]["detail"]
    code, out = run_check(str(folder), "--profile", "icml2026")
    [sub] = out["submissions"]
    assert code == 0, [i for i in sub["items"] if i["status"] == "missing"]
    assert sub["profile"] == "icml2026"
    for item in ("index title", "page order", "pinned summary", "pinned poster", "tags"):
        assert statuses(sub, item) == ["ok"], item
    order = [i for i in sub["items"] if i["item"] == "page order"][0]
    assert order["detail"] == "Executive summary | Claim 1: loss halves | Conclusion"
    code_items = [i for i in sub["items"] if i["item"] == "code"]
    assert code_items[0]["status"] == "ok" and "run.py" in code_items[0]["detail"]
    assert code_items[0]["file"].endswith("pages/claim-1-loss-halves/page.md")


@needs_trackio
def test_an_incomplete_non_canonical_logbook_fails(logbooks) -> None:
    folder = logbooks["rough"]
    code, out = run_check(str(folder))
    assert code == 1
    [sub] = out["submissions"]
    assert statuses(sub, "code") == ["missing"]
    assert statuses(sub, "environment") == ["missing"]
    assert statuses(sub, "trace") == ["missing"]
    assert "missing" in statuses(sub, "verdict")
    assert "missing" in statuses(sub, "logs")
    home = [i for i in sub["items"] if i["item"] == "personal data" and i["status"] == "warning"]
    assert home and home[0]["file"] == ".trackio/logbook/pages/claim-1-loss-halves/page.md"
    assert home[0]["line"] and home[0]["detail"].startswith("home-directory path")
    code, out = run_check(str(folder), "--profile", "icml2026")
    assert code == 1
    [sub] = out["submissions"]
    for item in ("index title", "page order", "pinned summary", "pinned poster", "tags"):
        assert statuses(sub, item) == ["missing"], item
    # the event's environment is a warning only
    assert statuses(sub, "environment") == ["warning"]
    tags = [i for i in sub["items"] if i["item"] == "tags"][0]
    assert "icml2026-repro" in tags["detail"] and "paper-<id>" in tags["detail"]


@needs_trackio
def test_json_shape_over_several_sources(logbooks, complete_manifest: Path) -> None:
    code, out = run_check(str(logbooks["canonical"]), str(complete_manifest), str(
        logbooks["rough"]))
    assert code == 1 and out["ok"] is False and out["profile"] is None
    assert [s["format"] for s in out["submissions"]] == ["logbook", "manifest", "logbook"]
    for sub in out["submissions"]:
        assert set(sub) == {"source", "folder", "format", "submission_id", "profile", "ok",
                            "counts", "items"}
        assert set(sub["counts"]) == {"ok", "missing", "warning"}
        for item in sub["items"]:
            assert set(item) == {"item", "status", "detail", "claim", "file", "line"}
            assert item["status"] in ("ok", "missing", "warning")


def test_every_shape_of_the_precedence_list_has_a_checklist():
    # A new shape in intake.SHAPES without a checklist would fail `judging check` with a KeyError
    # on its first folder; this says so at once.
    from judging.check.stage import CHECKLISTS
    from judging.intake import SHAPES

    assert sorted(CHECKLISTS) == sorted(shape.name for shape in SHAPES)


def test_the_check_output_derives_its_answer_from_its_checklists():
    # `ok` is written first for readers of the JSON, but a file that says ok beside a checklist
    # with something missing is read as what its checklists say (awards read this file back).
    from judging.check import MISSING, Checklist, CheckOutput

    checklist = Checklist(source="s", folder="s", format="manifest")
    checklist.add("code", MISSING, "no code")
    written = CheckOutput(submissions=[checklist]).model_dump_json()
    assert written.startswith('{"ok":false')
    forged = written.replace('"ok":false', '"ok":true', 1)
    assert CheckOutput.model_validate_json(forged).ok is False
