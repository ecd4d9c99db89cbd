"""Ray and HF Jobs under the local engine's rules (issue 38, part 7): an HF job trusts none of the
marked lines a submission prints (it can read the job's nonce from the job's command), declared
names with `$(...)` are names and never commands (HF Jobs and the local install, which Ray's
nodes run), and a Ray node bounds memory over the whole process tree as the local engine does,
and an install on a node within what the budget leaves (issue 43).
The fake Hub runs each job's command in bubblewrap; Ray is a real cluster on loopback."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from judging.models import RerunStatus
from judging.rerun.cgroup import probe
from judging.rerun.sandbox import DEFAULT_LIMITS
from judging.rundir import read_reruns
from tests.merge.test_shards import hermetic_env, ray_cluster  # noqa: F401 (fixtures)
from tests.rerun.conftest import judged_run, judging, need_sandbox, script_claim
from tests.rerun.test_attack_review import one_claim_with_a_slow_install

#: Reads the job's nonce from the job's own command line, as any process in the job can.
FIND_MARK = """
import os, re
mark = None
for pid in os.listdir("/proc"):
    try:
        found = re.search(rb"judging-[0-9a-f]{16}", open(f"/proc/{pid}/cmdline", "rb").read())
    except OSError:
        continue
    if found:
        mark = found.group().decode()
assert mark, "no nonce found"
"""
# A script that fails, then claims in the job's own words that its environment failed (a "not
# run" hides a failure) and that it exited 0 with a results file.
FORGER = FIND_MARK + """
import base64, json, sys
results = base64.b64encode(json.dumps({"top1": 93.8}).encode()).decode()
print(f"{mark} env-failed")
print(f"{mark} end env-failed")
print(f"{mark} exit 0")
print(f"{mark} results {results}")
print(f"{mark} end exit 0 results {results}")
sys.exit(3)
"""
PRINT_JSON = "import json, iniconfig\nprint(json.dumps({'top1': 93.8}))\n"
FLOOD = ("import sys\nline = 'y' * 1023 + '\\n'\nfor _ in range(30 * 1024):\n"
         "    sys.stdout.write(line)\nprint('{\"top1\": 93.8}')\n")
#: A folder name that a shell would run (`$(...)`): the claim's script and environment in it.
ODD = "d$(echo${IFS}EXPANDED-BY-A-SHELL>&2)"


def _hf_rerun(tmp_path: Path, builder, monkeypatch) -> dict:
    from judging.rerun.environment import python_search_path, uv_binary
    from tests.fakehub import GOOD_TOKEN, FakeHub

    with FakeHub({("space", "alice/repro"): builder.root}) as hub:
        hub.patch(monkeypatch, tmp_path / "hf", token=GOOD_TOKEN)
        hub.jobs.path_dirs = [str(Path(uv_binary()).parent),
                              *python_search_path().split(os.pathsep)]
        run = tmp_path / "run"
        sha = hub.sha("space", "alice/repro")
        judging("run", f"hf://spaces/alice/repro@{sha}", "--out", str(run), "--judge",
                "offline")
        judging("rerun", str(run), "--engine", "hf-jobs", "--hf-namespace", "organizers",
                "--timeout", "120")
    return {key.split("::")[1]: (r, run) for key, r in read_reruns(run).items()}


def test_hf_job_trusts_no_marked_line_reads_no_log_past_the_limits_and_expands_no_name(
        tmp_path: Path, make_submission, monkeypatch) -> None:
    need_sandbox()
    builder = make_submission("space", "alice/repro")
    script_claim(builder, "paper-1/c1", "forge.py", FORGER, reproduced=93.8)
    builder.file(f"{ODD}/requirements.txt", "iniconfig==2.0.0\n")
    script_claim(builder, "paper-1/c2", f"{ODD}/eval.py", PRINT_JSON)
    # 30 MiB of output, then the number: the job's logs were read whole into this machine's
    # memory (10 GB as well) and the number taken, where the local engine stops at --output
    script_claim(builder, "paper-1/c3", "flood.py", FLOOD)
    builder.write()
    records = _hf_rerun(tmp_path, builder, monkeypatch)
    flood, _ = records["paper-1/c3"]
    assert flood.status is RerunStatus.failed and flood.reason.startswith(
        "printed more than 25 MiB (the job's logs, at the output limits)"), flood.reason
    forged, run = records["paper-1/c1"]
    assert forged.status is RerunStatus.failed, forged.reason
    assert forged.exit_code == 3 and "exit code 3" in forged.reason
    odd, _ = records["paper-1/c2"]
    assert odd.status is RerunStatus.reproduced, (odd.reason, odd.stderr_tail)
    assert "EXPANDED-BY-A-SHELL" not in (run / odd.logs / "build.txt").read_text()


def test_the_local_install_expands_no_declared_name(tmp_path: Path, make_submission) -> None:
    need_sandbox()
    builder = make_submission("odd", "team/odd", requirements=None)
    builder.file(f"{ODD}/requirements.txt", "iniconfig==2.0.0\n")
    script_claim(builder, "paper-1/c1", f"{ODD}/eval.py", PRINT_JSON)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    # a cache of its own: the install runs (the session's cache may hold this environment)
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"))
    record = read_reruns(run)["team/odd::paper-1/c1"]
    assert record.status is RerunStatus.reproduced, (record.reason, record.stderr_tail)
    assert "EXPANDED-BY-A-SHELL" not in (run / record.logs / "build.txt").read_text()


def test_a_ray_node_bounds_memory_over_the_process_tree(
        ray_cluster: str, tmp_path: Path, make_submission, env_cache: Path) -> None:  # noqa: F811
    need_sandbox()
    missing = probe(DEFAULT_LIMITS)
    if missing is not None:
        pytest.skip(f"this machine cannot make a cgroup for judging: {missing}")
    builder = make_submission("ray", "team-r/sub")
    script_claim(builder, "paper-1/c1", "memfd.py", """
import json, os
keep = []
for i in range(12):
    fd = os.memfd_create(f"m{i}")
    with open(fd, "wb", closefd=False) as handle:
        for _ in range(60):
            handle.write(b"x" * (1 << 20))
    keep.append(fd)
print(json.dumps({"top1": 93.8}))
""")
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--engine", "ray", "--address", ray_cluster, "--env-cache",
            str(env_cache), "--memory", "256")
    record = read_reruns(run)["team-r/sub::paper-1/c1"]
    assert record.engine == "ray" and record.memory_limit == "process tree"
    assert record.status is RerunStatus.failed and "memory limit reached (cgroup)" in \
        record.reason, record.reason
    assert record.memory_peak_mb is not None and record.memory_peak_mb <= 256


def test_on_ray_an_install_cannot_spend_past_the_budget(
        ray_cluster: str, tmp_path: Path, make_submission) -> None:  # noqa: F811
    """The cluster's budget held only the runs' wall-time limits: a submission whose install
    sleeps (an in-tree build backend) spent up to --build-timeout per claim past it on Ray,
    where the local engine cuts an install at what the budget leaves."""
    need_sandbox()
    run = one_claim_with_a_slow_install(make_submission, tmp_path / "run", sleep_s=20)
    judging("rerun", str(run), "--engine", "ray", "--address", ray_cluster, "--env-cache",
            str(tmp_path / "cache"), "--budget", "12s", "--timeout", "5", "--build-timeout", "60")
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    # cut at what the budget left beside the claim's run (12 - 5 s), not final
    assert record.status is RerunStatus.not_run and not record.final, record
    assert record.reason.startswith("over budget: its install was stopped"), record.reason
    assert record.environment is not None and record.environment.build_s < 7 + 3


def test_on_ray_the_budget_admits_the_claims_the_local_engine_admits(
        ray_cluster: str, tmp_path: Path, make_submission) -> None:  # noqa: F811
    """Ray held a whole install allowance for each claim whose environment was not built yet,
    claims sharing one included, and never gave back what an install did not use: at --budget
    70s (runs of 5 s, installs of 60), two claims sharing an environment took it all and the
    third, with an environment of its own, was "over budget", where the local engine runs all
    three. One rule now: an environment's install is held once, and what it did not use comes
    back."""
    need_sandbox()
    builder = make_submission("shared", "team-b/sub")
    script_claim(builder, "paper-1/c1", "eval.py", PRINT_JSON)
    script_claim(builder, "paper-1/c2", "eval.py", PRINT_JSON)
    builder.file("other/requirements.txt", "iniconfig==1.1.1\n")
    script_claim(builder, "paper-1/c3", "other/eval.py", PRINT_JSON)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    limits = ("--budget", "70s", "--timeout", "5", "--build-timeout", "60")
    judging("rerun", str(run), "--engine", "ray", "--address", ray_cluster, "--env-cache",
            str(tmp_path / "ray-cache"), *limits)
    on_ray = {key: (r.status, r.reason) for key, r in read_reruns(run).items()}
    judging("rerun", str(run), "--env-cache", str(tmp_path / "local-cache"), "--force", *limits)
    local = {key: (r.status, r.reason) for key, r in read_reruns(run).items()}
    assert {key: status for key, (status, _) in local.items()} == {
        f"team-b/sub::paper-1/c{n}": RerunStatus.reproduced for n in (1, 2, 3)}, local
    assert on_ray == local


def test_one_budget_rule_and_one_hash_of_an_environment_per_plan() -> None:
    """The Ray engine restated the local engine's install allowance and hashed each claim's
    environment again on the driver (the whole submission, for a local environment), after the
    plan had. The rule is `stage.RunTimeBudget`'s alone and the key the plan's: no other module
    of the re-run stage computes either."""
    import judging.rerun

    package = Path(judging.rerun.__file__).parent
    users = {name: sorted(path.name for path in package.glob("*.py")
                          if re.search(rf"\b{name}\(", path.read_text(encoding="utf-8")))
             for name in ("left_beside", "environment_key")}
    assert users == {"left_beside": ["stage.py"],
                     "environment_key": ["environment.py", "stage.py"]}, users
