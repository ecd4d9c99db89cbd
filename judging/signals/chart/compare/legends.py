"""Whether the legends' names confirm the pairing the data made, panel by panel: a swapped
legend shows only in the names, since series are paired by their data when the names do not
pair them."""

from __future__ import annotations

import numpy as np

from judging.signals.chart.compare.names import (
    SAME_NAME,
    linear_sum_assignment,
    name_matrix,
    name_similarity,
    named_ids,
)
from judging.signals.chart.compare.panels import PanelResult
from judging.signals.chart.settings import compare_settings as _s
from judging.signals.chart.types import Series


def names_status(result: PanelResult, legend_sizes: tuple[list[str], ...] = ()
                  ) -> tuple[str, str]:
    """Whether the legends' names confirm the pairing of the series: "unnamed" (the published
    legend names fewer than two matched series, a name it gives twice naming neither: nothing
    to swap), "agree" (every named series is paired with the reproduced series whose name is
    most like its own, among all pairings of the names, and at most one counterpart of a
    published name, repeated or not, is unread: paired by elimination), "unread"
    (more names unread: a swap cannot be ruled out) or "disagree" (the names would pair the
    series otherwise: misread, renamed or swapped); and why."""
    naming = named_ids(result.published_series)
    named = [(a, b) for a, b, _ in result.matches if id(a) in naming]
    if len(named) < 2:
        legends = [len(panel_legend) for panel_legend in legend_sizes if panel_legend]
        if len(result.matches) >= 2 and any(n >= 2 for n in legends):
            # A legend names the series but its names are not on the paired series: which
            # series is which is unverified.
            repeated = sum(1 for a, _, _ in result.matches if a.name and id(a) not in naming)
            return "unread", (f"a legend of {max(legends)} entries, but fewer than two of the "
                              f"{len(result.matches)} paired series carry names of their own"
                              + (f" ({repeated} carry a name the legend gives twice)"
                                 if repeated else ""))
        return "unnamed", ""
    unread = sum(1 for _, b in named if not b.name)
    unread_all, published_names = unread_counterparts(result)
    pub_named = [s for s in result.published_series if id(s) in naming]
    rep_named = [s for s in result.reproduced_series if s.name]
    if len(named) - unread >= 1 and rep_named:
        sims = name_matrix(pub_named, rep_named)
        best = {id(pub_named[i]): (rep_named[j], float(sims[i, j]))
                for i, j in zip(*linear_sum_assignment(-sims))}
        for a, b in named:
            if not b.name:
                continue
            paired, likeness = best.get(id(a), (None, 0.0))
            if paired is not b or likeness < _s().name_floor:
                return "disagree", (f"the legends would pair {a.name!r} with another series "
                                    f"than the data do ({b.name!r} by data)")
    if unread_all > 1:
        return "unread", (f"{unread_all} of the {published_names} named series have no name "
                          f"read in the reproduction")
    return "agree", f"the {len(named)} named series pair by their names as by their data"


def legend_agreement(results: list[PanelResult]) -> tuple[int, float | None, str]:
    """(published series named by the legend among the matched ones, the share of those whose
    reproduced counterpart carries their name, why that share is absent).

    Series are paired by their data when the legend names do not pair them, so a reproduction
    whose legend swaps two names matches by data, and only the names tell. A name "carried" is
    the reproduced name that the best one-to-one pairing of the panel's names gives it (OCR
    slips and names read in part allowed, `consistent_names`); one name left unread in a panel
    pairs by elimination. With fewer than two named series there is nothing to swap; when the
    reproduction's names could not be read, the identities are unverified (absent). A name
    the published legend gives twice names neither of its series (`named_ids`)."""
    named = [(a, b) for r in results for naming in [named_ids(r.published_series)]
             for a, b, _ in r.matches if id(a) in naming]
    if len(named) < 2:
        return len(named), None, "fewer than two matched series are named by the published legend"
    if not any(b.name for _, b in named):
        return len(named), None, ("the reproduction's legend names could not be read: which "
                                  "series is which is unverified")
    carried = [c for r in results for c in consistent_names(r)]
    return len(named), float(np.mean(carried)), ""


def unread_counterparts(result: PanelResult) -> tuple[int, int]:
    """(matched series the published legend names whose counterpart has no name read, matched
    series the published legend names). Counted over every published name, repeated or not:
    a name read on the wrong one of two entries would otherwise pass for a name read, and only
    a single unread one pairs by elimination."""
    named = [b for a, b, _ in result.matches if a.name]
    return sum(1 for b in named if not b.name), len(named)


def consistent_names(result: PanelResult) -> list[bool]:
    """For each matched series of the panel that the published legend names (a name it gives
    twice names neither series): whether its counterpart carries the name (the best pairing of
    the names pairs them, at least NAME_FLOOR alike; a single unread name, among all the
    published names, counts as carried, by elimination)."""
    naming = named_ids(result.published_series)
    named = [(a, b) for a, b, _ in result.matches if id(a) in naming]
    if not named:
        return []
    pub_named = [s for s in result.published_series if id(s) in naming]
    rep_named = [s for s in result.reproduced_series if s.name]
    best: dict[int, tuple[Series, float]] = {}
    if rep_named and pub_named:
        sims = name_matrix(pub_named, rep_named)
        best = {id(pub_named[i]): (rep_named[j], float(sims[i, j]))
                for i, j in zip(*linear_sum_assignment(-sims))}
    unread, _ = unread_counterparts(result)
    out = []
    for a, b in named:
        if not b.name:
            out.append(unread == 1)
            continue
        paired, likeness = best.get(id(a), (None, 0.0))
        out.append(paired is b and likeness >= _s().name_floor)
    return out


def named_alike(result: PanelResult) -> bool:
    """Every series of the panel matched one to one, on both charts, to a series of the same
    legend name and read as the same kind (markers as markers): the reader's split of the ink
    into series agrees with both legends, so series compared by their medians are the same
    groups of points (a cloud's colours are otherwise easily split or merged, hollow markers
    most of all, and a cloud read as a line on one side is one track through it)."""
    if not result.matches or not (len(result.matches) == result.published == result.reproduced):
        return False
    if any(a.kind != b.kind for a, b, _ in result.matches):
        return False
    similar = [name_similarity(a.name, b.name) for a, b, _ in result.matches]
    # One legend entry left unread (OCR misses a label) leaves one series to pair by
    # elimination, once the others are paired by name: still the legends' split. A name that
    # disagrees is another matter.
    unread = sum(1 for v in similar if v is None)
    named = sum(1 for v in similar if v is not None and v >= SAME_NAME)
    return named == len(similar) or (unread == 1 and named == len(similar) - 1 and named >= 2)
