"""The measure stage's copy signals: a copy is flagged `copy`; a pixel-identical figure whose cited
logs show its plotting script re-run is flagged `identical_rerender` (for a human), not a copy."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from judging.intake.manifest import load_submission
from judging.models import ClaimInput, SignalStatus
from judging.run.measure import FIGURE_SIGNALS, MeasureOptions, measure_claim
from tests.conftest import SubmissionBuilder, open_png, render_chart

OPTIONS = MeasureOptions(chart=False)
FIGURE = "paper-1_f1_repro.png"
PLOT_SCRIPT = ("import matplotlib.pyplot as plt\n"
               "plt.plot([1, 2, 3])\n"
               f"plt.savefig('figures/{FIGURE}')\n")


@pytest.fixture(scope="module")
def chart_png() -> bytes:
    return render_chart()


def _jpeg(png: bytes, quality: int = 80) -> bytes:
    buffer = io.BytesIO()
    open_png(png).save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def _claim(submission: SubmissionBuilder, published: bytes, reproduced: bytes, *,
           script: str | None = PLOT_SCRIPT, logs: dict[str, str] | None = None) -> ClaimInput:
    evidence: dict = {"logs": [submission.file(name, text) for name, text in (logs or {}).items()]}
    if script is not None:
        evidence["script"] = submission.file("plot.py", script)
    submission.figure_claim(published=published, reproduced=reproduced, evidence=evidence)
    (claim,) = load_submission(submission.write()).claims
    return claim


def _flags(measured) -> set[str]:
    return {f.name for f in measured.flags}


def test_pixel_identical_with_a_log_of_the_figure_written_is_an_identical_rerender(
        submission: SubmissionBuilder, chart_png: bytes) -> None:
    claim = _claim(submission, chart_png, chart_png,
                   logs={"logs/plot.txt": f"epoch 3 done\nsaved figure to figures/{FIGURE}\n"})
    measured = measure_claim(claim, options=OPTIONS)
    assert measured.signals["pixel.identical_rerender"].value is True
    assert measured.signals["pixel.copy"].value is False
    assert _flags(measured) == {"identical_rerender"}
    (flag,) = measured.flags
    assert f"saved figure to figures/{FIGURE}" in flag.detail and "plot.py" in flag.detail
    assert "a human should confirm" in flag.detail


def test_a_run_command_of_the_plotting_script_counts_too(submission: SubmissionBuilder,
                                                         chart_png: bytes) -> None:
    # Pixel-identical once borders are trimmed: the re-run saved with other margins.
    padded = Image.new("RGB", (880, 660), "white")
    padded.paste(open_png(chart_png), (40, 30))
    buffer = io.BytesIO()
    padded.save(buffer, format="PNG")
    claim = _claim(submission, chart_png, buffer.getvalue(),
                   logs={"logs/run-1.txt": "command: python plot.py --seed 0\nexit code: 0\n"})
    measured = measure_claim(claim, options=OPTIONS)
    assert _flags(measured) == {"identical_rerender"}
    assert "command: python plot.py --seed 0" in measured.flags[0].detail


def test_pixel_identical_without_such_logs_is_a_copy(submission: SubmissionBuilder,
                                                     chart_png: bytes) -> None:
    claim = _claim(submission, chart_png, chart_png, logs={"logs/train.txt": "loss 0.1\n"})
    measured = measure_claim(claim, options=OPTIONS)
    assert measured.signals["pixel.copy"].value is True
    assert measured.signals["pixel.identical_rerender"].value is False
    assert _flags(measured) == {"copy"}
    assert "byte-identical" in measured.flags[0].detail


@pytest.mark.parametrize("script, log", [
    # the script writes no figure and does not name it
    ("print('training')\n", f"saved figures/{FIGURE}\n"),
    # the run that names the figure failed
    (PLOT_SCRIPT, f"command: python plot.py\nexit code: 1\n--- output ---\nsaving {FIGURE}\n"),
    # no script is cited at all
    (None, f"saved figures/{FIGURE}\n"),
])
def test_logs_that_do_not_show_a_rerun_leave_a_copy(submission: SubmissionBuilder,
                                                    chart_png: bytes, script: str | None,
                                                    log: str) -> None:
    claim = _claim(submission, chart_png, chart_png, script=script, logs={"logs/plot.txt": log})
    measured = measure_claim(claim, options=OPTIONS)
    assert _flags(measured) == {"copy"}
    assert measured.signals["pixel.identical_rerender"].value is False


def test_a_jpeg_copy_stays_a_copy_whatever_the_logs_say(submission: SubmissionBuilder,
                                                        chart_png: bytes) -> None:
    # A re-run of deterministic plotting code gives the same pixels, never a re-encoded copy.
    claim = _claim(submission, chart_png, _jpeg(chart_png),
                   logs={"logs/plot.txt": f"saved figures/{FIGURE}\n"})
    measured = measure_claim(claim, options=OPTIONS)
    assert measured.signals["pixel.copy"].value is True
    assert _flags(measured) == {"copy"}
    assert "redrawn" in measured.flags[0].detail


def test_a_rerender_is_neither(submission: SubmissionBuilder, chart_png: bytes) -> None:
    x = np.linspace(0, 10, 200)
    rng = np.random.default_rng(0)
    noisy = {"train": (x, (np.exp(-x / 3) + 0.1) * (1 + 0.02 * rng.standard_normal(200))),
             "val": (x, (np.exp(-x / 4) + 0.15) * (1 + 0.02 * rng.standard_normal(200)))}
    claim = _claim(submission, chart_png, render_chart(series=noisy),
                   logs={"logs/plot.txt": f"saved figures/{FIGURE}\n"})
    measured = measure_claim(claim, options=OPTIONS)
    assert measured.signals["pixel.copy"].value is False
    assert measured.signals["pixel.identical_rerender"].value is False
    assert not _flags(measured) & {"copy", "identical_rerender"}


def test_without_figures_both_copy_signals_are_absent(submission: SubmissionBuilder,
                                                      chart_png: bytes) -> None:
    claim = _claim(submission, chart_png, chart_png)
    measured = measure_claim(claim.model_copy(update={"reproduced_path": None}), options=OPTIONS)
    for name in ("pixel.copy", "pixel.identical_rerender"):
        assert name in FIGURE_SIGNALS
        assert measured.signals[name].status is SignalStatus.absent
