"""Items both formats check the same way: environment files, agent traces, per-claim results,
verdicts, scale notes and falsified claims' evidence."""

from __future__ import annotations

import re
from pathlib import Path

from judging.check.model import MISSING, OK, WARNING, Checklist
from judging.check.personal import SKIP_DIRS
from judging.errors import FigureDataError
from judging.figures.data import load_figure_data
from judging.models import ClaimInput, ClaimKind, Verdict

#: The hackathon's environment: any of these at the submission's top or one folder down.
ENV_PATTERNS = ("requirements*.txt", "uv.lock", "pyproject.toml", "environment.yml",
                "environment.yaml", "conda*.yml", "conda*.yaml", "Dockerfile", "Dockerfile.*",
                "Pipfile", "Pipfile.lock", "poetry.lock", "setup.py", "setup.cfg")
TRACE_NAME = re.compile(r"trace|transcript", re.IGNORECASE)


def environment_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for base in [folder, *sorted(d for d in folder.iterdir() if d.is_dir()
                                 and not d.is_symlink() and d.name not in SKIP_DIRS
                                 and not d.name.startswith("."))]:
        for pattern in ENV_PATTERNS:
            found += [p for p in sorted(base.glob(pattern)) if p.is_file()]
    return list(dict.fromkeys(found))


def relative(path: Path, folder: Path) -> str:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)


def check_environment(checklist: Checklist, folder: Path, *, status_if_none: str = MISSING,
                      extra: list[str] = ()) -> None:
    files = [relative(p, folder) for p in environment_files(folder)] + list(extra)
    if files:
        checklist.add("environment", OK, ", ".join(files))
    else:
        checklist.add("environment", status_if_none,
                      "no requirements.txt, uv.lock, pyproject.toml, environment.yml or "
                      "Dockerfile in the submission")


def _number_missing(claim: ClaimInput) -> list[str]:
    c = claim.claim
    missing = []
    if c.kind is ClaimKind.table and c.values:
        for value in c.values:
            for side in ("reported", "reproduced"):
                if getattr(value, side) is None:
                    missing.append(f"{side} {value.name}")
        return missing
    if c.reported_value is None and not (c.values and any(v.reported is not None
                                                          for v in c.values)):
        missing.append("reported number")
    if c.reproduced_value is None and not (c.values and any(v.reproduced is not None
                                                            for v in c.values)):
        missing.append("reproduced number")
    return missing


def check_results(checklist: Checklist, claim: ClaimInput, cid: str) -> None:
    c = claim.claim
    if c.kind is ClaimKind.figure:
        if claim.reproduced_path is not None and claim.reproduced_path.is_file():
            unreadable = unreadable_figure(claim.reproduced_path)
            if unreadable:
                checklist.add("results", MISSING, f"reproduced figure {c.reproduced_figure} "
                              f"cannot be read as `judging run` reads it: {unreadable}",
                              claim=cid)
            else:
                checklist.add("results", OK, f"reproduced figure {c.reproduced_figure}",
                              claim=cid)
        elif c.reproduced_figure:
            checklist.add("results", MISSING, f"{c.reproduced_figure} is named "
                                              f"(reproduced_figure) but not in the submission",
                          claim=cid)
        else:
            checklist.add("results", MISSING, "no reproduced figure" + (
                f" ({c.absent['reproduced_figure']})" if "reproduced_figure" in c.absent
                else ""), claim=cid)
        check_figure_data(checklist, claim, cid)
        return
    if c.kind is ClaimKind.theorem:
        numbers = [n for n in (c.reported_value, c.reproduced_value) if n is not None]
        # numbers the reader saw in prose and left to the LLM: not a claim without numbers
        unread = sorted({why for k, why in c.absent.items()
                         if k.endswith("_value") and "needs --extract" in why})
        if not numbers and unread:
            checklist.add("results", WARNING, "no number read: " + "; ".join(unread)
                          + " (judged as a claim without numbers)", claim=cid)
            return
        checklist.add("results", OK, "theorem: " + (
            f"numerical audit {c.reported_value} / {c.reproduced_value}" if numbers
            else "no number needed"), claim=cid)
        return
    missing = _number_missing(claim)
    if missing:
        reasons = "; ".join(f"{k}: {v}" for k, v in c.absent.items()
                            if k in ("reported_value", "reproduced_value"))
        checklist.add("results", MISSING, "no " + ", ".join(missing) + (
            f" ({reasons})" if reasons else ""), claim=cid)
    elif c.values:
        checklist.add("results", OK, "; ".join(f"{v.name} {v.reported} -> {v.reproduced}"
                                               for v in c.values), claim=cid)
    else:
        checklist.add("results", OK, f"reported {c.reported_value}, reproduced "
                                     f"{c.reproduced_value}", claim=cid)


def unreadable_figure(path: Path) -> str | None:
    """Why `judging run` could not read this figure file (decoded the way it decodes it: a
    corrupt PNG has a valid header, so opening it is not enough), else None."""
    from judging.errors import ImageLoadError
    from judging.signals import load_image

    try:
        load_image(path)
    except ImageLoadError as exc:
        return str(exc)
    return None


def missing_files(paths: dict[str, Path], folder: Path) -> list[str]:
    """The named files (role -> path) that are not in the submission, as the manifest names
    them relative to its folder."""
    return [relative(path, folder) for path in paths.values() if not path.is_file()]


def check_figure_data(checklist: Checklist, claim: ClaimInput, cid: str) -> None:
    """The figure's data files, read as `judging run` reads them (the reproduced one strictly,
    a published one leniently): a file named but missing or invalid fails the check, since the
    figure would then be compared from its image only."""
    for side, path, named in (("reproduced", claim.reproduced_data_path,
                               claim.claim.reproduced_data),
                              ("published", claim.published_data_path,
                               claim.claim.published_data)):
        if path is None:
            continue
        shown = named or path.name
        try:
            found = load_figure_data(path, lenient=side == "published", shown=shown)
        except FigureDataError as exc:
            checklist.add("results", MISSING, f"{side} data refused: {exc}; the figure "
                                              f"would be compared from its image only",
                          claim=cid, file=shown, line=exc.line)
            continue
        if found.ignored:
            checklist.add("results", WARNING, f"{side} data {shown} ({found.describe()}): "
                                              f"say what the parts not read are, or drop them",
                          claim=cid, file=shown)
        else:
            checklist.add("results", OK, f"{side} data {shown} ({found.describe()})",
                          claim=cid, file=shown)


def check_verdict(checklist: Checklist, claim: ClaimInput, cid: str, reason: str) -> None:
    c = claim.claim
    if c.verdict is None:
        why = c.absent.get("verdict")
        checklist.add("verdict", MISSING, "no verdict" + (f" ({why})" if why else ""),
                      claim=cid)
    elif not reason.strip():
        checklist.add("verdict", MISSING, f"{c.verdict.value}, but no reason given", claim=cid)
    else:
        label = f" (their label: {c.source_verdict!r})" if c.source_verdict else ""
        checklist.add("verdict", OK, f"{c.verdict.value}{label}; reason: "
                                     f"{_short(reason)}", claim=cid)


def check_scale(checklist: Checklist, claim: ClaimInput, cid: str, note: str | None) -> None:
    if note:
        checklist.add("scale note", OK, _short(note), claim=cid)
    else:
        checklist.add("scale note", WARNING, "no scale note: say so if the run was smaller "
                                             "than the paper's (or that it was full scale)",
                      claim=cid)


def falsified(claim: ClaimInput) -> bool:
    return claim.claim.verdict is Verdict.falsified


def trace_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = sorted(current.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink() or entry.name in SKIP_DIRS:
                continue
            if entry.is_dir():
                if entry.name == "traces" and any(p.is_file() for p in entry.rglob("*")):
                    found.append(entry)
                else:
                    stack.append(entry)
            elif TRACE_NAME.search(entry.name) and entry.suffix.lower() in (
                    ".json", ".jsonl", ".txt", ".md", ".log", ".html"):
                found.append(entry)
    return found


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
