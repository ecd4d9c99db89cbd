"""`judging leaderboard`: per submission and per paper, claims judged, passed, failed, pending and
upheld, from the final decisions (CSV and HTML)."""

from __future__ import annotations

import csv
import html
from collections import Counter, defaultdict
from pathlib import Path

from judging.errors import JudgingError
from judging.resolve.decide import ClaimDecision
from judging.rundir import RunPaths, read_jsonl

COLUMNS = ["claims", "passed", "failed", "pending", "incomplete", "upheld", "pass_rate"]


def leaderboard_rows(finals: list[ClaimDecision]) -> tuple[list[dict], list[dict]]:
    """(per submission, per paper) rows, best first."""
    def tally(items: list[ClaimDecision]) -> dict:
        outcomes = Counter(d.outcome for d in items)
        decided = outcomes["pass"] + outcomes["fail"]
        return {"claims": len(items), "passed": outcomes["pass"], "failed": outcomes["fail"],
                "pending": outcomes["pending"], "incomplete": outcomes["incomplete"],
                "upheld": sum(1 for d in items if d.upheld == "yes"),
                "pass_rate": round(outcomes["pass"] / decided, 3) if decided else None}

    submissions: dict[str, list[ClaimDecision]] = defaultdict(list)
    papers: dict[str, list[ClaimDecision]] = defaultdict(list)
    for final in finals:
        submissions[final.claim.submission_id].append(final)
        papers[final.paper_id or "?"].append(final)
    by_submission = [{"submission": s, "paper": items[0].paper_id, **tally(items)}
                     for s, items in submissions.items()]
    by_paper = [{"paper": p, "submissions": len({d.claim.submission_id for d in items}),
                 **tally(items)} for p, items in papers.items()]
    order = lambda row: (-row["passed"], row["pending"], str(row.get("submission") or row["paper"]))  # noqa: E731
    return sorted(by_submission, key=order), sorted(by_paper, key=order)


def write_leaderboard(run_dir: Path) -> tuple[Path, Path, Path]:
    path = RunPaths(Path(run_dir)).final
    if not path.is_file():
        raise JudgingError(f"{path}: no final decisions yet; run `judging resolve {run_dir}` "
                           f"first")
    finals = read_jsonl(path, ClaimDecision)
    submissions, papers = leaderboard_rows(finals)
    outputs = RunPaths(Path(run_dir)).leaderboards
    for rows, target, first in ((submissions, outputs[0], ["submission", "paper"]),
                                (papers, outputs[1], ["paper", "submissions"])):
        with target.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=[*first, *COLUMNS])
            writer.writeheader()
            writer.writerows(rows)

    def table(title: str, rows: list[dict]) -> str:
        if not rows:
            return f"<h2>{title}</h2><p>none</p>"
        cell = lambda v: f"<td>{html.escape('' if v is None else str(v))}</td>"  # noqa: E731
        head = "<tr><th>rank</th>" + "".join(f"<th>{html.escape(k)}</th>" for k in rows[0])
        body = "".join(f"<tr>{cell(rank)}" + "".join(cell(v) for v in row.values()) + "</tr>"
                       for rank, row in enumerate(rows, start=1))
        return f"<h2>{title}</h2><table>{head}</tr>{body}</table>"

    outputs[2].write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>judging leaderboard</title>"
        "<style>body{font:14px system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px}th{background:#eee}</style></head><body>"
        "<h1>Leaderboard</h1><p>Claims passed, failed and pending review after human and "
        "trusted-AI decisions (judging resolve).</p>"
        + table("Submissions", submissions) + table("Papers", papers) + "</body></html>",
        encoding="utf-8")
    return outputs
