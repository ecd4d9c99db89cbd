"""Does the chart reader read the legend names of real figures? (a development measure)

For every distinct image of a pairs file (default: the realfig-dev set), `read_chart` reads the
image and the names it found (every panel's `legend` and its series' `name`s) are compared with
the true names of the figure's data file (`data/<figure>.json`: panels[].series[].name):

  - found: the share of the true names that some read name matches;
  - false: the read names that match no true name (a legend invented from tick labels, titles or
    body text, or a name misread beyond recognition);
  - named: the read series that carry a name.

Names match when, lower-cased and cut to letters and digits, they are equal, one is a prefix of
the other (the shorter at least 3 characters long) or difflib's ratio is at least 0.8. The true
names of a reproduction whose change is `drop series 'X'` leave X out; a `swap` changes which
series carries a name, not the names. Images without a data file (the genuine pairs, the
copies) are skipped.

Totals are printed by renderer for the reproductions ("rep gnuplot": pairs.jsonl's `renderer`
without its style, "gnuplot:DejaVu Sans,11") and by `published_system` for the published figures
("pub vega"), with the median read time. `--save FILE` keeps the per-image results; `--baseline FILE` prints
a saved run beside this one (before / after):

    .venv/bin/python benchmarks/legend_names.py --save /tmp/before.json
    .venv/bin/python benchmarks/legend_names.py --baseline /tmp/before.json

Nothing from the pairs file is copied anywhere: it is read where it lies. These are development
figures (the set is looked at while tuning), not a held-out measure.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

_HERE = Path(__file__).resolve().parent
# This folder holds a `judging.py` benchmark: keep it from shadowing the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

DEFAULT_PAIRS = Path("/work/shared/datasets/realfig-dev/pairs.jsonl")


def normalise(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def matches(read: str, true: str) -> bool:
    a, b = normalise(read), normalise(true)
    if not a or not b:
        return False
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 3 and long_.startswith(short):
        return True
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.8


def images(pairs_path: Path) -> list[dict]:
    """One record per distinct image: path, role, group and true names."""
    folder = pairs_path.parent
    seen: dict[str, dict] = {}
    for text in pairs_path.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        line = json.loads(text)
        if not line.get("data"):
            continue
        data = json.loads((folder / line["data"]).read_text(encoding="utf-8"))
        names = [s["name"] for p in data.get("panels", []) for s in p.get("series", [])
                 if s.get("name")]
        names = list(dict.fromkeys(names))
        pub = line["published"]
        if pub not in seen:
            seen[pub] = {"path": pub, "role": "published",
                         "group": line.get("published_system") or "?", "names": names}
        rep = line["reproduced"]
        if rep not in seen:
            kept = names
            change = line.get("change") or ""
            dropped = re.match(r"drop series '(.*)' \(panel", change)
            if line.get("kind") == "drop" and dropped:
                kept = [n for n in names if n != dropped.group(1)]
            group = line.get("renderer") or ("copy" if line.get("kind") == "copy" else "?")
            seen[rep] = {"path": rep, "role": "reproduced", "group": group, "names": kept,
                         "kind": line.get("kind")}
    return list(seen.values())


def measure(record: dict, folder: Path) -> dict:
    from judging.signals.chart import read_chart
    from judging.signals.images import load_image

    image = load_image(folder / record["path"])
    start = time.perf_counter()
    reading = read_chart(image)
    seconds = time.perf_counter() - start
    legend = [n for p in reading.panels for n in p.legend]
    series = [s.name for p in reading.panels for s in p.series]
    read = list(dict.fromkeys([n for n in legend + series if n]))
    true = record["names"]
    found = [t for t in true if any(matches(r, t) for r in read)]
    false = [r for r in read if not any(matches(r, t) for t in true)]
    return {**record, "read": read, "found": found, "false": false, "seconds": seconds,
            "series": len(series), "named": sum(1 for n in series if n)}


def totals(results: list[dict]) -> dict[str, dict]:
    by: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        system = r["group"].split(":")[0]
        by[f"{r['role'][:3]} {system}"].append(r)
        by[f"{r['role'][:3]} ALL"].append(r)
    out = {}
    for key in sorted(by, key=lambda k: (k.endswith("ALL"), k)):
        rs = by[key]
        with_names = [r for r in rs if r["names"]]
        out[key] = {
            "images": len(rs),
            "some": sum(1 for r in with_names if r["found"]),
            "all": sum(1 for r in with_names if len(r["found"]) == len(r["names"])),
            "share": (statistics.mean(len(r["found"]) / len(r["names"]) for r in with_names)
                      if with_names else 0.0),
            "false": sum(len(r["false"]) for r in rs),
            "false_images": sum(1 for r in rs if r["false"]),
            "named": sum(r["named"] for r in rs),
            "series": sum(r["series"] for r in rs),
            "median_s": statistics.median(r["seconds"] for r in rs),
        }
    return out


def _row(t: dict) -> str:
    return (f"{t['some']:>3} {t['all']:>3} {t['share']:>5.2f} {t['false']:>4} "
            f"{t['false_images']:>3} {t['named']:>3}/{t['series']:<3} {t['median_s']:>5.2f}")


def report(results: list[dict], baseline: list[dict] | None) -> None:
    now = totals(results)
    before = totals(baseline) if baseline is not None else None
    head = "some all share false f.im named   med_s"
    print("some: images with at least one true name read; all: every true name read; share:")
    print("mean share of true names read; false: read names matching no true name (f.im: images")
    print("with any); named: read series with a name; med_s: median read_chart seconds.\n")
    width = max(len(k) for k in now) + 2
    print(f"{'group':<{width}}{'n':>4}  " + (f"{head}   |  after: {head}" if before else head))
    for key, t in now.items():
        left = f"{key:<{width}}{t['images']:>4}  "
        if before:
            b = before.get(key)
            print(left + (_row(b) if b else " " * 38) + "   |         " + _row(t))
        else:
            print(left + _row(t))
    secs = [r["seconds"] for r in results]
    print(f"\nmedian read {statistics.median(secs):.3f} s, p90 "
          f"{sorted(secs)[int(0.9 * (len(secs) - 1))]:.3f} s over {len(secs)} images")
    if baseline is not None:
        old = {r["path"]: r for r in baseline}
        bsecs = [r["seconds"] for r in baseline]
        print(f"baseline median {statistics.median(bsecs):.3f} s")
        print("\nchanged images (found / false, before -> after):")
        for r in results:
            b = old.get(r["path"])
            if b is None or (b["found"], b["false"]) == (r["found"], r["false"]):
                continue
            print(f"  {r['path']}: {len(b['found'])}/{len(r['names'])} {b['false']} -> "
                  f"{len(r['found'])}/{len(r['names'])} {r['false']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument("--save", type=Path, help="write the per-image results here (JSON)")
    parser.add_argument("--baseline", type=Path, help="a saved run to print beside this one")
    parser.add_argument("--only", help="only images whose path contains this text")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per image")
    args = parser.parse_args(argv)
    records = images(args.pairs)
    if args.only:
        records = [r for r in records if args.only in r["path"]]
    if not records:
        raise SystemExit("no images with a data file to measure")
    results = []
    for record in records:
        result = measure(record, args.pairs.parent)
        results.append(result)
        if args.verbose:
            print(f"{result['path']}: found {len(result['found'])}/{len(result['names'])} "
                  f"false {result['false']} read {result['read']} ({result['seconds']:.2f} s)",
                  flush=True)
    if args.save:
        args.save.write_text(json.dumps(results, indent=1), encoding="utf-8")
    baseline = None
    if args.baseline:
        baseline = json.loads(args.baseline.read_text(encoding="utf-8"))
        if args.only:
            baseline = [r for r in baseline if args.only in r["path"]]
    report(results, baseline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
