"""Does the copy flag tell a copy of the published figure from a near-identical re-render?

`pixel.copy` first asks the coarse question at the normalised size (SSIM >= 0.98 and mean
difference <= 0.015); a pair that passes it is compared again at full resolution
(`redrawn_share`, threshold COPY_MAX_REDRAWN_SHARE). This prints where that threshold sits:

- copies: every 4th published figure of the chart dev set (benchmarks/chart_devset.py) turned
  into a copy by 9 transformations (JPEG quality 70 and 40; 1/2 with Lanczos, then JPEG 60 too;
  1/3 bilinear then JPEG 75; 0.77 bicubic; 1.25 bicubic; gray; padded with a white border).
  Those that pass the coarse test must stay copies: redrawn share <= the threshold.
- re-renders: the dev-set pairs (every reproduction is redrawn from fresh data) that pass the
  coarse test. They must not be copies: redrawn share > the threshold.

    .venv/bin/python benchmarks/copy_check.py [--out DIR] [--seed N] [--every 4]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from judging.signals.pixel import COPY_MAX_REDRAWN_SHARE, compare_figures  # noqa: E402

# The dev set and its preparation are chart_signals.py's (loaded by file: see its header).
_spec = importlib.util.spec_from_file_location("chart_signals", _HERE / "chart_signals.py")
assert _spec is not None and _spec.loader is not None
chart_signals = importlib.util.module_from_spec(_spec)
sys.modules["chart_signals"] = chart_signals  # its dataclasses look their module up by name
_spec.loader.exec_module(chart_signals)
devset = chart_signals.devset


def _jpeg(image: Image.Image, quality: int) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


def _scaled(image: Image.Image, factor: float, method: Image.Resampling) -> Image.Image:
    return image.resize((round(image.width * factor), round(image.height * factor)), method)


def _padded(image: Image.Image) -> Image.Image:
    canvas = Image.new("RGB", (image.width + 80, image.height + 50), "white")
    canvas.paste(image, (40, 25))
    return canvas


COPIES: dict[str, Callable[[Image.Image], Image.Image]] = {
    "jpeg 70": lambda im: _jpeg(im, 70),
    "jpeg 40": lambda im: _jpeg(im, 40),
    "1/2": lambda im: _scaled(im, 0.5, Image.Resampling.LANCZOS),
    "1/2 + jpeg 60": lambda im: _jpeg(_scaled(im, 0.5, Image.Resampling.LANCZOS), 60),
    "1/3 + jpeg 75": lambda im: _jpeg(_scaled(im, 1 / 3, Image.Resampling.BILINEAR), 75),
    "0.77": lambda im: _scaled(im, 0.77, Image.Resampling.BICUBIC),
    "1.25": lambda im: _scaled(im, 1.25, Image.Resampling.BICUBIC),
    "gray": lambda im: im.convert("L").convert("RGB"),
    "padded": _padded,
}


def _summary(values: list[float]) -> str:
    if not values:
        return "none"
    array = np.array(values)
    return (f"min {array.min():.2e}  median {np.median(array):.2e}  max {array.max():.2e}  "
            f"(n={len(values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="dev set folder (reused)")
    parser.add_argument("--seed", type=int, default=devset.BASE_SEED)
    parser.add_argument("--every", type=int, default=4,
                        help="make copies of every N-th published figure (default 4)")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chart-devset-") as tmp:
        root = args.out or Path(tmp)
        labels = chart_signals.prepare_set(root, devset.DEFAULT_PAIRS, None, args.seed)
        copies: dict[str, list[float]] = {name: [] for name in COPIES}
        coarse_misses: dict[str, int] = {name: 0 for name in COPIES}
        rerenders: list[tuple[str, str, float]] = []
        for n, line in enumerate(labels):
            folder = root / line["id"]
            published = Image.open(folder / "published.png").convert("RGB")
            reproduced = Image.open(folder / "reproduced.png").convert("RGB")
            pair = compare_figures(published, reproduced).signals
            if pair.redrawn_share is not None:
                rerenders.append((line["id"], line["variation"], pair.redrawn_share))
            if n % args.every:
                continue
            for name, make in COPIES.items():
                signals = compare_figures(published, make(published)).signals
                if signals.redrawn_share is None:
                    coarse_misses[name] += 1  # not even near-identical: nothing to decide here
                else:
                    copies[name].append(signals.redrawn_share)
            if (n // args.every) % 10 == 9:
                print(f"  {n + 1}/{len(labels)} pairs", file=sys.stderr)

    threshold = COPY_MAX_REDRAWN_SHARE
    print(f"\nredrawn share at full resolution, threshold {threshold:.1e} (a copy at or below)")
    print(f"\ncopies of {len(range(0, len(labels), args.every))} published figures "
          f"(those that pass the coarse test; must stay copies):")
    all_copies = []
    for name, values in copies.items():
        wrong = sum(v > threshold for v in values)
        all_copies += values
        print(f"  {name:14} {_summary(values):60} cleared wrongly: {wrong}   "
              f"not near-identical at all: {coarse_misses[name]}")
    print(f"  {'all':14} {_summary(all_copies):60} "
          f"cleared wrongly: {sum(v > threshold for v in all_copies)}")
    print("\nre-renders from fresh data that pass the coarse test (must not be copies):")
    for pair_id, variation, value in rerenders:
        print(f"  {pair_id} {variation:22} {value:.2e}  "
              f"{'copy (WRONG)' if value <= threshold else 'not a copy'}")
    print(f"  {'all':14} {_summary([v for _, _, v in rerenders])}")
    worst_copy = max(all_copies, default=0.0)
    closest_rerender = min((v for _, _, v in rerenders), default=float("inf"))
    below = f"{threshold / worst_copy:.1f}x below" if worst_copy else "all at 0, below"
    print(f"\nmargin: the largest copy is {below} the threshold, the closest re-render "
          f"{closest_rerender / threshold:.1f}x above it; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
