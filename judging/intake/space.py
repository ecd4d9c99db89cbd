"""Free-form Hugging Face Spaces as submissions, as the NeurIPS 2026 hackathon's participants
publish them: one Space per paper named after its arXiv id, a README with front matter (title,
tags, `short_description`), Markdown reports, results, logs, environment and scripts; results
and agent traces often in linked datasets (fetched under `.judging/linked/`, `sources`).

This module is the Space's shape: `read_space` turns the folder into what it holds, by role
(each bad file one error in our words, the rest read), and `load_space` conducts the rooms that
own each step: the paper (`identity`), the reports' claims (`freeform`, `prose`, else the
logbook rules, else the report as one claim: `space_claims`), what it declares beside them
(`results`; traces and script: `space_claims.space_facts`), then hands the claims to the page
engine (`engine.add_claims`) with what the Space holds for each (`space_claims.material`).
Confined reads, the file walk and the reading budgets are `paths`'.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging._yaml import parse_document
from judging.errors import InputFileError, ManifestError, UnsafePathError
from judging.intake.engine import add_claims, file_problems, submission_header
from judging.intake.freeform import read_reports
from judging.intake.identity import (
    dataset_ids,
    paper_identity,
    space_repo_id,
    submission_paper,
)
from judging.intake.logbook import VALUE_PLACES, VERDICT_PLACES, StructuredAsk, fill_with_llm
from judging.intake.manifest import LoadedSubmission
from judging.intake.paths import (
    TextBudget,
    confine,
    links_leaving,
    list_files,
    open_confined,
    read_text_confined,
    refusal,
)
from judging.intake.prose import read_prose
from judging.intake.registry import Registry
from judging.intake.results import MAX_LOG_BYTES
from judging.intake.space_claims import (
    LINKED,
    apply_space_facts,
    find_space_claims,
    material,
    space_facts,
)
from judging.models import MAX_NOTE_CHARS, ClaimProblem
from judging.traces import is_trace

log = logging.getLogger(__name__)

#: A Markdown report larger than this is not read (one error): a real report is tens of KB.
MAX_REPORT_BYTES = 2 * 1024 * 1024
#: At most this many files of a Space are looked at (a Space is a small repository).
MAX_FILES = 2000
#: How deep below the Space's root files are looked for.
MAX_DEPTH = 4

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


class _SpaceShape:
    """A free-form Space as a submission shape (`shapes.SHAPES`)."""

    name = "space"

    def detect(self, folder: Path) -> bool:
        return is_space(folder)

    def one_submission(self, folder: Path, *, hub: bool,
                       children: Callable[[], list[Path]]) -> bool:
        # a local folder of submissions whose own README has front matter (a dataset card)
        # stands for its subfolders
        return is_space(folder) and (hub or not children())

    def load(self, folder: Path, *, out_dir: Path | None, registry: Registry | None,
             extractor: StructuredAsk | None, **places: frozenset[str]) -> LoadedSubmission:
        return load_space(folder, registry=registry, extractor=extractor, **places)


SPACE = _SpaceShape()


def _read(folder: Path, rel: str, limit: int, files: SpaceFiles) -> str | None:
    """A file's text, or None with one error in `files.errors`."""
    text, error = read_text_confined(folder, rel, limit=limit)
    if text is None:
        files.errors.append((rel, str(error)))
    return text


def read_space(folder: Path) -> SpaceFiles:
    folder = Path(folder)
    files, reports = SpaceFiles(folder=folder), TextBudget.reports()
    listing = list_files(folder, max_depth=MAX_DEPTH, max_files=MAX_FILES, ours=LINKED)
    files.errors += listing.problems("the Space")
    for rel in listing.files:
        name = rel.rsplit("/", 1)[-1]
        linked = rel.startswith(LINKED + "/")
        if (refused := refusal(folder, rel)) is not None:  # whatever its role: one error
            files.errors.append(refused)
            continue
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
            raw = reports.text(folder, rel, MAX_REPORT_BYTES, files.errors)
            if raw is not None:
                files.reports.append((rel, str(raw)))
        elif rel.lower().endswith((".jsonl", ".json")) and _is_trace(files, rel):
            files.traces.append(rel)  # Claude-Code events, or a HuggingChat export
        elif rel.lower().endswith((".json", ".csv", ".yaml", ".yml")) and (
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
    files.linked, bad = dataset_ids(files.linked)
    files.errors += [("README.md", f"links the dataset {d[:200]!r}, which is not a dataset id "
                                   f"(owner/name): not fetched") for d in bad]
    files.errors += reports.problems()
    files.errors += [(where, f"links {target!r}, outside the Space: not followed")
                     for where, target in links_leaving(folder, files.texts())]
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


# --- paper identity -------------------------------------------------------------------------

def paper_of(files: SpaceFiles, repo_id: str | None) -> tuple[str | None, str]:
    """(paper id, how it was found): `identity.paper_identity` over the Space's tags, name,
    title and texts."""
    title = files.front.get("title")
    return paper_identity(tags=files.tags(), name=repo_id,
                          title=title if isinstance(title, str) else None, texts=files.texts())


def load_space(folder: Path | str, *, registry: Registry | None = None,
               extractor: StructuredAsk | None = None,
               verdict_places: frozenset[str] = VERDICT_PLACES,
               value_places: frozenset[str] = VALUE_PLACES,
               repo_id: str | None = None) -> LoadedSubmission:
    """One free-form Space as a submission (the module docstring); its files are read in
    place, nothing is written."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ManifestError("not a folder", path=str(folder))
    files = read_space(folder)
    repo_id = repo_id or space_repo_id(folder)
    sid = repo_id or re.sub(r"[^A-Za-z0-9._+-]+", "-", folder.resolve().name).strip("-.") \
        or "space"
    warnings = [f"{where}: {what}" for where, what in files.errors]
    pid, named, more = submission_paper(paper_of(files, repo_id), sid, registry)
    warnings += more
    title = files.front.get("title") if isinstance(files.front.get("title"), str) else None
    h1 = re.search(r"(?m)^#[ \t]+(.+)$", files.body)
    title = (title or (h1.group(1).strip() if h1 else "") or sid)[:500]
    reading = read_reports(files.texts(), verdict_places=verdict_places, value_places=value_places)
    warnings += reading.warnings + read_prose(files.texts(), reading, extractor, pid)
    header = submission_header(folder, submission_id=sid, paper_id=pid, paper_title=title,
                               warnings=[w[:MAX_NOTE_CHARS] for w in warnings][:200])
    loaded = LoadedSubmission(header=header, folder=folder.resolve(),
                              manifest=folder / "README.md")
    file_problems(loaded, files.errors, pid, folder)
    found, whole = find_space_claims(files, title, reading, verdict_places=verdict_places,
                                     value_places=value_places)
    if not found:
        shown = ", ".join([p for p, _ in files.texts()][:20]) or "none"
        loaded.problems.append(ClaimProblem(
            submission_id=sid, claim_id=None, index=len(loaded.problems), manifest=str(folder),
            line=None, reason=(f"no claim found in the Space's reports ({shown}): no claim "
                               f"page, claims table, numbered claims list or '## Claim N' "
                               f"section, and no verdict declared for the report as a whole")))
        return loaded
    read_before = len(files.errors)  # the results files and logs are read now: their lines
    facts = space_facts(files, [named or "", pid, sid.split("/")[-1]])
    file_problems(loaded, files.errors[read_before:], pid, folder)
    apply_space_facts(found, whole, files, facts, verdict_places=verdict_places,
                      value_places=value_places)
    if extractor is not None:
        fill_with_llm(found, extractor, paper=pid)
    add_claims(loaded, found, pid=pid, base=folder, registry=registry, default_origin="README.md",
               local_id=lambda claim: claim.local_id if claim is not whole else "report",
               manifest=lambda claim: folder / (claim.page.origin or "README.md"),
               material=lambda claim: material(claim, files, facts, whole=claim is whole))
    for warning in warnings:
        log.warning("%s: %s", sid, warning)
    return loaded
