"""The number(s) of a re-run: read from what the claim declares, compared with the paper's and the
participant's values within the claim's tolerance.

Where a number is read, first that applies:

1. the registry's `rerun_pattern` for the claim (the organizers': authoritative): the first group
   of its last match in the output;
2. the claim's `evidence.rerun.read`: a results file and key (`source: file`), the last
   `KEY=VALUE` line of the output (`source: line`), or a key of the last line of output read as
   JSON (`source: json`);
3. by default, the last line of output read as JSON: a number, or an object holding the
   number's key (a table's cell names), or a single number.

A value that is not a finite number (text, true/false, NaN) is not read: the problem says why.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from judging.models import ClaimInput, ClaimKind, RerunRead, RerunValue, Tolerance

#: Without a tolerance, two numbers agree when they are the same at the precision the reference
#: is written with (93.8 and 93.80 agree; 93.8 and 93.85 do not): half a unit of its last digit.
PRECISION_SLACK = 0.5
#: Output lines longer than this are not read as KEY=VALUE or JSON lines (a hostile megabyte line).
MAX_LINE_CHARS = 100_000
#: A number in an output line, possessive (Python 3.11): once its digits are read they are never
#: given back, so a line of 100,000 digits that is not a number fails in linear time (with
#: backtracking, the digits split two ways at every position: quadratic, minutes per line).
_NUMBER = r"[-+]?+(?:\d++\.?+\d*+|\.\d++)(?:[eE][-+]?+\d++)?+"


@dataclass(frozen=True)
class Reading:
    value: float | None
    how: str
    quote: str | None = None
    problem: str | None = None


def value_names(claim: ClaimInput) -> list[str]:
    """The numbers a re-run is compared on: "value" for a number claim, the cells of a table."""
    if claim.claim.kind is ClaimKind.table:
        return [cell.name for cell in claim.claim.values or []]
    return ["value"]


def _finite(raw: object) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        return None
    try:
        value = float(raw)
    except (ValueError, OverflowError):  # an integer too large for a float is no measurement
        return None
    return value if math.isfinite(value) else None


def _loads(text: str) -> tuple[bool, object]:
    """(whether `text` parses as JSON, its data). Hostile text is not JSON here: nesting deeper
    than the parser recurses (50,000 `[`), an integer of more digits than Python converts."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _quote(raw: object) -> str | None:
    """`raw` as JSON for a quote (None when it cannot be written back: too deep)."""
    try:
        return json.dumps(raw)[:500]
    except (ValueError, RecursionError, TypeError):
        return None


def _lookup(data: object, key: str) -> tuple[bool, object]:
    """A dotted key in nested JSON objects (`metrics.top1`), or the whole key when present."""
    if isinstance(data, dict) and key in data:
        return True, data[key]
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return False, None
        data = data[part]
    return True, data


def _from_json(data: object, key: str | None, *, how: str, quote: str | None) -> Reading:
    if key is None:
        if isinstance(data, dict):
            numbers = [(k, v) for k, v in data.items() if _finite(v) is not None
                       and not isinstance(v, str)]
            if len(numbers) != 1:
                return Reading(None, how, quote, f"the object holds {len(numbers)} numbers and "
                                                 f"no key says which one")
            data = numbers[0][1]
        value = _finite(data) if not isinstance(data, str) else None
        return Reading(value, how, quote, None if value is not None else "not a number")
    found, raw = _lookup(data, key)
    if not found:
        return Reading(None, how, quote, f"no key {json.dumps(key)}")
    value = _finite(raw) if not isinstance(raw, str) else _finite(raw.strip())
    return Reading(value, how, quote,
                   None if value is not None else f"{json.dumps(key)} is not a finite number")


def _last_json_line(stdout: str) -> tuple[object, str] | None:
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines or len(lines[-1]) > MAX_LINE_CHARS:
        return None
    parsed, data = _loads(lines[-1])
    return (data, lines[-1]) if parsed else None


def read_values(claim: ClaimInput, *, stdout: str, results: bytes | None) -> dict[str, Reading]:
    """Each compared number's reading, by name (see the module's order)."""
    names = value_names(claim)
    spec = claim.claim.evidence.rerun.read if claim.claim.evidence.rerun else None
    pattern = claim.rerun_pattern
    if pattern is not None:
        patterns = ({name: pattern for name in names} if isinstance(pattern, str)
                    else {name: pattern.get(name) for name in names})
        return {name: _from_pattern(stdout, patterns[name]) for name in names}
    if spec is not None and spec.source == "file":
        return _from_results(spec, names, results)
    if spec is not None and spec.source == "line":
        return {name: _from_line(stdout, _key(spec, name, len(names))) for name in names}
    last = _last_json_line(stdout)
    how = "the last line of output, as JSON"
    if last is None:
        return {name: Reading(None, how, None, "the last line of output is not JSON")
                for name in names}
    data, line = last
    default_key = None if len(names) == 1 and names[0] == "value" else ""
    return {name: _from_json(data, _key(spec, name, len(names), default=default_key), how=how,
                             quote=line[:500]) for name in names}


def _key(spec: RerunRead | None, name: str, count: int, *, default: str | None = "") -> str | None:
    """The key of one compared number: the declared key (a number claim), the cell's declared
    key or its name (a table), else `default` ("" for "the name itself")."""
    if spec is not None and spec.keys is not None:
        return spec.keys.get(name, name)
    if spec is not None and spec.key is not None and count == 1:
        return spec.key
    if default == "":
        return name
    return default


def _from_pattern(stdout: str, pattern: str | None) -> Reading:
    if pattern is None:
        return Reading(None, "the registry's pattern", None, "the registry gives no pattern "
                                                             "for this cell")
    how = f"the registry's pattern {json.dumps(pattern)}"
    found = None
    for line in stdout.splitlines():
        if len(line) <= MAX_LINE_CHARS:
            found = re.search(pattern, line) or found
    if found is None:
        return Reading(None, how, None, "no output line matches it")
    value = _finite(found.group(1))
    return Reading(value, how, found.group(0)[:500],
                   None if value is not None else f"{found.group(1)!r} is not a number")


def _from_line(stdout: str, key: str | None) -> Reading:
    how = f"the last output line {key}=VALUE"
    line_pattern = re.compile(rf"(?:^|[\s,;{{(]){re.escape(key or '')}\s*=\s*({_NUMBER})"
                              rf"(?![\w.])")
    found = None
    for line in stdout.splitlines():
        if len(line) <= MAX_LINE_CHARS:
            matches = list(line_pattern.finditer(line))
            if matches:
                found = (matches[-1], line)
    if found is None:
        return Reading(None, how, None, f"no output line has {key}=<number>")
    return Reading(_finite(found[0].group(1)), how, found[1].strip()[:500])


def _from_results(spec: RerunRead, names: list[str], results: bytes | None) -> dict[str, Reading]:
    how = f"the results file {json.dumps(spec.file)}"
    if results is None:
        return {name: Reading(None, how, None, "the script did not write it (or it is over "
                                                "1 MiB)") for name in names}
    try:
        parsed, data = _loads(results.decode("utf-8"))
    except UnicodeDecodeError:
        parsed = False
    if not parsed:
        return {name: Reading(None, how, None, "it is not JSON (or nested deeper, or a number "
                                               "longer, than it can be read)")
                for name in names}
    default_key = None if len(names) == 1 and names[0] == "value" else ""
    out = {}
    for name in names:
        key = _key(spec, name, len(names), default=default_key)
        reading = _from_json(data, key, how=f"{how}, key {json.dumps(key)}" if key else how,
                             quote=None)
        found, raw = _lookup(data, key) if key else (False, None)
        shown = _quote(raw) if found else None
        out[name] = Reading(reading.value, reading.how,
                            f"{json.dumps(key)}: {shown}"[:500] if shown is not None else None,
                            reading.problem)
    return out


def _decimals(value: float) -> int:
    text = repr(float(value))
    if "e" in text or "E" in text:
        return 12
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


def agrees(value: float, reference: float, tolerance: Tolerance | None) -> bool:
    """Whether a re-run's value agrees with a reference within the tolerance (without one: at the
    precision the reference is written with, PRECISION_SLACK of its last digit).

    >>> agrees(93.80, 93.8, None), agrees(93.86, 93.8, None), agrees(93.7, 94.1, Tolerance(absolute=0.5))
    (True, False, True)
    """
    difference = abs(value - reference)
    if tolerance is None:
        return difference < PRECISION_SLACK * 10 ** -_decimals(reference)
    if tolerance.absolute is not None:
        return difference <= tolerance.absolute + 1e-12
    assert tolerance.relative is not None
    return difference <= tolerance.relative * abs(reference) + 1e-12


def compare(claim: ClaimInput, readings: dict[str, Reading]) -> list[RerunValue]:
    """Each re-run number beside the paper's and the participant's, with whether it agrees."""
    effective = claim.claim
    cells = {cell.name: cell for cell in effective.values or []}
    values = []
    for name, reading in readings.items():
        if effective.kind is ClaimKind.table:
            cell = cells[name]
            reported, reproduced = cell.reported, cell.reproduced
            tolerance = cell.tolerance or effective.tolerance
        else:
            reported, reproduced = effective.reported_value, effective.reproduced_value
            tolerance = effective.tolerance
        value = reading.value
        values.append(RerunValue(
            name=name, rerun=value, reported=reported, reproduced=reproduced,
            matches_participant=agrees(value, reproduced, tolerance)
            if value is not None and reproduced is not None else None,
            matches_paper=agrees(value, reported, tolerance)
            if value is not None and reported is not None else None,
            how=reading.how, quote=reading.quote, problem=reading.problem))
    return values


def describe_values(values: list[RerunValue]) -> str:
    """In words: "re-run 93.8 vs participant 93.8 and paper 94.1" per value."""
    parts = []
    for v in values:
        name = "" if v.name == "value" else f"{v.name}: "
        if v.rerun is None:
            parts.append(f"{name}no number ({v.problem})")
            continue
        sides = []
        if v.reproduced is not None:
            sides.append(f"participant {v.reproduced:g}"
                         f"{'' if v.matches_participant else ' (differs)'}")
        if v.reported is not None:
            sides.append(f"paper {v.reported:g}{'' if v.matches_paper else ' (differs)'}")
        parts.append(f"{name}re-run {v.rerun:g}" + (" vs " + " and ".join(sides) if sides else ""))
    return "; ".join(parts)
