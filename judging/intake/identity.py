"""Which paper a free-form submission reproduces, as the event's participants name it (issue 40):
an `arxiv:<id>` or `paper-<id>` tag, an arXiv id in the Space's name (`neurips26-repro-2605.11841`)
or its title (`pythia-ppt-noise-repro` titled "... (arXiv 2605.11841)"), else the one paper
identifier its README (then a report) links: an arXiv id, a DOI, an OpenReview id or an OSTI id.
Ids are returned in the registry's alias form: `2605.11841`, `10.1109/TPWRS.2021.3102345`,
`NW31gAylIm`, `osti-1984484`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judging.intake.registry import Registry

_ARXIV = re.compile(r"(?<![\d.])(?P<id>\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")
#: Paper identifiers in text, each kind as the registry's alias form.
_IN_TEXT: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)(?:arxiv(?:\.org/(?:abs|pdf)/|:\s*|\s+))(?P<id>\d{4}\.\d{4,5})(?:v\d+)?"),
     "{}"),
    (re.compile(r"(?i)(?:doi\.org/|\bdoi:\s*)(?P<id>10\.\d{4,9}/[^\s)\]>\"'`,;]+)"), "{}"),
    (re.compile(r"(?i)openreview\.net/(?:forum|pdf)\?id=(?P<id>[\w-]{6,})"), "{}"),
    (re.compile(r"(?i)osti\.gov/(?:biblio|servlets/purl)/(?P<id>\d{5,9})|\bOSTI(?:[\s_-]+ID)?"
                r"\W{0,6}(?P<id2>\d{5,9})\b"), "osti-{}"),
)
#: The lines of a report that name its paper (its title and opening): an id there is the
#: paper's, ids further down are its citations.
HEAD_LINES = 15


def ids_in(text: str) -> list[str]:
    """Paper identifiers a text names, in the order they first appear."""
    found: list[tuple[int, str]] = []
    for pattern, form in _IN_TEXT:
        for m in pattern.finditer(text):
            raw = m.group("id") or (m.groupdict().get("id2") or "")
            if raw:
                found.append((m.start(), form.format(raw.rstrip(".)"))))
    return list(dict.fromkeys(i for _, i in sorted(found)))


def paper_identity(*, tags: list[str], name: str | None, title: str | None,
                   texts: list[tuple[str, str]]) -> tuple[str | None, str]:
    """(paper id, how it was found) by the precedence of the module docstring."""
    for tag in tags:
        m = re.match(r"(?i)^arxiv:\s*(?P<id>\d{4}\.\d{4,5})(?:v\d+)?$", tag.strip())
        if m:
            return m.group("id"), f"tag {tag}"
    for tag in tags:
        m = re.match(r"^paper-(?P<id>[A-Za-z0-9][\w.-]{3,})$", tag.strip())
        if m:
            return m.group("id"), f"tag {tag}"
    for what, value in (("the Space's name", name), ("the Space's title", title)):
        m = _ARXIV.search(value.split("/")[-1]) if value else None
        if m:
            return m.group("id"), f"{what} {value}"
    for where, text in texts:
        ids = ids_in(text)
        if len(ids) == 1:
            return ids[0], f"the paper id in {where}"
        head = ids_in("\n".join(text.splitlines()[:HEAD_LINES]))
        if len(head) == 1:
            return head[0], f"the paper id at the head of {where}"
        if ids:
            return None, f"{where} names several paper ids ({', '.join(ids[:5])})"
    return None, ("no arxiv:<id> or paper-<id> tag and no paper id (arXiv, DOI, OpenReview, "
                  "OSTI) in the Space's name, title or text")


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


def submission_paper(found: tuple[str | None, str], sid: str, registry: Registry | None
                     ) -> tuple[str, str | None, list[str]]:
    """(the paper id, the id as the submission names it, warnings) from `paper_identity`'s
    answer: the registry's id for an alias; the submission id stands in when no paper is
    named."""
    pid, pid_from = found
    named = pid  # the paper as the Space names it (its traces name it so too)
    warnings = []
    if pid is None:
        warnings.append(f"paper id: {pid_from}; the submission id stands in")
        pid = re.sub(r"[^A-Za-z0-9._-]+", "-", sid.split("/")[-1]) or "unknown-paper"
    if registry is not None:
        canonical = registry.canonical(pid)
        if canonical is not None and canonical != pid:
            warnings.append(f"paper id: {pid} ({pid_from}) is {canonical} in the registry")
            pid = canonical
    return pid, named, warnings


#: A Hub dataset id as the Hub accepts one: an owner and a name of letters, digits and ._-.
_DATASET_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")


def dataset_ids(ids: list[str]) -> tuple[list[str], list[str]]:
    """(the dataset ids a submission links that are Hub ids, those that are not), each once. An
    id is a folder of the download (`.judging/linked/datasets/OWNER/NAME`) and a Hub call:
    `chans/../../x` sank the whole run with the Hub client's own exception."""
    ids = list(dict.fromkeys(ids))
    bad = [d for d in ids if not _DATASET_ID.fullmatch(d) or ".." in d]
    return [d for d in ids if d not in bad], bad
