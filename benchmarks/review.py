"""Pushing judgments to the local Argilla server: records per second, and the server's start time.

Builds a run directory with 1,000 figure-claim judgments, each with three 512-px PNG images that
`judging run` wrote for the bundled examples (published, reproduced, diff: about 130 KiB a
record), starts the local server (cold: a new
home; warm: a restart of the same home), and times `judging review push` (target >= 100 records/s).

    .venv/bin/python benchmarks/review.py [--records 1000]

The server runs in its own environment: JUDGING_ARGILLA_PYTHON, else .venv-argilla/bin/python
(`make argilla-env`; `make bench` sets both up).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from judging.hashing import content_hash, slug  # noqa: E402
from judging.models import (  # noqa: E402
    Aggregate,
    AnswerStatus,
    Artifacts,
    Claim,
    ClaimInput,
    ClaimKey,
    ConfidenceSource,
    CriterionAnswer,
    Judgment,
    LineStatus,
    Outcome,
    Provenance,
    Signal,
    SubmissionHeader,
)
from judging.review.push import PushOptions, connect, push_run  # noqa: E402
from judging.review.server.process import start_background, stop  # noqa: E402
from judging.rubrics import RubricLibrary  # noqa: E402
from judging.rundir.store import RunStore, utc_now  # noqa: E402

#: The interpreter of the server's environment (None: .venv-argilla/bin/python).
SERVER_PYTHON = os.environ.get("JUDGING_ARGILLA_PYTHON") or None


def example_figures(root: Path) -> list[dict[str, Path]]:
    """The published, reproduced and diff images that `judging run` writes for the examples."""
    from judging.run.runner import RunRequest, run_judging

    examples = _HERE.parent / "examples"
    out = root / "examples-run"
    run_judging(RunRequest(sources=[str(examples / "submissions")], out=out,
                           registry=examples / "registry" / "claims.yaml"))
    sets = []
    for folder in sorted((out / "diffs").iterdir()):
        names = {name: folder / f"{name}.png" for name in ("published", "reproduced", "diff")}
        if all(path.is_file() for path in names.values()):
            sets.append(names)
    return sets


def build_run(root: Path, n: int) -> Path:
    rubric = RubricLibrary().load("figure-match@1.0.0")
    figures = example_figures(root)
    store = RunStore.open(root / "run")
    store.write_info()
    claims = []
    for i in range(n):
        key = ClaimKey(submission_id=f"bench/sub{i % 20}", claim_id=f"bench/f{i}")
        folder = store.paths.diffs / slug(str(key))
        folder.mkdir(parents=True)
        for name, source in figures[i % len(figures)].items():
            shutil.copyfile(source, folder / f"{name}.png")
        relative = folder.relative_to(store.root).as_posix()
        claims.append(ClaimInput(
            key=key, submission=SubmissionHeader(submission_id=key.submission_id,
                                                 paper_id="bench"),
            claim=Claim(claim_id=key.claim_id, kind="figure", statement=f"Curve {i} falls.",
                        published_figure="p.png", reproduced_figure="r.png",
                        verdict="verified", justification="The curves match."),
            root=root))
        answers = [CriterionAnswer(criterion_id=c.id, status=AnswerStatus.scored,
                                   value=True if c.scale == "binary" else 4, passed=True,
                                   rationale="looks the same", confidence=0.8,
                                   confidence_source=ConfidenceSource.self_reported)
                   for c in rubric.criteria]
        store.append(Judgment(
            run_id=store.info.run_id, claim=key, paper_id="bench", kind="figure",
            verdict="verified", rubric=rubric.ref(), judge="openai:bench",
            input_hash=content_hash(i), status=LineStatus.scored, answers=answers,
            aggregate=Aggregate(score=0.9, coverage=1.0, outcome=Outcome.passed),
            signals={"pixel.ssim": Signal(value=0.8), "pixel.edge_f1": Signal(value=0.7)},
            artifacts=Artifacts(published=f"{relative}/published.png",
                                reproduced=f"{relative}/reproduced.png",
                                diff=f"{relative}/diff.png"),
            provenance=Provenance(judge="openai:bench", model="bench", timestamp=utc_now(),
                                  code_version="bench")))
    store.record_claims(claims)
    store.close()
    return store.root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="judging-review-bench-"))
    home = work / "argilla"
    port = free_port()
    try:
        run_dir = build_run(work, args.records)
        started = time.perf_counter()
        info = start_background(home, host="127.0.0.1", port=port, python=SERVER_PYTHON)
        cold = time.perf_counter() - started
        client = connect(info.url, info.api_key)
        started = time.perf_counter()
        result = push_run(run_dir, client=client, options=PushOptions(blind_share=0.0))
        first = time.perf_counter() - started
        started = time.perf_counter()
        push_run(run_dir, client=client, options=PushOptions(blind_share=0.0))
        again = time.perf_counter() - started
        stop(home)
        started = time.perf_counter()
        start_background(home, host="127.0.0.1", port=port, python=SERVER_PYTHON)
        warm = time.perf_counter() - started
        stop(home)
        images = sum(p.stat().st_size for p in (run_dir / "diffs").rglob("*.png"))
        print(f"records: {result.total} (figure-match, three 512-px PNGs each, "
              f"{images / result.total / 1024:.0f} KiB of images a record)")
        print(f"first push:            {first:7.2f} s  {result.total / first:7.1f} records/s  "
              f"(target >= 100)")
        print(f"re-push (updates):     {again:7.2f} s  {result.total / again:7.1f} records/s")
        print(f"server start, cold:    {cold:7.2f} s  (new home: migrations, owner)")
        print(f"server start, warm:    {warm:7.2f} s  (same home, {result.total} records "
              f"re-indexed)")
    finally:
        try:
            stop(home)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
