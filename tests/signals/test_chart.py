"""Chart reading (judging.signals.chart): axes from OCR'd tick labels, series in data units,
comparison of two charts, the overlay, and honest absence when a chart cannot be read.

Charts are rendered here with matplotlib (Agg, fixed sizes) from known data, so every expected
value below is the data the chart was drawn from, not a value the reader produced before.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from judging.models import Tolerance  # noqa: E402
from judging.signals import measure_chart  # noqa: E402
from judging.signals.chart import compare_charts, read_chart, render_overlay
from judging.signals.chart.types import CHART_SIGNALS

X = np.linspace(0, 100, 120)
CURVES = {"train": 2.4 * np.exp(-X / 25) + 0.3, "validation": 2.6 * np.exp(-X / 30) + 0.5}


def render(series: dict[str, tuple[np.ndarray, np.ndarray]], *, style: str = "default",
           xlim=(0, 100), ylim=(0, 3.2), xscale="linear", yscale="linear", kind="line",
           size=(8, 6), dpi=150, grayscale=False, legend=True) -> Image.Image:
    plt.rcdefaults()
    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=size, dpi=dpi)
        styles = ["-", "--", ":"]
        for k, (name, (x, y)) in enumerate(series.items()):
            extra = {"color": ["0.0", "0.45", "0.25"][k], "linestyle": styles[k]} if grayscale \
                else {}
            if kind == "line":
                ax.plot(x, y, label=name, linewidth=2, **extra)
            elif kind == "scatter":
                ax.scatter(x, y, label=name, s=30, **({"color": extra["color"]} if extra else {}))
            else:
                width = 0.8 / len(series)
                ax.bar(x + (k - (len(series) - 1) / 2) * width, y, width=width, label=name)
        ax.set_xscale(xscale)
        ax.set_yscale(yscale)
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        if legend:
            ax.legend()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        plt.close(fig)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


def curves(**changes) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {name: (X, y) for name, y in CURVES.items()}
    out.update(changes)
    return out


def only_panel(reading):
    assert reading.readable, reading.reason
    assert len(reading.panels) == 1, [p.bbox for p in reading.panels]
    return reading.panels[0]


def test_linear_ticks_are_read_and_fit():
    panel = only_panel(read_chart(render(curves())))
    assert panel.x is not None and panel.y is not None, panel.problems
    assert (panel.x.scale, panel.y.scale) == ("linear", "linear")
    # The axis limits set on the chart, recovered from the OCR'd tick labels and their positions.
    assert panel.x.data_range == pytest.approx((0, 100), abs=100 * 0.01)
    assert panel.y.data_range == pytest.approx((0, 3.2), abs=3.2 * 0.01)
    for tick in panel.y.ticks:
        assert float(panel.y.to_data([tick.pixel])[0]) == pytest.approx(tick.value, abs=0.02)


def test_log_ticks_are_read_as_a_log_axis():
    x = np.logspace(-4, 0, 60)
    y = 10 ** (1 + np.log10(x))  # a straight line on log-log axes
    panel = only_panel(read_chart(render({"loss": (x, y)}, xscale="log", yscale="log",
                                         xlim=(1e-4, 1), ylim=(1e-4, 1e2))))
    assert panel.x is not None and panel.y is not None, panel.problems
    assert (panel.x.scale, panel.y.scale) == ("log", "log")
    lo, hi = np.log10(panel.x.data_range)
    assert (lo, hi) == pytest.approx((-4, 0), abs=4 * 0.01)
    lo, hi = np.log10(panel.y.data_range)
    assert (lo, hi) == pytest.approx((-4, 2), abs=6 * 0.01)


def _series_error(series, x, y, y_range: float) -> float:
    """95th percentile of |read - drawn| over the drawn x, as a share of the y axis range."""
    points = series.points
    inside = (x >= points[0, 0]) & (x <= points[-1, 0])
    assert inside.mean() > 0.9, "the series read covers less than 90% of the drawn x range"
    read = np.interp(x[inside], points[:, 0], points[:, 1])
    return float(np.percentile(np.abs(read - y[inside]), 95) / y_range)


@pytest.mark.parametrize("style,grayscale", [("default", False), ("ggplot", False),
                                             ("seaborn-v0_8-whitegrid", False),
                                             ("default", True)])
def test_line_series_are_recovered_within_two_percent_of_the_axis_range(style, grayscale):
    panel = only_panel(read_chart(render(curves(), style=style, grayscale=grayscale)))
    assert panel.x is not None and panel.y is not None, panel.problems
    assert len([s for s in panel.series if np.ptp(s.points[:, 0]) > 50]) == 2, \
        [(s.style, len(s.points)) for s in panel.series]
    for name, y in CURVES.items():
        errors = [_series_error(s, X, y, 3.2) for s in panel.series
                  if np.ptp(s.points[:, 0]) > 50]
        assert min(errors) <= 0.02, (name, errors)
        assert all(s.confidence > 0 for s in panel.series)


def test_legend_names_series_when_readable():
    panel = only_panel(read_chart(render(curves(), dpi=200)))
    names = {s.name for s in panel.series}
    assert {"train", "validation"} <= names, names


@pytest.mark.parametrize("style", ["default", "grayscale"])
def test_legend_names_scatter_series(style):
    # A scatter legend's marker sits in the middle of its handle, further from the name than a
    # line sample's end.
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(5, 95, 25))
    series = {"ResNet-50": (x, 80 - 40 * np.exp(-x / 20) + rng.normal(0, 1, 25)),
              "ViT-B/16": (x, 60 - 30 * np.exp(-x / 30) + rng.normal(0, 1, 25))}
    panel = only_panel(read_chart(render(series, kind="scatter", style=style, ylim=(20, 90),
                                         grayscale=style == "grayscale")))
    names = {s.name for s in panel.series}
    assert {"ResNet-50", "ViT-B/16"} <= names, names


@pytest.mark.parametrize("image,reason", [
    (Image.new("RGB", (800, 600), "white"), "no plot area"),
    (Image.new("RGB", (40, 30), "white"), "too small"),
    (Image.fromarray(np.random.default_rng(7).integers(0, 255, (600, 800, 3), dtype=np.uint8)),
     ""),
])
def test_unreadable_figures_say_why(image, reason):
    reading = read_chart(image)
    assert not reading.readable
    assert reading.reason and reason in reading.reason


def test_unreadable_chart_gives_absent_signals_with_a_reason_never_zero():
    blank = Image.new("RGB", (800, 600), "white")
    signals, overlay = measure_chart(render(curves()), blank, tolerance=None)
    assert set(signals) == set(CHART_SIGNALS)
    for name, signal in signals.items():
        assert signal.value is None, name
        assert "reproduced chart unreadable" in signal.reason, (name, signal.reason)
    assert overlay is not None  # the published chart's series alone are still shown


def test_restyled_chart_matches_and_reversed_curve_does_not():
    published = read_chart(render(curves()))
    restyled = read_chart(render(curves(), style="ggplot", size=(10, 7), dpi=120))
    faithful = compare_charts(published, restyled)
    assert faithful.signals["chart.series_matched"] == 1.0
    assert faithful.signals["chart.axis_scale_match"] is True
    assert faithful.signals["chart.shape_agreement"] > 0.95
    assert faithful.signals["chart.value_agreement"] > 0.9
    assert faithful.signals["chart.match_score"] > 0.8

    reversed_ = read_chart(render(curves(train=(X, CURVES["train"][::-1]))))
    unfaithful = compare_charts(published, reversed_)
    assert unfaithful.signals["chart.shape_agreement"] < 0.3
    assert unfaithful.signals["chart.trend_agreement"] <= 0.5
    assert unfaithful.signals["chart.match_score"] < faithful.signals["chart.match_score"] - 0.4


def test_scaled_values_and_another_scale_are_caught():
    published = read_chart(render(curves()))
    scaled = read_chart(render(curves(train=(X, CURVES["train"] * 1.3),
                                      validation=(X, CURVES["validation"] * 1.3)),
                               ylim=(0, 4.2)))
    comparison = compare_charts(published, scaled)
    assert comparison.signals["chart.shape_agreement"] > 0.95  # same shape ...
    assert comparison.signals["chart.value_agreement"] < 0.5  # ... other values
    assert comparison.signals["chart.max_value_error"] > 0.1

    log_y = read_chart(render(curves(), yscale="log", ylim=(0.1, 10)))
    assert compare_charts(published, log_y).signals["chart.axis_scale_match"] is False


def test_claim_tolerance_widens_value_agreement():
    published = read_chart(render(curves()))
    shifted = read_chart(render(curves(train=(X, CURVES["train"] + 0.25),
                                       validation=(X, CURVES["validation"] + 0.25))))
    strict = compare_charts(published, shifted)
    loose = compare_charts(published, shifted, tolerance=Tolerance(absolute=0.4))
    assert strict.signals["chart.value_agreement"] < 0.5
    assert loose.signals["chart.value_agreement"] == 1.0


def test_missing_series_is_counted():
    published = read_chart(render(curves()))
    missing = read_chart(render({"train": (X, CURVES["train"])}))
    comparison = compare_charts(published, missing)
    assert comparison.signals["chart.series_published"] == 2
    assert comparison.signals["chart.series_reproduced"] == 1
    assert comparison.signals["chart.series_matched"] == 0.5


def test_bar_chart_values_are_read():
    x = np.arange(5, dtype=float)
    heights = np.array([62.0, 71.0, 55.0, 80.0, 47.0])
    panel = only_panel(read_chart(render({"ours": (x, heights)}, kind="bar", xlim=(-0.6, 4.6),
                                         ylim=(0, 100))))
    bars = [s for s in panel.series if s.kind == "bar"]
    assert bars, [(s.kind, s.style) for s in panel.series]
    assert np.sort(bars[0].points[:, 1]) == pytest.approx(np.sort(heights), abs=2.0)


def test_wide_bars_covering_most_of_the_plot_are_not_taken_for_its_background():
    # Bars 0.8 wide, as tall as most of the y range, with matplotlib's own margins: they cover
    # ~70% of the plot area, so its commonest colour is the bars'. The gaps between them must
    # not be read as white bars.
    x = np.arange(5, dtype=float)
    heights = np.array([88.0, 80.0, 92.0, 84.0, 90.0])
    panel = only_panel(read_chart(render({"ours": (x, heights)}, kind="bar", xlim=(None, None),
                                         ylim=(0, None), legend=False)))
    bars = [s for s in panel.series if s.kind == "bar"]
    assert [s.style for s in bars] == ["#1f77b4"], [(s.kind, s.style) for s in panel.series]
    assert np.sort(bars[0].points[:, 1]) == pytest.approx(np.sort(heights), abs=2.0)


def test_overlay_draws_both_charts():
    published = read_chart(render(curves()))
    reproduced = read_chart(render(curves(), style="ggplot"))
    image = render_overlay(published, reproduced, compare_charts(published, reproduced))
    assert image is not None and image.size[0] == 512
    pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    assert (np.abs(pixels.astype(int) - 255).sum(axis=1) > 60).mean() > 0.01  # something drawn


def test_chart_command_prints_the_reading_and_the_comparison(tmp_path):
    import json

    from click.testing import CliRunner

    from judging.cli import main

    render(curves()).save(tmp_path / "a.png")
    render(curves(), style="ggplot").save(tmp_path / "b.png")
    Image.new("RGB", (400, 300), "white").save(tmp_path / "blank.png")
    runner = CliRunner()
    result = runner.invoke(main, ["chart", str(tmp_path / "a.png"), str(tmp_path / "b.png"),
                                  "--json", "--overlay", str(tmp_path / "o.png")])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["signals"]["chart.series_matched"] == 1.0
    assert out["published"]["panels"][0]["x"]["scale"] == "linear"
    assert Image.open(tmp_path / "o.png").size[0] == 512
    result = runner.invoke(main, ["chart", str(tmp_path / "blank.png")])
    assert result.exit_code == 0 and "unreadable (no plot area found" in result.output


@pytest.mark.parametrize("text,value", [
    ("0.5", 0.5), ("−1", -1.0), ("1e-3", 1e-3), ("10^3", 1e3), ("10³", 1e3), ("2.5k", 2500.0),
    ("50%", 0.5), ("1,000", 1000.0), ("steps", None),
    ("−10³", -1e3), ("-10^-2", -1e-2), ("2.5x10^3", 2500.0),
    ("10^1000", None), ("10^-999", None), ("1e999", None),  # misread exponents: no value, no crash
    ("10^" + "9" * 5000, None),
])
def test_tick_label_numbers(text, value):
    from judging.signals.chart.ocr import parse_number

    assert parse_number(text) == (pytest.approx(value) if value is not None else None)
