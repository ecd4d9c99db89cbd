"""Signal invariants and numeric agreement (image loading: test_images.py; copies:
test_copies.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from judging.cli import main
from judging.models import TableValue, Tolerance
from judging.signals import (
    agreement,
    compare_figures,
    edge_f1,
    normalize_pair,
    palette_distance,
    table_agreement,
    trim_border,
)
from tests.conftest import open_png, render_chart

X = np.linspace(0, 10, 200)


def _series(val_shift: float = 0.0, *, reverse_train: bool = False, drop_val: bool = False):
    train = np.exp(-(10 - X) / 3) + 0.1 if reverse_train else np.exp(-X / 3) + 0.1
    series = {"train": (X, train)}
    if not drop_val:
        series["val"] = (X, np.exp(-X / 4) + 0.15 + val_shift)
    return series


@pytest.fixture(scope="module")
def base() -> Image.Image:
    return open_png(render_chart())


def _signals(base: Image.Image, other: Image.Image):
    return compare_figures(base, other).signals


def test_identical_images_score_top(base: Image.Image) -> None:
    signals = _signals(base, base.copy())
    assert signals.ssim == pytest.approx(1.0)
    assert signals.edge_f1 == pytest.approx(1.0)
    assert signals.palette_distance == 0.0
    assert signals.phash_distance == 0.0
    assert signals.mean_abs_diff == 0.0
    assert signals.copy is True


@pytest.mark.parametrize("measure, better", [
    ("ssim", "higher"), ("edge_f1", "higher"), ("phash_distance", "lower"),
    ("mean_abs_diff", "lower"),
])
def test_stronger_data_change_scores_worse(base: Image.Image, measure: str, better: str) -> None:
    values = [getattr(_signals(base, open_png(render_chart(series=_series(shift)))), measure)
              for shift in (0.02, 0.1, 0.3)]
    ordered = values if better == "lower" else [-v for v in values]
    assert ordered == sorted(ordered), f"{measure}: {values}"
    assert ordered[0] < ordered[-1]


def test_stronger_noise_scores_worse(base: Image.Image) -> None:
    rng = np.random.default_rng(0)
    pixels = np.asarray(base, dtype=np.float64)
    scores = []
    for sigma in (5, 20, 60):
        noisy = np.clip(pixels + rng.normal(0, sigma, pixels.shape), 0, 255).astype(np.uint8)
        scores.append(_signals(base, Image.fromarray(noisy)).ssim)
    assert scores[0] > scores[1] > scores[2]


@pytest.mark.parametrize("variant", [
    {"dpi": 72}, {"dpi": 150}, {"dpi": 200}, {"fmt": "webp"}, {"fmt": "jpg"},
    {"scale": 0.6}, {"scale": 1.7},
])
def test_size_dpi_and_format_barely_move_the_scores(base: Image.Image, variant: dict) -> None:
    if "scale" in variant:
        other = base.resize((round(base.width * variant["scale"]),
                             round(base.height * variant["scale"])), Image.Resampling.LANCZOS)
    else:
        other = open_png(render_chart(**variant))
    signals = _signals(base, other)
    tiny_data_change = _signals(base, open_png(render_chart(series=_series(0.05))))
    assert signals.ssim >= 0.95
    assert signals.edge_f1 >= 0.95
    assert signals.phash_distance <= 0.1
    # A rendering change must look closer than a real (small) change of the data.
    assert signals.ssim > tiny_data_change.ssim
    assert signals.edge_f1 > tiny_data_change.edge_f1


def test_missing_series_moves_the_palette(base: Image.Image) -> None:
    missing = _signals(base, open_png(render_chart(series=_series(drop_val=True))))
    restyled_same_colours = _signals(base, open_png(render_chart(dpi=150)))
    assert missing.palette_distance > 0.3 > restyled_same_colours.palette_distance


def test_trim_and_common_size(base: Image.Image) -> None:
    padded = Image.new("RGB", (base.width + 300, base.height + 100), "white")
    padded.paste(base, (150, 40))
    assert trim_border(padded).size == trim_border(base).size
    a, b = normalize_pair(base, padded, size=256)
    assert a.size == b.size and max(a.size) == 256
    wide = base.resize((base.width * 2, base.height))
    a, b = normalize_pair(base, wide, size=256)
    assert a.size == b.size  # the wide one is fitted, aspect kept, on a white canvas
    blank = Image.new("RGB", (100, 80), "white")
    assert trim_border(blank).size == (100, 80)


def test_edge_f1_edge_cases() -> None:
    empty = np.zeros((10, 10), dtype=bool)
    some = empty.copy()
    some[5, 5] = True
    assert edge_f1(empty, empty) is None
    assert edge_f1(empty, some) == 0.0
    assert edge_f1(some, some) == 1.0
    with pytest.raises(ValueError):
        edge_f1(empty, np.zeros((5, 5), dtype=bool))


def test_palette_of_colourless_figures() -> None:
    gray = Image.new("RGB", (64, 64), "white")
    coloured = gray.copy()
    coloured.paste((220, 30, 30), (10, 10, 40, 40))
    assert palette_distance(gray, gray) == 0.0
    assert palette_distance(gray, coloured) == 1.0


def test_diff_image_is_written(tmp_path: Path, base: Image.Image) -> None:
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    base.save(a)
    open_png(render_chart(series=_series(0.2))).save(b)
    result = CliRunner().invoke(main, ["similarity", str(a), str(b), "--json", "--diff",
                                       str(tmp_path / "diff.png")])
    assert result.exit_code == 0, result.output
    values = json.loads(result.output)
    assert set(values) == {"pixel.ssim", "pixel.edge_f1", "pixel.palette_distance",
                           "pixel.phash_distance", "pixel.mean_abs_diff", "pixel.copy"}
    diff = Image.open(tmp_path / "diff.png").convert("RGB")
    pixels = np.asarray(diff).reshape(-1, 3).astype(int)
    red_only = ((pixels[:, 0] > 200) & (pixels[:, 1] < 100)).sum()
    cyan_only = ((pixels[:, 0] < 100) & (pixels[:, 1] > 200)).sum()
    assert red_only > 50 and cyan_only > 50  # the moved curve shows in both colours


# --- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("reported, reproduced, tolerance, within", [
    (94.1, 93.8, Tolerance(absolute=0.5), True),
    (94.1, 93.6, Tolerance(absolute=0.5), True),  # exactly on the edge, despite binary floats
    (94.1, 93.5, Tolerance(absolute=0.5), False),
    (0.873, 0.842, Tolerance(relative=0.01), False),
    (0.873, 0.870, Tolerance(relative=0.01), True),
    (0.0, 0.0, Tolerance(relative=0.01), True),
    (0.0, 0.1, Tolerance(relative=0.01), False),
    (1.0, 2.0, None, None),
])
def test_numeric_agreement(reported: float, reproduced: float, tolerance: Tolerance | None,
                           within: bool | None) -> None:
    found = agreement(reported=reported, reproduced=reproduced, tolerance=tolerance)
    assert found.within is within
    assert found.abs_diff == pytest.approx(abs(reproduced - reported))
    assert (found.rel_diff is None) == (reported == 0)


def test_numeric_agreement_refuses_non_finite() -> None:
    with pytest.raises(ValueError, match="finite"):
        agreement(reported=float("inf"), reproduced=1.0, tolerance=None)


def test_table_agreement() -> None:
    cells = [TableValue(name="a", reported=10, reproduced=10.1),
             TableValue(name="b", reported=20, reproduced=25,
                        tolerance=Tolerance(relative=0.5))]
    result = table_agreement(cells, tolerance=Tolerance(absolute=0.2))
    assert result.all_within is True and result.within_fraction == 1.0
    cells.append(TableValue(name="c", reported=5, reproduced=6))
    result = table_agreement(cells, tolerance=Tolerance(absolute=0.2))
    assert result.all_within is False and result.within_fraction == pytest.approx(2 / 3)
    assert result.max_rel_diff == pytest.approx(0.25)
    partial = table_agreement([TableValue(name="a", reported=1, reproduced=None)],
                              tolerance=Tolerance(absolute=1))
    assert partial.all_within is None and partial.within_fraction is None

