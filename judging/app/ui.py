"""The Gradio dashboard: leaderboard, claims and the claim view, the review queue, and the API.

Participant and model text is escaped before it reaches the page, as in the HTML report: every
panel is HTML this module writes with `html.escape` around each value, never Markdown (Markdown
would render a participant's links and images). Tables are plain-text dataframes.

The API functions (`AppApi`) are Gradio API endpoints with docstrings and type hints, so with
`mcp_server=True` an agent gets them as MCP tools: verdicts, one claim, the consensus of a
registry claim, the leaderboard and the review queue. The UI's own events are private.
"""

from __future__ import annotations

import html
import json
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

# Gradio reads this at import; a dashboard on a closed network must not phone home.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

# Imported at the top (not inside build_app) because Gradio finds its special arguments
# (gr.SelectData, gr.Request) by resolving the handlers' annotations in this module's globals.
import gradio as gr  # noqa: E402
import pandas as pd  # noqa: E402

from judging.app.consensus import ConsensusRow, ConsensusView, consensus_view  # noqa: E402
from judging.app.data import AppData, ClaimRecord, JudgmentView  # noqa: E402
from judging.app.live import LiveData  # noqa: E402
from judging.models import CONSENSUS_FLAGS, natural_key, shown_reasons  # noqa: E402
from judging.resolve import (  # noqa: E402
    CONSENSUS_COLUMNS,
    PAPER_COLUMNS,
    PARTICIPANT_COLUMNS,
    SUBMISSION_COLUMNS,
    rank_text,
    rule_lines,
)

ALL = "(all)"
CLAIM_COLUMNS = ["submission", "claim", "paper", "kind", "verdict", "outcome", "upheld",
                 "figure_match", "flags"]
#: The registry claims' consensus, as `judging leaderboard` writes leaderboard_consensus.csv.
REGISTRY_COLUMNS = list(CONSENSUS_COLUMNS)
BOARDS = {"submissions": "submission", "participants": "participant", "papers": "paper",
          "registry claims": "claim"}
#: The columns of the consensus panel's reproductions (the browser test reads them by name).
REPRODUCTION_COLUMNS = ["submission", "agent", "reported", "reproduced", "z-score", "verdict",
                        "scale note", "figure match", "outcome", "upheld", "independent",
                        "counted", "flags"]

CSS = """
.jd-claim h2 {margin: 0 0 .3rem 0}
.jd-claim blockquote {border-left: 4px solid #999; margin: .5rem 0; padding: .2rem .8rem}
.jd-claim pre, .jd-judgments pre {white-space: pre-wrap; word-break: break-word; margin: 0;
  font: inherit}
.jd-badge {display: inline-block; padding: 0 .5rem; border-radius: .6rem; margin-right: .3rem;
  background: #eee; color: #222; font-size: 90%}
.jd-pass {background: #d4f4d4} .jd-fail {background: #f8d0d0} .jd-pending, .jd-incomplete
  {background: #f6ecc8} .jd-error {background: #e0d0f0}
.jd-table {border-collapse: collapse; width: 100%; margin: .3rem 0 .8rem 0}
.jd-table td, .jd-table th {border: 1px solid #ccc; padding: 3px 6px; vertical-align: top;
  text-align: left}
.jd-table th {background: #f0f0f0}
.jd-muted {color: #666}
.jd-verified {background: #d4f4d4} .jd-falsified {background: #f8d0d0} .jd-none
  {background: #e8e8e8}
.jd-flag {background: #f8d0d0; font-weight: 600}
.jd-outlier {color: #a00000; font-weight: 600}
.jd-consensus ul {margin: .2rem 0 .6rem 1.2rem; padding: 0}
.jd-consensus {overflow-x: auto}
.jd-reproductions {font-size: 90%}
.jd-wrap {overflow-wrap: anywhere} .jd-badge {white-space: nowrap}
/* A header never breaks inside a word (`table_widths` makes every column wide enough). */
#board .header-content span, #claims .header-content span
  {word-break: keep-all; overflow-wrap: normal}
.jd-caption {font-weight: 600; margin: 0 0 .2rem 0}
/* The figures' buttons (fullscreen, download) in a row above the image, not on its top corner,
   where they hide titles and legends. */
.jd-figure .icon-button-wrapper {position: static !important; display: flex;
  justify-content: flex-end; box-shadow: none; margin: 0 0 .2rem 0}
"""


def e(value: Any) -> str:
    """Escaped text of any value (None as an empty string)."""
    return html.escape("" if value is None else str(value), quote=True)


def badge(text: str | None) -> str:
    text = text or "?"
    return f"<span class='jd-badge jd-{e(text)}'>{e(text)}</span>"


def outcome_badge(outcome: str | None, label: str | None) -> str:
    """An outcome's badge, coloured by what it reads as ("AI pass, awaiting review" in the
    pass colour, marked provisional)."""
    label = label or outcome or "?"
    css = next((k for k in ("pass", "fail", "incomplete") if label.startswith(f"AI {k}")),
               outcome or "?")
    extra = " jd-provisional" if label.startswith("AI ") else ""
    return f"<span class='jd-badge jd-{e(css)}{extra}'>{e(label)}</span>"


def table(header: list[str], rows: list[list[str]], *, css: str = "jd-table") -> str:
    """An HTML table of cells that are already HTML (escape each value when building them)."""
    head = "".join(f"<th>{e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table class='{css}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# --- pure views (the UI and the tests call these) -----------------------------------------------


def _matches(text: str | None, *values: Any) -> bool:
    needle = (text or "").strip().lower()
    return not needle or any(needle in str(v).lower() for v in values if v is not None)


def board_columns(by: str) -> list[str]:
    """The columns of one leaderboard table: `by` is submission, participant, paper or claim
    (the registry claims' consensus: it ranks nobody, so it has no rank)."""
    return {"claim": REGISTRY_COLUMNS, "paper": PAPER_COLUMNS,
            "participant": PARTICIPANT_COLUMNS}.get(by, SUBMISSION_COLUMNS)


def leaderboard_table(data: AppData, *, by: str = "submission", search: str = "",
                      paper: str = ALL) -> list[list[Any]]:
    """Leaderboard rows (ranked as `judging leaderboard`: `=2` for a tie, `-` for a submission
    not counted), filtered by text and paper; `by` "claim": the consensus per registry claim,
    as `judging leaderboard` tabulates it."""
    rows = {"paper": data.by_paper, "claim": data.by_registry_claim,
            "participant": data.by_participant}.get(by, data.by_submission)
    columns = board_columns(by)
    shown = []
    for row in rows:
        if paper not in (ALL, "", None) and by != "participant" and row.get("paper") != paper:
            continue
        cells = [rank_text(row) if c == "rank" else row.get(c) for c in columns]
        if not _matches(search, *cells[1 if by != "claim" else 0:]):
            continue
        shown.append(cells)
    return shown


#: Column widths of the dashboard's tables, from the longest text of each column (monospace).
CHAR_PX, CELL_PADDING_PX, MAX_COLUMN_PX = 9, 34, 320


def table_widths(columns: list[str], rows: list[list[Any]]) -> list[str]:
    """Each column as wide as its header and its longest word (at most MAX_COLUMN_PX; longer
    cells wrap between words): Gradio otherwise shares the width out evenly, and a narrow
    column breaks its header a letter per line."""
    widths = []
    for index, column in enumerate(columns):
        longest = max([len(column), *(max((len(w) for w in str(row[index]).split()),
                                          default=0) for row in rows
                                      if row[index] is not None)])
        widths.append(f"{min(MAX_COLUMN_PX, longest * CHAR_PX + CELL_PADDING_PX)}px")
    return widths


def claims_table(data: AppData, *, search: str = "", outcome: str = ALL) -> list[list[Any]]:
    """Every claim (natural order of ids: c2 before c10), its outcome as a person reads it
    ("AI pass, awaiting review" while it waits); `outcome` filters on that text."""
    shown = []
    for record in sorted(data.claims.values(), key=lambda r: (natural_key(r.submission_id),
                                                              natural_key(r.claim_id))):
        if outcome not in (ALL, "", None) and record.outcome_label != outcome:
            continue
        cells = [record.submission_id, record.claim_id, record.paper_id, record.kind,
                 record.verdict, record.outcome_label, record.upheld,
                 record.figure_match_label(), ", ".join(record.flags)]
        if _matches(search, *cells, record.statement):
            shown.append(cells)
    return shown


def _value_rows(record: ClaimRecord) -> list[list[str]]:
    rows = []
    if record.reported_value is not None or record.reproduced_value is not None:
        rows.append([e(record.claim_id), e(record.reported_value), e(record.reproduced_value),
                     e(record.tolerance)])
    for value in record.values or []:
        rows.append([e(value.get("name")), e(value.get("reported")), e(value.get("reproduced")),
                     e(value.get("tolerance") or record.tolerance)])
    return rows


def claim_html(record: ClaimRecord) -> str:
    """The claim: ids, our decision, the participant's statement, justification and numbers."""
    parts = [f"<div class='jd-claim'><h2>{e(record.claim_id)} · {e(record.submission_id)}</h2>",
             "<p>", f"paper {e(record.paper_id)}",
             f" — {e(record.paper_title)}" if record.paper_title else "",
             f"<br>kind {badge(record.kind)} verdict {badge(record.verdict)} "
             f"outcome {outcome_badge(record.outcome, record.outcome_label)} "
             f"upheld {badge(record.upheld)}"
             + (f" final verdict {badge(record.final_verdict)}" if record.final_verdict else "")]
    if record.outcomes:
        parts.append("<br>per rubric: " + " ".join(
            f"{e(ref)} {outcome_badge(outcome, record.rubric_label(ref))}"
            for ref, outcome in record.outcomes.items()))
    if record.decided_by:
        parts.append(f"<br>decided by {e(', '.join(record.decided_by))}")
    for ref, conflict in record.conflicts.items():
        parts.append(f"<br><b class='jd-conflict'>reviewer conflict</b> on {e(ref)}: "
                     f"{e(conflict)}; decided fail until a further reviewer or an adjudicator "
                     f"settles it")
    if record.agent:
        parts.append(f"<br>agent {e(record.agent)}")
    if record.reference:
        parts.append(f"<br>reference: {e(record.reference)}")
    parts.append("</p>")
    parts.append(f"<blockquote class='jd-statement'><pre>{e(record.statement)}</pre></blockquote>")
    if record.source_verdict:
        parts.append(f"<p>participant's words for the verdict: <q>{e(record.source_verdict)}</q>"
                     "</p>")
    if record.flags:
        parts.append("<p>flags: " + " ".join(badge(f) for f in record.flags) + "</p>")
    values = _value_rows(record)
    if values:
        parts.append(table(["value", "reported", "reproduced", "tolerance"], values))
    if record.rerun:
        parts.append(f"<p class='jd-rerun'><b>Re-run</b> (organizers, sandboxed): "
                     f"{e(record.rerun)}</p>")
    parts.append("<h3>Justification</h3>")
    parts.append(f"<pre class='jd-justification'>{e(record.justification) or '(none)'}</pre>")
    if record.scale_note:
        parts.append(f"<h3>Scale note</h3><pre>{e(record.scale_note)}</pre>")
    if record.problem_kind:
        parts.append(f"<p>problem kind: {e(record.problem_kind)}</p>")
    if not record.figures:
        parts.append("<p class='jd-muted'>No figures for this claim.</p>")
    parts.append("</div>")
    return "".join(parts)


def _judgment_html(view: JudgmentView) -> str:
    score = "" if view.score is None else f" score {view.score:.2f}"
    coverage = "" if view.coverage is None else f" coverage {view.coverage:.0%}"
    head = (f"<summary><b>{e(view.rubric)}</b> · judge {e(view.judge)}"
            + (f" · sample {view.sample}" if view.sample else "")
            + f" · {badge(view.outcome or view.status)}{e(score)}{e(coverage)}</summary>")
    parts = [f"<details open class='jd-judgment'>{head}"]
    if view.reason:
        parts.append(f"<p>{e(view.status)}: {e(view.reason)}</p>")
    if view.answers:
        rows = []
        reasons = shown_reasons([None if a.status == "scored" else a.reason
                                 for a in view.answers], [a.criterion for a in view.answers])
        for answer, reason in zip(view.answers, reasons):
            why = answer.rationale if answer.status == "scored" else (reason or "")
            confidence = "" if answer.confidence is None else f"{answer.confidence:.2f}"
            rows.append([e(answer.criterion), e(answer.status), e(answer.value), e(confidence),
                         f"<pre>{e(why)}</pre>"])
        parts.append(table(["criterion", "status", "answer", "confidence",
                            "rationale / reason"], rows))
    if view.signals:
        rows = [[e(s.name), e(s.value if s.status == "ok" else s.status), e(s.reason)]
                for s in view.signals]
        parts.append(table(["signal", "value", "reason"], rows))
    if view.flags:
        parts.append(table(["flag", "detail"], [[e(n), e(d)] for n, d in view.flags]))
    parts.append("</details>")
    return "".join(parts)


def judgments_html(record: ClaimRecord) -> str:
    if not record.judgments:
        return "<p class='jd-muted'>No judgment lines.</p>"
    return ("<div class='jd-judgments'><h3>Judgments</h3>"
            + "".join(_judgment_html(v) for v in record.judgments) + "</div>")


def figure_match_cell(final: str | None, ai: str | None) -> str:
    """The final figure-match outcome, and the AI's own where it differs (pending review)."""
    if final is None and ai is None:
        return ""
    shown = badge(final) if final else ""
    if ai and ai != final:
        shown += f"<span class='jd-muted'> · AI {e(ai)}</span>"
    return shown


def _float(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _z_cell(row: ConsensusRow) -> str:
    """Each value's modified z-score against the other reproductions (an outlier in bold)."""
    cells = []
    for value in row.values:
        name = "" if value.get("name") == "value" else f"{e(value.get('name'))}: "
        z = value.get("z")
        shown = "n/a" if z is None else f"{z:+.2f}"
        css = " class='jd-outlier'" if value.get("outlier") else ""
        cells.append(f"<span{css}>{name}{e(shown)}"
                     f"{' (outlier)' if value.get('outlier') else ''}</span>")
    return "<br>".join(cells)


def _flags_cell(row: ConsensusRow) -> str:
    """Every flag of the reproduction; the consensus stage's as badges."""
    return " ".join(badge_flag(f) if f in CONSENSUS_FLAGS else e(f) for f in row.flags)


def badge_flag(name: str) -> str:
    return f"<span class='jd-badge jd-flag'>{e(name)}</span>"


def _yes_no(value: bool | None, *, strong_no: bool = False) -> str:
    if value is None:
        return ""
    return "yes" if value else ("<b>no</b>" if strong_no else "no")


def _summary_html(view: ConsensusView, rows: int) -> str:
    if not view.registry:
        return (f"<p>{rows} claim(s) with this id; no consensus: {e(view.reason)}.</p>")
    verdict = view.verdict or "none"
    head = [f"consensus <span class='jd-badge jd-{e(verdict)}'>{e(verdict)}</span>"]
    if view.verdict is not None:
        head.append(f"support {view.support}")
    if view.agreement is not None:
        head.append(f"agreement {view.agreement:.0%} of {sum(view.votes.values())} counted")
    head.append(f"{view.independent} of {rows} reproduction(s) independent (a copy adds no "
                f"support)")
    votes = ", ".join(f"{n} {e(v)}" for v, n in view.votes.items()) or "none"
    parts = [f"<p class='jd-consensus-summary'>{' · '.join(head)}<br>counted verdicts "
             f"(independent, full-scale): {votes}"]
    if view.verdict is None:
        parts.append(f"<br>no consensus: {e(view.reason)}")
    parts.append("</p>")
    if view.spread:
        parts.append(table(
            ["value", "reported", "n", "median", "MAD", "tolerance floor", "range",
             "outliers"],
            [[e(s.name), e(_float(s.reported)), e(s.n), e(_float(s.median)), e(_float(s.mad)),
              e(_float(s.floor)),
              e(f"{s.minimum:g}..{s.maximum:g}" if s.minimum is not None
                and s.maximum is not None else ""),
              e(", ".join(s.outliers))] for s in view.spread], css="jd-table jd-spread"))
    return "".join(parts)


def consensus_html(data: AppData, record: ClaimRecord) -> str:
    """The reproductions of the claim's registry claim: the consensus verdict, support,
    agreement and value spread (the consensus stage's), then one row per reproduction with its
    z-score and flags, and the details of the consensus flags."""
    view = consensus_view(data, record.claim_id)
    rows = view.rows if view is not None else []
    cells, details = [], []
    for row in rows:
        mark = " <b>(this one)</b>" if row.submission == record.submission_id else ""
        verdict = e(row.verdict) + (f" <span class='jd-muted'>({e(row.source_verdict)})</span>"
                                    if row.source_verdict else "") \
            + (" <span class='jd-badge'>toy</span>" if row.toy else "")
        independent = _yes_no(row.independent, strong_no=True)
        if row.copy_of:
            independent += f"<br><span class='jd-muted jd-wrap'>shares with " \
                           f"{e(', '.join(row.copy_of))}</span>"
        # Long words (ids, flag names, paths in a scale note) may break anywhere, so that the
        # table fits the panel; badges and short values keep whole.
        wrap = lambda html_text: f"<span class='jd-wrap'>{html_text}</span>"  # noqa: E731
        cells.append([wrap(e(row.submission)) + mark, wrap(e(row.agent)), e(row.reported),
                      e(row.reproduced), _z_cell(row), verdict, wrap(e(row.scale_note)),
                      figure_match_cell(row.figure_match, row.figure_match_ai),
                      badge(row.outcome), e(row.upheld), independent, _yes_no(row.counted),
                      wrap(_flags_cell(row))])
        details += [f"<li>{e(row.submission)}: {badge_flag(f['name'])} {e(f['detail'])}</li>"
                    for f in row.consensus_flags]
    summary = _summary_html(view, len(rows)) if view is not None else ""
    flagged = f"<p>Consensus flags (they raise review priority; they change no outcome):</p>" \
              f"<ul class='jd-consensus-flags'>{''.join(details)}</ul>" if details else ""
    return (f"<div class='jd-consensus'><h3>Reproductions of {e(record.claim_id)}</h3>"
            + summary + table(REPRODUCTION_COLUMNS, cells, css="jd-table jd-reproductions")
            + flagged + "</div>")


def queue_html(data: AppData, *, limit: int = 500) -> str:
    note = f"<p class='jd-muted'>{e(data.queue_note)}</p>" if data.queue_note else ""
    if data.queue is None:
        return note
    rows = []
    for item in data.queue[:limit]:
        claim_link = f"<a href='?claim={e(urllib.parse.quote(item.claim_key, safe=''))}'>" \
                     f"{e(item.claim_key)}</a>"
        link = (f"<a href='{e(item.url)}' target='_blank' rel='noopener noreferrer'>"
                f"open in Argilla</a>") if item.url else ""
        rows.append([e(f"{item.priority:.2f}"), e(", ".join(item.reasons) or "none"), claim_link,
                     e(item.rubric), e(item.dataset) + (" (blind)" if item.blind else ""),
                     f"<code>{e(item.record_id)}</code>", link])
    return note + table(["priority", "reasons", "claim", "rubric", "dataset", "record id",
                         "Argilla"], rows)


def board_rule_markdown(data: AppData) -> str:
    """What the leaderboard's order counts (the rule, and when no claim passes, so), how sure
    it is and what more review would buy (issue 42)."""
    return "\n\n".join([*rule_lines(data.by_submission), *data.uncertainty])


def header_markdown(data: AppData, *, problem: str | None = None) -> str:
    papers = {c.paper_id for c in data.claims.values()}
    text = (f"**{len(data.claims)} claim(s)** from {len(data.by_submission)} submission(s) on "
            f"{len(papers)} paper(s) · source `{data.origin}`")
    return "\n\n".join([text, *(f"*{note}*" for note in data.notes),
                         *([f"**{problem}**"] if problem else [])])


# --- the API (Gradio endpoints; MCP tools with mcp_server=True) ----------------------------------


def _json(value: Any) -> str:
    # JSON text, not Python objects: Gradio's MCP server sends a tool's result as str(result),
    # which for a list of dicts is a Python repr (None, True, single quotes), not JSON.
    return json.dumps(value, ensure_ascii=False, default=str)


class AppApi:
    """The functions agents call. Their docstrings and type hints are the API's documentation;
    each returns JSON text."""

    def __init__(self, data: AppData | LiveData):
        self.live = data if isinstance(data, LiveData) else LiveData.fixed(data)

    @property
    def data(self) -> AppData:
        """The current data (a run directory's as it is now)."""
        return self.live.current()

    def functions(self) -> list[Callable[..., Any]]:
        return [self.get_verdicts, self.get_claim, self.get_consensus, self.get_leaderboard,
                self.get_review_queue]

    def get_verdicts(self, submission: str = "", paper: str = "", claim_id: str = "") -> str:
        """The final verdict of every claim, optionally for one submission, paper or registry
        claim.

        Args:
            submission: a submission id (e.g. "alice/repro-neurips26-4821"); empty for all.
            paper: a paper id (e.g. "neurips26-4821"); empty for all.
            claim_id: a registry claim id (e.g. "neurips26-4821/c2"); empty for all.

        Returns:
            JSON: a list with one object per claim: claim_key, submission, claim_id, paper, kind, the participant's
            verdict, our outcome (pass, fail, incomplete, pending), ai_outcome (while pending:
            the AI's outcome, which ranks provisionally), label (e.g. "AI pass, awaiting
            review"), upheld (yes, no, pending), outcomes per rubric, who decided, flags.
        """
        rows = []
        for record in self.data.claims.values():
            if submission and record.submission_id != submission:
                continue
            if paper and record.paper_id != paper:
                continue
            if claim_id and record.claim_id != claim_id:
                continue
            rows.append({"claim_key": record.key, "submission": record.submission_id,
                         "claim_id": record.claim_id, "paper": record.paper_id,
                         "kind": record.kind, "verdict": record.verdict,
                         "outcome": record.outcome, "ai_outcome": record.ai_outcome,
                         "label": record.outcome_label, "upheld": record.upheld,
                         "final_verdict": record.final_verdict,
                         "outcomes": dict(record.outcomes),
                         "decided_by": list(record.decided_by), "flags": list(record.flags)})
        return _json(rows)

    def get_claim(self, claim_key: str) -> str:
        """One claim in full: statement, justification, numbers, decision and every judgment
        with its answers, rationales and signals.

        Args:
            claim_key: "SUBMISSION_ID::CLAIM_ID", as get_verdicts returns it.

        Returns:
            JSON: the claim as an object, or {"error": ...} when the key is unknown.
        """
        record = self.data.claims.get(claim_key)
        if record is None:
            return _json({"error": f"no claim {claim_key!r}; get_verdicts lists the claim keys"})
        out = asdict(record)
        out["figures"] = sorted(record.figures)
        return _json(out)

    def get_consensus(self, claim_id: str) -> str:
        """The consensus of one registry claim and every reproduction of it side by side.

        Args:
            claim_id: a registry claim id, e.g. "neurips26-4821/c1".

        Returns:
            JSON: an object: claim_id, registry (whether the consensus covers it), verdict (the
            consensus: verified, falsified or null), support, agreement, independent (the
            number of independent reproductions), votes, reason, spread (per value: median,
            mad, floor = the tolerance floor, n, minimum, maximum, outliers) and rows, one per
            reproduction: submission, agent, reported and reproduced values, values (each with
            its z-score and whether it is an outlier), verdict (and the participant's own
            words), toy scale, scale note, figure-match outcome (final and the AI's), final
            outcome, upheld, independent, counted, copy_of, flags and consensus_flags (name and
            detail: contradicts_consensus, value_outlier, not_independent). {"error": ...} when
            no claim has that id.
        """
        view = consensus_view(self.data, claim_id)
        if view is None:
            return _json({"error": f"no claim with id {claim_id!r}; get_verdicts lists them"})
        return _json(view.as_dict())

    def get_leaderboard(self, by: str = "submission") -> str:
        """The leaderboard, best first, as `judging leaderboard` computes it.

        Args:
            by: "submission", "participant", "paper", or "claim" (the consensus per registry
                claim).

        Returns:
            JSON: a list with one object per submission (participant, paper), best first: rank
            (equal for a tie, with tie true; null for a submission beyond its participant's
            paper limit), claims, addressed, passed, ai_passed (of which an AI pass awaiting
            review), failed, ai_failed, undecided, not_addressed, upheld, pass_rate, note. For
            "claim", one object per registry claim (unranked): reproductions, independent,
            verified, falsified, inconclusive, consensus, support, agreement, contradicting,
            value_outliers, spread.
        """
        data = self.data
        rows = {"claim": data.by_registry_claim, "paper": data.by_paper,
                "participant": data.by_participant}.get(by, data.by_submission)
        return _json([dict(row) for row in rows])

    def get_review_queue(self, limit: int = 50) -> str:
        """The claims waiting for people, highest review priority first (as `judging review
        push` ranks them).

        Args:
            limit: at most this many rows.

        Returns:
            JSON: a list with one object per (claim, rubric version): priority, reasons, claim_key, rubric, Argilla
            dataset, record id and URL; empty for a published dataset (no queue).
        """
        return _json([asdict(row) for row in (self.data.queue or [])[:max(0, int(limit))]])


# --- the Blocks ---------------------------------------------------------------------------------


def readable_figure(path: Path | None) -> tuple[Path | None, str | None]:
    """`path` when it is an image Pillow can read, else (None, why): one unreadable figure
    leaves its own place empty with the reason, never the whole claim view."""
    if path is None:
        return None, None
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.verify()
    except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return None, f"{path.name} cannot be read ({first[:160]})"
    return path, None


FIGURE_CAPTIONS = {"published": "published figure", "reproduced": "reproduced figure",
                   "diff": "diff"}


def claim_view(data: AppData, key: str | None) -> tuple[str, dict[str, Path | None], str, str]:
    """(claim panel, figures by kind, judgments panel, consensus panel) of one claim; the first
    claim in natural order when `key` names none."""
    record = data.claims.get(key or "") or (data.claims[claim_keys(data)[0]]
                                            if data.claims else None)
    if record is None:
        return "<p class='jd-muted'>No claims yet.</p>", dict.fromkeys(FIGURE_CAPTIONS), "", ""
    figures, problems = {}, []
    for kind in FIGURE_CAPTIONS:
        figures[kind], problem = readable_figure(record.figures.get(kind))
        if problem:
            problems.append(f"{kind}: {problem}")
    panel = claim_html(record)
    if problems:
        panel += ("<p class='jd-muted jd-figure-problems'>"
                  + "<br>".join(e(p) for p in problems) + "</p>")
    return panel, figures, judgments_html(record), consensus_html(data, record)


def claim_keys(data: AppData) -> list[str]:
    """The claim keys in natural order (c2 before c10)."""
    return sorted(data.claims, key=lambda k: tuple(natural_key(p) for p in k.split("::", 1)))


def build_app(data: AppData | LiveData):
    """The dashboard as a `gradio.Blocks` (not launched). With `LiveData` each page load shows
    the run directory as it is then (a reload after `review pull`, `resolve` or new judgments
    shows them, no restart)."""
    live = data if isinstance(data, LiveData) else LiveData.fixed(data)
    api = AppApi(live)
    first = live.current()
    private = {"api_visibility": "private", "queue": False}

    def papers_of(current: AppData) -> list[str]:
        return sorted({str(c.paper_id) for c in current.claims.values() if c.paper_id},
                      key=natural_key)

    def outcomes_of(current: AppData) -> list[str]:
        return sorted({c.outcome_label for c in current.claims.values()})

    def frame(rows: list[list[Any]], columns: list[str]):
        return gr.Dataframe(value=pd.DataFrame(rows, columns=columns),
                            column_widths=table_widths(columns, rows))

    def board(by: str, search: str, paper: str):
        mode = BOARDS.get(by, "submission")
        return frame(leaderboard_table(live.current(), by=mode, search=search, paper=paper),
                     board_columns(mode))

    def claim_list(search: str, outcome: str):
        return frame(claims_table(live.current(), search=search, outcome=outcome),
                     CLAIM_COLUMNS)

    def show(key: str | None):
        panel, figures, judgments, consensus = claim_view(live.current(), key)
        return (panel, figures["published"], figures["reproduced"], figures["diff"],
                judgments, consensus)

    def pick(table_value: pd.DataFrame, evt: gr.SelectData):
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        try:
            submission, claim_id = table_value.iloc[int(row)][["submission", "claim"]]
        except (IndexError, KeyError, ValueError, TypeError):
            return gr.update(), gr.update()
        return f"{submission}::{claim_id}", gr.Tabs(selected="claim")

    def refresh(by: str, search: str, paper: str, claim_search: str, outcome: str,
                key: str | None, request: gr.Request):
        """On each page load: everything as the run is now (and the claim of ?claim=)."""
        current = live.current()
        keys = claim_keys(current)
        by, search, claim_search = by or "submissions", search or "", claim_search or ""
        wanted = (request.query_params.get("claim") if request is not None else None) or ""
        opened = wanted if wanted in current.claims else (key if key in current.claims else
                                                          (keys[0] if keys else None))
        paper_choices, outcome_choices = [ALL, *papers_of(current)], [ALL, *outcomes_of(current)]
        paper = paper if paper in paper_choices else ALL
        outcome = outcome if outcome in outcome_choices else ALL
        stamp = (f"<p class='jd-muted' data-loaded='{e(live.read_at)}'>run read at "
                 f"{e(live.read_at)}</p>")
        return (header_markdown(current, problem=live.problem), stamp,
                board_rule_markdown(current), board(by, search, paper),
                gr.Dropdown(choices=paper_choices, value=paper),
                claim_list(claim_search, outcome),
                gr.Dropdown(choices=outcome_choices, value=outcome),
                gr.Dropdown(choices=keys, value=opened), *show(opened),
                queue_html(current),
                gr.Tabs(selected="claim") if wanted in current.claims else gr.update())

    keys = claim_keys(first)
    with gr.Blocks(title="judging dashboard") as app:
        gr.Markdown("# judging: organizer dashboard")
        header = gr.Markdown(header_markdown(first), elem_id="header")
        # Filled by the page-load refresh: a test (or a curious organizer) sees when the page
        # shows the run as it is now.
        loaded = gr.HTML("", elem_id="loaded")
        with gr.Tabs() as tabs:
            with gr.Tab("Leaderboard", id="leaderboard"):
                with gr.Row():
                    board_by = gr.Radio(list(BOARDS), value="submissions", label="rank",
                                        elem_id="board-by")
                    board_search = gr.Textbox(label="filter", placeholder="submission or paper",
                                              elem_id="board-search")
                    board_paper = gr.Dropdown([ALL, *papers_of(first)], value=ALL,
                                              label="paper", elem_id="board-paper")
                initial = leaderboard_table(first, by="submission")
                board_table = gr.Dataframe(
                    pd.DataFrame(initial, columns=board_columns("submission")),
                    column_widths=table_widths(board_columns("submission"), initial),
                    interactive=False, label="leaderboard (click a header to sort)",
                    elem_id="board", wrap=True)
                board_rule = gr.Markdown(board_rule_markdown(first), elem_id="board-rule")
                gr.Markdown("Pass rate = passed / (passed + failed + "
                            "not_addressed); ai_passed and ai_failed count the AI's outcomes "
                            "still awaiting review. *Participants*: each participant's best "
                            "submission per paper, within the event's paper limit. *Registry "
                            "claims*: the consensus of each claim of the registry (`judging "
                            "consensus`: the majority direction among independent, full-scale "
                            "reproductions when at least 3 give it and it holds more than half "
                            "of them); it ranks nobody and changes no outcome.")
            with gr.Tab("Claims", id="claims"):
                with gr.Row():
                    claim_search = gr.Textbox(label="filter",
                                              placeholder="submission, claim, paper, flag...",
                                              elem_id="claim-search")
                    claim_outcome = gr.Dropdown([ALL, *outcomes_of(first)], value=ALL,
                                                label="outcome", elem_id="claim-outcome")
                initial = claims_table(first)
                claim_table = gr.Dataframe(
                    pd.DataFrame(initial, columns=CLAIM_COLUMNS),
                    column_widths=table_widths(CLAIM_COLUMNS, initial), interactive=False,
                    label="claims (click a row to open it)", elem_id="claims", wrap=True)
            with gr.Tab("Claim", id="claim"):
                chosen = gr.Dropdown(keys, value=keys[0] if keys else None, label="claim",
                                     elem_id="claim-key", allow_custom_value=False)
                claim_panel = gr.HTML(elem_id="claim-panel")
                with gr.Row():
                    figures = []
                    for kind, caption in FIGURE_CAPTIONS.items():
                        with gr.Column():
                            # A caption above the image, not Gradio's label badge, which sits
                            # on the image's top left and hides titles and legends.
                            gr.HTML(f"<p class='jd-caption'>{e(caption)}</p>")
                            figures.append(gr.Image(show_label=False, type="filepath",
                                                    interactive=False, elem_id=f"fig-{kind}",
                                                    elem_classes=["jd-figure"]))
                consensus_panel = gr.HTML(elem_id="consensus-panel")
                judgments_panel = gr.HTML(elem_id="judgments-panel")
            with gr.Tab("Review queue", id="queue"):
                queue_panel = gr.HTML(queue_html(first), elem_id="queue-panel")

        claim_outputs = [claim_panel, *figures, judgments_panel, consensus_panel]
        for control in (board_by, board_paper):
            control.change(board, [board_by, board_search, board_paper], board_table, **private)
        board_search.change(board, [board_by, board_search, board_paper], board_table,
                            **private)
        claim_search.change(claim_list, [claim_search, claim_outcome], claim_table, **private)
        claim_outcome.change(claim_list, [claim_search, claim_outcome], claim_table, **private)
        claim_table.select(pick, [claim_table], [chosen, tabs], **private)
        chosen.change(show, [chosen], claim_outputs, **private)
        app.load(refresh, [board_by, board_search, board_paper, claim_search, claim_outcome,
                           chosen],
                 [header, loaded, board_rule, board_table, board_paper, claim_table, claim_outcome, chosen,
                  *claim_outputs, queue_panel, tabs], **private)
        for function in api.functions():
            gr.api(function, api_name=function.__name__)
    return app


def theme():
    """Gradio's default look with the system's fonts: the default theme fetches Google fonts,
    which a closed network (or a privacy-minded organizer) does not serve."""
    return gr.themes.Default(font=["system-ui", "sans-serif"],
                             font_mono=["ui-monospace", "monospace"])
