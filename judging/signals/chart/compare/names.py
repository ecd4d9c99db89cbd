"""Legend names: their likeness (OCR slips folded), pairing series by name, and whether the
names confirm the pairing the data make.
"""

from __future__ import annotations

import difflib
import re

import numpy as np

from judging.signals.chart.settings import compare_settings as _s
from judging.signals.chart.types import Series

SAME_NAME = 0.8
"""Likeness from which two legend names are the same name (OCR slips, a name read in part: a
prefix or a suffix of the other scores this)."""
MIN_SUFFIX = 3
"""A name's end read alone (its start lost under a legend handle) must keep this many
characters to stand for it."""


def linear_sum_assignment(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scipy's Hungarian assignment, imported on first use: scipy.optimize costs a quarter of a
    second to import, and every `judging` command imports the signals package."""
    from scipy.optimize import linear_sum_assignment as assign

    return assign(cost)


#: Letters OCR confuses with digits (and the reverse): folded alike on both sides before names
#: are compared, so "H2O" read as "H20" or "var1" as "varl" is the same name.
_OCR_FOLD = str.maketrans({"l": "1", "i": "1", "o": "0"})


def name_key(name: str) -> str:
    """A legend name as names are compared: lower case, letters and digits, OCR slips folded."""
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip().translate(_OCR_FOLD)


def name_similarity(a: str | None, b: str | None) -> float | None:
    if not a or not b:
        return None
    a, b = name_key(a), name_key(b)
    if not a or not b:
        return None
    if a == b:
        return 1.0
    ratio = difflib.SequenceMatcher(None, a, b).ratio()
    # OCR often keeps only the first word of a label ("no" of "no aug"), or loses its start to
    # a legend handle drawn over it ("t. (3)" of "opt. (3)").
    if a.startswith(b) or b.startswith(a):
        ratio = max(ratio, SAME_NAME)
    shorter, longer = sorted((a, b), key=len)
    if len(shorter) >= MIN_SUFFIX and longer.endswith(shorter):
        ratio = max(ratio, SAME_NAME)
    return ratio


def name_matrix(pub: list[Series], rep: list[Series]) -> np.ndarray:
    """Likeness of every published name to every reproduced one; a partial match (a prefix, a
    suffix) that fits several names of the other side ("GPT" of "GPT-small" and "GPT-large")
    says nothing of which: it drops to CompareSettings.name_floor."""
    sims = np.array([[(name_similarity(a.name, b.name) or 0.0) for b in rep] for a in pub],
                    dtype=float).reshape(len(pub), len(rep))
    close = sims >= SAME_NAME
    ambiguous = (close & (close.sum(axis=1, keepdims=True) > 1)) | \
        (close & (close.sum(axis=0, keepdims=True) > 1))
    # A name a legend gives twice (jove-performance's key names two series "H3COH") tells
    # neither of its series from the other, however exactly the other legend repeats it.
    repeated = repeated_names(pub)[:, None] | repeated_names(rep)[None, :]
    return np.where((ambiguous & (sims < 1.0)) | repeated,
                    np.minimum(sims, _s().name_floor), sims)


def named_ids(series: list[Series]) -> set[int]:
    """The series (by id) whose legend name tells them apart: a name the legend gives twice
    names neither of its series."""
    return {id(s_) for s_, twice in zip(series, repeated_names(series)) if s_.name and not twice}


def repeated_names(series: list[Series]) -> np.ndarray:
    """Which series carry a name that another series of the same chart carries too (the same
    name as `name_similarity` compares them)."""
    keys = [name_key(s.name) if s.name else "" for s in series]
    return np.array([bool(k) and keys.count(k) > 1 for k in keys], dtype=bool)


def name_pairs(pub: list[Series], rep: list[Series]) -> dict[int, int]:
    """Published index -> reproduced index for series both legends name alike (one to one)."""
    if len(pub) < 2 or len(rep) < 2:
        return {}
    sims = name_matrix(pub, rep)
    out = {}
    for i, j in zip(*linear_sum_assignment(-sims)):
        if sims[i, j] >= SAME_NAME:
            out[int(i)] = int(j)
    return out


