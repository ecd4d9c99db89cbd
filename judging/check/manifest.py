"""The checklist of a submission in our manifest format (`submission.yaml`)."""

from __future__ import annotations

from pathlib import Path

from judging.check.common import (
    check_environment,
    check_results,
    check_scale,
    check_verdict,
    falsified,
    missing_files,
    relative,
    trace_files,
)
from judging.check.model import MISSING, OK, WARNING, Checklist
from judging.check.personal import scan, text_files
from judging.intake import LoadedSubmission


def _item_of(reason: str) -> str:
    """The checklist item a claim that does not load is about (the model's own rules: a number
    claim needs its numbers, a falsified one its proof...), else `claims`."""
    for item, words in (("results", ("reported_value", "reproduced_value", "values",
                                     "reproduced_figure")),
                        ("proof script", ("proof_script",)), ("problem kind", ("problem_kind",)),
                        ("verdict", ("verdict", "justification")), ("logs", ("logs",))):
        if any(word in reason for word in words):
            return item
    return "claims"


def check_manifest(checklist: Checklist, loaded: LoadedSubmission, folder: Path) -> None:
    manifest = relative(loaded.manifest, folder)
    for problem in loaded.problems:
        checklist.add(_item_of(problem.reason), MISSING, f"claim {problem.claim_id or '#' + str(problem.index)}"
                      f" does not load: {problem.reason}", claim=problem.claim_id,
                      file=manifest, line=problem.line)
    if not loaded.claims and not loaded.problems:
        checklist.add("claims", MISSING, "the manifest lists no claim", file=manifest)
    elif loaded.claims:
        checklist.add("claims", OK, f"{len(loaded.claims)} claim(s)", file=manifest)

    scripts = sorted({relative(c.evidence_paths["script"], folder) for c in loaded.claims
                      if "script" in c.evidence_paths})
    without = [c.claim.claim_id for c in loaded.claims if "script" not in c.evidence_paths]
    absent_scripts = sorted({name for c in loaded.claims for name in missing_files(
        {k: p for k, p in c.evidence_paths.items() if k == "script" or k.startswith("scripts[")},
        folder)})
    if not scripts:
        checklist.add("code", MISSING, "no claim names a script (evidence.script)")
    elif absent_scripts:
        checklist.add("code", MISSING, f"named but not in the submission: "
                                       f"{', '.join(absent_scripts)}")
    elif without:
        checklist.add("code", WARNING, f"{', '.join(scripts)}; no script for "
                                       f"{', '.join(without)}")
    else:
        checklist.add("code", OK, ", ".join(scripts))

    check_environment(checklist, folder)

    traces = trace_files(folder)
    agent = loaded.header.agent
    who = f"{agent.name}" + (f" ({agent.model})" if agent.model else "") if agent else None
    if traces:
        checklist.add("trace", OK, ", ".join(relative(p, folder) for p in traces) +
                      (f"; agent {who}" if who else ""))
    else:
        checklist.add("trace", MISSING, "no agent trace (a traces/ folder or a *trace* file)" +
                      (f"; the manifest names agent {who}" if who else ""))

    for claim in loaded.claims:
        cid = claim.claim.claim_id
        check_results(checklist, claim, cid)
        logs = {k: p for k, p in claim.evidence_paths.items() if k.startswith("logs[")}
        absent = missing_files(logs, folder)
        if absent:
            checklist.add("logs", MISSING, f"named (evidence.logs) but not in the submission: "
                                           f"{', '.join(absent)}", claim=cid)
        elif logs:
            checklist.add("logs", OK, ", ".join(relative(p, folder) for p in logs.values()),
                          claim=cid)
        else:
            checklist.add("logs", MISSING, "no run log (evidence.logs)", claim=cid)
        check_verdict(checklist, claim, cid, claim.claim.justification)
        check_scale(checklist, claim, cid, claim.claim.scale_note)
        if falsified(claim):
            proof = claim.evidence_paths.get("proof_script")
            if proof is not None and not proof.is_file():
                checklist.add("proof script", MISSING, f"{relative(proof, folder)} is named "
                                                       f"(evidence.proof_script) but not in the "
                                                       f"submission", claim=cid)
            elif proof is not None:
                checklist.add("proof script", OK, relative(proof, folder), claim=cid)
            else:
                checklist.add("proof script", MISSING, "a falsified claim needs "
                              "evidence.proof_script", claim=cid)
            kind = claim.claim.evidence.problem_kind
            if kind is not None:
                checklist.add("problem kind", OK, kind.value + (
                    f": {claim.claim.evidence.problem_note}"
                    if claim.claim.evidence.problem_note else ""), claim=cid)
            else:
                checklist.add("problem kind", MISSING, "a falsified claim needs "
                              "evidence.problem_kind (paper-error, code-bug, environment, data, "
                              "other)", claim=cid)

    referenced = {p.resolve() for c in loaded.claims for k, p in c.evidence_paths.items()
                  if k.startswith("logs[")}
    logs_dir = folder / "logs"
    if logs_dir.is_dir():
        stray = [relative(p, folder) for p in sorted(logs_dir.rglob("*"))
                 if p.is_file() and p.resolve() not in referenced]
        if stray:
            checklist.add("logs", WARNING, f"logs no claim names (fine for failed runs; say "
                                           f"which claim they belong to): {', '.join(stray)}")

    found = scan(checklist, folder, text_files(folder), base=folder)
    if not found:
        checklist.add("personal data", OK, "no e-mail address, token or key, or home-directory "
                                           "path in the submission's files")
