"""`judging leaderboard`: per submission and per paper, claims judged, passed, failed, pending and
upheld, from the final decisions (CSV and HTML).

A registry claim a submission does not address (not_addressed.jsonl, written by `judging run`)
counts as a judged claim that did not pass: it is in `claims` and `not_addressed`, and in the
pass rate's denominator, so that skipping the hard claims of a paper never raises a pass rate.

When the run reproduces registry claims, a third table lists each registry claim's consensus
(`judging consensus`; computed afresh when its side file is missing or stale): its verdict,
support, agreement and the spread of reproduced values. It ranks nobody.
"""

from __future__ import annotations

import csv
import html
from collections import Counter, defaultdict
from pathlib import Path

from judging.calibrate import CorrectedRow, calibration_root, corrected_rates
from judging.consensus import load_consensus
from judging.errors import JudgingError
from judging.models import ClaimConsensus, ConsensusReport, NotAddressed
from judging.resolve.decide import ClaimDecision
from judging.rundir import RunPaths, read_jsonl, read_not_addressed

COLUMNS = ["claims", "passed", "failed", "not_addressed", "pending", "incomplete", "upheld",
           "pass_rate"]
#: The claims' final verdicts (verified, falsified, toy, inconclusive): the verdict rubric's
#: own_verdict as resolve decided it (human, else trusted AI); claims still pending are in none.
#: Only when some claim was judged with a rubric that asks for one.
FINAL_VERDICT_COLUMNS = ["final_verified", "final_falsified", "final_toy", "final_inconclusive"]

CONSENSUS_COLUMNS = ["registry_claim", "paper", "reproductions", "independent", "verified",
                     "falsified", "inconclusive", "consensus", "support", "agreement",
                     "contradicting", "value_outliers", "spread", "counted_from"]


def consensus_row(claim: ClaimConsensus) -> dict:
    """One registry claim's consensus as a leaderboard row (CONSENSUS_COLUMNS)."""
    flagged = lambda name: sum(1 for r in claim.reproductions  # noqa: E731
                               if any(f.name == name for f in r.flags))
    return {"registry_claim": claim.claim_id, "paper": claim.paper_id,
            "reproductions": len(claim.reproductions), "independent": claim.independent,
            **{v: claim.votes.get(v, 0) for v in ("verified", "falsified", "inconclusive")},
            "consensus": claim.verdict or "none", "support": claim.support,
            "agreement": claim.agreement, "contradicting": flagged("contradicts_consensus"),
            "value_outliers": flagged("value_outlier"),
            "spread": "; ".join(s.describe() for s in claim.spread),
            "counted_from": ", ".join(f"{n} {what}" for what, n in claim.counted_from.items())}


def consensus_rows(report: ConsensusReport | None) -> list[dict]:
    return [consensus_row(c) for c in report.claims] if report is not None else []


def leaderboard_rows(finals: list[ClaimDecision],
                     not_addressed: list[NotAddressed] | tuple[()] = ()
                     ) -> tuple[list[dict], list[dict]]:
    """(per submission, per paper) rows, best first. Each not-addressed registry claim counts as
    a claim that did not pass (a zero)."""
    Item = ClaimDecision | NotAddressed

    def outcome(item: Item) -> str:
        return item.outcome if isinstance(item, ClaimDecision) else "not_addressed"

    def submission(item: Item) -> str:
        return (item.claim if isinstance(item, ClaimDecision) else item.key).submission_id

    def tally(items: list[Item]) -> dict:
        outcomes = Counter(outcome(d) for d in items)
        decided = outcomes["pass"] + outcomes["fail"] + outcomes["not_addressed"]
        return {"claims": len(items), "passed": outcomes["pass"], "failed": outcomes["fail"],
                "not_addressed": outcomes["not_addressed"],
                "pending": outcomes["pending"], "incomplete": outcomes["incomplete"],
                "upheld": sum(1 for d in items
                              if isinstance(d, ClaimDecision) and d.upheld == "yes"),
                "pass_rate": round(outcomes["pass"] / decided, 3) if decided else None,
                **({f"final_{v}": sum(1 for d in items if isinstance(d, ClaimDecision)
                                      and d.final_verdict == v)
                    for v in ("verified", "falsified", "toy", "inconclusive")}
                   if asks_final else {})}

    asks_final = any(d.final_verdict is not None for d in finals)

    # A claim that has a final decision is not also counted as not addressed (a run resumed after
    # a submission dropped a claim keeps that claim's judgments).
    judged = {str(d.claim) for d in finals}
    items: list[Item] = [*finals, *(r for r in not_addressed if str(r.key) not in judged)]
    submissions: dict[str, list[Item]] = defaultdict(list)
    papers: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        submissions[submission(item)].append(item)
        papers[item.paper_id or "?"].append(item)
    by_submission = [{"submission": s, "paper": next((d.paper_id for d in group if d.paper_id),
                                                     None), **tally(group)}
                     for s, group in submissions.items()]
    by_paper = [{"paper": p, "submissions": len({submission(d) for d in group}), **tally(group)}
                for p, group in papers.items()]
    order = lambda row: (-row["passed"], row["pending"], str(row.get("submission") or row["paper"]))  # noqa: E731
    return sorted(by_submission, key=order), sorted(by_paper, key=order)


def corrected_html(rows: list[CorrectedRow]) -> str:
    """The leaderboard's section of pass rates corrected for the judges' measured errors."""
    if not rows:
        return ("<h2>Pass rates corrected for the judges' errors</h2><p>No calibration of this "
                "run's judges: no rate can be corrected (`judging calibrate`).</p>")
    cell = lambda v: f"<td>{html.escape('–' if v is None else str(v))}</td>"  # noqa: E731
    body = []
    for row in rows:
        r = row.rate
        corrected = "–" if r.corrected is None or row.stale else \
            f"{r.corrected:.3f}" + (f" [{r.interval[0]:.3f}, {r.interval[1]:.3f}]"
                                    if r.interval else "") + (" (clipped)" if r.clipped else "")
        status = f"stale: {row.stale}" if row.stale else row.decision.replace("_", " ")
        body.append("<tr>" + "".join(cell(v) for v in (
            row.rubric, row.judge, row.criterion, r.n, f"{r.observed:.3f}",
            None if r.sensitivity is None else f"{r.sensitivity:.3f}",
            None if r.specificity is None else f"{r.specificity:.3f}", corrected, status))
            + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in (
        "rubric", "judge", "criterion", "judged", "observed pass rate", "sensitivity",
        "specificity", "corrected [95%]", "calibration"))
    return ("<h2>Pass rates corrected for the judges' errors</h2><table><tr>" + head + "</tr>"
            + "".join(body) + "</table><p>The AI's pass rate on this run's claims, corrected for "
            "the sensitivity and specificity its calibration measured against people "
            "(Rogan–Gladen); the interval carries the calibration's uncertainty. A stale "
            "calibration corrects nothing.</p>")


def write_leaderboard(run_dir: Path, *, calibration_dir: Path | None = None,
                      rubrics_dir: Path | None = None) -> tuple[Path, Path, Path]:
    path = RunPaths(Path(run_dir)).final
    if not path.is_file():
        raise JudgingError(f"{path}: no final decisions yet; run `judging resolve {run_dir}` "
                           f"first")
    finals = read_jsonl(path, ClaimDecision)
    submissions, papers = leaderboard_rows(finals, read_not_addressed(Path(run_dir)))
    paths = RunPaths(Path(run_dir))
    outputs = paths.leaderboards
    consensus = consensus_rows(load_consensus(run_dir))
    columns = [*COLUMNS, *(FINAL_VERDICT_COLUMNS if any(d.final_verdict is not None
                                                         for d in finals) else [])]
    tables = [(submissions, outputs[0], ["submission", "paper", *columns]),
              (papers, outputs[1], ["paper", "submissions", *columns])]
    if consensus:
        tables.append((consensus, paths.leaderboard_consensus, CONSENSUS_COLUMNS))
    for rows, target, columns in tables:
        with target.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)

    def table(title: str, rows: list[dict], *, ranked: bool = True) -> str:
        if not rows:
            return f"<h2>{title}</h2><p>none</p>"
        cell = lambda v: f"<td>{html.escape('' if v is None else str(v))}</td>"  # noqa: E731
        head = ("<tr><th>rank</th>" if ranked else "<tr>") + "".join(
            f"<th>{html.escape(k)}</th>" for k in rows[0])
        body = "".join("<tr>" + (cell(rank) if ranked else "")
                       + "".join(cell(v) for v in row.values()) + "</tr>"
                       for rank, row in enumerate(rows, start=1))
        return f"<h2>{title}</h2><table>{head}</tr>{body}</table>"

    consensus_html = (table("Consensus per registry claim", consensus, ranked=False)
                      + "<p>The majority direction among independent, full-scale reproductions "
                        "when at least 3 give it and it holds more than half of them "
                        "(judging consensus). It raises review priority and informs; it "
                        "changes no outcome.</p>") if consensus else ""

    outputs[2].write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>judging leaderboard</title>"
        "<style>body{font:14px system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px}th{background:#eee}</style></head><body>"
        "<h1>Leaderboard</h1><p>Claims passed, failed and pending review after human and "
        "trusted-AI decisions (judging resolve). A registry claim a submission does not "
        "address counts as a claim that did not pass (not_addressed).</p>"
        + table("Submissions", submissions) + table("Papers", papers) + consensus_html
        + "<p>final_*: claims by final verdict (the verdict rubric's own verdict, decided by "
          "people, else by a trusted AI; beside whether the participant's verdict is upheld).</p>"
        + corrected_html(corrected_rates(run_dir, calibration_dir=calibration_root(
            calibration_dir), rubrics_dir=rubrics_dir))
        + "</body></html>", encoding="utf-8")
    return (*outputs, paths.leaderboard_consensus) if consensus else outputs
