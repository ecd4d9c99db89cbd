"""report.html: a human-readable view of a run (figures side by side, signals, every answer)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from judging.atomic import write_text_atomic
from judging.consensus import load_consensus
from judging.errors import RubricError
from judging.models import (
    AnswerStatus,
    ClaimInput,
    Judgment,
    LineStatus,
    NotAddressed,
    Outcome,
    ReferenceOrigin,
    answer_texts,
    for_terminal,
    natural_key,
    rerun_text,
)
from judging.rubrics import Rubric, RubricLibrary
from judging.rundir import (
    RunStore,
    claim_chart_trace,
    flags_by_claim,
    judgments_with_flags,
    read_not_addressed,
    with_flags,
)
from judging.signal_catalogue import CATALOGUE


def outcome_label(judgment: Judgment) -> str:
    if judgment.status is LineStatus.error:
        return "error"
    return judgment.aggregate.outcome.value if judgment.aggregate else judgment.status.value


def answered_text(judgment: Judgment) -> str | None:
    """`2 of 7 criteria answered`: the criteria a line answered of those that apply (an
    incomplete line's score is the mean of the answered few, so it is not shown as a score)."""
    applicable = [a for a in judgment.answers if a.status is not AnswerStatus.not_applicable]
    if not applicable:
        return None
    scored = sum(a.status is AnswerStatus.scored for a in applicable)
    return f"{scored} of {len(applicable)} criteria answered"


def aggregate_text(judgment: Judgment) -> str:
    """A line's outcome as the summary shows it: `pass 1.00 (100%)`, `fail 0.75 (73%)`, `fail
    0.92 (100%), gate failed: independent_reproduction`, or `incomplete: 2 of 7 criteria
    answered` (never a score that reads as a perfect one)."""
    text = outcome_label(judgment)
    agg = judgment.aggregate
    if agg is None or judgment.status is LineStatus.error:
        return text
    if agg.outcome is Outcome.incomplete:
        answered = answered_text(judgment)
        return f"{text}: {answered}" if answered else text
    if agg.score is not None:
        text += f" {agg.score:.2f} ({agg.coverage:.0%})"
    if agg.outcome is Outcome.failed and agg.failed_gates:
        # a score above the pass threshold that fails reads as a contradiction without its gate
        text += f", gate failed: {', '.join(agg.failed_gates)}"
    return text


def claim_order(key: str) -> tuple:
    """Claim keys (`submission::claim`) in natural order: c2 before c10."""
    submission, _, claim = key.partition("::")
    return natural_key(submission), natural_key(claim)


def summary_rows(judgments: list[Judgment]) -> list[dict[str, str]]:
    """One row per claim, one column per rubric (outcome, score, coverage; what an incomplete
    line answered), in natural order of claim keys."""
    rubric_ids = sorted({j.rubric.id for j in judgments if j.rubric is not None})
    by_claim: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        by_claim[str(judgment.claim)].append(judgment)
    return [summary_row(by_claim[key], rubric_ids) for key in sorted(by_claim, key=claim_order)]


def summary_row(lines: list[Judgment], rubric_ids: list[str]) -> dict[str, str]:
    """The summary of one claim's lines: submission, claim, kind, verdict, a column per rubric
    id of `rubric_ids` (outcome, score, coverage) and its flags."""
    first = lines[0]
    row = {"submission": first.claim.submission_id, "claim": first.claim.claim_id,
           "kind": first.kind.value if first.kind else "?",
           "verdict": first.verdict.value if first.verdict else "?"}
    judges = {x.judge for x in lines}
    for rubric_id in rubric_ids:
        cells = []
        for j in lines:
            if j.rubric is None or j.rubric.id != rubric_id:
                continue
            text = aggregate_text(j)
            cells.append(text if len(judges) == 1 else f"{j.judge}: {text}")
        row[rubric_id] = "; ".join(cells) or "-"
    errors = [j.reason for j in lines if j.rubric is None and j.reason]
    if errors:
        row[rubric_ids[0] if rubric_ids else "outcome"] = "error"
    flags = {f.name for j in lines for f in j.flags}
    if any(j.reference is ReferenceOrigin.participant for j in lines):
        flags.add("participant-supplied reference")
    row["flags"] = ", ".join(sorted(flags))
    return row


def not_addressed_by_submission(records: list[NotAddressed]) -> dict[str, list[NotAddressed]]:
    """The run's not-addressed registry claims, grouped by submission (sorted), in registry
    order within one."""
    grouped: dict[str, list[NotAddressed]] = defaultdict(list)
    for record in records:
        grouped[record.submission_id].append(record)
    return dict(sorted(grouped.items(), key=lambda item: natural_key(item[0])))


def submission_warnings(claims: Mapping[str, ClaimInput] | Iterable[ClaimInput]
                        ) -> dict[str, list[str]]:
    """The warnings intake kept on each submission header (a logbook's orphan pages, dangling
    links, index.md and logbook.json disagreeing), by submission (sorted)."""
    found: dict[str, list[str]] = {}
    for content in (claims.values() if isinstance(claims, Mapping) else claims):
        header = content.submission
        if header.warnings and header.submission_id not in found:
            found[header.submission_id] = list(header.warnings)
    return dict(sorted(found.items()))


class _Rubrics(dict):
    """The rubrics the run used, by `id@version#hash`, loaded as lines name them, to show each
    criterion's question (best effort: a rubric that is gone from the folder only costs the
    questions, the answers are still shown)."""

    def __init__(self, rubrics_dir: Path | None):
        super().__init__()
        try:
            self._library: RubricLibrary | None = RubricLibrary(rubrics_dir)
        except RubricError:
            self._library = None
        self._seen: set[str] = set()

    def add(self, judgments: Iterable[Judgment]) -> None:
        for ref in {j.rubric for j in judgments if j.rubric is not None}:
            name = f"{ref}#{ref.hash}"
            if name in self._seen or self._library is None:
                continue
            self._seen.add(name)
            try:
                self[name] = self._library.judged(ref)
            except RubricError:
                continue


def _rubrics_for(judgments: list[Judgment], rubrics_dir: Path | None) -> dict[str, Rubric]:
    rubrics = _Rubrics(rubrics_dir)
    rubrics.add(judgments)
    return rubrics


def anchor(key: str) -> str:
    """A claim's element id in the report: stable across builds (a link into a page stays)."""
    return "c-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _section(key: str, lines: list[Judgment], claim: ClaimInput | None, *, root: Path,
             image_url: Callable[[str | None], str | None]) -> dict:
    """What the template shows of one claim (see `_claim.html.j2`)."""
    figures = next((j.artifacts for j in lines if j.artifacts.diff), None)
    signals = next((j.signals for j in lines if j.signals), {})
    trace = claim_chart_trace(lines)
    flags = {(f.name, f.detail) for j in lines for f in j.flags}

    def own_figure() -> str | None:
        """A claim's reproduced figure written in the run directory (a logbook's decoded figure)
        when no figure-match drew the figures side by side."""
        path = claim.reproduced_path if claim is not None else None
        if path is None or not path.is_file():
            return None
        try:
            relative = path.resolve().relative_to(root.resolve())
        except ValueError:
            return None
        return image_url(relative.as_posix())

    return {
        "key": key, "anchor": anchor(key), "first": lines[0], "lines": lines,
        "flags": sorted(flags), "claim": claim,
        "figures": ({name: image_url(getattr(figures, name))
                     for name in ("published", "reproduced", "diff", "overlay")}
                    if figures else None),
        "signals": signals,
        # The chart reading trace, open where nothing was confirmed (the AI abstains there).
        "reading": trace.sections() if trace is not None else None,
        "reading_open": trace is not None and not trace.confirmed,
        "own_figure": None if figures else own_figure(),
        "rerun": rerun_text(lines),
    }


@dataclass
class DecisionsView:
    """What the report shows of the final decisions (`_decisions.html.j2`): the leaderboard of
    `judging leaderboard` with its rule, each claim's final outcome (single page only), or why
    they are stale (and the command that refreshes them)."""

    stale: str | None
    board: list[dict[str, Any]]
    rule: list[str]
    finals: list[Any]
    columns: tuple[str, ...] = ("rank", "submission", "paper", "passed", "failed",
                                "not_addressed", "conflicts", "undecided", "upheld",
                                "pass_rate_95", "rank_95")

    @staticmethod
    def cell(column: str, row: Mapping[str, Any]) -> str:
        from judging.resolve import rank_text

        return rank_text(row) if column == "rank" else str(row.get(column, ""))

    @staticmethod
    def label(final: Any) -> str:
        from judging.resolve import outcome_label

        if final.conflicts:
            return f"{final.outcome} (reviewer conflict)"
        return outcome_label(final.outcome, final.ai_outcome)


def decisions_view(run_dir: Path, *, with_finals: bool) -> DecisionsView:
    """The final decisions as `judging resolve` wrote them (final.jsonl), ranked as `judging
    leaderboard` ranks them; stale (said so, with the command) when labels or judgments are
    newer, absent until the first resolve."""
    from judging.resolve import ClaimDecision, rule_lines, run_leaderboard, stale_decisions
    from judging.rundir import RunPaths, read_jsonl

    stale = stale_decisions(run_dir)
    path = RunPaths(Path(run_dir)).final
    if not path.is_file():
        return DecisionsView(stale=stale, board=[], rule=[], finals=[])
    board = run_leaderboard(run_dir)
    finals = sorted(read_jsonl(path, ClaimDecision),
                    key=lambda f: claim_order(str(f.claim))) if with_finals else []
    return DecisionsView(stale=stale, board=board.submissions,
                         rule=[*rule_lines(board.submissions), *board.uncertainty],
                         finals=finals)


def _inert(value: object) -> object:
    """Every text the templates print, without escape sequences, control characters or the
    bidirectional overrides (`for_terminal`): a participant's statement carrying U+202E showed
    "‮0.19" as "91.0" to the reader of the report. Autoescaping still follows; HTML we built
    (Markup) stays HTML."""
    if isinstance(value, Markup):
        return Markup(for_terminal(str(value)))
    return for_terminal(value) if isinstance(value, str) else value


def _environment() -> Environment:
    return Environment(loader=PackageLoader("judging.report", "templates"),
                       autoescape=select_autoescape(["html", "j2"]), trim_blocks=True,
                       lstrip_blocks=True, finalize=_inert)


def _relative_url(target: Path, page_dir: Path) -> str:
    return os.path.relpath(target, page_dir).replace(os.sep, "/")


def write_html_report(run_dir: Path, *, out: Path | None = None, rubrics_dir: Path | None = None,
                      paged: bool | None = None) -> Path:
    """Write the report of a run and return the page to open. Up to SINGLE_PAGE_MAX claims it is
    one page; above (or with `paged=True`) an index page and, in a folder beside it, the index
    data and pages of CLAIMS_PER_PAGE claims (see `write_paged_report`)."""
    store = RunStore.open(run_dir, create=False)
    out = out or store.paths.report
    if paged is None:
        paged = store.claim_count() > SINGLE_PAGE_MAX
    if paged:
        return write_paged_report(store, out=out, rubrics_dir=rubrics_dir)
    judgments = store.latest()
    rubrics = _rubrics_for(judgments, rubrics_dir)

    def image_url(relative: str | None) -> str | None:
        if relative is None:
            return None
        return _relative_url(store.root / relative, out.parent)

    # The consensus as it is now (computed afresh when consensus.json is older than the
    # decisions it counts), and its flags on the claims.
    consensus = load_consensus(store.root)
    judgments = judgments_with_flags(store.root, judgments, consensus=consensus)
    claims: dict[str, list[Judgment]] = defaultdict(list)
    for judgment in judgments:
        claims[str(judgment.claim)].append(judgment)
    claim_inputs = store.claims()
    sections = [_section(key, lines, claim_inputs.get(key), root=store.root, image_url=image_url)
                for key, lines in sorted(claims.items(), key=lambda kv: claim_order(kv[0]))]
    html = _environment().get_template("report.html.j2").render(
        consensus=consensus,
        decisions=decisions_view(store.root, with_finals=True),
        anchors={section["key"]: section["anchor"] for section in sections},
        info=store.info, sections=sections, rows=summary_rows(judgments),
        rubrics=rubrics, catalogue=CATALOGUE, outcome_label=outcome_label,
        answered_text=answered_text, answer_texts=answer_texts,
        claims=claim_inputs, warnings=submission_warnings(claim_inputs),
        not_addressed=not_addressed_by_submission(read_not_addressed(store.root)))
    _remove_pages(out)  # a paged report written before is replaced by this one page
    write_text_atomic(out, html)
    return out


#: Above this many claims, `judging report` writes a paged report (one page of 36k claims would
#: be about 450 MB).
SINGLE_PAGE_MAX = 500
#: Claims per claim page, and index rows per screen of the index.
CLAIMS_PER_PAGE = 50
ROWS_PER_VIEW = 100
#: Index rows per data file.
ROWS_PER_SHARD = 5000
#: The fields of an index row, in order (the index page's script reads them by position).
ROW_FIELDS = ("key", "claim", "submission", "paper", "kind", "verdict", "cells", "outcomes",
              "flags", "page", "anchor")


def pages_dir(out: Path) -> Path:
    """The folder of a paged report's data and claim pages, beside its index page."""
    return out.with_name(out.stem + "_pages")


def _remove_pages(out: Path) -> None:
    folder = pages_dir(out)
    if folder.is_dir():
        shutil.rmtree(folder)


def _script(payload: object, *, assign: bool) -> str:
    """A data file the index page loads with a <script> tag (file:// pages cannot fetch())."""
    # "<" only inside JSON strings: escaped, so that no participant text can ever close a
    # script element, even if the data were inlined.
    data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).replace("<", "\\u003c")
    if assign:
        return f"window.JUDGING_REPORT = {data};\n"
    return f"window.JUDGING_REPORT.shards.push({data});\n"


def write_paged_report(store: RunStore, *, out: Path, rubrics_dir: Path | None = None) -> Path:
    """A report for tens of thousands of claims: `out` is an index (filter by submission, paper,
    outcome and flag, search by claim id, screens of ROWS_PER_VIEW rows) whose data are script
    files in `pages_dir(out)`, next to the claim pages (CLAIMS_PER_PAGE claims each, sorted by
    claim key, figures loaded lazily from the run's own image files). One claim's lines are in
    memory at a time. Built in a fresh folder that replaces the old one when complete."""
    env = _environment()
    claim_template = env.get_template("claims_page.html.j2")
    final = pages_dir(out)
    building = out.with_name(f".{final.name}.building-{secrets.token_hex(4)}")
    (building / "claims").mkdir(parents=True)
    rubrics = _Rubrics(rubrics_dir)
    side_flags = flags_by_claim(store.root)
    rubric_ids = sorted({ident[1].split("@")[0] for ident in store.identities()
                         if ident[1] is not None})
    total = store.claim_count()
    pages = max(1, -(-total // CLAIMS_PER_PAGE))
    page_names = [f"claims/p-{n:05d}.html" for n in range(pages)]
    claims_dir = final / "claims"  # where the pages will be: image paths are relative to it

    def image_url(relative: str | None) -> str | None:
        if relative is None:
            return None
        return _relative_url(store.root / relative, claims_dir)

    submissions: set[str] = set()
    papers: set[str] = set()
    flag_names: set[str] = set()
    outcome_names: set[str] = set()
    outcome_counts: Counter[str] = Counter()
    shard: list[list] = []
    shards: list[str] = []
    sections: list[dict] = []
    page = 0
    index_url = _relative_url(out, claims_dir)

    def flush_shard() -> None:
        name = f"index-{len(shards):04d}.js"
        write_text_atomic(building / name, _script(shard, assign=False))
        shards.append(name)
        shard.clear()

    def flush_page() -> None:
        nonlocal page
        html = claim_template.render(
            info=store.info, sections=sections, rubrics=rubrics, catalogue=CATALOGUE,
            outcome_label=outcome_label, answered_text=answered_text,
            answer_texts=answer_texts, page=page, pages=pages,
            total=total,
            first_index=page * CLAIMS_PER_PAGE, index_url=index_url,
            previous_url=os.path.basename(page_names[page - 1]) if page > 0 else None,
            next_url=os.path.basename(page_names[page + 1]) if page + 1 < pages else None)
        write_text_atomic(building / page_names[page], html)
        sections.clear()
        page += 1

    for key, lines in store.latest_by_claim():
        lines = [with_flags(j, side_flags) for j in lines]
        rubrics.add(lines)
        claim = store.claim(key)
        sections.append(_section(key, lines, claim, root=store.root, image_url=image_url))
        row = summary_row(lines, rubric_ids)
        outcomes = sorted({outcome_label(j) for j in lines})
        outcome_names.update(outcomes)
        outcome_counts.update(outcome_label(j) for j in lines if j.rubric is not None)
        flags = sorted(set(filter(None, row["flags"].split(", "))))
        first = lines[0]
        submissions.add(first.claim.submission_id)
        papers.add(first.paper_id or "?")
        flag_names.update(flags)
        shard.append([key, first.claim.claim_id, first.claim.submission_id, first.paper_id or "?",
                      row["kind"], row["verdict"], [row[r] for r in rubric_ids], outcomes,
                      flags, page, anchor(key)])
        if len(shard) >= ROWS_PER_SHARD:
            flush_shard()
        if len(sections) >= CLAIMS_PER_PAGE:
            flush_page()
    if sections or page == 0:
        flush_page()
    if shard or not shards:
        flush_shard()
    write_text_atomic(building / "meta.js", _script({
        "fields": ROW_FIELDS, "rubrics": rubric_ids,
        "pages": [f"{final.name}/{n}" for n in page_names],  # relative to the index page
        "submissions": sorted(submissions), "papers": sorted(papers),
        "outcomes": sorted(outcome_names),
        "flags": sorted(flag_names), "shards": []}, assign=True))
    not_addressed = not_addressed_by_submission(read_not_addressed(store.root))
    warnings = submission_warnings(store.iter_claims())
    submissions_url = None
    consensus = load_consensus(store.root)
    if not_addressed or warnings or (consensus and consensus.claims):
        # The consensus tables of the registry claims go with the submission notes: one page
        # beside the index (their rows name claim keys, searchable there).
        write_text_atomic(building / "submissions.html", env.get_template(
            "submissions_page.html.j2").render(info=store.info, warnings=warnings,
                                               not_addressed=not_addressed,
                                               consensus=consensus, anchors={},
                                               index_url=_relative_url(out, final)))
        submissions_url = f"{final.name}/submissions.html"
    # The data and pages go in place first, then the index that points at them.
    old = out.with_name(f".{final.name}.old-{secrets.token_hex(4)}")
    if final.exists():
        final.rename(old)
    building.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    html = env.get_template("index.html.j2").render(
        info=store.info, total=total, submissions=len(submissions), papers=len(papers),
        pages=pages, per_page=CLAIMS_PER_PAGE, outcomes=sorted(outcome_counts.items()),
        columns=["claim", "submission", "paper", "kind", "verdict", *rubric_ids, "flags"],
        meta_url=f"{final.name}/meta.js", shard_urls=[f"{final.name}/{n}" for n in shards],
        page_urls=[f"{final.name}/{n}" for n in page_names], rows_per_view=ROWS_PER_VIEW,
        submissions_url=submissions_url,
        decisions=decisions_view(store.root, with_finals=False))
    write_text_atomic(out, html)
    return out
