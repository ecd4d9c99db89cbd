"""What the commands print is the text as written: rich's emoji codes (`:m:`, `:smile:`) are not
replaced, in an error line naming a judge `openai:m` (printed "openaiⓂ cannot reach ...") or in a
submission's text shown in a table."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the block ends: nothing listens


@pytest.mark.slow  # a run's endpoint check and a check, through the CLI: about 4 s
def test_an_error_naming_a_judge_keeps_its_name(tmp_path: Path) -> None:
    space = tmp_path / "alice--repro-2508.18741"
    space.mkdir()
    (space / "README.md").write_text("---\nsdk: static\n---\n# R\n\n| Claim | Verdict |\n"
                                     "|---|---|\n| Loss :smile: halves | ✅ |\n")
    result = CliRunner().invoke(main, [
        "run", str(space), "--out", str(tmp_path / "run"), "--judge", "openai:m",
        "--base-url", f"http://127.0.0.1:{closed_port()}/v1", "--api-key", "sk-test"])
    assert result.exit_code == 1
    assert "openai:m: cannot reach the endpoint" in result.output, result.output
    checked = CliRunner().invoke(main, ["check", str(space)], env={"COLUMNS": "300"})
    assert "Loss :smile: halves" in checked.output, checked.output


@pytest.mark.slow  # a run and a resolve through the CLI
def test_a_calibration_folder_that_is_not_there_is_said(tmp_path: Path) -> None:
    # a typo'd --calibration was read as "no calibration": every claim pending, without a word
    space = tmp_path / "alice--repro-2508.18741"
    space.mkdir()
    (space / "README.md").write_text("---\nsdk: static\n---\n# R\n\n| Claim | Verdict |\n"
                                     "|---|---|\n| Loss halves | ✅ |\n")
    run = tmp_path / "run"
    assert CliRunner().invoke(main, ["run", str(space), "--out", str(run)]).exit_code == 0
    typo = tmp_path / "calibraton"
    result = CliRunner().invoke(main, ["resolve", str(run), "--calibration", str(typo)],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert (f"warning: --calibration {typo}: no such folder: no judge is trusted"
            in " ".join(result.output.split()))
    calibrated = CliRunner().invoke(main, ["resolve", str(run), "--calibration", str(tmp_path)])
    assert "warning" not in calibrated.output
