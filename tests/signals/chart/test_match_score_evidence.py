"""chart.match_score orders pairs on the evidence the verdict uses (issue 41): half of it is
what two independent readings confirm (agreement minus difference), so a pair whose difference
is confirmed (a swapped legend, names read alike and data paired the other way) ranks well
below a pair where nothing is confirmed either way (a shifted series whose y axes were read
but whose difference stays below what counts), and a confirmed agreement ranks first. Before,
the score rested on the series' likeness alone and the swap sat 0.20 below the shift.

Every figure is drawn here with matplotlib (the helpers of the neighbouring tests)."""

from __future__ import annotations

from judging.signals.chart import compare_charts, read_chart
from tests.signals.chart.test_engineering_labels import _image, _png
from tests.signals.chart.test_unconfirmed_differences import _lines

#: What the evidence's half of the score sets between nothing confirmed (evidence 0) and a
#: difference confirmed in full (evidence -1): a quarter.
EVIDENCE_STEP = 0.25


def test_a_confirmed_difference_ranks_a_quarter_below_nothing_confirmed():
    published = read_chart(_image(_png(engineering=False)))
    same = compare_charts(published, read_chart(_image(_png(engineering=False, style="ggplot"))))
    shifted = compare_charts(published, read_chart(_image(_png(engineering=False, style="ggplot",
                                                               shift="For-loop"))))
    swapped = compare_charts(read_chart(_lines(("fast", "slow"))),
                             read_chart(_lines(("slow", "fast"), style="ggplot")))
    assert same.evidence.value > 0.5 and abs(shifted.evidence.value) < 0.1 and \
        swapped.evidence.value < -0.5, (same.evidence, shifted.evidence, swapped.evidence)
    score = {name: c.signals["chart.match_score"]
             for name, c in (("same", same), ("shifted", shifted), ("swapped", swapped))}
    assert score["same"] > score["shifted"] > score["swapped"], score
    assert score["shifted"] - score["swapped"] >= EVIDENCE_STEP, score
