"""Do the figure signals tell faithful from unfaithful chart reproductions? (chart dev set)

JUDGED SIGNALS, named before measuring (see benchmarks/chart_devset.py):
  1. chart.match_score: ROC AUC faithful vs unfaithful >= 0.9
  2. the offline judge's figure verdict with rubric figure-match@1.1.0: predicted faithful iff the
     judgment's aggregate outcome is pass; F1 >= 0.85 (positive class = faithful)
pixel.ssim is printed beside them for reference; every other pixel.* / chart.* signal is
diagnostics. Also printed: the per-pair cost of measuring (target <= 1 s, OCR included), the image
sizes, and chart.match_score by variation (which perturbations are missed).

Generates the dev set into a temp dir (or `--out DIR`, reused when it already holds a set of the
same size and generator version), then for every pair measures the signals the way `judging run`
does (`measure_claim(claim, options=MeasureOptions())`, tolerance None) and, when the rubric
exists, answers it with the offline judge (a `--rubric` that cannot be loaded is reported as
"not available").

The newest published figure-match (when it is not the judged rubric) is answered on the same
measurements and printed beside it (`--also RUBRIC` for others). `--seed N` generates a held-out
set of the same design: the reader and the rubrics were developed on the default seed.

    .venv/bin/python benchmarks/chart_signals.py [--pairs 176] [--out DIR] [--jobs N] [--seed N]
    .venv/bin/python benchmarks/chart_signals.py --pairs PAIRS.jsonl [--published-data]

`--pairs PAIRS.jsonl` measures real figures instead (benchmarks/realfig_pairs.py);
`--published-data` then gives each pair that has a `data` file that file as the registry's
`published_data`, so the published side is compared from its data.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import logging
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

# benchmarks/judging.py is named like the package: take this folder off the path so that
# `judging` is the package, and load the generator from its file.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from judging.models import (  # noqa: E402
    Claim,
    ClaimInput,
    ClaimKey,
    Signal,
    SignalStatus,
    SubmissionHeader,
)
from judging.run.measure import MeasureOptions, measure_claim  # noqa: E402
from judging.signal_catalogue import CATALOGUE  # noqa: E402


def _load_module(name: str):
    spec = importlib.util.spec_from_file_location(name, _HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the (forked) worker processes find it by this name
    spec.loader.exec_module(module)
    return module


devset = _load_module("chart_devset")

RUBRIC = "figure-match@1.1.0"
TARGET_AUC = 0.9
TARGET_F1 = 0.85
TARGET_SECONDS = 1.0
MAIN_SIGNAL = "chart.match_score"
REFERENCE_SIGNAL = "pixel.ssim"

#: The LOCKBOX (issue 41): two repositories of realfig-dev3 whose pairs nobody developing the
#: reader opens. Chosen 2026-12-07, before any pair of realfig-dev3 was opened (only the data card
#: and the `source_repo` field of pairs.jsonl had been read): a draw with random.Random(41) of two
#: among the five repositories with at least 15 pairs, so that the lockbox holds enough pairs to
#: measure (41 pairs). Every measurement of real figures reports them on their own line, out of
#: the development figures and the pooled leave-one-repository-out lines, with the values chosen
#: on all the other repositories. Do not look at their pairs, their wrong answers or their ids.
LOCKBOX_REPOSITORIES = ("miloyip/nativejson-benchmark", "rapidfuzz/RapidFuzz")


class _Collect(logging.Handler):
    """Keeps what the package logs (e.g. a chart reader raising on every pair) for a summary,
    instead of one traceback per pair on stderr."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.counts: Counter[str] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f": {type(exc).__name__}: {str(exc)[:100]}"
        self.counts[f"{record.name}: {text}"] += 1


@dataclass
class PairResult:
    id: str
    label: str
    variation: str
    presentation: str
    chart_type: str
    signals: dict[str, Signal] = field(default_factory=dict)
    measure_s: float = 0.0
    judge_s: float | None = None
    error: str | None = None
    outcome: str | None = None
    score: float | None = None
    coverage: float | None = None
    unscored: list[str] = field(default_factory=list)

    @property
    def faithful(self) -> bool:
        return self.label == "faithful"


def claim_input(folder: Path, pair: str) -> ClaimInput:
    claim_id = f"fig/{pair}"
    return ClaimInput(
        key=ClaimKey(submission_id="bench/chart-devset", claim_id=claim_id),
        submission=SubmissionHeader(submission_id="bench/chart-devset", paper_id="chart-devset"),
        claim=Claim(claim_id=claim_id, kind="figure", source="Figure 1",
                    statement="The reproduced chart shows the same data as the published chart.",
                    published_figure="published.png", reproduced_figure="reproduced.png",
                    verdict="verified"),
        root=folder, published_path=folder / "published.png",
        reproduced_path=folder / "reproduced.png")


def load_rubric(ref: str):
    """(rubric, None) or (None, why it is not available)."""
    from judging.errors import RubricError
    from judging.rubrics import RubricLibrary

    try:
        return RubricLibrary().load(ref), None
    except RubricError as exc:  # no such version, a file that does not validate, an edited one
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"


def newest_other(judged_ref: str) -> list[str]:
    """The newest published figure-match, unless it is the judged rubric."""
    from judging.errors import RubricError
    from judging.rubrics import RubricLibrary

    try:
        ref = f"figure-match@{RubricLibrary().latest_entry('figure-match').version}"
    except (RubricError, OSError) as exc:
        print(f"no newest figure-match to print beside the judged rubric: {exc}")
        return []
    return [ref] if ref != judged_ref else []


async def judge_all(rubric, tasks: list[tuple[PairResult, ClaimInput, dict]]) -> None:
    from judging.judges.base import JudgeTask
    from judging.judges.offline import OfflineJudge
    from judging.rubrics import aggregate
    from judging.run.lines import complete_answers

    judge = OfflineJudge()
    for result, claim, images in tasks:
        start = time.perf_counter()
        answered = await judge(JudgeTask(claim=claim, rubric=rubric, signals=result.signals,
                                         images=images))
        answers = complete_answers(rubric, claim, answered.answers)
        agg = aggregate(rubric, answers)
        result.judge_s = time.perf_counter() - start
        result.outcome, result.score, result.coverage = agg.outcome.value, agg.score, agg.coverage
        result.unscored = [a.criterion_id for a in answers if a.status.value == "unscored"]


def prepare_set(out: Path, pairs: int, jobs: int | None, seed: int) -> list[dict]:
    labels_path = out / "labels.jsonl"
    if labels_path.exists():
        labels = devset.read_labels(out)
        complete = all((out / line["id"] / name).is_file() for line in labels
                       for name in ("published.png", "reproduced.png"))
        if (len(labels) == pairs and complete
                and all(line.get("generator") == devset.GENERATOR_VERSION
                        and line.get("seed", devset.BASE_SEED) == seed for line in labels)):
            print(f"reusing the dev set in {out}")
            return labels
        print(f"regenerating the dev set in {out} (the one there has another size, version or "
              f"seed)")
    start = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done % 40 == 0 or done == total:
            print(f"  generated {done}/{total} pairs", file=sys.stderr)

    labels = devset.generate(out, pairs, jobs=jobs, progress=progress, seed=seed)
    print(f"generated {pairs} pairs in {time.perf_counter() - start:.0f} s into {out}")
    return labels


def run(labels: list[dict], root: Path, *, rubric, verbose: bool
        ) -> tuple[list[PairResult], _Collect, list[tuple[PairResult, ClaimInput, dict]]]:
    options = MeasureOptions()
    collector = _Collect()
    package_log = logging.getLogger("judging")
    package_log.addHandler(collector)
    package_log.propagate = verbose
    results, tasks = [], []
    try:
        for n, line in enumerate(labels, 1):
            result = PairResult(line["id"], line["label"], line["variation"],
                                line["presentation"], line["chart_type"])
            claim = claim_input(root / line["id"], line["id"])
            start = time.perf_counter()
            try:
                measured = measure_claim(claim, options=options)
            except Exception as exc:  # noqa: BLE001 - counted and reported, the others go on
                result.measure_s = time.perf_counter() - start
                result.error = f"{type(exc).__name__}: {str(exc)[:160]}"
            else:
                result.measure_s = time.perf_counter() - start
                result.signals = measured.signals
                if measured.figure_error:
                    result.error = measured.figure_error
                else:
                    tasks.append((result, claim, measured.images))
            results.append(result)
            if n % 40 == 0 or n == len(labels):
                print(f"  measured {n}/{len(labels)} pairs", file=sys.stderr)
        if rubric is not None:
            asyncio.run(judge_all(rubric, tasks))
    finally:
        package_log.removeHandler(collector)
        package_log.propagate = True
    return results, collector, tasks


def judge_again(rubric, tasks: list[tuple[PairResult, ClaimInput, dict]]) -> list[PairResult]:
    """The same measurements answered with another rubric (copies: the judged results stay)."""
    again = [(replace(result, outcome=None, score=None, coverage=None, unscored=[]), claim,
              images) for result, claim, images in tasks]
    asyncio.run(judge_all(rubric, again))
    return [result for result, _, _ in again]


# --- report ----------------------------------------------------------------------------------

def signal_spec(name: str) -> tuple[str, str | None]:
    """(kind, better) from the catalogue."""
    if name in CATALOGUE:
        return CATALOGUE[name].kind, CATALOGUE[name].better
    return "number", None


def signal_names(results: list[PairResult]) -> list[str]:
    expected = [n for n in CATALOGUE if n.startswith(("pixel.", "chart."))]
    seen = {n for r in results for n in r.signals if n.startswith(("pixel.", "chart."))}
    return expected + sorted(seen - set(expected))


def value_of(result: PairResult, name: str) -> float | bool | None:
    signal = result.signals.get(name)
    if signal is None or signal.status is SignalStatus.absent or signal.value is None:
        return None
    return signal.value


def absent_reason(results: list[PairResult], name: str) -> str:
    reasons = Counter()
    for r in results:
        signal = r.signals.get(name)
        if signal is None:
            reasons[r.error or "not measured"] += 1
        elif signal.status is SignalStatus.absent:
            reasons[signal.reason or "absent"] += 1
    if not reasons:
        return ""
    reason, count = reasons.most_common(1)[0]
    return f"{reason[:110]} ({count}/{len(results)})"


def auc(labels: np.ndarray, scores: np.ndarray) -> float | None:
    from sklearn.metrics import roc_auc_score

    if len(set(labels.tolist())) < 2:
        return None
    return float(roc_auc_score(labels, scores))


@dataclass
class SignalRow:
    name: str
    available: bool
    note: str = ""
    auc_all: float | None = None
    auc_present: float | None = None
    absent_share: float = 0.0
    mean_faithful: float | None = None
    mean_unfaithful: float | None = None


def evaluate_signal(results: list[PairResult], name: str) -> SignalRow:
    kind, better = signal_spec(name)
    y = np.array([r.faithful for r in results], dtype=int)
    values = [value_of(r, name) for r in results]
    present = np.array([v is not None for v in values])
    row = SignalRow(name, available=bool(present.any()), absent_share=float(1 - present.mean()))
    if not present.any():
        ever = any(name in r.signals for r in results)
        row.note = ("not available: absent on every pair -- " + absent_reason(results, name)
                    if ever else "not available: not measured (the signal does not exist yet)")
        return row
    numbers = np.array([float(v) if v is not None else np.nan for v in values])
    if present[y == 1].any():
        row.mean_faithful = float(np.nanmean(numbers[y == 1]))
    if present[y == 0].any():
        row.mean_unfaithful = float(np.nanmean(numbers[y == 0]))
    if kind == "flag" or better is None:
        row.note = "flag (share true)" if kind == "flag" else "no better direction: means only"
        return row
    sign = 1.0 if better == "higher" else -1.0
    scores = sign * numbers
    worst = float(np.nanmin(scores)) - 1.0
    row.auc_all = auc(y, np.where(present, scores, worst))
    row.auc_present = auc(y[present], scores[present])
    if row.absent_share:
        row.note = "absent: " + absent_reason(results, name)
    return row


def fmt(value: float | None, spec: str = ".3f") -> str:
    return "   -  " if value is None else format(value, spec)


def verdict_metrics(truth: list[bool], predicted: list[bool]) -> dict[str, float]:
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    return {"precision": precision_score(truth, predicted, zero_division=0),
            "recall": recall_score(truth, predicted, zero_division=0),
            "f1": f1_score(truth, predicted, zero_division=0),
            "accuracy": accuracy_score(truth, predicted)}


def met(ok: bool) -> str:
    return "MET" if ok else "NOT MET"


def print_verdict(results: list[PairResult], *, rubric, rubric_ref: str,
                  rubric_problem: str | None, judged: bool) -> None:
    print(f"\noffline judge figure verdict, rubric {rubric_ref} (positive class = faithful)"
          f"{'' if judged else ' -- not the judged rubric, printed beside it'}")
    scored = [r for r in results if r.outcome is not None]
    if rubric is None:
        print(f"  not available: {rubric_problem}")
    elif not scored:
        print("  not available: no pair could be judged (see the measurement errors above)")
    else:
        truth = [r.faithful for r in scored]
        primary = verdict_metrics(truth, [r.outcome == "pass" for r in scored])
        threshold = rubric.pass_threshold
        secondary = verdict_metrics(truth, [
            r.outcome == "pass" or (r.outcome == "incomplete" and r.score is not None
                                    and r.score >= threshold - 1e-12) for r in scored])
        target = (f"   JUDGED, target F1 >= {TARGET_F1}: {met(primary['f1'] >= TARGET_F1)}"
                  if judged else "")
        print(f"  predicted faithful iff outcome = pass ({len(scored)} pairs judged):")
        print(f"    precision {primary['precision']:.3f}  recall {primary['recall']:.3f}  "
              f"F1 {primary['f1']:.3f}  accuracy {primary['accuracy']:.3f}{target}")
        print(f"  secondary, pass or (incomplete and score >= {threshold:g}):")
        print(f"    precision {secondary['precision']:.3f}  recall {secondary['recall']:.3f}  "
              f"F1 {secondary['f1']:.3f}  accuracy {secondary['accuracy']:.3f}")
        table = Counter((r.label, r.outcome) for r in scored)
        for label in ("faithful", "unfaithful"):
            print(f"    {label:10} " + "  ".join(f"{o}: {table[(label, o)]:3d}"
                                                  for o in ("pass", "fail", "incomplete")))
        unscored = Counter(c for r in scored for c in r.unscored)
        if unscored:
            print("    criteria left unscored: " + ", ".join(
                f"{c} ({k}/{len(scored)})" for c, k in unscored.most_common()))
    if judged and (rubric is None or not scored):
        print(f"  -> judged verdict: not available (target F1 >= {TARGET_F1} not assessed)")


def report(results: list[PairResult], labels: list[dict], *, rubric, rubric_ref: str,
           rubric_problem: str | None, collector: _Collect,
           also: list[tuple[str, object, str | None, list[PairResult]]] = ()) -> None:
    n = len(results)
    counts = Counter(r.label for r in results)
    print(f"\nchart dev set: {n} pairs ({counts['faithful']} faithful, "
          f"{counts['unfaithful']} unfaithful), generator {devset.GENERATOR_VERSION}, seed "
          f"{labels[0].get('seed', devset.BASE_SEED) if labels else devset.BASE_SEED}")
    errors = Counter(r.error for r in results if r.error)
    for reason, count in errors.most_common(5):
        print(f"  figure not measured on {count} pairs: {reason}")

    # 1. signals
    print("\nROC AUC, faithful vs unfaithful (absent = worst value; 'present' = pairs where "
          "measured)")
    print(f"  {'signal':28} {'AUC':>6} {'AUC present':>11} {'absent':>7} "
          f"{'mean faithful':>14} {'mean unfaithful':>15}  note")
    rows = {name: evaluate_signal(results, name) for name in signal_names(results)}
    for name, row in rows.items():
        if not row.available:
            print(f"  {name:28} {row.note}")
            continue
        tag = ""
        if name == MAIN_SIGNAL and row.auc_all is not None:
            tag = f"JUDGED, target >= {TARGET_AUC}: {met(row.auc_all >= TARGET_AUC)}"
        elif name == REFERENCE_SIGNAL:
            tag = "reference"
        note = "; ".join(t for t in (tag, row.note) if t)
        print(f"  {name:28} {fmt(row.auc_all):>6} {fmt(row.auc_present):>11} "
              f"{row.absent_share:7.0%} {fmt(row.mean_faithful, '.4f'):>14} "
              f"{fmt(row.mean_unfaithful, '.4f'):>15}  {note}")
    main = rows.get(MAIN_SIGNAL)
    if main is None or not main.available:
        print(f"  -> judged signal {MAIN_SIGNAL}: not available (target AUC >= {TARGET_AUC} "
              f"not assessed)")

    # 2. the offline figure verdict
    print_verdict(results, rubric=rubric, rubric_ref=rubric_ref, rubric_problem=rubric_problem,
                  judged=True)
    for other_ref, other, other_problem, other_results in also:
        print_verdict(other_results, rubric=other, rubric_ref=other_ref,
                      rubric_problem=other_problem, judged=False)

    # 3. cost and sizes
    times = np.array([r.measure_s for r in results])
    median, p90 = float(np.median(times)), float(np.percentile(times, 90))
    print(f"\nper-pair cost of measure_claim (decode, pixel signals, chart reading incl. OCR): "
          f"median {median:.3f} s, p90 {p90:.3f} s, max {times.max():.3f} s   "
          f"target <= {TARGET_SECONDS:g} s (median): {met(median <= TARGET_SECONDS)}, "
          f"(p90): {met(p90 <= TARGET_SECONDS)}")
    judge_times = [r.judge_s for r in results if r.judge_s is not None]
    if judge_times:
        print(f"  offline judge per pair: median {statistics.median(judge_times) * 1000:.2f} ms")
    sizes = Counter()
    pixels = []
    for line in labels:
        for which in ("published", "reproduced"):
            w, h = line[which]["size"]
            sizes[f"{w}x{h}"] += 1
            pixels.append(w * h / 1e6)
    common = ", ".join(f"{s} {c}" for s, c in sizes.most_common(6))
    print(f"  image sizes ({len(pixels)} images, {min(pixels):.2f}-{max(pixels):.2f} MP): "
          f"{common}{', ...' if len(sizes) > 6 else ''}")

    # 4. by variation
    by_variation: dict[tuple[str, str], list[PairResult]] = defaultdict(list)
    for r in results:
        by_variation[(r.label, r.variation)].append(r)
    main_ok = main is not None and main.available
    print(f"\nby variation (faithful: the presentation change; unfaithful: the data change)"
          f"{'' if main_ok else f' -- {MAIN_SIGNAL} not available'}")
    print(f"  {'label':10} {'variation':22} {'n':>3} {MAIN_SIGNAL + ' mean':>23} {'absent':>6} "
          f"{REFERENCE_SIGNAL + ' mean':>15} {'offline pass':>12}")
    for label in ("faithful", "unfaithful"):
        names = devset.PRESENTATIONS if label == "faithful" else devset.UNFAITHFUL
        for variation in names:
            group = by_variation.get((label, variation), [])
            if not group:
                continue
            scores = [value_of(r, MAIN_SIGNAL) for r in group]
            present = [float(v) for v in scores if v is not None]
            ssim = [float(v) for r in group if (v := value_of(r, REFERENCE_SIGNAL)) is not None]
            judged_here = [r for r in group if r.outcome is not None]
            passed = (f"{sum(r.outcome == 'pass' for r in judged_here)}/{len(judged_here)}"
                      if judged_here else "-")
            print(f"  {label:10} {variation:22} {len(group):3d} "
                  f"{fmt(float(np.mean(present)) if present else None):>23} "
                  f"{len(group) - len(present):6d} "
                  f"{fmt(float(np.mean(ssim)) if ssim else None):>15} {passed:>12}")
    by_type: dict[str, list[PairResult]] = defaultdict(list)
    for r in results:
        by_type[r.chart_type].append(r)
    print(f"\nby chart type: pairs, AUC of {MAIN_SIGNAL} / {REFERENCE_SIGNAL}")
    for chart_type, group in sorted(by_type.items()):
        cells = []
        for name in (MAIN_SIGNAL, REFERENCE_SIGNAL):
            row = evaluate_signal(group, name) if name in rows and rows[name].available else None
            cells.append(fmt(row.auc_all if row else None))
        print(f"  {chart_type:12} {len(group):3d}   {cells[0]} / {cells[1]}")

    if collector.counts:
        total = sum(collector.counts.values())
        print(f"\nthe package logged {total} warnings/errors (use --verbose to see them):")
        for text, count in collector.counts.most_common(3):
            print(f"  {count:4d} x {text}")


def write_results(path: Path, results: list[PairResult]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for r in results:
            handle.write(json.dumps({
                "id": r.id, "label": r.label, "variation": r.variation,
                "presentation": r.presentation, "chart_type": r.chart_type,
                "measure_s": round(r.measure_s, 4), "error": r.error, "outcome": r.outcome,
                "score": r.score, "coverage": r.coverage,
                "signals": {k: (s.value if s.status is SignalStatus.ok else None)
                            for k, s in r.signals.items()},
                "absent": {k: s.reason for k, s in r.signals.items()
                           if s.status is SignalStatus.absent},
            }) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", action="append", default=None,
                        help="a number of synthetic dev-set pairs (default "
                             f"{devset.DEFAULT_PAIRS}), or a pairs file of real figures such as "
                             "../shared/datasets/realfig-dev/pairs.jsonl, repeated for several "
                             "(see realfig_pairs.py: the leave-one-repository-out figures)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="with pairs files: keep each pair's readings here and reuse them "
                             "while the reading code is unchanged")
    parser.add_argument("--out", type=Path, default=None,
                        help="keep the dev set (and results.jsonl) here; reused when present")
    parser.add_argument("--jobs", type=int, default=None,
                        help="processes generating the set (default: all CPUs)")
    parser.add_argument("--rubric", default=RUBRIC,
                        help=f"the figure rubric the offline judge answers (default {RUBRIC}, "
                             f"the judged one)")
    parser.add_argument("--also", action="append", default=None, metavar="RUBRIC",
                        help="print the verdict of other figure rubrics beside the judged one "
                             "(default: the newest published figure-match, when it is another)")
    parser.add_argument("--seed", type=int, default=devset.BASE_SEED,
                        help=f"generate a held-out set of the same design with another seed "
                             f"(default {devset.BASE_SEED}, the dev set the reader was built on)")
    parser.add_argument("--verbose", action="store_true",
                        help="let the package's log messages through to stderr")
    parser.add_argument("--published-data", action="store_true",
                        help="with a pairs file: a pair's `data` (a figure-data JSON beside the "
                             "file) is the registry's published_data, and the published side is "
                             "compared from it instead of read from the image")
    args = parser.parse_args()
    given = args.pairs or [str(devset.DEFAULT_PAIRS)]
    if len(given) > 1 and any(value.isdigit() for value in given):
        parser.error("--pairs: one number (a synthetic set) or one or more pairs files")
    if args.published_data and given[0].isdigit():
        parser.error("--published-data needs a pairs file of real figures (--pairs FILE.jsonl)")
    if not given[0].isdigit():
        files = [Path(value) for value in given]
        for pairs_file in files:
            if not pairs_file.is_file():
                parser.error(f"--pairs: {pairs_file} is neither a number nor a pairs file")
        real = _load_module("realfig_pairs")
        sys.stdout.reconfigure(line_buffering=True)
        raise SystemExit(real.run_real(files, rubric_ref=None if args.rubric == RUBRIC
                                       else args.rubric, jobs=args.jobs, out=args.out,
                                       cache=args.cache, published_data=args.published_data,
                                       lockbox=LOCKBOX_REPOSITORIES))
    args.pairs = int(given[0])
    if args.pairs < 2:
        parser.error("--pairs must be at least 2 (one per class)")
    sys.stdout.reconfigure(line_buffering=True)  # in order with the progress lines on stderr
    rubric, rubric_problem = load_rubric(args.rubric)
    # resolved before measuring: a rubric folder that cannot be read says so at once
    others = [(ref, load_rubric(ref)) for ref in (args.also if args.also is not None
                                                  else newest_other(args.rubric))]
    with tempfile.TemporaryDirectory(prefix="chart-devset-") as tmp:
        root = args.out or Path(tmp)
        labels = prepare_set(root, args.pairs, args.jobs, args.seed)
        start = time.perf_counter()
        results, collector, tasks = run(labels, root, rubric=rubric, verbose=args.verbose)
        also = [(ref, other, problem, judge_again(other, tasks) if other is not None else [])
                for ref, (other, problem) in others]
        elapsed = time.perf_counter() - start
        report(results, labels, rubric=rubric, rubric_ref=args.rubric,
               rubric_problem=rubric_problem, collector=collector, also=also)
        if args.out is not None:
            write_results(args.out / "results.jsonl", results)
            print(f"\nper-pair results: {args.out / 'results.jsonl'}")
        print(f"\nmeasured and judged {len(results)} pairs in {elapsed:.0f} s")


if __name__ == "__main__":
    main()
