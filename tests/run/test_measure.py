"""The measure stage (judging/run/measure.py): figure files of every accepted format, and figure
claims that come with their data: the reproduced figure's CSV (the manifest's `reproduced_data`)
and the published figure's data in the registry (`published_data`) are compared data to data; the
signals and flags say which path was taken; a bad data file leaves the figure read from its image,
with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from PIL import Image

from judging.cli import main
from judging.intake import load_registry, load_submission
from judging.models import SignalStatus
from judging.run.measure import FIGURE_SIGNALS, MeasureOptions, measure_claim
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
    # The same drawing saved as PDF or SVG is pixel for pixel what a converted copy would be: the
    # copy check may say so (signals/copies.py); what matters here is that it could look.
    assert signals["pixel.ssim"].value > 0.9 and signals["pixel.copy"].status is SignalStatus.ok
    assert signals["chart.series_published"].value == signals["chart.series_reproduced"].value == 2
    assert signals["chart.match_score"].value > 0.8
    with Image.open(measured.images["reproduced"]) as reviewer_image:
        assert reviewer_image.format == "PNG"


# --- figure data ---------------------------------------------------------------------------

X = np.linspace(0, 10, 60)
CURVES = {"train": np.exp(-X / 3) + 0.1, "val": np.exp(-X / 4) + 0.15}
REVERSED = {**CURVES, "train": CURVES["train"][::-1]}


def wide_csv(curves: dict[str, np.ndarray]) -> str:
    rows = [",".join(["step", *curves])]
    rows += [",".join(f"{v:.6g}" for v in (x, *(c[i] for c in curves.values())))
             for i, x in enumerate(X)]
    return "\n".join(rows) + "\n"


def drawn(curves: dict[str, np.ndarray], **style) -> bytes:
    return render_chart(series={k: (X, v) for k, v in curves.items()}, **style)


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """The organizers' registry: the published figure and its series, digitized once."""
    folder = tmp_path / "registry"
    (folder / "figures").mkdir(parents=True)
    (folder / "figures" / "fig3.png").write_bytes(drawn(CURVES))
    (folder / "figures" / "fig3.json").write_text(json.dumps({"panels": [{"series": [
        {"name": k, "x": X.tolist(), "y": v.tolist()} for k, v in CURVES.items()]}]}))
    path = folder / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [
        {"claim_id": f"paper-1/f{n}", "paper_id": "paper-1", "source": "Figure 3",
         "published_figure": "figures/fig3.png", "published_data": "figures/fig3.json"}
        for n in (1, 2, 3)]}))
    return path


def figure_submission(submission: SubmissionBuilder) -> Path:
    faithful = drawn(CURVES, style="ggplot", size=(10, 7), dpi=120)
    unfaithful = drawn(REVERSED, style="ggplot", size=(10, 7), dpi=120)
    submission.figure_claim("paper-1/f1", published=drawn(CURVES), reproduced=faithful,
                            reproduced_data=submission.file("data/f1.csv", wide_csv(CURVES)))
    submission.figure_claim("paper-1/f2", published=drawn(CURVES), reproduced=unfaithful,
                            reproduced_data=submission.file("data/f2.csv", wide_csv(REVERSED)))
    submission.figure_claim("paper-1/f3", published=drawn(CURVES), reproduced=faithful,
                            reproduced_data=submission.file("data/f3.csv",
                                                            "step,train\n1,0.5\n2,oops\n"))
    return submission.write()


def measured(folder: Path, registry: Path | None = None) -> dict:
    loaded = load_submission(folder, registry=load_registry(registry) if registry else None)
    assert not loaded.problems
    return {c.claim.claim_id: measure_claim(c, options=MeasureOptions()) for c in loaded.claims}


def value(measurement, name: str):
    return measurement.signals[name].value


def test_data_to_data_faithful_scores_high_and_a_reversed_series_low(
        submission: SubmissionBuilder, registry: Path) -> None:
    found = measured(figure_submission(submission), registry)
    faithful, unfaithful = found["paper-1/f1"], found["paper-1/f2"]
    for m in (faithful, unfaithful):
        assert value(m, "chart.published_from_data") is True
        assert value(m, "chart.reproduced_from_data") is True
        (flag,) = [f for f in m.flags if f.name == "compared_from_data"]
        assert "(data to data)" in flag.detail and "the registry's fig3.json" in flag.detail
    assert value(faithful, "chart.match_score") >= 0.9
    assert value(faithful, "chart.value_agreement") == 1.0
    assert value(unfaithful, "chart.match_score") < 0.5
    assert value(unfaithful, "chart.shape_agreement") < 0.5
    # the pixel signals and reviewer images are the images' as before
    assert value(faithful, "pixel.ssim") is not None


def test_a_bad_data_file_leaves_the_figure_read_from_its_image(
        submission: SubmissionBuilder, registry: Path) -> None:
    bad = measured(figure_submission(submission), registry)["paper-1/f3"]
    assert value(bad, "chart.reproduced_from_data") is False
    assert value(bad, "chart.published_from_data") is True
    (refused,) = [f for f in bad.flags if f.name == "figure_data_refused"]
    assert "data/f3.csv:3: train 'oops' is not a number" in refused.detail
    assert "read from its image instead" in refused.detail
    (path,) = [f for f in bad.flags if f.name == "compared_from_data"]
    assert "(data to image)" in path.detail
    # the reproduced chart was read from the image: a faithful restyle still matches
    assert value(bad, "chart.match_score") >= 0.8


def test_without_a_registry_the_reproduced_data_meets_the_published_image(
        submission: SubmissionBuilder) -> None:
    found = measured(figure_submission(submission))
    faithful, unfaithful = found["paper-1/f1"], found["paper-1/f2"]
    assert value(faithful, "chart.published_from_data") is False
    assert value(faithful, "chart.reproduced_from_data") is True
    assert value(faithful, "chart.match_score") >= 0.9
    assert value(unfaithful, "chart.match_score") < 0.5


def test_without_data_both_images_are_read_and_the_signals_say_so(
        submission: SubmissionBuilder) -> None:
    submission.figure_claim("paper-1/f1", published=drawn(CURVES), reproduced=drawn(CURVES))
    (m,) = measured(submission.write()).values()
    assert value(m, "chart.published_from_data") is False
    assert value(m, "chart.reproduced_from_data") is False
    assert not [f for f in m.flags if f.name in ("compared_from_data", "figure_data_refused")]


def test_a_figure_claim_that_cannot_be_compared_has_every_figure_signal_absent(
        submission: SubmissionBuilder) -> None:
    submission.figure_claim("paper-1/f1", published=b"not a png", reproduced=drawn(CURVES),
                            reproduced_data=submission.file("data/f1.csv", wide_csv(CURVES)))
    (m,) = measured(submission.write()).values()
    assert m.figure_error and set(FIGURE_SIGNALS) <= set(m.signals)
    assert m.signals["chart.reproduced_from_data"].reason == m.figure_error


def test_judging_run_records_the_path_in_signals_and_flags(
        submission: SubmissionBuilder, registry: Path, tmp_path: Path) -> None:
    folder = figure_submission(submission)
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(folder), "--claims", str(registry), "--out",
                                       str(out), "--judge", "offline"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    figure = {line["claim"]["claim_id"]: line for line in lines
              if line["rubric"] and line["rubric"]["id"] == "figure-match"}
    assert figure["paper-1/f1"]["signals"]["chart.reproduced_from_data"]["value"] is True
    assert figure["paper-1/f1"]["signals"]["chart.match_score"]["value"] >= 0.9
    assert {f["name"] for f in figure["paper-1/f3"]["flags"]} >= {"figure_data_refused",
                                                                  "compared_from_data"}
    report = CliRunner().invoke(main, ["report", str(out)])
    assert report.exit_code == 0, report.output
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "figure_data_refused" in html and "data to data" in html
