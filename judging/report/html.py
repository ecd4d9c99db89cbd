"""report.html: a human-readable view of a run (figures side by side, signals, every answer)."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from judging.atomic import write_text_atomic
from judging.errors import JudgingError
from judging.models import Judgment, LineStatus, NotAddressed, ReferenceOrigin
from judging.rubrics import Rubric, RubricLibrary
from judging.rundir import RunStore, judgments_with_flags, read_consensus, read_not_addressed
from judging.signal_catalogue import CATALOGUE


def outcome_label(judgment: Judgment) -> str:
    if judgment.status is LineStatus.error:
        return "error"
    return judgment.aggregate.outcome.value if judgment.aggregate else judgment.status.value


def summary_rows(judgments: list[Judgment]) -> list[dict[str, str]]:
    """One row per claim, one column per rubric (outcome, score, coverage), sorted by claim key."""
    rubric_ids = sorted({j.rubric.id for j in judgments if j.rubric is not None})
    by_claim: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        by_claim[str(judgment.claim)].append(judgment)
    rows = []
    for key in sorted(by_claim):
        lines = by_claim[key]
        first = lines[0]
        row = {"submission": first.claim.submission_id, "claim": first.claim.claim_id,
               "kind": first.kind.value if first.kind else "?",
               "verdict": first.verdict.value if first.verdict else "?"}
        for rubric_id in rubric_ids:
            cells = []
            for j in lines:
                if j.rubric is None or j.rubric.id != rubric_id:
                    continue
                agg = j.aggregate
                text = outcome_label(j)
                if agg is not None and agg.score is not None and j.status is not LineStatus.error:
                    text += f" {agg.score:.2f} ({agg.coverage:.0%})"
                cells.append(text if len({x.judge for x in lines}) == 1 else f"{j.judge}: {text}")
            row[rubric_id] = "; ".join(cells) or "-"
        errors = [j.reason for j in lines if j.rubric is None and j.reason]
        if errors:
            row[rubric_ids[0] if rubric_ids else "outcome"] = "error"
        flags = {f.name for j in lines for f in j.flags}
        if any(j.reference is ReferenceOrigin.participant for j in lines):
            flags.add("participant-supplied reference")
        row["flags"] = ", ".join(sorted(flags))
        rows.append(row)
    return rows


def not_addressed_by_submission(records: list[NotAddressed]) -> dict[str, list[NotAddressed]]:
    """The run's not-addressed registry claims, grouped by submission (sorted), in registry
    order within one."""
    grouped: dict[str, list[NotAddressed]] = defaultdict(list)
    for record in records:
        grouped[record.submission_id].append(record)
    return dict(sorted(grouped.items()))


def submission_warnings(claims: dict) -> dict[str, list[str]]:
    """The warnings intake kept on each submission header (a logbook's orphan pages, dangling
    links, index.md and logbook.json disagreeing), by submission (sorted)."""
    found: dict[str, list[str]] = {}
    for content in claims.values():
        header = content.submission
        if header.warnings and header.submission_id not in found:
            found[header.submission_id] = list(header.warnings)
    return dict(sorted(found.items()))


def _rubrics_for(judgments: list[Judgment], rubrics_dir: Path | None) -> dict[str, Rubric]:
    """The rubrics the run used, to show each criterion's question (best effort: a rubric that is
    gone from the folder only costs the questions, the answers are still shown)."""
    try:
        library = RubricLibrary(rubrics_dir)
    except JudgingError:
        return {}
    found: dict[str, Rubric] = {}
    for ref in {j.rubric for j in judgments if j.rubric is not None}:
        try:
            rubric = library.load(str(ref))
        except JudgingError:
            continue
        if rubric.judged_with(ref):
            found[f"{ref}#{ref.hash}"] = rubric
    return found


def write_html_report(run_dir: Path, *, out: Path | None = None, rubrics_dir: Path | None = None
                 ) -> Path:
    store = RunStore.open(run_dir, create=False)
    judgments = store.latest()
    out = out or store.paths.report
    rubrics = _rubrics_for(judgments, rubrics_dir)

    def image_url(relative: str | None) -> str | None:
        if relative is None:
            return None
        return os.path.relpath(store.root / relative, out.parent).replace(os.sep, "/")

    judgments = judgments_with_flags(store.root, judgments)
    claims: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        claims[str(judgment.claim)].append(judgment)
    claim_inputs = store.claims()

    def own_figure(key: str) -> str | None:
        """A claim's reproduced figure written in the run directory (a logbook's decoded figure)
        when no figure-match drew the figures side by side."""
        claim = claim_inputs.get(key)
        path = claim.reproduced_path if claim is not None else None
        if path is None or not path.is_file():
            return None
        try:
            relative = path.resolve().relative_to(store.root.resolve())
        except ValueError:
            return None
        return image_url(relative.as_posix())

    sections = []
    for key, lines in sorted(claims.items()):
        figures = next((j.artifacts for j in lines if j.artifacts.diff), None)
        signals = next((j.signals for j in lines if j.signals), {})
        flags = {(f.name, f.detail) for j in lines for f in j.flags}
        sections.append({
            "key": key, "anchor": "c-" + str(abs(hash(key))), "first": lines[0],
            "lines": lines, "flags": sorted(flags),
            "figures": ({name: image_url(getattr(figures, name))
                         for name in ("published", "reproduced", "diff", "overlay")}
                        if figures else None),
            "signals": signals,
            "own_figure": None if figures else own_figure(key),
        })
    env = Environment(loader=PackageLoader("judging.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True,
                      lstrip_blocks=True)
    html = env.get_template("report.html.j2").render(
        consensus=read_consensus(store.root),
        anchors={section["key"]: section["anchor"] for section in sections},
        info=store.info, sections=sections, rows=summary_rows(judgments),
        rubrics=rubrics, catalogue=CATALOGUE, outcome_label=outcome_label,
        claims=claim_inputs, warnings=submission_warnings(claim_inputs),
        not_addressed=not_addressed_by_submission(read_not_addressed(store.root)))
    write_text_atomic(out, html)
    return out
