"""The review dataset design: Argilla settings from a rubric version, records from judgments.

One dataset per rubric version (`figure-match-1.0.0`) and a blind calibration twin
(`figure-match-1.0.0-calibration`) with the same fields and questions, no suggestions and a higher
overlap. A published dataset's fields cannot change, so the design is fixed per rubric version.
"""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import argilla as rg

from judging.models import (
    CONSENSUS_FLAGS,
    AnswerStatus,
    ClaimInput,
    ClaimKind,
    Judgment,
    LineStatus,
    Outcome,
    SignalStatus,
    Verdict,
    for_markdown,
    ref_name,
    rerun_text,
)
from judging.rubrics import FALSIFICATION_AUDIT, Criterion, Rubric, Scale
from judging.rules import CONSENSUS_AGREES, MAX_LOG_BYTES, proof_runs

#: Record ids are uuid5 of the claim key and the rubric version in this namespace: a re-push
#: updates the same records (and keeps the responses people gave them).
RECORD_NAMESPACE = uuid.UUID("6f1d7c1e-5a53-4c6e-9d3a-7b2f1c0e9a41")
OVERALL_QUESTION = "overall_verdict"
NOTE_QUESTION = "note"
OVERALL_LABELS = {"pass": "pass: the claim meets the rubric",
                  "fail": "fail: it does not",
                  "cannot_tell": "cannot tell from the material"}
#: Dataset designs. `separate`: the three figures as image fields, one under the other (datasets
#: made before side by side existed keep it: a dataset's fields never change). `side_by_side`:
#: one custom field shows them in a row, so reviewers compare without scrolling (new datasets).
SEPARATE, SIDE_BY_SIDE = "separate", "side_by_side"
FIGURES_FIELD = "figures"
#: The figures' row (Argilla's custom field, handlebars over the record's `figures` value: data
#: URIs of the published, reproduced and diff images; a missing one is left out).
FIGURES_TEMPLATE = """
<div class="jd-figures" style="display:flex;flex-wrap:nowrap;gap:8px;align-items:flex-start">
{{#if record.fields.figures.published}}<figure style="flex:1 1 0;min-width:0;margin:0">
<figcaption style="font-weight:600">Published figure (reference)</figcaption>
<img class="jd-published" style="width:100%;height:auto" src="{{record.fields.figures.published}}">
</figure>{{/if}}
{{#if record.fields.figures.reproduced}}<figure style="flex:1 1 0;min-width:0;margin:0">
<figcaption style="font-weight:600">Reproduced figure</figcaption>
<img class="jd-reproduced" style="width:100%;height:auto" src="{{record.fields.figures.reproduced}}">
</figure>{{/if}}
{{#if record.fields.figures.diff}}<figure style="flex:1 1 0;min-width:0;margin:0">
<figcaption style="font-weight:600">Diff: red only published, cyan only reproduced</figcaption>
<img class="jd-diff" style="width:100%;height:auto" src="{{record.fields.figures.diff}}">
</figure>{{/if}}
</div>
"""
CALIBRATION_SUFFIX = "-calibration"
#: Metadata values kept as strings: Argilla gives terms back exactly as logged.
YES, NO = "yes", "no"


def dataset_name(rubric_id: str, version: str, *, calibration: bool = False) -> str:
    return f"{rubric_id}-{version}" + (CALIBRATION_SUFFIX if calibration else "")


def record_id(claim_key: str, rubric_id: str, version: str) -> str:
    return str(uuid.uuid5(RECORD_NAMESPACE, f"{claim_key}|{ref_name(rubric_id, version)}"))


def in_calibration(claim_key: str, *, share: float, seed: int) -> bool:
    """A stable, seeded draw: the same claim always lands in the same dataset for a given seed."""
    if share <= 0:
        return False
    digest = hashlib.sha256(f"{seed}|{claim_key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def agent_name(judge: str) -> str:
    """Argilla's suggestion agents allow letters, digits and -_:./ and spaces only."""
    return re.sub(r"[^A-Za-z0-9\-_:./ ]", "-", judge).strip("-") or "judge"


def guidelines(rubric: Rubric) -> str:
    lines = [f"# {rubric.title}", f"Rubric **{rubric.ref_name}** (`{rubric.content_hash()[:19]}`), "
             f"for {rubric.describe_scope()}", "", rubric.instructions.strip(), "",
             "## Criteria", ""]
    for criterion in rubric.criteria:
        tags = [criterion.scale.value, f"weight {criterion.weight:g}"]
        if criterion.gate:
            tags.append("gate: failing it fails the claim")
        if criterion.applies_if:
            tags.append(f"only for claims with {criterion.applies_if.describe()}: leave it empty "
                        f"otherwise")
        lines += [f"### {criterion.id} ({'; '.join(tags)})", "", criterion.question.strip(), ""]
        for level, text in sorted((criterion.levels or {}).items()):
            passing = " (pass)" if criterion.pass_at and level >= criterion.pass_at else ""
            lines.append(f"- **{level}**{passing}: {text}")
        if criterion.guidance.strip():
            lines += ["", criterion.guidance.strip()]
        lines.append("")
    lines += ["## Overall verdict", "",
              f"Pass when the claim meets the rubric (weighted score at least "
              f"{rubric.pass_threshold:g}, no failed gate). Use the note for anything the "
              f"organizers should know.", "",
              "Calibration records (metadata `blind: yes`) show no AI assessment: answer them "
              "without looking anything up in the review dataset."]
    return "\n".join(lines)


def shows_overlay(rubric: Rubric) -> bool:
    """Figure datasets from 1.1.0 on show the chart-reading overlay. A dataset's fields never
    change once it exists, so 1.0.0 datasets keep their design."""
    return rubric.applies_to == "figure" and rubric.version_tuple >= (1, 1, 0)


def shows_proof(rubric: Rubric) -> bool:
    """falsification-audit datasets show the proof script and the log of its run: reviewers judge
    what the proof printed (a field of their own, so that other datasets keep their design)."""
    return rubric.id == FALSIFICATION_AUDIT


#: Characters of the proof script and of each log of its run shown to reviewers.
MAX_PROOF_FIELD_CHARS = 6000


def _file_head_and_tail(path: Path, limit: int) -> str:
    with path.open("rb") as handle:
        text = handle.read(MAX_LOG_BYTES).decode("utf-8", errors="replace")
    if len(text) <= limit:
        return text
    return text[:limit // 2] + "\n[... cut ...]\n" + text[-(limit // 2):]


def proof_text(claim: ClaimInput | None) -> str:
    """The proof script and the cited logs of its runs (plain text: participant content)."""
    if claim is None:
        return ""
    evidence = claim.claim.evidence
    parts = []
    runs = proof_runs(claim)
    for index, name in enumerate(evidence.logs):
        run = next((r for r in runs if r.log == name), None)
        path = claim.evidence_paths.get(f"logs[{index}]")
        if run is None or path is None or not path.is_file():
            continue
        state = f"failed: {run.failure}" if run.failure else "ran to its end"
        parts.append(f"=== log {name} ({state}) ===\n"
                     + _file_head_and_tail(path, MAX_PROOF_FIELD_CHARS))
    proof = claim.evidence_paths.get("proof_script")
    if evidence.proof_script and proof is not None and proof.is_file():
        parts.append(f"=== proof script {evidence.proof_script} ===\n"
                     + _file_head_and_tail(proof, MAX_PROOF_FIELD_CHARS))
    elif evidence.proof_script:
        parts.append(f"=== proof script {evidence.proof_script}: not found in the submission ===")
    if not runs:
        parts.append("(no cited log shows a run of the proof script)")
    return "\n\n".join(parts)


def build_settings(rubric: Rubric, *, calibration: bool, overlap: int,
                   design: str = SEPARATE) -> rg.Settings:
    fields: list[Any] = [
        rg.TextField(name="claim", title="Claim", use_markdown=True),
        rg.TextField(name="justification", title="Participant's justification (untrusted text)",
                     use_markdown=False, required=False),
    ]
    # Figures are optional even in figure datasets: a claim whose figure could not be read is
    # still reviewed (its claim text says why there is no image).
    if design == SIDE_BY_SIDE:
        fields.append(rg.CustomField(name=FIGURES_FIELD, template=FIGURES_TEMPLATE,
                                     title="Published, reproduced and diff, side by side",
                                     required=False))
    else:
        fields += [
            rg.ImageField(name="published_figure", title="Published figure (reference)",
                          required=False),
            rg.ImageField(name="reproduced_figure", title="Reproduced figure", required=False),
            rg.ImageField(name="diff", title="Visual diff: red only in the published, cyan only "
                                             "in the reproduced, dark in both", required=False)]
    fields.append(rg.TextField(name="ai_assessment", title="AI assessment (empty on blind records)",
                               use_markdown=True, required=False))
    if shows_proof(rubric):
        fields.append(rg.TextField(name="proof", use_markdown=False, required=False,
                                   title="Proof script and the log of its run (untrusted text)"))
    if shows_overlay(rubric):
        fields.append(rg.ImageField(name="overlay", required=False,
                                    title="Data read back from both charts (wide pale: published, "
                                          "thin dark: reproduced, grey: unmatched)"))
    questions: list[Any] = []
    for criterion in rubric.criteria:
        description = criterion.guidance.strip() or None
        if criterion.scale is Scale.binary:
            questions.append(rg.LabelQuestion(
                name=criterion.id, labels={YES: YES, NO: NO}, title=criterion.question.strip(),
                description=description, required=False))
        elif criterion.scale is Scale.categorical:
            questions.append(rg.LabelQuestion(
                name=criterion.id, labels={c: c for c in criterion.categories or []},
                title=criterion.question.strip(), description=description, required=False))
        else:
            levels = "\n".join(f"{level}: {text}" for level, text in
                               sorted((criterion.levels or {}).items()))
            questions.append(rg.RatingQuestion(
                name=criterion.id, values=sorted(criterion.levels or {}),
                title=criterion.question.strip(),
                description=(levels + ("\n\n" + description if description else "")),
                required=False))
    questions += [
        rg.LabelQuestion(name=OVERALL_QUESTION, labels=OVERALL_LABELS,
                         title="Overall, does the claim pass this rubric?", required=True),
        rg.TextQuestion(name=NOTE_QUESTION, title="Note for the organizers (optional)",
                        required=False, use_markdown=False),
    ]
    metadata = [
        rg.TermsMetadataProperty(name="claim_id", title="claim"),
        rg.TermsMetadataProperty(name="submission_id", title="submission"),
        rg.TermsMetadataProperty(name="paper_id", title="paper"),
        rg.TermsMetadataProperty(name="kind", title="claim kind"),
        rg.TermsMetadataProperty(name="verdict", title="participant's verdict"),
        rg.TermsMetadataProperty(name="judge", title="AI judge"),
        rg.TermsMetadataProperty(name="ai_outcome", title="AI outcome"),
        rg.TermsMetadataProperty(name="rubric_hash", title="rubric hash"),
        rg.TermsMetadataProperty(name="blind", title="blind (calibration)"),
        rg.TermsMetadataProperty(name="flags", title="flags"),
        rg.TermsMetadataProperty(name="priority_reasons", title="why reviewed first"),
        rg.FloatMetadataProperty(name="priority", title="review priority (1 = first)"),
        rg.FloatMetadataProperty(name="coverage", title="AI coverage"),
        rg.FloatMetadataProperty(name="ssim", title="SSIM"),
        rg.FloatMetadataProperty(name="edge_f1", title="edge F1"),
    ]
    return rg.Settings(fields=fields, questions=questions, metadata=metadata,
                       guidelines=guidelines(rubric),
                       distribution=rg.TaskDistribution(min_submitted=overlap if calibration
                                                         else 1),
                       allow_extra_metadata=False)


# --- priority ---------------------------------------------------------------------------------

#: What raises a claim's review priority (the highest applicable weight wins).
PRIORITY_WEIGHTS = {
    "reference_mismatch": 1.0,
    # `judging merge` met two final lines that disagree (conflicts.json): a person decides.
    "merge_conflict": 0.95,
    "copy": 0.9,
    "identical_rerender": 0.9,
    "near_identical": 0.9,
    "duplicate_figure": 0.9,
    "copied_justification": 0.85,
    # Consensus (judging consensus): a verdict against the other reproductions of its registry
    # claim, a copy that adds no support, a value far from the others. It raises priority and
    # informs reviewers; it never decides anything.
    "contradicts_consensus": 0.85,
    "not_independent": 0.85,
    "value_outlier": 0.7,
    "untrusted_criteria": 0.8,
    "unreadable": 0.8,
    "judge_disagreement": 0.75,
    "self_contradiction": 0.7,
    # A falsification goes to people first unless its audit passes and the consensus of the
    # other reproductions supports it (`falsification_supported`); then it is "falsified".
    "falsification_unconfirmed": 0.95,
    "falsified": 0.6,
    "order_inconsistent": 0.6,
    "low_confidence": 0.5,
    "unscored_criteria": 0.4,
}


@dataclass(frozen=True)
class Priority:
    value: float
    reasons: list[str]


def falsification_supported(audit: Judgment | None) -> bool:
    """Whether a falsified claim may wait its turn: its falsification-audit line passes and the
    consensus of the registry claim's other reproductions agrees with it (the signal
    `consensus.agrees`, which `judging consensus` provides). Without either it goes to people
    first."""
    if audit is None or audit.aggregate is None or audit.aggregate.outcome is not Outcome.passed:
        return False
    agrees = audit.signals.get(CONSENSUS_AGREES)
    return agrees is not None and agrees.status is SignalStatus.ok and agrees.value is True


def review_priority(judgments: list[Judgment], *, untrusted: set[str] = frozenset(),
                    claim_flags: Collection[str] = (),
                    falsification_supported: bool = False) -> Priority:
    """How urgently people should look at a claim under one rubric, with the reasons.
    `claim_flags`: the names of the claim input's flags (intake's, e.g. a logbook page that
    contradicts itself: `self_contradiction`). `falsification_supported`: see the function of
    that name; a falsified claim without that support is `falsification_unconfirmed`."""
    reasons: set[str] = set(claim_flags) & {"self_contradiction"}
    for judgment in judgments:
        names = {f.name for f in judgment.flags}
        reasons |= names & {"reference_mismatch", "copy", "identical_rerender",
                            "near_identical", "order_inconsistent", "duplicate_figure", "copied_justification",
                            "merge_conflict", *CONSENSUS_FLAGS}
        if judgment.status is LineStatus.error:
            reasons.add("unreadable")
        if judgment.verdict is Verdict.falsified:
            reasons.add("falsified" if falsification_supported else "falsification_unconfirmed")
        for answer in judgment.answers:
            if answer.status is AnswerStatus.unscored:
                reasons.add("unscored_criteria")
            elif answer.status is AnswerStatus.scored:
                if answer.agreement is not None and answer.agreement < 1:
                    reasons.add("judge_disagreement")
                if answer.confidence is not None and answer.confidence < 0.6:
                    reasons.add("low_confidence")
                if answer.criterion_id in untrusted:
                    reasons.add("untrusted_criteria")
    ordered = sorted(reasons, key=lambda r: -PRIORITY_WEIGHTS[r])
    value = PRIORITY_WEIGHTS[ordered[0]] if ordered else 0.1
    # More reasons break ties between claims with the same strongest reason.
    value = min(1.0, value + 0.01 * (len(ordered) - 1)) if ordered else value
    return Priority(value=round(value, 3), reasons=ordered)


# --- records -----------------------------------------------------------------------------------


def _escape_markdown(text: str) -> str:
    # Participant or script text shown inside our Markdown: shown as text, never an image, a
    # link, raw HTML or an autolink that a reviewer's browser would fetch or follow.
    return for_markdown(text)


def _code(text: str) -> str:
    """Participant text as inline code (a name, a path): no backtick of its own closes it."""
    return "`" + " ".join(text.replace("`", "'").split()) + "`"


def claim_markdown(claim: ClaimInput | None, judgment: Judgment) -> str:
    key = judgment.claim
    lines = [f"**{_escape_markdown(key.claim_id)}** · submission {_code(key.submission_id)} · "
             f"paper {_code(str(judgment.paper_id))}"]
    if claim is None:
        lines.append("_(the claim's content is not in the run directory)_")
        return "\n\n".join(lines)
    c = claim.claim
    lines.append(f"{c.kind.value} claim ({_escape_markdown(c.source or 'no source')}) · "
                 f"participant's verdict: **{c.verdict.value if c.verdict else 'not found'}** · "
                 f"reference: "
                 f"{claim.reference.value}")
    lines.append("> " + _escape_markdown(c.statement).replace("\n", "\n> "))
    if c.kind is ClaimKind.number:
        lines.append(f"reported **{c.reported_value}** · reproduced **{c.reproduced_value}**"
                     + (f" · tolerance {c.tolerance.describe()}" if c.tolerance else ""))
    if c.kind is ClaimKind.table and c.values:
        rows = ["| cell | reported | reproduced |", "|---|---|---|"]
        rows += [f"| {_escape_markdown(v.name)} | {v.reported} | {v.reproduced} |"
                 for v in c.values]
        lines.append("\n".join(rows))
    rerun = rerun_text([judgment])
    if rerun:
        lines.append(f"**Re-run** (organizers, sandboxed): {_escape_markdown(rerun)}")
    evidence = c.evidence
    files = [f"script {_code(evidence.script)}" if evidence.script else None,
             f"scripts {', '.join(_code(x) for x in evidence.scripts)}" if evidence.scripts
             else None,
             f"logs {', '.join(_code(x) for x in evidence.logs)}" if evidence.logs else None,
             f"agent traces {', '.join(_code(x) for x in evidence.traces)}" if evidence.traces
             else None,
             f"proof script {_code(evidence.proof_script)}" if evidence.proof_script else None,
             f"problem kind **{evidence.problem_kind.value}**" if evidence.problem_kind else None]
    lines.append("evidence: " + (", ".join(f for f in files if f) or "none"))
    extracted = extracted_markdown(claim)
    if extracted:
        lines.append(extracted)
    if judgment.status is LineStatus.error and judgment.reason:
        lines.append(f"**Could not be judged automatically:** {_escape_markdown(judgment.reason)}")
    flags = sorted({(f.name, f.detail) for f in judgment.flags})
    if flags:
        lines.append("**Flags**\n" + "\n".join(f"- {name}: {_escape_markdown(detail)}"
                                               for name, detail in flags))
    return "\n\n".join(lines)


def extracted_markdown(claim: ClaimInput) -> str:
    """The fields read from a page's prose (a logbook claim): how each was found and its quote;
    the fields looked for and not found, with the reason. Empty for a manifest's claim."""
    c = claim.claim
    if not c.provenance and not c.absent:
        return ""
    lines = ["**Extracted from the page**" + (f" ({_escape_markdown(claim.origin)})"
                                              if claim.origin else "")]
    for name, p in sorted(c.provenance.items()):
        value = getattr(c, name, None)
        shown = getattr(value, "value", value)
        lines.append(f"- `{name}`" + (f" = {_escape_markdown(str(shown))}" if shown is not None
                                      else "")
                     + f" ({p.how}{', ' + _escape_markdown(p.place) if p.place else ''}): "
                     + "“" + _escape_markdown(p.quote).replace("\n", " ") + "”")
    for name, reason in sorted(c.absent.items()):
        lines.append(f"- `{name}`: absent ({_escape_markdown(reason)})")
    if c.source_verdict:
        lines.append("- participant's own label (verbatim): “"
                     + _escape_markdown(c.source_verdict).replace("\n", " ") + "”")
    return "\n".join(lines)


def justification_text(claim: ClaimInput | None) -> str:
    if claim is None:
        return ""
    c = claim.claim
    parts = [c.justification or "(no justification given)"]
    if c.scale_note:
        parts.append(f"Scale note: {c.scale_note}")
    if c.evidence.problem_note:
        parts.append(f"Problem note: {c.evidence.problem_note}")
    return "\n\n".join(parts)


def ai_assessment(judgment: Judgment) -> str:
    agg = judgment.aggregate
    lines = [f"**{judgment.judge}** · outcome **{agg.outcome.value if agg else '?'}**"
             + (f" · score {agg.score:.2f}" if agg and agg.score is not None else "")
             + (f" · coverage {agg.coverage:.0%}" if agg else "")]
    if judgment.reason:
        lines.append(f"_{_escape_markdown(judgment.reason)}_")
    # One item per criterion, not a table: Argilla shows this field in a narrow column, where a
    # four-column table with long rationales squeezed its headers to a letter per line.
    rows = ["**Criteria** (criterion: AI answer, confidence — rationale)"]
    # A reason several criteria share (the offline judge's "needs an LLM or a human") is one
    # item naming them all, with their count.
    unscored: dict[tuple[str, str], list[str]] = {}
    for answer in judgment.answers:
        if answer.status is not AnswerStatus.scored:
            unscored.setdefault((answer.status.value, answer.reason or ""), []).append(
                answer.criterion_id)
    for answer in judgment.answers:
        if answer.status is AnswerStatus.scored:
            shown = (YES if answer.value else NO) if isinstance(answer.value, bool) \
                else answer.value if isinstance(answer.value, str) else f"level {answer.value}"
            if answer.quote:
                # escaped with the rest of `shown` below
                shown += f" (quote: “{answer.quote[:200]}”)"
            confidence = f", confidence {answer.confidence:.2f}" \
                if answer.confidence is not None else ""
            text, criteria = answer.rationale, answer.criterion_id
        else:
            group = unscored.get((answer.status.value, answer.reason or ""))
            if not group or group[0] != answer.criterion_id:
                continue  # shown with the first criterion of its reason
            shown, confidence = answer.status.value.replace("_", " "), ""
            text = answer.reason or ""
            criteria = ", ".join(group) + (f" ({len(group)})" if len(group) > 1 else "")
        text = _escape_markdown(text).replace("\n", " ")[:600]
        rows.append(f"- `{criteria}`: **{_escape_markdown(str(shown))}**{confidence}"
                    + (f" — {text}" if text else ""))
    lines.append("\n".join(rows))
    signals = [f"- `{name}` = " + (f"{s.value:.4g}" if isinstance(s.value, float) else
                                   str(s.value).lower() if s.value is not None else
                                   f"absent ({_escape_markdown(s.reason or '')})")
               for name, s in sorted(judgment.signals.items())]
    if signals:
        lines.append("**Signals**\n" + "\n".join(signals))
    if judgment.chart_trace is not None:
        # What the chart reader read and why chart.same_data is what it is: why the AI answered
        # or abstained, beside the figures it read.
        lines.append("### Chart reading\n\n" + judgment.chart_trace.markdown())
    return "\n\n".join(lines)


@dataclass
class ReviewRecord:
    """One record to log, and where it goes."""

    dataset: str
    record: rg.Record
    claim_key: str
    blind: bool
    priority: Priority = field(default_factory=lambda: Priority(0.0, []))


def _suggestion_value(criterion: Criterion, value: bool | int | str) -> str | int:
    if criterion.scale is Scale.binary:
        return YES if value else NO
    if criterion.scale is Scale.categorical:
        return str(value)
    return int(value)


def design_of(fields: Collection[str]) -> str:
    """The design of an existing dataset, from its field names."""
    return SEPARATE if "published_figure" in fields else SIDE_BY_SIDE


def _data_uri(path: Path) -> str:
    """An image file as a data URI (the custom field's value is text, not a file)."""
    kind = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp",
            ".gif": "gif"}.get(path.suffix.lower(), "png")
    return f"data:image/{kind};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def build_record(rubric: Rubric, judgment: Judgment, claim: ClaimInput | None, *,
                 blind: bool, priority: Priority, run_root: Path,
                 design: str = SEPARATE) -> rg.Record:
    key = str(judgment.claim)
    fields: dict[str, Any] = {"claim": claim_markdown(claim, judgment),
                              "justification": justification_text(claim),
                              "ai_assessment": "" if blind else ai_assessment(judgment)}
    if shows_proof(rubric):
        fields["proof"] = proof_text(claim)
    artifacts = judgment.artifacts
    images = [("published_figure", artifacts.published),
              ("reproduced_figure", artifacts.reproduced), ("diff", artifacts.diff)]
    if shows_overlay(rubric):
        images.append(("overlay", artifacts.overlay))
    for name, relative in images:
        path = run_root / relative if relative else None
        if path is not None and path.is_file():
            fields[name] = path
    own = claim.reproduced_path if claim is not None else None
    if "reproduced_figure" not in fields and own is not None and own.is_file():
        try:  # a logbook's figure, decoded into the run directory by judging
            own.resolve().relative_to(run_root.resolve())
            fields["reproduced_figure"] = own
        except ValueError:
            pass
    if design == SIDE_BY_SIDE:
        row = {kind: _data_uri(fields.pop(name)) for kind, name in
               (("published", "published_figure"), ("reproduced", "reproduced_figure"),
                ("diff", "diff")) if name in fields}
        if row:
            fields[FIGURES_FIELD] = row
    signal = judgment.signals
    metadata: dict[str, Any] = {
        "claim_id": judgment.claim.claim_id, "submission_id": judgment.claim.submission_id,
        "paper_id": judgment.paper_id or "?", "kind": judgment.kind.value if judgment.kind else "?",
        "verdict": judgment.verdict.value if judgment.verdict else "?",
        "judge": judgment.judge if not blind else "hidden",
        "ai_outcome": (judgment.aggregate.outcome.value if judgment.aggregate else "?")
        if not blind else "hidden",
        "rubric_hash": judgment.rubric.hash if judgment.rubric else "?",
        "blind": YES if blind else NO,
        "flags": sorted({f.name for f in judgment.flags}) or ["none"],
        "priority_reasons": priority.reasons or ["none"],
        "priority": priority.value,
        "coverage": judgment.aggregate.coverage if judgment.aggregate else 0.0,
    }
    for name, signal_name in (("ssim", "pixel.ssim"), ("edge_f1", "pixel.edge_f1")):
        value = signal.get(signal_name)
        if value is not None and isinstance(value.value, float):
            metadata[name] = value.value
    suggestions = []
    if not blind:
        agent = agent_name(judgment.judge)
        for answer in judgment.answers:
            if answer.status is not AnswerStatus.scored or answer.value is None:
                continue
            criterion = rubric.criterion(answer.criterion_id)
            suggestions.append(rg.Suggestion(
                question_name=criterion.id, value=_suggestion_value(criterion, answer.value),
                score=answer.confidence, agent=agent))
        outcome = judgment.aggregate.outcome.value if judgment.aggregate else None
        if outcome in ("pass", "fail"):
            suggestions.append(rg.Suggestion(question_name=OVERALL_QUESTION, value=outcome,
                                             agent=agent))
    return rg.Record(id=record_id(key, rubric.id, rubric.version), fields=fields,
                     metadata=metadata, suggestions=suggestions)

