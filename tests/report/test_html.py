"""report.html opened in a real headless Chromium: the figures render, the claim text is there;
the registry claims a submission does not address are listed, escaped."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from judging.report.html import write_html_report
from judging.run.runner import RunRequest, run_judging
from tests.browser import CHROMIUM_FLAGS, chromium
from tests.conftest import REGISTRY, SUBMISSIONS, SubmissionBuilder, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


def test_report_renders_the_figures(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY,
                           measure_cache=module_measure_cache()))
    report = write_html_report(out)
    screenshot = tmp_path / "report.png"
    completed = _chromium(tmp_path, "--window-size=1400,12000", f"--screenshot={screenshot}",
                          report.as_uri())
    assert screenshot.is_file(), completed.stderr[-2000:]
    pixels = np.asarray(Image.open(screenshot).convert("RGB")).reshape(-1, 3).astype(int)
    # matplotlib's default blue (31, 119, 180) is in the published figures: if the images did
    # not load, the page would hold only text and tables (the window is tall enough to reach the
    # claims below the summary and the consensus tables).
    blue = (np.abs(pixels - [31, 119, 180]).sum(axis=1) < 40).sum()
    # (about 1,000 with the images, 0 without)
    print("figure-blue pixels:", blue)
    assert blue > 300, f"only {blue} figure-blue pixels: the images did not render"
    dom = _chromium(tmp_path, "--dump-dom", report.as_uri()).stdout
    assert "Sparse warmup helps most at small widths" in dom
    assert dom.count("<img") >= 3 * 7  # three images for each measurable figure claim


def test_report_lists_registry_claims_not_addressed(tmp_path: Path,
                                                    submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c1")
    registry = tmp_path / "icml.json"
    registry.write_text(json.dumps({"paper-1": [
        {"text": "Top-1 accuracy is 94.1%", "reported_value": 94.1},
        {"text": "<script>alert('registry')</script> loss halves", "source": "Figure 2"},
        {"text": "Theorem 1 holds"}]}))
    out = tmp_path / "run"
    run_judging(RunRequest(sources=[str(submission.write())], out=out, registry=registry))
    html = write_html_report(out).read_text(encoding="utf-8")
    section = html.split("Registry claims not addressed", 1)[1].split('<div class="claim"', 1)[0]
    assert "tester/sub-1" in section and "paper paper-1" in section
    assert "<code>paper-1/c2</code>" in section and "<code>paper-1/c3</code>" in section
    assert "paper-1/c1" not in section
    assert "Figure 2" in section and "Theorem 1 holds" in section
    assert "<script>alert('registry')" not in html
    assert "&lt;script&gt;alert(&#39;registry&#39;)&lt;/script&gt; loss halves" in section
    assert html.count("Registry claims not addressed") == 1  # one section per submission


def test_report_without_not_addressed_records(tmp_path: Path,
                                              submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c1")
    out = tmp_path / "run"
    run_judging(RunRequest(sources=[str(submission.write())], out=out))
    assert "Registry claims not addressed" not in write_html_report(out).read_text()


def test_the_summary_says_what_an_incomplete_line_answered_in_natural_order(
        verdict_rubric) -> None:
    """An incomplete line's score is the mean of the few criteria answered: the summary says
    "incomplete: 2 of 7 criteria answered", never "incomplete 1.00 (14%)"; claims in natural
    order (c2 before c10)."""
    from judging.models import ClaimKey
    from judging.report.html import aggregate_text, summary_rows
    from tests.constructed import _judgment

    claims = [ClaimKey(submission_id="s", claim_id=f"p/c{n}") for n in (10, 2, 1)]
    answered = {"verdict_consistent": (True, 0.9), "cites_evidence": (True, 0.9)}
    lines = [_judgment(verdict_rubric, claim, answered) for claim in claims]
    applicable = sum(a.status.value != "not_applicable" for a in lines[0].answers)
    assert lines[0].aggregate.outcome.value == "incomplete"
    assert aggregate_text(lines[0]) == f"incomplete: 2 of {applicable} criteria answered"
    rows = summary_rows(lines)
    assert [r["claim"] for r in rows] == ["p/c1", "p/c2", "p/c10"]
    assert rows[0]["verdict-justification"].startswith("incomplete: 2 of")
    full = {c.id: ((4 if c.scale.value == "ordinal" else True), 0.9)
            for c in verdict_rubric.criteria}
    passed = _judgment(verdict_rubric, claims[0], full)
    assert aggregate_text(passed).startswith(passed.aggregate.outcome.value + " ")
    assert aggregate_text(passed).endswith("(100%)")
