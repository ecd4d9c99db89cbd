"""Measurement in a process pool with a content cache (judging/run/pool.py): the same judgments
as measuring in this process, a cache hit measures nothing, identical figures are measured once,
a claim whose measurement raises is an error line while the others are judged, and a measuring
process that dies is reported (never a hang) and costs only the claim that killed it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.hashing import slug
from judging.models import ClaimInput
from judging.run import Runner, RunRequest
from judging.run.measure import Measurement
from judging.run.pool import (
    MAX_BARREN_POOLS,
    MeasurePool,
    MeasuringUnavailable,
    measure_and_store,
)
from judging.rundir import RunPaths
from tests.conftest import SubmissionBuilder, render_chart

FIGURE_MATCH = "figure-match@1.3.0"
VERDICT = "verdict-justification@1.0.0"


@pytest.fixture(scope="module")
def charts() -> tuple[bytes, bytes, bytes]:
    import numpy as np

    x = np.linspace(0, 10, 120)
    # 320x240: what is tested is where and how often figures are measured, not how well; a
    # smaller chart costs less to measure each of the times it is (issue 43).
    small = {"size": (4, 3), "dpi": 80}
    return (render_chart(**small),
            render_chart(series={"train": (x, np.exp(-x / 2)), "val": (x, np.exp(-x / 3))},
                         **small),
            render_chart(series={"acc": (x, 1 - np.exp(-x / 2))}, **small))


def _submission(root: Path, charts: tuple[bytes, bytes, bytes], *, sid: str = "tester/sub-1",
                n: int = 2) -> Path:
    builder = SubmissionBuilder(root, submission_id=sid)
    for i in range(n):
        builder.figure_claim(f"paper-1/f{i}", published=charts[0], reproduced=charts[1 + i % 2])
    builder.number_claim("paper-1/c1")
    return builder.write()


def _run(*args: str) -> None:
    result = CliRunner().invoke(main, ["run", *args, "--judge", "offline"])
    assert result.exit_code == 0, result.output


def _counts(out: Path) -> dict[str, int]:
    return json.loads(RunPaths(out).run_json.read_text())["invocations"][-1]["counts"]


def _lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in RunPaths(out).judgments.read_text().splitlines()]


def _by_claim(lines: list[dict]) -> dict[tuple[str, str], dict]:
    return {(line["claim"]["claim_id"], line["rubric"]["id"]): line for line in lines}


def test_the_pool_judges_as_measuring_in_process_does(tmp_path: Path, charts) -> None:
    source = _submission(tmp_path / "sub", charts)
    _run(str(source), "--out", str(tmp_path / "pool"))
    _run(str(source), "--out", str(tmp_path / "inline"), "--measure-workers", "0")
    pooled, inline = _by_claim(_lines(tmp_path / "pool")), _by_claim(_lines(tmp_path / "inline"))
    assert pooled.keys() == inline.keys() and len(pooled) == 5
    for key, line in pooled.items():
        for field in ("signals", "flags", "answers", "aggregate", "status", "artifacts",
                      "input_hash"):
            assert line[field] == inline[key][field], (key, field)
    assert _counts(tmp_path / "pool")["measured"] == 2
    for name in ("published", "reproduced", "diff"):
        relative = pooled[("paper-1/f0", "figure-match")]["artifacts"][name]
        assert (tmp_path / "pool" / relative).read_bytes() == \
            (tmp_path / "inline" / relative).read_bytes()


def test_rejudging_with_another_rubric_measures_nothing(tmp_path: Path, charts) -> None:
    source, out = _submission(tmp_path / "sub", charts), tmp_path / "run"
    _run(str(source), "--out", str(out), "--rubric", FIGURE_MATCH)
    first = _counts(out)
    assert (first["measured"], first["measure_cache_hits"]) == (2, 0)
    assert first["measure_cpu_ms"] > 0
    shutil.rmtree(out / "diffs")  # the images come back from the cache
    _run(str(source), "--out", str(out), "--rubric", VERDICT)
    second = _counts(out)
    assert (second["measured"], second["measure_cache_hits"], second["measure_cpu_ms"]) == \
        (0, 2, 0)
    lines = _by_claim(_lines(out))
    for i in range(2):
        figure, verdict = lines[(f"paper-1/f{i}", "figure-match")], \
            lines[(f"paper-1/f{i}", "verdict-justification")]
        assert verdict["signals"] == figure["signals"] and verdict["flags"] == figure["flags"]
        assert verdict["artifacts"] == figure["artifacts"]
        assert all((out / path).is_file() for path in verdict["artifacts"].values() if path)


def test_identical_figures_are_measured_once_and_a_shared_cache_serves_other_runs(
        tmp_path: Path, charts) -> None:
    # Two submissions with the same files (a copied reproduction): one measurement.
    first = _submission(tmp_path / "a", charts, sid="alice/repro", n=1)
    second = _submission(tmp_path / "b", charts, sid="bob/repro", n=1)
    cache = tmp_path / "measure-cache"
    _run(str(first), str(second), "--out", str(tmp_path / "run1"), "--measure-cache", str(cache))
    counts = _counts(tmp_path / "run1")
    assert (counts["measured"], counts["measure_cache_hits"]) == (1, 1)
    assert not (tmp_path / "run1" / "measurements").exists()
    lines = [line for line in _lines(tmp_path / "run1") if line["rubric"]["id"] == "figure-match"]
    assert len(lines) == 2 and lines[0]["signals"] == lines[1]["signals"]
    _run(str(first), "--out", str(tmp_path / "run2"), "--measure-cache", str(cache))
    assert _counts(tmp_path / "run2")["measured"] == 0
    # The fingerprints of a run whose figures came from the cache are there for the integrity
    # check all the same.
    assert len(RunPaths(tmp_path / "run2").fingerprints.read_text().splitlines()) == 1


def test_a_claim_whose_measurement_raises_is_an_error_line_and_the_rest_is_judged(
        tmp_path: Path, charts) -> None:
    source, out = _submission(tmp_path / "sub", charts), tmp_path / "run"
    # A file where the claim's image folder goes: writing its images fails in the worker.
    blocked = out / "diffs" / slug("tester/sub-1::paper-1/f0")
    blocked.parent.mkdir(parents=True)
    blocked.write_text("in the way")
    _run(str(source), "--out", str(out))
    lines = _by_claim(_lines(out))
    for rubric in ("figure-match", "verdict-justification"):
        bad = lines[("paper-1/f0", rubric)]
        assert bad["status"] == "error"
        assert bad["reason"].startswith("signals could not be computed: FileExistsError")
    assert lines[("paper-1/f1", "figure-match")]["status"] == "scored"
    assert lines[("paper-1/c1", "verdict-justification")]["status"] == "scored"


def dies_on_boom(claim: ClaimInput, *args: object) -> object:
    """A measuring task that kills its process on one claim (a segfault, the OOM killer)."""
    if claim.claim.claim_id.endswith("boom"):
        os._exit(17)
    return measure_and_store(claim, *args)  # type: ignore[arg-type]


def test_a_dead_measuring_process_is_reported_and_costs_only_its_claim(tmp_path: Path,
                                                                     charts) -> None:
    builder = SubmissionBuilder(tmp_path / "sub")
    for claim_id in ("paper-1/f1", "paper-1/boom", "paper-1/f2", "paper-1/f3"):
        builder.figure_claim(claim_id, published=charts[0], reproduced=charts[1])
    out = tmp_path / "run"
    runner = Runner(RunRequest(sources=[str(builder.write())], out=out, rubrics=[FIGURE_MATCH]))
    runner.inflight.pool = MeasurePool(2, task=dies_on_boom)
    result = asyncio.run(asyncio.wait_for(runner.run(), timeout=300))
    lines = _by_claim(_lines(out))
    boom = lines[("paper-1/boom", "figure-match")]
    assert boom["status"] == "error" and not boom["final"]
    assert "the measuring process died measuring this claim" in boom["reason"]
    for claim_id in ("paper-1/f1", "paper-1/f2", "paper-1/f3"):
        assert lines[(claim_id, "figure-match")]["status"] == "scored", claim_id
    assert result.measure.workers_died >= 1
    assert _counts(out)["measure_workers_died"] >= 1


def hangs_on_slow(claim: ClaimInput, *args: object) -> object:
    """A measuring task that never returns on one claim (an image library stuck in a loop)."""
    if claim.claim.claim_id.endswith("slow"):
        import time

        time.sleep(3600)
    return measure_and_store(claim, *args)  # type: ignore[arg-type]


def test_a_hung_measurement_is_stopped_at_the_timeout_and_costs_only_its_claim(
        tmp_path: Path, charts) -> None:
    builder = SubmissionBuilder(tmp_path / "sub")
    for claim_id in ("paper-1/f1", "paper-1/slow", "paper-1/f2", "paper-1/f3"):
        builder.figure_claim(claim_id, published=charts[0], reproduced=charts[1])
    out = tmp_path / "run"
    runner = Runner(RunRequest(sources=[str(builder.write())], out=out, rubrics=[FIGURE_MATCH]))
    runner.inflight.pool = MeasurePool(2, task=hangs_on_slow, timeout=20)
    result = asyncio.run(asyncio.wait_for(runner.run(), timeout=300))
    lines = _by_claim(_lines(out))
    slow = lines[("paper-1/slow", "figure-match")]
    assert slow["status"] == "error" and not slow["final"]  # a rerun measures it again
    assert "took longer than 20 s, so its process was stopped" in slow["reason"]
    for claim_id in ("paper-1/f1", "paper-1/f2", "paper-1/f3"):
        assert lines[(claim_id, "figure-match")]["status"] == "scored", claim_id
    assert result.measure.timed_out == 1
    assert _counts(out)["measure_timed_out"] == 1


def answers_then_dies(claim: object, *args: object) -> Measurement:
    """A measuring task whose process dies just after it answered (the OOM killer picking an
    idle worker): pebble then finds no claim to charge and marks its whole pool broken."""
    if claim == "dies-when-idle":
        threading.Timer(0.2, os._exit, args=(17,)).start()
    return Measurement(figure_error=f"measured {claim}")


def test_a_worker_lost_while_idle_breaks_no_claim_the_pool_is_replaced() -> None:
    async def scenario() -> tuple[list[Measurement], MeasurePool]:
        pool = MeasurePool(2, task=answers_then_dies, timeout=60)

        async def measure(claim: str) -> Measurement:
            return await pool.measure(claim, None, run_root=None, out_dir=None,  # type: ignore
                                      cache_root=None, key=None)

        await measure("dies-when-idle")
        broken = pool._current.pool  # type: ignore[union-attr]
        for _ in range(300):  # until pebble has seen the death (its pool is then broken)
            if not broken.active:
                break
            await asyncio.sleep(0.1)
        assert not broken.active, "the worker did not die"
        answers = await asyncio.gather(*(measure(f"c{i}") for i in range(6)))
        await asyncio.to_thread(pool.shutdown)
        return answers, pool

    answers, pool = asyncio.run(asyncio.wait_for(scenario(), timeout=120))
    assert [a.figure_error for a in answers] == [f"measured c{i}" for i in range(6)]
    assert pool.replaced == 1 and pool.died == 0


def test_linking_a_cached_image_twice_leaves_no_temporary_file(tmp_path: Path) -> None:
    """rename() does nothing when both names are links to one file (POSIX): a cache hit on a
    figure already linked into diffs/ once left its temporary name behind (seen in a merge)."""
    from judging.run.pool import _link_or_copy

    source = tmp_path / "cache" / "diff.png"
    source.parent.mkdir()
    source.write_bytes(b"\x89PNG not really")
    target = tmp_path / "diffs" / "diff.png"
    target.parent.mkdir()
    _link_or_copy(source, target)
    _link_or_copy(source, target)
    assert target.read_bytes() == source.read_bytes()
    assert sorted(p.name for p in target.parent.iterdir()) == ["diff.png"]


def cannot_start() -> None:
    """A worker that cannot start (a native library that fails to load in a fresh process)."""
    raise ImportError("libbroken.so: cannot open shared object file")


def test_workers_that_cannot_start_stop_the_run_with_the_reason_and_a_rerun_resumes(
        tmp_path: Path, charts) -> None:
    """Pools that break before measuring anything are not replaced for ever (seen: a script
    whose forkserver workers failed to import it churned through pools for minutes)."""
    builder = SubmissionBuilder(tmp_path / "sub")
    for n in range(6):
        builder.figure_claim(f"paper-1/f{n}", published=charts[0], reproduced=charts[1])
    source = str(builder.write())
    out = tmp_path / "run"
    runner = Runner(RunRequest(sources=[source], out=out, rubrics=[FIGURE_MATCH, VERDICT]))
    runner.inflight.pool = MeasurePool(2, initializer=cannot_start, timeout=60)
    with pytest.raises(MeasuringUnavailable, match="cannot start here"):
        asyncio.run(asyncio.wait_for(runner.run(), timeout=300))
    assert runner.inflight.pool.barren == MAX_BARREN_POOLS
    info = json.loads((out / "run.json").read_text())
    invocation = info["invocations"][-1]
    assert invocation["status"] == "failed"
    assert any("measuring pools in a row broke" in e for e in invocation["errors"])
    assert not any(line["kind"] == "figure" and line["status"] == "scored"
                   for line in _lines(out) if line["rubric"]["id"] == "figure-match")

    result = asyncio.run(asyncio.wait_for(Runner(RunRequest(
        sources=[source], out=out, rubrics=[FIGURE_MATCH, VERDICT])).run(), timeout=300))
    lines = _by_claim(_lines(out))
    for n in range(6):
        assert lines[(f"paper-1/f{n}", "figure-match")]["status"] == "scored"
    assert result.measure.measured == 6
