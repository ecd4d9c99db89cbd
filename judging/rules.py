"""Named rule checks that rubrics attach to criteria (`offline: {rule: NAME}`) for the offline judge.

A rule answers yes/no from the claim's files and signals, or declines (value None) with the reason
a human or an LLM is needed. Rules never guess: declining is always allowed, a made-up answer never.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judging.models import (
    RERUN_AGREES,
    RERUN_ATTEMPTED,
    ClaimInput,
    ClaimKind,
    Signal,
    SignalStatus,
    Verdict,
)

#: Logs are read up to this size each: enough for any training log, bounded for hostile input.
MAX_LOG_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True)
class RuleResult:
    value: bool | int | str | None
    """The answer (yes/no, a level for ordinal criteria, a category for categorical ones), or
    None when the rule cannot decide (the criterion stays unscored)."""
    rationale: str
    confidence: float = 1.0
    applicable: bool = True
    """False when the criterion does not apply to this claim for a reason only the rule can see
    (there is no re-run to read): the answer is "not applicable" (no weight), with the rationale
    as its reason."""
    quote: str | None = None
    """The participant's text the answer rests on, verbatim (categorical answers)."""


RuleCheck = Callable[[ClaimInput, dict[str, Signal]], RuleResult]
RULES: dict[str, RuleCheck] = {}
RULE_DESCRIPTIONS: dict[str, str] = {}
#: Rules that may answer "not applicable" (`RuleResult.applicable`): asked before any judge.
CONDITIONAL_RULES: set[str] = set()


def rule(name: str, description: str, *, conditional: bool = False
         ) -> Callable[[RuleCheck], RuleCheck]:
    def register(check: RuleCheck) -> RuleCheck:
        RULES[name] = check
        RULE_DESCRIPTIONS[name] = description
        if conditional:
            CONDITIONAL_RULES.add(name)
        return check
    return register


def quote(name: str) -> str:
    """A participant-chosen name (file, table cell) quoted on one line: rationales are shown to
    LLM judges, and quoting keeps such a name from reading as our own words."""
    return json.dumps(name[:200], ensure_ascii=False)


def _signal_value(signals: dict[str, Signal], name: str) -> Signal | None:
    signal = signals.get(name)
    return signal if signal is not None and signal.status is SignalStatus.ok else None


def _absent_reason(signals: dict[str, Signal], name: str, *, missing: str | None = None) -> str:
    """Why `name` has no value: its recorded reason, else `missing` (default: not measured)."""
    signal = signals.get(name)
    if signal is not None and signal.reason:
        return signal.reason
    return missing or f"{name} was not measured"


@rule("verdict_consistent_with_tolerance",
      "verified iff the reproduced numbers are within tolerance, falsified iff they are not")
def verdict_consistent_with_tolerance(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    verdict = claim.claim.verdict
    if verdict is None:
        return RuleResult(None, "no verdict was found: "
                          + claim.claim.absent.get("verdict", "none given"))
    if claim.claim.kind not in (ClaimKind.number, ClaimKind.table):
        return RuleResult(None, f"a {claim.claim.kind} claim has no numbers to check the verdict "
                                f"against: needs an LLM or a human")
    if verdict is Verdict.inconclusive:
        return RuleResult(None, "whether an inconclusive verdict is warranted is a judgement "
                                "call: needs an LLM or a human")
    within = _signal_value(signals, "numeric.within_tolerance")
    if within is None:
        return RuleResult(None, "cannot compare the numbers: " + _absent_reason(
            signals, "numeric.within_tolerance", missing="no signal"))
    expected = Verdict.verified if within.value else Verdict.falsified
    where = "within" if within.value else "outside"
    if verdict is expected:
        return RuleResult(True, f"the reproduced value is {where} tolerance and the verdict is "
                                f"{verdict}")
    return RuleResult(False, f"the reproduced value is {where} tolerance but the verdict is "
                             f"{verdict} (expected {expected})")


@rule("own_verdict_from_numbers",
      "the judge's own verdict where declared numbers and a tolerance settle it: verified "
      "within tolerance, falsified outside it, toy for a run the participant calls reduced-scale")
def own_verdict_from_numbers(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    c = claim.claim
    if c.kind not in (ClaimKind.number, ClaimKind.table):
        return RuleResult(None, f"a {c.kind} claim has no declared numbers to settle it: needs an "
                                f"LLM or a human to read the evidence")
    within = _signal_value(signals, "numeric.within_tolerance")
    if within is None:
        return RuleResult(None, "the declared numbers do not settle it: " + _absent_reason(
            signals, "numeric.within_tolerance", missing="no numbers compared"))
    if c.kind is ClaimKind.number:
        numbers = (f"reported {c.reported_value:g}, reproduced {c.reproduced_value:g}, tolerance "
                   f"{c.tolerance.describe() if c.tolerance else 'none'}")
    else:
        numbers = "; ".join(f"{quote(cell.name)}: {cell.reported:g} -> {cell.reproduced:g}"
                            for cell in c.values or [] if cell.reported is not None
                            and cell.reproduced is not None)
    source = c.provenance.get("reproduced_value")
    cited = source.quote if source is not None and source.quote else None
    where = "within" if within.value else "outside"
    if c.toy:
        # The participant's own word that the run is reduced-scale speaks against their claim,
        # so it is taken: such numbers settle neither direction.
        toy = c.provenance.get("toy")
        return RuleResult("toy", f"the numbers are {where} tolerance ({numbers}), but from a run "
                                 f"the participant calls toy / reduced scale",
                          quote=(toy.quote if toy is not None and toy.quote else
                                 c.scale_note or cited))
    return RuleResult("verified" if within.value else "falsified",
                      f"the reproduced numbers are {where} tolerance ({numbers})", quote=cited)


def _file_state(path: Path | None) -> str | None:
    """None when the file is usable, else what is wrong with it."""
    if path is None:
        return "not found in the submission"
    if not path.is_file():
        return "not found in the submission"
    if path.stat().st_size == 0:
        return "is empty"
    return None


@rule("falsified_has_proof",
      "a falsified claim names a proof script that exists and is not empty, and a problem kind")
def falsified_has_proof(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    evidence = claim.claim.evidence
    if claim.claim.verdict is not Verdict.falsified:
        return RuleResult(None, "only falsified claims need a proof script")
    missing: list[str] = []
    if not evidence.proof_script:
        missing.append("no proof_script is named")
    else:
        state = _file_state(claim.evidence_paths.get("proof_script"))
        if state:
            missing.append(f"proof script {quote(evidence.proof_script)} {state}")
    if evidence.problem_kind is None:
        missing.append("no problem_kind is given")
    if missing:
        return RuleResult(False, "; ".join(missing))
    return RuleResult(True, f"proof script {quote(evidence.proof_script)} is present; problem "
                            f"kind: {evidence.problem_kind.value}")


@rule("evidence_cited", "the claim cites logs or a script, and every cited file exists")
def evidence_cited(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    evidence = claim.claim.evidence
    cited = [("script", evidence.script)] if evidence.script else []
    cited += [(f"scripts[{i}]", script) for i, script in enumerate(evidence.scripts)]
    cited += [(f"logs[{i}]", log) for i, log in enumerate(evidence.logs)]
    if not cited:
        return RuleResult(False, "no log or script is cited")
    problems = []
    for role, name in cited:
        state = _file_state(claim.evidence_paths.get(role))
        if state:
            problems.append(f"{quote(name)} {state}")
    if problems:
        return RuleResult(False, "; ".join(problems))
    return RuleResult(True, "cited: " + ", ".join(quote(name) for _, name in cited))


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _decimals(value: float) -> int:
    text = repr(float(value))
    if "e" in text or "E" in text:
        return 6
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


def number_in_text(value: float, text: str) -> bool:
    """Whether `value` appears in `text` at the precision it is written with.

    93.8 matches "93.8", "93.80" and "93.79" rounded to one decimal, and also the same number
    written as a fraction or a percentage ("0.938" for 93.8), a common difference between a
    paper and a training log.
    """
    half_unit = 0.5 * 10 ** (-_decimals(value))
    targets = [(value, half_unit), (value / 100, half_unit / 100), (value * 100, half_unit * 100)]
    # value * 100 overflows near 1.8e306: such a target matches nothing
    targets = [(target, slack) for target, slack in targets if math.isfinite(target)]
    for match in _NUMBER.finditer(text):
        try:
            found = float(match.group())
        except ValueError:
            continue
        if not math.isfinite(found):
            continue
        for target, slack in targets:
            if abs(found - target) <= slack + 1e-12 * max(1.0, abs(target)):
                return True
    return False


def _read_log(path: Path) -> str:
    with path.open("rb") as handle:
        return handle.read(MAX_LOG_BYTES).decode("utf-8", errors="replace")


@rule("value_in_logs", "every reproduced value appears in at least one of the cited logs")
def value_in_logs(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    c = claim.claim
    if c.kind is ClaimKind.number:
        values = [("reproduced_value", c.reproduced_value)] if c.reproduced_value is not None else []
    elif c.kind is ClaimKind.table:
        values = [(v.name, v.reproduced) for v in c.values or [] if v.reproduced is not None]
    else:
        return RuleResult(None, f"a {c.kind} claim has no reproduced number to look for")
    if not values:
        return RuleResult(None, "no reproduced value was reported")
    logs = [(name, claim.evidence_paths.get(f"logs[{i}]")) for i, name in enumerate(c.evidence.logs)]
    readable = [(name, path) for name, path in logs if _file_state(path) is None]
    if not readable:
        return RuleResult(False, "no readable log is cited" if not logs
                          else "none of the cited logs exists: "
                          + ", ".join(quote(n) for n, _ in logs))
    texts = {name: _read_log(path) for name, path in readable}
    missing = [f"{quote(label)} = {value:g}" for label, value in values
               if not any(number_in_text(value, text) for text in texts.values())]
    if missing:
        return RuleResult(False, "not found in the cited logs ("
                          + ", ".join(quote(name) for name in texts) + "): " + "; ".join(missing))
    return RuleResult(True, "found in the cited logs: "
                      + "; ".join(f"{quote(label)} = {value:g}" for label, value in values))


@rule("scale_disclosed", "a scale_note discloses a scaled-down reproduction")
def scale_disclosed(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    if (claim.claim.scale_note or "").strip():
        return RuleResult(True, "the submission has a scale note describing the reduction")
    return RuleResult(None, "no scale note: whether the run was scaled down without saying so "
                            "needs an LLM or a human to read the logs and the justification")


#: Scripts are read up to this size each when looking for the call that writes a figure.
MAX_SCRIPT_BYTES = 1024 * 1024
#: A call that writes a figure file, in the plotting languages submissions use (matplotlib,
#: Pillow, plotly, ggplot2 and base R, MATLAB, imageio/OpenCV).
_WRITES_FIGURE = re.compile(
    r"savefig|save_?fig(?:ure)?\s*\(|\.save\s*\(|ggsave|write_image|imsave|imwrite|"
    r"\bpng\s*\(|\bpdf\s*\(|saveas\s*\(|exportgraphics|print\s*\(\s*['\"]-d(?:png|pdf|svg)")
#: A log of a run that failed (a logbook run cell's log records its exit code on such a line).
_FAILED_RUN = re.compile(r"^exit code:\s*(?!0\s*$)-?\d+\s*$", re.MULTILINE)


@dataclass(frozen=True)
class RerunEvidence:
    """Where a claim's logs show its plotting script re-run."""

    log: str
    """The cited log's name, as the submission gives it."""
    line: str
    """The line of the log that shows it."""
    script: str
    """The cited script that writes the figure."""

    def describe(self) -> str:
        return (f"{quote(self.log)} shows {quote(self.line)} (the script {quote(self.script)} "
                f"writes a figure)")


def _cited(claim: ClaimInput, prefix: str, names: list[str]) -> list[tuple[str, Path]]:
    """The cited files of one kind that exist and are not empty: (name, path)."""
    found = []
    for i, name in enumerate(names):
        role = prefix if prefix == "script" else f"{prefix}[{i}]"
        path = claim.evidence_paths.get(role)
        if _file_state(path) is None:
            assert path is not None
            found.append((name, path))
    return found


def _mentions(line: str, name: str) -> bool:
    """Whether `line` names the file `name` (its base name, not as part of a longer name)."""
    return re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", line) is not None


def plotting_rerun(claim: ClaimInput) -> RerunEvidence | None:
    """The line of a cited log that shows the claim's plotting script re-run, or None.

    A cited script must exist and write a figure (or name the reproduced figure's file), and a
    cited log of a run that did not fail must name the reproduced figure's file or that script
    (a log line of the file being written, or the run command). The figure's file name is the
    stronger evidence and is looked for first.
    """
    evidence = claim.claim.evidence
    names = [evidence.script] if evidence.script else []
    scripts = _cited(claim, "script", names) + _cited(claim, "scripts", list(evidence.scripts))
    figure_names = {Path(name).name for name in (claim.claim.reproduced_figure,
                                                 claim.reproduced_path) if name}
    figure_names = {name for name in figure_names if len(name) >= 5}
    writers = []
    for name, path in scripts:
        with path.open("rb") as handle:
            text = handle.read(MAX_SCRIPT_BYTES).decode("utf-8", errors="replace")
        if _WRITES_FIGURE.search(text) or any(_mentions(text, f) for f in figure_names):
            writers.append(name)
    if not writers:
        return None
    for log_name, path in _cited(claim, "logs", list(evidence.logs)):
        text = _read_log(path)
        if _FAILED_RUN.search(text):
            continue
        lines = text.splitlines()
        for targets in (sorted(figure_names), writers):
            for line in lines:
                hit = next((t for t in targets if _mentions(line, Path(t).name)), None)
                if hit is not None:
                    script = hit if hit in writers else writers[0]
                    return RerunEvidence(log=log_name, line=line.strip()[:200], script=script)
    return None


@rule("not_a_copy", "the reproduced figure is not a copy of the published one")
def not_a_copy(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    copy = _signal_value(signals, "pixel.copy")
    if copy is None:
        return RuleResult(None, "copy check unavailable: " + _absent_reason(
            signals, "pixel.copy", missing="no figure pair"))
    near = _signal_value(signals, "pixel.near_identical")
    if near is not None and near.value:
        return RuleResult(None, "pixel-identical to the published figure but for a few small "
                                "clusters of pixels (text placed a pixel otherwise): the same "
                                "plotting code run again elsewhere, or a copy with a label "
                                "edited; a human should tell which")
    rerender = _signal_value(signals, "pixel.identical_rerender")
    if rerender is not None and rerender.value:
        rerun = plotting_rerun(claim)
        shown = rerun.describe() if rerun is not None else "the plotting script re-run"
        return RuleResult(None, f"pixel-identical, but the logs show {shown}: a human should "
                                f"confirm a bit-exact re-run")
    if copy.value:
        # A pixel-identical figure without such logs, or the published figure re-encoded,
        # re-framed, resized or turned gray; a re-run at another resolution looks alike.
        return RuleResult(False, "the reproduced figure is a copy of the published one "
                                 "(pixel-identical, or re-encoded, re-framed, resized or gray), "
                                 "and no cited log shows its plotting script re-run",
                          confidence=0.8)
    return RuleResult(True, "the reproduced figure is not a copy of the published one: its marks "
                            "were drawn again")


@rule("chart_axes", "levels 1-5 from the charts' axis scale types and data ranges")
def chart_axes(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    scale = _signal_value(signals, "chart.axis_scale_match")
    overlap = _signal_value(signals, "chart.range_overlap")
    if scale is None:
        return RuleResult(None, "axis scales unreadable: "
                                + _absent_reason(signals, "chart.axis_scale_match"))
    if not scale.value:
        return RuleResult(2, "the axes use another scale type (linear vs log)", confidence=0.8)
    if overlap is None:
        return RuleResult(None, "axis ranges unreadable: "
                                + _absent_reason(signals, "chart.range_overlap"))
    value = float(overlap.value)
    level = 5 if value >= 0.9 else 4 if value >= 0.75 else 3
    return RuleResult(level, f"same scale types; data ranges overlap {value:.2f} (IoU)",
                      confidence=0.7)


@rule("chart_same_series", "the reproduction shows exactly the published series")
def chart_same_series(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    published = _signal_value(signals, "chart.series_published")
    reproduced = _signal_value(signals, "chart.series_reproduced")
    matched = _signal_value(signals, "chart.series_matched")
    if published is None or reproduced is None or matched is None:
        missing = next(n for n in ("chart.series_published", "chart.series_reproduced",
                                   "chart.series_matched") if _signal_value(signals, n) is None)
        return RuleResult(None, "series unreadable: " + _absent_reason(signals, missing))
    same = int(published.value) == int(reproduced.value) and float(matched.value) >= 1.0
    return RuleResult(same, f"{int(published.value)} published series, "
                            f"{int(reproduced.value)} reproduced, {float(matched.value):.0%} "
                            f"matched", confidence=0.7)


@rule("chart_same_series_named", "the reproduction shows exactly the published series, under "
                                 "the published legend names")
def chart_same_series_named(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    """chart_same_series, and (figure-match 1.3.0) the names: series are paired by their data
    when the legends do not pair them, so a swapped legend passes chart_same_series. When the
    published legend names two or more matched series, their names must be read on the
    reproduction too, and agree."""
    counted = chart_same_series(claim, signals)
    if counted.value is not True:
        return counted
    named = _signal_value(signals, "chart.named_series")
    if named is None or float(named.value) < 2:
        return counted
    agreement = _signal_value(signals, "chart.legend_agreement")
    if agreement is None:
        return RuleResult(None, "the published legend names the series, but "
                                + _absent_reason(signals, "chart.legend_agreement"))
    if float(agreement.value) < 1.0:
        return RuleResult(False, f"{counted.rationale}, but only {float(agreement.value):.0%} of "
                                 f"the {int(named.value)} named series carry the published name "
                                 f"in the reproduction (swapped or renamed legend entries)",
                          confidence=0.6)
    return RuleResult(True, f"{counted.rationale}; the {int(named.value)} named series carry the "
                            f"published legend names", confidence=0.7)


# --- falsification-audit: the proof of a falsified claim, checked further ----------------------

#: How much of a proof script is read to tell a script from a binary file.
MAX_PROOF_HEAD_BYTES = 64 * 1024
TRACEBACK_HEADER = "Traceback (most recent call last):"
#: The exception line that closes a Python traceback ("ValueError: ...", "pkg.Error", "KeyboardInterrupt").
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?::.*)?$")
#: A log's exit code line, as the logbook importer writes run cells' logs ("exit code: 0").
_EXIT_CODE = re.compile(r"^exit code:\s*(-?\d+)\s*$", re.MULTILINE)
#: Lines a logbook run cell's log starts with (not output of the run).
_RUN_CELL_HEADER = re.compile(r"^(command|exit code|duration|page|cell):|^--- output ---$")
#: Lines after a traceback's exception line that still count as its message: a log that goes
#: on for longer shows the run going on after printing a caught exception.
MESSAGE_LINES = 3


@rule("proof_script_present",
      "the proof script is named, present in the submission, not empty, and a text file")
def proof_script_present(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    name = claim.claim.evidence.proof_script
    if not name:
        return RuleResult(False, "no proof_script is named")
    path = claim.evidence_paths.get("proof_script")
    state = _file_state(path)
    if state:
        return RuleResult(False, f"proof script {quote(name)} {state}")
    assert path is not None
    with path.open("rb") as handle:
        head = handle.read(MAX_PROOF_HEAD_BYTES)
    if b"\0" in head:
        return RuleResult(False, f"proof script {quote(name)} is a binary file, not a script")
    lines = [line for line in head.decode("utf-8", errors="replace").splitlines() if line.strip()]
    return RuleResult(True, f"proof script {quote(name)} is present ({len(lines)} non-blank "
                            f"lines{' or more' if len(head) == MAX_PROOF_HEAD_BYTES else ''})")


def ends_in_traceback(text: str) -> str | None:
    """The exception line when a log ends in a Python traceback (the run died of it), else None.

    The last `Traceback (most recent call last):` counts when its indented frame lines are
    followed by the exception line and at most MESSAGE_LINES more lines (its message); a log
    that goes on after that shows a caught exception printed by a run that continued.
    """
    lines = text.rstrip().splitlines()
    headers = [i for i, line in enumerate(lines) if line.strip() == TRACEBACK_HEADER]
    if not headers:
        return None
    rest = lines[headers[-1] + 1:]
    i = 0
    while i < len(rest) and (not rest[i].strip() or rest[i][:1] in " \t"):
        i += 1
    if i == len(rest):
        return TRACEBACK_HEADER + " (cut before its exception line)"
    exception = rest[i].strip()
    if not _EXCEPTION_LINE.match(exception):
        return None
    trailing = [line for line in rest[i + 1:] if line.strip()]
    return exception if len(trailing) <= MESSAGE_LINES else None


@dataclass(frozen=True)
class ProofRun:
    """What one cited log says about a run of the proof script."""

    log: str
    how: str
    """How the log was tied to the script: the line naming it, or the log's file name."""
    output_lines: int
    exit_code: int | None
    failure: str | None
    """Why the run failed (an exit code other than 0, a traceback, no output), or None."""


def proof_runs(claim: ClaimInput) -> list[ProofRun]:
    """The cited logs that show a run of the claim's proof script: a log with a line naming
    the script (a `$ python proof.py` line, a run cell's `command:`), or named after it
    (`logs/proof_c3.txt` for `proof_c3.py`)."""
    evidence = claim.claim.evidence
    if not evidence.proof_script:
        return []
    script = Path(evidence.proof_script)
    runs = []
    for name, path in _cited(claim, "logs", list(evidence.logs)):
        text = _read_log(path)
        lines = text.splitlines()
        mention = next((i for i, line in enumerate(lines) if _mentions(line, script.name)), None)
        if mention is None and Path(name).stem != script.stem:
            continue
        how = (f"line {mention + 1}: {quote(lines[mention].strip())}" if mention is not None
               else f"the log is named after {quote(script.name)}")
        output = [line for i, line in enumerate(lines) if line.strip() and i != mention
                  and not _RUN_CELL_HEADER.match(line.strip())]
        code_line = _EXIT_CODE.search(text)
        code = int(code_line.group(1)) if code_line else None
        failure = None
        if code is not None and code != 0:
            failure = f"it records exit code {code}"
        elif (exception := ends_in_traceback(text)) is not None:
            failure = f"it ends in a traceback ({quote(exception)})"
        elif not output:
            failure = "it shows no output"
        runs.append(ProofRun(log=name, how=how, output_lines=len(output), exit_code=code,
                             failure=failure))
    return runs


@rule("proof_run_logged",
      "a cited log shows the proof script run to its end: its output, exit code 0 where the "
      "log records one, no traceback at its end; no only when a log tied to the script shows "
      "the run failing, no answer when no cited log can be tied to it")
def proof_run_logged(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    # Absent beats wrong: "no" needs a log of the proof's own run that shows it failing. A log
    # the rule cannot tie to the script (named neither in it nor after it, e.g. logs/proof_c1.txt
    # for proof.py) may well be that run: a person reads it.
    evidence = claim.claim.evidence
    if not evidence.proof_script:
        return RuleResult(None, "no proof_script is named (proof_script_present answers that), "
                                "so there is no run to look for")
    script = quote(evidence.proof_script)
    if not evidence.logs:
        return RuleResult(None, f"no log is cited, so none shows whether {script} ran")
    runs = proof_runs(claim)
    good = [run for run in runs if run.failure is None]
    if good:
        run = good[0]
        code = "; exit code 0" if run.exit_code == 0 else ""
        confidence = 1.0 if run.exit_code == 0 else 0.9 if run.how.startswith("line") else 0.7
        return RuleResult(True, f"{quote(run.log)} shows the run of {script} ({run.how}) and "
                                f"{run.output_lines} line(s) of its output{code}",
                          confidence=confidence)
    if runs:
        return RuleResult(False, "the run of " + script + " failed: " + "; ".join(
            f"{quote(run.log)}: {run.failure}" for run in runs), confidence=0.9)
    cited = ", ".join(quote(name) for name in evidence.logs)
    return RuleResult(None, f"no cited log can be tied to {script} (none names it or is named "
                            f"after it: {cited}); a reviewer reads them")


@rule("problem_kind_given", "a falsified claim says what kind of problem it found")
def problem_kind_given(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    evidence = claim.claim.evidence
    if evidence.problem_kind is None:
        return RuleResult(False, "no problem_kind is given")
    note = f" ({quote(evidence.problem_note)})" if (evidence.problem_note or "").strip() else ""
    return RuleResult(True, f"problem kind: {evidence.problem_kind.value}{note}")


#: The fact of `judging consensus` that the audit reads (see the signal catalogue).
CONSENSUS_AGREES = "consensus.agrees"


@rule("consensus_agrees",
      "the registry claim's consensus verdict (judging consensus) is this claim's verdict")
def consensus_agrees(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    signal = signals.get(CONSENSUS_AGREES)
    if signal is None:
        return RuleResult(None, "no consensus available: the run has no consensus of the "
                                "registry claim's reproductions (`judging consensus`)")
    if signal.status is SignalStatus.absent:
        return RuleResult(None, f"no consensus available: {signal.reason}")
    verdict = claim.claim.verdict.value if claim.claim.verdict else "none"
    if signal.value:
        return RuleResult(True, f"the consensus of the independent reproductions of this "
                                f"registry claim is {verdict}, as this claim's verdict")
    return RuleResult(False, f"the consensus of the independent reproductions of this registry "
                             f"claim is the opposite of this claim's verdict ({verdict})")


@rule("rerun_reproduces",
      "the re-run of the claim's script (judging rerun) gave the participant's number(s); not "
      "applicable to a claim that was not re-run", conditional=True)
def rerun_reproduces(claim: ClaimInput, signals: dict[str, Signal]) -> RuleResult:
    attempted, agrees = signals.get(RERUN_ATTEMPTED), signals.get(RERUN_AGREES)
    if attempted is None or attempted.status is SignalStatus.absent or not attempted.value:
        why = (attempted.reason if attempted is not None and attempted.reason
               else "not re-run: `judging rerun` has no result for this claim")
        return RuleResult(None, why, applicable=False)
    if agrees is None or agrees.status is SignalStatus.absent:
        # A re-run that did not reach a number may be the script's fault or the sandbox's (no
        # network, no GPU): a person decides.
        return RuleResult(None, (agrees.reason if agrees is not None and agrees.reason else
                                 "the re-run gave no number") + "; needs a human")
    return RuleResult(bool(agrees.value), agrees.reason or "")
