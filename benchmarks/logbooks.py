"""Real submissions against hand-made labels: `python benchmarks/logbooks.py [--data DIR ...]`.

Each DIR is a labelled set of real logbooks (default: the two developer sets beside the checkout,
`../shared/datasets/trackio-logbooks` and `../shared/datasets/trackio-logbooks-more`): one folder
per logbook and `labels.jsonl`, one line per claim. The logbooks are read in place through the
loader every run uses (`judging.intake.load_folder`, deterministic extraction); figures and logs
go to a temporary folder. Printed per set and overall:

- claims found: labels matched by a claim (same page, same claim number; unnumbered claims in
  row order on their page);
- paper id: logbooks whose paper id is the label's;
- verdict (3-way) where labelled: the claim's verdict is the label's `verdict_3way`;
- verdict precision: of the verdicts given, the share that are right; a verdict given where the
  label has none counts as wrong, except on a claim both the label and the loader call toy (the
  labels map toy to no direction);
- values where labelled: reported and reproduced values equal to the label's (relative error
  <= 1e-6, or the label's digits when the label is the value rounded);
- value precision: of the values extracted, the share that are right; a value where the label
  has none counts as wrong;
- toy flag; silently empty submissions (no claim and no error); claims the labels do not have.

Then the leave-one-logbook-out view of what is chosen from data: the kinds of declared place
the extractor trusts (`extract.VERDICT_PLACES`, `VALUE_PLACES`). For each logbook, the precision
of each kind of place is measured on the other logbooks (over the verdicts and values it
decided there); a kind whose precision is below `TRUST_AT` on at least `MIN_GIVEN` given
verdicts (or values) is not read, and the left-out logbook is measured with what remains. The
rules themselves were written by reading all the developer logbooks: the held-out sets are the
test of those.

`--misses` lists every miss. `--extract openai:MODEL` also runs the LLM extractor through the
real `openai` client; without `--base-url` the project's fake OpenAI server answers with
*scripted* values built from the labels (quotes looked up on the page; every fourth claim's
values invented, to show rejection): plumbing, quote checks and caching, not accuracy.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judging.intake import load_folder
from judging.intake.extract import (
    NUMBER,
    VALUE_PLACES,
    VERDICT_PLACES,
    parse_number,
    place_kind,
)
from judging.intake.logbook import fill_with_llm, read_logbook
from judging.intake.logbook.claims import find_claims, paper_id

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SETS = [ROOT.parent / "shared" / "datasets" / name
                for name in ("trackio-logbooks", "trackio-logbooks-more")]
#: The acceptance targets (issue 26) of the deterministic extractor on the developer sets.
TARGETS = {"claims found": 0.95, "verdict precision": 0.97, "value precision": 0.97}
#: A place is not read when its precision on the other logbooks is below this ...
TRUST_AT = 0.90
#: ... on at least this many given verdicts (values).
MIN_GIVEN = 3
MEASURES = ("claims found", "paper id", "verdict (3-way)", "verdict precision", "values",
            "value precision", "toy flag")


# --- matching found claims to labels ---------------------------------------------------------

@dataclass
class Found:
    """What the benchmark reads of one loaded claim."""

    page: str
    number: int | None
    order: int
    verdict: str | None
    toy: bool
    reported: float | None
    reproduced: float | None
    places: dict[str, str] = field(default_factory=dict)


_ORIGIN = re.compile(r"pages/(?:(?P<slug>[^/]+)/page\.md|(?P<index>index)\.md|(?P<file>\S+))"
                     r"(?: (?:row|item|section) (?P<k>\d+))?")


def found_of_inputs(claims) -> list[Found]:
    out = []
    for c in claims:
        m = _ORIGIN.match(c.origin or "")
        page = (m.group("slug") or m.group("index") or m.group("file")) if m else ""
        number = re.search(r"/c(\d+)$", c.claim.claim_id)
        out.append(Found(page=page, number=int(number.group(1)) if number else None,
                         order=int(m.group("k")) if m and m.group("k") else 1,
                         verdict=c.claim.verdict.value if c.claim.verdict else None,
                         toy=c.claim.toy, reported=c.claim.reported_value,
                         reproduced=c.claim.reproduced_value,
                         places={k: (v.place or v.how) for k, v in c.claim.provenance.items()}))
    return out


def found_of_claims(claims) -> list[Found]:
    return [Found(page=c.page.slug, number=c.number, order=c.row or 1,
                  verdict=c.extraction.verdict.value if c.extraction.verdict else None,
                  toy=c.extraction.toy, reported=c.extraction.reported,
                  reproduced=c.extraction.reproduced,
                  places={k: (v.place or v.how) for k, v in c.extraction.provenance.items()})
            for c in claims]


def match(found: list[Found], wanted: list[dict]) -> list[Found | None]:
    """The found claim each label answers (or None), in label order."""
    used: set[int] = set()
    unnumbered: dict[str, list[Found]] = defaultdict(list)
    for f in found:
        if f.number is None:
            unnumbered[f.page].append(f)
    for page in unnumbered:
        unnumbered[page].sort(key=lambda f: f.order)
    seen: dict[str, int] = defaultdict(int)
    out: list[Found | None] = []
    for label in wanted:
        page = label["page"]
        if label["claim_index"] is not None:
            hit = next((f for f in found if f.page == page and f.number == label["claim_index"]
                        and id(f) not in used), None)
        else:
            candidates = unnumbered.get(page, [])
            hit = candidates[seen[page]] if seen[page] < len(candidates) else None
            seen[page] += 1
        if hit is not None:
            used.add(id(hit))
        out.append(hit)
    return out


def close(got: float | None, label: float | None) -> bool:
    """Equal within 1e-6 relative, or `got` rounded to the digits the label is written with
    (a label 0.2222 of a measured 0.22220327)."""
    if got is None or label is None:
        return False
    if label == 0:
        return abs(got) <= 1e-12
    if abs(got - label) / abs(label) <= 1e-6:
        return True
    text = repr(float(label))
    if "e" in text or "." not in text:
        return False
    digits = len(text.split(".")[1].rstrip("0"))
    significant = len(text.replace("-", "").replace(".", "").lstrip("0"))
    return digits >= 1 and significant >= 3 and round(got, digits) == label


# --- counting --------------------------------------------------------------------------------

@dataclass
class Counts:
    """(right, of) per measure, plus the counts that are not shares."""

    shares: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    silent: int = 0
    logbooks: int = 0
    extra: int = 0
    errors: int = 0

    def add(self, other: Counts) -> None:
        for key, (a, b) in other.shares.items():
            self.shares[key][0] += a
            self.shares[key][1] += b
        self.silent += other.silent
        self.logbooks += other.logbooks
        self.extra += other.extra
        self.errors += other.errors

    def share(self, key: str) -> float:
        a, b = self.shares[key]
        return a / b if b else float("nan")


def score(name: str, found: list[Found], wanted: list[dict], pid: str | None, problems: int,
          misses: list[str] | None = None) -> Counts:
    counts = Counts(logbooks=1, errors=problems)
    s = counts.shares
    s["paper id"][1] += 1
    s["paper id"][0] += pid == wanted[0]["paper_id"]
    if not found and not problems:
        counts.silent += 1
    matched = match(found, wanted)
    counts.extra = len(found) - sum(1 for m in matched if m is not None)

    def miss(text: str) -> None:
        if misses is not None:
            misses.append(f"{name[:50]} {text}")

    for label, hit in zip(wanted, matched, strict=True):
        where = f"{label['page'][:40]} #{label['claim_index']}"
        s["claims found"][1] += 1
        if label["verdict_3way"] is not None:
            s["verdict (3-way)"][1] += 1
        for side in ("reported", "reproduced"):
            if label[side] is not None:
                s["values"][1] += 1
        if hit is None:
            miss(f"{where}: not found")
            continue
        s["claims found"][0] += 1
        if label["verdict_3way"] is not None and hit.verdict == label["verdict_3way"]:
            s["verdict (3-way)"][0] += 1
        if hit.verdict is not None and not (label["verdict_3way"] is None and label["toy"]
                                            and hit.toy):
            s["verdict precision"][1] += 1
            right = hit.verdict == label["verdict_3way"]
            s["verdict precision"][0] += right
            if not right:
                miss(f"{where}: verdict {hit.verdict} ({hit.places.get('verdict')}), label "
                     f"{label['verdict_3way']} ({label['self_verdict']!r})")
        elif label["verdict_3way"] is not None:
            miss(f"{where}: no verdict, label {label['verdict_3way']}")
        s["toy flag"][1] += 1
        s["toy flag"][0] += hit.toy == bool(label["toy"])
        for side in ("reported", "reproduced"):
            got = getattr(hit, side)
            if label[side] is not None:
                s["values"][0] += close(got, label[side])
            if got is not None:
                s["value precision"][1] += 1
                right = close(got, label[side])
                s["value precision"][0] += right
                if not right:
                    miss(f"{where}: {side} {got:g} ({hit.places.get(f'{side}_value')}), label "
                         f"{label[side]}")
    return counts


# --- the sets --------------------------------------------------------------------------------

@dataclass
class Logbook:
    set: str
    name: str
    folder: Path
    labels: list[dict]


def read_sets(dirs: list[Path]) -> list[Logbook]:
    books = []
    for data in dirs:
        by: dict[str, list[dict]] = defaultdict(list)
        for line in (data / "labels.jsonl").read_text().splitlines():
            if line.strip():
                label = json.loads(line)
                by[label["logbook"]].append(label)
        books += [Logbook(data.name, name, data / name, labels) for name, labels in by.items()]
    return books


def measure(book: Logbook, out: Path, misses: list[str] | None = None,
            verdict_places: frozenset[str] = VERDICT_PLACES,
            value_places: frozenset[str] = VALUE_PLACES, stats: dict | None = None) -> Counts:
    """One logbook through the loader every run uses."""
    loaded = load_folder(book.folder, logbooks_dir=out / book.set / book.name,
                         verdict_places=verdict_places, value_places=value_places)
    found = found_of_inputs(loaded.claims)
    if stats is not None:
        stats[book.name] = place_stats(found, book.labels)
    return score(book.name, found, book.labels, loaded.header.paper_id, len(loaded.problems),
                 misses)


def place_stats(found: list[Found], wanted: list[dict]) -> dict[tuple[str, str], list[int]]:
    """(field, place kind) -> [right, given] of the verdicts and values each kind of place
    decided on one logbook (the place recorded in the claim's provenance)."""
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for label, hit in zip(wanted, match(found, wanted), strict=True):
        if hit is None:
            continue
        if hit.verdict is not None and not (label["verdict_3way"] is None and label["toy"]
                                            and hit.toy):
            key = ("verdict", place_kind(hit.places.get("verdict", "?")))
            out[key][1] += 1
            out[key][0] += hit.verdict == label["verdict_3way"]
        for side in ("reported", "reproduced"):
            got = getattr(hit, side)
            if got is not None:
                key = ("value", place_kind(hit.places.get(f"{side}_value", "?")))
                out[key][1] += 1
                out[key][0] += close(got, label[side])
    return dict(out)


def trusted(stats: list[dict[tuple[str, str], list[int]]]) -> tuple[frozenset[str],
                                                                   frozenset[str]]:
    """The places kept by the rule of the module docstring, from per-logbook stats."""
    total: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for one in stats:
        for key, (a, b) in one.items():
            total[key][0] += a
            total[key][1] += b

    def keep(kind: str, places: frozenset[str]) -> frozenset[str]:
        return frozenset(p for p in places
                         if total[(kind, p)][1] < MIN_GIVEN
                         or total[(kind, p)][0] / total[(kind, p)][1] >= TRUST_AT)

    return keep("verdict", VERDICT_PLACES), keep("value", VALUE_PLACES)


def leave_one_out(books: list[Logbook], out: Path, main: dict[str, Counts],
                  stats: dict[str, dict[tuple[str, str], list[int]]]
                  ) -> tuple[dict[str, Counts], list[str]]:
    result: dict[str, Counts] = {}
    notes = []
    for book in books:
        verdicts, values = trusted([v for k, v in stats.items() if k != book.name])
        if verdicts == VERDICT_PLACES and values == VALUE_PLACES:
            result[book.name] = main[book.name]
            continue
        dropped = sorted((VERDICT_PLACES - verdicts) | (VALUE_PLACES - values))
        notes.append(f"{book.name[:50]}: without {', '.join(dropped)}")
        result[book.name] = measure(book, out / "lolo", verdict_places=verdicts,
                                    value_places=values)
    full = trusted(list(stats.values()))
    dropped = sorted((VERDICT_PLACES - full[0]) | (VALUE_PLACES - full[1]))
    notes.insert(0, "on all logbooks the rule keeps every place" if not dropped else
                 f"on all logbooks the rule drops: {', '.join(dropped)}")
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for one in stats.values():
        for key, (a, b) in one.items():
            totals[key][0] += a
            totals[key][1] += b
    notes.append("precision of each kind of place where it decided, all logbooks: " + "; ".join(
        f"{kind} {place} {a}/{b}" for (kind, place), (a, b) in sorted(totals.items()) if b))
    return result, notes


# --- report ----------------------------------------------------------------------------------

def table(columns: dict[str, Counts]) -> str:
    names = list(columns)
    width = max(14, *(len(n) for n in names))
    lines = [f"{'measure':<20}" + "".join(f"{n:>{width + 2}}" for n in names) + "   target"]
    for key in MEASURES:
        row = f"{key:<20}"
        for n in names:
            a, b = columns[n].shares[key]
            cell = f"{a}/{b} {a / b:.1%}" if b else "-"
            row += f"{cell:>{width + 2}}"
        target = TARGETS.get(key)
        if target is not None:
            ok = all(not columns[n].shares[key][1] or columns[n].share(key) >= target
                     for n in names)
            row += f"   >= {target:.0%} " + ("ok" if ok else "BELOW")
        lines.append(row)
    for key, attr, target in (("silently empty", "silent", "0"), ("claims not labelled", "extra",
                                                                  None),
                              ("claim errors", "errors", None)):
        row = f"{key:<20}" + "".join(f"{getattr(columns[n], attr):>{width + 2}}" for n in names)
        if target is not None:
            ok = all(getattr(columns[n], attr) == 0 for n in names)
            row += f"   = {target} " + ("ok" if ok else "BELOW")
        lines.append(row)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", default=None,
                        help="A labelled set (repeatable); default: both developer sets.")
    parser.add_argument("--misses", action="store_true", help="List every miss.")
    parser.add_argument("--no-lolo", action="store_true",
                        help="Skip the leave-one-logbook-out view.")
    parser.add_argument("--extract", metavar="openai:MODEL", default=None,
                        help="Also run the LLM extractor (scripted fake unless --base-url).")
    parser.add_argument("--base-url", default=None,
                        help="OpenAI-compatible endpoint; default: a scripted fake started here.")
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"))
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the loader's per-logbook warnings: not this report
    dirs = args.data or [d for d in DEFAULT_SETS if d.is_dir()]
    if not dirs:
        parser.error("no labelled set found: give --data DIR")
    books = read_sets(dirs)
    if args.extract:
        return with_extractor(args, books)
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        stats: dict[str, dict[tuple[str, str], list[int]]] = {}
        per = {b.name: measure(b, Path(tmp), misses, stats=stats) for b in books}
        columns: dict[str, Counts] = {}
        for book in books:
            columns.setdefault(book.set, Counts()).add(per[book.name])
        overall = Counts()
        for c in columns.values():
            overall.add(c)
        columns["overall"] = overall
        print(f"{len(books)} logbooks, {sum(len(b.labels) for b in books)} labelled claims; "
              f"deterministic extraction through judging.intake.load_folder\n")
        print(table(columns))
        if not args.no_lolo:
            lolo, notes = leave_one_out(books, Path(tmp), per, stats)
            view: dict[str, Counts] = {}
            for book in books:
                view.setdefault(f"{book.set} (LOLO)", Counts()).add(lolo[book.name])
            total = Counts()
            for c in list(view.values()):
                total.add(c)
            view["overall (LOLO)"] = total
            print(f"\nleave-one-logbook-out (places trusted from the other logbooks: precision "
                  f">= {TRUST_AT:.0%} on >= {MIN_GIVEN} given)\n")
            print(table(view))
            for note in notes:
                print("  " + note)
    print("\nper logbook: " + ", ".join(MEASURES[:3]) + ", verdict precision, value precision")
    for book in books:
        c = per[book.name]
        cells = "  ".join(f"{c.shares[k][0]}/{c.shares[k][1]}"
                          for k in ("claims found", "paper id", "verdict (3-way)",
                                    "verdict precision", "value precision"))
        print(f"  {book.name[:62]:<62} {cells}")
    if args.misses and misses:
        print("\nmisses:")
        for line in misses:
            print("  " + line)
    return 0


# --- the LLM extractor through the fake ------------------------------------------------------

def _line_with(page: str, value: float) -> str | None:
    """A line of the page holding `value` as one of its numbers (a quote that is on the page)."""
    for line in page.splitlines():
        for m in re.finditer(NUMBER, line):
            got = parse_number(m.group(0))
            if got is not None and math.isclose(got, value, rel_tol=1e-9, abs_tol=1e-12):
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
        for name, key in (("reported_value", "reported"), ("reproduced_value", "reproduced")):
            value = label.get(key)
            if value is None:
                continue
            quote = (f"The paper reports {value:g} and we measured {value:g}" if invent
                     else _line_with(page, value))
            if quote:
                answer[name] = {"value": value, "quote": quote}
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


def with_extractor(args, books: list[Logbook]) -> int:
    from judging.judges import LLMOptions, structured_caller
    from judging.testing.fake_openai import FakeOpenAI

    fake = None
    base_url = args.base_url
    if base_url is None:
        by_ref: dict[str, tuple[dict, str]] = {}
        for book in books:
            claims = find_claims(read_logbook(book.folder))
            pid, _ = paper_id(read_logbook(book.folder))
            for label, hit in zip(book.labels, match(found_of_claims(claims), book.labels),
                                  strict=True):
                if hit is not None:
                    claim = next(c for c in claims if c.page.slug == hit.page
                                 and c.number == hit.number and (c.row or 1) == hit.order)
                    by_ref[f"{pid or book.name}/{claim.local_id}"] = (label, claim.page.text)
        fake = FakeOpenAI(scripted_answers(by_ref)).start()
        base_url = fake.url
    outcomes = []
    try:
        with tempfile.TemporaryDirectory() as cache:
            stats = []
            for _ in range(2):
                options = LLMOptions(base_url=base_url, api_key=args.api_key, max_retries=2,
                                     timeout=60.0, cache_dir=Path(cache))
                caller = structured_caller(args.extract, options)
                outcomes = []
                total = Counts()
                for book in books:
                    logbook = read_logbook(book.folder)
                    claims = find_claims(logbook)
                    pid, _ = paper_id(logbook)
                    outcomes += fill_with_llm(claims, caller, paper=pid or book.name)
                    total.add(score(book.name, found_of_claims(claims), book.labels, pid, 0))
                caller.close()
                stats.append((total, caller.stats))
    finally:
        if fake is not None:
            fake.stop()
    print(table({"with --extract": stats[0][0]}))
    filled: dict[str, int] = defaultdict(int)
    rejected: dict[str, int] = defaultdict(int)
    for outcome in outcomes:
        for name in outcome.filled:
            filled[name] += 1
        for reason in outcome.rejected.values():
            rejected[reason.split(" (")[0]] += 1
    first, second = stats[0][1], stats[1][1]
    print(f"\nLLM extractor {args.extract} at {base_url}")
    if fake is not None:
        print("  the fake's answers are SCRIPTED from labels.jsonl (quotes looked up on the page; "
              "every fourth claim's values invented): this shows plumbing, quote checks and "
              "caching, not accuracy")
    print(f"  claims asked: {sum(o.asked for o in outcomes)}, LLM calls: {first.calls}, "
          f"cache hits: {first.cached}, errors: {first.errors}")
    print("  fields filled with how=llm:MODEL: "
          + (", ".join(f"{k} {v}" for k, v in sorted(filled.items())) or "none"))
    print("  fields rejected: " + (", ".join(f"{v} ({k})" for k, v in rejected.items())
                                    or "none"))
    print(f"  second pass (same cache): LLM calls: {second.calls}, cache hits: {second.cached}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
