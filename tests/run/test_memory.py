"""A run holds no per-claim state beyond its indexes (`judging.run.memory`): the peak of Python
memory (tracemalloc) of `judging run` through the CLI grows by at most HELD_PER_CLAIM per claim
between a small and a larger synthetic run. A pass that kept every judgment of the run (issue 43:
the drift report, the nothing-judged check) grows by about 10 KB a claim and fails here.

The submissions are five of one owner per paper, as the scale benchmark's: the integrity check
pairs every claim with its namesakes (two duplicate-submission pairs a claim or more), so that
the run's path through the integrity check is measured too. Holding those pairs whole stays under
HELD_PER_CLAIM at these sizes (measured on the code before issue 43's streaming writer): the
bound that fails on it is test_the_integrity_check_holds_no_pair's, on the check alone.

Number claims only (no figure to measure, no pool) on one rubric (the falsification audit's second
pass reads the stored claims in batches of 200: bounded, but larger than the small run), in a
subprocess of its own so that the measure is not this process's; both runs follow a warm-up run,
so that what is imported or cached once is not counted as growth, and the CLI's table of every
claim (a small run's, at most SUMMARY_MAX_LINES) is turned off. Memory, not time, is asserted."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import yaml

from judging.models import ClaimKey
from judging.run.integrity import IntegritySearch
from judging.run.memory import HELD_PER_CLAIM, INTEGRITY_HELD_PER_CLAIM
from judging.rundir.flags import write_integrity_pairs
from tests.conftest import ROOT

PER_SUBMISSION = 20
SMALL, LARGE = 40, 240
WORDS = ("loss accuracy curve baseline training validation step epoch learning rate warmup "
         "optimizer batch gradient seed variance model layer dataset split benchmark metric "
         "score trend plateau checkpoint script config logs reduced reproduced reported "
         "published matches differs within outside tolerance margin observed measured").split()

PEAKS = """
import json, sys, tracemalloc
from judging.cli import main

# The table of a small run's claims: bounded, not growth (the module, not the command `run`).
sys.modules["judging.cli.run"].SUMMARY_MAX_LINES = 0

def run(source, out):
    main.main(args=["run", source, "--out", out, "--judge", "offline", "--rubric",
                    "verdict-justification"], standalone_mode=False)

def peak(source, out):
    tracemalloc.reset_peak()
    run(source, out)
    return tracemalloc.get_traced_memory()[1]

run(sys.argv[1], sys.argv[2])  # warm-up: imports and caches made once
tracemalloc.start()
print(json.dumps([peak(sys.argv[3], sys.argv[4]), peak(sys.argv[5], sys.argv[6])]))
"""


#: Submissions of one owner per paper (as benchmarks/scale.py makes them).
SAME_PAPER = 5


def _submissions(root: Path, n_claims: int) -> Path:
    """n_claims number claims in submissions of PER_SUBMISSION, each with its own values and
    justification (so that the integrity check has real shingles to index), SAME_PAPER
    submissions of one owner (a Hub namespace) per paper."""
    rng = random.Random(n_claims)
    papers = max(1, n_claims // PER_SUBMISSION // SAME_PAPER)
    for s in range(n_claims // PER_SUBMISSION):
        paper = f"p{s % papers}"
        claims = []
        for k in range(PER_SUBMISSION):
            value = round(rng.uniform(10, 99), 2)
            reproduced = round(value + rng.gauss(0, 0.6), 2)
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 40)))
            claims.append({"claim_id": f"{paper}/n{k}", "kind": "number", "source": f"Table {k}",
                           "statement": f"Metric {k} is {value}", "reported_value": value,
                           "reproduced_value": reproduced, "tolerance": {"absolute": 0.5},
                           "verdict": "verified" if abs(reproduced - value) <= 0.5
                           else "falsified",
                           "justification": f"run {s}-{k} gave {reproduced}. {words}.",
                           "evidence": {"logs": []}})
        folder = root / f"sub{s:04d}"
        folder.mkdir(parents=True)
        (folder / "submission.yaml").write_text(yaml.safe_dump(
            {"submission_id": f"memory/{n_claims}-{s:04d}", "paper_id": paper,
             "paper_title": f"Paper {paper}", "claims": claims}, sort_keys=False))
    return root


def test_a_run_keeps_no_state_per_claim(tmp_path: Path) -> None:
    warm, small, large = (_submissions(tmp_path / f"subs{n}", n) for n in (PER_SUBMISSION,
                                                                             SMALL, LARGE))
    done = subprocess.run(
        [sys.executable, "-c", PEAKS, str(warm), str(tmp_path / "warm"), str(small),
         str(tmp_path / "small"), str(large), str(tmp_path / "large")],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    peak_small, peak_large = json.loads(done.stdout.strip().splitlines()[-1])
    lines = sum(1 for _ in (tmp_path / "large" / "judgments.jsonl").open())
    assert lines >= LARGE  # every claim was judged (a run that judged nothing grows by nothing)
    # and the integrity check paired the namesakes (a run without pairs holds none)
    pairs = json.loads((tmp_path / "large" / "integrity.json").read_text())["pairs"]
    assert len(pairs) >= 2 * LARGE
    per_claim = (peak_large - peak_small) / (LARGE - SMALL)
    assert per_claim <= HELD_PER_CLAIM, (
        f"a run grew by {per_claim:.0f} bytes per claim ({peak_small / 2**20:.1f} MB at "
        f"{SMALL} claims, {peak_large / 2**20:.1f} MB at {LARGE}): something keeps per-claim "
        f"state for the whole run (see judging/run/memory.py)")


def _namesakes(n_claims: int) -> Iterator[SimpleNamespace]:
    """What the integrity check reads of a claim (its key, paper and justification), for
    submissions of PER_SUBMISSION claims, SAME_PAPER of one owner per paper: two
    duplicate-submission pairs a claim, and justifications too short to compare."""
    papers = n_claims // PER_SUBMISSION // SAME_PAPER
    for s in range(n_claims // PER_SUBMISSION):
        paper = f"p{s % papers}"
        for k in range(PER_SUBMISSION):
            yield SimpleNamespace(
                key=ClaimKey(submission_id=f"owner/sub{s:05d}", claim_id=f"{paper}/c{k}"),
                submission=SimpleNamespace(paper_id=paper),
                claim=SimpleNamespace(justification="short"))


def test_the_integrity_check_holds_no_pair(tmp_path: Path) -> None:
    """The integrity pairs are written as they are found: tracemalloc's peak of finding and
    writing them grows by at most INTEGRITY_HELD_PER_CLAIM a claim from N to 5N claims (finding
    them all, then writing one report, grew by about 3 KB a claim)."""
    def peak(n_claims: int) -> int:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        search = IntegritySearch([], _namesakes(n_claims))
        written = write_integrity_pairs(tmp_path, figures=search.figures,
                                        justifications=search.justifications,
                                        pairs=search.pairs())
        assert written == {"duplicate_submission": 2 * n_claims}
        return tracemalloc.get_traced_memory()[1] - before

    small, large = 1000, 5000
    peak(PER_SUBMISSION * SAME_PAPER)  # warm-up: what is made once
    tracemalloc.start()
    try:
        peak_small, peak_large = peak(small), peak(large)
    finally:
        tracemalloc.stop()
    per_claim = (peak_large - peak_small) / (large - small)
    assert per_claim <= INTEGRITY_HELD_PER_CLAIM, (
        f"the integrity check grew by {per_claim:.0f} bytes a claim: it holds its pairs "
        f"(see judging/run/memory.py)")


def test_no_stage_finds_the_integrity_pairs_in_one_report() -> None:
    """`judging run` and `judging merge` write their integrity pairs one at a time
    (`write_run_integrity`); a merge, over the union of sharded runs (the largest of all), found
    them in one report with every claim in a dict, holding what test_the_integrity_check_holds_no_pair
    bounds. `find_pairs` (the whole report) is for small runs and tests only."""
    package = ROOT / "judging"
    found = [f"{path.relative_to(package)}:{number}"
             for path in sorted(package.rglob("*.py"))
             if path.relative_to(package).parts[0] != "run"
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if "find_pairs(" in line]
    assert found == [], found
