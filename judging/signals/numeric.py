"""Numeric agreement: reported vs reproduced values against the claim's tolerance (pure functions)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from judging.models import TableValue, Tolerance

#: Tolerances are written in decimal ("0.5") and compared in binary floating point: allow for the
#: representation error so that 94.1 vs 93.6 with ±0.5 counts as within.
_FLOAT_SLACK = 1e-9


@dataclass(frozen=True)
class Agreement:
    abs_diff: float
    rel_diff: float | None
    """None when the reported value is 0 (a relative difference is undefined)."""
    within: bool | None
    """None when there is no tolerance to compare against."""


def agreement(*, reported: float, reproduced: float, tolerance: Tolerance | None) -> Agreement:
    """Compare a reproduced number with the reported one under `tolerance`."""
    for name, value in (("reported", reported), ("reproduced", reproduced)):
        if not math.isfinite(value):
            raise ValueError(f"{name} value must be finite, got {value!r}")
    abs_diff = abs(reproduced - reported)
    rel_diff = abs_diff / abs(reported) if reported != 0 else None
    within: bool | None
    if tolerance is None:
        within = None
    elif tolerance.absolute is not None:
        within = abs_diff <= tolerance.absolute + _FLOAT_SLACK * max(1.0, abs(reported))
    elif rel_diff is None:
        within = abs_diff == 0
    else:
        within = rel_diff <= tolerance.relative + _FLOAT_SLACK
    return Agreement(abs_diff=abs_diff, rel_diff=rel_diff, within=within)


@dataclass(frozen=True)
class TableAgreement:
    cells: list[tuple[str, Agreement | None]]
    """Per cell: its agreement, or None when the cell lacks a reported or reproduced value."""

    @property
    def compared(self) -> list[Agreement]:
        return [a for _, a in self.cells if a is not None]

    @property
    def within_fraction(self) -> float | None:
        decided = [a.within for a in self.compared if a.within is not None]
        return sum(decided) / len(decided) if decided else None

    @property
    def all_within(self) -> bool | None:
        """True when every cell is within tolerance; None when some cell cannot be decided."""
        decided = [a.within for _, a in self.cells if a is not None]
        if not self.cells or len(decided) < len(self.cells) or any(w is None for w in decided):
            return None if not any(w is False for w in decided) else False
        return all(decided)

    @property
    def max_rel_diff(self) -> float | None:
        rel = [a.rel_diff for a in self.compared if a.rel_diff is not None]
        return max(rel) if rel else None


def table_agreement(values: list[TableValue], *, tolerance: Tolerance | None) -> TableAgreement:
    """Per-cell agreement; a cell's own tolerance overrides the claim's."""
    cells: list[tuple[str, Agreement | None]] = []
    for value in values:
        if value.reported is None or value.reproduced is None:
            cells.append((value.name, None))
            continue
        cells.append((value.name, agreement(reported=value.reported, reproduced=value.reproduced,
                                            tolerance=value.tolerance or tolerance)))
    return TableAgreement(cells=cells)
