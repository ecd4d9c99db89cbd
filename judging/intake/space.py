"""Free-form Hugging Face Spaces as submissions, as the NeurIPS 2026 hackathon's participants
publish them: one Space per paper, named after the paper's arXiv id, holding a README with front
matter (title, tags, `short_description`), Markdown report(s), a results table or file, logs,
an environment file and the scripts; results and agent traces often in datasets the README links
(fetched beside the Space by `sources.fetch_linked`, under `.judging/linked/`).

This module is the Space's shape: `read_space` turns the folder into what it holds, by role (each
bad file is one error in our own words and the rest is read: a huge README, a binary file named
.md, front matter that is not YAML, a link leaving the Space). `load_space` names the paper
(`identity`), reads the reports' claims (`freeform`, else the logbook rules, else the whole
report as one claim: `space_claims`) and the values its results files and logs declare
(`results`), and assembles the claim inputs (`space_claims`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging._yaml import parse_document
from judging.errors import InputFileError, ManifestError, UnsafePathError
from judging.intake.freeform import Reading, read_already, read_reports
from judging.intake.identity import paper_identity
from judging.intake.logbook import StructuredAsk, fill_with_llm, submission_header
from judging.intake.logbook.extract import VALUE_PLACES, VERDICT_PLACES, Value
from judging.intake.manifest import LoadedSubmission
from judging.intake.paths import confine, open_confined, read_confined
from judging.intake.prose import prose_claims, prose_summary
from judging.intake.registry import Registry
from judging.intake.results import file_values, log_values
from judging.intake.space_claims import (
    SpaceFacts,
    add_claim_inputs,
    apply_space_facts,
    find_space_claims,
    main_script,
    own_trace_datasets,
)
from judging.models import MAX_NOTE_CHARS, ClaimProblem
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
_HUB_LINK = re.compile(r"(?:https?://huggingface\.co/|hf://)datasets/(?P<id>[A-Za-z0-9][\w.-]*/"
                       r"[\w.-]+)")


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
    try:  # confined and never blocking: a README that is a FIFO or a link out is no Space's
        with open_confined(Path(folder), "README.md", links=True) as handle:
            head = handle.read(4)
    except (OSError, UnsafePathError):
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
        confine(folder, rel)
    except UnsafePathError:
        files.errors.append((rel, "a link leaving the Space: not followed"))
        return None
    try:  # a regular file (a FIFO or device is refused without blocking), within `limit`
        raw = read_confined(folder, rel, limit=limit, links=True)
    except UnsafePathError as exc:
        files.errors.append((rel, f"{exc}: not read"))
        return None
    except OSError as exc:
        files.errors.append((rel, f"cannot be read ({exc.strerror or type(exc).__name__})"))
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
        elif rel.lower().endswith((".jsonl", ".json")) and _is_trace(files, rel):
            files.traces.append(rel)  # Claude-Code events, or a HuggingChat export
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


def _is_trace(files: SpaceFiles, rel: str) -> bool:
    try:
        path = confine(files.folder, rel)
    except UnsafePathError:
        files.errors.append((rel, "a link leaving the Space: not followed"))
        return False
    return path.is_file() and is_trace(path)  # a regular file: a FIFO would block


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


# --- what the Space declares beside its reports --------------------------------------------

def _results_values(files: SpaceFiles) -> tuple[list[Value], dict[int, list[Value]]]:
    """Values of the results files: (for the Space as a whole, by claim number)."""
    whole: list[Value] = []
    by_claim: dict[int, list[Value]] = {}
    for rel in files.results:
        raw = _read(files.folder, rel, MAX_RESULTS_BYTES, files)
        if raw is None:
            continue
        these, keyed, error = file_values(rel, str(raw))
        if error:
            files.errors.append((rel, error))
        whole += these
        for number, values in keyed.items():
            by_claim.setdefault(number, []).extend(values)
    return whole, by_claim


def _log_values(files: SpaceFiles) -> list[Value]:
    values: list[Value] = []
    for rel in files.logs:
        raw = _read(files.folder, rel, MAX_LOG_BYTES, files)
        if raw is not None:
            values += log_values(rel, str(raw))
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
        if any(n in dataset for n in wanted) or _mentions(files.folder, rel, wanted):
            out.append(rel)
    return out


def _mentions(folder: Path, rel: str, names: list[str]) -> bool:
    try:  # confined and never blocking (a FIFO is no trace)
        with open_confined(folder, rel, links=True) as handle:
            head = handle.read(MAX_LOG_BYTES)
    except (OSError, UnsafePathError):
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
    pid, named, warnings = _paper(files, repo_id, sid, registry)
    title = files.front.get("title") if isinstance(files.front.get("title"), str) else None
    h1 = re.search(r"(?m)^#[ \t]+(.+)$", files.body)
    title = (title or (h1.group(1).strip() if h1 else "") or sid)[:500]
    reading = read_reports(files.texts(), verdict_places=verdict_places,
                           value_places=value_places)
    warnings += reading.warnings
    if reading.prose and extractor is None:
        warnings.append(f"{sum(reading.prose.values())} claims stated in prose ("
                        + ", ".join(f"{rel}: {n}" for rel, n in reading.prose.items())
                        + "): read as statements only; their verdicts and values need "
                          "--extract")
    elif reading.prose and extractor is not None:
        warnings += _read_prose(files, reading, extractor, pid)
    header = submission_header(folder, submission_id=sid, paper_id=pid, paper_title=title,
                               warnings=[w[:MAX_NOTE_CHARS] for w in warnings][:200])
    loaded = LoadedSubmission(header=header, folder=folder.resolve(),
                              manifest=folder / "README.md")
    for index, (where, what) in enumerate(files.errors):
        loaded.problems.append(ClaimProblem(
            submission_id=sid, claim_id=f"{pid}/file/{re.sub(r'[^A-Za-z0-9._/+@-]', '-', where)}"
            [:200], index=index, manifest=str(folder / where), line=None,
            reason=f"{where}: {what}"))
    found, whole = find_space_claims(files, title, reading, verdict_places=verdict_places,
                                     value_places=value_places)
    if whole is None:  # the paper's own claims; offline, the claims stated in prose too
        found += [c for c in reading.stated if not read_already(c, found)
                  and (extractor is None or c.place != "prose")]
    if not found:
        shown = ", ".join([p for p, _ in files.texts()][:20]) or "none"
        loaded.problems.append(ClaimProblem(
            submission_id=sid, claim_id=None, index=len(loaded.problems), manifest=str(folder),
            line=None, reason=(f"no claim found in the Space's reports ({shown}): no claim "
                               f"page, claims table, numbered claims list or '## Claim N' "
                               f"section, and no verdict declared for the report as a whole")))
        return loaded
    traces = _trace_of_paper(files, [n for n in (named, pid, sid.split("/")[-1]) if n])
    traces = list(dict.fromkeys(traces + own_trace_datasets(files.traces)))
    facts = SpaceFacts(*_results_values(files), logs=_log_values(files), traces=traces,
                       script=main_script(files))
    apply_space_facts(found, whole, files, facts, verdict_places=verdict_places,
                      value_places=value_places)
    if extractor is not None:
        fill_with_llm(found, extractor, paper=pid)
    add_claim_inputs(loaded, found, whole, files, facts, pid=pid, registry=registry)
    for warning in warnings:
        log.warning("%s: %s", sid, warning)
    return loaded


def _read_prose(files: SpaceFiles, reading: Reading, extractor: StructuredAsk, pid: str
                ) -> list[str]:
    """The claims the reports state in prose only, read by the LLM (`prose`), added to
    `reading`; the warnings of what was rejected."""
    outcomes = {}
    for rel, text in files.texts():
        if reading.prose.get(rel):
            known = [c for c in reading.claims if c.page.origin == rel]
            claims, outcomes[rel] = prose_claims(rel, text, extractor, known=known, paper=pid)
            reading.claims += claims
    return prose_summary(outcomes)


def _paper(files: SpaceFiles, repo_id: str | None, sid: str, registry: Registry | None
           ) -> tuple[str, str | None, list[str]]:
    """(the paper id, the id as the Space names it, the warnings so far): the registry's id
    for an alias; the submission id stands in when the Space names no paper."""
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
    return pid, named, warnings
