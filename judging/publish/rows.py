"""The dataset's tables: one row per claim, per decision and per judgment, scrubbed, with their
Parquet schemas."""

from __future__ import annotations

import json
from typing import Any

from judging.models import (
    ClaimInput,
    ConsensusReport,
    Flag,
    Judgment,
    NotAddressed,
    answer_value_text,
)
from judging.publish.scrub import Scrubber, pseudonym, public_endpoint
from judging.resolve import ClaimDecision, Estimate, Leaderboard, RubricDecision

CONFIGS = ("claims", "decisions", "judgments", "not_addressed", "consensus", "leaderboard")
"""The dataset's tables (Hub configs), in the order the card lists them."""

FIGURES_DIR = "figures"
"""The staged folder of the normalised figures: figures/<claim folder>/<published|reproduced|diff|
overlay>.png, as `judging run` wrote them under diffs/ (the claims table's `figures` names them)."""


def table_schemas() -> dict[str, Any]:
    import pyarrow as pa

    s, f, i, b = pa.string(), pa.float64(), pa.int64(), pa.bool_()
    strings = pa.list_(pa.string())
    return {
        "claims": pa.schema([
            ("submission_id", s), ("claim_id", s), ("paper_id", s), ("paper_title", s),
            ("kind", s), ("source", s), ("verdict", s), ("outcome", s), ("upheld", s),
            ("outcomes", s), ("decided_by", strings), ("reference", s), ("flags", strings),
            ("statement", s), ("justification", s), ("scale_note", s), ("reported_value", f),
            ("reproduced_value", f), ("values", s), ("tolerance", s), ("problem_kind", s),
            ("problem_note", s), ("evidence_files", strings), ("agent_name", s),
            ("agent_model", s), ("human_help", s), ("figures", s), ("source_verdict", s),
            ("toy", b), ("ai_outcome", s), ("ai_outcomes", s), ("final_verdict", s),
            ("final_verdict_by", s), ("conflicts", s), ("copied_figure", b)]),
        "decisions": pa.schema([
            ("submission_id", s), ("claim_id", s), ("paper_id", s), ("kind", s), ("verdict", s),
            ("rubric_id", s), ("rubric_version", s), ("rubric_hash", s), ("rubric_outcome", s),
            ("criterion", s), ("status", s), ("value", s), ("passed", b), ("decided_by", s),
            ("who", strings), ("reason", s), ("ai_judge", s), ("ai_calibration", s)]),
        "judgments": pa.schema([
            ("run_id", s), ("submission_id", s), ("claim_id", s), ("paper_id", s), ("kind", s),
            ("verdict", s), ("reference", s), ("rubric_id", s), ("rubric_version", s),
            ("rubric_hash", s), ("judge", s), ("sample", i), ("swapped", b), ("final", b),
            ("status", s), ("reason", s), ("outcome", s), ("score", f), ("coverage", f),
            ("failed_gates", strings), ("answers", s), ("signals", s), ("flags", strings),
            ("flag_details", s), ("model", s), ("settings", s), ("template_hash", s),
            ("request_hash", s), ("input_hash", s), ("raw_answer", s), ("prompt_tokens", i),
            ("completion_tokens", i), ("total_tokens", i), ("cost_usd", f), ("latency_s", f),
            ("timestamp", s), ("code_version", s)]),
        "not_addressed": pa.schema([
            ("submission_id", s), ("paper_id", s), ("claim_id", s), ("statement", s),
            ("source", s)]),
        "consensus": pa.schema([
            ("claim_id", s), ("paper_id", s), ("kind", s), ("statement", s),
            ("reproductions", i), ("independent", i), ("verified", i), ("falsified", i),
            ("inconclusive", i), ("consensus", s), ("support", i), ("agreement", f),
            ("reason", s), ("contradicting", strings), ("value_outliers", strings),
            ("not_independent", strings), ("spread", s), ("rows", s), ("counted_from", s)]),
        "leaderboard": pa.schema([
            ("scope", s), ("submission_id", s), ("paper_id", s), ("rank", i), ("claims", i),
            ("random_labels", i), ("pass_rate", f), ("pass_rate_estimate", f),
            ("pass_rate_low", f), ("pass_rate_high", f),
            ("human_only_low", f), ("human_only_high", f), ("interval_note", s),
            ("rank_low", i), ("rank_high", i), ("rank_settled", b), ("note", s)]),
    }


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False)


def claim_rows(finals: list[ClaimDecision], claims: dict[str, ClaimInput],
               scrubber: Scrubber, figures: dict[str, dict[str, str]] | None = None, *,
               side_flags: dict[str, list[Flag]] | None = None) -> list[dict[str, Any]]:
    """One row per claim; `figures`: claim key -> {kind: path in the dataset} of its staged
    figures (`figures` column, JSON); `side_flags`: claim key -> the flags of the run's side
    files (`rundir.flags_by_claim`), listed in `flags` after the claim's own."""
    figures = figures or {}
    side_flags = side_flags or {}
    rows = []
    for final in finals:
        content = claims.get(str(final.claim))
        claim = content.claim if content is not None else None
        header = content.submission if content is not None else None
        evidence = claim.evidence if claim is not None else None
        files = ([evidence.script] if evidence and evidence.script else []) + \
            (list(evidence.scripts) if evidence else []) + \
            (list(evidence.logs) if evidence else []) + \
            ([evidence.proof_script] if evidence and evidence.proof_script else [])
        row = {
            "submission_id": final.claim.submission_id, "claim_id": final.claim.claim_id,
            "paper_id": final.paper_id, "paper_title": header.paper_title if header else None,
            "kind": final.kind.value if final.kind else None,
            "source": claim.source if claim else None,
            "verdict": final.verdict.value if final.verdict else None,
            "outcome": final.outcome, "upheld": final.upheld,
            "outcomes": dict(final.outcomes), "decided_by": list(final.decided_by),
            "reference": content.reference.value if content is not None else None,
            "flags": list(dict.fromkeys(
                [*(flag.name for flag in (content.flags if content is not None else [])),
                 *(flag.name for flag in side_flags.get(str(final.claim), []))])),
            "statement": claim.statement if claim else None,
            "justification": claim.justification if claim else None,
            "scale_note": claim.scale_note if claim else None,
            "reported_value": claim.reported_value if claim else None,
            "reproduced_value": claim.reproduced_value if claim else None,
            "values": [v.model_dump(mode="json") for v in claim.values]
            if claim and claim.values is not None else None,
            "tolerance": claim.tolerance.model_dump(mode="json", exclude_none=True)
            if claim and claim.tolerance else None,
            "problem_kind": evidence.problem_kind.value if evidence and evidence.problem_kind
            else None,
            "problem_note": evidence.problem_note if evidence else None,
            "evidence_files": files,
            "agent_name": header.agent.name if header and header.agent else None,
            "agent_model": header.agent.model if header and header.agent else None,
            "human_help": header.human_help.value if header and header.human_help else None,
            "figures": figures.get(str(final.claim)) or None,
            "source_verdict": claim.source_verdict if claim else None,
            "toy": claim.toy if claim else None,
            "ai_outcome": final.ai_outcome,
            "ai_outcomes": dict(final.ai_outcomes) or None,
            "final_verdict": final.final_verdict, "final_verdict_by": final.final_verdict_by,
            "conflicts": dict(final.conflicts) or None, "copied_figure": final.copied_figure,
        }
        row = scrubber.tree(row)
        for key in ("outcomes", "values", "tolerance", "figures", "ai_outcomes", "conflicts"):
            row[key] = _json(row[key])
        rows.append(row)
    return rows


def not_addressed_rows(records: list[NotAddressed], scrubber: Scrubber) -> list[dict[str, Any]]:
    """The registry claims each submission left unanswered (they count as not passed on the
    leaderboard, so a Space that reads the dataset ranks as `judging leaderboard` does)."""
    return [scrubber.tree({"submission_id": r.submission_id, "paper_id": r.paper_id,
                           "claim_id": r.claim_id, "statement": r.statement,
                           "source": r.source}) for r in records]


def decision_rows(decisions: list[RubricDecision], scrubber: Scrubber, salt: str
                  ) -> list[dict[str, Any]]:
    rows = []
    for decision in decisions:
        for answer in decision.answers:
            who = [pseudonym(name, salt) for name in answer.who] \
                if answer.decided_by == "humans" else list(answer.who)
            rows.append(scrubber.tree({
                "submission_id": decision.claim.submission_id,
                "claim_id": decision.claim.claim_id, "paper_id": decision.paper_id,
                "kind": decision.kind.value if decision.kind else None,
                "verdict": decision.verdict.value if decision.verdict else None,
                "rubric_id": decision.rubric.id, "rubric_version": decision.rubric.version,
                "rubric_hash": decision.rubric.hash, "rubric_outcome": decision.outcome,
                "criterion": answer.criterion, "status": answer.status,
                "value": answer_value_text(answer.value), "passed": answer.passed,
                "decided_by": answer.decided_by, "who": who, "reason": answer.reason,
                "ai_judge": decision.ai_judge, "ai_calibration": decision.ai_calibration}))
    return rows


def judgment_rows(judgments: list[Judgment], scrubber: Scrubber) -> list[dict[str, Any]]:
    rows = []
    for j in judgments:
        p = j.provenance
        settings = {k: (public_endpoint(v) if k == "endpoint" else v)
                    for k, v in p.settings.items()}
        aggregate = j.aggregate
        row = scrubber.tree({
            "run_id": j.run_id, "submission_id": j.claim.submission_id,
            "claim_id": j.claim.claim_id, "paper_id": j.paper_id,
            "kind": j.kind.value if j.kind else None,
            "verdict": j.verdict.value if j.verdict else None,
            "reference": j.reference.value if j.reference else None,
            "rubric_id": j.rubric.id if j.rubric else None,
            "rubric_version": j.rubric.version if j.rubric else None,
            "rubric_hash": j.rubric.hash if j.rubric else None,
            "judge": j.judge, "sample": j.sample, "swapped": j.swapped, "final": j.final,
            "status": j.status.value, "reason": j.reason,
            "outcome": aggregate.outcome.value if aggregate else None,
            "score": aggregate.score if aggregate else None,
            "coverage": aggregate.coverage if aggregate else None,
            "failed_gates": list(aggregate.failed_gates) if aggregate else [],
            "answers": [a.model_dump(mode="json") for a in j.answers],
            "signals": {k: v.model_dump(mode="json") for k, v in j.signals.items()},
            "flags": [flag.name for flag in j.flags],
            "flag_details": {flag.name: flag.detail for flag in j.flags} or None,
            "model": p.model, "settings": settings, "template_hash": p.template_hash,
            "request_hash": p.request_hash, "input_hash": j.input_hash,
            "raw_answer": p.raw_answer,
            "prompt_tokens": p.usage.prompt_tokens if p.usage else None,
            "completion_tokens": p.usage.completion_tokens if p.usage else None,
            "total_tokens": p.usage.total_tokens if p.usage else None,
            "cost_usd": p.cost_usd, "latency_s": p.latency_s,
            "timestamp": p.timestamp.isoformat().replace("+00:00", "Z"),
            "code_version": p.code_version})
        for key in ("answers", "signals", "flag_details", "settings"):
            row[key] = _json(row[key])
        rows.append(row)
    return rows


def consensus_rows(report: ConsensusReport, scrubber: Scrubber) -> list[dict[str, Any]]:
    """One row per registry claim: the consensus verdict, its support, the spread of values, the
    flagged reproductions (claim keys) and, as JSON, every reproduction side by side."""
    from judging.models import CONTRADICTS_CONSENSUS, NOT_INDEPENDENT, VALUE_OUTLIER

    rows = []
    for claim in report.claims:
        def flagged(name: str, claim=claim) -> list[str]:
            return [str(r.claim) for r in claim.reproductions
                    if any(f.name == name for f in r.flags)]

        side_by_side = [{
            "submission_id": r.claim.submission_id, "claim_id": r.claim.claim_id,
            "agent": r.agent, "verdict": r.verdict.value if r.verdict else None,
            # The scale note is the claims table's (participant text is published once).
            "source_verdict": r.source_verdict, "toy": r.toy,
            "independent": r.independent, "counted": r.counted,
            "final_verdict": r.final_verdict, "counted_verdict": r.counted_verdict,
            "counted_from": r.counted_from,
            "copy_of": [str(k) for k in r.copy_of],
            "values": [v.model_dump(mode="json") for v in r.values],
            "outcomes": dict(r.outcomes),
            "flags": [{"name": f.name, "detail": f.detail} for f in r.flags],
        } for r in claim.reproductions]
        row = scrubber.tree({
            "claim_id": claim.claim_id, "paper_id": claim.paper_id,
            "kind": claim.kind.value if claim.kind else None, "statement": claim.statement,
            "reproductions": len(claim.reproductions), "independent": claim.independent,
            **{v: claim.votes.get(v, 0) for v in ("verified", "falsified", "inconclusive")},
            "consensus": claim.verdict, "support": claim.support,
            "agreement": claim.agreement, "reason": claim.reason,
            "contradicting": flagged(CONTRADICTS_CONSENSUS),
            "value_outliers": flagged(VALUE_OUTLIER),
            "not_independent": flagged(NOT_INDEPENDENT),
            "spread": [s.model_dump(mode="json") for s in claim.spread],
            "rows": side_by_side, "counted_from": dict(claim.counted_from)})
        for key in ("spread", "rows", "counted_from"):
            row[key] = _json(row[key])
        rows.append(row)
    return rows


def leaderboard_rows(board: Leaderboard, scrubber: Scrubber) -> list[dict[str, Any]]:
    """The leaderboard's intervals as numbers (issue 42): one row for the event, then one per
    submission best first: the pass rate with its 95% prediction-powered interval and the
    human-only one, the random labels they rest on (or why there is no interval), and the
    rank's simulated 95% interval (null while no random sample calibrates it)."""

    def numbers(estimate: Estimate | None) -> dict[str, Any]:
        # `pass_rate` is the leaderboard's own (passed / decided, put in by the caller); the
        # estimate is given where the leaderboard shows it, with its interval: without one,
        # no second point under another figure's name.
        if estimate is None:
            return {"claims": None, "random_labels": None, "pass_rate_estimate": None,
                    "pass_rate_low": None, "pass_rate_high": None, "human_only_low": None,
                    "human_only_high": None, "interval_note": None}
        low, high = estimate.interval or (None, None)
        c_low, c_high = estimate.classical or (None, None)
        return {"claims": estimate.claims, "random_labels": estimate.random_labels,
                "pass_rate_estimate": estimate.estimate if estimate.interval else None,
                "pass_rate_low": low, "pass_rate_high": high,
                "human_only_low": c_low, "human_only_high": c_high,
                "interval_note": scrubber.text(estimate.note or None)}

    rows = [{"scope": "event", "submission_id": None, "paper_id": None, "rank": None,
             "pass_rate": None, **numbers(board.event), "rank_low": None, "rank_high": None,
             "rank_settled": None, "note": None}]
    for row in board.submissions:
        interval = board.rank_intervals.get(row["submission"])
        rows.append({"scope": "submission", "submission_id": scrubber.text(row["submission"]),
                     "paper_id": scrubber.text(row.get("paper")), "rank": row.get("rank"),
                     "pass_rate": row.get("pass_rate"),
                     **numbers(board.estimates.get(row["submission"])),
                     "rank_low": interval.low if interval else None,
                     "rank_high": interval.high if interval else None,
                     "rank_settled": interval.low == interval.high if interval else None,
                     # why a row is unranked (nothing of it could be judged; beyond a
                     # participant's paper limit) or what of it could not be loaded
                     "note": scrubber.text(row.get("note") or None)})
    return rows
