"""The figure judge on REAL figures: a pairs file such as ../shared/datasets/realfig-dev/pairs.jsonl.

Called by `benchmarks/chart_signals.py --pairs FILE.jsonl` (an integer `--pairs` is the synthetic
dev set). One line per pair: `id`, `published`, `reproduced` (paths relative to the file's folder),
`label` (faithful | unfaithful | copy), optional `kind`, `published_system`, `data`.

JUDGED FIGURES, named before measuring (issue 14):
  1. chart.match_score, ROC AUC faithful vs unfaithful, absent counted as 0: target >= 0.85.
  2. the offline figure-match outcome (default: the newest published figure-match):
     - wrong fails: share of faithful pairs whose outcome is `fail`: target <= 10%;
     - wrong passes: share of unfaithful pairs whose outcome is `pass`: target <= 5%;
     - abstentions (`incomplete`) separately, and the share answered (pass or fail): target at
       least 60% of the faithful and 60% of the unfaithful pairs;
     - F1 on the answered pairs (positive class = faithful, predicted faithful iff pass).
  3. copies flagged (`pixel.copy`): target 100%.
  4. per-pair cost of measure_claim: median and p90 (target median <= 0.6 s on this machine).

The re-plots of one figure are not independent, so intervals are a bootstrap over figures (the
published image is the unit), 1,000 resamples, 95% percentile intervals.

Nothing from the pairs file is copied anywhere: it is read where it lies.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from judging.models import Claim, ClaimInput, ClaimKey, Signal, SignalStatus, SubmissionHeader

TARGET_AUC = 0.85
TARGET_WRONG_FAIL = 0.10
TARGET_WRONG_PASS = 0.05
TARGET_ANSWERED = 0.60
TARGET_COPIES = 1.0
TARGET_MEDIAN_S = 0.6
MAIN_SIGNAL = "chart.match_score"
BOOTSTRAP = 1000


@dataclass
class RealPair:
    id: str
    label: str
    kind: str
    system: str
    figure: str
    """The bootstrap unit: the published image the pair is built on."""
    signals: dict[str, Signal] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    measure_s: float = 0.0
    error: str | None = None
    outcome: str | None = None
    score: float | None = None
    answers: dict[str, str] = field(default_factory=dict)
    """criterion id -> the answer's value (or 'unscored: reason')."""


def read_pairs(path: Path) -> list[dict]:
    lines = []
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{n}: not JSON ({exc})") from exc
        missing = [k for k in ("id", "published", "reproduced", "label") if k not in line]
        if missing:
            raise SystemExit(f"{path}:{n}: missing {', '.join(missing)}")
        lines.append(line)
    return lines


def claim_input(folder: Path, line: dict) -> ClaimInput:
    claim_id = f"fig/{line['id']}"
    claim = Claim(claim_id=claim_id, kind="figure", source="Figure 1",
                  statement="The reproduced chart shows the same data as the published chart.",
                  published_figure=line["published"], reproduced_figure=line["reproduced"],
                  verdict="verified")
    return ClaimInput(
        key=ClaimKey(submission_id="bench/realfig", claim_id=claim_id),
        submission=SubmissionHeader(submission_id="bench/realfig", paper_id="realfig"),
        claim=claim, root=folder, published_path=folder / line["published"],
        reproduced_path=folder / line["reproduced"])


def _measure(args: tuple[str, dict]) -> tuple[dict[str, Signal], list[str], float, str | None]:
    from judging.run.measure import MeasureOptions, measure_claim

    folder, line = args
    logging.getLogger("judging").propagate = False
    claim = claim_input(Path(folder), line)
    start = time.perf_counter()
    try:
        measured = measure_claim(claim, options=MeasureOptions())
    except Exception as exc:  # noqa: BLE001 - counted and reported, the other pairs go on
        return {}, [], time.perf_counter() - start, f"{type(exc).__name__}: {str(exc)[:160]}"
    seconds = time.perf_counter() - start
    return (measured.signals, [f.name for f in measured.flags], seconds,
            measured.figure_error)


async def _judge(rubric, folder: Path, pairs: list[RealPair], lines: dict[str, dict]) -> None:
    from judging.judges.base import JudgeTask
    from judging.judges.offline import OfflineJudge
    from judging.rubrics import aggregate
    from judging.run.lines import complete_answers

    judge = OfflineJudge()
    for pair in pairs:
        if pair.error:
            continue
        claim = claim_input(folder, lines[pair.id])
        answered = await judge(JudgeTask(claim=claim, rubric=rubric, signals=pair.signals,
                                         images={}))
        answers = complete_answers(rubric, claim, answered.answers)
        agg = aggregate(rubric, answers)
        pair.outcome, pair.score = agg.outcome.value, agg.score
        pair.answers = {a.criterion_id: (f"unscored: {a.reason}" if a.status.value == "unscored"
                                         else str(a.value)) for a in answers}


def _value(pair: RealPair, name: str) -> float | None:
    signal = pair.signals.get(name)
    if signal is None or signal.status is SignalStatus.absent or signal.value is None:
        return None
    return float(signal.value)


def _auc(pairs: list[RealPair]) -> float | None:
    from sklearn.metrics import roc_auc_score

    y = [p.label == "faithful" for p in pairs]
    if len(set(y)) < 2:
        return None
    return float(roc_auc_score(y, [_value(p, MAIN_SIGNAL) or 0.0 for p in pairs]))


def _outcome_figures(pairs: list[RealPair]) -> dict[str, float | None]:
    from sklearn.metrics import f1_score, precision_score, recall_score

    faithful = [p for p in pairs if p.label == "faithful" and p.outcome]
    unfaithful = [p for p in pairs if p.label == "unfaithful" and p.outcome]
    answered = [p for p in faithful + unfaithful if p.outcome in ("pass", "fail")]

    def share(group, outcome):
        return sum(p.outcome == outcome for p in group) / len(group) if group else None

    truth = [p.label == "faithful" for p in answered]
    predicted = [p.outcome == "pass" for p in answered]
    return {
        "wrong_fail": share(faithful, "fail"), "wrong_pass": share(unfaithful, "pass"),
        "faithful_answered": (1 - share(faithful, "incomplete")) if faithful else None,
        "unfaithful_answered": (1 - share(unfaithful, "incomplete")) if unfaithful else None,
        "f1": f1_score(truth, predicted, zero_division=0) if answered else None,
        "precision": precision_score(truth, predicted, zero_division=0) if answered else None,
        "recall": recall_score(truth, predicted, zero_division=0) if answered else None,
    }


def _bootstrap(pairs: list[RealPair], statistic, *, seed: int = 20261201
               ) -> tuple[float, float] | None:
    by_figure: dict[str, list[RealPair]] = defaultdict(list)
    for p in pairs:
        by_figure[p.figure].append(p)
    figures = sorted(by_figure)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(BOOTSTRAP):
        sample = [q for i in rng.integers(0, len(figures), len(figures))
                  for q in by_figure[figures[i]]]
        value = statistic(sample)
        if value is not None:
            values.append(value)
    if not values:
        return None
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def _met(ok: bool) -> str:
    return "MET" if ok else "NOT MET"


def _ci(interval: tuple[float, float] | None, spec: str = ".3f") -> str:
    return "" if interval is None else f"  [95% CI {interval[0]:{spec}}, {interval[1]:{spec}}]"


def run_real(path: Path, *, rubric_ref: str | None, jobs: int | None, out: Path | None) -> int:
    from judging.rubrics import RubricLibrary

    folder = path.resolve().parent
    lines = read_pairs(path)
    library = RubricLibrary()
    rubric_ref = rubric_ref or f"figure-match@{library.latest_entry('figure-match').version}"
    rubric = library.load(rubric_ref)
    pairs = [RealPair(id=line["id"], label=line["label"], kind=line.get("kind") or "",
                      system=line.get("published_system") or "?",
                      figure=line["published"]) for line in lines]
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs or 2) as pool:
        for n, (pair, result) in enumerate(zip(pairs, pool.map(
                _measure, [(str(folder), line) for line in lines])), 1):
            pair.signals, pair.flags, pair.measure_s, pair.error = result
            if n % 20 == 0 or n == len(pairs):
                print(f"  measured {n}/{len(pairs)} pairs", file=sys.stderr)
    by_id = {line["id"]: line for line in lines}
    asyncio.run(_judge(rubric, folder, pairs, by_id))
    elapsed = time.perf_counter() - start
    report(pairs, path=path, rubric_ref=rubric_ref)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        with (out / "realfig-results.jsonl").open("w", encoding="utf-8") as handle:
            for p in pairs:
                handle.write(json.dumps({
                    "id": p.id, "label": p.label, "kind": p.kind, "system": p.system,
                    "outcome": p.outcome, "score": p.score, "error": p.error,
                    "measure_s": round(p.measure_s, 3), "flags": p.flags, "answers": p.answers,
                    "signals": {k: s.value for k, s in p.signals.items()
                                if s.status is SignalStatus.ok},
                    "absent": {k: s.reason for k, s in p.signals.items()
                               if s.status is SignalStatus.absent}}) + "\n")
        print(f"\nper-pair results: {out / 'realfig-results.jsonl'}")
    print(f"\nmeasured and judged {len(pairs)} pairs in {elapsed:.0f} s")
    return 0


def report(pairs: list[RealPair], *, path: Path, rubric_ref: str) -> None:
    counts = Counter(p.label for p in pairs)
    print(f"\nreal figures: {path} -- {len(pairs)} pairs ({counts['faithful']} faithful, "
          f"{counts['unfaithful']} unfaithful, {counts['copy']} copies) from "
          f"{len({p.figure for p in pairs})} published images")
    for reason, count in Counter(p.error for p in pairs if p.error).most_common(5):
        print(f"  not measured on {count} pairs: {reason}")
    labelled = [p for p in pairs if p.label in ("faithful", "unfaithful")]

    auc = _auc(labelled)
    present = sum(_value(p, MAIN_SIGNAL) is not None for p in labelled)
    print(f"\n1. {MAIN_SIGNAL} ROC AUC (absent = 0): "
          + ("not available" if auc is None else
             f"{auc:.3f}{_ci(_bootstrap(labelled, _auc))}   target >= {TARGET_AUC}: "
             f"{_met(auc >= TARGET_AUC)}")
          + f"   (present on {present}/{len(labelled)})")

    figures = _outcome_figures(labelled)
    print(f"\n2. offline {rubric_ref} outcome (positive class = faithful)")
    table = Counter((p.label, p.outcome) for p in labelled)
    for label in ("faithful", "unfaithful"):
        print(f"   {label:10} " + "  ".join(f"{o}: {table[(label, o)]:3d}"
                                             for o in ("pass", "fail", "incomplete", None)
                                             if o is not None or table[(label, o)]))

    def line(name, key, target, ok):
        value = figures[key]
        if value is None:
            print(f"   {name:34} not available")
            return
        def stat(sample, key=key):
            return _outcome_figures(sample)[key]
        print(f"   {name:34} {value:6.1%}{_ci(_bootstrap(labelled, stat), '.1%')}   "
              f"target {target}: {_met(ok(value))}")

    line("wrong fails (faithful failed)", "wrong_fail", f"<= {TARGET_WRONG_FAIL:.0%}",
         lambda v: v <= TARGET_WRONG_FAIL)
    line("wrong passes (unfaithful passed)", "wrong_pass", f"<= {TARGET_WRONG_PASS:.0%}",
         lambda v: v <= TARGET_WRONG_PASS)
    line("faithful pairs answered", "faithful_answered", f">= {TARGET_ANSWERED:.0%}",
         lambda v: v >= TARGET_ANSWERED)
    line("unfaithful pairs answered", "unfaithful_answered", f">= {TARGET_ANSWERED:.0%}",
         lambda v: v >= TARGET_ANSWERED)
    if figures["f1"] is not None:
        print(f"   F1 on the answered pairs          {figures['f1']:.3f}"
              f"{_ci(_bootstrap(labelled, lambda s: _outcome_figures(s)['f1']))}   "
              f"(precision {figures['precision']:.3f}, recall {figures['recall']:.3f})")
    unscored = Counter(c for p in labelled for c, a in p.answers.items()
                       if a.startswith("unscored"))
    if unscored:
        print("   criteria left unscored: " + ", ".join(
            f"{c} {k}/{len(labelled)}" for c, k in unscored.most_common()))

    copies = [p for p in pairs if p.label == "copy"]
    if copies:
        flagged = [p for p in copies if _value(p, "pixel.copy")]
        share = len(flagged) / len(copies)
        missed = ", ".join(p.id for p in copies if p not in flagged)
        passed = [p.id for p in copies if p.outcome == "pass"]
        print(f"\n3. copies flagged (pixel.copy): {len(flagged)}/{len(copies)} ({share:.0%})   "
              f"target 100%: {_met(share >= TARGET_COPIES)}"
              + (f"; missed: {missed}" if missed else "")
              + (f"; PASSED as reproductions: {', '.join(passed)}" if passed else ""))
    rerenders = [p for p in labelled if "identical_rerender" in p.flags or "copy" in p.flags]
    if rerenders:
        print("   faithful/unfaithful pairs flagged copy or identical_rerender: "
              + ", ".join(f"{p.id} ({'/'.join(p.flags)})" for p in rerenders))

    times = np.array([p.measure_s for p in pairs])
    median, p90 = float(np.median(times)), float(np.percentile(times, 90))
    print(f"\n4. per-pair cost of measure_claim: median {median:.3f} s, p90 {p90:.3f} s, "
          f"max {times.max():.3f} s   target median <= {TARGET_MEDIAN_S} s: "
          f"{_met(median <= TARGET_MEDIAN_S)}")

    print("\nby kind: pairs, outcome pass/fail/incomplete, mean match_score")
    groups: dict[tuple[str, str], list[RealPair]] = defaultdict(list)
    for p in labelled:
        groups[(p.label, p.kind)].append(p)
    for (label, kind), group in sorted(groups.items()):
        scores = [_value(p, MAIN_SIGNAL) or 0.0 for p in group]
        c = Counter(p.outcome for p in group)
        print(f"   {label:10} {kind[:34]:34} {len(group):3d}   {c['pass']:2d}/{c['fail']:2d}/"
              f"{c['incomplete']:2d}   {np.mean(scores):.2f}")
    print("by published system: pairs, AUC, wrong fails, wrong passes, answered")
    systems: dict[str, list[RealPair]] = defaultdict(list)
    for p in labelled:
        systems[p.system].append(p)
    for system, group in sorted(systems.items()):
        f = _outcome_figures(group)
        a = _auc(group)

        def pct(v):
            return "  -  " if v is None else f"{v:4.0%}"
        answered = [p for p in group if p.outcome in ("pass", "fail")]
        print(f"   {system:12} {len(group):3d}   AUC {'  -  ' if a is None else f'{a:.2f}'}   "
              f"{pct(f['wrong_fail'])} {pct(f['wrong_pass'])}   "
              f"{len(answered)}/{len(group)}")
