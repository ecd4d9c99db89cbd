"""A series as the reader extracts it from the pixels of one plot area (work pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RawSeries:
    kind: str
    """"line", "scatter" or "bar"."""
    colour: tuple[int, int, int]
    line: str
    """"solid", "dashed", "dotted", "markers" or "bars"."""
    x: np.ndarray
    y: np.ndarray
    """Work-pixel coordinates (page), x increasing."""
    confidence: float
    pixels: int
    chromatic: bool

    @property
    def style(self) -> str:
        hexa = "#{:02x}{:02x}{:02x}".format(*self.colour)
        return hexa if self.line in ("solid", "bars", "markers") and self.chromatic \
            else f"{hexa} {self.line}"
