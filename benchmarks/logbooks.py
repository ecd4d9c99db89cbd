"""Logbook importer against hand-made labels: `python benchmarks/logbooks.py --data DIR`.

DIR is the trackio-logbooks dev set (../shared/datasets/trackio-logbooks from a checkout): one
folder per logbook, `labels.jsonl` (one line per claim). The logbooks are read in place; figures
and logs are written to a temporary folder. Prints, against the labels: claims found / labelled
(matched on logbook, page, and claim number, else row order), paper id correct, 3-way verdict
correct where labelled, toy flag correct, reported and reproduced values correct (relative error
<= 1e-6, absolute for zero) where labelled, figures accounted for (decoded, data-only, or "not
fetched" with the URL) where labelled, run cells counted right; then the same per logbook.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judging.intake.logbook import read_logbook
from judging.intake.logbook.claims import find_claims, materialize, paper_id

TARGETS = {"claims found": 0.95, "paper id": 1.0, "verdict (3-way)": 0.80, "toy flag": None,
           "values": 0.60, "figures accounted": 1.0, "run cells": 1.0}


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return False
    if b == 0:
        return abs(a) <= 1e-12
    return abs(a - b) / abs(b) <= 1e-6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    args = parser.parse_args()
    labels = [json.loads(line) for line in (args.data / "labels.jsonl").read_text().splitlines()
              if line.strip()]
    by_logbook: dict[str, list[dict]] = defaultdict(list)
    for label in labels:
        by_logbook[label["logbook"]].append(label)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per: dict[str, dict[str, list[int]]] = {}
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, wanted in by_logbook.items():
            counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            logbook = read_logbook(args.data / name)
            claims = find_claims(logbook)
            shared = materialize(logbook, claims, Path(tmp) / name)
            pid, _ = paper_id(logbook)
            rows_seen: dict[str, int] = defaultdict(int)
            for label in wanted:
                page = label["page"]
                if label["claim_index"] is not None:
                    match = next((c for c in claims if c.page.slug == page
                                  and c.number == label["claim_index"]), None)
                else:
                    rows_seen[page] += 1
                    match = next((c for c in claims if c.page.slug == page
                                  and c.row == rows_seen[page]), None)
                counts["claims found"][1] += 1
                counts["paper id"][1] += 1
                counts["paper id"][0] += pid == label["paper_id"]
                if match is None:
                    misses.append(f"{name} {page} #{label['claim_index']}: not found")
                    continue
                counts["claims found"][0] += 1
                ex = match.extraction
                if label["verdict_3way"] is not None:
                    counts["verdict (3-way)"][1] += 1
                    ok = ex.verdict is not None and ex.verdict.value == label["verdict_3way"]
                    counts["verdict (3-way)"][0] += ok
                    if not ok:
                        misses.append(f"{name} {page} #{label['claim_index'] or match.row}: "
                                      f"verdict {ex.verdict} from {ex.source_verdict!r}, "
                                      f"label {label['verdict_3way']} ({label['self_verdict']!r})")
                counts["toy flag"][1] += 1
                counts["toy flag"][0] += ex.toy == bool(label["toy"])
                if ex.toy != bool(label["toy"]):
                    misses.append(f"{name} {page}: toy {ex.toy} ({ex.toy_quote!r}), label "
                                  f"{label['toy']}")
                for field, got in (("reported", ex.reported), ("reproduced", ex.reproduced)):
                    if label[field] is not None and got is not None:
                        counts["values extracted"][1] += 1
                        counts["values extracted"][0] += close(got, label[field])
                    if label[field] is not None:
                        counts["values"][1] += 1
                        counts["values"][0] += close(got, label[field])
                        if not close(got, label[field]):
                            misses.append(f"{name} {page} #{label['claim_index'] or match.row}: "
                                          f"{field} {got}, label {label[field]}")
                if label["has_figure"]:
                    figures = match.figures or shared
                    counts["figures accounted"][1] += 1
                    ok = bool(figures) and all(f.accounted for f in figures)
                    counts["figures accounted"][0] += ok
                    if not ok:
                        misses.append(f"{name} {page}: figures "
                                      f"{[(f.status, f.detail) for f in figures]}")
                counts["run cells"][1] += 1
                runs = sum(1 for c in match.page.cells if c.is_run)
                nonzero = sum(1 for lg in match.logs if lg.exit_code not in (0, None))
                ok = runs == label["run_cells"] and nonzero == label["nonzero_exit"] \
                    and len(match.logs) == runs
                counts["run cells"][0] += ok
                if not ok:
                    misses.append(f"{name} {page}: run cells {runs}, label {label['run_cells']}")
            per[name] = counts
            for key, (a, b) in counts.items():
                totals[key][0] += a
                totals[key][1] += b
    print(f"{'measure':<20} {'correct':>8} {'of':>4} {'share':>7}  target")
    for key, target in TARGETS.items():
        a, b = totals[key]
        share = a / b if b else float("nan")
        mark = "" if target is None else (f">= {target:.0%}  " + ("ok" if share >= target
                                                                   else "BELOW"))
        print(f"{key:<20} {a:>8} {b:>4} {share:>7.1%}  {mark}")
        if key == "values":
            a, b = totals["values extracted"]
            print(f"{'  precision':<20} {a:>8} {b:>4} {a / b if b else float('nan'):>7.1%}  "
                  f"(correct / extracted, where labelled)")
    print()
    print("per logbook: " + ", ".join(TARGETS))
    for name, counts in per.items():
        cells = "  ".join(f"{counts[k][0]}/{counts[k][1]}" for k in TARGETS)
        print(f"  {name[:60]:<60} {cells}")
    if misses:
        print("\nmisses:")
        for miss in misses:
            print("  " + miss)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
