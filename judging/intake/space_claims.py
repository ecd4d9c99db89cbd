"""The claims of a free-form Space (issue 26; moved out of space.py for issue 40): found in its
reports by structure (`freeform.read_reports`), else by the logbook rules (claim pages, claims
tables, numbered lists, `## Claim N` sections), else the whole report as one claim when only an
overall verdict is declared; then each claim's facts from what the Space declares beside its
reports (the `short_description`'s label for its only claim, results files and logs, the script
its reports run, its figure) and the claim input every run reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from judging.errors import UnsafePathError
from judging.intake.engine import Material
from judging.intake.extract import (
    Extraction,
    Label,
    Value,
    choose_values,
    decide_verdict,
    place_kind,
    text_labels,
    toy_scale,
)
from judging.intake.freeform import (
    HUNDREDFOLD_BAND,
    Reading,
    keep_single_numbers,
    read_already,
    report_page,
)
from judging.intake.logbook import (
    Cell,
    FoundClaim,
    Logbook,
    Page,
    extract_page,
    find_claims,
    kind_of,
    statement,
)
from judging.intake.paths import open_confined
from judging.intake.results import declared_values
from judging.models import MAX_NOTE_CHARS, FieldProvenance, Flag


class SpaceFiles(Protocol):
    """What this module reads of `space.SpaceFiles` (space.py imports this module)."""

    folder: Path
    readme: str | None
    body: str
    reports: list[tuple[str, str]]
    results: list[str]
    logs: list[str]
    traces: list[str]
    errors: list[tuple[str, str]]
    scripts: list[str]
    images: list[str]

    @property
    def short_description(self) -> str | None: ...

    def texts(self) -> list[tuple[str, str]]: ...

#: Bounded like `logbook.figures._MD_IMAGE`; a command starts on its own line (`^\s*` read every
#: following blank line again from each one: quadratic).
_MD_IMAGE = re.compile(r"!\[(?:[^\]!]|!(?!\[))*\]\((?P<target>[^)\s\]]+)(?:\s+\"[^\"]*\")?\)")
_COMMAND = re.compile(r"(?m)^[ \t]*(?:\$[ \t]*)?(?:uv run |python3? |bash |sh )(?:-m\s+)?"
                      r"(?P<script>[\w./-]+\.(?:py|sh))\b")


@dataclass
class SpaceFacts:
    """What a Space declares beside its reports."""

    results_whole: list[Value] = field(default_factory=list)
    results_by_claim: dict[int, list[Value]] = field(default_factory=dict)
    logs: list[Value] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    script: str | None = None


def space_facts(files: SpaceFiles, names: list[str]) -> SpaceFacts:
    """What the Space declares beside its reports: the values of its results files and logs,
    its traces of the paper (`names`: the paper's and the Space's), the script it runs."""
    whole, by_claim, logs = declared_values(files.folder, files.results, files.logs, files.errors)
    return SpaceFacts(whole, by_claim, logs=logs, script=main_script(files),
                      traces=traces_of_paper(files.folder, files.traces, names))


def find_space_claims(files: SpaceFiles, title: str, reading: Reading, *,
                      verdict_places: frozenset[str], value_places: frozenset[str],
                      ) -> tuple[list[FoundClaim], FoundClaim | None]:
    """(the claims, the whole-report claim when the report is one claim); the paper's own
    claims the reports state (`Reading.stated`) and those stated in prose follow the claims
    read by structure, unless the LLM read them: a claim stated in prose stays a statement
    when the LLM lists none of its sentences (it failed, or missed it), never dropped."""
    found = list(reading.claims)
    if not found:  # the logbook's rules over the reports as pages
        logbook = Logbook(root=files.folder, folder=files.folder, manifest={}, metadata={},
                          readme=files.readme or "", index_text=files.body, title=title,
                          pages=[report_page(rel, text) for rel, text in files.reports],
                          order_from="folder listing", index_origin="README.md")
        found = find_claims(logbook, verdict_places=verdict_places, value_places=value_places)
    whole = whole_report(files, title) if not found else None
    if whole is not None:  # else the report as one claim, when it declares a verdict
        return [whole], whole
    return found + [c for c in reading.stated if not read_already(c, found)
                    and not _read_by_llm(c, found)], None


def _read_by_llm(stated: FoundClaim, found: list[FoundClaim]) -> bool:
    """Whether the LLM listed a sentence of this paragraph stated in prose (`prose.py` keeps the
    line of its quote)."""
    return stated.place == "prose" and any(
        k.place == "prose" and k.prose.strip() and k.prose.strip() in stated.prose
        for k in found)


def whole_report(files: SpaceFiles, title: str) -> FoundClaim | None:
    """The Space's report as one claim, when it numbers no claim but declares a verdict."""
    if not space_labels(files):
        return None
    page = Page(slug="README", path=Path("README.md"), title=title, text=files.body,
                origin="README.md")
    page.cells = [Cell(type="markdown", meta={}, body=files.body, start=0)]
    return FoundClaim(page, None, None, files.body, title, Extraction(), place="page")


def space_labels(files: SpaceFiles) -> list[Label]:
    labels: list[Label] = []
    short = files.short_description
    if short:
        head = re.split(r"[:.;\u2014\u2013-]", short, maxsplit=1)[0]
        head_labels = text_labels(f"Verdict: {head}")
        if head_labels:
            labels.append(Label(head_labels[0].text, short, "short_description", 1,
                                elsewhere=True))
    labels += text_labels(files.body, tier_bold=2)
    return labels


def apply_space_facts(found: list[FoundClaim], whole: FoundClaim | None, files: SpaceFiles,
                      facts: SpaceFacts, *, verdict_places: frozenset[str],
                      value_places: frozenset[str]) -> None:
    """Each claim's verdict from the Space's own label (its only claim) and its values from the
    results files and logs."""
    single = len(found) == 1
    for claim in found:
        if claim is whole:
            # the report read as one claim is prose: a sentence pairing both sides anywhere in
            # it may be about another result, and values stated in prose are the LLM's
            # (`--extract`), never guessed offline
            extract_page(claim, verdict_places=verdict_places,
                         value_places=value_places - PROSE_VALUE_PLACES)
        ex = claim.extraction
        keep_single_numbers(ex)
        labels = space_labels(files) if (claim is whole or single) else []
        labels = [lb for lb in labels if place_kind(lb.place) in verdict_places]
        short = [lb for lb in labels if lb.place == "short_description"]
        if short and (claim is whole or ex.verdict is None):
            # the short description is the Space's own label: with the report's, for the
            # Space's only claim (they are compared, never one preferred by position)
            own = labels if claim is whole else short
            ex.verdict, ex.source_verdict, ex.contradiction, ex.changed = None, None, None, None
            ex.provenance.pop("verdict", None)
            ex.absent.pop("verdict", None)
            decide_verdict(ex, own, files.body)
        extra = facts.results_by_claim.get(claim.number, []) if claim.number is not None \
            else []
        if single:
            extra = extra + facts.results_whole + facts.logs
        extra = [v for v in extra if place_kind(v.place) in value_places]
        if extra:
            for name in ("reported_value", "reproduced_value"):
                if getattr(ex, name.split("_")[0]) is None:
                    ex.absent.pop(name, None)
            agreed, disputed = _undisputed(ex, extra)
            had = {side: getattr(ex, side) for side in ("reported", "reproduced")}
            choose_values(ex, agreed, None, claim.prose)
            ex.absent.update(disputed)
            _one_scale(ex, had)
        toy_scale(ex, claim.prose + "\n" + (files.short_description or ""))


#: The places of a value that are prose, whatever page they are on: read from a page of
#: structure (a claim's section), not from a whole report read as one claim.
PROSE_VALUE_PLACES = frozenset({"sentence pairing both"})


def _one_scale(ex: Extraction, had: dict[str, float | None]) -> None:
    """The side the Space's results files or logs gave is absent when the two sides are a
    fraction against a percent (`HUNDREDFOLD_BAND`: "0.931" against "94.0"): on which scale
    the number is is not declared. The claim's number is the paper's, so when the files gave
    both, ours goes. `had`: each side's value before the files were read (a side the report
    itself gave stays)."""
    rep, our = ex.reported, ex.reproduced
    if rep is None or our is None:
        return
    small, big = sorted((abs(rep), abs(our)))
    if not (small <= 1 < big and HUNDREDFOLD_BAND[0] <= 100 * small / big <= HUNDREDFOLD_BAND[1]):
        return
    side = "reproduced" if had["reproduced"] is None else "reported"
    if had[side] is None:
        setattr(ex, side, None)
        ex.provenance.pop(f"{side}_value", None)
        ex.absent[f"{side}_value"] = (
            f"{rep:g} against {our:g}: a fraction against a percent, the scale of this side's "
            f"number is not declared")


def _undisputed(ex: Extraction, values: list[Value]) -> tuple[list[Value], dict[str, str]]:
    """(the values of the sides the Space's files agree on, the reason each other side is
    absent): a side the claim has no value for, given differently by two of its results files
    or logs, is absent with both quoted (which file is the later one is not declared)."""
    out: list[Value] = []
    disputed: dict[str, str] = {}
    for side in ("reported", "reproduced"):
        these = [v for v in values if v.side == side]
        by_value = {v.value: v for v in these}
        if len(by_value) > 1 and getattr(ex, side) is None \
                and len({v.place for v in these}) > 1:
            a, b = list(by_value.values())[:2]
            disputed[f"{side}_value"] = (
                f"the Space's files disagree: {a.value:g} ({a.place}), {b.value:g} "
                f"({b.place})")[:MAX_NOTE_CHARS]
            continue
        out += these
    return out, disputed


#: A dataset named as one submission's trace (`<user>/pythia-agent-trace`, `<user>/x-trace`):
#: every trace in it is the Space's, whatever it names (a user's `hf-chat-traces` or
#: `ml-intern-sessions` holds all their sessions: only those naming the paper count).
_OWN_TRACE_DATASET = re.compile(r"(?i)(?:^|[-_.])(?:agent[-_])?trace$")


def own_trace_datasets(traces: list[str]) -> list[str]:
    """The traces of linked datasets (`.judging/linked/datasets/OWNER/NAME/...`) named as one
    submission's trace."""
    return [t for t in traces
            if t.startswith(".judging/linked/datasets/") and len(t.split("/")) > 5
            and _OWN_TRACE_DATASET.search(t.split("/")[4])]


def main_script(files: SpaceFiles) -> str | None:
    """The script the reports run (`python reproduce.py` in a code block), else the only one."""
    for _, text in files.texts():
        for m in _COMMAND.finditer(text):
            name = m.group("script").lstrip("./")
            if name in files.scripts:
                return name
    top = [s for s in files.scripts if "/" not in s and s not in ("app.py", "setup.py")]
    return top[0] if len(top) == 1 else None


def material(found: FoundClaim, files: SpaceFiles, facts: SpaceFacts, *, whole: bool
             ) -> Material:
    """What the Space holds for one claim beside its report's extraction: the figure its text
    shows, the Space's logs, script and traces, the reports' disagreements on it; a claim that
    is the `whole` report is numbered by it."""
    base = Path(found.page.origin or "README.md").parent
    shown = [re.sub(r"^\./", "", (base / m.group("target").split("#", 1)[0]).as_posix())
             for m in _MD_IMAGE.finditer(found.prose)]  # the first image of it the Space has
    figure = next((rel for rel in shown if rel in files.images), None)
    out = Material(kind="figure" if figure else kind_of(found), statement=statement(found),
                   figure=figure, justification=found.prose or files.body,
                   scale_note=found.extraction.toy_note(), logs=files.logs,
                   script=facts.script, traces=facts.traces, carrier="Space",
                   no_figure="the Space carries no published figure",
                   flags=[Flag(name="reports_disagree", detail=note[:MAX_NOTE_CHARS])
                          for note in found.warnings])
    if whole:
        out.provenance["claim_id"] = FieldProvenance(
            how="order", quote=found.title[:MAX_NOTE_CHARS],
            place="the Space's report as one claim")
    return out


#: Where `sources.fetch_linked` puts the datasets a Space links (only judging writes there: the
#: Space's own copy of this folder is never downloaded).
LINKED = ".judging/linked"
#: A linked trace is searched this far for the paper's or the Space's name.
MAX_MENTION_BYTES = 5 * 1024 * 1024


def traces_of_paper(folder: Path, traces: list[str], names: list[str]) -> list[str]:
    """The traces of the Space's own files, and those of linked datasets that name the paper
    or the Space (in the dataset's name or the trace's text: a user's session dataset holds
    every session of theirs)."""
    out = [t for t in traces if not t.startswith(LINKED + "/")]
    wanted = [n for n in names if n]
    for rel in traces:
        if not rel.startswith(LINKED + "/"):
            continue
        dataset = "/".join(rel.split("/")[3:5])
        if any(n in dataset for n in wanted) or _mentions(folder, rel, wanted):
            out.append(rel)
    return list(dict.fromkeys(out + own_trace_datasets(traces)))


def _mentions(folder: Path, rel: str, names: list[str]) -> bool:
    try:  # confined and never blocking (a FIFO is no trace)
        with open_confined(folder, rel, links=True) as handle:
            head = handle.read(MAX_MENTION_BYTES)
    except (OSError, UnsafePathError):
        return False
    return any(n.encode() in head for n in names if n)
