"""`judging calibrate --table FILE`: agreement of a judge column with human columns of any label
table (gold = the humans' majority)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import judging.calibrate.metrics as agreement
from judging.errors import CalibrationError
from judging.hashing import file_sha256


@dataclass
class TableReport:
    """Agreement on a table of per-item labels (one column per human, one per judge)."""

    path: Path
    items: int
    gold_items: int
    ties: int
    labels: list[str]
    judges: dict[str, agreement.ClassificationMetrics]
    """Each judge column against the human majority (macro over all classes)."""
    human_kappa: dict[str, float | None]
    """Cohen's kappa for each pair of human columns ("a~b")."""
    judge_human_kappa: dict[str, float | None]
    """Mean kappa of each judge column with each human column."""
    alpha: float | None
    between_judges: dict[str, float | None] | None = None
    """With --compare: the two judges' agreement (accuracy and kappa) on the same items."""
    judge_column: str = ""
    """The judge column (the first of `judges`); names the report folder."""
    human_columns: list[str] = field(default_factory=list)
    ordinal: bool = False
    sha256: str = ""
    """Of the table file: which labels the report is about."""
    intervals: dict[str, agreement.AgreementIntervals] = field(default_factory=dict)
    """Each judge column's accuracy and kappa intervals against the human majority."""


def read_table(path: Path) -> list[dict[str, str]]:
    import csv
    import json

    if not path.is_file():
        raise CalibrationError(f"{path}: no such table")
    if path.suffix == ".jsonl":
        rows = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    rows.append({k: "" if v is None else str(v)
                                 for k, v in json.loads(line).items()})
                except (ValueError, AttributeError) as exc:
                    raise CalibrationError(f"{path}:{number}: not a JSON object") from exc
        return rows
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def calibrate_table(path: Path, *, judge_column: str, human_columns: Sequence[str],
                    compare: str | None = None, ordinal: bool = False,
                    order: Sequence[str] | None = None) -> TableReport:
    """Judge-vs-gold and human-vs-human agreement on a label table (gold = human majority)."""
    rows = read_table(path)
    if not rows:
        raise CalibrationError(f"{path}: the table is empty")
    judges = [judge_column] + ([compare] if compare else [])
    missing = [c for c in [*judges, *human_columns] if c not in rows[0]]
    if missing:
        raise CalibrationError(f"{path}: no column {', '.join(missing)} (columns: "
                               f"{', '.join(rows[0])})")
    if len(human_columns) < 1:
        raise CalibrationError("give at least one human column")

    def cell(row: dict[str, str], column: str) -> str | None:
        value = (row.get(column) or "").strip()
        return value or None

    observed = sorted({v for row in rows for c in [*judges, *human_columns]
                       if (v := cell(row, c)) is not None})
    labels = list(order) if order else observed
    unknown = sorted(set(observed) - set(labels))
    if unknown:
        raise CalibrationError(f"{path}: values {unknown} are not in the given order {labels}")
    gold_rows, ties = [], 0
    for row in rows:
        gold = agreement.majority([v for c in human_columns if (v := cell(row, c)) is not None])
        if gold is None:
            ties += 1
        else:
            gold_rows.append((row, gold))
    results, intervals = {}, {}
    weights = "quadratic" if ordinal else None
    for column in judges:
        pairs = [(gold, cell(row, column)) for row, gold in gold_rows if cell(row, column)]
        results[column] = agreement.classification_metrics(
            [g for g, _ in pairs], [p for _, p in pairs], labels=labels, ordinal=ordinal)
        intervals[column] = agreement.agreement_intervals(
            [g for g, _ in pairs], [p for _, p in pairs], labels=labels, weights=weights)
    humans = [[cell(row, c) for row in rows] for c in human_columns]
    pairwise = agreement.pairwise_kappa(humans, labels=labels, weights=weights)
    human_kappa = {f"{human_columns[i]}~{human_columns[j]}": k for (i, j), k in pairwise.items()}
    judge_human = {}
    for column in judges:
        judged = [cell(row, column) for row in rows]
        kappas = [agreement.pairwise_kappa([judged, h], labels=labels, weights=weights)[(0, 1)]
                  for h in humans]
        defined = [k for k in kappas if k is not None]
        judge_human[column] = sum(defined) / len(defined) if defined else None
    alpha = agreement.krippendorff_alpha(humans, level="ordinal" if ordinal else "nominal",
                                         values=labels) if len(humans) > 1 else None
    between = None
    if compare:
        a = [cell(row, judge_column) for row in rows]
        b = [cell(row, compare) for row in rows]
        both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
        metrics = agreement.classification_metrics([x for x, _ in both], [y for _, y in both],
                                                   labels=labels, ordinal=ordinal)
        between = {"accuracy": metrics.accuracy,
                   "kappa": metrics.weighted_kappa if ordinal else metrics.kappa}
    return TableReport(path=path, items=len(rows), gold_items=len(gold_rows), ties=ties,
                       labels=labels, judges=results, human_kappa=human_kappa,
                       judge_human_kappa=judge_human, alpha=alpha, between_judges=between,
                       judge_column=judge_column, human_columns=list(human_columns),
                       ordinal=ordinal, sha256=file_sha256(path) or "", intervals=intervals)
