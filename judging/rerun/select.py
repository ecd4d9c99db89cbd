"""Which claims to re-run (`--select`), what it costs (the estimate printed before anything runs)
and the `--budget` that stops a run cleanly.

The budget itself and what was spent against it are the engine layer's (`judging.engines`).

Only number and table claims are chosen: a re-run is compared on numbers.

- `falsified`: the participant's verdict is falsified (the "best falsification" award needs a
  script that shows the problem);
- `contested`: flagged by consensus (`contradicts_consensus`, `value_outlier`) or doubted by
  the judge (a newest line whose outcome is incomplete, or an answer whose confidence is under
  DOUBT_CONFIDENCE or whose panel did not agree);
- `top:N`: the claims of the N best submissions of the leaderboard (`judging leaderboard`), or,
  before there is one, of the N submissions with the most passing lines;
- `sample:N`: N claims drawn at random with `--seed` (the same N for the same seed);
- `all`.
"""

from __future__ import annotations

import csv
import random
import re
from collections import Counter
from pathlib import Path

from judging.engines import Budget
from judging.errors import JudgingError
from judging.models import (
    CONTRADICTS_CONSENSUS,
    VALUE_OUTLIER,
    ClaimInput,
    ClaimKind,
    Judgment,
    Outcome,
    Verdict,
)
from judging.rundir import RunPaths, RunStore, read_consensus

#: An answer less sure than this is the judge's doubt (`--select contested`).
DOUBT_CONFIDENCE = 0.6
SELECTORS = ("falsified", "contested", "top:N", "sample:N", "all")


class SelectionError(JudgingError):
    """A --select or --budget that cannot be read."""


def parse_budget(text: str | None) -> Budget | None:
    """`2h`, `30m`, `90s` (re-run time), `$5` or `5usd` (HF Jobs cost)."""
    if text is None:
        return None
    value = text.strip().lower()
    money = re.fullmatch(r"\$\s*([\d.]+)|([\d.]+)\s*(?:usd|\$)", value)
    if money:
        return Budget(usd=float(money[1] or money[2]))
    time = re.fullmatch(r"([\d.]+)\s*(h|m|s)", value)
    if time:
        return Budget(seconds=float(time[1]) * {"h": 3600, "m": 60, "s": 1}[time[2]])
    raise SelectionError(f"--budget {text!r}: give a time (2h, 30m, 90s) or dollars ($5, 5usd)")


def _latest_lines(run_dir: Path) -> list[Judgment]:
    store = RunStore.open(run_dir, create=False)
    try:
        return list(store.iter_latest())
    finally:
        store.close()


def _doubted(run_dir: Path) -> set[str]:
    doubted = set()
    for line in _latest_lines(run_dir):
        if line.rubric is None:
            continue
        if line.aggregate is not None and line.aggregate.outcome is Outcome.incomplete:
            doubted.add(str(line.claim))
        for answer in line.answers:
            if (answer.confidence is not None and answer.confidence < DOUBT_CONFIDENCE) or (
                    answer.agreement is not None and answer.agreement < 1):
                doubted.add(str(line.claim))
    return doubted


def _ranked_submissions(run_dir: Path) -> list[str]:
    board = RunPaths(run_dir).leaderboards[0]
    if board.is_file():
        with board.open(encoding="utf-8", newline="") as handle:
            return [row["submission"] for row in csv.DictReader(handle)]
    passing: Counter[str] = Counter()
    for line in _latest_lines(run_dir):
        if line.aggregate is not None and line.aggregate.outcome is Outcome.passed:
            passing[line.claim.submission_id] += 1
    return sorted(passing, key=lambda s: (-passing[s], s))


def select_claims(run_dir: Path, claims: list[ClaimInput], selector: str, *, seed: int = 0
                  ) -> list[ClaimInput]:
    """The number and table claims `selector` chooses, in the run's order."""
    numbers = [c for c in claims if c.claim.kind in (ClaimKind.number, ClaimKind.table)]
    name, _, count = selector.partition(":")
    if name in ("top", "sample"):
        if not count.isdigit() or int(count) < 1:
            raise SelectionError(f"--select {selector}: {name}:N needs a positive N")
    elif count or name not in ("falsified", "contested", "all"):
        raise SelectionError(f"--select {selector!r}: choose one of {', '.join(SELECTORS)}")
    if name == "all":
        return numbers
    if name == "falsified":
        return [c for c in numbers if c.claim.verdict is Verdict.falsified]
    if name == "contested":
        consensus = read_consensus(run_dir)
        flagged = {key for key, flags in (consensus.flags() if consensus else {}).items()
                   if any(f.name in (CONTRADICTS_CONSENSUS, VALUE_OUTLIER) for f in flags)}
        doubted = _doubted(run_dir)
        return [c for c in numbers if str(c.key) in flagged | doubted]
    if name == "top":
        top = set(_ranked_submissions(run_dir)[:int(count)])
        return [c for c in numbers if c.key.submission_id in top]
    chosen = set(random.Random(seed).sample(range(len(numbers)), min(int(count), len(numbers))))
    return [c for i, c in enumerate(numbers) if i in chosen]
