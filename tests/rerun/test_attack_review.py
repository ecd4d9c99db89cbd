"""Attacks of the issue 38 review on `judging rerun`: hostile submissions built by the test, real
bubblewrap and uv, run as the organizer runs them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from judging.models import RerunStatus
from judging.rerun.sandbox import DEFAULT_LIMITS, disk_files
from judging.rundir import read_reruns
from tests.rerun.conftest import judged_run, judging, need_sandbox, script_claim

#: Seconds of sandbox start-up, interpreter lookup and bookkeeping a rerun adds to what it spends.
SANDBOX_OVERHEAD_S = 5
#: An install that spends time and fails: an in-tree build backend (no download) that sleeps.
SLOW_INSTALL_S = 8
SLOW_BACKEND = {
    "slow/pyproject.toml": '[project]\nname = "slow"\nversion = "1"\n\n[build-system]\n'
                           'requires = []\nbuild-backend = "slowbackend"\nbackend-path = ["."]\n',
    "slow/slowbackend.py": f"import time\ntime.sleep({SLOW_INSTALL_S})\nraise SystemExit(1)\n",
}


def test_a_failed_install_counts_against_the_budget(tmp_path: Path, make_submission) -> None:
    """A failed install is not cached, so every claim that needs it installs again; its time
    was not counted as spent, so `--budget` let a hostile submission's claims each run an
    install up to --build-timeout, past the budget without end."""
    need_sandbox()
    builder = make_submission(requirements="./slow\n")
    for relative, text in SLOW_BACKEND.items():
        builder.file(relative, text)
    for n in (1, 2, 3):
        script_claim(builder, f"paper-1/c{n}", "run.py", "print(94.0)\n")
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--budget", "12s",
            "--timeout", "5")
    records = [json.loads(line) for line in (run / "reruns.jsonl").read_text().splitlines()]
    attempted = [r for r in records if r["attempted"]]
    # the first install (8 s) is cut at what the budget leaves beside its run (12 - 5 s) and
    # counted as spent: the rest are over budget, not installed again
    assert len(attempted) == 1, [r["reason"] for r in records]
    assert attempted[0]["reason"].startswith("over budget: its install was stopped")
    assert attempted[0]["environment"]["build_s"] >= 12 - 5 - 1
    assert all("over budget" in r["reason"] for r in records if not r["attempted"])


def one_claim_with_a_slow_install(make_submission, run: Path, *, sleep_s: int) -> Path:
    """A judged run of one script claim whose install sleeps `sleep_s` seconds, then fails."""
    builder = make_submission(requirements="./slow\n")
    for relative, text in SLOW_BACKEND.items():
        builder.file(relative, text.replace(f"sleep({SLOW_INSTALL_S})", f"sleep({sleep_s})"))
    script_claim(builder, "paper-1/c1", "run.py", "print(94.0)\n")
    builder.write()
    return judged_run(builder.root.parent, run)


def test_an_install_cannot_spend_past_the_budget(tmp_path: Path, make_submission) -> None:
    need_sandbox()
    run = one_claim_with_a_slow_install(make_submission, tmp_path / "run", sleep_s=20)
    started = time.monotonic()
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--budget", "12s",
            "--timeout", "5", "--build-timeout", "60")
    assert time.monotonic() - started < 12 + SANDBOX_OVERHEAD_S
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    # cut at what the budget left beside the claim's run (12 - 5 s), not final: a rerun with
    # more budget installs it again
    assert record.status is RerunStatus.not_run and not record.final, record
    assert record.reason.startswith("over budget: its install was stopped"), record.reason


def test_a_huge_sparse_file_is_not_read_before_anything_runs(tmp_path: Path,
                                                             make_submission) -> None:
    """A 200 GB sparse file (no disk used) in a submission: the plan hashed every byte of it on
    this machine, so `rerun --estimate` (and every rerun) spent minutes before any limit
    applied, longer with a bigger file. Over the sandbox's disk the claim cannot run anyway (the
    submission is copied there): it is not run, with the reason, and nothing more is read."""
    builder = make_submission()
    script_claim(builder, "paper-1/c1", "run.py", "print(94.0)\n")
    with (builder.root / "data.bin").open("wb") as handle:
        handle.truncate(200 * 1024 ** 3)
    builder.write()
    run = judged_run(builder.root.parent, tmp_path / "run")
    started = time.monotonic()
    shown = judging("rerun", str(run), "--estimate", "--env-cache", str(tmp_path / "cache"))
    assert time.monotonic() - started < 20, "the plan read the sparse file"
    assert "1 to run (1 of them cannot run)" in shown
    shown = judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--disk", "64")
    assert "not_run: the submission's files add up to more than the sandbox's disk (64 MiB" \
        in shown


def test_a_flood_of_empty_files_is_not_walked_past_what_the_sandbox_holds(
        tmp_path: Path, make_submission) -> None:
    """Millions of empty files: the plan hashed every one on this machine (300,000 took 31 s
    here, and Ray's packing of them 134 s) before the sandbox's copy met its file bound. More
    files than the sandbox's disk holds (4,096 at --disk 16) is not run, and not walked further."""
    builder = make_submission()
    script_claim(builder, "paper-1/c1", "run.py", "print(94.0)\n")
    builder.write()
    flood = builder.root / "data"
    flood.mkdir()
    for n in range(4200):
        (flood / f"f{n}").touch()
    run = judged_run(builder.root.parent, tmp_path / "run")
    shown = judging("rerun", str(run), "--estimate", "--env-cache", str(tmp_path / "cache"),
                    "--disk", "16")
    assert "1 to run (1 of them cannot run)" in shown
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--disk", "16")
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.not_run and not record.attempted
    assert record.reason == ("the submission's files add up to more than the sandbox's disk "
                             "(16 MiB, --disk, or 4,096 files and folders), where it is copied: "
                             "not run")


def test_a_submission_of_as_many_files_as_the_sandbox_holds_is_run(
        tmp_path: Path, make_submission) -> None:
    """The plan lets a submission of exactly the sandbox's files and folders (4,096 at --disk
    16) run: the sandbox holds that many. Its tmpfs's inode bound counts the folder's own
    inode too, so the copy into the sandbox ran out one short and the claim failed there."""
    need_sandbox()
    builder = make_submission()
    script_claim(builder, "paper-1/c1", "run.py", "print(93.8)\n")
    builder.write()
    flood = builder.root / "data"
    flood.mkdir()
    entries = sum(len(dirs) + len(files) for _, dirs, files in os.walk(builder.root))
    for n in range(disk_files(DEFAULT_LIMITS.model_copy(update={"disk_mb": 16})) - entries):
        (flood / f"f{n}").touch()
    assert sum(len(d) + len(f) for _, d, f in os.walk(builder.root)) == 4096
    run = judged_run(builder.root.parent, tmp_path / "run")
    judging("rerun", str(run), "--env-cache", str(tmp_path / "cache"), "--disk", "16")
    record = read_reruns(run)["tester/sub-1::paper-1/c1"]
    assert record.status is RerunStatus.reproduced, (record.reason, record.stderr_tail)
