"""LLM judging throughput against the local OpenAI-compatible server with injected latency.

1,000 claims (half figure claims with two 512-px images, half number claims): figure claims get
two rubrics (figure-match and verdict-justification), number claims one, so 1,500 calls. The
server runs in its own process (so it does not share the client's GIL) and sleeps `--latency`
seconds per call. Printed:
- the judging wall time (signals are measured beforehand: this times the judge stage), the
  concurrency bound (calls x latency / concurrency) and the ratio to it (target <= 1.1x at 32);
- a plain sequential loop over the same calls (measured on a sample, extrapolated), and the ratio
  (target >= 20x);
- a warm rerun over the same run directory (target 0 calls, <= 3 s), and a re-judge into a new
  run directory answered from the cache (0 calls).

    .venv/bin/python benchmarks/judging.py [--claims 1000] [--latency 0.25] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from PIL import Image, ImageDraw

# This file is named like the package: take its own folder off the path so that `judging` is the
# package, not this script.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from judging.judges.llm import LLMOptions  # noqa: E402
from judging.run.runner import Runner, RunRequest  # noqa: E402

MODEL = "bench-judge"
PER_SUBMISSION = 250


def chart(seed: int, *, jitter: float) -> Image.Image:
    """A 512x384 line chart drawn with Pillow (fast to make 1,000 of)."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (512, 384), "white")
    draw = ImageDraw.Draw(image)
    draw.line([(40, 20), (40, 350), (500, 350)], fill="black", width=2)
    for k, colour in enumerate(["#1f77b4", "#ff7f0e", "#2ca02c"]):
        x = np.linspace(45, 495, 60)
        y = 60 + 250 * np.exp(-(x - 45) / (80 + 40 * k)) + 20 * k + rng.normal(0, jitter, x.size)
        draw.line(list(zip(x.tolist(), y.tolist())), fill=colour, width=2)
    return image


def build_sources(root: Path, n_claims: int) -> list[Path]:
    folders = []
    for s in range(0, n_claims, PER_SUBMISSION):
        folder = root / f"sub{s // PER_SUBMISSION}"
        (folder / "figures").mkdir(parents=True)
        (folder / "logs").mkdir()
        claims = []
        for i in range(s, min(s + PER_SUBMISSION, n_claims)):
            if i % 2 == 0:
                published, reproduced = f"figures/p{i}.png", f"figures/r{i}.png"
                chart(i, jitter=1).save(folder / published)
                chart(i + 7919, jitter=3).save(folder / reproduced)
                claims.append({"claim_id": f"bench/f{i}", "kind": "figure",
                               "statement": f"Loss curve {i} falls fast then flattens.",
                               "published_figure": published, "reproduced_figure": reproduced,
                               "verdict": "verified", "justification": "The curves match.",
                               "evidence": {"logs": []}})
            else:
                log = f"logs/run{i}.txt"
                (folder / log).write_text(f"step 1000 loss 0.5\nfinal top1 {90 + i % 7}.20\n")
                claims.append({"claim_id": f"bench/n{i}", "kind": "number",
                               "statement": f"Accuracy {i} is {90 + i % 7}.4%",
                               "reported_value": 90.4 + i % 7, "reproduced_value": 90.2 + i % 7,
                               "tolerance": {"absolute": 0.5}, "verdict": "verified",
                               "justification": f"final top1 {90 + i % 7}.20 in {log}",
                               "evidence": {"logs": [log]}})
        manifest = {"submission_id": f"bench/sub{s // PER_SUBMISSION}", "paper_id": "bench",
                    "claims": claims}
        (folder / "submission.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
        folders.append(folder)
    return folders


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, "-m", "judging.testing.fake_openai", "--port", "0",
                               "--latency", str(latency)], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    if not url.startswith("http"):
        server.kill()
        raise SystemExit(f"the fake server did not start: {url!r}")
    return server, url


def count_calls(url: str) -> int:
    import json
    import urllib.request
    with urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/stats") as response:
        return int(json.load(response)["calls"])


async def run_judging(request: RunRequest, *, premeasure: bool) -> tuple[float, Runner]:
    runner = Runner(request)
    if premeasure:
        # Measure every claim first, so that the timed part is the judge stage.
        from judging.intake.manifest import load_submission
        from judging.intake.sources import expand_source
        claims = [c for source in request.sources
                  for folder in expand_source(source, download_root=request.out)
                  for c in load_submission(folder).claims]
        await asyncio.gather(*(runner._measure(c) for c in claims))
    started = time.perf_counter()
    await runner.run()
    return time.perf_counter() - started, runner


async def sequential_sample(request: RunRequest, n_calls: int) -> float:
    """Seconds per call when the same calls are made one after another."""
    runner = Runner(request)
    from judging.intake.manifest import load_submission
    from judging.intake.sources import expand_source
    from judging.judges import JudgeTask
    claims = [c for source in request.sources
              for folder in expand_source(source, download_root=request.out)
              for c in load_submission(folder).claims]
    rubrics = runner._rubrics()
    items = runner.plan(claims, rubrics)[:n_calls]
    measured = [await runner._measure(item.claim) for item in items]
    started = time.perf_counter()
    for item, measurement in zip(items, measured):
        await item.judge(JudgeTask(claim=item.claim, rubric=item.rubric,
                                   signals=measurement.signals, images=measurement.images,
                                   sample=item.sample))
    elapsed = time.perf_counter() - started
    await runner.aclose()
    return elapsed / len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--sequential-sample", type=int, default=40,
                        help="calls timed one after another (the rest is extrapolated)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="judging-bench-"))
    server, url = start_server(args.latency)
    try:
        sources = [str(p) for p in build_sources(work / "sources", args.claims)]

        def request(out: Path, cache: Path, *, no_cache: bool = False) -> RunRequest:
            llm = LLMOptions(base_url=url, api_key="sk-bench", cache_dir=cache,
                             use_cache=not no_cache, max_retries=2)
            return RunRequest(sources=sources, out=out, judges=[f"openai:{MODEL}"],
                              concurrency=args.concurrency, llm=llm)

        cache = work / "cache"
        before = count_calls(url)
        wall, runner = asyncio.run(run_judging(request(work / "run", cache), premeasure=True))
        calls = count_calls(url) - before
        bound = calls * args.latency / args.concurrency
        print(f"claims: {args.claims} ({args.claims // 2} figure claims with two 512-px images, "
              f"{args.claims - args.claims // 2} number claims)")
        print(f"calls: {calls}, latency {args.latency * 1000:.0f} ms, concurrency "
              f"{args.concurrency}")
        print(f"judging wall time:           {wall:8.2f} s")
        print(f"concurrency bound:           {bound:8.2f} s  (calls x latency / concurrency)")
        print(f"ratio to the bound:          {wall / bound:8.3f} x  (target <= 1.1)")

        per_call = asyncio.run(sequential_sample(
            request(work / "seq", work / "seq-cache", no_cache=True), args.sequential_sample))
        sequential = per_call * calls
        print(f"sequential loop:             {sequential:8.2f} s  ({per_call * 1000:.0f} ms a "
              f"call, measured on {args.sequential_sample} calls, extrapolated to {calls})")
        print(f"speed-up over sequential:    {sequential / wall:8.1f} x  (target >= 20)")

        def rerun(out: Path) -> tuple[float, int]:
            """Seconds and endpoint calls of a plain run into `out` with the shared cache."""
            before = count_calls(url)
            started = time.perf_counter()
            asyncio.run(Runner(request(out, cache)).run())
            return time.perf_counter() - started, count_calls(url) - before

        warm, warm_calls = rerun(work / "run")
        print(f"warm rerun (same run dir):   {warm:8.2f} s, {warm_calls} calls  "
              f"(target 0 calls, <= 3 s)")
        rejudge, rejudge_calls = rerun(work / "rejudge")
        print(f"re-judge into a new run dir: {rejudge:8.2f} s, {rejudge_calls} calls "
              f"(answers from the cache; signals measured again)")
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
