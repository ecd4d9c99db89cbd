"""The measure stage (judging/run/measure.py) on figure files of every accepted format."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from judging.intake.manifest import load_submission
from judging.models import SignalStatus
from judging.run.measure import MeasureOptions, measure_claim
from tests.conftest import SubmissionBuilder, render_chart


@pytest.mark.parametrize("fmt", ["pdf", "svg"])
def test_a_vector_reproduced_figure_is_measured_against_a_png(
        tmp_path: Path, submission: SubmissionBuilder, fmt: str) -> None:
    """The same chart, published as PNG and reproduced as PDF or SVG: every figure signal is
    measured (none absent), the two read as the same two series, and the reviewer images are
    written as for any other figure."""
    published = render_chart()
    submission.figure_claim("paper-1/f1", published=published, reproduced=published,
                            reproduced_figure=submission.file(f"figures/repro.{fmt}",
                                                              render_chart(fmt=fmt)))
    (claim,) = load_submission(submission.write()).claims
    assert claim.reproduced_path.suffix == f".{fmt}"
    measured = measure_claim(claim, options=MeasureOptions(), run_root=tmp_path,
                             out_dir=tmp_path / "diffs" / "f1")
    assert measured.figure_error is None
    signals = measured.signals
    absent = {name: s.reason for name, s in signals.items()
              if name.startswith("pixel.") and s.status is SignalStatus.absent}
    assert absent == {}
    assert signals["pixel.ssim"].value > 0.9 and signals["pixel.copy"].value is False
    assert signals["chart.series_published"].value == signals["chart.series_reproduced"].value == 2
    assert signals["chart.match_score"].value > 0.8
    with Image.open(measured.images["reproduced"]) as reviewer_image:
        assert reviewer_image.format == "PNG"
