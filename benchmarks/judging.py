"""LLM judging at the endpoint's concurrency bound, against the local OpenAI-compatible server.

The fake server (judging/testing/fake_openai.py) runs in its own process and sleeps `--latency`
seconds per call; calls are counted by the server. A figure claim makes one call per rubric,
sample and figure order (two rubrics here: figure-match and verdict-justification); a number
claim one. Printed, with the acceptance targets of issue 15:

- warm: the figures already measured once (a shared measurement cache), the marginal time of
  the extra calls of a 400-figure-claim run over a 100-claim run, against their concurrency
  bound (extra calls x latency / concurrency), at each --concurrency (target <= 1.2x);
- cold: a fresh measurement cache, the whole 400-claim run against max(concurrency bound,
  measurement CPU time / cores) (target <= 1.2x: measurement and calls overlap);
- floor: the same number of calls as the warm part's extra ones through the openai SDK alone,
  on judging's own call path and transport with a figure claim's body, and no judging work:
  the client's cost on this machine, under which no run's ratio can go;
- peer: calls/s of `judging run` on number claims against inspect_ai's `model_graded_qa` over
  the same endpoint, at the same concurrency (target >= 2x). inspect-ai is installed into its
  own venv (`--inspect-venv`, created on first use).

Every run is a real `judging run` (Runner.run: loading, planning, measuring, calls, lines).

    .venv/bin/python benchmarks/judging.py [--latency 0.2] [--concurrency 16 64]
        [--figures 400 --base 100] [--numbers 800] [--only floor warm cold peer]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import numpy as np
import yaml
from PIL import Image, ImageDraw

# This file is named like the package: take its own folder off the path so that `judging` is the
# package, not this script.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from judging.judges import LLMOptions  # noqa: E402
from judging.run.runner import Runner, RunRequest  # noqa: E402
from judging.rundir import RunStore  # noqa: E402

MODEL = "bench-judge"
PER_SUBMISSION = 100


def chart(seed: int, *, jitter: float) -> Image.Image:
    """A 512x384 line chart drawn with Pillow (fast to make hundreds of)."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (512, 384), "white")
    draw = ImageDraw.Draw(image)
    draw.line([(40, 20), (40, 350), (500, 350)], fill="black", width=2)
    for k, colour in enumerate(["#1f77b4", "#ff7f0e", "#2ca02c"]):
        x = np.linspace(45, 495, 60)
        y = 60 + 250 * np.exp(-(x - 45) / (80 + 40 * k)) + 20 * k + rng.normal(0, jitter, x.size)
        draw.line(list(zip(x.tolist(), y.tolist())), fill=colour, width=2)
    return image


def figure_sources(root: Path, n_claims: int, figures: Path) -> list[str]:
    """`n_claims` figure claims; claim i uses figures/p{i}.png and r{i}.png (drawn once into
    `figures`, copied into each submission: the same content, so the same measurement key)."""
    folders = []
    for s in range(0, n_claims, PER_SUBMISSION):
        folder = root / f"sub{s // PER_SUBMISSION}"
        (folder / "figures").mkdir(parents=True)
        claims = []
        for i in range(s, min(s + PER_SUBMISSION, n_claims)):
            for name, seed, jitter in ((f"p{i}.png", i, 1), (f"r{i}.png", i + 7919, 3)):
                source = figures / name
                if not source.exists():
                    chart(seed, jitter=jitter).save(source)
                shutil.copyfile(source, folder / "figures" / name)
            claims.append({"claim_id": f"bench/f{i}", "kind": "figure",
                           "statement": f"Loss curve {i} falls fast then flattens.",
                           "published_figure": f"figures/p{i}.png",
                           "reproduced_figure": f"figures/r{i}.png",
                           "verdict": "verified", "justification": "The curves match.",
                           "evidence": {"logs": []}})
        write_manifest(folder, s, claims)
        folders.append(str(folder))
    return folders


def number_sources(root: Path, n_claims: int) -> list[str]:
    folders = []
    for s in range(0, n_claims, PER_SUBMISSION):
        folder = root / f"sub{s // PER_SUBMISSION}"
        (folder / "logs").mkdir(parents=True)
        claims = []
        for i in range(s, min(s + PER_SUBMISSION, n_claims)):
            log = f"logs/run{i}.txt"
            (folder / log).write_text(f"step 1000 loss 0.5\nfinal top1 {90 + i % 7}.20\n")
            claims.append({"claim_id": f"bench/n{i}", "kind": "number",
                           "statement": f"Accuracy {i} is {90 + i % 7}.4%",
                           "reported_value": 90.4 + i % 7, "reproduced_value": 90.2 + i % 7,
                           "tolerance": {"absolute": 0.5}, "verdict": "verified",
                           "justification": f"final top1 {90 + i % 7}.20 in {log}",
                           "evidence": {"logs": [log]}})
        write_manifest(folder, s, claims)
        folders.append(str(folder))
    return folders


def write_manifest(folder: Path, start: int, claims: list[dict]) -> None:
    manifest = {"submission_id": f"bench/sub{start // PER_SUBMISSION}", "paper_id": "bench",
                "claims": claims}
    (folder / "submission.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))


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
    with urllib.request.urlopen(url.rsplit("/v1", 1)[0] + "/stats") as response:
        return int(json.load(response)["calls"])


class Bench:
    def __init__(self, url: str, work: Path, latency: float):
        self.url = url
        self.work = work
        self.latency = latency
        self.serial = 0

    def run(self, sources: list[str], *, concurrency: int, judge: str | None = None,
            measure_cache: Path | None = None, rubrics: list[str] | None = None
            ) -> tuple[float, int, dict[str, int]]:
        """(wall seconds, endpoint calls, run.json counts) of one fresh `judging run` (a new
        run directory and an empty answer cache: every call is made)."""
        self.serial += 1
        out = self.work / f"run{self.serial}"
        llm = LLMOptions(base_url=self.url, api_key="sk-bench", max_retries=2,
                         cache_dir=self.work / f"answers{self.serial}")
        request = RunRequest(sources=sources, out=out, judges=[judge or f"openai:{MODEL}"],
                             concurrency=concurrency, llm=llm, measure_cache=measure_cache,
                             rubrics=rubrics or [])
        before = count_calls(self.url)
        started = time.perf_counter()
        asyncio.run(Runner(request).run())
        wall = time.perf_counter() - started
        store = RunStore.open(out, create=False)
        counts = dict(store.info.invocations[-1].counts)
        latencies = [j.provenance.latency_s for j in store.latest() if j.provenance.latency_s]
        # what one call took as the client saw it (the server's latency + transport + its work)
        counts["mean_latency_ms"] = round(1000 * sum(latencies) / max(1, len(latencies)))
        return wall, count_calls(self.url) - before, counts


def warm(bench: Bench, args: argparse.Namespace) -> None:
    figures = bench.work / "figures"
    figures.mkdir(exist_ok=True)
    big = figure_sources(bench.work / "warm-big", args.figures, figures)
    small = figure_sources(bench.work / "warm-small", args.base, figures)
    cache = bench.work / "measure-cache"
    started = time.perf_counter()
    _, _, counts = bench.run(big, concurrency=16, judge="offline", measure_cache=cache)
    print(f"warm-up: {counts['measured']} figure claims measured into the cache in "
          f"{time.perf_counter() - started:.1f} s (offline judge)")
    for concurrency in args.concurrency:
        t_small, c_small, k_small = bench.run(small, concurrency=concurrency, measure_cache=cache)
        t_big, c_big, k_big = bench.run(big, concurrency=concurrency, measure_cache=cache)
        assert k_small["measured"] == 0 and k_big["measured"] == 0, "the cache was not warm"
        extra = c_big - c_small
        bound = extra * bench.latency / concurrency
        marginal = t_big - t_small
        print(f"warm, concurrency {concurrency:3d}: {args.base} claims {c_small} calls "
              f"{t_small:6.2f} s; {args.figures} claims {c_big} calls {t_big:6.2f} s; "
              f"the extra {extra} calls took {marginal:6.2f} s, bound {bound:5.2f} s: "
              f"{marginal / bound:5.2f}x  (target <= 1.2); a call took "
              f"{k_big['mean_latency_ms']} ms on average as the client saw it")


async def _sdk_floor(url: str, concurrency: int, calls: int, image: Path) -> float:
    """Wall seconds of `calls` chat completions through the openai SDK alone, over the
    transport and the call path `judging run` uses (one AsyncOpenAI client on the SDK's
    aiohttp transport sized to the concurrency, a body serialised once by pydantic-core and
    posted as bytes, the answer read as raw JSON), each body a figure claim's shape: a prompt and
    the published and reproduced figures as PNG data URIs. No judging work at all: what the
    client costs on this machine, the floor under any run's ratio."""
    import base64

    import httpx2
    import openai
    import pydantic_core

    uri = "data:image/png;base64," + base64.b64encode(image.read_bytes()).decode("ascii")
    content = [{"type": "text", "text": "Judge the reproduced figure against the published one "
                                        "and answer the rubric's JSON schema."},
               {"type": "image_url", "image_url": {"url": uri, "detail": "low"}},
               {"type": "image_url", "image_url": {"url": uri, "detail": "low"}}]
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=2,
                                http_client=openai.DefaultAioHttpClient(limits=limits))
    endpoint = f"{client.base_url}chat/completions"
    limiter = asyncio.Semaphore(concurrency)

    async def call(seed: int) -> None:
        body = pydantic_core.to_json({"model": MODEL, "seed": seed,
                                      "messages": [{"role": "user", "content": content}],
                                      "response_format": {"type": "json_object"}})
        async with limiter:
            response = await client.post(endpoint, content=body, cast_to=httpx2.Response)
        pydantic_core.from_json(response.content)

    try:
        await asyncio.gather(*(call(i) for i in range(concurrency)))  # connections opened
        started = time.perf_counter()
        await asyncio.gather(*(call(i) for i in range(calls)))
        return time.perf_counter() - started
    finally:
        await client.close()


def floor(bench: Bench, args: argparse.Namespace) -> None:
    figures = bench.work / "figures"
    figures.mkdir(exist_ok=True)
    image = figures / "floor.png"
    chart(1, jitter=1).save(image)
    calls = 2 * (args.figures - args.base)  # the warm part's extra calls
    for concurrency in args.concurrency:
        wall = asyncio.run(_sdk_floor(bench.url, concurrency, calls, image))
        bound = calls * bench.latency / concurrency
        print(f"floor, concurrency {concurrency:3d}: the openai SDK alone (judging's call path, "
              f"no judging work) made {calls} calls in {wall:6.2f} s, bound {bound:5.2f} s: "
              f"{wall / bound:5.2f}x")


def cold(bench: Bench, args: argparse.Namespace) -> None:
    figures = bench.work / "figures"
    figures.mkdir(exist_ok=True)
    sources = figure_sources(bench.work / "cold", args.figures, figures)
    concurrency = args.concurrency[0]
    wall, calls, counts = bench.run(sources, concurrency=concurrency)
    cores = os.cpu_count() or 1
    cpu = counts["measure_cpu_ms"] / 1000
    calls_bound = calls * bench.latency / concurrency
    bound = max(calls_bound, cpu / cores)
    print(f"cold, concurrency {concurrency:3d}: {args.figures} claims, {counts['measured']} "
          f"measured ({cpu:.1f} s CPU on {cores} cores = {cpu / cores:.1f} s), {calls} calls "
          f"(bound {calls_bound:.1f} s): whole run {wall:.2f} s, {wall / bound:.2f}x "
          f"max(bounds)  (target <= 1.2)")


INSPECT_TASK = '''
import json, sys, time
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import solver

n, concurrency, log_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


@solver
def answered():
    """The answer is given (as a reproduction's claim is): only the grader calls the model."""
    async def solve(state, generate):
        state.output = ModelOutput.from_content(model="given", content=state.metadata["answer"])
        return state
    return solve


samples = [Sample(input=f"Accuracy {i} is {90 + i % 7}.4%: does the reproduction agree?",
                  target=f"{90 + i % 7}.4", metadata={"answer": f"final top1 {90 + i % 7}.20"})
           for i in range(n)]
# Chat completions, as the fake server (and most OpenAI-compatible servers) speak.
grader = get_model("openai/bench-judge", responses_api=False)
task = Task(dataset=MemoryDataset(samples), solver=answered(),
            scorer=model_graded_qa(model=grader))
started = time.perf_counter()
logs = eval(task, model=grader, max_connections=concurrency, max_samples=concurrency,
            log_dir=log_dir, display="none", score_display=False)
wall = time.perf_counter() - started
if logs[0].status != "success":
    sys.exit(f"inspect_ai: {logs[0].status}: {logs[0].error and logs[0].error.message}")
print(json.dumps({"wall": wall}))
'''


def inspect_python(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"installing inspect-ai into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "inspect-ai", "openai"],
                       check=True)
    return python


def peer(bench: Bench, args: argparse.Namespace) -> None:
    python = inspect_python(args.inspect_venv)
    version = subprocess.run([str(python), "-c", "import inspect_ai; print(inspect_ai.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
    script = bench.work / "inspect_task.py"
    script.write_text(textwrap.dedent(INSPECT_TASK))
    sources = number_sources(bench.work / "numbers", args.numbers)
    env = {**os.environ, "OPENAI_BASE_URL": bench.url, "OPENAI_API_KEY": "sk-bench",
           "INSPECT_LOG_LEVEL": "warning"}
    for concurrency in args.concurrency:
        wall, calls, _ = bench.run(sources, concurrency=concurrency,
                                   rubrics=["verdict-justification"])
        ours = calls / wall
        before = count_calls(bench.url)
        done = subprocess.run([str(python), str(script), str(args.numbers), str(concurrency),
                               str(bench.work / f"inspect-logs-{concurrency}")],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"inspect_ai failed:\n{done.stderr[-3000:]}")
        theirs_calls = count_calls(bench.url) - before
        theirs_wall = json.loads(done.stdout.strip().splitlines()[-1])["wall"]
        theirs = theirs_calls / theirs_wall
        bound = concurrency / bench.latency
        print(f"peer, concurrency {concurrency:3d}: judging run {calls} calls in {wall:.2f} s = "
              f"{ours:6.1f} calls/s; inspect_ai {version} model_graded_qa {theirs_calls} calls "
              f"in {theirs_wall:.2f} s = {theirs:6.1f} calls/s; ratio {ours / theirs:.2f}x "
              f"(target >= 2; the bound is {bound:.0f} calls/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--figures", type=int, default=400)
    parser.add_argument("--base", type=int, default=100)
    parser.add_argument("--numbers", type=int, default=800)
    parser.add_argument("--only", nargs="+", choices=["floor", "warm", "cold", "peer"],
                        default=["floor", "warm", "cold", "peer"])
    parser.add_argument("--inspect-venv", type=Path,
                        default=Path(os.environ.get("XDG_CACHE_HOME")
                                     or Path.home() / ".cache") / "judging" / "bench-inspect-venv",
                        help="venv for inspect-ai (created with pip on first use)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="judging-bench-"))
    server, url = start_server(args.latency)
    print(f"latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, "
          f"{os.cpu_count()} cores")
    try:
        bench = Bench(url, work, args.latency)
        for part in ("floor", "warm", "cold", "peer"):
            if part in args.only:
                {"floor": floor, "warm": warm, "cold": cold, "peer": peer}[part](bench, args)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
