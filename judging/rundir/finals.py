"""The final verdicts `resolve` wrote (final.jsonl), read without the resolve stage's models: the
consensus counts them, and it sits below resolve."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from judging.rundir.layout import RunPaths


def iter_final_verdicts(root: Path) -> Iterator[tuple[str, str | None]]:
    """(claim key, final verdict) of each line of RUN_DIR/final.jsonl, in file order (nothing
    when the run was never resolved). A final verdict is verified, falsified, toy, inconclusive,
    pending, or None for a claim no rubric asked one for; a line that is not a final decision is
    skipped (a torn last line of an interrupted write)."""
    path = RunPaths(root).final
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                data = json.loads(line)
                claim = data["claim"]
                key = f"{claim['submission_id']}::{claim['claim_id']}"
            except (ValueError, KeyError, TypeError):
                continue
            verdict = data.get("final_verdict")
            yield key, verdict if isinstance(verdict, str) else None
