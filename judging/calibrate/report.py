"""Calibration reports: Markdown, JSON and PNG plots for one (rubric version, judge)."""

from __future__ import annotations

import json
from pathlib import Path

from judging.atomic import write_text_atomic
from judging.calibrate.artifacts import CalibrationArtifact, CriterionCalibration
from judging.calibrate.metrics import too_few
from judging.calibrate.tables import TableReport
from judging.rubrics import Rubric
from judging.rundir import (
    CALIBRATION_PLOTS,
    CALIBRATION_REPORT_JSON,
    CALIBRATION_REPORT_MD,
)

PLOTS = CALIBRATION_PLOTS


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _interval(c: CriterionCalibration) -> str:
    if c.support and (few := too_few(c.support)):
        return few
    return "–" if c.f1_interval is None else f"[{c.f1_interval[0]:.3f}, {c.f1_interval[1]:.3f}]"


def _with(value: float | None, interval: tuple[float, float] | None, digits: int = 3) -> str:
    if value is None:
        return "–"
    shown = f"{value:.{digits}f}"
    return shown if interval is None else \
        f"{shown} [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def _baseline_row(c: CriterionCalibration) -> str:
    b = c.baseline
    assert b is not None
    return (f"| ↳ chance: answers at the base rate | | | | {_fmt(b.f1)} | | "
            f"{_fmt(b.true_positive_rate)} | {_fmt(b.true_negative_rate)} | {_fmt(b.accuracy)} | "
            f"{_fmt(b.kappa)} | | | | | | | |")


def _table(columns: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table's lines: the header, the separator, a line per row."""
    return ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|",
            *("| " + " | ".join(row) + " |" for row in rows)]


def _table_section(title: str, text: str, columns: list[str], rows: list[list[str]]
                   ) -> list[str]:
    """A report section of its own: the heading, what the table says, the table."""
    return ["", f"## {title}", "", text, "", *_table(columns, rows)]


def _corrected_lines(artifact: CalibrationArtifact) -> list[str]:
    rows = []
    for c in artifact.criteria:
        if (r := c.corrected) is not None:
            corrected = _with(r.corrected, r.interval) + (" (clipped)" if r.clipped else "")
            rows.append([c.criterion, str(r.n), str(r.passed), _fmt(r.observed),
                         _fmt(r.sensitivity), _fmt(r.specificity), corrected])
    if not rows:
        return []
    return _table_section(
        "Pass rates corrected for the judge's errors",
        "The judge's pass rate on the run's claims, and the rate corrected for the sensitivity "
        "(true-positive rate) and specificity (true-negative rate) it showed against the labels "
        "(Rogan–Gladen). The interval carries the uncertainty of the observed rate and of both "
        "calibration rates: with few labels it is wide, as it should be.",
        ["criterion", "judged", "passed", "observed", "sensitivity", "specificity",
         "corrected [95%]"], rows)


def _retest_lines(artifact: CalibrationArtifact) -> list[str]:
    rows = [c for c in artifact.criteria if c.retest is not None]
    if not rows:
        return ["", "## The judge against itself", "",
                "No retest in this run: `judging calibrate RUN_DIR --retest N` re-judges N lines "
                "with the answer cache bypassed and fills the retest columns. Without it, a "
                "figure above cannot be read against the judge's own noise."]
    cells = []
    for c in rows:
        r = c.retest
        assert r is not None
        cells.append([c.criterion, str(r.n), str(r.disagreements),
                      _with(r.agreement, r.agreement_interval),
                      _with(r.ceiling, r.ceiling_interval), _with(r.alpha, r.alpha_interval),
                      ", ".join(f"{k}: {n}" for k, n in r.flips.items()) or "none"])
    return _table_section(
        "The judge against itself (retest)",
        "Lines re-judged with the same rubric, prompt, model and settings, the answer cache "
        "bypassed. It bounds the agreement with people: at most (1 + retest agreement) / 2, the "
        "ceiling.",
        ["criterion", "pairs", "changed", "agreement [95%]", "ceiling [95%]", "alpha [95%]",
         "flips"], cells)


def markdown(artifact: CalibrationArtifact, rubric: Rubric) -> str:
    o = artifact.options
    labels = artifact.labels
    kind = {"construction": "construction labels (derived from how the examples were built; "
                            "not human labels)",
            "human": "human labels", "mixed": "human and construction labels"}[labels.source]
    # Construction labels are not people: say "labels", never "humans", for them.
    who, one = ("humans", "human") if labels.source == "human" else ("labels", "label")
    lines = [
        f"# Calibration: {artifact.judge} on {artifact.rubric}",
        "",
        f"- judge: `{artifact.judge}` (model {artifact.model or 'none'})",
        f"- rubric: `{artifact.rubric}` hash `{artifact.rubric.hash}`",
        f"- prompt template: `{artifact.template_hash}`",
        f"- labels: {labels.used} of {labels.labels} {kind} from `{labels.path}` "
        f"(`{labels.sha256[:19]}...`), {labels.annotators} annotator(s)",
        "- label set: " + ("blind labels only" if labels.blind_only else
                           "blind AND anchored labels (reviewers who saw the AI answers are "
                           "included: agreement is likely overstated)"),
        f"- run: {artifact.run_id}; created {artifact.created_at:%Y-%m-%d %H:%M UTC}",
        f"- trust rule: support >= {o.min_support}, coverage >= {o.min_coverage:g}, lower bound "
        f"of the 95% bootstrap interval of the pass-class F1 >= {o.floor:g} "
        f"({o.bootstrap} resamples of claims, seed {o.seed}) and lower bounds (Wilson 95%) of "
        f"the true-positive rate >= {o.tpr_floor:g} and of the true-negative rate >= "
        f"{o.tnr_floor:g}; a categorical criterion: the accuracy's lower bound >= {o.floor:g}; "
        f"where retested, agreement with {who} within the retest ceiling, the ceiling's lower "
        f"bound >= {o.floor:g} and the retest alpha at or above the rubric's limit",
        "- served: " + (", ".join(f"`{s}`" for s in artifact.served) or
                        "the endpoint named no model or fingerprint"),
        "",
        "This calibration holds only for this judge, this rubric hash, this prompt template and "
        "what the endpoint served: a change of any of them makes it stale.",
        "",
        "| criterion | decision | support | coverage | F1 (pass) | 95% interval | TPR [95%] | "
        f"TNR [95%] | accuracy | kappa | retest agreement | retest α | {who}' alpha | "
        f"judge–{one} κ | {one}–{one} κ | confidence threshold | work saved |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in [*artifact.criteria, *([artifact.pooled] if artifact.pooled else [])]:
        humans, retest = c.humans, c.retest
        ceiling = (too_few(retest.n) or _with(retest.agreement, retest.agreement_interval)) \
            if retest else "–"
        lines.append(
            f"| {c.criterion} | {'**trusted**' if c.decision == 'trusted' else 'needs humans'} "
            f"| {c.support} | {_fmt(c.coverage, 2)} | {_fmt(c.f1)} | {_interval(c)} | "
            f"{_with(c.true_positive_rate, c.tpr_interval)} | "
            f"{_with(c.true_negative_rate, c.tnr_interval)} | "
            f"{_with(c.accuracy, c.accuracy_interval)} | {_fmt(c.kappa)} | "
            f"{ceiling} | {_fmt(retest.alpha if retest else None)} | "
            f"{_fmt(humans.alpha if humans else None)} | "
            f"{_fmt(humans.judge_kappa if humans else None)} | "
            f"{_fmt(humans.human_kappa if humans else None)} | "
            f"{_fmt(c.confidence_threshold, 2)} | "
            f"{(c.support and too_few(c.support)) or _fmt(c.work_saved, 2)} |")
        if c.baseline is not None:
            lines.append(_baseline_row(c))
    lines += ["", "How to read it: F1, TPR (true passes the judge passes) and TNR (true fails "
                  "it fails) are against the gold labels; each criterion's ↳ chance row is what a "
                  "judge answering at random at the gold base rate would score, so a figure near "
                  "it means nothing. The retest agreement is the judge against itself: its "
                  f"agreement with {who} cannot exceed (1 + retest agreement) / 2."]
    lines += _retest_lines(artifact)
    lines += _corrected_lines(artifact)
    lines += ["", "## Why criteria need humans", ""]
    for c in artifact.criteria:
        if c.reasons:
            lines.append(f"- **{c.criterion}**: {'; '.join(c.reasons)}")
    lines += ["", "## Criteria", ""]
    for c in artifact.criteria:
        question = rubric.criterion(c.criterion).question.strip()
        lines += [f"### {c.criterion} ({c.scale.value})", "", question, ""]
        if c.confusion:
            lines += _table(["gold \\ judge", *c.confusion_labels],
                            [[label, *map(str, row)]
                             for label, row in zip(c.confusion_labels, c.confusion)])
            lines.append("")
        if c.humans and c.humans.ties:
            lines.append(f"{c.humans.ties} claim(s) left out: the people split evenly.")
            lines.append("")
    lines += ["## Plots", "", f"![F1 per criterion]({PLOTS['f1']})", "",
              f"![Confusion matrices]({PLOTS['confusion']})", "",
              f"![Reliability]({PLOTS['reliability']})", ""]
    return "\n".join(lines)


def _plots(artifact: CalibrationArtifact, folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    criteria = artifact.criteria
    names = [c.criterion for c in criteria]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(names)), 4), dpi=100)
    values = [c.f1 if c.f1 is not None else 0.0 for c in criteria]
    low = [c.f1 - c.f1_interval[0] if c.f1 is not None and c.f1_interval else 0 for c in criteria]
    high = [c.f1_interval[1] - c.f1 if c.f1 is not None and c.f1_interval else 0 for c in criteria]
    colours = ["#2a9d8f" if c.decision == "trusted" else "#e76f51" for c in criteria]
    ax.bar(range(len(names)), values, color=colours, yerr=[low, high], capsize=4)
    ax.axhline(artifact.options.floor, color="black", linestyle="--", linewidth=1,
               label=f"floor {artifact.options.floor:g}")
    ax.set_xticks(range(len(names)), names, rotation=35, ha="right")
    _save_rates(fig, ax, folder / PLOTS["f1"], ylabel="F1 (pass) with 95% interval",
                title=f"{artifact.judge} on {artifact.rubric}")

    with_matrix = [c for c in criteria if c.confusion]
    cols = max(1, min(4, len(with_matrix)))
    rows = max(1, -(-len(with_matrix) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3 * rows), dpi=100, squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, c in zip(axes.flat, with_matrix):
        ax.axis("on")
        ax.imshow(c.confusion, cmap="Blues")
        for i, row in enumerate(c.confusion):
            for j, n in enumerate(row):
                ax.text(j, i, str(n), ha="center", va="center", fontsize=9)
        ax.set_xticks(range(len(c.confusion_labels)), c.confusion_labels)
        ax.set_yticks(range(len(c.confusion_labels)), c.confusion_labels)
        ax.set_xlabel("judge")
        ax.set_ylabel("humans")
        ax.set_title(c.criterion, fontsize=9)
    fig.tight_layout()
    fig.savefig(folder / PLOTS["confusion"], metadata={"Software": None})
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(5, 5), dpi=100)
    ax.plot([0, 1], [0, 1], color="gray", linestyle=":", label="perfect calibration")
    for c in criteria:
        points = [(b.mean_confidence, b.accuracy) for b in c.reliability
                  if b.n and b.mean_confidence is not None and b.accuracy is not None]
        if points:
            ax.plot(*zip(*points), marker="o", label=c.criterion)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("judge confidence")
    ax.set_ylabel("agreement with humans (pass/fail)")
    ax.set_title("Reliability")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(folder / PLOTS["reliability"], metadata={"Software": None})
    plt.close(fig)


def write_report(folder: Path, payload: object, text: str) -> Path:
    """A calibration report's two files: report.json (every printed figure) and report.md."""
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / CALIBRATION_REPORT_JSON, json.dumps(payload, indent=2))
    write_text_atomic(folder / CALIBRATION_REPORT_MD, text)
    return folder


def write_calibration_report(artifact: CalibrationArtifact, folder: Path, *, rubric: Rubric) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _plots(artifact, folder)
    payload = json.loads(artifact.model_dump_json(by_alias=True))
    payload["plots"] = PLOTS
    return write_report(folder, payload, markdown(artifact, rubric))


# --- `judging calibrate --table` -------------------------------------------------------------

#: The shape of a table report's report.json (a report, never read back by the package).
TABLE_REPORT_SCHEMA = "judging.calibration-table-report/1"


def table_payload(report: TableReport) -> dict:
    """Every figure `calibrate --table` prints, unrounded: report.json's content."""
    return {
        "schema": TABLE_REPORT_SCHEMA,
        "table": str(report.path),
        "sha256": report.sha256,
        "items": report.items,
        "gold_items": report.gold_items,
        "ties": report.ties,
        "labels": report.labels,
        "judge_column": report.judge_column,
        "human_columns": report.human_columns,
        "ordinal": report.ordinal,
        "judges": {column: m.as_dict() for column, m in report.judges.items()},
        "intervals": {column: i.as_dict() for column, i in report.intervals.items()},
        "human_kappa": report.human_kappa,
        "judge_human_kappa": report.judge_human_kappa,
        "alpha": report.alpha,
        "between_judges": report.between_judges,
        "plots": TABLE_PLOTS,
    }


#: No confidence column in a label table: no reliability plot.
TABLE_PLOTS = {key: PLOTS[key] for key in ("f1", "confusion")}


def table_markdown(report: TableReport) -> str:
    """The --table report; accuracy and kappa with their 95% intervals (Wilson, bootstrap)."""
    kappa = "quadratic-weighted kappa" if report.ordinal else "kappa"
    lines = [
        f"# Calibration on a label table: {report.judge_column}",
        "",
        f"- table: `{report.path}` (`{report.sha256[:19]}...`), {report.items} items",
        f"- gold: the majority of the human columns {', '.join(report.human_columns)}, on "
        f"{report.gold_items} items ({report.ties} ties left out)",
        f"- labels: {', '.join(map(str, report.labels))}"
        + (" (ordered)" if report.ordinal else ""),
        "",
        f"| judge | n | accuracy [95%] | macro P | macro R | macro F1 | {kappa} [95%] | mean κ "
        f"with each human |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for column, m in report.judges.items():
        k = m.weighted_kappa if report.ordinal else m.kappa
        shown = report.intervals[column]
        lines.append(f"| {column} | {m.n} | {shown.show(m.accuracy, 'accuracy', 4)} | "
                     f"{_fmt(m.macro_precision, 4)} | {_fmt(m.macro_recall, 4)} | "
                     f"{_fmt(m.macro_f1, 4)} | {shown.show(k, 'kappa')} | "
                     f"{_fmt(report.judge_human_kappa.get(column))} |")
    lines += ["", "## Agreement among the humans", ""]
    lines += [f"- {pair}: kappa {_fmt(k)}" for pair, k in report.human_kappa.items()]
    lines.append(f"- Krippendorff's alpha: {_fmt(report.alpha)}")
    if report.between_judges:
        lines += ["", "## Between the two judges", "",
                  f"- accuracy {_fmt(report.between_judges['accuracy'], 4)}, kappa "
                  f"{_fmt(report.between_judges['kappa'])}"]
    for column, m in report.judges.items():
        lines += ["", f"## Confusion: {column} (rows gold, columns judge)", "",
                  "| gold \\ judge | " + " | ".join(map(str, m.labels)) + " |",
                  "|---" * (len(m.labels) + 1) + "|"]
        lines += [f"| {label} | " + " | ".join(str(n) for n in row) + " |"
                  for label, row in zip(m.labels, m.confusion)]
    lines += ["", "## Plots", "", f"![Agreement per judge]({TABLE_PLOTS['f1']})", "",
              f"![Confusion matrices]({TABLE_PLOTS['confusion']})", "",
              "A label table has no confidence column: there is no reliability plot.", ""]
    return "\n".join(lines)


def _save_rates(fig, ax, path: Path, *, ylabel: str, title: str) -> None:
    """Finish a bar chart of rates in [0, 1] (labels, legend), save it without Matplotlib's
    version in the file (the same plot, the same bytes) and close it."""
    import matplotlib.pyplot as plt

    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)


def _table_plots(report: TableReport, folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = ["accuracy", "macro P", "macro R", "macro F1"]
    columns = list(report.judges)
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=100)
    width = 0.8 / max(1, len(columns))
    for index, column in enumerate(columns):
        m = report.judges[column]
        values = [m.accuracy, m.macro_precision, m.macro_recall, m.macro_f1]
        ax.bar([i + index * width for i in range(len(names))], values, width=width, label=column)
    ax.set_xticks([i + width * (len(columns) - 1) / 2 for i in range(len(names))], names)
    _save_rates(fig, ax, folder / TABLE_PLOTS["f1"], ylabel="against the human majority",
                title=f"{report.path.name}: {report.gold_items} items with a gold label")

    fig, axes = plt.subplots(1, len(columns), figsize=(3.6 * len(columns), 3.4), dpi=100,
                             squeeze=False)
    for ax, column in zip(axes.flat, columns):
        m = report.judges[column]
        ax.imshow(m.confusion, cmap="Blues")
        for i, row in enumerate(m.confusion):
            for j, n in enumerate(row):
                ax.text(j, i, str(n), ha="center", va="center", fontsize=9)
        ax.set_xticks(range(len(m.labels)), [str(label) for label in m.labels])
        ax.set_yticks(range(len(m.labels)), [str(label) for label in m.labels])
        ax.set_xlabel(column)
        ax.set_ylabel("human majority")
        ax.set_title(column, fontsize=9)
    fig.tight_layout()
    fig.savefig(folder / TABLE_PLOTS["confusion"], metadata={"Software": None})
    plt.close(fig)


def write_table_report(report: TableReport, folder: Path) -> Path:
    """report.json (every printed figure), report.md and the plots of a --table calibration."""
    folder.mkdir(parents=True, exist_ok=True)
    _table_plots(report, folder)
    return write_report(folder, table_payload(report), table_markdown(report))
