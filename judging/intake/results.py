"""Values a submission's results files and logs declare (issue 26, moved out of space.py for
issue 40): a results JSON, YAML or CSV whose keys or columns name the paper's side or the measured side
(`extract.key_side`), per claim when the file is keyed by claim (`{"C1": {...}}`, rows naming
their claim), else for the submission as a whole; `key=value` lines of a log. Each value keeps
the verbatim line it came from.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path

from judging._yaml import parse_document
from judging.errors import InputFileError
from judging.intake.extract import Value, json_values, key_side, output_values
from judging.intake.llm import number_in
from judging.intake.paths import TextBudget
from judging.models import MAX_NOTE_CHARS


def file_values(rel: str, text: str) -> tuple[list[Value], dict[int, list[Value]], str | None]:
    """(values for the whole submission, values by claim number, what is wrong with the file)."""
    whole: list[Value] = []
    by_claim: dict[int, list[Value]] = {}
    place = f"results file on {rel}"
    if rel.lower().endswith((".yaml", ".yml")):
        data, error = yaml_data(text)
        if error:
            return whole, by_claim, error
        return _data_values(data, yaml_lines(text), place)
    if not rel.lower().endswith(".json"):
        try:
            csv_values(text, place, whole, by_claim)
        except csv.Error as exc:  # a field over the csv module's limit, a NUL: the file only
            return [], {}, f"not a readable CSV table ({exc}): not read"
        return whole, by_claim, None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return whole, by_claim, "not valid JSON: not read"
    return _data_values(data, quoted_lines(text), place)


def _data_values(data: object, lines: dict[str, str], place: str
                 ) -> tuple[list[Value], dict[int, list[Value]], str | None]:
    """The values of a parsed results file (JSON or YAML), each quoted by the line of its key;
    a value its line does not show as written (YAML 1.1's `1:30` read as 90, `0x1F` as 31, a
    key whose line was not found) is not taken: the quote must hold the number."""
    def quoted(item: object) -> list[Value]:
        out = []
        for side, key, value in json_values(item):
            quote = quote_key(lines, key)
            if number_in(quote, value):
                out.append(Value(side, value, quote, place))
        return out

    by_claim: dict[int, list[Value]] = {}
    claims = claim_keyed(data)
    for number, item in claims.items():
        by_claim.setdefault(number, []).extend(quoted(item))
    return ([] if claims else quoted(data)), by_claim, None


def yaml_data(text: str) -> tuple[object, str | None]:
    """A results YAML's data, or why it is not read: the one YAML reader of submission files
    (`parse_document`: anchors and aliases refused before anything is built, duplicate keys
    refused, unreadable values located)."""
    try:
        return parse_document(text, path="").data, None
    except InputFileError as error:
        where = f" (line {error.line})" if error.line is not None else ""
        return None, f"{error.message}{where}: not read"
    except RecursionError:  # nesting deeper than the parser's stack
        return None, "not valid YAML: nested too deep: not read"


#: A YAML key at the start of its line ("  paper: 76.1", "- ours: 75.8").
_YAML_KEY = re.compile(r"^[ \t]*(?:-[ \t]+)?[\"']?(?P<key>[^\"':#\n]+?)[\"']?[ \t]*:(?:[ \t]|$)")


def yaml_lines(text: str) -> dict[str, str]:
    """Each key of a YAML text (as `quote_key` looks it up, `"key"`) with the first line it
    stands on, in one pass."""
    first: dict[str, str] = {}
    for line in text.splitlines():
        if (m := _YAML_KEY.match(line)) is not None:
            first.setdefault(f'"{m.group("key").strip()}"', line)
    return first


def log_values(rel: str, text: str) -> list[Value]:
    return [Value(v.side, v.value, v.quote, f"log key=value on {rel}")
            for v in output_values(text) if v.place == "run output key=value"]


def claim_keyed(data: object) -> dict[int, object]:
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
                number = claim_number(row.get("claim") or row.get("claim_id"), named=False) \
                    or claim_number(row.get("id"), named=True)
                if number is not None:
                    out[number] = row
    return out


def claim_number(value: object, *, named: bool) -> int | None:
    """The claim number of a results row's claim field ("C2", "claim-2", "paper/c2", or a bare 2
    in a field named "claim"); an "id" field (`named`) names a claim only as "C2" or "claim 2":
    a bare number there is the row's own index, not a claim's."""
    pattern = r"(?i)(?:^|[/_ -])(?:claim[ _-]?|c)(\d{1,3})$" if named else \
        r"(?i)(?:^|[/_ -])(?:claim[ _-]?|c)?(\d{1,3})$"
    m = re.search(pattern, str(value if value is not None else ""))
    return int(m.group(1)) if m else None


#: A JSON string on one line, its closing quote optional: possessive, so that a line of
#: unterminated strings is still read once (a string that fails to close is not retried).
_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*+"?')


def quoted_lines(text: str) -> dict[str, str]:
    """Each quoted string of a JSON text (`"key"`) with the first line it stands on, found in
    one pass: a file of many keys looked up line by line from the top took minutes."""
    first: dict[str, str] = {}
    for line in text.splitlines():
        for m in _QUOTED.finditer(line):
            first.setdefault(m.group(0), line)
    return first


def quote_key(lines: dict[str, str], key: str) -> str:
    """The line of a JSON text (`quoted_lines`) where `key` is written."""
    line = lines.get(f'"{key}"')
    return line.strip()[:MAX_NOTE_CHARS] if line is not None else f'"{key}"'


def csv_values(text: str, place: str, whole: list[Value], by_claim: dict[int, list[Value]]
               ) -> None:
    reader, lines = csv.reader(io.StringIO(text)), text.splitlines()
    rows: list[tuple[list[str], str]] = []
    end = 0
    for row in reader:  # each row quoted by its own lines (a quoted cell may span several)
        start, end = end, reader.line_num
        rows.append((row, "\n".join(lines[start:end]).strip()))
    if len(rows) < 2:
        return
    header = rows[0][0]
    claim_col = next((j for j, h in enumerate(header) if re.search(r"(?i)claim|^id$", h)), None)
    named = claim_col is not None and not re.search(r"(?i)claim", header[claim_col])
    sides = {j: key_side(h) for j, h in enumerate(header)}
    for row, quote in rows[1:]:
        values = []
        for j, cell in enumerate(row):
            side = sides.get(j)
            try:
                value = float(cell) if side is not None else math.nan
            except ValueError:
                continue
            # finite, and written in the row as read ("nan", "1_000" are no value of ours)
            if math.isfinite(value) and number_in(quote, value):
                values.append(Value(side, value, quote[:MAX_NOTE_CHARS], place))
        if claim_col is not None and claim_col < len(row):
            number = claim_number(row[claim_col].strip(), named=named)
            if number is not None:
                by_claim.setdefault(number, []).extend(values)
                continue
        if len(rows) == 2:
            whole += values


#: A results file (JSON, CSV) larger than this is not read.
MAX_RESULTS_BYTES = 5 * 1024 * 1024
#: A log is read up to this size for its values.
MAX_LOG_BYTES = 5 * 1024 * 1024
#: A submission's results files and logs are read up to this many characters in all (four of
#: the largest one read): a 4 MB YAML file takes about 10 s to read, and a Space may hold 2,000
#: of them; the files past it are one line.
MAX_DECLARED_CHARS = 20 * 1024 * 1024


def declared_values(folder: Path, results: list[str], logs: list[str],
                    errors: list[tuple[str, str]]
                    ) -> tuple[list[Value], dict[int, list[Value]], list[Value]]:
    """What a submission's results files and logs declare: (values for the submission as a
    whole, values by claim number, values of its logs); each file that cannot be read is one
    (file, reason) in `errors`."""
    whole: list[Value] = []
    by_claim: dict[int, list[Value]] = {}
    budget = TextBudget("results files and logs", MAX_DECLARED_CHARS)
    for rel in results:
        text = budget.text(folder, rel, MAX_RESULTS_BYTES, errors)
        if text is None:
            continue
        these, keyed, error = file_values(rel, text)
        if error:
            errors.append((rel, error))
        whole += these
        for number, values in keyed.items():
            by_claim.setdefault(number, []).extend(values)
    from_logs: list[Value] = []
    for rel in logs:
        if (text := budget.text(folder, rel, MAX_LOG_BYTES, errors)) is not None:
            from_logs += log_values(rel, text)
    errors += budget.problems()
    return whole, by_claim, from_logs
