"""The paged report of a large run: build time, and how soon the index shows its first page in a
real headless Chromium.

A synthetic run directory of N claims (tests/synthetic_run.py: judgment lines written
directly, no judging) is reported with `write_html_report`; the build is timed in this process,
with the size of the index page, its data files and the claim pages. Then headless Chromium
(driven over the DevTools protocol, tests/browser.py) opens the index from file:// RUNS times,
each a fresh navigation, and the page's own clock is read:
- first page: `performance.mark("judging:first-page")`, set by the index's script once the first
  screen of rows is in the DOM and laid out (a forced layout), in ms since the navigation started
  (the page's time origin): this includes reading and parsing every index data file;
- first contentful paint (the browser's paint timing entry), for comparison;
- the wall time from sending Page.navigate to seeing the mark (adds the protocol's round trips).
Target (issue 15): first page < 2 s at N = 10,000.

    PYTHONPATH=. .venv/bin/python benchmarks/report.py [--claims 10000] [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judging.report import write_html_report
from judging.report.html import pages_dir
from tests.browser import Browser
from tests.synthetic_run import write_synthetic_run

MARK = "judging:first-page"


def size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5, help="navigations measured")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="judging-report-bench-"))
    try:
        run = work / "run"
        if run.exists():
            shutil.rmtree(run)
        started = time.perf_counter()
        write_synthetic_run(run, args.claims)
        print(f"synthetic run of {args.claims} claims written in "
              f"{time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        index = write_html_report(run, rubrics_dir=Path(__file__).resolve().parent.parent
                                  / "rubrics")
        build = time.perf_counter() - started
        folder = pages_dir(index)
        print(f"report built in {build:.1f} s: index page {size_mb(index) * 1024:.0f} KB, index "
              f"data {sum(size_mb(p) for p in folder.glob('*.js')):.1f} MB, "
              f"{len(list(folder.glob('claims/*.html')))} claim pages "
              f"{size_mb(folder / 'claims'):.1f} MB")
        marks, paints, walls = [], [], []
        browser = Browser(work / "chromium", viewport=(1400, 1000))
        try:
            for _ in range(args.runs):
                browser.navigate("about:blank")
                sent = time.perf_counter()
                browser.navigate(index.as_uri())
                browser.wait_for(f"performance.getEntriesByName({MARK!r}).length",
                                 "the first page of rows", timeout=60)
                walls.append((time.perf_counter() - sent) * 1000)
                marks.append(browser.evaluate(
                    f"performance.getEntriesByName({MARK!r})[0].startTime"))
                paints.append(browser.evaluate(
                    "(performance.getEntriesByName('first-contentful-paint')[0] || "
                    "{startTime: NaN}).startTime"))
                shown = browser.evaluate("document.querySelectorAll('#rows tr').length")
                assert shown > 0, browser.describe()
        finally:
            browser.close()
        fmt = ", ".join
        print(f"first page (rows in the DOM, laid out) in ms since navigation start: median "
              f"{statistics.median(marks):.0f} ({fmt(f'{m:.0f}' for m in marks)})")
        print(f"first contentful paint in ms: median {statistics.median(paints):.0f} "
              f"({fmt(f'{p:.0f}' for p in paints)})")
        print(f"navigate -> mark seen over CDP in ms: median {statistics.median(walls):.0f}")
        verdict = "yes" if statistics.median(marks) < 2000 else "NO"
        print(f"first page < 2 s at {args.claims} claims: {verdict}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
