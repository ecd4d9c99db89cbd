"""Logbook importer against hand-made labels: `python benchmarks/logbooks.py --data DIR`.

DIR is the trackio-logbooks dev set (../shared/datasets/trackio-logbooks from a checkout): one
folder per logbook, `labels.jsonl` (one line per claim). The logbooks are read in place; figures
and logs are written to a temporary folder. Prints, against the labels: claims found / labelled
(matched on logbook, page, and claim number, else row order), paper id correct, 3-way verdict
correct where labelled, toy flag correct, reported and reproduced values correct (relative error
<= 1e-6, absolute for zero) where labelled, figures accounted for (decoded, data-only, or "not
fetched" with the URL) where labelled, run cells counted right; then the same per logbook.

With `--extract openai:MODEL` the LLM extractor fills what the patterns missed, through the real
`openai` client. Without `--base-url`, the benchmark starts the project's fake OpenAI server on
loopback with *scripted* answers built from the labels (each with a quote found on the page),
plus every fourth claim's values given with an invented quote, to show rejection: it shows the
plumbing, the quote checks and the cache (a second pass makes no call), not accuracy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judging.intake.logbook import fill_with_llm, read_logbook
from judging.intake.logbook.claims import find_claims, materialize, paper_id
from judging.intake.logbook.extract import NUMBER, parse_number

TARGETS = {"claims found": 0.95, "paper id": 1.0, "verdict (3-way)": 0.80, "toy flag": None,
           "values": 0.60, "figures accounted": 1.0, "run cells": 1.0}


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return False
    if b == 0:
        return abs(a) <= 1e-12
    return abs(a - b) / abs(b) <= 1e-6


def _match(claims, wanted: list[dict]) -> list:
    """The found claim each label answers (or None), in label order."""
    rows_seen: dict[str, int] = defaultdict(int)
    out = []
    for label in wanted:
        page = label["page"]
        if label["claim_index"] is not None:
            out.append(next((c for c in claims if c.page.slug == page
                             and c.number == label["claim_index"]), None))
        else:
            rows_seen[page] += 1
            out.append(next((c for c in claims if c.page.slug == page
                             and c.row == rows_seen[page]), None))
    return out


def _line_with(page: str, value: float) -> str | None:
    """A line of the page holding `value` as one of its numbers (a quote that is on the page)."""
    for line in page.splitlines():
        for m in re.finditer(NUMBER, line):
            got = parse_number(m.group(0))
            if got is not None and close(got, value):
                return line.strip()[:400] or None
    return None


def _line_containing(page: str, text: str) -> str | None:
    for line in page.splitlines():
        if text and text.lower() in line.lower():
            return line.strip()[:400]
    return None


def scripted_answers(by_ref: dict[str, tuple[dict, str]]):
    """The fake's policy: answers from the labels, quoted from the page; every fourth claim's
    values come with an invented quote (not on the page), which the importer must reject."""
    def policy(request: dict) -> dict:
        user = next(m["content"] for m in request["messages"] if m["role"] == "user")
        ref = re.search(r"Claim (\S+)\.", user)
        label, page = by_ref.get(ref.group(1) if ref else "", ({}, ""))
        invent = sorted(by_ref).index(ref.group(1)) % 4 == 3 if ref and ref.group(1) in by_ref \
            else False
        answer: dict = {"reported_value": None, "reproduced_value": None, "verdict": None,
                        "toy": None, "scale_note": None}
        for field, key in (("reported_value", "reported"), ("reproduced_value", "reproduced")):
            value = label.get(key)
            if value is None:
                continue
            quote = (f"The paper reports {value:g} and we measured {value:g}" if invent
                     else _line_with(page, value))
            if quote:
                answer[field] = {"value": value, "quote": quote}
        verdict = (label.get("self_verdict") or "").strip().strip("*").strip()
        quote = _line_containing(page, verdict)
        if verdict and quote:
            answer["verdict"] = {"label": verdict, "quote": quote}
        if label.get("toy"):
            quote = _line_containing(page, "toy")
            if quote:
                answer["toy"] = {"toy": True, "quote": quote}
        return answer
    return policy


def measure(data: Path, by_logbook: dict[str, list[dict]], extractor=None):
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per: dict[str, dict[str, list[int]]] = {}
    misses: list[str] = []
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, wanted in by_logbook.items():
            counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            logbook = read_logbook(data / name)
            claims = find_claims(logbook)
            pid, _ = paper_id(logbook)
            if extractor is not None:
                outcomes += fill_with_llm(claims, extractor, paper=pid or name)
            shared = materialize(logbook, claims, Path(tmp) / name)
            for label, match in zip(wanted, _match(claims, wanted)):
                page = label["page"]
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
    return totals, per, misses, outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--extract", metavar="openai:MODEL", default=None,
                        help="Also run the LLM extractor (scripted fake unless --base-url).")
    parser.add_argument("--base-url", default=None,
                        help="OpenAI-compatible endpoint; default: a scripted fake started here.")
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"))
    args = parser.parse_args()
    labels = [json.loads(line) for line in (args.data / "labels.jsonl").read_text().splitlines()
              if line.strip()]
    by_logbook: dict[str, list[dict]] = defaultdict(list)
    for label in labels:
        by_logbook[label["logbook"]].append(label)
    if args.extract:
        return with_extractor(args, by_logbook)
    totals, per, misses, _ = measure(args.data, by_logbook)
    report(totals, per, misses)
    return 0


def with_extractor(args, by_logbook: dict[str, list[dict]]) -> int:
    from judging.judges import LLMOptions, structured_caller
    from judging.testing.fake_openai import FakeOpenAI

    fake = None
    base_url = args.base_url
    if base_url is None:
        by_ref: dict[str, tuple[dict, str]] = {}
        for name, wanted in by_logbook.items():
            logbook = read_logbook(args.data / name)
            claims = find_claims(logbook)
            pid, _ = paper_id(logbook)
            for label, match in zip(wanted, _match(claims, wanted)):
                if match is not None:
                    by_ref[f"{pid or name}/{match.local_id}"] = (label, match.page.text)
        fake = FakeOpenAI(scripted_answers(by_ref)).start()
        base_url = fake.url
    try:
        with tempfile.TemporaryDirectory() as cache:
            passes = []
            for _ in range(2):
                options = LLMOptions(base_url=base_url, api_key=args.api_key, max_retries=2,
                                     timeout=60.0, cache_dir=Path(cache))
                caller = structured_caller(args.extract, options)
                result = measure(args.data, by_logbook, caller)
                caller.close()
                passes.append((result, caller.stats))
    finally:
        if fake is not None:
            fake.stop()
    (totals, per, misses, outcomes), stats = passes[0]
    report(totals, per, misses)
    filled: dict[str, int] = defaultdict(int)
    rejected: dict[str, int] = defaultdict(int)
    for outcome in outcomes:
        for name in outcome.filled:
            filled[name] += 1
        for reason in outcome.rejected.values():
            rejected[reason.split(" (")[0]] += 1
    second = passes[1][1]
    print(f"\nLLM extractor {args.extract} at {base_url}")
    if fake is not None:
        print("  the fake's answers are SCRIPTED from labels.jsonl (quotes looked up on the page; "
              "every fourth claim's values invented): this shows plumbing, quote checks and "
              "caching, not accuracy")
    print(f"  claims asked: {sum(o.asked for o in outcomes)}, LLM calls: {stats.calls}, "
          f"cache hits: {stats.cached}, errors: {stats.errors}")
    print("  fields filled with how=llm:MODEL: "
          + (", ".join(f"{k} {v}" for k, v in sorted(filled.items())) or "none"))
    print("  fields rejected: " + (", ".join(f"{v} ({k})" for k, v in rejected.items())
                                    or "none"))
    print(f"  second pass (same cache): LLM calls: {second.calls}, cache hits: {second.cached}")
    return 0


def report(totals, per, misses) -> None:
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


if __name__ == "__main__":
    raise SystemExit(main())
