"""The other engines: Ray tasks on a real Ray cluster on loopback (the same sandbox on the node,
results and logs returned to the driver), and Hugging Face Jobs against the fake Hub serving the
jobs endpoints."""

from __future__ import annotations

import json
from pathlib import Path

from judging.models import RerunStatus
from judging.rundir import read_reruns
from tests.merge.test_shards import hermetic_env, ray_cluster  # noqa: F401 (fixtures)
from tests.rerun.conftest import judged_run, judging, need_sandbox, script_claim

PRINT_JSON = "import json, iniconfig\nprint(json.dumps({'top1': 93.8}))\n"


def test_ray_tasks_rerun_in_the_sandbox_and_return_results_and_logs(
        ray_cluster: str, tmp_path: Path, make_submission, env_cache: Path) -> None:  # noqa: F811
    need_sandbox()
    first = make_submission("a", "team-a/sub")
    script_claim(first, "paper-1/c1", "eval.py", PRINT_JSON)
    script_claim(first, "paper-1/c2", "other.py", "print('{\"top1\": 90.0}')\n")
    first.write()
    second = make_submission("b", "team-b/sub")
    script_claim(second, "paper-1/c1", "eval.py",
                 "import os, socket\nsocket.create_connection(('127.0.0.1', 9), timeout=2)\n")
    second.write()
    run = judged_run(first.root.parent, tmp_path / "run")
    output = judging("rerun", str(run), "--engine", "ray", "--address", ray_cluster,
                     "--env-cache", str(env_cache))
    records = read_reruns(run)
    assert {key: r.status for key, r in records.items()} == {
        "team-a/sub::paper-1/c1": RerunStatus.reproduced,
        "team-a/sub::paper-1/c2": RerunStatus.differs,
        "team-b/sub::paper-1/c1": RerunStatus.failed}
    for record in records.values():
        assert record.engine == "ray" and record.node and "bubblewrap" in record.sandbox
        assert (run / record.logs / "stdout.txt").is_file()
    assert "no network in the sandbox" in records["team-b/sub::paper-1/c1"].reason
    assert "3 claim(s) re-run" in output
    again = judging("rerun", str(run), "--engine", "ray", "--address", ray_cluster,
                    "--env-cache", str(env_cache))
    assert "3 already re-run with the same inputs, 0 to run" in again


def test_hf_jobs_rerun_the_hub_submission_at_its_revision_without_secrets(
        tmp_path: Path, make_submission, monkeypatch) -> None:
    import os

    from judging.rerun.environment import python_search_path, uv_binary
    from tests.fakehub import GOOD_TOKEN, FakeHub

    need_sandbox()  # the fake Hub runs each job's command in bubblewrap (its "container")
    builder = make_submission("space", "alice/repro")
    script_claim(builder, "paper-1/c1", "eval.py", PRINT_JSON,
                 rerun={"flavor": "cpu-upgrade"})
    script_claim(builder, "paper-1/c2", "env.py",
                 "import os\nprint(sorted(os.environ))\nprint('token' in str(os.environ))\n"
                 "print('{\"top1\": 92.0}')\n")
    script_claim(builder, "paper-1/c3", "res.py",
                 "import json\njson.dump({'top1': 93.8}, open('r.json', 'w'))\n",
                 rerun={"read": {"source": "file", "file": "r.json", "key": "top1"}})
    builder.write()
    with FakeHub({("space", "alice/repro"): builder.root}) as hub:
        hub.patch(monkeypatch, tmp_path / "hf", token=GOOD_TOKEN)
        hub.jobs.path_dirs = [str(Path(uv_binary()).parent),
                              *python_search_path().split(os.pathsep)]
        run = tmp_path / "run"
        sha = hub.sha("space", "alice/repro")
        judging("run", f"hf://spaces/alice/repro@{sha}", "--out", str(run), "--judge",
                "offline")
        output = judging("rerun", str(run), "--engine", "hf-jobs", "--hf-namespace",
                         "organizers", "--timeout", "120")
        # the hardware a claim asks for is the organizer's to allow: it pays for it
        asked = {key.split("::")[1]: r for key, r in read_reruns(run).items()}["paper-1/c1"]
        assert asked.status is RerunStatus.not_run and not asked.final
        assert asked.reason == "flavor 'cpu-upgrade' is not one --hf-flavors allows (cpu-basic)"
        assert sorted(s["flavor"] for s in hub.jobs.specs) == ["cpu-basic", "cpu-basic"]
        judging("rerun", str(run), "--engine", "hf-jobs", "--hf-namespace", "organizers",
                "--timeout", "120", "--hf-flavors", "cpu-basic,cpu-upgrade")
        specs = list(hub.jobs.specs)
        requests = list(hub.requests)
    assert "at most $" in output.splitlines()[0]
    # the claim whose flavor is not allowed is not run: the estimate neither runs nor prices it
    estimate = output.splitlines()[0]
    assert "3 to run (1 of them cannot run)" in estimate and "at most 0.07 CPU-hours" in estimate, \
        estimate
    records = {key.split("::")[1]: r for key, r in read_reruns(run).items()}
    assert records["paper-1/c1"].status is RerunStatus.reproduced, records["paper-1/c1"].reason
    assert records["paper-1/c2"].status is RerunStatus.differs
    assert records["paper-1/c3"].status is RerunStatus.reproduced, records["paper-1/c3"].reason
    assert len(specs) == 3
    for spec in specs:
        assert spec["environment"] == {} and "secrets" not in spec
        assert spec["volumes"] == [{"type": "space", "source": "alice/repro",
                                    "mountPath": "/submission", "revision": sha}]
        assert spec["dockerImage"].startswith("ghcr.io/astral-sh/uv:python")
        assert GOOD_TOKEN not in json.dumps(spec)
    assert sorted(s["flavor"] for s in specs) == ["cpu-basic", "cpu-basic", "cpu-upgrade"]
    assert ("POST", "/api/jobs/organizers") in requests
    env_out = (run / records["paper-1/c2"].logs / "stdout.txt").read_text()
    assert GOOD_TOKEN not in env_out and "HF_TOKEN" not in env_out
    for record in records.values():
        assert record.engine == "hf-jobs" and record.node and record.cost_usd is not None
        assert "iniconfig" in (run / record.logs / "build.txt").read_text()
