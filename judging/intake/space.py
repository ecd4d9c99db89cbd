"""Free-form Hugging Face Spaces as submissions, as the NeurIPS 2026 hackathon's participants
publish them: one Space per paper, named after the paper's arXiv id, holding a README with front
matter (title, tags, `short_description`), Markdown report(s), a results table or file, logs,
an environment file and the scripts; results and agent traces often in datasets the README links
(fetched beside the Space by `sources.fetch_linked`, under `.judging/linked/`).

`load_space(folder, out_dir=...)` reads the Space's files (each bad file is one error in our own
words and the rest is read: a huge README, a binary file named .md, front matter that is not
YAML, a link leaving the Space), finds the claims from the structure of its reports with the
logbook rules (claim pages, claims tables, numbered claims lists, `## Claim N` sections; a
single-page report's claim sections) and, when the reports number no claim but the Space
declares a verdict (its `short_description`, a Verdict line), takes the whole report as one
claim. Values and verdicts come only from declared places (`logbook.extract`), plus the Space's
results files (keys or columns naming the paper and the measurement) and logs; the short
description's label is the verdict of a Space's only claim.

Paper identity: an `arxiv:<id>` tag, a `paper-<id>` tag, an arXiv id in the Space's name, then
in its text; the registry maps aliases (arXiv id, event number, OpenReview id) to its own id.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judging._yaml import parse_document
from judging.errors import InputFileError, ManifestError, UnsafePathError
from judging.intake.freeform import read_reports, report_page
from judging.intake.identity import paper_identity
from judging.intake.logbook import (
    StructuredAsk,
    extraction_flags,
    fill_with_llm,
    in_our_words,
    submission_header,
)
from judging.intake.logbook.claims import (
    FoundClaim,
    extract_page,
    find_claims,
    kind_of,
    statement,
)
from judging.intake.logbook.extract import (
    VALUE_PLACES,
    VERDICT_PLACES,
    Extraction,
    Label,
    Value,
    choose_values,
    decide_verdict,
    json_values,
    key_side,
    output_values,
    place_kind,
    text_labels,
    toy_scale,
)
from judging.intake.logbook.reader import Cell, Logbook, Page
from judging.intake.manifest import LoadedSubmission, make_claim_input
from judging.intake.paths import confine
from judging.intake.registry import Registry
from judging.models import (
    MAX_NOTE_CHARS,
    Claim,
    ClaimKey,
    ClaimProblem,
    Evidence,
    FieldProvenance,
    Flag,
    SubmissionHeader,
)
from judging.traces import is_trace

log = logging.getLogger(__name__)

#: A Markdown report larger than this is not read (one error): a real report is tens of KB.
MAX_REPORT_BYTES = 2 * 1024 * 1024
#: A results file (JSON, CSV) larger than this is not read.
MAX_RESULTS_BYTES = 5 * 1024 * 1024
#: A log is read up to this size for its values.
MAX_LOG_BYTES = 5 * 1024 * 1024
#: At most this many files of a Space are looked at (a Space is a small repository).
MAX_FILES = 2000
#: How deep below the Space's root files are looked for.
MAX_DEPTH = 4
#: Where `sources.fetch_linked` puts the datasets a Space links (only judging writes there: the
#: Space's own copy of this folder is never downloaded).
LINKED = ".judging/linked"

_SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".cache", "site-packages"}
_NOT_REPORTS = re.compile(r"(?i)^(?:license|licence|contributing|code_of_conduct|changelog|"
                          r"security|citation|authors)(?:\.md)?$")
_ENV = re.compile(r"(?i)^(?:requirements[\w.-]*\.txt|environment\.ya?ml|pyproject\.toml|"
                  r"uv\.lock|Dockerfile|Pipfile(?:\.lock)?|poetry\.lock|conda[\w.-]*\.ya?ml|"
                  r"setup\.py|packages\.txt)$")
_LOG = re.compile(r"(?i)\.(?:log|out|err)$|(?:^|/)logs?/[^/]+\.txt$")
_SCRIPT = re.compile(r"(?i)\.(?:py|sh|r|jl|ipynb)$")
_IMAGE = re.compile(r"(?i)\.(?:png|jpe?g|webp)$")
_RESULTS_NAME = re.compile(r"(?i)result|metric|score|eval|summary|numbers|values|output")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(?P<yaml>.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_MD_LINK = re.compile(r"\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HUB_LINK = re.compile(r"(?:https?://huggingface\.co/|hf://)datasets/(?P<id>[A-Za-z0-9][\w.-]*/"
                       r"[\w.-]+)")
_COMMAND = re.compile(r"(?m)^\s*(?:\$\s*)?(?:uv run |python3? |bash |sh )(?:-m\s+)?"
                      r"(?P<script>[\w./-]+\.(?:py|sh))\b")


@dataclass
class SpaceFiles:
    """What a Space holds, by role; paths relative to the Space's folder."""

    folder: Path
    readme: str | None = None
    front: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    """The README without its front matter."""
    reports: list[tuple[str, str]] = field(default_factory=list)
    """(path, text) of the other Markdown reports."""
    results: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    env: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    linked: list[str] = field(default_factory=list)
    """The datasets the Space links (`owner/name`), fetched or not."""
    errors: list[tuple[str, str]] = field(default_factory=list)
    """(file, what is wrong) in our own words: each file that could not be read."""

    def tags(self) -> list[str]:
        tags = self.front.get("tags")
        return [str(t) for t in tags if isinstance(t, str | int)] if isinstance(tags, list) \
            else []

    @property
    def short_description(self) -> str | None:
        value = self.front.get("short_description")
        return value.strip() if isinstance(value, str) and value.strip() else None

    def texts(self) -> list[tuple[str, str]]:
        return ([("README.md", self.body)] if self.readme is not None else []) + self.reports


def is_space(folder: Path) -> bool:
    """A free-form Space: a README.md whose text opens with front matter (`---`)."""
    readme = Path(folder) / "README.md"
    try:
        with readme.open("rb") as handle:
            head = handle.read(4)
    except OSError:
        return False
    return head.startswith(b"---")


def _walk(folder: Path) -> list[str]:
    """Relative paths of the Space's regular files (no symlinks leaving it, no special files),
    up to `MAX_DEPTH` folders down and `MAX_FILES` files, linked datasets included."""
    out: list[str] = []
    stack = [(folder, 0)]
    while stack and len(out) < MAX_FILES:
        here, depth = stack.pop()
        try:
            children = sorted(here.iterdir(), reverse=True)
        except OSError:
            continue
        for child in children:
            rel = child.relative_to(folder).as_posix()
            if child.is_symlink():
                out.append(rel)  # judged by `_read` (a link leaving the Space is an error)
            elif child.is_dir():
                ours = rel in (".judging", LINKED)  # judging's own folder of linked datasets
                if ours or (child.name not in _SKIP_DIRS and not child.name.startswith(".")):
                    if depth < MAX_DEPTH or rel.startswith(LINKED):
                        stack.append((child, depth + 1))
            elif child.is_file():
                out.append(rel)
    return sorted(out)


def _read(folder: Path, rel: str, limit: int, files: SpaceFiles, *, text: bool = True
          ) -> str | bytes | None:
    """A file's text (or bytes), or None with one error in `files.errors`."""
    try:
        path = confine(folder, rel)
    except UnsafePathError:
        files.errors.append((rel, "a link leaving the Space: not followed"))
        return None
    try:
        size = path.stat().st_size
        if size > limit:
            files.errors.append((rel, f"{size:,} bytes, over the limit of {limit:,} for this "
                                      f"kind of file: not read"))
            return None
        raw = path.read_bytes()
    except OSError as exc:
        files.errors.append((rel, f"cannot be read ({exc.strerror or exc})"))
        return None
    if not text:
        return raw
    if b"\x00" in raw:
        files.errors.append((rel, "a binary file, not text: not read"))
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        files.errors.append((rel, f"not UTF-8 text (byte {exc.start}): not read"))
        return None


def read_space(folder: Path) -> SpaceFiles:
    folder = Path(folder)
    files = SpaceFiles(folder=folder)
    paths = _walk(folder)
    for rel in paths:
        name = rel.rsplit("/", 1)[-1]
        linked = rel.startswith(LINKED + "/")
        if rel == f"{LINKED}/errors.txt":
            raw = _read(folder, rel, MAX_LOG_BYTES, files)
            files.errors += [("linked datasets", line.strip())
                             for line in str(raw or "").splitlines() if line.strip()]
        elif rel == "README.md":
            raw = _read(folder, rel, MAX_REPORT_BYTES, files)
            if raw is not None:
                files.readme = str(raw)
                _front_matter(files, str(raw))
        elif rel.lower().endswith(".md") and not _NOT_REPORTS.match(name) and not linked:
            raw = _read(folder, rel, MAX_REPORT_BYTES, files)
            if raw is not None:
                files.reports.append((rel, str(raw)))
        elif rel.lower().endswith(".jsonl"):
            try:
                path = confine(folder, rel)
            except UnsafePathError:
                files.errors.append((rel, "a link leaving the Space: not followed"))
                continue
            if is_trace(path):
                files.traces.append(rel)
        elif rel.lower().endswith((".json", ".csv")) and (
                _RESULTS_NAME.search(name) or linked or rel.startswith("results/")):
            files.results.append(rel)
        elif _LOG.search(rel):
            files.logs.append(rel)
        elif _ENV.match(name) and not linked:
            files.env.append(rel)
        elif _SCRIPT.search(name) and not linked:
            files.scripts.append(rel)
        elif _IMAGE.search(name) and not linked:
            files.images.append(rel)
    for _, text in files.texts():
        files.linked += [m.group("id") for m in _HUB_LINK.finditer(text)]
    datasets = files.front.get("datasets")
    if isinstance(datasets, list):
        files.linked += [d for d in datasets if isinstance(d, str) and "/" in d]
    files.linked = list(dict.fromkeys(files.linked))
    _links(files)
    return files


def _front_matter(files: SpaceFiles, text: str) -> None:
    match = _FRONT.match(text)
    if match is None:
        files.body = text
        if text.startswith("---"):
            files.errors.append(("README.md", "the front matter is never closed with '---': "
                                              "read as text"))
        return
    files.body = text[match.end():]
    try:
        doc = parse_document(match.group("yaml"), path="README.md front matter")
    except InputFileError as exc:
        files.errors.append(("README.md", f"the front matter is not YAML ({exc}); its tags "
                                          f"and description are not read"))
        return
    if isinstance(doc.data, dict):
        files.front = doc.data
    else:
        files.errors.append(("README.md", "the front matter is not a mapping of keys; its "
                                          "tags and description are not read"))


def _links(files: SpaceFiles) -> None:
    """Each relative link of a report that leaves the Space is one error (never followed)."""
    seen: set[tuple[str, str]] = set()
    for where, text in files.texts():
        base = Path(where).parent
        for m in _MD_LINK.finditer(text):
            target = m.group("target").split("#", 1)[0]
            if not target or re.match(r"(?i)^[a-z][a-z0-9+.-]*:", target) or \
                    target.startswith("//"):
                continue  # a URL (never fetched) or an anchor
            rel = (base / target).as_posix() if not target.startswith("/") else target
            try:
                confine(files.folder, rel)
            except UnsafePathError:
                if (where, target) not in seen:
                    seen.add((where, target))
                    files.errors.append((where, f"links {target!r}, outside the Space: not "
                                                f"followed"))


# --- paper identity -------------------------------------------------------------------------

def paper_of(files: SpaceFiles, repo_id: str | None) -> tuple[str | None, str]:
    """(paper id, how it was found): `identity.paper_identity` over the Space's tags, name,
    title and texts."""
    title = files.front.get("title")
    return paper_identity(tags=files.tags(), name=repo_id,
                          title=title if isinstance(title, str) else None, texts=files.texts())


def space_repo_id(folder: Path) -> str | None:
    """The Space's repo id when the folder is a Hub download (`.../spaces/OWNER/NAME/@REV`,
    `sources.fetch_hub_source`), or a local folder named `OWNER--NAME`."""
    folder = Path(folder).resolve()
    if folder.name.startswith("@") and folder.parent.parent.parent.name == "spaces":
        return f"{folder.parent.parent.name}/{folder.parent.name}"
    owner, sep, name = folder.name.partition("--")
    if sep and owner and name and re.fullmatch(r"[\w.-]+", owner + name):
        return f"{owner}/{name}"
    return None


# --- claims ---------------------------------------------------------------------------------

def _logbook(files: SpaceFiles, title: str) -> Logbook:
    return Logbook(root=files.folder, folder=files.folder, manifest={}, metadata={},
                   readme=files.readme or "", index_text=files.body, title=title,
                   pages=[report_page(rel, text) for rel, text in files.reports],
                   order_from="folder listing", index_origin="README.md")


def _whole_report(files: SpaceFiles, title: str) -> FoundClaim | None:
    """The Space's report as one claim, when it numbers no claim but declares a verdict."""
    labels = _space_labels(files)
    if not labels:
        return None
    page = Page(slug="README", path=Path("README.md"), title=title, text=files.body,
                origin="README.md")
    page.cells = [Cell(type="markdown", meta={}, body=files.body, start=0)]
    return FoundClaim(page, None, None, files.body, title, Extraction(), place="page")


def _space_labels(files: SpaceFiles) -> list[Label]:
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


def _results_values(files: SpaceFiles) -> tuple[list[Value], dict[int, list[Value]]]:
    """Values of the results files: (for the Space as a whole, by claim number)."""
    whole: list[Value] = []
    by_claim: dict[int, list[Value]] = {}
    for rel in files.results:
        raw = _read(files.folder, rel, MAX_RESULTS_BYTES, files)
        if raw is None:
            continue
        place = f"results file on {rel}"
        if rel.lower().endswith(".json"):
            try:
                data = json.loads(raw)
            except ValueError:
                files.errors.append((rel, "not valid JSON: not read"))
                continue
            claims = _claim_keyed(data)
            if claims:
                for number, item in claims.items():
                    by_claim.setdefault(number, []).extend(
                        Value(side, value, _quote_key(str(raw), key), place)
                        for side, key, value in json_values(item))
            else:
                whole += [Value(side, value, _quote_key(str(raw), key), place)
                          for side, key, value in json_values(data)]
        else:
            _csv_values(str(raw), place, whole, by_claim)
    return whole, by_claim


def _claim_keyed(data: object) -> dict[int, object]:
    """A results JSON keyed by claim (`{"C1": {...}}`) or a list of rows naming their claim."""
    out: dict[int, object] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            m = re.fullmatch(r"(?i)(?:claim[ _-]?|c)(\d{1,3})(?:_\w*)?", str(key))
            if m and isinstance(value, dict):
                out[int(m.group(1))] = value
    elif isinstance(data, list):
        for row in data[:500]:
            if isinstance(row, dict):
                claim = row.get("claim") or row.get("claim_id") or row.get("id")
                m = re.search(r"(?i)(?:^|[/_ -])(?:claim[ _-]?|c)?(\d{1,3})$", str(claim or ""))
                if m:
                    out[int(m.group(1))] = row
    return out


def _quote_key(text: str, key: str) -> str:
    for line in text.splitlines():
        if f'"{key}"' in line:
            return line.strip()[:MAX_NOTE_CHARS]
    return f'"{key}"'


def _csv_values(text: str, place: str, whole: list[Value], by_claim: dict[int, list[Value]]
                ) -> None:
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2:
        return
    header, lines = rows[0], text.splitlines()
    claim_col = next((j for j, h in enumerate(header) if re.search(r"(?i)claim|^id$", h)), None)
    sides = {j: key_side(h) for j, h in enumerate(header)}
    for i, row in enumerate(rows[1:], start=1):
        quote = lines[i].strip() if i < len(lines) else ",".join(row)
        values = []
        for j, cell in enumerate(row):
            side = sides.get(j)
            if side is None:
                continue
            try:
                values.append(Value(side, float(cell), quote, place))
            except ValueError:
                continue
        if claim_col is not None and claim_col < len(row):
            m = re.search(r"(\d{1,3})\s*$", row[claim_col])
            if m:
                by_claim.setdefault(int(m.group(1)), []).extend(values)
                continue
        if len(rows) == 2:
            whole += values


def _log_values(files: SpaceFiles) -> list[Value]:
    values: list[Value] = []
    for rel in files.logs:
        raw = _read(files.folder, rel, MAX_LOG_BYTES, files)
        if raw is not None:
            values += [Value(v.side, v.value, v.quote, f"log key=value on {rel}")
                       for v in output_values(str(raw)) if v.place == "run output key=value"]
    return values


def _trace_of_paper(files: SpaceFiles, names: list[str]) -> list[str]:
    """The traces of the Space's own files, and those of linked datasets that name the paper
    or the Space (a user's session dataset holds every session of theirs)."""
    out = [t for t in files.traces if not t.startswith(LINKED + "/")]
    wanted = [n for n in names if n]
    for rel in files.traces:
        if not rel.startswith(LINKED + "/"):
            continue
        dataset = "/".join(rel.split("/")[3:5])
        if any(n in dataset for n in wanted) or _mentions(files.folder / rel, wanted):
            out.append(rel)
    return out


def _mentions(path: Path, names: list[str]) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(MAX_LOG_BYTES)
    except OSError:
        return False
    return any(n.encode() in head for n in names if n)


def load_space(folder: Path | str, *, out_dir: Path, registry: Registry | None = None,
               extractor: StructuredAsk | None = None,
               verdict_places: frozenset[str] = VERDICT_PLACES,
               value_places: frozenset[str] = VALUE_PLACES,
               repo_id: str | None = None) -> LoadedSubmission:
    """One free-form Space as a submission (the module docstring); `out_dir` is unused by the
    Space itself (its files are read in place) and kept for the loaders' common call."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ManifestError("not a folder", path=str(folder))
    files = read_space(folder)
    repo_id = repo_id or space_repo_id(folder)
    sid = repo_id or re.sub(r"[^A-Za-z0-9._+-]+", "-", folder.resolve().name).strip("-.") \
        or "space"
    pid, pid_from = paper_of(files, repo_id)
    named = pid  # the paper as the Space names it (its traces name it so too)
    warnings = [f"{where}: {what}" for where, what in files.errors]
    if pid is None:
        warnings.append(f"paper id: {pid_from}; the submission id stands in")
        pid = re.sub(r"[^A-Za-z0-9._-]+", "-", sid.split("/")[-1]) or "unknown-paper"
    if registry is not None:
        canonical = registry.canonical(pid)
        if canonical is not None and canonical != pid:
            warnings.append(f"paper id: {pid} ({pid_from}) is {canonical} in the registry")
            pid = canonical
    title = files.front.get("title") if isinstance(files.front.get("title"), str) else None
    h1 = re.search(r"(?m)^#[ \t]+(.+)$", files.body)
    title = (title or (h1.group(1).strip() if h1 else "") or sid)[:500]
    reading = read_reports(files.texts(), verdict_places=verdict_places,
                           value_places=value_places)
    warnings += reading.warnings
    if reading.prose and extractor is None:
        warnings.append(f"{sum(reading.prose.values())} claims stated in prose ("
                        + ", ".join(f"{rel}: {n}" for rel, n in reading.prose.items())
                        + "): needs --extract")
    header = submission_header(folder, submission_id=sid, paper_id=pid, paper_title=title,
                               warnings=[w[:MAX_NOTE_CHARS] for w in warnings][:200])
    loaded = LoadedSubmission(header=header, folder=folder.resolve(),
                              manifest=folder / "README.md")
    for index, (where, what) in enumerate(files.errors):
        loaded.problems.append(ClaimProblem(
            submission_id=sid, claim_id=f"{pid}/file/{re.sub(r'[^A-Za-z0-9._/+@-]', '-', where)}"
            [:200], index=index, manifest=str(folder / where), line=None,
            reason=f"{where}: {what}"))
    logbook = _logbook(files, title)
    found = reading.claims
    if not found:
        found = find_claims(logbook, verdict_places=verdict_places, value_places=value_places)
    whole = None
    if not found:
        whole = _whole_report(files, title)
        found = [whole] if whole is not None else []
    if not found:
        shown = ", ".join([p for p, _ in files.texts()][:20]) or "none"
        loaded.problems.append(ClaimProblem(
            submission_id=sid, claim_id=None, index=len(loaded.problems), manifest=str(folder),
            line=None, reason=(f"no claim found in the Space's reports ({shown}): no claim "
                               f"page, claims table, numbered claims list or '## Claim N' "
                               f"section, and no verdict declared for the report as a whole")))
        return loaded
    results_whole, results_by_claim = _results_values(files)
    logs = _log_values(files)
    single = len(found) == 1
    for claim in found:
        if claim is whole:
            extract_page(claim, verdict_places=verdict_places, value_places=value_places)
        ex = claim.extraction
        labels = _space_labels(files) if (claim is whole or single) else []
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
        extra = results_by_claim.get(claim.number, []) if claim.number is not None else []
        if single:
            extra = extra + results_whole + logs
        extra = [v for v in extra if place_kind(v.place) in value_places]
        if extra:
            for name in ("reported_value", "reproduced_value"):
                if getattr(ex, name.split("_")[0]) is None:
                    ex.absent.pop(name, None)
            choose_values(ex, extra, None, claim.prose)
        toy_scale(ex, claim.prose + "\n" + (files.short_description or ""))
    if extractor is not None:
        fill_with_llm(found, extractor, paper=pid)
    traces = _trace_of_paper(files, [n for n in (named, pid, sid.split("/")[-1]) if n])
    script = _main_script(files)
    seen: set[str] = set()
    for index, claim in enumerate(found):
        claim_id = f"{pid}/{claim.local_id if claim is not whole else 'report'}"
        origin = (claim.page.origin or "README.md") + (
            f" row {claim.row}" if claim.place == "table row" else
            f" item {claim.number}" if claim.place == "list item" else
            f" section {claim.row}" if claim.place == "section" else "")
        if claim_id in seen:
            loaded.problems.append(ClaimProblem(
                submission_id=sid, claim_id=claim_id, index=len(loaded.problems) + index,
                manifest=str(folder / (claim.page.origin or "README.md")), line=None,
                reason=f"{origin}: a second claim numbered {claim.local_id}; only the first is "
                       f"judged"))
            continue
        seen.add(claim_id)
        try:
            loaded.claims.append(_to_input(claim, claim_id, origin, header, folder, registry,
                                           files, traces, script, whole=claim is whole))
        except (ValidationError, UnsafePathError, ValueError) as exc:
            loaded.problems.append(ClaimProblem(
                submission_id=sid, claim_id=claim_id, index=len(loaded.problems) + index,
                manifest=str(folder / (claim.page.origin or "README.md")), line=None,
                reason=f"{origin}: {in_our_words(exc)}"))
    for warning in warnings:
        log.warning("%s: %s", sid, warning)
    return loaded


def _main_script(files: SpaceFiles) -> str | None:
    """The script the reports run (`python reproduce.py` in a code block), else the only one."""
    for _, text in files.texts():
        for m in _COMMAND.finditer(text):
            name = m.group("script").lstrip("./")
            if name in files.scripts:
                return name
    top = [s for s in files.scripts if "/" not in s and s not in ("app.py", "setup.py")]
    return top[0] if len(top) == 1 else None


def _figure(claim: FoundClaim, files: SpaceFiles) -> str | None:
    base = Path(claim.page.origin or "README.md").parent
    for m in _MD_IMAGE.finditer(claim.prose):
        target = m.group("target").split("#", 1)[0]
        rel = (base / target).as_posix()
        rel = re.sub(r"^\./", "", rel)
        if rel in files.images:
            return rel
    return None


def _to_input(found: FoundClaim, claim_id: str, origin: str, header: SubmissionHeader,
              folder: Path, registry: Registry | None, files: SpaceFiles, traces: list[str],
              script: str | None, *, whole: bool):
    ex = found.extraction
    figure = _figure(found, files)
    kind = "figure" if figure else kind_of(found)
    absent = dict(ex.absent)
    provenance: dict[str, FieldProvenance] = dict(ex.provenance)
    provenance["claim_id"] = (FieldProvenance(how="order", quote=found.title[:MAX_NOTE_CHARS],
                                              place="the Space's report as one claim")
                              if whole else found.id_provenance)
    values: dict[str, object] = {}
    if kind in ("number", "figure", "theorem"):
        values = {"reported_value": ex.reported, "reproduced_value": ex.reproduced}
    scale = ex.toy_note()
    claim = Claim(
        claim_id=claim_id, kind=kind, statement=(statement(found) or claim_id)[:4000],
        reproduced_figure=figure, verdict=ex.verdict,
        justification=(found.prose or files.body)[:20_000], scale_note=scale,
        evidence=Evidence(logs=files.logs[:50], script=script, traces=traces[:50]),
        source_verdict=ex.source_verdict, toy=ex.toy, provenance=provenance, absent=absent,
        theorem_values=kind == "theorem" and any(v is not None for v in values.values()),
        **{k: v for k, v in values.items() if v is not None})
    claim_input = make_claim_input(claim, header, folder.resolve(), registry, None)
    flags = list(claim_input.flags) + extraction_flags(ex, "Space") + [
        Flag(name="reports_disagree", detail=note[:4000]) for note in found.warnings]
    if kind == "figure" and (registry is None or claim_input.published_path is None):
        flags.append(Flag(name="figure_match_not_applicable",
                          detail="the Space carries no published figure and no registry claim "
                                 "gives one: figure-match is not applicable; the verdict rubric "
                                 "judges the claim"))
    return claim_input.model_copy(update={"flags": flags, "origin": origin,
                                          "key": ClaimKey(submission_id=header.submission_id,
                                                          claim_id=claim_id)})
