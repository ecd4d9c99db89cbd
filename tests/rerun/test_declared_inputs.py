"""What a submission declares never chooses a host program, a host file or a limit (issue 38,
rows 1, 2, 7, 8, 9): hostile submissions built here, re-run with real bubblewrap and real uv.

- a Python request is a version specifier only: a `.python-version` or a `requires-python` that
  names an executable shipped in the submission is "not run", and nothing runs on the host, not
  even for `--estimate` (a canary file the executable would write stays absent);
- `.python-version` read on the host is confined: a link to a host file, to /proc/self/environ,
  or a FIFO is refused in our words, and the file's text is echoed nowhere;
- output the parser cannot read (50,000 `[`, a results file nested too deep, numbers too large,
  NUL bytes) is that claim's `failed` record; the next claim runs; a rerun resumes past it;
- a results file the submission ships is removed before the script runs;
- `--timeout` caps a claim's `timeout_s`; a claim alone over `--budget` is skipped and the rest run.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from judging.intake import MAX_ENV_FILE_BYTES
from judging.models import RerunStatus
from judging.rundir import RunPaths, read_reruns
from tests.merge.test_shards import hermetic_env, ray_cluster  # noqa: F401 (fixtures)
from tests.rerun.conftest import judged_run, judging, need_sandbox, script_claim

PRINT_JSON = "import json, iniconfig\nprint(json.dumps({'top1': 93.8}))\n"
#: What the hostile "interpreter" writes when anything runs it: its whole environment.
EVIL = "#!/bin/sh\nenv > {canary}\necho 3.12.1\n"
HOST_MARKER = "HOST-FILE-MARKER-5521-do-not-echo"


@pytest.fixture(autouse=True)
def _sandbox() -> None:
    need_sandbox()


def _records(run: Path) -> dict[str, object]:
    return {key: record for key, record in read_reruns(run).items()}


def _everything(run: Path) -> bytes:
    """Every byte the run directory holds (records, judgments, report, logs)."""
    return b"\n".join(p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file())


def test_a_python_request_naming_a_program_runs_nothing_on_the_host(
        tmp_path: Path, make_submission, env_cache: Path, monkeypatch) -> None:
    canary = tmp_path / "canary.txt"
    pinned = make_submission("pinned", "evil/python-version")
    evil = pinned.root / pinned.file("bin/python", EVIL.format(canary=canary))
    evil.chmod(0o755)
    pinned.file(".python-version", f"{evil}\n")
    script_claim(pinned, "paper-1/c1", "eval.py", PRINT_JSON)
    pinned.write()
    required = make_submission("required", "evil/requires-python", requirements=None)
    other = required.root / required.file("tools/py", EVIL.format(canary=canary))
    other.chmod(0o755)
    required.file("pyproject.toml", f'[project]\nname = "x"\nversion = "0"\n'
                                    f'requires-python = "{other}"\n'
                                    f'dependencies = ["iniconfig==2.0.0"]\n')
    script_claim(required, "paper-1/c1", "eval.py", PRINT_JSON)
    required.write()
    named = make_submission("named", "evil/relative")
    named.file(".python-version", "./bin/python\n")
    named.file("bin/python", EVIL.format(canary=canary))
    (named.root / "bin" / "python").chmod(0o755)
    script_claim(named, "paper-1/c1", "eval.py", PRINT_JSON)
    named.write()
    honest = make_submission("honest", "honest/sub")
    honest.file(".python-version", "cpython-3.12\n")
    script_claim(honest, "paper-1/c1", "eval.py", PRINT_JSON)
    honest.write()
    run = judged_run(pinned.root.parent, tmp_path / "run")
    monkeypatch.setenv("HF_TOKEN", "hf_canary")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary")
    judging("rerun", str(run), "--env-cache", str(env_cache), "--estimate")
    assert not canary.exists(), "the estimate ran the submission's program on the host"
    judging("rerun", str(run), "--env-cache", str(env_cache))
    assert not canary.exists(), "the rerun ran the submission's program on the host"
    records = _records(run)
    for key in ("evil/python-version", "evil/requires-python", "evil/relative"):
        record = records[f"{key}::paper-1/c1"]
        assert record.status is RerunStatus.not_run and not record.attempted, record.reason
        assert "is not a version or a version specifier" in record.reason
        assert "bin" not in record.reason and "tools" not in record.reason
    assert "requires-python in pyproject.toml" in records["evil/requires-python::paper-1/c1"].reason
    good = records["honest/sub::paper-1/c1"]
    assert good.status is RerunStatus.reproduced and good.environment.python.startswith("3.12")
    judging("run", str(pinned.root.parent), "--out", str(run), "--judge", "offline")
    everything = _everything(run)
    assert b"canary" not in everything


def test_a_python_version_file_that_points_elsewhere_is_refused_and_never_echoed(
        tmp_path: Path, make_submission, env_cache: Path, monkeypatch) -> None:
    host_file = tmp_path / "host-file.txt"
    host_file.write_text(f"{HOST_MARKER}\nsecond line\n")
    cases = {"to-host": host_file, "to-environ": Path("/proc/self/environ"), "fifo": None,
             "inside": None}
    for name, target in cases.items():
        builder = make_submission(name, f"evil/{name}")
        if name == "fifo":
            os.mkfifo(builder.root / ".python-version")
        elif name == "inside":  # a link that stays inside: still a link, refused
            builder.file("versions/pinned.txt", "3.12\n")
            os.symlink("versions/pinned.txt", builder.root / ".python-version")
        else:
            os.symlink(target, builder.root / ".python-version")
        script_claim(builder, "paper-1/c1", "eval.py", PRINT_JSON)
        builder.write()
    huge = make_submission("huge", "evil/huge-requirements", requirements=None)
    with (huge.root / "requirements.txt").open("wb") as handle:  # sparse: read whole to hash
        handle.truncate(MAX_ENV_FILE_BYTES + 1)
    script_claim(huge, "paper-1/c1", "eval.py", PRINT_JSON)
    huge.write()
    honest = make_submission("honest", "honest/sub")
    script_claim(honest, "paper-1/c1", "eval.py", PRINT_JSON)
    honest.write()
    run = judged_run(honest.root.parent, tmp_path / "run")
    monkeypatch.setenv("HF_TOKEN", "hf_canary")
    judging("rerun", str(run), "--env-cache", str(env_cache), "--estimate")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    records = _records(run)
    expected = {"to-host": "a symbolic link", "to-environ": "a symbolic link",
                "fifo": "a FIFO (named pipe)", "inside": "a symbolic link"}
    for name, kind in expected.items():
        record = records[f"evil/{name}::paper-1/c1"]
        assert record.status is RerunStatus.not_run and not record.attempted
        assert record.reason == f".python-version is refused ({kind}, not a regular file): " \
                                f"not run"
    assert records["evil/huge-requirements::paper-1/c1"].reason == (
        f"the environment file requirements.txt is refused ({MAX_ENV_FILE_BYTES + 1:,} bytes, "
        f"over the limit of {MAX_ENV_FILE_BYTES:,}): not run")
    assert records["honest/sub::paper-1/c1"].status is RerunStatus.reproduced
    judging("run", str(honest.root.parent), "--out", str(run), "--judge", "offline")
    everything = _everything(run)
    assert HOST_MARKER.encode() not in everything and b"hf_canary" not in everything


def test_output_the_parser_cannot_read_fails_that_claim_and_the_next_runs(
        tmp_path: Path, make_submission, env_cache: Path) -> None:
    builder = make_submission()
    script_claim(builder, "paper-1/c1-first", "first.py", PRINT_JSON)
    script_claim(builder, "paper-1/c2-brackets", "brackets.py", "print('[' * 50000)\n")
    script_claim(builder, "paper-1/c3-last", "last.py", PRINT_JSON)
    hostile_files = {
        "deep": "'[' * 50000",
        "huge-float": "'{\"top1\": 1e999999}'",
        "long-int": "'{\"top1\": ' + '7' * 100000 + '}'",
        "big-int": "'{\"top1\": ' + '9' * 400 + '}'",
        "nul": "'{\"top1\": 93.8}\\x00\\x00'",
        "deep-value": "'{\"top1\": ' + '[' * 900 + ']' * 900 + '}'",
    }
    for name, text in hostile_files.items():
        script_claim(builder, f"paper-1/file-{name}", f"{name}.py",
                     f"import os\nos.makedirs('out', exist_ok=True)\n"
                     f"open('out/r.json', 'w').write({text})\n",
                     rerun={"read": {"source": "file", "file": "out/r.json", "key": "top1"}})
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    records = {key.split("::")[1]: record for key, record in _records(run).items()}
    assert len(records) == 3 + len(hostile_files)
    assert records["paper-1/c1-first"].status is RerunStatus.reproduced
    brackets = records["paper-1/c2-brackets"]
    assert brackets.status is RerunStatus.failed and brackets.final
    assert brackets.reason == "exit code 0 but no number: no number (the last line of output " \
                              "is not JSON)"
    assert records["paper-1/c3-last"].status is RerunStatus.reproduced
    for name in hostile_files:
        record = records[f"paper-1/file-{name}"]
        assert record.status is RerunStatus.failed, (name, record.reason)
        assert record.reason.startswith("exit code 0 but no number"), (name, record.reason)
    assert "not a finite number" in records["paper-1/file-huge-float"].reason
    assert "not JSON" in records["paper-1/file-deep"].reason
    assert "not JSON" in records["paper-1/file-nul"].reason
    # a rerun resumes past every one of them: nothing runs again
    again = judging("rerun", str(run), "--env-cache", str(env_cache))
    assert f"{3 + len(hostile_files)} already re-run with the same inputs, 0 to run" in again
    assert len(RunPaths(run).reruns.read_text().splitlines()) == 3 + len(hostile_files)


def test_a_line_of_digits_that_is_not_a_number_is_read_in_linear_time(
        tmp_path: Path, make_submission, env_cache: Path) -> None:
    """A KEY=VALUE reader that backtracks spends minutes on one line of 40,000 digits ending in
    a letter (quadratic): the host's rerun would stall on one claim's output."""
    builder = make_submission()
    script_claim(builder, "paper-1/digits", "digits.py",
                 "for _ in range(3):\n    print('top1=' + '1' * 40000 + 'x')\n",
                 rerun={"read": {"source": "line", "key": "top1"}})
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(env_cache), "--estimate")  # builds nothing
    started = time.monotonic()
    judging("rerun", str(run), "--env-cache", str(env_cache))
    took = time.monotonic() - started
    record = read_reruns(run)["tester/sub-1::paper-1/digits"]
    assert record.status is RerunStatus.failed
    assert record.reason == "exit code 0 but no number: no number (no output line has " \
                            "top1=<number>)"
    assert took < 60, f"reading the output took {took:.0f} s"


def test_a_results_file_shipped_in_the_submission_is_no_result(
        tmp_path: Path, make_submission, env_cache: Path) -> None:
    builder = make_submission()
    builder.file("out/results.json", json.dumps({"top1": 93.8}))
    script_claim(builder, "paper-1/shipped", "eval.py", "print('done, nothing written')\n",
                 rerun={"read": {"source": "file", "file": "out/results.json", "key": "top1"}})
    script_claim(builder, "paper-1/written", "write.py",
                 "import json, os\nassert not os.path.exists('out/results.json')\n"
                 "json.dump({'top1': 93.8}, open('out/results.json', 'w'))\n",
                 rerun={"read": {"source": "file", "file": "out/results.json", "key": "top1"}})
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    records = {key.split("::")[1]: record for key, record in _records(run).items()}
    shipped = records["paper-1/shipped"]
    assert shipped.status is RerunStatus.failed and shipped.exit_code == 0
    assert shipped.reason.startswith("exit code 0 but no number")
    assert "did not write it" in shipped.reason
    assert records["paper-1/written"].status is RerunStatus.reproduced
    assert (builder.root / "out" / "results.json").is_file()  # the submission is untouched


def test_the_organizers_timeout_caps_the_claims_own(tmp_path: Path, make_submission,
                                                    env_cache: Path) -> None:
    builder = make_submission()
    script_claim(builder, "paper-1/c1", "slow.py",
                 "import json, time\ntime.sleep(30)\nprint(json.dumps({'top1': 93.8}))\n",
                 rerun={"timeout_s": 604800})
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(env_cache), "--timeout", "5")
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.timeout, record.reason
    assert record.limits.wall_s == 5 and record.duration_s < 15
    assert record.reason == "stopped at the wall-time limit (5 s)"


def test_a_claim_alone_over_the_budget_is_skipped_and_the_rest_run(
        tmp_path: Path, make_submission, env_cache: Path) -> None:
    builder = make_submission()
    script_claim(builder, "paper-1/c0-big", "big.py", PRINT_JSON)
    script_claim(builder, "paper-1/c1-small", "a.py", PRINT_JSON, rerun={"timeout_s": 20})
    script_claim(builder, "paper-1/c2-small", "b.py", PRINT_JSON, rerun={"timeout_s": 20})
    script_claim(builder, "paper-1/c3-small", "c.py", PRINT_JSON, rerun={"timeout_s": 20})
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    output = judging("rerun", str(run), "--env-cache", str(env_cache), "--timeout", "300",
                     "--budget", "50s")
    records = {key.split("::")[1]: record for key, record in _records(run).items()}
    big = records["paper-1/c0-big"]
    assert big.status is RerunStatus.not_run and not big.final
    assert big.reason == "over budget: its limit 300 s exceeds the budget (--budget 0.0139 " \
                         "CPU-hours)"
    for name in ("c1-small", "c2-small", "c3-small"):  # 20 s limits: each fits what is left
        assert records[f"paper-1/{name}"].status is RerunStatus.reproduced
    assert "3 reproduced" in output and "1 not_run" in output


def test_on_ray_too_a_claim_alone_over_the_budget_is_skipped_and_the_rest_run(
        ray_cluster: str, tmp_path: Path, make_submission, env_cache: Path) -> None:  # noqa: F811
    builder = make_submission()
    script_claim(builder, "paper-1/c0-big", "big.py", PRINT_JSON)
    script_claim(builder, "paper-1/c1-small", "a.py", PRINT_JSON, rerun={"timeout_s": 20})
    script_claim(builder, "paper-1/c2-small", "b.py", PRINT_JSON, rerun={"timeout_s": 20})
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    # the environment built first: one the cache does not hold also reserves its install's time
    # (test_engine_rules.py), which would leave no room for the second small claim
    judging("rerun", str(run), "--env-cache", str(env_cache), "--select", "sample:1")
    judging("rerun", str(run), "--engine", "ray", "--address", ray_cluster, "--env-cache",
            str(env_cache), "--timeout", "300", "--budget", "50s", "--force")
    records = {key.split("::")[1]: record for key, record in _records(run).items()}
    assert records["paper-1/c0-big"].reason.startswith("over budget: its limit 300 s exceeds")
    # the cluster holds both small limits at once: 40 s of 50
    for name in ("c1-small", "c2-small"):
        assert records[f"paper-1/{name}"].status is RerunStatus.reproduced


def test_a_claim_that_cannot_be_planned_is_recorded_and_the_others_run(
        tmp_path: Path, make_submission, env_cache: Path) -> None:
    """A file name that is not UTF-8 is hashed as the bytes it is; a script that became a link
    out of the submission after `judging run` is that claim's "not run", naming the error."""
    odd = make_submission("odd", "odd/names")
    script_claim(odd, "paper-1/c1", "eval.py", PRINT_JSON)
    odd.write()
    (odd.root / os.fsdecode(b"data-\xff\xfe.bin")).write_bytes(b"x")
    moved = make_submission("moved", "moved/link")
    script_claim(moved, "paper-1/c1", "eval.py", PRINT_JSON)
    moved.write()
    honest = make_submission("honest", "honest/sub")
    script_claim(honest, "paper-1/c1", "eval.py", PRINT_JSON)
    honest.write()
    run = judged_run(honest.root.parent, tmp_path / "run")
    outside = tmp_path / "outside.py"
    outside.write_text(PRINT_JSON)
    (moved.root / "eval.py").unlink()
    os.symlink(outside, moved.root / "eval.py")
    judging("rerun", str(run), "--env-cache", str(env_cache))
    records = _records(run)
    assert records["odd/names::paper-1/c1"].status is RerunStatus.reproduced
    link = records["moved/link::paper-1/c1"]
    assert link.status is RerunStatus.not_run
    assert link.reason == "judging could not plan this claim's re-run: ValueError"
    assert records["honest/sub::paper-1/c1"].status is RerunStatus.reproduced
