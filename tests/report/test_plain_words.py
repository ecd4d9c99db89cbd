"""What the pages say in words (issue 39): a fail above the pass threshold names its gate, no
consensus is not dressed as "support 0, agreement 100%", and a repeated reason names the
criterion where it is spelled out instead of "(as above)". Through the CLI on the examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from tests.conftest import EXAMPLES, REGISTRY

pytestmark = pytest.mark.usefixtures("shared_measurements")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("words") / "run"
    judged = CliRunner().invoke(main, ["run", str(EXAMPLES / "submissions"), "--claims",
                                       str(REGISTRY), "--out", str(out), "--judge", "offline"],
                                terminal_width=300)
    assert judged.exit_code == 0, judged.output
    return out, judged.output


def test_a_fail_above_the_threshold_names_its_gate(run) -> None:
    _, output = run
    # bob's byte-copied figure scores high but fails the independence gate
    row = next(line for line in output.splitlines()
               if "bob/neurips26-4821-check" in line and "neurips26-4821/c1" in line)
    assert "gate failed: independent_reproduction" in row
    # and the report's heading of that line says it too
    report = CliRunner().invoke(main, ["report", str(run[0])])
    assert report.exit_code == 0, report.output
    html = " ".join((run[0] / "report.html").read_text().split())
    assert "coverage 100%, gate failed: independent_reproduction" in html


def test_no_consensus_reads_as_none_with_its_reason(run) -> None:
    out, _ = run
    shown = CliRunner().invoke(main, ["consensus", str(out)], terminal_width=300)
    assert shown.exit_code == 0, shown.output
    assert "none: too few" in shown.output
    report = CliRunner().invoke(main, ["report", str(out)])
    assert report.exit_code == 0, report.output
    html = " ".join((out / "report.html").read_text().split())
    assert "consensus: <strong>none</strong>" in html
    assert "(support 0" not in html


def test_a_repeated_reason_names_its_criterion(run) -> None:
    out, _ = run
    html = (out / "report.html").read_text()
    assert "(as above)" not in html
    assert "same reason as " in html
