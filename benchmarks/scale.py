"""`judging run --judge offline` at event scale: wall time, claims/s, peak RSS, report build.

For each N given, N claims across N/20 submissions of 20 claims: 60% number claims, 40% figure
claims with a distinct 800x600 published/reproduced pair each (drawn with Pillow: one to three
curves of random shape, colour, width, markers and grid, so no two claims share a chart), and
varied justifications (sentences drawn from a vocabulary, with the claim's own numbers), so that
the integrity index has real work. A few copies are planted across submissions: a figure claim
whose index is 0 or 1 modulo 97 hands in the reproduced figure of the previous submission's claim
in its place, every 89th claim that claim's justification; the benchmark prints how many the integrity check found.

Per N it prints: the run's wall time and claims/s, the peak RSS of the `judging run` process
(ru_maxrss of that child, from os.wait4), the report's build time, peak RSS and size (index page
plus shards and claim pages), and the integrity check timed in this process on all claims and on
a quarter of the submissions (an all-pairs check grows 16x from a quarter to the whole, an indexed
one about 4x). With several N, the RSS ratio of the largest to the smallest.

Acceptance (issue 15): N = 10,000 on a 2-core machine: wall <= 25 min, peak RSS <= 1.5 GB, RSS
at 10,000 within 1.3x of RSS at 2,000.

    PYTHONPATH=. .venv/bin/python benchmarks/scale.py 2000 [10000] [--work DIR] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PER_SUBMISSION = 20
WIDTH, HEIGHT = 800, 600
FIGURE_COPY_EVERY = 97
TEXT_COPY_EVERY = 89

WORDS = ("loss accuracy curve baseline training validation step epoch learning rate warmup schedule "
         "optimizer batch gradient seed variance model layer width depth dropout regularisation "
         "dataset split benchmark metric score trend plateau convergence divergence noise "
         "checkpoint script config logs figure table axis scale smoothing window run rerun budget "
         "hardware gpu hours half quarter full reduced reproduced reported published matches "
         "differs slightly clearly within outside tolerance margin expected unexpected because "
         "after before during while although however therefore observed measured computed "
         "averaged across three five seeds runs sweeps ablation variant").split()


def _sentence(rng: np.random.Generator, length: int) -> str:
    return " ".join(rng.choice(WORDS, size=length))


def justification(rng: np.random.Generator, i: int, value: float) -> str:
    """Two to four sentences of 8-16 drawn words, with the claim's numbers in them."""
    parts = [_sentence(rng, int(rng.integers(8, 17))) for _ in range(int(rng.integers(2, 5)))]
    parts.insert(int(rng.integers(0, len(parts) + 1)),
                 f"run {i} gave {value:.3f} at step {int(rng.integers(1000, 90000))}")
    return ". ".join(parts) + "."


def chart(rng: np.random.Generator, *, shape: dict, jitter: float) -> Image.Image:
    """An 800x600 line chart of the curves described by `shape` plus noise `jitter`."""
    image = Image.new("RGB", (WIDTH, HEIGHT), shape["background"])
    draw = ImageDraw.Draw(image)
    left, bottom = 60, HEIGHT - 50
    if shape["grid"]:
        for gx in range(left, WIDTH - 20, shape["grid"]):
            draw.line([(gx, 20), (gx, bottom)], fill="#dddddd")
        for gy in range(20, bottom, shape["grid"]):
            draw.line([(left, gy), (WIDTH - 20, gy)], fill="#dddddd")
    draw.line([(left, 20), (left, bottom), (WIDTH - 20, bottom)], fill="black", width=2)
    x = np.linspace(0, 1, 120)
    for curve in shape["curves"]:
        kind, a, b, c = curve["kind"], curve["a"], curve["b"], curve["c"]
        if kind == 0:
            y = a * np.exp(-x * b) + c
        elif kind == 1:
            y = a * np.log1p(b * x) / np.log1p(b) + c
        else:
            y = a * 0.5 * (1 + np.sin(b * 6 * x + c * 6)) + c * 0.3
        y = y + rng.normal(0, jitter, x.size)
        px = left + x * (WIDTH - 20 - left)
        py = bottom - np.clip(y, 0, 1.2) / 1.2 * (bottom - 30)
        points = list(zip(px.tolist(), py.tolist()))
        draw.line(points, fill=curve["colour"], width=curve["width"])
        if curve["markers"]:
            for cx, cy in points[::curve["markers"]]:
                draw.ellipse([cx - 3, cy - 3, cx + 3, cy + 3], outline=curve["colour"])
    return image


def random_shape(rng: np.random.Generator) -> dict:
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#7f7f7f", "#bcbd22", "#17becf"]
    return {"background": ("white", "#f8f8f0", "#f0f4fa")[int(rng.integers(0, 3))],
            "grid": int(rng.choice([0, 40, 60, 80])),
            "curves": [{"kind": int(rng.integers(0, 3)), "a": float(rng.uniform(0.3, 1.0)),
                        "b": float(rng.uniform(0.5, 8)), "c": float(rng.uniform(0, 0.4)),
                        "colour": palette[int(rng.integers(0, len(palette)))],
                        "width": int(rng.integers(1, 4)),
                        "markers": int(rng.choice([0, 0, 8, 12]))}
                       for _ in range(int(rng.integers(1, 4)))]}


def build(root: Path, n_claims: int, seed: int = 0) -> tuple[Path, dict[str, int]]:
    """Submission folders under root/subs; returns it and the planted copy counts."""
    rng = np.random.default_rng(seed)
    subs = root / "subs"
    planted = {"figures": 0, "justifications": 0}
    previous: dict | None = None  # the previous submission's claims: the source of copies
    for s in range(max(1, n_claims // PER_SUBMISSION)):
        folder = subs / f"sub{s:05d}"
        (folder / "figures").mkdir(parents=True)
        claims = []
        paper = f"paper-{s % max(1, n_claims // 100):04d}"
        for k in range(PER_SUBMISSION):
            i = s * PER_SUBMISSION + k
            value = float(rng.uniform(10, 99))
            text = justification(rng, i, value)
            if previous is not None and i % TEXT_COPY_EVERY == 0:
                text = previous["claims"][k]["justification"]
                planted["justifications"] += 1
            if k % 5 < 2:  # 40% figure claims
                shape = random_shape(rng)
                published, reproduced = f"figures/p{k}.png", f"figures/r{k}.png"
                chart(rng, shape=shape, jitter=0.005).save(folder / published, compress_level=1)
                source = previous["claims"][k] if previous is not None else None
                if source is not None and source["kind"] == "figure" and \
                        i % FIGURE_COPY_EVERY < 2:
                    shutil.copyfile(previous["folder"] / source["reproduced_figure"],
                                    folder / reproduced)
                    planted["figures"] += 1
                else:
                    chart(rng, shape=shape, jitter=0.02).save(folder / reproduced,
                                                              compress_level=1)
                claims.append({"claim_id": f"{paper}/f{k}", "kind": "figure",
                               "source": f"Figure {k}",
                               "statement": f"Curve {i} falls then flattens",
                               "published_figure": published, "reproduced_figure": reproduced,
                               "verdict": "verified", "justification": text,
                               "evidence": {"logs": []}})
            else:
                reproduced_value = value + float(rng.normal(0, 0.6))
                claims.append({"claim_id": f"{paper}/n{k}", "kind": "number",
                               "source": f"Table {k}", "statement": f"Metric {i} is {value:.2f}",
                               "reported_value": round(value, 2),
                               "reproduced_value": round(reproduced_value, 2),
                               "tolerance": {"absolute": 0.5},
                               "verdict": "verified" if abs(reproduced_value - value) <= 0.5
                               else "falsified",
                               "justification": text, "evidence": {"logs": []}})
        manifest = {"submission_id": f"scale/sub{s:05d}", "paper_id": paper,
                    "paper_title": f"Paper {paper}", "claims": claims}
        (folder / "submission.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
        previous = {"folder": folder, "claims": claims}
    return subs, planted


def timed_child(args: list[str], *, log: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in bytes, exit code) of one child process."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    with log.open("w") as handle:
        started = time.perf_counter()
        proc = subprocess.Popen(args, stdout=handle, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss * 1024, proc.returncode  # ru_maxrss is in KiB on Linux


def integrity_timing(run: Path) -> tuple[float, float, int]:
    """find_pairs over every claim and over a quarter of the submissions (seconds), and the
    pairs found over all."""
    from judging.run.integrity import find_pairs
    from judging.rundir import RunStore

    store = RunStore.open(run, create=False)
    fingerprints = store.fingerprints()
    claims = store.claims()
    subs = sorted({c.key.submission_id for c in claims.values()})
    quarter = set(subs[: max(1, len(subs) // 4)])
    started = time.perf_counter()
    find_pairs({k: f for k, f in fingerprints.items() if f.claim.submission_id in quarter},
               {k: c for k, c in claims.items() if c.key.submission_id in quarter})
    part = time.perf_counter() - started
    started = time.perf_counter()
    report = find_pairs(fingerprints, claims)
    whole = time.perf_counter() - started
    return whole, part, len(report.pairs)


def size_of(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        if path.is_file():
            total += path.stat().st_size
        elif path.is_dir():
            total += sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return total


def bench(n: int, work: Path) -> dict[str, float]:
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    subs, planted = build(work, n)
    print(f"N={n}: generated {n} claims in {n // PER_SUBMISSION} submissions in "
          f"{time.perf_counter() - started:.0f} s (planted copies: {planted['figures']} "
          f"figures, {planted['justifications']} justifications)", flush=True)
    run = work / "run"
    cli = [sys.executable, "-c", "from judging.cli import main; main()"]
    wall, rss, code = timed_child([*cli, "run", str(subs), "--out",
                                   str(run), "--judge", "offline"], log=work / "run.log")
    if code != 0:
        raise SystemExit(f"judging run failed ({code}); see {work / 'run.log'}")
    print(f"N={n}: run wall {wall:.0f} s ({wall / 60:.1f} min), {n / wall:.2f} claims/s, "
          f"peak RSS {rss / 2**20:.0f} MB", flush=True)
    report_wall, report_rss, code = timed_child(
        [*cli, "report", str(run)], log=work / "report.log")
    if code != 0:
        raise SystemExit(f"judging report failed ({code}); see {work / 'report.log'}")
    from judging.report.html import pages_dir
    from judging.rundir import RunPaths

    index = RunPaths(run).report
    report_size = size_of([index, pages_dir(index)])
    print(f"N={n}: report built in {report_wall:.1f} s (peak RSS {report_rss / 2**20:.0f} MB), "
          f"index page {index.stat().st_size / 2**20:.2f} MB, whole report "
          f"{report_size / 2**20:.1f} MB (figures are the run's own files, not counted)",
          flush=True)
    whole, part, pairs = integrity_timing(run)
    print(f"N={n}: integrity check {whole:.2f} s over all claims, {part:.2f} s over a quarter of "
          f"the submissions ({whole / part if part else float('nan'):.1f}x; all-pairs would be "
          f"about 16x); {pairs} pairs", flush=True)
    return {"n": n, "wall": wall, "rss": rss, "report_wall": report_wall,
            "report_size": report_size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, nargs="*", default=[2000], help="claims per run")
    parser.add_argument("--work", type=Path, default=None,
                        help="where to write submissions and runs (default: a temporary dir)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="judging-scale-"))
    results = []
    try:
        for n in args.n:
            target = work / f"n{n}"
            if target.exists():
                shutil.rmtree(target)
            results.append(bench(n, target))
    finally:
        if not args.keep and args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    if len(results) > 1:
        small, large = min(results, key=lambda r: r["n"]), max(results, key=lambda r: r["n"])
        print(f"RSS at N={large['n']:.0f} / RSS at N={small['n']:.0f}: "
              f"{large['rss'] / small['rss']:.2f}x (target <= 1.3x)")
    for r in results:
        if r["n"] >= 10_000:
            ok = r["wall"] <= 25 * 60 and r["rss"] <= 1.5 * 2**30
            print(f"N={r['n']:.0f}: wall <= 25 min and peak RSS <= 1.5 GB: "
                  f"{'yes' if ok else 'NO'}")


if __name__ == "__main__":
    main()
