"""`judging rerun` on this machine: environments (real uv from the registry, built once per lock
hash, reused; Python as pinned; a lock that does not resolve; a Dockerfile), the number (every
way a claim declares it), the statuses, selection, the estimate, the budget, resuming, and the
verdict rubric's re-run criterion in a later `judging run`."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path

import pytest

from judging.models import AnswerStatus, RerunStatus
from judging.rerun.environment import NETWORK_SETTINGS, uv_binary
from judging.rundir import RunPaths, RunStore, read_reruns
from tests.rerun.conftest import judged_run, judging, need_sandbox, script_claim

PRINT_JSON = "import json, iniconfig\nprint('training...')\nprint(json.dumps({'top1': 93.8}))\n"


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    need_sandbox()


def _records(run: Path) -> dict[str, object]:
    return {key.split("::")[1]: record for key, record in read_reruns(run).items()}


def test_three_claims_reproduce_differ_and_fail_with_their_numbers(
        tmp_path: Path, make_submission, env_cache: Path) -> None:
    builder = make_submission()
    script_claim(builder, "paper-1/ok", "eval.py", PRINT_JSON)
    script_claim(builder, "paper-1/diff", "loss.py",
                 "print('epoch 1 loss=0.5')\nprint('final loss=0.35, acc=1')\n",
                 reproduced=0.21, reported=0.2, tolerance={"absolute": 0.02},
                 rerun={"args": ["--seed", "1"], "read": {"source": "line", "key": "loss"}})
    script_claim(builder, "paper-1/fail", "broken.py",
                 "print('loading')\nraise SystemExit('dataset not found: /data/cifar')\n")
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    output = judging("rerun", str(run), "--env-cache", str(env_cache))
    assert output.startswith("estimate: 3 claim(s) selected")
    records = _records(run)
    ok, diff, fail = records["paper-1/ok"], records["paper-1/diff"], records["paper-1/fail"]
    assert ok.status is RerunStatus.reproduced and ok.values[0].rerun == 93.8
    assert ok.values[0].matches_participant and ok.values[0].matches_paper
    assert ok.values[0].how == "the last line of output, as JSON"
    assert diff.status is RerunStatus.differs
    assert (diff.values[0].rerun, diff.values[0].reproduced) == (0.35, 0.21)
    assert diff.values[0].quote == "final loss=0.35, acc=1"
    assert "re-run 0.35 vs participant 0.21 (differs)" in diff.reason
    assert fail.status is RerunStatus.failed and fail.exit_code == 1
    assert fail.stderr_tail == "dataset not found: /data/cifar"
    assert "exit code 1: dataset not found" in fail.reason
    for record in records.values():
        assert record.environment.kind == "requirements.txt" and record.attempted
        logs = run / record.logs
        assert (logs / "stdout.txt").is_file() and (logs / "stderr.txt").is_file()
    assert (run / ok.logs / "stdout.txt").read_text().startswith("training...")
    # reruns resume: nothing runs again
    again = judging("rerun", str(run), "--env-cache", str(env_cache))
    assert "3 already re-run with the same inputs, 0 to run" in again
    assert len(RunPaths(run).reruns.read_text().splitlines()) == 3


def test_claims_sharing_a_lock_file_build_it_once_and_a_cached_one_is_reused(
        tmp_path: Path, make_submission) -> None:
    cache = tmp_path / "cache"
    builders = []
    for n in range(3):
        builder = make_submission(f"s{n}", f"team-{n}/sub")
        script_claim(builder, "paper-1/c1", "eval.py", PRINT_JSON)
        builder.write()
        builders.append(builder)
    run = judged_run(builders[0].root.parent, tmp_path / "run")
    first = judging("rerun", str(run), "--env-cache", str(cache))
    assert "1 environment(s), 1 to build" in first
    records = list(read_reruns(run).values())
    assert [r.environment.built for r in records].count(True) == 1
    assert len({r.environment.key for r in records}) == 1
    assert (run / records[0].logs / "build.txt").read_text().count("iniconfig==2.0.0") >= 1 \
        or any((run / r.logs / "build.txt").is_file() for r in records)
    # a new run of the same submissions reuses the cached environment: no install
    other = judged_run(builders[0].root.parent, tmp_path / "run2")
    second = judging("rerun", str(other), "--env-cache", str(cache))
    assert "1 environment(s), 0 to build" in second
    assert not any(r.environment.built for r in read_reruns(other).values())
    assert not any((other / r.logs / "build.txt").exists() for r in read_reruns(other).values())


def test_a_lock_that_does_not_resolve_is_a_per_claim_result(tmp_path: Path, make_submission,
                                                           env_cache: Path) -> None:
    broken = make_submission("broken", "broken/sub", requirements="iniconfig==999.0.0\n")
    script_claim(broken, "paper-1/c1", "eval.py", PRINT_JSON)
    broken.write()
    fine = make_submission("fine", "fine/sub")
    script_claim(fine, "paper-1/c1", "eval.py", PRINT_JSON)
    fine.write()
    run = judged_run(broken.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    records = read_reruns(run)
    failed = records["broken/sub::paper-1/c1"]
    assert failed.status is RerunStatus.not_run and failed.attempted
    assert failed.reason.startswith("environment failed")
    assert "iniconfig" in (failed.stderr_tail or "") and "999" in failed.stderr_tail
    assert records["fine/sub::paper-1/c1"].status is RerunStatus.reproduced


def test_uv_lock_with_a_pinned_python_and_a_results_file(tmp_path: Path, make_submission,
                                                         env_cache: Path) -> None:
    builder = make_submission(requirements=None)
    builder.file("pyproject.toml", '[project]\nname = "repro"\nversion = "0.1.0"\n'
                                   'requires-python = ">=3.11"\ndependencies = '
                                   '["iniconfig==2.0.0"]\n')
    builder.file(".python-version", "3.12\n")
    subprocess.run([uv_binary(), "lock", "--quiet", "--python", _python_312()],
                   cwd=builder.root, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                        "UV_PYTHON_DOWNLOADS": "never",
                        **{k: os.environ[k] for k in NETWORK_SETTINGS if k in os.environ}})
    script_claim(builder, "paper-1/c1", "eval.py",
                 "import json, os, sys, iniconfig\nos.makedirs('out', exist_ok=True)\n"
                 "json.dump({'metrics': {'top1': 93.8}, 'python': sys.version}, "
                 "open('out/results.json', 'w'))\n",
                 rerun={"read": {"source": "file", "file": "out/results.json",
                                 "key": "metrics.top1"}})
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.reproduced, record.reason
    assert record.environment.kind == "uv.lock" and record.environment.python.startswith("3.12")
    assert record.values[0].how == 'the results file "out/results.json", key "metrics.top1"'


def _python_312() -> str:
    from judging.rerun.environment import find_interpreter
    return find_interpreter("3.12").path


def test_what_cannot_run_is_not_run_with_why(tmp_path: Path, make_submission,
                                             env_cache: Path) -> None:
    docker = make_submission("docker", "docker/sub", requirements=None)
    docker.file("Dockerfile", "FROM python:3.12\n")
    script_claim(docker, "paper-1/c1", "eval.py", PRINT_JSON)
    docker.write()
    bare = make_submission("bare", "bare/sub", requirements=None)
    script_claim(bare, "paper-1/c1", "eval.py", PRINT_JSON)
    bare.claims.append({**copy.deepcopy(bare.claims[0]), "claim_id": "paper-1/c2",
                        "evidence": {"logs": ["logs/run.txt"]}})
    bare.write()
    run = judged_run(docker.root.parent, tmp_path / "run")
    output = judging("rerun", str(run), "--env-cache", str(env_cache))
    records = read_reruns(run)
    assert records["docker/sub::paper-1/c1"].reason.startswith("needs a container engine")
    assert records["bare/sub::paper-1/c1"].reason.startswith("no environment")
    assert records["bare/sub::paper-1/c2"].reason.startswith("no script")
    assert all(r.status is RerunStatus.not_run and not r.attempted for r in records.values())
    assert "3 not_run" in output


def test_the_number_as_each_claim_declares_it(tmp_path: Path, make_submission,
                                              env_cache: Path) -> None:
    builder = make_submission()
    script_claim(builder, "paper-1/json-key", "a.py",
                 "print('{\"top1\": 93.8, \"loss\": 0.3}')\n",
                 rerun={"read": {"source": "json", "key": "top1"}})
    script_claim(builder, "paper-1/no-key", "b.py", "print('{\"top1\": 93.8, \"loss\": 0.3}')\n")
    script_claim(builder, "paper-1/text", "c.py", "print('final top1 93.80')\n")
    script_claim(builder, "paper-1/nan", "d.py", "print('top1=nan')\n",
                 rerun={"read": {"source": "line", "key": "top1"}})
    builder.claims.append({
        "claim_id": "paper-1/table", "kind": "table", "statement": "BLEU 27.4 and chrF 57.9",
        "values": [{"name": "BLEU", "reported": 27.4, "reproduced": 27.1},
                   {"name": "chrF", "reported": 57.9, "reproduced": 57.2}],
        "tolerance": {"relative": 0.02}, "verdict": "verified", "justification": "logs",
        "evidence": {"script": builder.file("t.py", "print('bleu=27.1 chrf=50.0')\n"),
                     "logs": ["logs/run.txt"],
                     "rerun": {"read": {"source": "line",
                                        "keys": {"BLEU": "bleu", "chrF": "chrf"}}}}})
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    records = _records(run)
    assert records["paper-1/json-key"].status is RerunStatus.reproduced
    no_key = records["paper-1/no-key"]
    assert no_key.status is RerunStatus.failed
    assert "2 numbers and no key says which one" in no_key.reason
    assert records["paper-1/text"].values[0].problem == "the last line of output is not JSON"
    assert records["paper-1/nan"].status is RerunStatus.failed
    table = records["paper-1/table"]
    assert table.status is RerunStatus.differs
    assert [(v.name, v.rerun, v.matches_participant) for v in table.values] == [
        ("BLEU", 27.1, True), ("chrF", 50.0, False)]


def test_the_registry_pattern_is_authoritative(tmp_path: Path, make_submission,
                                               env_cache: Path) -> None:
    builder = make_submission()
    script_claim(builder, "paper-1/c1", "eval.py",
                 "print('step 10 top1 80.0')\nprint('final top1 93.80')\nprint('{\"top1\": 1}')\n")
    builder.write()
    registry = tmp_path / "registry.yaml"
    registry.write_text(json.dumps({"claims": [{
        "claim_id": "paper-1/c1", "paper_id": "paper-1", "reported_value": 94.1,
        "tolerance": {"absolute": 0.5}, "rerun_pattern": r"final top1 ([\d.]+)"}]}))
    run = tmp_path / "run"
    judging("run", str(builder.root.parent), "--claims", str(registry), "--out", str(run),
            "--judge", "offline")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.reproduced
    assert record.values[0].how.startswith("the registry's pattern")
    assert record.values[0].quote == "final top1 93.80"


def test_select_estimate_and_a_budget_that_stops_cleanly(tmp_path: Path, make_submission,
                                                         env_cache: Path) -> None:
    builder = make_submission()
    for n in range(4):
        script_claim(builder, f"paper-1/c{n}", f"s{n}.py", PRINT_JSON,
                     verdict="falsified" if n == 0 else "verified",
                     reproduced=91.2 if n == 0 else 93.8)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    estimate = judging("rerun", str(run), "--env-cache", str(env_cache), "--select", "sample:2",
                       "--estimate")
    assert "2 claim(s) selected" in estimate and not RunPaths(run).reruns.exists()
    judging("rerun", str(run), "--env-cache", str(env_cache), "--select", "falsified",
            "--timeout", "30")
    assert list(_records(run)) == ["paper-1/c0"]
    assert _records(run)["paper-1/c0"].status is RerunStatus.differs
    # a budget smaller than one claim's limit: nothing starts, every claim is recorded
    stopped = judging("rerun", str(run), "--env-cache", str(env_cache), "--timeout", "30",
                      "--budget", "20s")
    assert "over budget" in stopped
    left = _records(run)
    assert all(left[f"paper-1/c{n}"].reason.startswith("over budget") for n in (1, 2, 3))
    assert not any(left[f"paper-1/c{n}"].final for n in (1, 2, 3))
    # with room, a rerun runs what was left (and not c0 again)
    done = judging("rerun", str(run), "--env-cache", str(env_cache), "--timeout", "30",
                   "--budget", "2h")
    assert "1 already re-run with the same inputs, 3 to run" in done
    assert {r.status for r in _records(run).values()} == {RerunStatus.reproduced,
                                                           RerunStatus.differs}
    with pytest.raises(AssertionError, match="choose one of"):
        judging("rerun", str(run), "--select", "best")


def test_the_verdict_rubric_reads_the_rerun_and_rejudges_only_what_changed(
        tmp_path: Path, make_submission, env_cache: Path) -> None:
    builder = make_submission()
    script_claim(builder, "paper-1/ok", "eval.py", PRINT_JSON)
    script_claim(builder, "paper-1/fabricated", "fake.py", "print('{\"top1\": 88.0}')\n")
    script_claim(builder, "paper-1/crash", "crash.py", "raise SystemExit(3)\n")
    script_claim(builder, "paper-1/untouched", "u.py", PRINT_JSON)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")

    def rerun_answers() -> dict[str, object]:
        store = RunStore.open(run, create=False)
        try:
            return {line.claim.claim_id: line for line in store.iter_latest()
                    if line.rubric is not None and line.rubric.id == "verdict-justification"}
        finally:
            store.close()

    before = rerun_answers()
    assert {str(line.rubric) for line in before.values()} == {"verdict-justification@1.2.0"}
    for line in before.values():  # not re-run: not applicable, no weight
        assert line.answer("rerun_reproduces").status is AnswerStatus.not_applicable
    judging("rerun", str(run), "--env-cache", str(env_cache), "--select", "all")
    # one claim's result is taken back out, so that it stays "not re-run"
    lines = RunPaths(run).reruns.read_text().splitlines()
    RunPaths(run).reruns.write_text("\n".join(
        line for line in lines if "untouched" not in line) + "\n")
    output = judging("run", str(builder.root.parent), "--out", str(run), "--judge", "offline")
    assert "3 new judgment line(s), 1 already done" in output
    after = rerun_answers()
    assert after["paper-1/ok"].answer("rerun_reproduces").value is True
    fabricated = after["paper-1/fabricated"]
    assert fabricated.answer("rerun_reproduces").value is False
    assert fabricated.aggregate.outcome.value == "fail"
    assert "rerun_reproduces" in fabricated.aggregate.failed_gates
    crash = after["paper-1/crash"].answer("rerun_reproduces")
    assert crash.status is AnswerStatus.unscored and "needs a human" in crash.reason
    assert after["paper-1/untouched"].input_hash == before["paper-1/untouched"].input_hash
    assert after["paper-1/ok"].signals["rerun.agrees"].value is True


def test_the_report_review_records_and_dashboard_show_the_rerun_beside_the_number(
        tmp_path: Path, make_submission, env_cache: Path) -> None:
    from judging.app.data import load_run
    from judging.app.ui import claim_html
    from judging.review.dataset import claim_markdown

    builder = make_submission()
    script_claim(builder, "paper-1/c1", "fake.py", "print('{\"top1\": 88.0}')\n")
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    judging("run", str(builder.root.parent), "--out", str(run), "--judge", "offline")
    said = "re-run differs: re-run 88 vs participant 93.8 (differs) and paper 94.1 (differs)"
    judging("report", str(run))
    assert f"<strong>Re-run.</strong> {said}" in (run / "report.html").read_text()
    store = RunStore.open(run, create=False)
    try:
        line = next(j for j in store.iter_latest() if j.rubric and j.rubric.id ==
                    "verdict-justification")
        claim = store.claim(str(line.claim))
    finally:
        store.close()
    assert f"**Re-run** (organizers, sandboxed): {said}" in claim_markdown(claim, line)
    record = next(iter(load_run(run).claims.values()))
    assert record.rerun == said and said in claim_html(record)


def test_top_and_sample_select_reproducibly(tmp_path: Path, make_submission,
                                            env_cache: Path) -> None:
    import csv

    for n in range(4):
        builder = make_submission(f"s{n}", f"team-{n}/sub", requirements=None)
        script_claim(builder, "paper-1/c1", "eval.py", PRINT_JSON)  # no environment: quick
        builder.write()
    run = judged_run(tmp_path / "subs", tmp_path / "run")
    judging("resolve", str(run))
    judging("leaderboard", str(run))
    with (run / "leaderboard_submissions.csv").open() as handle:
        first = next(csv.DictReader(handle))["submission"]
    judging("rerun", str(run), "--env-cache", str(env_cache), "--select", "top:1")
    assert [key.split("::")[0] for key in read_reruns(run)] == [first]

    def sampled(seed: int, out: str) -> set[str]:
        other = judged_run(tmp_path / "subs", tmp_path / out)
        judging("rerun", str(other), "--env-cache", str(env_cache), "--select", "sample:2",
                "--seed", str(seed))
        return set(read_reruns(other))

    assert len(sampled(3, "a")) == 2 and sampled(3, "a2") == sampled(3, "a")
