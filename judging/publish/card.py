"""The dataset card (README.md of the Hub dataset): rubric versions and hashes, judges, counts and
the calibration summary per rubric and judge."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judging.models import Judgment
from judging.publish.rows import CONFIGS
from judging.publish.scrub import SCRUB_KINDS
from judging.resolve import INTERVAL_COLUMNS, Leaderboard, RubricDecision, rank_text

DEFAULT_LICENSE = "cc-by-4.0"


TAGS = ["reproducibility", "ml-papers", "claims", "llm-as-a-judge", "rubric-evaluation",
        "human-review", "judging"]


def utc_today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def _counts(values: Iterable[Any], order: Sequence[str]) -> list[tuple[str, int]]:
    counts = Counter("none" if v is None else str(v) for v in values)
    known = [(k, counts.pop(k)) for k in order if k in counts]
    return known + sorted(counts.items())


def _corrected(c: Any) -> str:
    rate = c.corrected
    if rate is None:
        return "-"
    return f"{rate.observed:.2f} / {_f1(rate.corrected, rate.interval)}"


def _f1(value: float | None, interval: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def calibration_summary(calibration_dir: Path, judgments: list[Judgment]) -> list[str]:
    """Per (rubric version, judge): the trusted criteria with their F1 and interval, or why
    nothing is trusted ("not calibrated", a stale calibration)."""
    from pydantic import ValidationError

    from judging.calibrate import load_artifact, staleness

    seen: dict[tuple[str, str], Judgment] = {}
    for j in judgments:
        if j.rubric is not None:
            seen.setdefault((str(j.rubric), j.judge), j)
    lines: list[str] = []
    for (ref_name, judge), line in sorted(seen.items()):
        assert line.rubric is not None
        lines.append(f"### {ref_name}, judge `{judge}`")
        lines.append("")
        try:
            artifact = load_artifact(calibration_dir, line.rubric, judge)
        except (ValidationError, OSError, ValueError):
            lines += ["Calibration artifact unreadable: treated as **not calibrated** (the judge's "
                      "answers decide nothing).", ""]
            continue
        if artifact is None:
            lines += ["**Not calibrated**: no calibration of this judge on this rubric version, "
                      "so none of its answers decided a criterion on its own.", ""]
            continue
        stale = staleness(artifact, rubric=line.rubric, template_hash=line.provenance.template_hash,
                          model=line.provenance.model, served=line.provenance.served())
        labels = artifact.labels
        source = {"construction": "**construction labels** (derived from how the examples were "
                                  "built; not human labels)",
                  "human": "human labels",
                  "mixed": "a mix of human and **construction labels** (construction labels "
                           "are derived from how examples were built, not given by people)"
                  }[labels.source]
        blind = "blind labels only" if labels.blind_only else "anchored labels included"
        lines.append(f"Calibrated on {labels.used} {source} from {labels.annotators} "
                     f"annotator(s), {blind} (created {artifact.created_at:%Y-%m-%d}).")
        if stale:
            lines += ["", f"The calibration is **stale** ({stale}): it trusts nothing."]
        trusted = [c for c in artifact.criteria if c.decision == "trusted"]
        options = artifact.options
        rule = (f"support >= {options.min_support}, coverage >= {options.min_coverage:g}, "
                f"an F1 95% interval lower bound >= {options.floor:g} and true-positive and "
                f"true-negative rate lower bounds >= {options.tpr_floor:g} and "
                f"{options.tnr_floor:g}")
        if trusted and not stale:
            lines.append(f"Trusted criteria ({rule}): " + ", ".join(
                f"`{c.criterion}` (F1 {_f1(c.f1, c.f1_interval)}, n={c.support})"
                for c in trusted) + ".")
        else:
            lines.append(f"Trusted criteria: none (a criterion is trusted at {rule}).")
        lines.append("")
        lines += _table(["criterion", "decision", "support", "coverage", "F1 [95% CI]",
                         "TPR [95% CI]", "TNR [95% CI]", "retest agreement [95% CI]",
                         "pass rate: observed / corrected [95% CI]"],
                        [(c.criterion, c.decision.replace("_", " "), c.support,
                          "-" if c.coverage is None else f"{c.coverage:.2f}",
                          _f1(c.f1, c.f1_interval), _f1(c.true_positive_rate, c.tpr_interval),
                          _f1(c.true_negative_rate, c.tnr_interval),
                          _f1(c.retest.agreement, c.retest.agreement_interval) if c.retest
                          else "not retested", _corrected(c)) for c in artifact.criteria])
        lines += ["", "The corrected pass rate is the judge's pass rate on this run's claims "
                      "corrected for the true-positive and true-negative rates it showed against "
                      "the labels (Rogan–Gladen); its interval carries the calibration's "
                      "uncertainty."]
        lines.append("")
    if not lines:
        lines = ["No AI judgment in this run.", ""]
    return lines


def consensus_summary(rows: list[dict[str, Any]]) -> list[str]:
    """The consensus table of the card, and its rule."""
    if not rows:
        return ["No registry claim was reproduced by these submissions."]
    lines = ["The consensus verdict of a registry claim is the majority direction (verified or "
             "falsified) among its independent, full-scale reproductions when at least 3 give "
             "it and it holds more than half of them; otherwise there is none. A copy (a "
             "shared figure or justification) adds no support. The consensus informs and "
             "raises review priority; it changes no outcome.", ""]
    lines += _table(["registry claim", "reproductions", "independent", "verified / falsified / "
                     "inconclusive", "consensus", "support", "contradicting", "value outliers"],
                    [(r["claim_id"], r["reproductions"], r["independent"],
                      f"{r['verified']} / {r['falsified']} / {r['inconclusive']}",
                      r["consensus"] or "none", r["support"], len(r["contradicting"]),
                      len(r["value_outliers"])) for r in rows])
    return lines


def interval_summary(board: Leaderboard) -> list[str]:
    """The leaderboard's intervals as `judging leaderboard` gives them (issue 42): the event's
    pass rate and whether the top places are settled, then each submission's rank and pass rate
    with their 95% intervals and the human-only interval beside them."""
    lines = ["How sure the ranking is: pass rates estimated from the AI's outcomes and a random "
             "sample of human answers (prediction-powered, PPI++) with 95% intervals, the "
             "human-only interval beside them, and each rank's 95% interval simulated from the "
             "claims' uncertainty (a model: the judge errs alike within a rubric and AI "
             "outcome).", "", *(f"- {line}" for line in board.uncertainty), ""]
    return lines + _table(["rank", "submission", *INTERVAL_COLUMNS],
                          [(rank_text(r), r["submission"],
                            *(r.get(c) or "-" for c in INTERVAL_COLUMNS))
                           for r in board.submissions])


def dataset_card(*, run_id: str, repo_id: str | None, license: str,
                 tables: dict[str, list[dict[str, Any]]], decisions: list[RubricDecision],
                 judgments: list[Judgment], calibration_dir: Path,
                 scrubbed: Counter[str], board: Leaderboard | None = None) -> str:
    """README.md for the Hub: YAML front matter (license, pretty_name, tags, configs) + body."""
    import yaml

    claims = tables["claims"]
    name = (repo_id or "judging-run").split("/")[-1]
    pretty = f"Judged reproduction claims ({name})"
    n = len(claims)
    size = "n<1K" if n < 1000 else "1K<n<10K" if n < 10_000 else "10K<n<100K" \
        if n < 100_000 else "100K<n<1M"
    front = {"license": license, "pretty_name": pretty, "language": ["en"], "tags": TAGS,
             "size_categories": [size],
             "configs": [{"config_name": c, "data_files": [
                 {"split": "train", "path": f"data/{c}.parquet"}], **({"default": True}
                                                                     if c == "claims" else {})}
                 for c in CONFIGS]}
    out = ["---", yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(), "---", ""]
    papers = {row["paper_id"] for row in claims}
    submissions = {row["submission_id"] for row in claims}
    code_versions = sorted({j.provenance.code_version for j in judgments})
    out += [
        f"# {pretty}", "",
        f"Final decisions on **{n} claim(s)** from {len(papers)} paper(s), reproduced by "
        f"{len(submissions)} submission(s) and judged with "
        f"`judging` (rubric-based, AI-then-human judging of claims reproduced from ML "
        f"papers).", "",
        "Each submission reproduced claims from a paper (\"Fig. 3 shows X\", \"Table 2: 94.1%\") "
        "and gave a **verdict** (verified, falsified or inconclusive) with a justification. Each "
        "claim was scored against versioned rubrics, first by AI judges, then by people; each "
        "criterion was finally decided by the reviewers' majority, else by the AI where a "
        "calibration trusts that judge on that criterion, else left *pending review*. The "
        "claim's **outcome** (pass, fail, incomplete, pending) is ours; the **verdict** is the "
        "participant's; **upheld** says whether the verdict stands.", "",
        f"Run `{run_id}`; code version {', '.join(f'`{v}`' for v in code_versions) or 'unknown'}; "
        f"published {utc_today()}.", "",
        "## Configs", "",
        f"- `claims` ({len(claims)} rows, `data/claims.parquet`): one row per claim: ids, kind, "
        "the participant's verdict, our outcome (overall and per rubric, `outcomes` as JSON), "
        "while it waits for review the AI's outcome that ranks provisionally (`ai_outcome`, "
        "and per rubric `ai_outcomes` as JSON), "
        "whether the verdict is upheld, the claim's final verdict (`final_verdict`: verified, "
        "falsified, toy, inconclusive or pending, and who decided it), who decided, its flags, "
        "reviewer conflicts (`conflicts`, by rubric, as JSON: the overall answer against the "
        "reviewer's criteria, or reviewers split; decided fail until settled), whether its "
        "reproduced figure is flagged a copy of the published one (`copied_figure`: it ranks "
        "as a fail), and the claim's statement, "
        "justification and scale note (scrubbed, see below).",
        f"- `decisions` ({len(tables['decisions'])} rows, `data/decisions.parquet`): one row per "
        "(claim, rubric, criterion): status (decided, pending, not applicable), the value "
        "(`yes`/`no` or a level), whether it passes, who decided (`humans` or `ai`) and why a "
        "criterion is pending.",
        f"- `judgments` ({len(tables['judgments'])} rows, `data/judgments.parquet`): one row per "
        "AI judgment (the newest per claim, rubric, judge and sample): per-criterion answers "
        "with rationales (`answers`, JSON), aggregate score, coverage and outcome, measured "
        "signals, flags, and provenance (model, settings, prompt-template and request hashes, "
        "token usage, cost, code version, the raw answer). Flags found after judging "
        "(copies across submissions, `contradicts_consensus`, `value_outlier`, "
        "`not_independent`, merge conflicts) are listed in the claims' and the judgments' "
        "`flags` as the run's own readers merge them, the consensus ones as the `consensus` "
        "table gives them.",
        f"- `not_addressed` ({len(tables.get('not_addressed', []))} rows, "
        "`data/not_addressed.parquet`): one row per registry claim a submission did not "
        "address; the leaderboard counts each as a claim that did not pass.",
        f"- `consensus` ({len(tables['consensus'])} rows, `data/consensus.parquet`): one row per "
        "registry claim reproduced by the submissions (`judging consensus`): verdict counts, the "
        "consensus verdict and its support, agreement, the spread of reproduced values "
        "(`spread`, JSON), the reproductions flagged as contradicting the consensus, as value "
        "outliers or as copies that add no support, and every reproduction side by side "
        "(`rows`, JSON).",
        f"- `leaderboard` ({len(tables.get('leaderboard', []))} rows, "
        "`data/leaderboard.parquet`): the intervals as numbers: one row for the event "
        "(`scope` event) and one per submission best first: `rank`, the leaderboard's pass "
        "rate (`pass_rate`: passed / (passed + failed + not addressed); none for the event), "
        "the estimated pass rate (`pass_rate_estimate`, where there is an interval) with its "
        "95% prediction-powered interval (`pass_rate_low`, "
        "`pass_rate_high`) and the human-only one (`human_only_low`, `human_only_high`), the "
        "random human labels they rest on, `interval_note` where there is no interval (AI-only, "
        "too few labels), and the rank's simulated 95% interval (`rank_low`, `rank_high`, "
        "`rank_settled`).", "",
        "Each table is also given as JSON lines (`data/*.jsonl`, the same rows). The "
        "normalised published and reproduced figures, their visual diff and the chart "
        "overlay of each figure claim are under `figures/` (the claims' `figures` column "
        "names them).", ""]

    refs: dict[str, tuple[str, str, str, str]] = {}
    for d in decisions:
        refs[f"{d.rubric}#{d.rubric.hash}"] = (d.rubric.id, d.rubric.version, d.applies_to,
                                                d.rubric.hash)
    for j in judgments:
        if j.rubric is not None:
            refs.setdefault(f"{j.rubric}#{j.rubric.hash}", (j.rubric.id, j.rubric.version, "-",
                                                            j.rubric.hash))
    out += ["## Rubrics", ""]
    out += _table(["rubric", "version", "applies to", "content hash"],
                  [(i, v, a, f"`{h}`") for i, v, a, h in sorted(refs.values())])
    out += ["", "## Judges", ""]
    judges: dict[str, dict[str, Any]] = {}
    for j in judgments:
        entry = judges.setdefault(j.judge, {"models": set(), "lines": 0})
        entry["lines"] += 1
        if j.provenance.model:
            entry["models"].add(j.provenance.model)
    out += _table(["judge", "model", "judgment lines"], [
        (f"`{judge}`", ", ".join(f"`{m}`" for m in sorted(e["models"])) or
         ("none: offline rules (signal thresholds and rule checks)" if judge == "offline"
          else "-"), e["lines"]) for judge, e in sorted(judges.items())])
    out += ["", "## Calibration", "",
            "How far each AI judge agrees with people, per criterion (`judging calibrate`). Only "
            "trusted criteria let the AI decide without a reviewer.", ""]
    out += calibration_summary(calibration_dir, judgments)

    decision_rows_ = tables["decisions"]
    deciders = Counter("not applicable" if r["status"] == "not_applicable" else
                       "pending review" if r["status"] == "pending" else
                       "humans" if r["decided_by"] == "humans" else
                       "construction labels" if r["decided_by"] == "construction" else
                       "trusted AI" for r in decision_rows_)
    out += ["## Results", "", "### Participant verdicts", ""]
    out += _table(["verdict", "claims"], _counts((r["verdict"] for r in claims),
                                                 ["verified", "falsified", "inconclusive"]))
    out += ["", "### Outcomes", ""]
    out += _table(["outcome", "claims"], _counts((r["outcome"] for r in claims),
                                                 ["pass", "fail", "incomplete", "pending"]))
    out += ["", "### Verdict upheld", ""]
    out += _table(["upheld", "claims"], _counts((r["upheld"] for r in claims),
                                                ["yes", "no", "pending"]))
    finals = [r.get("final_verdict") for r in claims if r.get("final_verdict")]
    if finals:
        out += ["", "### Final verdicts", "",
                "The claim's own verdict from the evidence (the verdict rubric's `own_verdict`): "
                "the reviewers' majority, else the AI where a calibration trusts it, else "
                "pending. Beside the participant's verdict, not instead of it.", ""]
        out += _table(["final verdict", "claims"], _counts(
            finals, ["verified", "falsified", "toy", "inconclusive", "pending"]))
    if board is not None:
        out += ["", "### Leaderboard intervals", ""]
        out += interval_summary(board)
    out += ["", "### Consensus per registry claim", ""]
    out += consensus_summary(tables["consensus"])
    out += ["", "### Who decided each criterion", ""]
    out += _table(["decided by", "criteria"],
                  [(k, deciders.get(k, 0)) for k in ("humans", "construction labels",
                                                      "trusted AI", "pending review",
                                                      "not applicable")])
    if deciders.get("construction labels"):
        out += ["", "Construction labels state what the answer must be given how an example "
                    "was built: no person gave them."]
    out += ["", "## Personal data", "",
            "Before upload, every text that came from participants or models (statements, "
            "justifications, scale notes, rationales, raw answers, reasons, flags) was scrubbed; "
            "replacements made:", ""]
    labels = {"email": "email addresses -> `[email]`",
              "token": "tokens and keys (Hugging Face, OpenAI, GitHub, AWS, Slack, bearer "
                       "tokens, JWTs, `api_key=...`-style assignments) -> `[token]`",
              "home": "home-directory paths (`/home/<user>`, `/Users/<user>`, "
                      "`C:\\Users\\<user>` and root's home) -> `[home]`",
              "local_path": "absolute paths of the judging machine -> `[local]`"}
    out += _table(["kind", "replacements"],
                  [(labels[k], scrubbed.get(k, 0)) for k in SCRUB_KINDS])
    out += ["",
            "Local file paths recorded by the run (submission folders, resolved figure and log "
            "files, diff images) are not published, nor are API keys (never recorded) or local "
            "judge endpoints. Reviewers are pseudonymised as `reviewer-<6 hex>`, a salted hash "
            "of their user name: stable across publishes of this run, and the salt is not "
            "published. Construction labels keep their generator's name "
            "(`construction:...`): no person gave them. Submission ids are the participants' "
            "public submission handles.", ""]
    return "\n".join(out)
