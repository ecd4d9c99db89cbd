"""The figure judge on REAL figures: pairs files such as ../shared/datasets/realfig-dev/pairs.jsonl.

Called by `benchmarks/chart_signals.py --pairs FILE.jsonl [--pairs FILE2.jsonl ...]` (an integer
`--pairs` is the synthetic dev set). One line per pair: `id`, `published`, `reproduced` (paths
relative to the file's folder), `label` (faithful | unfaithful | copy), and optionally `kind`,
`source_repo` (the unit left out), `ambiguous` (a genuine pair its write-up leaves in doubt: out
of the headline figures), `published_system`, `data`.

JUDGED FIGURES (issue 27), on the repositories left out (benchmarks/_realfig_loro.py says how
every value taken from data is chosen on the other repositories), per pairs file and over all:
  1. wrong fails <= 3% of the faithful pairs, wrong passes <= 3% of the unfaithful pairs, each
     class answered >= 50%, with the offline figure-match (default: the newest, drafts
     included);
  2. AUC of chart.match_score (absent = 0) >= 0.85 on the worst-but-one repository;
  3. reliability of chart.same_data and of the judge's answers, with their ECE;
  4. copies: every `copy` pair flagged (pixel.copy), no other pair flagged;
  5. measure_claim: median <= 0.3 s per pair, and its ratio to the pair's decode time.
Intervals: 95% bootstrap over figures (the published image is the unit).

With `--published-data`, a pair whose line has `data` gives its claim that file as the
registry's `published_data` (the published side compared from its data).

LOCKBOX (issue 41): the repositories of chart_signals.LOCKBOX_REPOSITORIES are measured but kept
out of every figure above (the choice of values, the tables, the wrong answers, the per-pair
file) and reported on one line of their own, answered with the values chosen on all the others.

Nothing from the pairs files is copied anywhere: they are read where they lie (`--cache DIR`
keeps readings and signals, no image).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections import Counter
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from judging.models import Signal  # noqa: E402
from judging.signals.chart import (  # noqa: E402
    CompareSettings,
    EvidenceSettings,
    compare_charts,
    comparison_signals,
)
from judging.signals.chart.settings import CALIBRATION  # noqa: E402


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


measure = _load("_realfig_measure")
loro = _load("_realfig_loro")


def identity(confirm_at: float) -> CompareSettings:
    """Settings under which chart.same_data is the evidence as it is: (evidence + 1) / 2."""
    return CompareSettings(evidence=EvidenceSettings(calibration=((-1.0, 0.0), (1.0, 1.0)),
                                                     confirm_at=confirm_at))


def scored_pairs(pairs, rubric, lines_by_id) -> list:
    """Each labelled pair's evidence, match score and the judge's outcome per region."""
    out, tasks = [], []
    for pair in pairs:
        signals = dict(pair.signals)
        evidences: dict[float, float | None] = {c: None for c in loro.CONFIRM_LEVELS}
        if pair.readings is not None:
            comparison = compare_charts(*pair.readings)
            signals.update(comparison_signals(comparison))
            for confirm_at in loro.CONFIRM_LEVELS:
                raw = compare_charts(*pair.readings, settings=identity(confirm_at)
                                     ).signals["chart.same_data"]
                evidences[confirm_at] = None if raw is None else round(2.0 * float(raw) - 1.0,
                                                                       6)
        score = signals.get("chart.match_score")
        match = None if score is None or score.value is None else float(score.value)
        copy = signals.get("pixel.copy")
        item = loro.Scored(id=pair.id, label=pair.label, repo=pair.repo, dataset=pair.dataset,
                           figure=f"{pair.dataset}/{pair.figure}", evidences=evidences,
                           match_score=match, outcomes={},
                           copy_flag=bool(copy is not None and copy.value))
        out.append(item)
        line, folder = lines_by_id[pair.id]
        claim = measure.claim_input(folder, line)
        tasks.append((claim, signals))
    for item, outcomes in zip(out, loro.judge_regions(rubric, tasks)):
        item.outcomes = outcomes
    return out


def run_real(paths: list[Path], *, rubric_ref: str | None, jobs: int | None, out: Path | None,
             cache: Path | None = None, published_data: bool = False,
             lockbox: tuple[str, ...] = ()) -> int:
    """`lockbox`: repositories whose pairs are measured but kept out of every development
    figure (the leave-one-repository-out tables, the calibration, the list of wrong answers, the
    per-pair file): they get one line of their own, answered with the values chosen on all the
    other repositories."""
    from judging.rubrics import RubricLibrary

    library = RubricLibrary()
    rubric_ref = rubric_ref or \
        f"figure-match@{library.latest_entry('figure-match', include_drafts=True).version}"
    rubric = library.load(rubric_ref)
    start = time.perf_counter()
    pairs, lines_by_id = [], {}
    for path in paths:
        folder = path.resolve().parent
        for line in measure.read_pairs(path):
            lines_by_id[line["id"]] = (line, folder)
        pairs += measure.measure_pairs(path, jobs=jobs, cache=cache,
                                       published_data=published_data)
    measured_s = time.perf_counter() - start
    scored = scored_pairs(pairs, rubric, lines_by_id)
    by_id = {p.id: p for p in scored}
    locked = [p for p in pairs if p.repo in lockbox]
    pairs = [p for p in pairs if p.repo not in lockbox]
    errors = Counter(p.error for p in pairs if p.error)
    labelled = [by_id[p.id] for p in pairs if p.labelled]
    ambiguous = [by_id[p.id] for p in pairs if p.ambiguous]
    copies = [by_id[p.id] for p in pairs if p.label == "copy"]

    print(f"\nreal figures: {', '.join(str(p) for p in paths)}: {len(pairs)} pairs, "
          f"{len(labelled)} labelled (faithful/unfaithful), {len(ambiguous)} ambiguous "
          f"(out of the headline figures), {len(copies)} copies; "
          f"{len({p.repo for p in labelled})} source repositories; rubric {rubric_ref}"
          + (f"; {len(locked)} more pairs of the lockbox, reported on their own line"
             if locked else ""))
    for reason, count in errors.most_common(5):
        print(f"  not measured on {count} pairs: {reason}")
    # (`evidence` is set when a choice is applied, below: the evidences measured say it here.)
    not_compared = [p for p in labelled if all(v is None for v in p.evidences.values())]
    if not_compared:
        print(f"  charts not compared (unreadable) on {len(not_compared)} labelled pairs: "
              + ", ".join(p.id for p in not_compared))

    choices = loro.run_loro(labelled)
    for p in ambiguous + copies:
        repo_choice = choices.get(p.repo) or loro.choose(
            [q for q in labelled if q.repo != p.repo])
        loro.apply_choice(p, repo_choice)
    datasets = sorted({p.dataset for p in labelled})
    for dataset in datasets:
        loro.print_loro([p for p in labelled if p.dataset == dataset], choices,
                        title=f"LEAVE-ONE-REPOSITORY-OUT, {dataset}")
    if len(datasets) > 1:
        loro.print_loro(labelled, choices, title="LEAVE-ONE-REPOSITORY-OUT, all pairs files")
    loro.print_calibration(labelled)
    loro.print_wrong(labelled)
    if ambiguous:
        print("\nambiguous genuine pairs (not counted): " + ", ".join(
            f"{p.id} ({p.label}): {p.outcome}" for p in ambiguous))

    # chosen on all repositories: what the code and the rubric ship with
    everything = loro.choose(labelled)
    print(f"\nchosen on all repositories (ship these): trust levels pass at "
          f"{everything.pass_at:g}, fail at {everything.fail_at:g}; confirm_at "
          f"{everything.confirm_at:g}; calibration table "
          f"({len(everything.table)} knots):\n  CALIBRATION = (" + ", ".join(
              f"({e:.4f}, {q:.4f})" for e, q in everything.table) + ")")
    shipped = _shipped(rubric)
    if shipped is not None:
        same = shipped.table == everything.table and \
            (shipped.pass_at, shipped.fail_at, shipped.confirm_at) == \
            (everything.pass_at, everything.fail_at, everything.confirm_at)
        in_sample = loro.with_choice(labelled, shipped)
        # Levels that differ but fall between the same calibrated values answer alike.
        alike = [p.outcome for p in in_sample] == \
            [p.outcome for p in loro.with_choice(labelled, everything)]
        print(f"  shipped now: pass at {shipped.pass_at:g}, fail at {shipped.fail_at:g}, "
              f"{len(shipped.table)} knots: "
              + ("the same" if same else "NOT the values chosen on all repositories"
                 + ("; the same outcome on every labelled pair" if alike else
                    "; other outcomes on some pairs")))
        print(f"  in-sample with the shipped values (development figures, not to quote): "
              f"{loro.counts_line(in_sample)}")

    _print_lockbox(lockbox, [by_id[p.id] for p in locked], everything)

    print("\ncopies (pixel.copy):")
    flagged = [p for p in copies if p.copy_flag]
    print(f"  copies flagged: {len(flagged)}/{len(copies)}   target all: "
          f"{loro._met(len(flagged) == len(copies))}"
          + ("" if len(flagged) == len(copies) else
             "; missed: " + ", ".join(p.id for p in copies if not p.copy_flag)))
    false_flags = [p for p in labelled + ambiguous if p.copy_flag]
    print(f"  other pairs flagged as copies: {len(false_flags)}   target none: "
          f"{loro._met(not false_flags)}"
          + ("" if not false_flags else ": " + ", ".join(p.id for p in false_flags)))
    rerenders = [p for p in pairs if {"near_identical", "identical_rerender"} & set(p.flags)]
    if rerenders:
        print("  flagged (near-)identical, for a human (a copy or the same code run again): "
              + ", ".join(f"{p.id} ({p.label})" for p in rerenders))

    loro.summary_speed([p.measure_s for p in pairs + locked],
                       [p.decode_s for p in pairs + locked],
                       sum(p.cached for p in pairs + locked))
    loro.print_changes()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        with (out / "realfig-results.jsonl").open("w", encoding="utf-8") as handle:
            for p in pairs:
                s = by_id[p.id]
                handle.write(json.dumps({
                    "id": p.id, "dataset": p.dataset, "repo": p.repo, "label": p.label,
                    "ambiguous": p.ambiguous, "evidence": s.evidence,
                    "evidences": {str(k): v for k, v in s.evidences.items()},
                    "same_data_loro": s.probability, "outcome_loro": s.outcome,
                    "outcomes": s.outcomes, "match_score": s.match_score, "error": p.error,
                    "measure_s": round(p.measure_s, 3), "decode_s": round(p.decode_s, 4),
                    "flags": p.flags,
                    "signals": {k: v.value for k, v in p.signals.items()
                                if isinstance(v, Signal) and v.value is not None}}) + "\n")
        print(f"\nper-pair results: {out / 'realfig-results.jsonl'}")
    print(f"\nmeasured {len(pairs)} pairs in {measured_s:.0f} s, judged and left out in "
          f"{time.perf_counter() - start - measured_s:.0f} s")
    return 0


def _print_lockbox(lockbox: tuple[str, ...], locked: list, choice) -> None:
    """The lockbox's own line: only counts and shares, never a pair's id (nobody looks at them),
    answered with the choice made on all the development repositories."""
    if not lockbox:
        return
    print(f"\nLOCKBOX ({', '.join(lockbox)}; chosen before any of their pairs was opened, out "
          f"of every figure above):")
    labelled = [p for p in locked if p.label in ("faithful", "unfaithful")]
    if not labelled:
        print("  no lockbox pairs in these pairs files")
        return
    for p in locked:
        loro.apply_choice(p, choice)
    figures = loro.outcome_figures(labelled)

    def interval(key: str):
        return loro._ci(loro.bootstrap(labelled, lambda s: loro.outcome_figures(s)[key]))

    shares = "; ".join(
        f"{name} {loro._pct(figures[key])}{interval(key)}"
        for name, key in (("wrong fails", "wrong_fail"), ("wrong passes", "wrong_pass"),
                          ("faithful answered", "faithful_answered"),
                          ("unfaithful answered", "unfaithful_answered")))
    value = loro.auc(labelled)
    copies = [p for p in locked if p.label == "copy"]
    print(f"  {len(labelled)} labelled pairs ({loro.counts_line(labelled)})\n  {shares}\n"
          f"  {loro.MAIN_SIGNAL} AUC (absent = 0) {loro._num(value, '.3f')}"
          f"{loro._ci(loro.bootstrap(labelled, loro.auc), pct=False)}; copies flagged "
          f"{sum(p.copy_flag for p in copies)}/{len(copies)}; other pairs flagged as copies "
          f"{sum(p.copy_flag for p in labelled)}; not compared (unreadable) "
          f"{sum(p.evidence is None for p in labelled)}; targets: wrong fails <= 3%, answered "
          f">= 45%")


def _shipped(rubric):
    """The calibration table in the code and the trust levels of the rubric, when the rubric
    has them (figure-match 1.4.0 and later)."""
    levels = {}
    for criterion in rubric.criteria:
        rule = criterion.offline
        if rule is None:
            continue
        if rule.passes_only_when is not None and rule.passes_only_when.at_least is not None:
            levels["pass"] = rule.passes_only_when.at_least
        if rule.fails_only_when is not None and rule.fails_only_when.at_most is not None:
            levels["fail"] = rule.fails_only_when.at_most
    if set(levels) != {"pass", "fail"}:
        return None
    return loro.Choice(table=tuple(CALIBRATION), pass_at=levels["pass"], fail_at=levels["fail"],
                       confirm_at=EvidenceSettings().confirm_at)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path, nargs="+", help="pairs files, e.g. "
                        "../shared/datasets/realfig-dev/pairs.jsonl")
    parser.add_argument("--rubric", default=None,
                        help="figure rubric (default: the newest figure-match, drafts included)")
    parser.add_argument("--jobs", type=int, default=None, help="measuring processes (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="write realfig-results.jsonl here")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep each pair's readings here and reuse them while the reading "
                             "code is unchanged (timings are then those of the first run)")
    parser.add_argument("--published-data", action="store_true",
                        help="a pair's `data` is the registry's published_data: the published "
                             "side is compared from its data, not read from the image")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    lockbox = _load("chart_signals").LOCKBOX_REPOSITORIES
    raise SystemExit(run_real(args.pairs, rubric_ref=args.rubric, jobs=args.jobs, out=args.out,
                              cache=args.cache, published_data=args.published_data,
                              lockbox=lockbox))


if __name__ == "__main__":
    main()
