"""Fixtures of the chart tests on figures from the wild (issue 14's failure kinds)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from tests.signals.chart.helpers import Judged, judge_claim, judge_figure_pair

#: case -> its judged pair, for the table printed after the module (`-v`, or
#: JUDGING_FIGURE_TABLE=1).
JUDGED: dict[str, Judged] = {}


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def table(judged: dict[str, Judged]) -> str:
    """One line per case: the outcome and the signals that decide it."""
    header = ("case", "outcome", "series pub/rep", "shape", "value", "scale", "range",
              "copy", "flags")
    rows = [header]
    for case, j in judged.items():
        rows.append((case, j.outcome,
                     f"{_cell(j.value('chart.series_published'))}/"
                     f"{_cell(j.value('chart.series_reproduced'))}",
                     _cell(j.value("chart.shape_agreement")),
                     _cell(j.value("chart.value_agreement")),
                     _cell(j.value("chart.axis_scale_match")),
                     _cell(j.value("chart.range_overlap")),
                     _cell(j.value("pixel.copy")), ",".join(j.flags) or "-"))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()
                     for row in rows)


@pytest.fixture(scope="module")
def judged_cases(request: pytest.FixtureRequest):
    """Collects the judged pairs of a module; prints their table at its end when asked to."""
    JUDGED.clear()
    yield JUDGED
    if JUDGED and (request.config.get_verbosity() > 0 or os.environ.get("JUDGING_FIGURE_TABLE")):
        reporter = request.config.pluginmanager.getplugin("terminalreporter")
        if reporter is not None:
            rubric = next(iter(JUDGED.values())).rubric
            reporter.write_line("")
            reporter.write_line(f"figures from the wild, offline judge under {rubric}:")
            for line in table(JUDGED).splitlines():
                reporter.write_line("  " + line)


@pytest.fixture
def judge(judged_cases: dict[str, Judged], tmp_path) -> Callable[..., Judged]:
    """`judge(case, published, reproduced, **options)`: judge_figure_pair, the submission
    written under tmp_path/case, the result kept for the table."""
    def run(case: str, published, reproduced, **options) -> Judged:
        judged = judge_figure_pair(published, reproduced, folder=tmp_path / case, **options)
        judged_cases[case] = judged
        return judged
    return run


@pytest.fixture
def judge_loaded(judged_cases: dict[str, Judged]) -> Callable[..., Judged]:
    """`judge_loaded(case, claim)`: judge_claim on a claim read by the intake, kept for the table."""
    def run(case: str, claim, rubric_ref: str = "figure-match") -> Judged:
        judged = judge_claim(claim, rubric_ref)
        judged_cases[case] = judged
        return judged
    return run
