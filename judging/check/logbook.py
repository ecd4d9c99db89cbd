"""The checklist of a Trackio logbook (a published logbook, or a workspace or mirror holding
`.trackio/logbook/`), and the ICML 2026 challenge's structure checks (`--profile icml2026`)."""

from __future__ import annotations

import re
from pathlib import Path

from judging.check.common import (
    ENV_PATTERNS,
    check_environment,
    check_results,
    check_scale,
    check_verdict,
    environment_files,
    falsified,
    relative,
)
from judging.check.model import MISSING, OK, WARNING, Checklist
from judging.check.personal import scan, text_files
from judging.intake import LoadedSubmission, Logbook

#: A script a run cell captured: trackio writes each script named on the command line as a fence
#: ```` ````python title=run.py ````.
_SCRIPT_FENCE = re.compile(r"^`{3,}[\w+-]*[ \t]+title=(?P<name>[^\s`]+)", re.MULTILINE)
_ENV_NAMES = re.compile(r"(?<![\w.-])(?:requirements[\w.-]*\.txt|uv\.lock|pyproject\.toml|"
                        r"environment\.ya?ml|Dockerfile|Pipfile(?:\.lock)?|poetry\.lock|"
                        r"conda[\w.-]*\.ya?ml)(?![\w-])")
_PROBLEM = re.compile(r"paper[- ]error|error in the paper|typo in the paper|code[- ]bug|"
                      r"bug in (?:the|their|our) code|environment (?:issue|problem|mismatch)|"
                      r"data(?:set)? (?:issue|problem|leak(?:age)?|error)|"
                      r"problem kind\s*[:=]\s*[\w-]+", re.IGNORECASE)
_SCALE = re.compile(r"\b(?:toy|scale|scaled|reduced|smaller|subset|full[- ]size|"
                    r"scope\s*&\s*cost|fewer (?:steps|epochs|seeds|samples))\b", re.IGNORECASE)
_FRONT_TAG = re.compile(r"(?m)^\s*-\s*['\"]?(?P<tag>[\w.-]+)['\"]?\s*$")
_PAPER_TAG = re.compile(r"^paper-(?P<id>[\w.-]+)$")
_CLAIM_TITLE = re.compile(r"^claim\s*(?P<n>\d+)\b", re.IGNORECASE)


def run_cells(page):
    return [cell for cell in page.cells if cell.is_run]


def scripts_of(page) -> list[str]:
    names: list[str] = []
    for cell in run_cells(page):
        names += [m.group("name") for m in _SCRIPT_FENCE.finditer(cell.body)]
    return list(dict.fromkeys(names))


def tags_of(logbook: Logbook) -> list[str]:
    tags: list[str] = []
    front = re.match(r"\A---\r?\n(?P<y>.*?)\r?\n---", logbook.readme, re.DOTALL)
    if front:
        block = re.search(r"(?ms)^tags:\s*\n(?P<items>(?:\s*-.*\n?)+)", front.group("y"))
        if block:
            tags += [m.group("tag") for m in _FRONT_TAG.finditer(block.group("items"))]
    for source in (logbook.metadata, logbook.manifest):
        value = source.get("tags")
        if isinstance(value, list):
            tags += [t for t in value if isinstance(t, str)]
    return list(dict.fromkeys(tags))


def _page_of(logbook: Logbook, origin: str | None):
    match = re.match(r"pages/(?P<slug>[^/]+)/page\.md", origin or "")
    if match is None:
        return None
    return next((p for p in logbook.pages if p.slug == match.group("slug")), None)


def _summary_page(logbook: Logbook):
    return next((p for p in logbook.pages if "executive summary" in p.title.lower()
                 or p.slug == "executive-summary"), None)


def check_logbook(checklist: Checklist, loaded: LoadedSubmission, logbook: Logbook,
                  folder: Path, *, profile: str | None) -> None:
    for warning in logbook.warnings:
        checklist.add("structure", WARNING, warning)
    for problem in loaded.problems:
        checklist.add("claims", MISSING, f"claim {problem.claim_id} does not load: "
                                         f"{problem.reason}", claim=problem.claim_id,
                      file=relative(Path(problem.manifest), folder))
    if loaded.claims:
        checklist.add("claims", OK, f"{len(loaded.claims)} claim(s) from the pages")
    elif not loaded.problems:
        checklist.add("claims", MISSING, "no claim found: no claim-N page, claims table or "
                                         "'## Claim N' section")

    all_scripts = list(dict.fromkeys(s for p in logbook.pages for s in scripts_of(p)))
    runs = [c for p in logbook.pages for c in run_cells(p)]
    if profile is None:
        if all_scripts:
            checklist.add("code", OK, f"scripts captured by run cells: {', '.join(all_scripts)}")
        else:
            checklist.add("code", MISSING, "no run cell names a script (`trackio logbook run "
                                           "-- python script.py` captures it)")
        check_environment(checklist, folder)
    else:
        _check_icml2026(checklist, loaded, logbook, folder)

    traces = sorted((logbook.root / "traces").glob("*/index.json"))
    agent = loaded.header.agent
    if traces:
        who = f"; agent {agent.name}" + (f" ({agent.model})" if agent and agent.model else "") \
            if agent else ""
        checklist.add("trace", OK, f"{len(traces)} trace(s) in "
                                   f"{relative(logbook.root / 'traces', folder)}{who}")
    else:
        checklist.add("trace", MISSING, "no agent trace (`trackio logbook attach trace FILE`)")

    summary = _summary_page(logbook)
    scope = None
    if summary is not None and re.search(r"scope\s*&\s*cost|\bscale\b", summary.text,
                                         re.IGNORECASE):
        scope = f"the executive summary ({summary.slug}) states the scope"
    failed = [c for c in runs if c.meta.get("exit_code") not in (0, None)]
    if runs:
        checklist.add("logs", OK, f"{len(runs)} run cell(s), {len(failed)} failed " + (
            "(exit " + ", ".join(str(c.meta.get("exit_code")) for c in failed) + ")"
            if failed else "").rstrip())
    for claim in loaded.claims:
        cid = claim.claim.claim_id
        page = _page_of(logbook, claim.origin)
        where = {"claim": cid}
        check_results(checklist, claim, cid)
        if claim.claim.evidence.logs:
            checklist.add("logs", OK, f"{len(claim.claim.evidence.logs)} run(s) on "
                                      f"{page.slug if page else 'the page'}", **where)
        else:
            checklist.add("logs", MISSING, "no run cell on the claim's page (`trackio logbook "
                                           "run --page P -- cmd`)", **where)
        check_verdict(checklist, claim, cid, claim.claim.justification)
        note = claim.claim.scale_note
        if note is None and page is not None and _SCALE.search(page.text):
            note = f"the page says: {_SCALE.search(page.text).group(0)!r}"
        check_scale(checklist, claim, cid, note or scope)
        if falsified(claim):
            proof = scripts_of(page) if page is not None else []
            if proof:
                checklist.add("proof script", OK, ", ".join(proof), **where)
            else:
                checklist.add("proof script", MISSING, "a falsified claim needs a run cell of "
                                                       "the script that shows it", **where)
            kind = _PROBLEM.search(page.text) if page is not None else None
            if kind:
                checklist.add("problem kind", OK, kind.group(0), **where)
            else:
                checklist.add("problem kind", WARNING, "say what kind of problem it is (paper "
                              "error, code bug, environment, data); a logbook has no field for "
                              "it", **where)

    files = [p for p in text_files(logbook.root)]
    for readme in (folder / "README.md",):
        if readme.is_file():
            files.append(readme)
    found = scan(checklist, folder, files, base=folder)
    if not found:
        checklist.add("personal data", OK, "no e-mail address, token or key, or home-directory "
                                           "path in the pages, logs or traces")


def _check_icml2026(checklist: Checklist, loaded: LoadedSubmission, logbook: Logbook,
                    folder: Path) -> None:
    index = relative(logbook.root / "pages" / "index.md", folder)
    h1 = re.search(r"^#[ \t]+(.+)$", logbook.index_text, re.MULTILINE)
    if not (logbook.root / "pages" / "index.md").is_file():
        checklist.add("index title", MISSING, "pages/index.md is missing (the logbook's front "
                      "page, whose H1 must start with 'Reproduction:')", file=index)
    elif h1 and h1.group(1).strip().startswith("Reproduction:"):
        checklist.add("index title", OK, h1.group(1).strip(), file=index)
    else:
        checklist.add("index title", MISSING, "the index's H1 must start with 'Reproduction:'"
                      + (f" (it is {h1.group(1).strip()!r})" if h1 else " (no H1)"), file=index)

    orphans = {w.split("pages/", 1)[1].split("/", 1)[0] for w in logbook.warnings
               if w.startswith("orphan page:")}
    pages = [p for p in logbook.pages if p.slug not in orphans]
    titles = [p.title or p.slug for p in pages]
    problems: list[str] = []
    if not titles or titles[0].strip().lower() != "executive summary":
        problems.append("the first page must be 'Executive summary'")
    if not titles or titles[-1].strip().lower() != "conclusion":
        problems.append("the last page must be 'Conclusion'")
    middle = titles[1:-1] if len(titles) >= 2 else []
    numbers = [m.group("n") if (m := _CLAIM_TITLE.match(t.strip())) else None for t in middle]
    if not middle or None in numbers or [int(n) for n in numbers] != \
            list(range(1, len(numbers) + 1)):
        problems.append("between them, pages 'Claim 1' .. 'Claim N' in order")
    order = " | ".join(titles) or "(no page)"
    if problems:
        checklist.add("page order", MISSING, "; ".join(problems) + f" (found: {order})",
                      file=index)
    else:
        checklist.add("page order", OK, order, file=index)

    pinned = [(p, c) for p in logbook.pages for c in p.cells if c.meta.get("pinned")]
    summary = [(p, c) for p, c in pinned if c.type == "markdown" and (
        "executive summary" in c.title.lower() or "executive summary" in p.title.lower())]
    if summary:
        p, c = summary[0]
        checklist.add("pinned summary", OK, f"cell {c.meta.get('id')} on {p.slug}",
                      file=relative(p.path, folder))
    else:
        checklist.add("pinned summary", MISSING, "no pinned 'Executive summary' markdown cell "
                                                 "(`trackio logbook pin CELL_ID`)")
    figures = [(p, c) for p, c in pinned if c.type == "figure"]
    posters = [(p, c) for p, c in figures if "poster" in c.title.lower()
               or c.meta.get("poster")] or figures
    if posters:
        p, c = posters[0]
        checklist.add("pinned poster", OK, f"figure {c.title or c.meta.get('id')!r} on "
                                           f"{p.slug}", file=relative(p.path, folder))
    else:
        checklist.add("pinned poster", MISSING, "no pinned poster figure")

    tags = tags_of(logbook)
    papers = [m.group("id") for t in tags if (m := _PAPER_TAG.match(t))]
    missing = [t for t, present in (("icml2026-repro", "icml2026-repro" in tags),
                                    ("paper-<id>", bool(papers))) if not present]
    if missing:
        checklist.add("tags", MISSING, f"missing tag(s): {', '.join(missing)}"
                                       f" (found: {', '.join(tags) or 'none'})")
    elif len(papers) > 1:
        checklist.add("tags", WARNING, f"more than one paper tag: {', '.join(papers)}; the "
                                       f"first is used")
    else:
        checklist.add("tags", OK, ", ".join(tags))

    # The event's code: the scripts in each claim page's run cells.
    claim_pages = [p for p in pages if _CLAIM_TITLE.match(p.title.strip())
                   or p.slug.startswith("claim-")]
    for page in claim_pages:
        scripts = scripts_of(page)
        if scripts:
            checklist.add("code", OK, f"run cells on {page.slug}: {', '.join(scripts)}",
                          file=relative(page.path, folder))
        else:
            checklist.add("code", MISSING, f"no run cell naming a script on {page.slug}",
                          file=relative(page.path, folder))
    if not claim_pages:
        checklist.add("code", MISSING, "no claim page, so no run cell with its script")

    # The event's environment: a file the logbook links, else one beside it; a warning only.
    linked = sorted({m.group(0) for p in logbook.pages for m in _ENV_NAMES.finditer(p.text)})
    if linked or environment_files(folder):
        check_environment(checklist, folder, status_if_none=WARNING,
                          extra=[f"linked: {name}" for name in linked])
    else:
        checklist.add("environment", WARNING, "the logbook links no environment file (" +
                      ", ".join(ENV_PATTERNS[:5]) + ")")
