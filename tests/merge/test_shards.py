"""Sharded runs and their merge: `judging run --shard I/N`, `judging merge`, and the same shards
as tasks on a real Ray cluster started on loopback (`--engine ray`).

The runs judge the bundled examples (submissions, a logbook, the registry) plus two submissions
made here that share a reproduced figure and a justification, chosen so that the two copies land
in different shards: only the merge can find them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from judging.cli import main
from judging.models import MERGE_CONFLICT, AnswerStatus, LineStatus
from judging.review.dataset import review_priority
from judging.rundir import (
    RunInfo,
    RunPaths,
    RunStore,
    judgments_with_flags,
    line_key,
    read_conflicts,
    read_consensus,
    read_integrity,
    read_judgments,
    read_not_addressed,
)
from judging.rundir.shards import Shard, shard_bucket
from tests.conftest import EXAMPLES, REGISTRY, ROOT, SUBMISSIONS, SubmissionBuilder, render_chart

LOGBOOKS = EXAMPLES / "logbooks"
N = 4
COPIED = ("We re-ran the released training script for twenty thousand steps on a single GPU and "
          "the validation loss falls below the reported threshold after about ten thousand "
          "steps, exactly as in the published figure; see the logs.")
CLAIM = "paper-9/f1"
#: The runs read the figures' measurements from the test run's shared cache (tests/conftest.py
#: `measurement_cache`: each figure measured once a test run, issue 43), but for the logbooks'
#: unsharded run, measured afresh: the Ray shards equal to it say a cached measurement is the
#: one measuring gives.
pytestmark = pytest.mark.usefixtures("shared_measurements")
FRESH = {"JUDGING_MEASURE_CACHE": None}


def _jpeg(png: bytes) -> bytes:
    buffer = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").resize((700, 525)).save(buffer, "JPEG",
                                                                       quality=80)
    return buffer.getvalue()


def _copiers() -> tuple[str, str]:
    """Two submission ids whose claim CLAIM falls in different shards of N (deterministic)."""
    first = "copier-a/sub"
    for i in range(100):
        other = f"copier-b{i}/sub"
        if shard_bucket(f"{first}::{CLAIM}", N) != shard_bucket(f"{other}::{CLAIM}", N):
            return first, other
    raise AssertionError("no pair of ids in different shards")


def _copy_submissions(root: Path) -> Path:
    x = np.linspace(0, 10, 200)
    published = render_chart()
    own = render_chart(series={"train": (x, np.exp(-x / 2.5) + 0.12),
                               "val": (x, np.exp(-x / 3.5) + 0.2)}, style="ggplot")
    a, b = _copiers()
    first = SubmissionBuilder(root / "a", a, "paper-9")
    first.figure_claim(CLAIM, published=published, reproduced=own, justification=COPIED)
    first.write()
    second = SubmissionBuilder(root / "b", b, "paper-9")
    second.figure_claim(CLAIM, published=published, reproduced=_jpeg(own),
                        justification=COPIED.replace("single", "one"))
    second.write()
    return root


def _run(*args: str, fresh: bool = False) -> str:
    """`judging run ARGS` in this process; `fresh`: measuring the figures again (no shared
    cache: the run directory's own)."""
    result = CliRunner().invoke(main, ["run", *args], env=FRESH if fresh else None)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def hermetic_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The conftest's hermetic settings for module-scoped runs (and the Ray workers)."""
    env = {"JUDGING_CACHE_DIR": str(tmp_path_factory.mktemp("answer-cache")),
           "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           # Ray: no token written to ~/.ray, no usage report over the network.
           "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    with pytest.MonkeyPatch.context() as patch:
        for name in ("JUDGING_JUDGE", "JUDGING_RUBRICS_DIR", "OPENAI_BASE_URL", "OPENAI_API_KEY",
                     "HF_TOKEN", "RAY_ADDRESS"):
            patch.delenv(name, raising=False)
        for name, value in env.items():
            patch.setenv(name, value)
        yield env


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    copies = _copy_submissions(tmp_path_factory.mktemp("copies"))
    return [str(SUBMISSIONS), str(LOGBOOKS), str(copies), "--claims", str(REGISTRY),
            "--judge", "offline"]


@pytest.fixture(scope="module")
def full(hermetic_env, sources, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("full") / "run"
    _run(*sources, "--out", str(out))
    return out


@pytest.fixture(scope="module")
def shards(hermetic_env, sources, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("shards")
    dirs = []
    for index in range(1, N + 1):
        out = root / f"{index}-of-{N}"
        _run(*sources, "--out", str(out), "--shard", f"{index}/{N}")
        dirs.append(out)
    return dirs


@pytest.fixture(scope="module")
def merged(shards, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("merged") / "run"
    result = CliRunner().invoke(main, ["merge", *map(str, shards), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "integrity:" in result.output
    return out


# --- what "the same run" means -------------------------------------------------------------


def _normal(text: str, root: Path) -> str:
    """A file's content with the run directory's own path written as <RUN>."""
    return text.replace(str(root.resolve()), "<RUN>")


def _judgment_views(root: Path) -> dict:
    """Every line by its line key, without what differs between runs of the same work: the
    run id, timestamps, latency and code version."""
    views = {}
    for line in read_judgments(RunPaths(root).judgments):
        data = json.loads(_normal(line.model_dump_json(by_alias=True), root))
        data.pop("run_id")
        for name in ("timestamp", "latency_s", "code_version"):
            data["provenance"].pop(name)
        key = line_key(line)
        assert key not in views, f"{key} twice"
        views[key] = data
    return views


def _claims(root: Path) -> dict:
    return {key: json.loads(_normal(claim.model_dump_json(by_alias=True), root))
            for key, claim in RunStore.open(root, create=False).claims().items()}


def _files(root: Path) -> dict[str, bytes]:
    files = {}
    for folder in (RunPaths(root).diffs, RunPaths(root).logbooks):
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                files[str(path.relative_to(root))] = path.read_bytes()
    return files


def _pairs(root: Path) -> set:
    return {(p.kind, str(p.a), str(p.b), p.score) for p in read_integrity(root).pairs}


def _flags(root: Path) -> dict:
    lines = judgments_with_flags(root, RunStore.open(root, create=False).latest())
    return {line_key(j): sorted((f.name, f.detail) for f in j.flags) for j in lines}


def assert_same_run(merged: Path, full: Path) -> None:
    assert _judgment_views(merged) == _judgment_views(full)
    assert _claims(merged) == _claims(full)
    fingerprints = RunStore.open(merged, create=False).fingerprints()
    assert fingerprints == RunStore.open(full, create=False).fingerprints()
    assert sorted(r.model_dump_json() for r in read_not_addressed(merged)) == \
        sorted(r.model_dump_json() for r in read_not_addressed(full))
    assert _files(merged) == _files(full)
    assert _pairs(merged) == _pairs(full)
    assert _flags(merged) == _flags(full)
    # Every file the claims name exists (logbook figures were copied into the merged run).
    for claim in RunStore.open(merged, create=False).claims().values():
        for path in (claim.published_path, claim.reproduced_path, claim.reproduced_data_path):
            assert path is None or path.is_file(), path


# --- shards --------------------------------------------------------------------------------


def test_shard_assignment_is_a_stable_hash_of_the_claim_key() -> None:
    # SHA-256 of "submission::claim", not Python's salted hash(): the same in every process.
    code = ("from judging.rundir.shards import shard_bucket; "
            "print([shard_bucket(f's{i}::c{i}', 4) for i in range(40)])")
    outputs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)},
                              check=True).stdout for seed in ("1", "2")}
    assert len(outputs) == 1
    buckets = json.loads(outputs.pop())
    assert buckets == [shard_bucket(f"s{i}::c{i}", 4) for i in range(40)]
    assert set(buckets) == {0, 1, 2, 3}
    assert Shard.parse("2/4") == Shard(index=2, count=4) and str(Shard.parse(" 2 / 4")) == "2/4"
    for bad in ("0/4", "5/4", "2", "a/b", "1/0"):
        with pytest.raises(ValueError):
            Shard.parse(bad)


def test_the_shards_partition_the_claims_and_record_the_shard(full: Path,
                                                               shards: list[Path]) -> None:
    every = set(RunStore.open(full, create=False).claims())
    seen: list[str] = []
    for index, root in enumerate(shards, start=1):
        info = RunInfo.from_file(RunPaths(root).run_json.read_bytes())
        assert info.shard == Shard(index=index, count=N)
        claims = set(RunStore.open(root, create=False).claims())
        assert claims and all(Shard(index=index, count=N).holds(key) for key in claims)
        assert all(Shard(index=index, count=N).holds(j.claim)
                   for j in read_judgments(RunPaths(root).judgments))
        seen += claims
    assert sorted(seen) == sorted(every)  # each claim in exactly one shard
    # The copies are in different shards, so no shard finds them by itself.
    a, b = _copiers()
    for root in shards:
        assert not any({str(p.a), str(p.b)} == {f"{a}::{CLAIM}", f"{b}::{CLAIM}"}
                       for p in read_integrity(root).pairs)


def test_the_merged_shards_equal_one_unsharded_run(full: Path, merged: Path) -> None:
    assert_same_run(merged, full)
    a, b = _copiers()
    found = {(kind, *sorted((x, y))) for kind, x, y, _ in _pairs(merged)}
    assert ("duplicate_figure", f"{a}::{CLAIM}", f"{b}::{CLAIM}") in found
    assert ("copied_justification", f"{a}::{CLAIM}", f"{b}::{CLAIM}") in found
    info = RunInfo.from_file(RunPaths(merged).run_json.read_bytes())
    assert info.shard is None
    assert sorted(inv.shard for inv in info.invocations) == [f"{i}/{N}" for i in range(1, N + 1)]
    assert len({inv.run_id for inv in info.invocations}) == N
    assert [i.shard for i in info.merges[0].inputs] == [f"{i}/{N}" for i in range(1, N + 1)]
    assert read_conflicts(merged).conflicts == []
    # Consensus is recomputed over the union: the same registry claims, verdicts and supports
    # as the unsharded run's (the copies between shards count once there too).
    def consensus(root: Path) -> list[tuple]:
        report = read_consensus(root)
        assert report is not None
        return [(c.claim_id, c.verdict, c.support, c.independent) for c in report.claims]
    assert consensus(merged) == consensus(full)


def test_a_second_merge_adds_nothing_and_a_rerun_of_a_shard_resumes(
        sources: list[str], shards: list[Path], merged: Path, full: Path) -> None:
    before = RunPaths(merged).judgments.read_bytes()
    result = CliRunner().invoke(main, ["merge", *map(str, shards), "--out", str(merged)])
    assert result.exit_code == 0, result.output
    assert "0 judgment line(s) added" in result.output
    assert RunPaths(merged).judgments.read_bytes() == before
    output = _run(*sources, "--out", str(shards[0]), "--shard", f"1/{N}")
    assert " 0 new judgment line(s)" in output
    # A shard's directory holds that shard only.
    result = CliRunner().invoke(main, ["run", *sources, "--out", str(shards[0]), "--shard",
                                       f"2/{N}"])
    assert result.exit_code == 1 and "judges shard 1/4" in result.output
    assert_same_run(merged, full)


# --- which line counts ---------------------------------------------------------------------


def _copy_run(source: Path, target: Path, run_id: str) -> Path:
    shutil.copytree(source, target)
    info = RunInfo.from_file(RunPaths(target).run_json.read_bytes())
    info.run_id = run_id
    RunPaths(target).run_json.write_text(info.model_dump_json(by_alias=True), encoding="utf-8")
    return target


def _write_lines(root: Path, lines) -> None:
    RunPaths(root).judgments.write_text(
        "".join(line.model_dump_json(by_alias=True) + "\n" for line in lines), encoding="utf-8")


def test_the_latest_final_line_counts_across_inputs(shards: list[Path], tmp_path: Path) -> None:
    first = _copy_run(shards[0], tmp_path / "a", "run-a")
    lines = read_judgments(RunPaths(first).judgments)
    target = next(j for j in lines if j.rubric is not None and j.final)
    later = target.provenance.timestamp.replace(year=target.provenance.timestamp.year + 1)
    pending = target.model_copy(update={
        "final": False, "status": LineStatus.unscored, "reason": "budget: not judged",
        "answers": [a.model_copy(update={"status": AnswerStatus.unscored, "value": None,
                                         "passed": None}) for a in target.answers],
        "provenance": target.provenance.model_copy(update={"timestamp": later})})
    # Input a: the key recurs, a non-final line then the final one. Input b: only a newer
    # non-final line of the same key (a budget stop in an overlapping run).
    _write_lines(first, [pending.model_copy(update={"provenance": target.provenance}), *lines])
    second = _copy_run(shards[0], tmp_path / "b", "run-b")
    _write_lines(second, [pending])
    out = tmp_path / "merged"
    result = CliRunner().invoke(main, ["merge", str(first), str(second), "--out", str(out)])
    assert result.exit_code == 0, result.output
    latest = {line_key(j)[:-1]: j for j in RunStore.open(out, create=False).latest()}
    counted = latest[line_key(target)[:-1]]
    assert counted.final and counted.answers == target.answers
    assert read_conflicts(out).conflicts == []
    # Append-only: the non-final lines are in the union too, before the final one.
    assert len(read_judgments(RunPaths(out).judgments)) == len(lines) + 2


def test_two_final_lines_that_disagree_are_a_reported_conflict(shards: list[Path],
                                                               tmp_path: Path) -> None:
    rival = _copy_run(shards[1], tmp_path / "rival", "run-rival")
    lines = read_judgments(RunPaths(rival).judgments)
    index, target = next((i, j) for i, j in enumerate(lines) if j.final and any(
        a.status is AnswerStatus.scored and isinstance(a.value, bool) for a in j.answers))
    flipped = [a.model_copy(update={"value": not a.value, "passed": not a.value})
               if a.status is AnswerStatus.scored and isinstance(a.value, bool) else a
               for a in target.answers]
    lines[index] = target.model_copy(update={"answers": flipped})
    _write_lines(rival, lines)
    out = tmp_path / "merged"
    args = ["merge", *map(str, shards), str(rival), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "1 conflict(s)" in result.output and str(target.claim) in result.output
    conflicts = read_conflicts(out).conflicts
    assert len(conflicts) == 1
    conflict = conflicts[0]
    assert str(conflict.claim) == str(target.claim) and len(conflict.others) == 1
    answers = {tuple(a.value for a in s.line.answers) for s in (conflict.kept, *conflict.others)}
    assert answers == {tuple(a.value for a in target.answers), tuple(a.value for a in flipped)}
    assert {conflict.kept.source, conflict.others[0].source} == {str(shards[1]), str(rival)}
    # The line shown is the kept one, and the claim carries the flag everywhere it is read.
    store = RunStore.open(out, create=False)
    shown = next(j for j in store.latest() if line_key(j)[:-1] == line_key(target)[:-1])
    assert shown.answers == conflict.kept.line.answers
    flagged = judgments_with_flags(out, [shown])[0]
    assert MERGE_CONFLICT in {f.name for f in flagged.flags}
    assert MERGE_CONFLICT in review_priority([flagged]).reasons
    # Merging again meets the same conflict: still exit 1, still one record.
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 1 and len(read_conflicts(out).conflicts) == 1


def test_merge_refuses_itself_and_runs_of_other_rubrics(hermetic_env, shards: list[Path],
                                                        tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["merge", str(shards[0]), "--out", str(shards[0])])
    assert result.exit_code == 1 and "cannot be merged into itself" in result.output
    result = CliRunner().invoke(main, ["merge", str(shards[0]), str(shards[0]), "--out",
                                       str(tmp_path / "twice")])
    assert result.exit_code == 1 and "given twice" in result.output
    other = SubmissionBuilder(tmp_path / "sub", "other/sub", "paper-2")
    other.number_claim("paper-2/c1")
    other.write()
    verdict_only = tmp_path / "verdict-only"
    _run(str(other.root), "--rubric", "verdict-justification@1.0.0", "--out", str(verdict_only),
         "--judge", "offline")
    out = tmp_path / "mixed"
    result = CliRunner().invoke(main, ["merge", str(shards[0]), str(verdict_only), "--out",
                                       str(out)])
    assert result.exit_code == 1 and "different rubric sets" in result.output
    assert not out.exists()  # a refused merge writes nothing


# --- the same shards on a Ray cluster --------------------------------------------------------


def _sigint_not_ignored() -> None:
    # Tests started as a background job of a shell ignore SIGINT and children inherit that: the
    # cluster would then stop only on the SIGTERM below, 30 s later.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def ray_cluster(hermetic_env) -> Iterator[str]:
    """A real Ray head on 127.0.0.1 (2 CPUs, no dashboard), in its own process group, stopped
    by that group's id. Its workers import this checkout (PYTHONPATH)."""
    pytest.importorskip("ray")
    ray_cli = Path(sys.executable).with_name("ray")
    port = _free_port()
    # Ray's socket paths must stay short: a temp dir of its own directly under the system's.
    temp = tempfile.mkdtemp(prefix="jray-")
    env = {**os.environ, **hermetic_env,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [str(ray_cli), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
         f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", f"--temp-dir={temp}", "--object-store-memory=100000000"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, preexec_fn=_sigint_not_ignored)
    started = threading.Event()
    log: list[str] = []

    def read() -> None:
        for line in process.stdout:  # type: ignore[union-attr]
            log.append(line)
            if "Ray runtime started" in line:
                started.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while not started.is_set():
            assert process.poll() is None, "".join(log)
            assert time.monotonic() < deadline, "".join(log)
            started.wait(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        # `ray start --block` stops its processes on SIGINT (in about 2 s; SIGTERM takes 30).
        for sig, wait in ((signal.SIGINT, 30), (signal.SIGTERM, 15), (signal.SIGKILL, 10)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        shutil.rmtree(temp, ignore_errors=True)


def test_the_same_shards_on_a_ray_cluster_merge_to_the_same_run(
        ray_cluster: str, sources: list[str], full: Path, tmp_path: Path) -> None:
    out = tmp_path / "ray-run"
    output = _run(*sources, "--out", str(out), "--engine", "ray", "--address", ray_cluster,
                  "--shards", str(N))
    for index in range(1, N + 1):
        assert f"shard {index}/{N} on " in output
        assert RunInfo.from_file((out / "shards" / f"{index}-of-{N}" / "run.json").read_bytes()
                                 ).shard == Shard(index=index, count=N)
    assert "merged 4 run directories" in output
    assert_same_run(out, full)
    info = RunInfo.from_file(RunPaths(out).run_json.read_bytes())
    assert sorted(inv.shard for inv in info.invocations) == [f"{i}/{N}" for i in range(1, N + 1)]


#: A run of the logbooks as two Ray shards whose directories come back to the driver.
RETURNED = ["--judge", "offline", "--claims", str(REGISTRY), "--shards", "2",
            "--shard-output", "driver"]


@pytest.fixture(scope="module")
def returned(ray_cluster: str, hermetic_env, tmp_path_factory: pytest.TempPathFactory
             ) -> dict:
    """The logbooks judged in one process (measured afresh) and as two Ray shards sent back to
    the driver, once for the module (issue 43: a Ray run less): the test of the refused archive
    starts from this run as its own first run did, and puts it back as it found it."""
    base = tmp_path_factory.mktemp("returned")
    alone = base / "alone"
    _run(str(LOGBOOKS), "--judge", "offline", "--claims", str(REGISTRY), "--out", str(alone),
         fresh=True)
    out = base / "returned"
    output = _run(str(LOGBOOKS), *RETURNED, "--out", str(out), "--engine", "ray", "--address",
                  ray_cluster)
    return {"alone": alone, "out": out, "output": output}


def test_ray_shards_without_a_shared_filesystem_come_back_to_the_driver(
        ray_cluster: str, returned: dict) -> None:
    # The logbook writes its figures under the run directory: on the node, a temporary one; the
    # driver unpacks each shard's archive and the merge rebases the claims' paths onto OUT.
    alone, out = returned["alone"], returned["out"]
    assert "merged 2 run directories" in returned["output"]
    assert_same_run(out, alone)
    roots = RunInfo.from_file((out / "shards" / "1-of-2" / "run.json").read_bytes()).roots
    assert any("judging-shard-1-of-2-" in root for root in roots)
    # A rerun sends each shard's directory back to its task: everything resumes.
    again = _run(str(LOGBOOKS), *RETURNED, "--out", str(out), "--engine", "ray", "--address",
                 ray_cluster)
    assert again.count(" 0 new line(s)") == 2 and "0 judgment line(s) added" in again
    assert_same_run(out, alone)


def test_a_refused_shard_archive_is_that_shards_error_and_the_rest_are_merged(
        ray_cluster: str, returned: dict) -> None:
    """A shard's archive the driver refuses (here a link planted in its directory, which the
    task sends back with the shard) raised out of the engine and stopped the whole run, where a
    failed task is that shard's error and the other shards are still merged."""
    base = [*RETURNED, "--engine", "ray", "--address", ray_cluster]
    out = returned["out"]
    first = out / "shards" / "1-of-2"
    (first / "zz-planted").symlink_to("/etc/hostname")  # the archive's last member

    def snapshot() -> dict[str, bytes]:
        return {str(p.relative_to(first)): p.read_bytes() for p in sorted(first.rglob("*"))
                if p.is_file() and not p.is_symlink()}

    try:
        before = snapshot()
        result = CliRunner().invoke(main, ["run", str(LOGBOOKS), *base, "--out", str(out)])
        assert result.exit_code == 1, result.output
        assert isinstance(result.exception, SystemExit), result.exception
        assert "shard 1/2 failed" in result.output and "refused" in result.output, result.output
        assert "shard 2/2 on " in result.output and "merged 2 run directories" in result.output
        # the refused shard's directory is as it was (nothing of the refused archive in it)
        assert snapshot() == before and (first / "zz-planted").is_symlink()
    finally:
        (first / "zz-planted").unlink(missing_ok=True)  # the module's run as the fixture made it
    assert_same_run(out, returned["alone"])
