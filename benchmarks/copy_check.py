"""Does the copy check (`judging.signals.copies.check_copy`, the `pixel.copy` signal) flag copies
and only copies?

Five sets, each printed with how many pairs are flagged, the margins to the thresholds
(COPY_MAX_REDRAWN_SHARE on the share of redrawn pixels, COPY_MAX_TONE_SHARE on the share shaded
otherwise) and the cost of one check:

1. synthetic copies of the chart dev set (benchmarks/chart_devset.py): every `--every`-th
   published figure through each of COPIES (JPEG q95/80/60/40, 4:4:4 too; a 40-px white border,
   a 10% gray one, an uneven black one; 3% and uneven 1-5% crops; 0.5x (Lanczos, nearest),
   0.7x (bicubic, bilinear), 1.3x, 2x (Lanczos, nearest); gray by three luma formulas; and
   combinations). All must be copies.
2. the dev set's own pairs: every reproduction is re-drawn from fresh noisy data with one
   presentation change. None may be a copy.
3. the real copies of a pairs file (`--pairs`, default realfig-dev's: label `copy`: exact bytes,
   JPEG q80, 70% resize, gray, 40-px padding). All must be copies.
4. its faithful and unfaithful pairs (re-plots in other tools, genuine re-renders). None may be a
   copy.
5. the real published figures of the pairs file through COPIES. All must be copies.

The real figures are read where they lie; nothing of them is copied anywhere.

    .venv/bin/python benchmarks/copy_check.py [--out DIR] [--pairs FILE.jsonl] [--every 4]
                                              [--jobs 2] [--seed N]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from judging.signals import load_image  # noqa: E402
from judging.signals.copies import (  # noqa: E402
    COPY_MAX_REDRAWN_SHARE,
    COPY_MAX_TONE_SHARE,
    COPY_MIN_CORRELATION,
    check_copy,
)

# The dev set and its preparation are chart_signals.py's (loaded by file: see its header).
_spec = importlib.util.spec_from_file_location("chart_signals", _HERE / "chart_signals.py")
assert _spec is not None and _spec.loader is not None
chart_signals = importlib.util.module_from_spec(_spec)
sys.modules["chart_signals"] = chart_signals  # its dataclasses look their module up by name
_spec.loader.exec_module(chart_signals)
devset = chart_signals.devset

REALFIG = _HERE.parent.parent / "shared" / "datasets" / "realfig-dev" / "pairs.jsonl"
R = Image.Resampling


def _jpeg(image: Image.Image, quality: int, **options) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality, **options)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


def _scaled(image: Image.Image, factor: float, method: Image.Resampling = R.BICUBIC
            ) -> Image.Image:
    return image.resize((round(image.width * factor), round(image.height * factor)), method)


def _padded(image: Image.Image, sides: tuple[int, int, int, int] | None = None, *,
            share: float | None = None, colour="white") -> Image.Image:
    if share is not None:
        sides = (round(share * max(image.size)),) * 4
    left, top, right, bottom = sides or (40, 40, 40, 40)
    canvas = Image.new("RGB", (image.width + left + right, image.height + top + bottom), colour)
    canvas.paste(image, (left, top))
    return canvas


def _cropped(image: Image.Image, sides: tuple[float, float, float, float]) -> Image.Image:
    left, top, right, bottom = sides
    w, h = image.size
    return image.crop((round(left * w), round(top * h), w - round(right * w),
                       h - round(bottom * h)))


def _gray(image: Image.Image, weights: tuple[float, float, float] | None = None) -> Image.Image:
    if weights is None:
        return image.convert("L").convert("RGB")
    gray = np.asarray(image, np.float32) @ np.array(weights, np.float32)
    return Image.fromarray(np.clip(gray.round(), 0, 255).astype(np.uint8)).convert("RGB")


COPIES: dict[str, Callable[[Image.Image], Image.Image]] = {
    "jpeg 95": lambda im: _jpeg(im, 95),
    "jpeg 80": lambda im: _jpeg(im, 80),
    "jpeg 60": lambda im: _jpeg(im, 60),
    "jpeg 60 4:4:4": lambda im: _jpeg(im, 60, subsampling=0),
    "jpeg 40": lambda im: _jpeg(im, 40),
    "pad 40 px": _padded,
    "pad 10% gray": lambda im: _padded(im, share=0.1, colour=(200, 200, 200)),
    "pad black uneven": lambda im: _padded(im, (60, 10, 30, 45), colour="black"),
    "crop 3%": lambda im: _cropped(im, (0.03,) * 4),
    "crop 1-5% uneven": lambda im: _cropped(im, (0.05, 0.01, 0.02, 0.04)),
    "0.5 lanczos": lambda im: _scaled(im, 0.5, R.LANCZOS),
    "0.5 nearest": lambda im: _scaled(im, 0.5, R.NEAREST),
    "0.7 bicubic": lambda im: _scaled(im, 0.7),
    "0.7 bilinear": lambda im: _scaled(im, 0.7, R.BILINEAR),
    "1.3 bicubic": lambda im: _scaled(im, 1.3),
    "2 lanczos": lambda im: _scaled(im, 2.0, R.LANCZOS),
    "2 nearest": lambda im: _scaled(im, 2.0, R.NEAREST),
    "gray": _gray,
    "gray 709": lambda im: _gray(im, (0.2126, 0.7152, 0.0722)),
    "gray mean": lambda im: _gray(im, (1 / 3, 1 / 3, 1 / 3)),
    "0.7 + jpeg 80": lambda im: _jpeg(_scaled(im, 0.7), 80),
    "1/3 + jpeg 75": lambda im: _jpeg(_scaled(im, 1 / 3, R.BILINEAR), 75),
    "crop 3% + 0.8 + jpeg 75": lambda im: _jpeg(_scaled(_cropped(im, (0.03,) * 4), 0.8), 75),
    "pad 40 px + jpeg 70": lambda im: _jpeg(_padded(im), 70),
}


@dataclass(frozen=True)
class Job:
    group: str
    """devset-copy | devset-pair | real-copy | real-pair | real-synthetic"""
    name: str
    published: str
    reproduced: str | None
    transform: str | None = None


@dataclass(frozen=True)
class Outcome:
    job: Job
    copy: bool
    identical: bool
    redrawn: float | None
    tone: float | None
    correlation: float | None
    seconds: float
    how: str


def _run(job: Job) -> Outcome:
    published = load_image(job.published)
    reproduced = (COPIES[job.transform](published) if job.transform is not None
                  else load_image(job.reproduced))  # type: ignore[arg-type]
    start = time.perf_counter()
    check = check_copy(published, reproduced)
    seconds = time.perf_counter() - start
    return Outcome(job, check.copy, check.identical, check.redrawn_share, check.tone_share,
                   check.correlation, seconds, check.how)


def _jobs(devset_root: Path, labels: list[dict], every: int, pairs: Path | None) -> list[Job]:
    jobs = []
    for n, line in enumerate(labels):
        folder = devset_root / line["id"]
        published = str(folder / "published.png")
        jobs.append(Job("devset-pair", f"{line['id']} {line['variation']}", published,
                        str(folder / "reproduced.png")))
        if n % every == 0:
            jobs += [Job("devset-copy", line["id"], published, None, name) for name in COPIES]
    if pairs is not None:
        folder = pairs.resolve().parent
        lines = [json.loads(text) for text in pairs.read_text(encoding="utf-8").splitlines()
                 if text.strip()]
        for line in lines:
            group = "real-copy" if line["label"] == "copy" else "real-pair"
            jobs.append(Job(group, f"{line['id']} ({line.get('kind') or line['label']})",
                            str(folder / line["published"]), str(folder / line["reproduced"])))
        for published in sorted({line["published"] for line in lines}):
            jobs += [Job("real-synthetic", published, str(folder / published), None, name)
                     for name in COPIES]
    return jobs


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1e}"


def _closest(outcomes: list[Outcome]) -> str:
    """The non-copy nearest to the thresholds: the smallest multiple of either threshold."""
    measured = [o for o in outcomes if o.redrawn is not None and o.tone is not None]
    if not measured:
        return "every pair decided at the coarse stage"
    nearest = min(measured, key=lambda o: max(o.redrawn / COPY_MAX_REDRAWN_SHARE,  # type: ignore
                                              o.tone / COPY_MAX_TONE_SHARE))  # type: ignore
    return f"closest: {nearest.job.name}: {nearest.how}"


def _cost(outcomes: list[Outcome]) -> str:
    seconds = np.array([o.seconds for o in outcomes])
    return f"median {np.median(seconds) * 1000:.0f} ms, p90 {np.percentile(seconds, 90) * 1000:.0f} ms"


def report(outcomes: list[Outcome]) -> bool:
    """Print the five sets; True when every copy is flagged and no other pair is."""
    ok = True
    print(f"\nthresholds: a copy has a redrawn share <= {COPY_MAX_REDRAWN_SHARE:.0e}, a shaded "
          f"share <= {COPY_MAX_TONE_SHARE} and its marks correlate >= {COPY_MIN_CORRELATION}")
    groups = {g: [o for o in outcomes if o.job.group == g] for g in
              ("devset-copy", "devset-pair", "real-copy", "real-pair", "real-synthetic")}
    for group, title, must_copy in [
            ("devset-copy", "1. synthetic copies of dev-set figures", True),
            ("devset-pair", "2. dev-set re-renders (fresh data, one presentation change)", False),
            ("real-copy", "3. real copies of the pairs file", True),
            ("real-pair", "4. real faithful/unfaithful pairs", False),
            ("real-synthetic", "5. synthetic copies of the real published figures", True)]:
        found = groups[group]
        if not found:
            continue
        flagged = [o for o in found if o.copy]
        wrong = [o for o in found if o.copy != must_copy]
        ok &= not wrong
        print(f"\n{title}: {len(flagged)}/{len(found)} flagged as copies "
              f"({'all must be' if must_copy else 'none may be'}); cost {_cost(found)}")
        if must_copy:
            by_transform: dict[str, list[Outcome]] = {}
            for o in found:
                by_transform.setdefault(o.job.transform or o.job.name, []).append(o)
            for name, items in by_transform.items():
                missed = [o for o in items if not o.copy]
                redrawn = [o.redrawn for o in items if o.redrawn is not None]
                tone = [o.tone for o in items if o.tone is not None]
                correlation = [o.correlation for o in items if o.correlation is not None]
                low = min(correlation, default=None)
                print(f"   {name[:40]:40} {len(items) - len(missed):3d}/{len(items):<3d} "
                      f"redrawn max {_fmt(max(redrawn, default=None))}  shaded max "
                      f"{_fmt(max(tone, default=None))}  correlation min "
                      f"{'-' if low is None else f'{low:.3f}'}  identical "
                      f"{sum(o.identical for o in items)}")
        else:
            coarse = sum(o.redrawn is None for o in found)
            high = max((o.correlation for o in found if o.correlation is not None), default=None)
            print(f"   decided at the coarse stage (256 px): {coarse}/{len(found)}; highest "
                  f"correlation {'-' if high is None else f'{high:.3f}'} (a copy needs "
                  f"{COPY_MIN_CORRELATION}); {_closest([o for o in found if not o.copy])}")
        for o in wrong:
            print(f"   WRONG: {o.job.name} {o.job.transform or ''}: {o.how}")
    everything = [o for g in groups.values() for o in g]
    copies = [o for o in everything if o.job.group in ("devset-copy", "real-copy",
                                                       "real-synthetic")]
    others = [o for o in everything if o not in copies]
    print(f"\ncost of one check (this machine, {len(everything)} checks): all {_cost(everything)}; "
          f"copies {_cost(copies)}; other pairs {_cost(others)}")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="dev set folder (reused)")
    parser.add_argument("--seed", type=int, default=devset.BASE_SEED)
    parser.add_argument("--every", type=int, default=4,
                        help="make copies of every N-th dev-set figure (default 4)")
    parser.add_argument("--pairs", type=Path, default=REALFIG if REALFIG.is_file() else None,
                        help=f"a pairs file of real figures (default {REALFIG} when present)")
    parser.add_argument("--no-pairs", action="store_true", help="the dev set only")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    start = time.perf_counter()
    pairs = None if args.no_pairs else args.pairs
    with tempfile.TemporaryDirectory(prefix="chart-devset-") as tmp:
        root = args.out or Path(tmp)
        labels = chart_signals.prepare_set(root, devset.DEFAULT_PAIRS, None, args.seed)
        jobs = _jobs(root, labels, args.every, pairs)
        outcomes = []
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for n, outcome in enumerate(pool.map(_run, jobs, chunksize=4), 1):
                outcomes.append(outcome)
                if n % 200 == 0:
                    print(f"  {n}/{len(jobs)} checks", file=sys.stderr)
    ok = report(outcomes)
    print(f"\n{'every copy flagged, no other pair' if ok else 'MISTAKES above'}; "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
