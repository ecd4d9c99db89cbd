"""How far a judge agrees with itself: the same input judged twice.

`judging calibrate --table FILE --retest A,B`: from a table of two verdicts per item by the same
judge on the same input (and, beside them, other verdicts of the same items, e.g. an archive made
by an earlier build of the model). The table is any CSV/JSONL with one row per item: the two
retest columns, optionally a cluster column (the logbook: items of one logbook are judged in one
call and are not independent, so the intervals resample logbooks) and columns to set against the
first verdict (`--against`).

`judging calibrate RUN_DIR --retest N`: re-judges a random sample of N of the run's lines with
the same rubric, prompt, model and settings and the answer cache bypassed, and appends the new
lines to retests.jsonl, marked as retests of their originals (judgments.jsonl is not touched).
Per criterion: percent agreement, Krippendorff's alpha with a bootstrap interval, and the flips
by direction; `calibrate` then shows them beside the agreement with people and refuses trust
where the judge's agreement with itself does not allow it.
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

import judging.calibrate.metrics as agreement
from judging.calibrate.artifacts import RetestCriterion
from judging.calibrate.tables import read_table
from judging.errors import CalibrationError
from judging.hashing import file_sha256
from judging.judges import Judge, JudgeContext, JudgeResult, JudgeTask, LLMOptions, make_judge
from judging.models import AnswerStatus, Judgment, LineStatus, VersionedModel
from judging.rubrics import Criterion, Rubric, RubricLibrary, Scale, aggregate
from judging.rundir import RunStore, append_jsonl, identity, read_jsonl, utc_now

#: The shape of a retest report's report.json (a report, never read back by the package).
RETEST_REPORT_SCHEMA = "judging.calibration-retest-report/1"
RETEST_SCHEMA = "judging.retest/1"


@dataclass
class Against:
    """The first retest verdict against another column of verdicts of the same items."""

    column: str
    result: agreement.RetestAgreement
    ratio: float | None
    """Its disagreement divided by the retest disagreement (None when the retest has none)."""
    ratio_interval: tuple[float, float] | None
    """Of the ratio, from the same (cluster) bootstrap draws."""


@dataclass
class TableRetest:
    path: Path
    sha256: str
    items: int
    first: str
    second: str
    cluster: str | None
    labels: list[str]
    level: str
    n_resamples: int
    seed: int
    retest: agreement.RetestAgreement
    against: list[Against] = field(default_factory=list)

    def payload(self) -> dict:
        """Every figure, unrounded: report.json's content."""
        return {"schema": RETEST_REPORT_SCHEMA, "table": str(self.path), "sha256": self.sha256,
                "items": self.items, "first": self.first, "second": self.second,
                "cluster": self.cluster, "labels": self.labels, "level": self.level,
                "bootstrap": {"resamples": self.n_resamples, "seed": self.seed,
                              "unit": self.cluster or "item"},
                "retest": self.retest.as_dict(),
                "against": [{"column": a.column, **a.result.as_dict(), "ratio": a.ratio,
                             "ratio_interval": a.ratio_interval} for a in self.against]}


def _cell(row: dict[str, str], column: str) -> str | None:
    value = (row.get(column) or "").strip()
    return value or None


def retest_table(path: Path, *, first: str, second: str, cluster: str | None = None,
                 against: Sequence[str] = (), order: Sequence[str] | None = None,
                 ordinal: bool = False, n_resamples: int = 1000, seed: int = 0
                 ) -> TableRetest:
    """Test-retest agreement of columns `first` and `second` of a label table, and of `first`
    against each column of `against`; intervals resample `cluster` when given."""
    rows = read_table(path)
    if not rows:
        raise CalibrationError(f"{path}: the table is empty")
    columns = [first, second, *against, *([cluster] if cluster else [])]
    missing = [c for c in columns if c not in rows[0]]
    if missing:
        raise CalibrationError(f"{path}: no column {', '.join(missing)} (columns: "
                               f"{', '.join(rows[0])})")
    if first == second:
        raise CalibrationError("--retest takes two different columns: A,B")
    observed = sorted({v for row in rows for c in [first, second, *against]
                       if (v := _cell(row, c)) is not None})
    labels = list(order) if order else observed
    unknown = sorted(set(observed) - set(labels))
    if unknown:
        raise CalibrationError(f"{path}: values {unknown} are not in the given order {labels}")
    if len(labels) < 2:
        raise CalibrationError(f"{path}: only one verdict value ({labels}): agreement is "
                               f"undefined")
    if cluster is not None:
        nameless = sum(1 for row in rows if _cell(row, cluster) is None)
        if nameless:
            raise CalibrationError(f"{path}: {nameless} row(s) have no {cluster}: every item "
                                   f"needs its cluster")
    keys = [_cell(row, cluster) for row in rows] if cluster else None
    level = "ordinal" if ordinal else "nominal"
    a = [_cell(row, first) for row in rows]
    b = [_cell(row, second) for row in rows]
    options = {"labels": labels, "level": level, "n_resamples": n_resamples, "seed": seed}
    try:
        retest = agreement.retest_agreement(a, b, clusters=keys, **options)
        others = []
        for column in against:
            c = [_cell(row, column) for row in rows]
            result = agreement.retest_agreement(a, c, clusters=keys, **options)
            ratio, interval = _ratio(a, b, c, keys, n_resamples=n_resamples, seed=seed)
            others.append(Against(column=column, result=result, ratio=ratio,
                                  ratio_interval=interval))
    except ValueError as exc:
        raise CalibrationError(f"{path}: {exc}") from None
    return TableRetest(path=path, sha256=file_sha256(path) or "", items=len(rows), first=first,
                       second=second, cluster=cluster, labels=labels, level=level,
                       n_resamples=n_resamples, seed=seed, retest=retest, against=others)


def _ratio(a: list, b: list, c: list, keys: list | None, *, n_resamples: int, seed: int
           ) -> tuple[float | None, tuple[float, float] | None]:
    """Disagreement of a with c over disagreement of a with b, on the items with all three."""
    kept = [i for i in range(len(a)) if a[i] is not None and b[i] is not None
            and c[i] is not None]
    if not kept:
        return None, None
    retest = np.array([a[i] != b[i] for i in kept])
    other = np.array([a[i] != c[i] for i in kept])

    def ratio(idx: np.ndarray) -> float | None:
        base = retest[idx].mean()
        return None if base == 0 else float(other[idx].mean() / base)

    point = ratio(np.arange(len(kept)))
    if keys is not None:
        interval = agreement.cluster_bootstrap_interval([keys[i] for i in kept], ratio,
                                                        n_resamples=n_resamples, seed=seed)
    else:
        interval = agreement.bootstrap_interval(len(kept), ratio, n_resamples=n_resamples,
                                                seed=seed)
    return point, interval


# --- report ------------------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}%"


def _num(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _span(interval: tuple[float, float] | None, *, percent: bool = False) -> str:
    if interval is None:
        return "–"
    show = _pct if percent else _num
    return f"[{show(interval[0])}, {show(interval[1])}]"


def retest_markdown(report: TableRetest) -> str:
    r = report.retest
    unit = f"{report.cluster} (clusters: {r.clusters})" if report.cluster else "item"
    lines = [
        f"# Test-retest agreement: {report.first} vs {report.second}",
        "",
        f"- table: `{report.path}` (`{report.sha256[:19]}...`), {report.items} rows, "
        f"{r.n} with both verdicts ({r.missing} left out: a verdict missing)",
        f"- labels: {', '.join(report.labels)} ({report.level})",
        f"- intervals: 95% percentile bootstrap, {report.n_resamples} resamples of {unit}, seed "
        f"{report.seed}",
        "",
        "| pair | n | disagree | disagreement | 95% interval | Krippendorff's alpha | 95% "
        "interval |",
        "|---|---|---|---|---|---|---|",
        f"| {report.first} vs {report.second} (retest) | {r.n} | {r.disagreements} | "
        f"{_pct(r.disagreement)} | {_span(r.disagreement_interval, percent=True)} | "
        f"{_num(r.alpha)} | {_span(r.alpha_interval)} |",
    ]
    for other in report.against:
        o = other.result
        lines.append(f"| {report.first} vs {other.column} | {o.n} | {o.disagreements} | "
                     f"{_pct(o.disagreement)} | {_span(o.disagreement_interval, percent=True)} | "
                     f"{_num(o.alpha)} | {_span(o.alpha_interval)} |")
    lines += ["", "How to read it: the retest disagreement is how often the same judge, asked "
                  "twice about the same input, gives two different verdicts. It bounds how "
                  f"often the judge can agree with anyone: at most (1 + {_pct(r.agreement)}) / 2 "
                  f"= {_pct(r.ceiling)} of the time "
                  f"({_span(r.ceiling_interval, percent=True)}), whoever is right. Alpha "
                  "corrects the agreement for what the label frequencies give by chance (1 = "
                  "perfect, 0 = chance)."]
    for other in report.against:
        lines += ["", f"{report.first} vs {other.column} disagrees {_num(other.ratio, 3)} times "
                      f"as often as the retest (95% interval {_span(other.ratio_interval)}). A "
                      f"ratio well above 1 means the other verdicts were not made under the "
                      f"same conditions (another model build, provider or prompt), not that the "
                      f"judge got worse."]
    lines += ["", "## Flips by direction", "", f"| {report.first} -> {report.second} | count |",
              "|---|---|"]
    lines += [f"| {flip} | {n} |" for flip, n in r.flips.items()]
    if report.cluster:
        stable = (r.clusters or 0) - len(r.cluster_disagreements)
        lines += ["", f"## Which {report.cluster} carry the disagreements", "",
                  f"{stable} of {r.clusters} are fully stable; these {len(r.cluster_disagreements)}"
                  f" hold all {r.disagreements} disagreements:", "",
                  f"| {report.cluster} | items | disagreements |", "|---|---|---|"]
        lines += [f"| {key} | {items} | {n} |"
                  for key, (items, n) in r.cluster_disagreements.items()]
    return "\n".join(lines) + "\n"


def write_retest_report(report: TableRetest, folder: Path) -> Path:
    from judging.calibrate.report import write_report

    return write_report(folder, report.payload(), retest_markdown(report))




# --- a run's lines, re-judged ------------------------------------------------------------------


class Retest(VersionedModel):
    """One line of retests.jsonl: an original judgment line judged again, beside it."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.retest/1"] = Field(default=RETEST_SCHEMA, alias="schema")
    round: str
    """The `calibrate --retest` invocation that made it (its UTC time)."""
    original_input_hash: str
    """The original line's input hash: a retest pairs only with that very line."""
    original_request_hash: str | None = None
    same_request: bool
    """The retest sent the very request of the original (same messages, model and settings):
    only then does a changed answer measure the judge rather than a changed prompt."""
    line: Judgment
    """The new line (the original's identity, the new answers and provenance)."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.retest/1 is the first version.
        return data


@dataclass
class RetestRound:
    """What `retest_run` did."""

    round: str
    drawn: int
    """Lines drawn at random."""
    eligible: int
    """Lines that could be drawn (scored originals of a single judge)."""
    written: int
    different_request: int
    """Retests whose request differed from the original's (the prompt or settings changed
    since): recorded, never paired."""
    failed: int
    """Retests the judge could not answer (the endpoint failed): recorded, never paired."""


def _answer_values(criterion: Criterion) -> tuple[list, Literal["nominal", "ordinal"]]:
    if criterion.scale is Scale.categorical:
        return list(criterion.categories or []), "nominal"
    if criterion.scale is Scale.ordinal:
        return sorted(criterion.levels or {}), "ordinal"
    return [True, False], "nominal"


def retest_criterion(criterion: Criterion, pairs: Sequence[tuple[str, object, object]], *,
                     n_resamples: int = 1000, seed: int = 0) -> RetestCriterion | None:
    """The judge against itself on one criterion: `pairs` of (claim key, original answer, retest
    answer), both scored; the bootstrap resamples claims (a claim's samples and orders go
    together). None without a pair."""
    if not pairs:
        return None
    labels, level = _answer_values(criterion)
    found = agreement.retest_agreement(
        [a for _, a, _ in pairs], [b for _, _, b in pairs], labels=labels, level=level,
        clusters=[claim for claim, _, _ in pairs], n_resamples=n_resamples, seed=seed)
    interval = found.disagreement_interval
    return RetestCriterion(
        n=found.n, disagreements=found.disagreements, agreement=found.agreement,
        agreement_interval=(1 - interval[1], 1 - interval[0]) if interval else None,
        ceiling=found.ceiling, ceiling_interval=found.ceiling_interval,
        alpha=found.alpha, alpha_interval=found.alpha_interval,
        flips={_shown(flip): n for flip, n in found.flips.items()})


def _shown(flip: str) -> str:
    return flip.replace("True", "yes").replace("False", "no")


def read_retests(store: RunStore) -> list[Retest]:
    path = store.paths.retests
    return read_jsonl(path, Retest) if path.is_file() else []


def retest_pairs(store: RunStore, rubric: Rubric, judge: str,
                 retests: Sequence[Retest] | None = None
                 ) -> dict[str, list[tuple[str, object, object]]]:
    """Per criterion of `rubric`: (claim key, original answer, retest answer) of `judge`'s lines
    whose newest retest sent the original's very request and both answers are scored."""
    newest: dict[tuple, Retest] = {}
    for retest in retests if retests is not None else read_retests(store):
        line = retest.line
        if line.judge != judge or line.rubric is None or not rubric.judged_with(line.rubric):
            continue
        newest[identity(line)] = retest  # file order: the newest last
    pairs: dict[str, list[tuple[str, object, object]]] = defaultdict(list)
    for ident, retest in sorted(newest.items(), key=lambda kv: str(kv[0])):
        original = store.latest_line(ident)
        if original is None or original.input_hash != retest.original_input_hash or \
                not retest.same_request:
            continue
        for criterion in rubric.criteria:
            a, b = original.answer(criterion.id), retest.line.answer(criterion.id)
            if a is not None and b is not None and a.status is AnswerStatus.scored and \
                    b.status is AnswerStatus.scored and a.value is not None and \
                    b.value is not None:
                pairs[criterion.id].append((str(original.claim), a.value, b.value))
    return pairs


def _eligible(line: Judgment) -> bool:
    # A panel line aggregates member lines (retest the members); an error line has no answer.
    return line.rubric is not None and line.status is not LineStatus.error and \
        not line.judge.startswith("panel(") and any(
            a.status is AnswerStatus.scored for a in line.answers)


def _llm_options(line: Judgment, base: LLMOptions) -> LLMOptions:
    """The original line's answer settings, the answer cache bypassed; the endpoint: the one
    given, else the one the line recorded."""
    settings = line.provenance.settings
    kept = {name: settings[name] for name in ("temperature", "max_tokens", "seed", "images",
                                               "image_detail", "response_format", "timeout",
                                               "max_retries", "evidence_budget")
            if name in settings}
    endpoint = settings.get("endpoint")
    return replace(base, **kept, use_cache=False,
                   base_url=base.base_url or (str(endpoint) if endpoint else None))


def _retest_line(original: Judgment, result: JudgeResult, rubric: Rubric) -> Judgment:
    answers = result.answers
    scored = any(a.status is AnswerStatus.scored for a in answers)
    # What the endpoint served travels in settings_used (models.SERVED_SETTINGS).
    provenance = original.provenance.model_copy(update={
        **result.call_record(), "timestamp": utc_now(),
        "settings": {**original.provenance.settings, **result.settings_used}})
    return original.model_copy(update={
        "answers": answers, "aggregate": aggregate(rubric, answers) if answers else None,
        "status": LineStatus.scored if scored else LineStatus.unscored,
        "reason": result.error, "final": result.final, "provenance": provenance})


def retest_run(run_dir: Path, n: int, *, llm: LLMOptions | None = None, seed: int | None = None,
               judges: Sequence[str] | None = None, concurrency: int = 8,
               rubrics_dir: Path | None = None) -> RetestRound:
    """Re-judge a random sample of `n` of the run's lines (the newest of each identity, scored,
    of a single judge; `judges` narrows them) with the same rubric, prompt, model and settings,
    the answer cache bypassed; append the new lines to retests.jsonl."""
    if n < 1:
        raise CalibrationError("--retest N needs N >= 1 lines to re-judge")
    store = RunStore.open(run_dir, create=False)
    try:
        lines = [line for line in store.iter_latest() if _eligible(line)
                 and (not judges or line.judge in judges)]
        if not lines:
            raise CalibrationError(f"{run_dir}: no scored line of a single judge to retest")
        rng = random.Random(seed)
        drawn = rng.sample(lines, min(n, len(lines)))
        library = RubricLibrary(rubrics_dir)
        rubrics = {str(line.rubric): library.judged(line.rubric)  # type: ignore[arg-type]
                   for line in drawn}
        tasks = []
        for line in drawn:
            claim = store.claim(str(line.claim))
            if claim is None:
                raise CalibrationError(f"{run_dir}: claims.jsonl has no {line.claim}: the run "
                                       f"directory is incomplete")
            images = {name: store.root / path for name, path in
                      line.artifacts.model_dump().items() if path}
            tasks.append(JudgeTask(claim=claim, rubric=rubrics[str(line.rubric)],
                                   signals=dict(line.signals), images=images,
                                   sample=line.sample, swapped=line.swapped))
        results = asyncio.run(_judge_all(drawn, tasks, llm or LLMOptions(), concurrency))
        round_id = utc_now().strftime("%Y%m%dT%H%M%S.%fZ")
        written = []
        for line, result in zip(drawn, results):
            new = _retest_line(line, result, rubrics[str(line.rubric)])
            written.append(Retest(
                round=round_id, original_input_hash=line.input_hash,
                original_request_hash=line.provenance.request_hash,
                same_request=result.request_hash == line.provenance.request_hash, line=new))
        append_jsonl(store.paths.retests, written)
    finally:
        store.close()
    return RetestRound(round=round_id, drawn=len(drawn), eligible=len(lines),
                       written=len(written),
                       different_request=sum(1 for r in written if not r.same_request),
                       failed=sum(1 for r in written if r.line.reason and not r.line.final))


async def _judge_all(lines: Sequence[Judgment], tasks: Sequence[JudgeTask], llm: LLMOptions,
                     concurrency: int) -> list[JudgeResult]:
    limiter = asyncio.Semaphore(max(1, concurrency))
    made: dict[tuple, tuple[Judge, JudgeContext]] = {}
    try:
        for line in lines:
            options = _llm_options(line, llm)
            key = (line.judge, repr(options))
            if key not in made:
                context = JudgeContext(options, limiter=limiter)
                made[key] = make_judge(line.judge, context), context

        async def one(line: Judgment, task: JudgeTask) -> JudgeResult:
            return await made[(line.judge, repr(_llm_options(line, llm)))][0](task)

        return list(await asyncio.gather(*(one(line, task) for line, task in zip(lines, tasks))))
    finally:
        for judge, context in made.values():
            await judge.close()
            await context.close()



def retest_summary(run_dir: Path, *, n_resamples: int = 1000, seed: int = 0,
                   rubrics_dir: Path | None = None
                   ) -> dict[tuple[str, str], dict[str, RetestCriterion]]:
    """Per (rubric version, judge) with retests, per criterion with pairs: the judge against
    itself (`retest_criterion` over `retest_pairs`)."""
    store = RunStore.open(run_dir, create=False)
    try:
        retests = read_retests(store)
        library = RubricLibrary(rubrics_dir)
        groups = sorted({(str(r.line.rubric), r.line.judge) for r in retests
                         if r.line.rubric is not None})
        summary: dict[tuple[str, str], dict[str, RetestCriterion]] = {}
        for ref_name, judge in groups:
            ref = next(r.line.rubric for r in retests if str(r.line.rubric) == ref_name)
            rubric = library.judged(ref)  # type: ignore[arg-type]
            pairs = retest_pairs(store, rubric, judge, retests)
            rows = {}
            for criterion in rubric.criteria:
                found = retest_criterion(criterion, pairs.get(criterion.id, []),
                                         n_resamples=n_resamples, seed=seed)
                if found is not None:
                    rows[criterion.id] = found
            summary[(ref_name, judge)] = rows
        return summary
    finally:
        store.close()


def write_retest_summary(summary: dict[tuple[str, str], dict[str, RetestCriterion]],
                         out: Path) -> Path:
    """retest.json and retest.md beside each (rubric version, judge)'s calibration report; the
    reports folder."""
    import json

    from judging.atomic import write_text_atomic
    from judging.hashing import slug
    from judging.rundir import CALIBRATION_RETEST_JSON, CALIBRATION_RETEST_MD, CalibrationPaths

    paths = CalibrationPaths(out)
    for (ref_name, judge), rows in summary.items():
        rubric_id, _, version = ref_name.partition("@")
        folder = paths.report_dir(rubric_id, version, slug(judge))
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / CALIBRATION_RETEST_JSON, json.dumps(
            {"schema": "judging.retest-report/1", "rubric": ref_name, "judge": judge,
             "criteria": {c: r.model_dump(mode="json") for c, r in rows.items()}}, indent=2))
        lines = [f"# {judge} on {ref_name} against itself", "",
                 "Lines re-judged with the same rubric, prompt, model and settings, the answer "
                 "cache bypassed (retests.jsonl). The ceiling is the most often the judge can "
                 "agree with people: (1 + its agreement with itself) / 2.", "",
                 "| criterion | pairs | changed | agreement [95%] | ceiling [95%] | alpha [95%] "
                 "| flips |", "|---|---|---|---|---|---|---|"]
        for criterion, r in rows.items():
            few = agreement.too_few(r.n)
            lines.append(f"| {criterion} | {r.n} | {r.disagreements} | "
                         f"{few or f'{_num(r.agreement)} {_span(r.agreement_interval)}'} | "
                         f"{few or f'{_num(r.ceiling)} {_span(r.ceiling_interval)}'} | "
                         f"{few or f'{_num(r.alpha)} {_span(r.alpha_interval)}'} | "
                         + (", ".join(f"{k}: {n}" for k, n in r.flips.items()) or "none") + " |")
        write_text_atomic(folder / CALIBRATION_RETEST_MD, "\n".join(lines) + "\n")
    return paths.root / "reports"


__all__ = ["Against", "Retest", "RetestRound", "TableRetest", "read_retests", "retest_criterion",
           "retest_markdown", "retest_pairs", "retest_run", "retest_summary", "retest_table",
           "write_retest_report", "write_retest_summary"]
