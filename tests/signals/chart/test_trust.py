"""figure-match 1.3.0's "abstain before failing": what the reader is sure of, the series-free
data coverage, unread axis multipliers, chart furniture, swapped legend names, scatter point sets,
and the offline judge that fails a figure only on a reading it can trust.

Every figure is drawn here with matplotlib (tests/signals/test_chart.py's `render`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from judging.judges.base import JudgeTask  # noqa: E402
from judging.judges.offline import OfflineJudge  # noqa: E402
from judging.models import (  # noqa: E402
    AnswerStatus,
    Claim,
    ClaimInput,
    ClaimKey,
    Signal,
    SubmissionHeader,
)
from judging.rubrics import RubricLibrary, aggregate  # noqa: E402
from judging.rules import RULES  # noqa: E402
from judging.signals.chart import compare_charts, read_chart  # noqa: E402
from tests.signals.chart.helpers import figure_image  # noqa: E402
from tests.signals.test_chart import CURVES, X, curves, render  # noqa: E402

RUBRIC = "figure-match@1.3.0"


def _figure(draw, *, size=(8, 6), dpi=120):
    plt.rcdefaults()
    fig, ax = plt.subplots(figsize=size, dpi=dpi)
    draw(ax)
    return figure_image(fig)


def test_a_clean_pair_is_read_with_full_confidence_and_covers_itself():
    comparison = compare_charts(read_chart(render(curves())),
                                read_chart(render(curves(), style="ggplot", size=(10, 7))))
    assert comparison.signals["chart.reading_confidence"] >= 0.9, comparison.reasons
    assert comparison.signals["chart.data_coverage"] >= 0.9
    assert comparison.signals["chart.legend_agreement"] == 1.0  # "train", "validation" on both


def test_a_reversed_curve_uncovers_data_and_stays_trusted():
    comparison = compare_charts(read_chart(render(curves())),
                                read_chart(render(curves(train=(X, CURVES["train"][::-1])))))
    assert comparison.signals["chart.data_coverage"] < 0.8
    assert comparison.signals["chart.reading_confidence"] >= 0.7  # a sure "no"


def test_an_axis_multiplier_read_on_one_chart_is_compared_after_the_shift():
    """pgfplots writes "x10^-4" once above the axis, matplotlib an offset text "1e-4": tick labels
    read without it differ by a whole power of ten. The values are compared after the shift,
    and the reading confidence says what was assumed."""
    y = {name: v * 1e-4 for name, v in CURVES.items()}

    def scaled_ticks(ax):  # published: tick labels 0..3, the multiplier as an axis title
        for name, v in CURVES.items():
            ax.plot(X, v, label=name, linewidth=2)
        ax.set_ylim(0, 3.2)
        ax.set_ylabel("loss (x1e-4)")
        ax.legend()

    def true_values(ax):  # reproduction: 0.0000 .. 0.0003 written out
        for name, v in y.items():
            ax.plot(X, v, label=name, linewidth=2, linestyle="--")
        ax.set_ylim(0, 3.2e-4)
        ax.yaxis.get_major_formatter().set_useOffset(False)
        ax.ticklabel_format(axis="y", style="plain")
        ax.legend()

    comparison = compare_charts(read_chart(_figure(scaled_ticks)), read_chart(_figure(true_values)))
    assert comparison.signals["chart.value_agreement"] >= 0.9, comparison.signals
    assert comparison.signals["chart.match_score"] >= 0.6
    assert comparison.signals["chart.reading_confidence"] <= 0.7
    assert "power of ten" in comparison.reasons["chart.reading_confidence"]


def test_reference_lines_and_frames_are_not_series():
    """A grey dotted chance level across the plot is chart furniture: a reproduction without it
    still shows the published series (the demo's alice c1 failed on this under 1.2.0)."""
    def with_reference(ax):
        for name, v in CURVES.items():
            ax.plot(X, v, label=name, linewidth=2)
        ax.axhline(0.25 * 3.2, color="0.6", linestyle=":", linewidth=1.5)
        ax.set_ylim(0, 3.2)
        ax.legend()

    comparison = compare_charts(read_chart(_figure(with_reference)),
                                read_chart(render(curves(), style="ggplot")))
    assert comparison.signals["chart.series_published"] == 2
    assert comparison.signals["chart.series_reproduced"] == 2


def test_swapped_legend_names_are_not_the_same_series():
    swapped = {"train": (X, CURVES["validation"]), "validation": (X, CURVES["train"])}
    comparison = compare_charts(read_chart(render(curves())),
                                read_chart(render(swapped, style="ggplot")))
    signals = {name: (Signal(value=value) if value is not None else Signal.absent("absent"))
               for name, value in comparison.signals.items()}
    result = RULES["chart_same_series_named"](None, signals)
    assert result.value is False or comparison.signals["chart.value_agreement"] < 0.5


def test_unread_reproduction_names_leave_the_series_unverified():
    comparison = compare_charts(read_chart(render(curves())),
                                read_chart(render(curves(), style="ggplot", legend=False)))
    assert comparison.signals["chart.legend_agreement"] is None
    assert "unverified" in comparison.reasons["chart.legend_agreement"]
    signals = {name: (Signal(value=value) if value is not None else
                      Signal.absent(comparison.reasons.get(name, "absent")))
               for name, value in comparison.signals.items()}
    result = RULES["chart_same_series_named"](None, signals)
    if comparison.signals["chart.series_matched"] == 1.0:
        assert result.value is None and "unverified" in result.rationale


def test_scatter_series_are_compared_as_point_sets():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 100, 25)
    y = 0.02 * x + rng.normal(0, 0.2, 25) + 1
    published = read_chart(render({"runs": (x, y)}, kind="scatter"))
    restyled = read_chart(render({"runs": (x, y)}, kind="scatter", style="ggplot"))
    moved = read_chart(render({"runs": (x, y + 0.8)}, kind="scatter"))
    same = compare_charts(published, restyled).signals
    other = compare_charts(published, moved).signals
    assert same["chart.value_agreement"] >= 0.8, same
    # the moved cloud is no longer the same series: unmatched, or matched with values apart
    assert other["chart.value_agreement"] is None or other["chart.value_agreement"] < 0.5, other
    assert other["chart.match_score"] < 0.3


# --- the offline judge: fails only on a reading it can trust ----------------------------------

def _claim(tmp_path: Path) -> ClaimInput:
    return ClaimInput(
        key=ClaimKey(submission_id="t/s", claim_id="p/c1"),
        submission=SubmissionHeader(submission_id="t/s", paper_id="p"),
        claim=Claim(claim_id="p/c1", kind="figure", source="Figure 1", statement="Loss falls.",
                    published_figure="a.png", reproduced_figure="b.png", verdict="verified"),
        root=tmp_path)


def _signals(**values) -> dict[str, Signal]:
    base = {"pixel.copy": False, "chart.match_score": 0.1, "chart.series_published": 2.0,
            "chart.series_reproduced": 2.0, "chart.series_matched": 1.0,
            "chart.shape_agreement": 0.2, "chart.value_agreement": 0.1,
            "chart.axis_scale_match": True, "chart.range_overlap": 0.95,
            "chart.named_series": 0.0, "chart.reading_confidence": 0.9}
    base.update(values)
    return {name: Signal(value=value, reason="doubts: x axis unread" if
                         name == "chart.reading_confidence" else None)
            for name, value in base.items()}


@pytest.mark.parametrize("confidence, outcome", [(0.9, "fail"), (0.3, "incomplete")])
def test_a_failing_chart_answer_needs_a_trusted_reading(tmp_path, confidence, outcome):
    rubric = RubricLibrary().load(RUBRIC)
    task = JudgeTask(claim=_claim(tmp_path), rubric=rubric,
                     signals=_signals(**{"chart.reading_confidence": confidence}), images={})
    answers = asyncio.run(OfflineJudge()(task)).answers
    assert aggregate(rubric, answers).outcome.value == outcome
    overall = next(a for a in answers if a.criterion_id == "overall_match")
    if outcome == "incomplete":
        assert overall.status is AnswerStatus.unscored
        assert "chart.reading_confidence = 0.30 < 0.7" in overall.reason
        assert "x axis unread" in overall.reason  # the doubts are given
    else:
        assert overall.status is AnswerStatus.scored and overall.value == 1


def test_a_passing_answer_needs_no_such_trust(tmp_path):
    rubric = RubricLibrary().load(RUBRIC)
    good = _signals(**{"chart.match_score": 0.95, "chart.shape_agreement": 0.99,
                       "chart.value_agreement": 0.98, "chart.reading_confidence": 0.2})
    answers = asyncio.run(OfflineJudge()(JudgeTask(claim=_claim(tmp_path), rubric=rubric,
                                                   signals=good, images={}))).answers
    assert aggregate(rubric, answers).outcome.value == "pass"


def test_older_rubrics_answer_as_before(tmp_path):
    """1.2.0 has no trust condition: the same unreliable reading still fails there."""
    rubric = RubricLibrary().load("figure-match@1.2.0")
    task = JudgeTask(claim=_claim(tmp_path), rubric=rubric,
                     signals=_signals(**{"chart.reading_confidence": 0.1}), images={})
    assert aggregate(rubric, asyncio.run(OfflineJudge()(task)).answers).outcome.value == "fail"


def test_bars_coloured_by_category_are_one_series():
    """One colour per bar (a common bar chart) is one series of four bars, not four series of one
    point that cannot be compared: the faithful restyle matches, a bar 40% lower does not."""
    def bars(scale=1.0):
        def draw(ax):
            values = np.array([0.62, 0.71, 0.78, 0.74])
            values[2] *= scale
            ax.bar(["A", "B", "C", "D"], values, yerr=[0.02, 0.03, 0.02, 0.04], capsize=4,
                   color=["#4c72b0", "#dd8452", "#55a868", "#c44e52"])
            ax.set_ylabel("score")
        return draw

    published = read_chart(_figure(bars()))
    faithful = compare_charts(published, read_chart(_figure(bars(), size=(9, 6)))).signals
    lower = compare_charts(published, read_chart(_figure(bars(0.6)))).signals
    assert faithful["chart.series_published"] == faithful["chart.series_reproduced"] == 1
    assert faithful["chart.match_score"] >= 0.8, faithful
    assert lower["chart.match_score"] < 0.4, lower


# --- answers the reader can give without trusting its series: categories, confirmed crops ----

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
HIGHS = np.array([8, 9, 12, 15, 19, 22, 25, 25, 21, 16, 11, 8], dtype=float)
LOWS = np.array([2, 2, 4, 6, 9, 12, 14, 14, 11, 8, 5, 3], dtype=float)


def _months(highs, lows, *, padded: bool):
    def draw(ax):
        ax.plot(MONTHS, highs, label="high", color="tab:red")
        ax.plot(MONTHS, lows, label="low", color="tab:blue")
        # ggplot2 and Excel put the first category half a step in; matplotlib on the frame.
        ax.margins(x=0.06 if padded else 0.0)
        ax.set_ylabel("temperature (C)")
        ax.legend()
    return _figure(draw)


def test_month_names_on_x_are_compared_over_the_data_extent():
    """No numeric x axis on either chart (month names): x is compared over the data's extent,
    so another library's category padding is no difference, and a shifted series is a sure "no"."""
    published = read_chart(_months(HIGHS, LOWS, padded=False))
    restyled = compare_charts(published, read_chart(_months(HIGHS, LOWS, padded=True))).signals
    shifted = compare_charts(published, read_chart(_months(HIGHS, LOWS + 5, padded=True)))
    assert restyled["chart.match_score"] >= 0.7, restyled
    assert shifted.signals["chart.match_score"] < 0.4, shifted.signals
    assert shifted.signals["chart.reading_confidence"] >= 0.7, shifted.reasons
    assert "no numeric x axis" in shifted.reasons["chart.reading_confidence"]


def _clouds(x_max: float, *, style: str = "default"):
    rng = np.random.default_rng(11)

    def draw(ax):
        for name, slope, colour in (("a", 0.5, "tab:orange"), ("b", 0.2, "tab:green")):
            x = rng.uniform(0, 100, 240)
            y = slope * x + rng.normal(0, 6, 240)
            keep = x <= x_max
            ax.scatter(x[keep], y[keep], s=30, alpha=0.7, label=name, color=colour)
        ax.set_xlabel("step")
        ax.legend()
    with plt.style.context(style):
        return _figure(draw)


def test_a_crop_seen_on_ticks_and_ink_is_sure_even_in_a_cloud():
    """Overlapping markers make a cloud's series approximate, so a "no" from them is not sure;
    but a reproduction whose x axis and data both stop at 55% of the range was cut, whatever
    the series: the tick labels and the ink confirm each other."""
    published = read_chart(_clouds(100))
    restyled = compare_charts(published, read_chart(_clouds(100, style="ggplot")))
    cut = compare_charts(published, read_chart(_clouds(55)))
    assert "scatter cloud" in restyled.reasons["chart.reading_confidence"]
    assert restyled.signals["chart.reading_confidence"] < 0.7  # no sure "no" on a restyle
    assert cut.signals["chart.reading_confidence"] >= 0.7, cut.reasons
    assert cut.reasons["chart.reading_confidence"].startswith("confirmed: the x ranges differ")
    assert cut.signals["chart.range_overlap"] < 0.7


# --- colour blends: where two lines converge, anti-aliasing makes a third colour --------------

def _axis(name: str, lo: float, hi: float):
    from judging.signals.chart.types import Axis, Tick

    pixels = (100.0, 700.0) if name == "x" else (500.0, 100.0)
    slope = (hi - lo) / (pixels[1] - pixels[0])
    ticks = [Tick(pixel=pixels[0] + k * (pixels[1] - pixels[0]) / 4, value=lo + k * (hi - lo) / 4,
                  text=f"{lo + k * (hi - lo) / 4:g}") for k in range(5)]
    return Axis(orientation=name, scale="linear", pixel_range=pixels, data_range=(lo, hi),
                ticks=ticks, confidence=1.0, intercept=lo - slope * pixels[0], slope=slope)


def _reading(series: list[tuple[str | None, np.ndarray]], *, x_max: float = 5.0):
    from judging.signals.chart.types import ChartReading, Panel, Series

    def one(name, points, k):
        norm = np.column_stack([points[:, 0] / x_max, points[:, 1] / 9000.0])
        return Series(name=name, style=f"#{k:02x}0000", kind="line", points=points,
                      confidence=1.0, normalised=norm)

    panel = Panel(bbox=(100, 100, 700, 500), x=_axis("x", 0.0, x_max), y=_axis("y", 0.0, 9000.0),
                  series=[one(name, pts, k) for k, (name, pts) in enumerate(series)])
    return ChartReading(panels=[panel], readable=True, size=(800, 600))


V = np.linspace(0.5, 5.0, 400)
ISOTHERMS = [("p0", np.column_stack([V, 2500 / V])),
             ("p1", np.column_stack([V, 2500 / V + 1600 / V**2])),
             ("p2", np.column_stack([V, 2500 / V + 1600 / V**2 - 300 / V**3]))]


def test_a_colour_blend_where_lines_converge_is_no_extra_series():
    """bmh's red and purple isotherms meet towards the right; their anti-aliased edge is a
    crimson run the reader takes for a series of its own (tz-isotherms in realfig-dev)."""
    tail = V >= 3.2
    blend = np.column_stack([V[tail], ISOTHERMS[1][1][tail, 1] + 40.0])
    reproduced = [*ISOTHERMS, (None, blend)]
    signals = compare_charts(_reading(ISOTHERMS), _reading(reproduced)).signals
    assert signals["chart.series_reproduced"] == 3.0, signals
    assert signals["chart.series_matched"] == 1.0 and signals["chart.match_score"] >= 0.9


def test_a_named_series_left_out_is_missing_however_close_to_the_others():
    """A curve that runs close to the others for most of its length is still a curve when the
    legend names it: a reproduction without it misses a series."""
    close = [*ISOTHERMS, ("p3", np.column_stack([V, ISOTHERMS[1][1][:, 1] + 60.0]))]
    signals = compare_charts(_reading(close), _reading(ISOTHERMS)).signals
    assert signals["chart.series_published"] == 4.0, signals
    assert signals["chart.series_matched"] < 1.0


# --- clouds with a line of their colour through them --------------------------------------------

def test_a_cloud_with_its_fit_line_is_read_as_markers_and_a_marked_line_as_a_line():
    """A fit line joins the markers it crosses into one component, which hid the markers; the
    markers standing apart give their size and an opening removes the thinner line. A line
    with a marker at every point (markers one after the other along x) stays a line."""
    import io

    from PIL import Image

    from tests.signals.chart import figures_wild as wild

    cloud = read_chart(Image.open(io.BytesIO(wild.named_clouds("seaborn"))).convert("RGB"))
    kinds = {s.name: s.kind for p in cloud.panels for s in p.series if s.name}
    assert kinds == {"Adelie": "scatter", "Chinstrap": "scatter", "Gentoo": "scatter"}, kinds

    def marked(ax):
        x = np.linspace(0, 10, 25)
        ax.plot(x, np.sqrt(x), "o-", markersize=7, label="accuracy")
        ax.plot(x, 0.3 * x, "s-", markersize=7, label="loss")
        ax.legend()

    lines = read_chart(_figure(marked))
    kinds = {s.name: s.kind for p in lines.panels for s in p.series if s.name}
    assert kinds.get("accuracy") == "line" and kinds.get("loss") == "line", kinds


def test_clouds_without_legend_names_are_not_sure_enough_to_fail():
    """Unnamed clouds split by colour alone may be split or merged otherwise on the other chart:
    their medians may disagree through the reader's grouping, so no sure "no"."""
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 100, 200)

    def draw(shift):
        def plot(ax):
            ax.scatter(x, 0.5 * x + rng.normal(0, 6, 200), s=30, alpha=0.7, color="tab:blue")
            ax.scatter(x, 0.1 * x + shift + rng.normal(0, 6, 200), s=30, alpha=0.7,
                       color="tab:red")
        return read_chart(_figure(plot))

    moved = compare_charts(draw(0.0), draw(25.0))
    assert moved.signals["chart.reading_confidence"] < 0.7, moved.reasons


def _cloud_reading(names, *, shift: float = 0.0):
    """Three named clouds of 150 points each, in a reading built by hand (names as OCR gave them)."""
    from judging.signals.chart.types import ChartReading, Panel, Series

    rng = np.random.default_rng(4)
    series = []
    for k, (name, centre) in enumerate(zip(names, (2.0, 5.0, 8.0))):
        x = np.sort(rng.normal(centre, 0.8, 150))
        y = 3000 + 300 * k + 200 * (x - centre) + rng.normal(0, 400, 150) + (shift if k == 0
                                                                           else 0.0)
        points = np.column_stack([x, y])
        series.append(Series(name=name, style=f"#{40 * k + 20:02x}3060", kind="scatter",
                             points=points, confidence=0.8,
                             normalised=np.column_stack([x / 10.0, y / 9000.0])))
    panel = Panel(bbox=(100, 100, 700, 500), x=_axis("x", 0.0, 10.0), y=_axis("y", 0.0, 9000.0),
                  series=series)
    return ChartReading(panels=[panel], readable=True, size=(800, 600))


@pytest.mark.parametrize("names, trusted", [
    (("Adelie", "Chinstrap", "Gentoo"), True),
    ((None, "Chinstrap", "Gentoo"), True),   # one label unread: paired by elimination
    (("Adelie", None, None), False),         # two unread: the split is the reader's alone
])
def test_a_shifted_cloud_is_failed_only_when_the_legends_confirm_the_split(names, trusted):
    published = _cloud_reading(("Adelie", "Chinstrap", "Gentoo"))
    shifted = compare_charts(published, _cloud_reading(names, shift=1800.0))
    confidence = shifted.signals["chart.reading_confidence"]
    assert (confidence >= 0.7) is trusted, shifted.reasons
    if trusted:
        assert shifted.signals["chart.value_agreement"] < 0.5  # the moved cloud disagrees
        same = compare_charts(published, _cloud_reading(names))
        assert same.signals["chart.match_score"] >= 0.8, same.signals


def test_swapped_cloud_names_are_a_sure_difference():
    """The legends pair Adelie with "Adelie": a reproduction whose labels were swapped shows
    other data under those names, and both legends confirm it."""
    published = _cloud_reading(("Adelie", "Chinstrap", "Gentoo"))
    swapped = compare_charts(published, _cloud_reading(("Gentoo", "Chinstrap", "Adelie")))
    assert swapped.signals["chart.reading_confidence"] >= 0.7, swapped.reasons
    assert swapped.signals["chart.value_agreement"] < 0.5
    assert swapped.signals["chart.match_score"] < 0.4


def test_facets_share_their_one_legend_by_colour_and_small_dots_are_a_cloud():
    """facet_wrap draws one legend: the other facets' series take its names by colour, so a
    group swapped inside a facet without a legend is still caught by name; dots smaller than
    markers that lie over each other are a cloud, not a dotted line."""
    import io

    from PIL import Image

    from tests.signals.chart import figures_wild as wild

    def read(png: bytes):
        return read_chart(Image.open(io.BytesIO(png)).convert("RGB"))

    published = read(wild.faceted_clouds())
    names = [[(s.kind, s.name) for s in p.series] for p in published.panels if p.series]
    assert len(names) == 3, names
    for panel in names:
        assert sorted(panel) == [("scatter", "female"), ("scatter", "male")], names
    same = compare_charts(published, read(wild.faceted_clouds()))
    assert same.signals["chart.match_score"] >= 0.8, same.signals
    swapped = compare_charts(published, read(wild.faceted_clouds(swap_in_panel=2)))
    assert swapped.signals["chart.match_score"] < 0.4, swapped.signals
    assert swapped.signals["chart.reading_confidence"] >= 0.7, swapped.reasons
