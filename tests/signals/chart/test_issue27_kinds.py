"""Issue 27's failure kinds, drawn here (figures_wild.py): what the reader got wrong on figures
from other sources, and the reader's confidence checked on a drawn set.

- a reference line drawn faintly in the published figure (not read as a series) and darkly in
  the reproduction is drawn on both: it is no extra series;
- a series left out is never passed, whatever else agrees;
- a restyle in greys a few levels apart leaves the legend's swatches pairable either way: no
  swapped legend is confirmed on it; the same names swapped on distinct colours are;
- a legend name read in part ("GPT" of "GPT-small") pairs with no series when it fits several;
  OCR slips ("H20", "varl") are the same name;
- the same figure drawn again where a label lands a pixel off is neither a copy nor a
  re-render: a human tells which;
- a border drawn around a whole chart (a spreadsheet's chart area, padded or not) is not its
  plot area: the plot area, and the tick labels beside it, are inside;
- chart.same_data, the reader's confidence, is calibrated on a drawn set of restyles and
  changes, and the offline judge (figure-match 1.4.0) answers none of them wrongly.
"""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest
from PIL import Image, ImageDraw

from judging.signals import check_copy
from judging.signals.chart import compare_charts, read_chart
from judging.signals.chart.compare.legends import legend_agreement, names_status
from judging.signals.chart.compare.names import name_matrix, name_similarity
from judging.signals.chart.compare.panels import PanelResult
from judging.signals.chart.types import Series
from tests.signals.chart import figures_wild as wild
from tests.signals.chart.helpers import judge_figure_pair

RESTYLE = {"style": "seaborn-v0_8-whitegrid", "colours": ("#1b9e77", "#7570b3", "#d95f02")}
RUBRIC = "figure-match@1.4.0"


def read(png: bytes):
    return read_chart(Image.open(io.BytesIO(png)).convert("RGB"))


def same_data(published: bytes, reproduced: bytes) -> tuple[float, str]:
    comparison = compare_charts(read(published), read(reproduced))
    return comparison.signals["chart.same_data"], comparison.reasons["chart.same_data"]


def test_a_reference_line_drawn_faintly_in_the_published_figure_is_no_extra_series():
    value, why = same_data(wild.speedup(), wild.speedup(reference="#000000", **RESTYLE))
    assert value >= 0.9, why
    assert "the series agree" in why


def test_a_reference_line_drawn_on_both_counts_as_a_published_series_matched():
    """jove-scaling: the published reader kept a reference line's ink but no series for it (a
    dotted grey line mostly under another line). The criteria's counts read it as the evidence
    does, drawn on both charts: a published series, matched, not extra (same_series and
    overall_match are answered from these counts)."""
    published = read(wild.speedup(reference="#a0a0a0"))
    panel = published.panels[0]
    kept = [s_ for s_ in panel.series if s_.name != "perfect scaling"]
    assert len(kept) == len(panel.series) - 1  # the drawing has the line read, to take away
    published = dataclasses.replace(published, panels=[dataclasses.replace(panel, series=kept)])
    reproduced = read(wild.speedup(reference="#000000", **RESTYLE))
    signals = compare_charts(published, reproduced).signals
    assert signals["chart.series_published"] == signals["chart.series_reproduced"], signals
    assert signals["chart.series_matched"] == 1.0, signals
    assert signals["chart.match_score"] >= 0.8, signals


def test_a_series_left_out_is_never_passed():
    value, why = same_data(wild.speedup(), wild.speedup(drop="H3COH", **RESTYLE))
    assert value < 0.5, why
    assert "without a counterpart" in why


def test_grey_swatches_a_few_levels_apart_confirm_no_swapped_legend():
    swapped = ("batch 1024", "batch 256", "batch 64")
    value, why = same_data(wild.grey_bars(), wild.grey_bars(grey=True, names=swapped))
    assert "the other way" not in why, why  # no swap confirmed on names that may be misread
    assert 0.1 < value < 0.9, why           # and no agreement either
    coloured, why = same_data(wild.grey_bars(), wild.grey_bars(names=swapped))
    assert coloured <= 0.1, why


def _named(*names: str) -> list[Series]:
    points = np.zeros((2, 2))
    return [Series(name=n, style="#000000", kind="line", points=points, confidence=1.0)
            for n in names]


def test_a_name_read_in_part_pairs_with_no_series_when_it_fits_several():
    sims = name_matrix(_named("GPT-small", "GPT-large"), _named("GPT", "GPT-large"))
    assert sims[1, 1] == 1.0
    assert sims[0, 0] <= 0.5 and sims[1, 0] <= 0.5  # "GPT" fits both: it says nothing


def test_a_name_given_twice_leaves_unread_counterparts_counted():
    """jove-scaling_xeon__unfaithful2: the published key names two series alike ("Xeno"). Those
    two pair by no name, but their counterparts left unnamed still count: two unread names
    are no pairing "by elimination", for the evidence as for the same_series criterion."""
    published = _named("Alpha", "Beta", "Xeno", "Xeno")
    reproduced = [dataclasses.replace(s_, name=s_.name or None)
                  for s_ in _named("Alpha", "", "", "Xeno")]
    result = PanelResult(published_series=published, reproduced_series=reproduced,
                          matches=[(a, b, None) for a, b in zip(published, reproduced)],
                          extra=0, x_iou=None, y_iou=None, scale_match=None)
    status, why = names_status(result)
    assert status == "unread", why
    named, agreement, _ = legend_agreement([result])
    assert named == 2 and agreement is not None and agreement < 1.0, (named, agreement)


def test_ocr_slips_are_the_same_name():
    assert name_similarity("H2O speed-up", "H20 speed-up") == 1.0
    assert name_similarity("var1", "varl") == 1.0
    assert name_similarity("Cascade opt. (3)", "t. (3)") >= 0.8


def test_the_same_figure_drawn_again_with_a_label_a_pixel_off_is_left_to_a_human(tmp_path):
    published, again = wild.single_speedup(), wild.single_speedup(label_shift=2)
    check = check_copy(Image.open(io.BytesIO(published)).convert("RGB"),
                       Image.open(io.BytesIO(again)).convert("RGB"))
    assert check.near_identical and not check.copy and not check.identical, check.how
    judged = judge_figure_pair(published, again, RUBRIC, folder=tmp_path / "near")
    assert "near_identical" in judged.flags and "copy" not in judged.flags, judged.explain()
    assert judged.value("pixel.copy") is False
    assert judged.answer("independent_reproduction") == "unscored", judged.explain()
    assert judged.outcome != "fail", judged.explain()


@pytest.fixture(scope="module")
def drawn() -> list[tuple[str, float, str]]:
    return [(label, *same_data(p, r)) for label, p, r in wild.drawn_set()]


def test_the_readers_confidence_is_calibrated_on_a_drawn_set(drawn):
    faithful = [v for label, v, _ in drawn if label == "faithful"]
    unfaithful = [v for label, v, _ in drawn if label == "unfaithful"]
    assert min(faithful) > max(unfaithful), drawn
    # Expected calibration error over the set, one bin per pair: how far each stated
    # probability of the same data is from what the pair is.
    ece = float(np.mean([abs(v - (label == "faithful")) for label, v, _ in drawn]))
    assert ece <= 0.15, drawn


def test_the_offline_judge_answers_no_drawn_pair_wrongly(tmp_path):
    outcomes = []
    for k, (label, published, reproduced) in enumerate(wild.drawn_set()):
        judged = judge_figure_pair(published, reproduced, RUBRIC, folder=tmp_path / str(k))
        outcomes.append((label, judged.outcome))
        wrong = "fail" if label == "faithful" else "pass"
        assert judged.outcome != wrong, judged.explain()
    assert sum(o == "pass" for label, o in outcomes if label == "faithful") >= 2, outcomes
    assert sum(o == "fail" for label, o in outcomes if label == "unfaithful") >= 1, outcomes


def spreadsheet_line(*, pad: int = 0) -> Image.Image:
    """A spreadsheet's line chart: a one-pixel grey border around the whole chart (title, tick
    labels and all), no spines but the category axis, light gridlines; `pad` white pixels
    around it (a copy padded)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.0, 2.5), dpi=100)
    x = np.arange(2000, 2041)
    ax.plot(x, 1000 + 6 * (x - 2000) ** 2, color="#4472c4", linewidth=2)
    ax.set_ylim(0, 12000)
    ax.set_yticks(range(0, 12001, 2000))
    ax.set_xticks(range(2000, 2046, 5))
    ax.grid(axis="y", color="#d9d9d9")
    ax.grid(axis="x", color="#ececec")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.spines["bottom"].set_color("#d9d9d9")
    ax.tick_params(length=0, labelsize=8, colors="#595959")
    ax.set_title("Actual & Projected", fontsize=10)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    image = Image.open(buf).convert("RGB")
    ImageDraw.Draw(image).rectangle((0, 0, image.width - 1, image.height - 1),
                                    outline="#d9d9d9")
    if pad:
        padded = Image.new("RGB", (image.width + 2 * pad, image.height + 2 * pad), "white")
        padded.paste(image, (pad, pad))
        image = padded
    return image


@pytest.mark.parametrize("pad", [0, 40])
def test_a_border_around_the_whole_chart_is_not_its_plot_area(pad):
    # The border frames the title and the tick labels: taken for the plot area, no tick label
    # lies outside it and both axes go unread. The plot area is inside it, spanned by the
    # gridlines, with the page padded or not.
    image = spreadsheet_line(pad=pad)
    (panel,) = read_chart(image).panels
    left, top, right, bottom = panel.bbox
    assert left > pad + 10 and top > pad + 10, panel.bbox
    assert right < image.width - pad - 5 and bottom < image.height - pad - 10, panel.bbox
    assert panel.y is not None and panel.x is not None, panel.problems
    assert panel.y.data_range[1] == pytest.approx(12000, rel=0.05)
