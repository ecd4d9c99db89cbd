"""Chart readings built from figure data: the file's series in data units, its scales and limits,
scales it leaves unstated taken from the other side, and comparisons of such readings."""

from __future__ import annotations

import json

import numpy as np

from judging.figures.data import parse_figure_data
from judging.signals import (
    compare_charts,
    read_chart,
    reading_from_data,
    render_overlay,
    without_reference_lines,
)
from tests.conftest import open_png, render_chart


def data(obj: dict | str):
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return parse_figure_data(text, name="test").data


X = np.linspace(0, 10, 40)
CURVES = {"train": np.exp(-X / 3) + 0.1, "val": np.exp(-X / 4) + 0.15}


def curves_json(curves: dict[str, np.ndarray] = CURVES, **panel) -> dict:
    return {"panels": [{**panel, "series": [{"name": k, "x": X.tolist(), "y": v.tolist()}
                                            for k, v in curves.items()]}]}


def test_a_reading_holds_the_series_exactly_in_data_units() -> None:
    reading = reading_from_data(data(curves_json(yscale="log")))
    assert reading.readable
    (panel,) = reading.panels
    assert panel.y.scale == "log" and panel.x.scale == "linear"
    assert [s.name for s in panel.series] == ["train", "val"] == panel.legend
    train = panel.series[0]
    assert train.kind == "line" and train.x_units == train.y_units == "data"
    np.testing.assert_allclose(train.points[:, 1], CURVES["train"])
    # the axis range is the data's extent plus a 5% margin (log10 units on the log axis)
    lo, hi = np.log10(panel.y.data_range)
    ys = np.log10(np.concatenate(list(CURVES.values())))
    assert np.isclose(lo, ys.min() - 0.05 * np.ptp(ys)) and np.isclose(hi, ys.max() + 0.05 *
                                                                         np.ptp(ys))
    assert 0 < train.normalised[:, 1].min() < train.normalised[:, 1].max() < 1


def test_limits_kinds_and_category_positions() -> None:
    reading = reading_from_data(data({"panels": [
        {"kind": "bar", "ylim": [0, 10], "series": [{"name": "n", "y": [3, 1, 2]}]},
        {"series": [{"name": "s", "kind": "scatter", "x": [3, 1, 2], "y": [1, 2, 3]}]}]}))
    bars, scatter = reading.panels
    assert bars.y.data_range == (0.0, 10.0) and bars.series[0].kind == "bar"
    assert bars.series[0].points[:, 0].tolist() == [0.0, 1.0, 2.0]
    assert scatter.series[0].kind == "scatter"
    assert scatter.series[0].points[:, 0].tolist() == [1.0, 2.0, 3.0]  # sorted by x
    assert bars.bbox[1] < scatter.bbox[1]  # the file's order is the reading order


def test_an_unstated_scale_is_the_other_sides() -> None:
    image = read_chart(open_png(render_chart(log_y=True)))
    assert image.panels[0].y.scale == "log"
    csv = "step,loss\n" + "".join(f"{x},{y}\n" for x, y in zip(X, CURVES["train"]))
    assert reading_from_data(data(csv), other=image).panels[0].y.scale == "log"
    assert reading_from_data(data(csv)).panels[0].y.scale == "linear"
    # a stated scale is kept whatever the other side says
    stated = reading_from_data(data(curves_json(yscale="linear")), other=image)
    assert stated.panels[0].y.scale == "linear"


def test_values_a_taken_log_axis_cannot_show_are_left_out_and_said() -> None:
    log_side = reading_from_data(data({"series": [{"name": "a", "y": [1, 10]}],
                                       "yscale": "log"}))
    taken = reading_from_data(data("step,a\n1,-1\n2,1\n3,10\n"), other=log_side)
    (panel,) = taken.panels
    assert panel.y.scale == "log" and len(panel.series[0].points) == 2
    assert "1 non-positive value(s) left out" in panel.problems[0]


def test_data_compared_with_itself_matches_and_a_reversed_curve_does_not() -> None:
    published = reading_from_data(data(curves_json()))
    same = compare_charts(published, reading_from_data(data(curves_json())))
    assert same.signals["chart.match_score"] > 0.99
    assert same.signals["chart.series_matched"] == 1.0
    reversed_ = {**CURVES, "train": CURVES["train"][::-1]}
    changed = compare_charts(published, reading_from_data(data(curves_json(reversed_))))
    assert changed.signals["chart.match_score"] < 0.5
    assert render_overlay(published, reading_from_data(data(curves_json(reversed_))),
                          changed) is not None


def test_a_series_matched_over_part_of_its_range_scores_lower_than_a_whole_one() -> None:
    # jove-scaling__unfaithful2's kind: a reproduced line that ends at 60% of the x range agrees
    # with its published counterpart on that part only (issue 27: the match score weighs the
    # share compared, as the evidence does).
    published = reading_from_data(data(curves_json(xlim=[0, 10])))
    cut = {"panels": [{"xlim": [0, 10], "series": [
        {"name": "train", "x": X.tolist(), "y": CURVES["train"].tolist()},
        {"name": "val", "x": X[X <= 6].tolist(), "y": CURVES["val"][X <= 6].tolist()}]}]}
    whole = compare_charts(published, reading_from_data(data(curves_json(xlim=[0, 10]))))
    part = compare_charts(published, reading_from_data(data(cut)))
    assert part.signals["chart.series_matched"] == whole.signals["chart.series_matched"] == 1.0
    assert whole.signals["chart.match_score"] > 0.99
    assert part.signals["chart.match_score"] < 0.9 * whole.signals["chart.match_score"]


def test_data_compared_with_its_own_image_matches() -> None:
    image = read_chart(open_png(render_chart(series={k: (X, v) for k, v in CURVES.items()})))
    comparison = compare_charts(reading_from_data(data(curves_json()), other=image), image)
    assert comparison.signals["chart.match_score"] > 0.9


def _with_threshold() -> bytes:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 6), dpi=100)
    for name, y in CURVES.items():
        ax.plot(X, y, label=name)
    # a coloured target line: not grey furniture, which compare_charts leaves out by itself
    ax.axhline(0.3, color="tab:red", linestyle="--", linewidth=1.5)
    ax.legend()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


def test_an_images_reference_line_is_left_out_against_data_without_it() -> None:
    image = read_chart(open_png(_with_threshold()))
    series = reading_from_data(data(curves_json()), other=image)
    assert len(image.panels[0].series) > len(series.panels[0].series)
    kept, dropped = without_reference_lines(image, series)
    assert dropped == 1 and len(kept.panels[0].series) == 2
    assert "reference lines" in kept.panels[0].problems[-1]
    assert compare_charts(series, kept).signals["chart.series_matched"] == 1.0
    # data that lists the line as a series keeps it on the image side too
    with_line = {**CURVES, "threshold": np.full_like(X, 0.3)}
    listed = reading_from_data(data(curves_json(with_line)), other=image)
    assert without_reference_lines(image, listed) == (image, 0)


def test_a_data_axis_is_trusted_as_exact() -> None:
    from judging.signals.chart.compare.trust import axis_trust

    for scale in ("linear", "log"):
        panel = reading_from_data(data(curves_json(yscale=scale))).panels[0]
        assert [axis_trust(axis) for axis in (panel.x, panel.y)] == [(1.0, ""), (1.0, "")]
        assert np.allclose([t.value for t in panel.y.ticks],
                           panel.y.to_data(np.array([t.pixel for t in panel.y.ticks])))
    same = compare_charts(reading_from_data(data(curves_json())),
                          reading_from_data(data(curves_json())))
    assert same.signals["chart.reading_confidence"] == 1.0
