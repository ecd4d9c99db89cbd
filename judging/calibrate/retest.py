"""`judging calibrate --table FILE --retest A,B`: how far a judge agrees with itself, from a table of
two verdicts per item by the same judge on the same input (and, beside them, other verdicts of
the same items, e.g. an archive made by an earlier build of the model).

The table is any CSV/JSONL with one row per item: the two retest columns, optionally a cluster
column (the logbook: items of one logbook are judged in one call and are not independent, so the
intervals resample logbooks) and columns to set against the first verdict (`--against`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from judging.calibrate import metrics as agreement
from judging.calibrate.tables import read_table
from judging.errors import CalibrationError
from judging.hashing import file_sha256

#: The shape of a retest report's report.json (a report, never read back by the package).
RETEST_REPORT_SCHEMA = "judging.calibration-retest-report/1"


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
                  "twice about the same input, gives two different verdicts. Its complement "
                  f"({_pct(r.agreement)}) is a ceiling: the judge cannot agree with people more "
                  "often than with itself. Alpha corrects the agreement for what the label "
                  "frequencies give by chance (1 = perfect, 0 = chance)."]
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
    import json

    from judging.atomic import write_text_atomic
    from judging.rundir import CALIBRATION_REPORT_JSON, CALIBRATION_REPORT_MD

    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / CALIBRATION_REPORT_JSON, json.dumps(report.payload(), indent=2))
    write_text_atomic(folder / CALIBRATION_REPORT_MD, retest_markdown(report))
    return folder


__all__ = ["Against", "TableRetest", "retest_markdown", "retest_table", "write_retest_report"]
