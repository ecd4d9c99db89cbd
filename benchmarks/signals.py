"""Per-pair cost of measuring 1600x1200 chart PNGs, alone and in a run.

Prints the time to measure one figure pair the way `judging run` does (decode both PNGs, trim,
resize, all pixel and chart signals, write the normalised pair, the diff and the overlay) and its
ratio to the time needed just to decode the two PNGs; then the marginal wall time per claim of a
`judging run --judge offline` over `--run` such claims (the process pool, one worker per core)
over a run of `--run-base` claims, against the same decode time (issue 15: <= 5x, goal 3x).

    .venv/bin/python benchmarks/signals.py [--pairs 12] [--repeat 3] [--run 32 --run-base 8]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judging.models import Claim, ClaimInput, ClaimKey, SubmissionHeader  # noqa: E402
from judging.run import Runner, RunRequest  # noqa: E402
from judging.run.measure import MeasureOptions, measure_claim  # noqa: E402
from judging.signals import load_image  # noqa: E402


def render(path: Path, *, seed: int, style: str, shift: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(seed)
    x = np.linspace(0, 20, 400)
    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=(8, 6), dpi=200)
        for k, name in enumerate(["dense", "sparse 50%", "sparse 90%"]):
            y = np.exp(-x / (3 + k)) + 0.1 * k + shift + rng.normal(0, 0.01, x.size)
            ax.plot(x, y, label=name)
        ax.set_xlabel("steps (k)")
        ax.set_ylabel("validation loss")
        ax.set_title("Figure 3")
        ax.legend()
        fig.savefig(path, dpi=200, metadata={"Software": None})
        plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--run", type=int, default=32, help="figure claims in the timed run")
    parser.add_argument("--run-base", type=int, default=8,
                        help="figure claims in the run it is compared with")
    args = parser.parse_args()
    styles = ["default", "ggplot", "seaborn-v0_8-whitegrid", "bmh"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        claims = []
        for i in range(args.pairs):
            published, reproduced = root / f"pub{i}.png", root / f"rep{i}.png"
            render(published, seed=i, style="default", shift=0.0)
            render(reproduced, seed=100 + i, style=styles[i % len(styles)], shift=0.02 * (i % 3))
            claims.append(ClaimInput(
                key=ClaimKey(submission_id="bench/sub", claim_id=f"fig/{i}"),
                submission=SubmissionHeader(submission_id="bench/sub", paper_id="bench"),
                claim=Claim(claim_id=f"fig/{i}", kind="figure", statement="bench",
                            published_figure=published.name, reproduced_figure=reproduced.name,
                            verdict="verified"),
                root=root, published_path=published, reproduced_path=reproduced))
        size = load_image(claims[0].published_path).size
        options = MeasureOptions()
        decode_times, pair_times = [], []
        for _ in range(args.repeat):
            for i, claim in enumerate(claims):
                start = time.perf_counter()
                load_image(claim.published_path)
                load_image(claim.reproduced_path)
                decode_times.append(time.perf_counter() - start)
                start = time.perf_counter()
                measured = measure_claim(claim, options=options, run_root=root,
                                         out_dir=root / "diffs" / str(i))
                pair_times.append(time.perf_counter() - start)
                assert measured.figure_error is None and measured.artifacts.diff
        decode = statistics.median(decode_times)
        pair = statistics.median(pair_times)
        print(f"figure pairs: {args.pairs} x {args.repeat} repeats, {size[0]}x{size[1]} PNG, "
              f"compared at {options.image_size} px")
        print(f"decode two PNGs (median):            {decode * 1000:7.1f} ms")
        print(f"full pixel signals per pair (median): {pair * 1000:7.1f} ms  "
              f"(decode + trim + resize + SSIM, edge F1, palette, pHash, copy + write 3 PNGs)")
        print(f"ratio to decode:                      {pair / decode:7.2f} x  (target <= 3x)")
        if args.run:
            in_a_run(root, args, styles, decode)


def in_a_run(root: Path, args: argparse.Namespace, styles: list[str], decode: float) -> None:
    """The marginal wall time per claim of a `judging run` over args.run claims (distinct
    pairs, each measured in the pool: a fresh run directory, so a cold measurement cache)."""
    import asyncio
    import os

    import yaml

    folder = root / "submission"
    (folder / "figures").mkdir(parents=True)
    claims = []
    for i in range(args.run):
        published, reproduced = f"figures/pub{i}.png", f"figures/rep{i}.png"
        render(folder / published, seed=1000 + i, style="default", shift=0.0)
        render(folder / reproduced, seed=2000 + i, style=styles[i % len(styles)],
               shift=0.02 * (i % 3))
        claims.append({"claim_id": f"bench/f{i}", "kind": "figure", "statement": "bench",
                       "published_figure": published, "reproduced_figure": reproduced,
                       "verdict": "verified", "justification": "The curves match."})

    def run(n: int, name: str) -> float:
        sub = root / f"{name}-source"
        shutil.copytree(folder, sub)
        (sub / "submission.yaml").write_text(yaml.safe_dump(
            {"submission_id": "bench/sub", "paper_id": "bench", "claims": claims[:n]}))
        request = RunRequest(sources=[str(sub)], out=root / name, judges=["offline"],
                             rubrics=["figure-match"])
        start = time.perf_counter()
        result = asyncio.run(Runner(request).run())
        wall = time.perf_counter() - start
        assert result.measure.measured == n, result.measure
        return wall

    base = run(args.run_base, "run-base")
    full = run(args.run, "run-full")
    marginal = (full - base) / (args.run - args.run_base)
    print(f"judging run --judge offline, {args.run_base} then {args.run} claims: {base:.2f} s, "
          f"{full:.2f} s ({os.cpu_count()} cores, one measuring process each)")
    print(f"marginal wall time per claim:         {marginal * 1000:7.1f} ms  "
          f"= {marginal / decode:5.2f}x the decode of its pair (target <= 5x, goal 3x)")
    print(f"mean wall time per claim (32-claim run):{full / args.run * 1000:6.1f} ms  "
          f"= {full / args.run / decode:5.2f}x")


if __name__ == "__main__":
    main()
