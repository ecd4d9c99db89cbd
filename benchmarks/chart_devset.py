"""Deterministic dev set of (published, reproduced) chart pairs with construction labels.

JUDGED SIGNALS, named before anything was measured (benchmarks/chart_signals.py reports them):

  1. `chart.match_score` -- ROC AUC of faithful vs unfaithful pairs, target >= 0.9
  2. the offline judge's figure verdict with rubric figure-match@1.1.0 (predicted faithful iff the
     judgment's aggregate outcome is pass) -- F1 >= 0.85, positive class = faithful

`pixel.ssim` is printed beside them for reference only (ROC AUC 0.57 on the 36 held-out pairs of
the issue). Nothing else is a target; every other signal is printed as diagnostics.

    .venv/bin/python benchmarks/chart_devset.py --out DIR [--pairs 176] [--jobs N]

writes `DIR/<pair-id>/published.png`, `DIR/<pair-id>/reproduced.png` and `DIR/labels.jsonl` (one
line per pair: id, label faithful|unfaithful, the variation applied, chart type, styles, fonts,
sizes, details of the variation, and the plotted data of both figures for debugging).

How a pair is built (seeded by the pair's index only: byte-identical output on every rerun, with
any number of jobs; Agg backend, `plt.rcdefaults()` per figure, PNG metadata without "Software"):
- even indices are FAITHFUL, odd ones UNFAITHFUL (balanced classes);
- the published figure: a chart type (line, scatter with markers, grouped bars, panels 1x2 or
  2x2), realistic ML data (loss curves, accuracy vs model size, accuracy vs learning rate,
  validation loss with overfitting, score vs training-data share, grouped benchmark scores), 1-4
  series, linear or log axes, one style (default, ggplot, seaborn-v0_8 darkgrid/whitegrid, bmh,
  grayscale = black/gray only with line styles and markers, fivethirtyeight), a font bundled with
  matplotlib (DejaVu Sans/Serif, STIX), DPI 100-200 with many figures at 1600x1200;
- the reproduction of EVERY pair is re-drawn with fresh small noise and one presentation change
  from PRESENTATIONS (another style, DPI and size, font, legend place, colours, line width and
  markers, logging frequency, or all at once). Both classes draw these from the same cycle, so
  that presentation alone does not tell them apart;
- an UNFAITHFUL reproduction also has one data change from UNFAITHFUL applied to one panel.
Nothing is stored in the repository: the set is generated at benchmark time into a temp dir.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import multiprocessing
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

GENERATOR_VERSION = "chart-devset/1"
BASE_SEED = 20_260_411


STYLES: dict[str, list[str]] = {
    "default": ["default"],
    "ggplot": ["ggplot"],
    "seaborn-v0_8-darkgrid": ["seaborn-v0_8-darkgrid", "seaborn-v0_8-deep"],
    "seaborn-v0_8-whitegrid": ["seaborn-v0_8-whitegrid", "seaborn-v0_8-deep"],
    "bmh": ["bmh"],
    "grayscale": ["grayscale"],
    "fivethirtyeight": ["fivethirtyeight"],
}
FONTS = {"DejaVu Sans": "dejavusans", "DejaVu Serif": "dejavuserif", "STIXGeneral": "stix"}
"""Fonts bundled with matplotlib (named exactly, so that no system font is ever picked) and the
matching mathtext set (log-axis tick labels are mathtext)."""
GRAYS = ["0.0", "0.45", "0.25", "0.62", "0.35"]
GRAYS_ALT = ["0.3", "0.0", "0.55", "0.15", "0.7"]
LINESTYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v"]
HATCHES = ["", "//", "..", "xx", "\\\\"]
PALETTES: dict[str, list[str]] = {
    "tab10-shifted": ["#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"],
    "dark2": ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"],
    "set1": ["#e41a1c", "#377eb8", "#4daf4a", "#984ea3", "#ff7f00"],
    "viridis": ["#440154", "#31688e", "#35b779", "#b5a300", "#fde725"],
    "okabe-ito": ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9"],
}
LEGEND_PLACES = ["best", "upper right", "lower left", "center right", "upper center",
                 "lower right", "outside"]
LAYOUTS = {"line": (1, 1), "scatter": (1, 1), "bars": (1, 1), "panels-1x2": (1, 2),
           "panels-2x2": (2, 2)}
CHART_TYPES = {"line": 3.0, "scatter": 1.5, "bars": 1.5, "panels-1x2": 1.5, "panels-2x2": 1.0}
#: (figsize in inches, dpi), first ones the most likely: 1600x1200 where the layout allows.
SIZES: dict[str, list[tuple[tuple[float, float], int]]] = {
    "single": [((8, 6), 200), ((16, 12), 100), ((10, 7.5), 160), ((12.8, 9.6), 125),
               ((12, 9), 150), ((6.4, 4.8), 150), ((7, 5), 180)],
    "1x2": [((16, 6), 100), ((12.8, 4.8), 125), ((10, 4), 160), ((8, 6), 200),
            ((12, 4.5), 150)],
    "2x2": [((8, 6), 200), ((16, 12), 100), ((10, 8), 160), ((12, 9), 150)],
}

PRESENTATIONS = ["style", "dpi_size", "font", "legend_place", "colours", "linewidth_markers",
                 "resampled", "full_restyle"]
"""Faithful changes (the variation of a faithful pair; also applied to every unfaithful pair).
"resampled" logs the same runs at another frequency (fewer points); on a chart with nothing to
resample (bars only) it moves the legend instead, so that no faithful pair is a bare re-render."""
DEFAULT_PAIRS = 176
"""88 faithful pairs (11 per presentation change), 88 unfaithful (8 per data change)."""
UNFAITHFUL = ["reversed_series", "missing_series", "extra_series", "scaled_values",
              "axis_scale_flip", "bars_instead_of_lines", "flat_line", "cropped_x", "other_shape",
              "swapped_labels", "shifted_peak"]
"""Data changes that make a reproduction unfaithful (one per unfaithful pair, on one panel)."""


# --- data ------------------------------------------------------------------------------------

def _exp_decay(x: np.ndarray, p: dict) -> np.ndarray:
    return p["c"] + p["a"] * np.exp(-x / p["tau"])


def _sigmoid_log(x: np.ndarray, p: dict) -> np.ndarray:
    return p["lo"] + (p["hi"] - p["lo"]) / (1 + np.exp(-(np.log10(x) - p["m"]) / p["s"]))


def _gauss_log(x: np.ndarray, p: dict) -> np.ndarray:
    return p["base"] + p["amp"] * np.exp(-0.5 * ((np.log10(x) - p["center"]) / p["w"]) ** 2)


def _u_shape(x: np.ndarray, p: dict) -> np.ndarray:
    return (p["c"] + p["d"] * ((x - p["center"]) / p["E"]) ** 2
            + p["a"] * np.exp(-x / (0.06 * p["E"])))


def _saturating(x: np.ndarray, p: dict) -> np.ndarray:
    return p["hi"] - (p["hi"] - p["lo"]) * np.exp(-x / p["tau"])


SHAPES: dict[str, Callable[[np.ndarray, dict], np.ndarray]] = {
    "exp_decay": _exp_decay, "sigmoid_log": _sigmoid_log, "gauss_log": _gauss_log,
    "u_shape": _u_shape, "saturating": _saturating}


@dataclass
class SeriesSpec:
    name: str
    x: np.ndarray
    smooth: np.ndarray
    resid: np.ndarray
    """Intrinsic scatter of the data (scatter plots), part of "the data"."""
    noise: float
    """Standard deviation of the per-figure noise (a re-run's small differences)."""
    params: dict = field(default_factory=dict)


@dataclass
class PanelSpec:
    data_kind: str
    kind: str
    """line | scatter | bar"""
    title: str
    xlabel: str
    ylabel: str
    xscale: str
    yscale: str
    series: list[SeriesSpec]
    ctx: dict
    categories: list[str] | None = None
    peaked: str | None = None
    markers: bool = False
    """Lines drawn with markers by default (few points)."""


NAME_SETS = [
    ["baseline", "ours"], ["train", "validation"], ["AdamW", "SGD", "Lion", "Adafactor"],
    ["dense", "sparse 50%", "sparse 90%", "sparse 99%"], ["d=256", "d=512", "d=1024", "d=2048"],
    ["ResNet-50", "ViT-B/16", "ConvNeXt-T", "DeiT-S"], ["seed 0", "seed 1", "seed 2", "seed 3"],
    ["LoRA r=8", "LoRA r=64", "full FT", "prefix"], ["batch 64", "batch 256", "batch 1024",
                                                     "batch 4096"],
    ["no aug.", "RandAug", "MixUp", "CutMix"], ["GPT-small", "GPT-medium", "GPT-large", "GPT-XL"],
]
EXTRA_NAMES = ["ours (long)", "ablation", "oracle", "random init", "distilled"]
BENCHMARK_SETS = [["MNIST", "CIFAR-10", "CIFAR-100", "SVHN", "STL-10", "ImageNet"],
                  ["MMLU", "GSM8K", "HumanEval", "ARC-C", "HellaSwag", "TruthfulQA"],
                  ["SST-2", "MNLI", "QNLI", "RTE", "CoLA", "MRPC"]]


def _names(rng: np.random.Generator, n: int) -> list[str]:
    options = [s for s in NAME_SETS if len(s) >= n]
    chosen = options[int(rng.integers(len(options)))]
    return chosen[:n]


def _make_series(rng: np.random.Generator, kind: str, ctx: dict, k: int, name: str) -> SeriesSpec:
    """Series k of a panel of `kind` (k also spreads the series apart)."""
    if kind == "loss_curves":
        x = ctx["x"]
        p = {"shape": "exp_decay", "a": rng.uniform(1.0, 3.0),
             "tau": rng.uniform(0.06, 0.3) * x[-1], "c": ctx["c0"] + k * rng.uniform(0.12, 0.3)}
        smooth = SHAPES["exp_decay"](x, p)
        return SeriesSpec(name, x, smooth, np.zeros_like(x), 0.008 * p["a"], p)
    if kind == "acc_vs_size":
        x = ctx["x"]
        lo = rng.uniform(15, 35)
        p = {"shape": "sigmoid_log", "lo": lo, "hi": min(97.0, lo + rng.uniform(40, 65)),
             "m": ctx["m0"] + k * rng.uniform(0.35, 0.7), "s": rng.uniform(0.3, 0.6)}
        return SeriesSpec(name, x, SHAPES["sigmoid_log"](x, p), np.zeros_like(x), 0.35, p)
    if kind == "acc_vs_lr":
        x = ctx["x"]
        p = {"shape": "gauss_log", "base": rng.uniform(8, 25), "amp": rng.uniform(40, 65),
             "center": ctx["c0"] + k * rng.uniform(0.2, 0.45), "w": rng.uniform(0.45, 0.8)}
        return SeriesSpec(name, x, SHAPES["gauss_log"](x, p), np.zeros_like(x), 0.35, p)
    if kind == "val_loss_overfit":
        x = ctx["x"]
        E = float(x[-1])
        p = {"shape": "u_shape", "c": ctx["c0"] + k * rng.uniform(0.1, 0.25),
             "d": rng.uniform(1.5, 4.0), "center": rng.uniform(0.3, 0.55) * E, "E": E,
             "a": rng.uniform(0.5, 1.5)}
        return SeriesSpec(name, x, SHAPES["u_shape"](x, p), np.zeros_like(x), 0.01, p)
    if kind == "score_vs_data":
        n = int(rng.integers(15, 40))
        if ctx["xscale"] == "log":
            x = np.sort(10 ** rng.uniform(2, 5, n))
            p = {"shape": "sigmoid_log", "lo": rng.uniform(20, 40), "hi": 0.0,
                 "m": rng.uniform(3.0, 4.0), "s": rng.uniform(0.3, 0.5)}
            p["hi"] = min(96.0, p["lo"] + rng.uniform(35, 55) - 4 * k)
        else:
            x = np.sort(rng.uniform(1, 100, n))
            p = {"shape": "saturating", "lo": rng.uniform(15, 35), "hi": 0.0,
                 "tau": rng.uniform(8, 30)}
            p["hi"] = min(96.0, p["lo"] + rng.uniform(40, 60) - 5 * k)
        smooth = SHAPES[p["shape"]](x, p)
        return SeriesSpec(name, x, smooth, rng.normal(0, 1.8, n), 0.2, p)
    if kind == "scores_bars":
        values = np.clip(ctx["difficulty"] + rng.uniform(-10, 10) + rng.normal(0, 3, ctx["n"]),
                         5, 99)
        x = np.arange(ctx["n"], dtype=float)
        return SeriesSpec(name, x, values, np.zeros_like(x), 0.2, {"shape": "bars"})
    raise ValueError(kind)


def _context(rng: np.random.Generator, kind: str) -> tuple[dict, dict]:
    """(panel fields, series context) of a data kind."""
    if kind == "loss_curves":
        steps = float(rng.choice([10, 20, 50, 100, 200]))
        n = int(rng.choice([80, 150, 300]))
        fields = {"kind": "line", "title": str(rng.choice(["Training curves", "Pre-training",
                                                            "Fine-tuning on GLUE"])),
                  "xlabel": "training steps (k)",
                  "ylabel": str(rng.choice(["training loss", "validation loss",
                                            "cross-entropy"])),
                  "xscale": "linear", "yscale": "log" if rng.random() < 0.3 else "linear"}
        return fields, {"x": np.linspace(0, steps, n), "c0": rng.uniform(0.1, 0.6)}
    if kind == "acc_vs_size":
        n = int(rng.integers(6, 11))
        fields = {"kind": "line", "title": "Scaling", "xlabel": "parameters",
                  "ylabel": str(rng.choice(["accuracy (%)", "top-1 accuracy (%)"])),
                  "xscale": "log", "yscale": "linear", "markers": True}
        return fields, {"x": np.logspace(6, 10, n), "m0": rng.uniform(7.0, 8.2)}
    if kind == "acc_vs_lr":
        n = int(rng.integers(9, 16))
        fields = {"kind": "line", "title": "Learning-rate sweep", "xlabel": "learning rate",
                  "ylabel": "validation accuracy (%)", "xscale": "log", "yscale": "linear",
                  "markers": True, "peaked": "max"}
        return fields, {"x": np.logspace(-5, -1, n), "c0": rng.uniform(-4.0, -3.0)}
    if kind == "val_loss_overfit":
        E = int(rng.choice([30, 50, 100]))
        fields = {"kind": "line", "title": "Overfitting", "xlabel": "epoch",
                  "ylabel": "validation loss", "xscale": "linear", "yscale": "linear",
                  "peaked": "min"}
        return fields, {"x": np.arange(1, E + 1, dtype=float), "c0": rng.uniform(0.3, 0.9)}
    if kind == "score_vs_data":
        log = rng.random() < 0.35
        fields = {"kind": "scatter", "title": "Data efficiency",
                  "xlabel": "labelled examples" if log else "training data (%)",
                  "ylabel": str(rng.choice(["F1 score (%)", "accuracy (%)"])),
                  "xscale": "log" if log else "linear", "yscale": "linear"}
        return fields, {"xscale": fields["xscale"]}
    if kind == "scores_bars":
        n = int(rng.integers(3, 7))
        cats = BENCHMARK_SETS[int(rng.integers(len(BENCHMARK_SETS)))][:n]
        fields = {"kind": "bar", "title": "Benchmark scores", "xlabel": "",
                  "ylabel": str(rng.choice(["accuracy (%)", "score"])), "xscale": "linear",
                  "yscale": "linear", "categories": cats}
        return fields, {"n": n, "difficulty": rng.uniform(40, 80, n)}
    raise ValueError(kind)


DATA_KINDS = {"line": {"loss_curves": 3.0, "acc_vs_size": 1.0, "acc_vs_lr": 1.5,
                       "val_loss_overfit": 1.5},
              "scatter": {"score_vs_data": 2.0, "acc_vs_size": 1.0},
              "bars": {"scores_bars": 1.0}}
DATA_KINDS["panels"] = {**DATA_KINDS["line"], "score_vs_data": 1.0, "scores_bars": 1.0}


def make_panel(rng: np.random.Generator, kind: str, n_series: int, *,
               as_scatter: bool = False) -> PanelSpec:
    fields, ctx = _context(rng, kind)
    if as_scatter:
        fields = {**fields, "kind": "scatter", "markers": False}
    names = _names(rng, n_series)
    series = [_make_series(rng, kind, ctx, k, name) for k, name in enumerate(names)]
    return PanelSpec(data_kind=kind, series=series, ctx=ctx, **fields)


def _compatible(variation: str | None, kind: str) -> bool:
    """Whether an unfaithful variation can be applied to a panel of data kind `kind`."""
    if variation == "shifted_peak":
        return kind in ("acc_vs_lr", "val_loss_overfit")
    if variation in ("bars_instead_of_lines", "flat_line", "cropped_x"):
        return kind != "scores_bars"
    return True


def _series_range(variation: str | None) -> tuple[int, int]:
    if variation in ("missing_series", "swapped_labels"):
        return 2, 4
    if variation == "extra_series":
        return 1, 3
    return 1, 4


def _weighted(rng: np.random.Generator, weights: dict[str, float]) -> str:
    names = list(weights)
    p = np.array([weights[n] for n in names], dtype=float)
    return names[int(rng.choice(len(names), p=p / p.sum()))]


def make_chart(rng: np.random.Generator, variation: str | None) -> tuple[str, list[PanelSpec], int]:
    """(chart type, panels, index of the panel the variation applies to)."""
    allowed = {}
    for chart_type, weight in CHART_TYPES.items():
        family = "panels" if chart_type.startswith("panels") else chart_type
        if any(_compatible(variation, kind) for kind in DATA_KINDS[family]):
            allowed[chart_type] = weight
    chart_type = _weighted(rng, allowed)
    family = "panels" if chart_type.startswith("panels") else chart_type
    rows, cols = LAYOUTS[chart_type]
    target = int(rng.integers(rows * cols))
    panels = []
    for index in range(rows * cols):
        kinds = DATA_KINDS[family]
        lo, hi = 1, 4
        if index == target:
            kinds = {k: w for k, w in kinds.items() if _compatible(variation, k)}
            lo, hi = _series_range(variation)
        kind = _weighted(rng, kinds)
        n_series = int(rng.integers(lo, hi + 1))
        if chart_type.startswith("panels"):
            n_series = min(n_series, 3) if index != target else n_series
        panels.append(make_panel(rng, kind, n_series,
                                 as_scatter=chart_type == "scatter" and kind == "acc_vs_size"))
    return chart_type, panels, target


# --- unfaithful variations -------------------------------------------------------------------

def _u(panel: PanelSpec, x: np.ndarray) -> np.ndarray:
    """x in axis coordinates (log10 on a log axis)."""
    return np.log10(x) if panel.xscale == "log" and panel.kind != "bar" else np.asarray(x, float)


def _u_range(panel: PanelSpec) -> tuple[float, float]:
    us = np.concatenate([_u(panel, s.x) for s in panel.series])
    return float(us.min()), float(us.max())


def _pick(rng: np.random.Generator, panel: PanelSpec) -> int:
    return int(rng.integers(len(panel.series)))


def perturb(rng: np.random.Generator, panel: PanelSpec, variation: str) -> dict:
    """Apply an unfaithful data change to `panel` in place; returns what was done."""
    series = panel.series
    if variation == "reversed_series":
        s = series[_pick(rng, panel)]
        if panel.kind == "bar":
            s.smooth, method = s.smooth[::-1].copy(), "category order reversed"
        elif panel.peaked:
            s.smooth, method = s.smooth.max() + s.smooth.min() - s.smooth, "flipped upside down"
        else:
            lo, hi = _u_range(panel)
            u = _u(panel, s.x)
            s.smooth = np.interp(lo + hi - u, u, s.smooth)
            method = "mirrored along x (direction reversed)"
        return {"series": s.name, "method": method}
    if variation == "missing_series":
        removed = series.pop(_pick(rng, panel))
        return {"series": removed.name}
    if variation == "extra_series":
        used = {s.name for s in series}
        name = next(n for n in EXTRA_NAMES if n not in used)
        series.append(_make_series(rng, panel.data_kind, panel.ctx, len(series), name))
        return {"series": name}
    if variation == "scaled_values":
        factor = float(rng.uniform(1.3, 2.0))
        scope = series if len(series) == 1 or rng.random() < 0.5 else [series[_pick(rng, panel)]]
        for s in scope:
            s.smooth, s.resid, s.noise = s.smooth * factor, s.resid * factor, s.noise * factor
        return {"factor": round(factor, 3), "series": [s.name for s in scope]}
    if variation == "axis_scale_flip":
        if panel.xscale == "log" and panel.kind != "bar" and rng.random() < 0.5:
            panel.xscale = "linear"
            return {"axis": "x", "from": "log", "to": "linear"}
        before = panel.yscale
        panel.yscale = "linear" if before == "log" else "log"
        return {"axis": "y", "from": before, "to": panel.yscale}
    if variation == "bars_instead_of_lines":
        m = int(rng.integers(5, 8))
        lo, hi = _u_range(panel)
        if panel.kind == "line":
            us = np.linspace(lo, hi, m)
        else:
            us = np.linspace(lo, hi, m + 1)
            us = (us[:-1] + us[1:]) / 2
        for s in series:
            u = _u(panel, s.x)
            if panel.kind == "line":
                values = np.interp(us, u, s.smooth)
            else:
                edges = np.linspace(lo, hi, m + 1)
                values = np.interp(us, u, s.smooth)
                for b in range(m):
                    inside = (u >= edges[b]) & (u <= edges[b + 1])
                    if inside.any():
                        values[b] = float(np.mean((s.smooth + s.resid)[inside]))
            s.x, s.smooth, s.resid = np.arange(m, dtype=float), values, np.zeros(m)
        xs = 10 ** us if panel.xscale == "log" else us
        panel.categories = [_tick_label(v, log=panel.xscale == "log") for v in xs]
        was = panel.kind
        panel.kind, panel.xscale, panel.markers = "bar", "linear", False
        return {"from": was, "bars": m}
    if variation == "flat_line":
        s = series[_pick(rng, panel)]
        s.smooth = np.full_like(s.smooth, float(np.mean(s.smooth)))
        return {"series": s.name, "level": round(float(np.mean(s.smooth)), 4)}
    if variation == "cropped_x":
        frac = float(rng.uniform(0.4, 0.65))
        lo, hi = _u_range(panel)
        cut = lo + frac * (hi - lo)
        for s in series:
            keep = _u(panel, s.x) <= cut
            if keep.sum() < 3:
                keep[:3] = True
            s.x, s.smooth, s.resid = s.x[keep], s.smooth[keep], s.resid[keep]
        return {"kept_fraction_of_x_range": round(frac, 3)}
    if variation == "other_shape":
        s = series[_pick(rng, panel)]
        if panel.kind == "bar":
            n = len(s.smooth)
            order = np.arange(n)
            while np.all(order == np.arange(n)) or np.all(order == np.arange(n)[::-1]):
                order = rng.permutation(n)
            s.smooth = s.smooth[order].copy()
            return {"series": s.name, "shape": "values permuted across categories"}
        lo_u, hi_u = _u_range(panel)
        t = (_u(panel, s.x) - lo_u) / (hi_u - lo_u)
        y0, y1 = float(s.smooth[0]), float(s.smooth[-1])
        span = float(s.smooth.max() - s.smooth.min())
        if panel.peaked:
            options = ["monotone", "oscillating"]
        elif panel.data_kind in ("loss_curves", "val_loss_overfit"):
            options = ["linear", "late_change", "bump", "oscillating"]
        else:
            options = ["late_change", "bump", "oscillating"]
        shape = options[int(rng.integers(len(options)))]
        if shape == "monotone":
            lo_y, hi_y = float(s.smooth.min()), float(s.smooth.max())
            s.smooth = lo_y + (hi_y - lo_y) * (t if rng.random() < 0.5 else 1 - t)
        elif shape == "linear":
            s.smooth = y0 + (y1 - y0) * t
        elif shape == "late_change":
            s.smooth = y0 + (y1 - y0) / (1 + np.exp(-(t - 0.75) / 0.05))
        elif shape == "bump":
            s.smooth = y0 + (y1 - y0) * t + 0.8 * span * np.exp(-0.5 * ((t - 0.45) / 0.12) ** 2) \
                * (1 if y1 < y0 else -1)
        else:
            s.smooth = (s.smooth.min() + s.smooth.max()) / 2 \
                + 0.45 * span * np.sin(2 * np.pi * 2.5 * t)
        s.smooth = np.maximum(s.smooth, 0.02)
        return {"series": s.name, "shape": shape}
    if variation == "swapped_labels":
        i, j = (int(v) for v in rng.choice(len(series), 2, replace=False))
        series[i].name, series[j].name = series[j].name, series[i].name
        return {"series": [series[j].name, series[i].name]}
    if variation == "shifted_peak":
        lo, hi = _u_range(panel)
        shift = float(rng.uniform(0.25, 0.4)) * (hi - lo)
        changed = []
        for s in series:
            old = s.params["center"]  # in axis coordinates: log10(x) on a log axis
            room_up = hi - 0.1 * (hi - lo) - old
            new = old + shift if room_up >= shift else old - shift
            s.params = {**s.params, "center": new}
            s.smooth = SHAPES[s.params["shape"]](s.x, s.params)
            changed.append({"series": s.name, "from": round(old, 3), "to": round(new, 3)})
        return {"shift_of_x_range": round(shift / (hi - lo), 3), "centres": changed,
                "axis_units": "log10(x)" if panel.xscale == "log" else "x"}
    raise ValueError(variation)


def _tick_label(value: float, *, log: bool) -> str:
    if log:
        exponent = np.log10(value)
        if abs(exponent - round(exponent)) < 0.05:
            return f"1e{int(round(exponent))}"
        return f"{value:.0e}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")
    return f"{value:.3g}"


def resample(rng: np.random.Generator, panel: PanelSpec) -> dict:
    """Log the same runs at another frequency (faithful)."""
    done = {}
    for s in panel.series:
        n = len(s.x)
        if panel.kind == "line" and n >= 20:
            step = 2 if n < 200 else 3
            keep = np.zeros(n, bool)
            keep[::step] = True
            keep[-1] = True
        elif panel.kind == "scatter" and n >= 12:
            keep = np.zeros(n, bool)
            keep[np.sort(rng.choice(n, int(round(0.75 * n)), replace=False))] = True
        else:
            continue
        s.x, s.smooth, s.resid = s.x[keep], s.smooth[keep], s.resid[keep]
        done[s.name] = f"{n} -> {int(keep.sum())} points"
    return done


# --- presentation ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Presentation:
    style: str
    font: str
    figsize: tuple[float, float]
    dpi: int
    font_scale: float = 1.0
    legend: str = "best"
    palette: str | None = None
    linewidth_scale: float = 1.0
    toggle_markers: bool = False


def _size_family(chart_type: str) -> str:
    return {"panels-1x2": "1x2", "panels-2x2": "2x2"}.get(chart_type, "single")


def published_presentation(rng: np.random.Generator, chart_type: str) -> Presentation:
    sizes = SIZES[_size_family(chart_type)]
    weights = np.array([3.0, 2.0] + [1.0] * (len(sizes) - 2))
    figsize, dpi = sizes[int(rng.choice(len(sizes), p=weights / weights.sum()))]
    return Presentation(style=str(rng.choice(list(STYLES))), font=str(rng.choice(list(FONTS))),
                        figsize=figsize, dpi=dpi)


def _other(rng: np.random.Generator, options: list, current: object) -> object:
    rest = [o for o in options if o != current]
    return rest[int(rng.integers(len(rest)))]


def reproduced_presentation(rng: np.random.Generator, pub: Presentation, change: str,
                            chart_type: str) -> Presentation:
    rep = pub
    parts = {"full_restyle": ["style", "dpi_size", "font", "legend_place", "colours",
                              "linewidth_markers"]}.get(change, [change])
    for part in parts:
        if part == "style":
            rep = replace(rep, style=_other(rng, list(STYLES), pub.style))
        elif part == "dpi_size":
            sizes = SIZES[_size_family(chart_type)]
            figsize, dpi = _other(rng, sizes, (pub.figsize, pub.dpi))
            rep = replace(rep, figsize=figsize, dpi=dpi)
        elif part == "font":
            rep = replace(rep, font=_other(rng, list(FONTS), pub.font),
                          font_scale=float(rng.choice([0.8, 0.9, 1.15, 1.3])))
        elif part == "legend_place":
            rep = replace(rep, legend=_other(rng, LEGEND_PLACES, pub.legend))
        elif part == "colours":
            rep = replace(rep, palette=_other(rng, list(PALETTES), pub.palette))
        elif part == "linewidth_markers":
            rep = replace(rep, linewidth_scale=float(rng.choice([0.5, 0.7, 1.6, 2.2])),
                          toggle_markers=True)
    return rep


# --- rendering -------------------------------------------------------------------------------

def _rounded(values: np.ndarray) -> list[float]:
    return [float(f"{v:.6g}") for v in np.asarray(values, float)]


def _draw_panel(ax, panel: PanelSpec, pres: Presentation, noise: np.random.Generator) -> dict:
    import matplotlib.pyplot as plt

    rc = plt.rcParams
    gray = pres.style == "grayscale"
    if gray:  # black and grays only, whatever the palette: another palette is another ramp
        cycle = GRAYS_ALT if pres.palette else GRAYS
    else:
        cycle = PALETTES[pres.palette] if pres.palette else rc["axes.prop_cycle"].by_key()["color"]
    linewidth = rc["lines.linewidth"] * pres.linewidth_scale
    markers_on = panel.markers != pres.toggle_markers
    record = {"kind": panel.kind, "data_kind": panel.data_kind, "title": panel.title,
              "xlabel": panel.xlabel, "ylabel": panel.ylabel, "xscale": panel.xscale,
              "yscale": panel.yscale, "series": []}
    n = len(panel.series)
    for k, s in enumerate(panel.series):
        y = s.smooth + s.resid + noise.normal(0, s.noise, len(s.smooth))
        if panel.yscale == "log" or panel.kind != "bar":
            y = np.maximum(y, 1e-3)
        colour = cycle[k % len(cycle)]
        if panel.kind == "line":
            ax.plot(s.x, y, label=s.name, color=colour, linewidth=linewidth,
                    linestyle=LINESTYLES[k % 4] if gray else "-",
                    marker=MARKERS[k % 5] if (gray or markers_on) else None,
                    markevery=max(1, len(s.x) // 12),
                    markersize=rc["lines.markersize"] * (0.8 + 0.4 * pres.linewidth_scale ** 0.5))
        elif panel.kind == "scatter":
            marker = MARKERS[k % 5] if (gray or markers_on) else "o"
            size = (rc["lines.markersize"] * 1.1 * pres.linewidth_scale ** 0.75) ** 2
            if gray:
                ax.scatter(s.x, y, label=s.name, marker=marker, s=size, facecolors="none"
                           if k % 2 else colour, edgecolors=colour, linewidths=1.0)
            else:
                ax.scatter(s.x, y, label=s.name, marker=marker, s=size, color=colour,
                           alpha=0.85, linewidths=0)
        else:
            # the line-width change of bars: outlined, narrower bars
            outlined = gray or pres.toggle_markers
            width = 0.8 / n
            offsets = s.x + (k - (n - 1) / 2) * width
            ax.bar(offsets, y, width=width * (0.7 if pres.toggle_markers else 0.95),
                   label=s.name, color=colour, hatch=HATCHES[k % 5] if gray else None,
                   edgecolor="black" if outlined else None,
                   linewidth=0.8 * pres.linewidth_scale if outlined else 0)
        record["series"].append({"name": s.name, "x": _rounded(s.x), "y": _rounded(y)})
    ax.set_xscale(panel.xscale)
    ax.set_yscale(panel.yscale)
    if panel.kind == "bar":  # after set_xscale, which resets the tick labels
        ax.set_xticks(np.arange(len(panel.categories)), panel.categories)
        record["categories"] = list(panel.categories)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title)
    if pres.legend == "outside":
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    else:
        ax.legend(loc=pres.legend)
    return record


def render(path: Path, panels: list[PanelSpec], pres: Presentation, chart_type: str,
           noise: np.random.Generator) -> list[dict]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcdefaults()
    rows, cols = LAYOUTS[chart_type]
    with plt.style.context(STYLES[pres.style]):
        size = plt.rcParams["font.size"] * pres.font_scale
        with plt.rc_context({"font.family": pres.font, "mathtext.fontset": FONTS[pres.font],
                             "font.size": size}):
            fig, axes = plt.subplots(rows, cols, figsize=pres.figsize, dpi=pres.dpi,
                                     squeeze=False, layout="constrained")
            records = [_draw_panel(ax, panel, pres, noise)
                       for ax, panel in zip(axes.flat, panels)]
            fig.savefig(path, dpi=pres.dpi, metadata={"Software": None})
            plt.close(fig)
    return records


# --- pairs -----------------------------------------------------------------------------------

def pair_plan(index: int) -> tuple[str, str, str | None]:
    """(label, presentation change, unfaithful variation or None) of pair `index`."""
    j = index // 2
    if index % 2 == 0:
        return "faithful", PRESENTATIONS[j % len(PRESENTATIONS)], None
    return ("unfaithful", PRESENTATIONS[(j + 3) % len(PRESENTATIONS)],
            UNFAITHFUL[j % len(UNFAITHFUL)])


def pair_id(index: int) -> str:
    return f"pair-{index:04d}"


def _png_size(path: Path) -> list[int]:
    with path.open("rb") as handle:
        header = handle.read(24)
    return [int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")]


def make_pair(index: int, out: Path, seed: int = BASE_SEED) -> dict:
    label, change, unfaithful = pair_plan(index)
    rng = np.random.default_rng([seed, index, 0])
    chart_type, panels, target = make_chart(rng, unfaithful)
    pub = published_presentation(rng, chart_type)
    rep = reproduced_presentation(rng, pub, change, chart_type)
    reproduced_panels = copy.deepcopy(panels)
    details: dict = {}
    if unfaithful is not None:
        details = perturb(rng, reproduced_panels[target], unfaithful)
        if len(panels) > 1:
            details = {"panel": target, **details}
    if change == "resampled":
        resampled = {}
        for k, panel in enumerate(reproduced_panels):
            done = resample(rng, panel)
            if done:
                resampled[str(k)] = done
        details = {**details, "resampled": resampled}
        if not resampled:
            rep = reproduced_presentation(rng, rep, "legend_place", chart_type)
            details["nothing to resample"] = f"legend moved to {rep.legend!r} instead"
    folder = out / pair_id(index)
    folder.mkdir(parents=True, exist_ok=True)
    pub_data = render(folder / "published.png", panels, pub, chart_type,
                      np.random.default_rng([seed, index, 1]))
    rep_data = render(folder / "reproduced.png", reproduced_panels, rep, chart_type,
                      np.random.default_rng([seed, index, 2]))
    hashes = {name: hashlib.sha256((folder / f"{name}.png").read_bytes()).hexdigest()
              for name in ("published", "reproduced")}
    describe = {}
    for name, pres in (("published", pub), ("reproduced", rep)):
        d = asdict(pres)
        d["figsize"] = list(pres.figsize)
        d["size"] = _png_size(folder / f"{name}.png")
        d["sha256"] = hashes[name]
        describe[name] = d
    return {
        "id": pair_id(index), "label": label, "variation": unfaithful or change,
        "presentation": change, "chart_type": chart_type,
        "panels": [p.data_kind for p in panels], "style": pub.style,
        "reproduced_style": rep.style, "font": pub.font, "reproduced_font": rep.font,
        "published": describe["published"], "reproduced": describe["reproduced"],
        "details": details, "generator": GENERATOR_VERSION, "seed": seed,
        "data": {"published": pub_data, "reproduced": rep_data},
    }


def _make_pair_job(args: tuple[int, str, int]) -> dict:
    return make_pair(args[0], Path(args[1]), args[2])


def generate(out: Path, pairs: int = DEFAULT_PAIRS, *, jobs: int | None = None,
             progress: Callable[[int, int], None] | None = None, seed: int = BASE_SEED
             ) -> list[dict]:
    """Write the set into `out` and return the label lines (in pair order). Another `seed`
    gives another set of the same design: a held-out set for figures tuned on the default one."""
    out.mkdir(parents=True, exist_ok=True)
    jobs = max(1, jobs or os.cpu_count() or 1)
    work = [(i, str(out), seed) for i in range(pairs)]
    labels: list[dict] = []
    if jobs == 1:
        iterator = map(_make_pair_job, work)
        for line in iterator:
            labels.append(line)
            if progress:
                progress(len(labels), pairs)
    else:
        # fork where there is one: the workers then need not find this file on their path (it
        # is loaded by file name beside benchmarks/judging.py, which shadows the package)
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork") if "fork" in methods else None
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            for line in pool.map(_make_pair_job, work, chunksize=2):
                labels.append(line)
                if progress:
                    progress(len(labels), pairs)
    tmp = out / "labels.jsonl.tmp"
    with tmp.open("w", encoding="utf-8") as handle:
        for line in labels:
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    tmp.replace(out / "labels.jsonl")
    return labels


def read_labels(out: Path) -> list[dict]:
    with (out / "labels.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=DEFAULT_PAIRS)
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes (default: all CPUs; the output does not depend "
                             "on it)")
    parser.add_argument("--seed", type=int, default=BASE_SEED,
                        help=f"another seed gives a held-out set of the same design (default "
                             f"{BASE_SEED}, the dev set)")
    args = parser.parse_args()
    if args.pairs < 2:
        parser.error("--pairs must be at least 2 (one per class)")

    def progress(done: int, total: int) -> None:
        if done % 20 == 0 or done == total:
            print(f"  {done}/{total} pairs", file=sys.stderr)

    labels = generate(args.out, args.pairs, jobs=args.jobs, progress=progress, seed=args.seed)
    counts: dict[str, int] = {}
    for line in labels:
        counts[line["label"]] = counts.get(line["label"], 0) + 1
    print(f"{len(labels)} pairs in {args.out} ({', '.join(f'{v} {k}' for k, v in counts.items())}"
          f"); labels: {args.out / 'labels.jsonl'}")


if __name__ == "__main__":
    main()
