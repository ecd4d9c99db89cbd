"""The checklist of a free-form Hugging Face Space (the NeurIPS 2026 hackathon's shape): its
files that could not be read, its claims, code, environment, agent trace (Claude-Code event
JSONL in the Space or in a dataset it links), logs, results, verdicts and scale notes."""

from __future__ import annotations

from pathlib import Path

from judging.check.common import (
    check_environment,
    check_results,
    check_scale,
    check_verdict,
    falsified,
)
from judging.check.model import MISSING, OK, WARNING, Checklist
from judging.check.personal import scan
from judging.intake import LoadedSubmission, SpaceFiles


def check_space(checklist: Checklist, loaded: LoadedSubmission, files: SpaceFiles,
                folder: Path) -> None:
    for where, what in files.errors:
        checklist.add("files", WARNING, what, file=where)
    listed = {f"{where}: {what}" for where, what in files.errors}
    unread = set()  # the results files and logs the load could not read (as `run` says)
    for problem in loaded.problems:
        if "/file/" not in (problem.claim_id or ""):
            checklist.add("claims", MISSING, problem.reason, claim=problem.claim_id)
        elif problem.reason not in listed:
            where = problem.reason.split(": ", 1)[0]
            unread.add(where)
            checklist.add("results" if where in files.results else "files", WARNING,
                          problem.reason)
    if loaded.claims:
        checklist.add("claims", OK, f"{len(loaded.claims)} claim(s) from "
                                    f"{', '.join(sorted({c.origin or '' for c in loaded.claims}))}")
    paper = loaded.header.paper_id
    warnings = [w for w in loaded.header.warnings if w.startswith("paper id:")]
    checklist.add("paper", WARNING if warnings else OK, warnings[0] if warnings else paper)
    if files.scripts:
        checklist.add("code", OK, ", ".join(files.scripts[:20]))
    else:
        checklist.add("code", MISSING, "no script (.py, .sh, .ipynb) in the Space")
    check_environment(checklist, folder)
    traces = sorted({t for c in loaded.claims for t in c.claim.evidence.traces})
    if traces:
        checklist.add("trace", OK, f"{len(traces)} agent trace(s) (Claude-Code events or "
                                   "HuggingChat exports): "
                                   + ", ".join(traces[:10]))
    elif files.traces:
        checklist.add("trace", WARNING, f"{len(files.traces)} trace(s) found, none naming this "
                                        f"paper or Space: " + ", ".join(files.traces[:10]))
    else:
        linked = f"; linked datasets: {', '.join(files.linked)}" if files.linked else ""
        checklist.add("trace", MISSING, "no agent trace (Claude-Code event JSONL in the Space "
                                        "or in a dataset its README links)" + linked)
    if files.logs:
        checklist.add("logs", OK, ", ".join(files.logs[:20]))
    else:
        checklist.add("logs", MISSING, "no log file (*.log, logs/*.txt) in the Space")
    if read := [rel for rel in files.results if rel not in unread]:
        checklist.add("results", OK, "results files: " + ", ".join(read[:20]))
    for claim in loaded.claims:
        cid = claim.claim.claim_id
        check_results(checklist, claim, cid)
        check_verdict(checklist, claim, cid, claim.claim.justification)
        check_scale(checklist, claim, cid, claim.claim.scale_note)
        if falsified(claim) and not claim.claim.evidence.script:
            checklist.add("proof script", MISSING, "a falsified claim needs the script that "
                                                   "shows it", claim=cid)
    texts = [folder / rel for rel, _ in files.texts()] + [folder / rel for rel in files.logs]
    if not scan(checklist, folder, [p for p in texts if p.is_file()], base=folder):
        checklist.add("personal data", OK, "no e-mail address, token or key, or home-directory "
                                           "path in the reports and logs")
