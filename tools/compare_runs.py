"""Compare two run directories of the same inputs, apart from what differs by nature (run id,
timestamps, latency, code version, schema-version fields): the check that a refactor left
`make demo`'s output unchanged.

    python tools/compare_runs.py OLD_RUN NEW_RUN [--new-field NAME ...]

`--new-field NAME`: a field the new code adds on purpose (e.g. `chart_trace`, issue 41) is left
out of both sides' JSON, so the rest is still compared; the output names what was left out.
Exit 1 with the differences listed when the contents differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

VOLATILE = {"run_id", "timestamp", "started_at", "ended_at", "created_at", "latency_s",
            "code_version", "schema", "version_", "generated_at", "computed_at", "pulled_at",
            # CPU time spent measuring differs from run to run, like latency
            "cpu_s", "measure_cpu_ms",
            # a re-run's wall time and peak memory are measured, not computed
            "duration_s", "memory_peak_mb"}
#: The measurement cache (`measurements/`) names each entry by its measurement key, which hashes
#: the source of the measuring code: a refactor renames every entry. Entries are compared by
#: content (their files and their JSON without the key), not by name.
MEASUREMENTS = "measurements"
#: Fields whose values embed a time or the code version inside text.
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(\+00:00|Z| UTC)?"
                       r"|\d{8}-\d{6}-[0-9a-f]{6}")
#: report.html anchors claims by a per-process hash() of the claim key.
ANCHOR = re.compile(r"#?c--?\d{6,}")
#: The re-run sandbox runs each invocation as a random unprivileged uid (`rerun/sandbox.py`).
SANDBOX_UID = re.compile(r"\buid \d+")
#: A Ray task runs its shard in a temporary folder of its node (`merge/engine.py`), which a
#: returned shard's run.json records.
TASK_FOLDER = re.compile(r"/judging-(shard-\d+-of-\d+|rerun)-[A-Za-z0-9_]+")
CODE = re.compile(r"judging \d+\.\d+\.\d+( git:[0-9a-f]+(\+dirty)?)?")


#: Fields the new code adds on purpose (`--new-field`), left out of both sides.
ADDED: set[str] = set()


def normal(value):
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items() if k not in VOLATILE | ADDED}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, str):
        return TASK_FOLDER.sub(r"/judging-\1-<tmp>", SANDBOX_UID.sub("uid <n>", ANCHOR.sub(
            "c-<id>", CODE.sub("judging <code>", TIMESTAMP.sub("<time>", value)))))
    return value


def lines(path: Path) -> list[str]:
    """The normalised lines, sorted: claims are measured concurrently, so the order of lines
    varies from run to run."""
    return sorted(json.dumps(normal(json.loads(line)), sort_keys=True)
                  for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def measurement_entries(root: Path) -> list[str]:
    """The measurement cache's entries by content, sorted: each entry's JSON without its key, and
    the names and bytes of the images beside it."""
    entries = []
    for path in sorted(root.glob(f"**/{MEASUREMENTS}/*/*.json")):
        data = json.loads(path.read_text())
        data.pop("key", None)
        images = path.with_suffix("")
        files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                 for p in sorted(images.glob("*")) if p.is_file()} if images.is_dir() else {}
        where = str(path.relative_to(root).parent.parent)  # which run: the top one or a shard
        entries.append(json.dumps({"run": where, "entry": normal(data), "files": files},
                                  sort_keys=True))
    return sorted(entries)


def compare(old: Path, new: Path) -> list[str]:
    problems = []
    if measurement_entries(old) != measurement_entries(new):
        problems.append(f"differs: {MEASUREMENTS}/ (entries compared by content)")
    old_files = {p.relative_to(old) for p in old.rglob("*")
                 if p.is_file() and MEASUREMENTS not in p.relative_to(old).parts}
    new_files = {p.relative_to(new) for p in new.rglob("*")
                 if p.is_file() and MEASUREMENTS not in p.relative_to(new).parts}
    for missing in sorted(old_files - new_files):
        problems.append(f"only in {old}: {missing}")
    for extra in sorted(new_files - old_files):
        problems.append(f"only in {new}: {extra}")
    for name in sorted(old_files & new_files):
        a, b = old / name, new / name
        if name.suffix == ".jsonl":
            same = lines(a) == lines(b)
        elif name.suffix == ".json":
            same = normal(json.loads(a.read_text())) == normal(json.loads(b.read_text()))
        elif name.suffix in (".html", ".md", ".csv"):
            same = normal(a.read_text()) == normal(b.read_text())
        else:
            same = a.read_bytes() == b.read_bytes()
        if not same:
            problems.append(f"differs: {name}")
    return problems


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--new-field", action="append", default=[],
                        help="a JSON field the new code adds on purpose (repeatable)")
    options = parser.parse_args()
    ADDED.update(options.new_field)
    found = compare(options.old, options.new)
    for line in found:
        print(line)
    added = f", and the added field(s) {', '.join(sorted(ADDED))}" if ADDED else ""
    print(f"{'same' if not found else f'{len(found)} difference(s)'} apart from run id, "
          f"timestamps, latency, code version and schema versions{added}")
    sys.exit(1 if found else 0)
