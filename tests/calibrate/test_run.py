"""Calibration (judging.calibrate) on constructed judgments and labels: trust decisions, reports,
staleness, table mode and the comparison of two judges. Final decisions and the leaderboard are in
tests/resolve/."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import f1_score

from judging.calibrate.artifacts import (
    TrustOptions,
    load_artifact,
    staleness,
    trusted_criteria,
)
from judging.calibrate.run import calibrate_run
from judging.cli import main
from judging.errors import CalibrationError
from judging.models import (
    AnswerStatus,
    ClaimKey,
    ConfidenceSource,
    CriterionAnswer,
)
from judging.resolve.decide import resolve_run
from tests.conftest import DATA, ROOT, RUBRICS, module_measure_cache
from tests.constructed import JUDGE, TEMPLATE, _claims, _judgment, _label, _run

pytestmark = pytest.mark.usefixtures("shared_measurements")

PANDALM = DATA / "pandalm-agreement" / "labels.csv"


def _perfect(rubric, n: int, *, unscored: int = 0, criterion: str = "verdict_consistent"):
    """n labelled claims, the judge agreeing on all scored ones (yes and no alternating)."""
    judgments, labels = [], []
    for i, claim in enumerate(_claims(n)):
        gold = i % 3 != 0
        judged = None if i < unscored else gold
        judgments.append(_judgment(rubric, claim, {criterion: (judged, 0.9)}))
        labels.append(_label(rubric, claim, criterion, gold))
    return judgments, labels


def _decision(tmp_path: Path, rubric, judgments, labels, **options):
    run = _run(tmp_path, judgments, labels)
    (result,) = calibrate_run(run, out=tmp_path / "calibration", options=TrustOptions(**options),
                              rubrics_dir=RUBRICS)
    return next(c for c in result.artifact.criteria if c.criterion == "verdict_consistent")


@pytest.mark.parametrize("n, unscored, trusted", [
    (50, 0, True),      # exactly the minimum support
    (49, 0, False),     # one short
    (56, 5, True),      # 51 scored of 56 labelled: coverage 0.91
    (60, 7, False),     # 53 scored of 60: coverage 0.883 < 0.9
])
def test_trust_decision_at_its_boundaries(tmp_path: Path, verdict_rubric, n: int, unscored: int,
                                          trusted: bool) -> None:
    judgments, labels = _perfect(verdict_rubric, n, unscored=unscored)
    result = _decision(tmp_path, verdict_rubric, judgments, labels)
    assert (result.decision == "trusted") is trusted, result.reasons
    assert result.support == n - unscored
    assert result.coverage == pytest.approx((n - unscored) / n)


def test_the_f1_floor_decides(tmp_path: Path, verdict_rubric) -> None:
    judgments, labels = _perfect(verdict_rubric, 80)
    # Make the judge wrong on 20 claims: F1 stays near 0.8 but its lower bound drops below.
    for judgment in judgments[:20]:
        answer = judgment.answer("verdict_consistent")
        answer.value = not answer.value
    result = _decision(tmp_path, verdict_rubric, judgments, labels)
    gold = [label.value for label in labels]
    predicted = [j.answer("verdict_consistent").value for j in judgments]
    assert result.f1 == pytest.approx(f1_score(gold, predicted, pos_label=True))
    low, high = result.f1_interval
    assert low <= result.f1 <= high
    assert result.decision == "needs_humans" and any("F1 lower bound" in r
                                                     for r in result.reasons)
    # F1 alone no longer trusts: the true-positive and true-negative rates' lower bounds must
    # pass too (40/53 and 20/27 here).
    lenient = _decision(tmp_path / "again", verdict_rubric, judgments, labels, floor=low - 0.01)
    assert lenient.decision == "needs_humans"
    assert [r.split(" lower")[0] for r in lenient.reasons] == ["true-positive rate",
                                                                "true-negative rate"]
    assert lenient.counts == {"true_positives": 40, "false_negatives": 13,
                              "true_negatives": 20, "false_positives": 7}
    assert lenient.true_positive_rate == pytest.approx(40 / 53)
    assert lenient.true_negative_rate == pytest.approx(20 / 27)
    tnr_low = lenient.tnr_interval[0]
    both = _decision(tmp_path / "third", verdict_rubric, judgments, labels, floor=low - 0.01,
                     tpr_floor=lenient.tpr_interval[0], tnr_floor=tnr_low)
    assert both.decision == "trusted"


def test_a_judge_that_passes_everything_is_not_trusted_on_f1(tmp_path: Path,
                                                              verdict_rubric) -> None:
    # 90 true passes and 10 true fails, the judge says pass to all: F1 0.947, TNR 0.
    judgments, labels = [], []
    for i, claim in enumerate(_claims(100)):
        judgments.append(_judgment(verdict_rubric, claim, {"verdict_consistent": (True, 0.9)}))
        labels.append(_label(verdict_rubric, claim, "verdict_consistent", i >= 10))
    result = _decision(tmp_path, verdict_rubric, judgments, labels, floor=0.9)
    assert result.f1 == pytest.approx(180 / 190) and result.f1_interval[0] > 0.9
    assert result.true_negative_rate == 0.0 and result.decision == "needs_humans"
    assert result.reasons == ["true-negative rate lower bound 0.000 < 0.7"]
    # The random-baseline row: a judge answering pass 90% of the time at random.
    assert result.baseline.f1 == pytest.approx(0.9)
    assert result.baseline.accuracy == pytest.approx(0.9 ** 2 + 0.1 ** 2)
    assert result.baseline.true_negative_rate == pytest.approx(0.1)
    # The run's pass rate (100%) corrected for the judge's errors: undefined (Se + Sp = 1).
    assert result.corrected.observed == 1.0 and result.corrected.corrected is None


def test_confidence_threshold_and_work_saved(tmp_path: Path, verdict_rubric) -> None:
    judgments, labels = [], []
    for i, claim in enumerate(_claims(60)):
        gold = i % 2 == 0
        confident = i < 36  # 36 of 60 answered with confidence 0.9, all right
        judged = gold if confident else (not gold if i % 3 else gold)
        judgments.append(_judgment(verdict_rubric, claim,
                                   {"verdict_consistent": (judged, 0.9 if confident else 0.55)}))
        labels.append(_label(verdict_rubric, claim, "verdict_consistent", gold))
    result = _decision(tmp_path, verdict_rubric, judgments, labels)
    assert result.confidence_threshold == 0.9
    assert result.threshold_agreement == 1.0
    assert result.work_saved == pytest.approx(36 / 60)
    low_bin = next(b for b in result.reliability if b.low <= 0.55 < b.high)
    assert low_bin.n == 24 and low_bin.accuracy < 0.5


def test_blind_labels_only_unless_asked(tmp_path: Path, verdict_rubric) -> None:
    judgments, labels = _perfect(verdict_rubric, 10)
    anchored = [_label(verdict_rubric, ClaimKey(submission_id="s1", claim_id="p/c1"),
                       "verdict_consistent", False, annotator="saw-ai", blind=False)]
    run = _run(tmp_path, judgments, labels + anchored)
    (blind,) = calibrate_run(run, out=tmp_path / "c1", rubrics_dir=RUBRICS)
    assert blind.artifact.labels.used == 10 and blind.artifact.labels.blind_only
    (both,) = calibrate_run(run, out=tmp_path / "c2", rubrics_dir=RUBRICS,
                            options=TrustOptions(include_anchored=True))
    assert both.artifact.labels.used == 11 and not both.artifact.labels.blind_only
    report = (both.report_dir / "report.md").read_text()
    assert "anchored labels" in report and "overstated" in report
    only_anchored = _run(tmp_path / "x", judgments, anchored)
    with pytest.raises(CalibrationError, match="no blind labels"):
        calibrate_run(only_anchored, out=tmp_path / "c3", rubrics_dir=RUBRICS)


def test_a_reviewers_latest_dataset_decides(tmp_path: Path, verdict_rubric) -> None:
    """A reviewer answered one claim blind (the plan's sample), then changed the answer in the
    anchored dataset: the later answer is theirs (resolve's rule), whatever the file order."""
    judgments, labels = _perfect(verdict_rubric, 11)
    claim, agreeing = labels[-1].claim, labels[-1].value
    early = datetime(2026, 12, 1, 10, tzinfo=UTC)
    blind = _label(verdict_rubric, claim, "verdict_consistent", agreeing, annotator="rev")
    anchored = _label(verdict_rubric, claim, "verdict_consistent", not agreeing,
                      annotator="rev", blind=False)
    blind = blind.model_copy(update={"dataset": "sample", "updated_at": early})
    anchored = anchored.model_copy(update={"dataset": "run",
                                           "updated_at": early + timedelta(hours=1)})
    # The later (anchored) answer first in the file: file order would keep the blind one.
    run = _run(tmp_path, judgments, labels[:-1] + [anchored, blind])
    (both,) = calibrate_run(run, out=tmp_path / "c1", rubrics_dir=RUBRICS,
                            options=TrustOptions(include_anchored=True))
    found = next(c for c in both.artifact.criteria if c.criterion == "verdict_consistent")
    assert both.artifact.labels.used == 11
    assert (found.support, found.accuracy) == (11, pytest.approx(10 / 11))
    # Blind only: the superseded blind answer is not the reviewer's any more.
    (blind_only,) = calibrate_run(run, out=tmp_path / "c2", rubrics_dir=RUBRICS)
    found = next(c for c in blind_only.artifact.criteria if c.criterion == "verdict_consistent")
    assert blind_only.artifact.labels.used == 10
    assert (found.support, found.accuracy) == (10, 1.0)


def test_labels_for_another_rubric_hash_are_refused(tmp_path: Path, verdict_rubric) -> None:
    judgments, labels = _perfect(verdict_rubric, 5)
    labels.append(_label(verdict_rubric, _claims(1)[0], "verdict_consistent", True,
                         rubric_hash="sha256:" + "0" * 64))
    run = _run(tmp_path, judgments, labels)
    with pytest.raises(CalibrationError, match="another text of the rubric"):
        calibrate_run(run, out=tmp_path / "c", rubrics_dir=RUBRICS)
    with pytest.raises(CalibrationError, match="another text of the rubric"):
        resolve_run(run, calibration_dir=tmp_path / "c", rubrics_dir=RUBRICS)


def test_report_files_agree_with_the_artifact(tmp_path: Path, verdict_rubric) -> None:
    judgments, labels = _perfect(verdict_rubric, 60)
    for i, judgment in enumerate(judgments[:20]):  # a second labelled criterion, two humans
        judgment.answers[3] = CriterionAnswer(
            criterion_id="scale_disclosed", status=AnswerStatus.scored, value=i % 2 == 0,
            passed=i % 2 == 0, rationale="r", confidence=0.7,
            confidence_source=ConfidenceSource.self_reported)
        labels.append(_label(verdict_rubric, judgment.claim, "scale_disclosed", i % 2 == 0))
        labels.append(_label(verdict_rubric, judgment.claim, "scale_disclosed", i % 4 == 0,
                             annotator="ann2"))
    run = _run(tmp_path, judgments, labels)
    (result,) = calibrate_run(run, out=tmp_path / "calibration", rubrics_dir=RUBRICS)
    folder = result.report_dir
    assert folder == tmp_path / "calibration" / "reports" / "verdict-justification@1.0.0" / \
        folder.name
    for name in ("report.md", "report.json", "f1.png", "confusion.png", "reliability.png"):
        assert (folder / name).is_file() and (folder / name).stat().st_size > 0, name
    report = json.loads((folder / "report.json").read_text())
    artifact = json.loads(result.artifact_path.read_text())
    assert report["criteria"] == artifact["criteria"]
    assert report["judge"] == JUDGE and report["template_hash"] == TEMPLATE
    markdown = (folder / "report.md").read_text()
    scale = next(c for c in report["criteria"] if c["criterion"] == "scale_disclosed")
    assert scale["humans"]["raters"] == 2 and scale["humans"]["items_with_several"] == 20
    assert scale["humans"]["alpha"] is not None
    row = next(line for line in markdown.splitlines() if line.startswith("| scale_disclosed"))
    assert f"{scale['f1']:.3f}" in row and f"{scale['humans']['alpha']:.3f}" in row
    from PIL import Image
    assert Image.open(folder / "f1.png").size[0] > 300


def test_staleness(tmp_path: Path, verdict_rubric) -> None:
    judgments, labels = _perfect(verdict_rubric, 60)
    run = _run(tmp_path, judgments, labels)
    out = tmp_path / "calibration"
    calibrate_run(run, out=out, rubrics_dir=RUBRICS)
    trusted, problem = trusted_criteria(out, judgments[0])
    assert trusted == {"verdict_consistent"} and problem is None
    other = _judgment(verdict_rubric, judgments[0].claim, {}, template="sha256:" + "x" * 64)
    trusted, problem = trusted_criteria(out, other)
    assert trusted == set() and "prompt template changed" in problem
    artifact = load_artifact(out, judgments[0].rubric, JUDGE)
    assert "judge model changed" in staleness(artifact, rubric=judgments[0].rubric,
                                              template_hash=TEMPLATE, model="another")
    # A new calibration after a template change says it replaced a stale one.
    newer = [_judgment(verdict_rubric, j.claim, {"verdict_consistent": (
        j.answer("verdict_consistent").value, 0.9)}, template="sha256:" + "x" * 64)
        for j in judgments]
    run2 = _run(tmp_path / "second", newer, labels)
    (result,) = calibrate_run(run2, out=out, rubrics_dir=RUBRICS)
    assert result.stale and "template" in result.stale


@pytest.fixture(scope="module")
def pandalm_table(tmp_path_factory: pytest.TempPathFactory):
    """`judging calibrate --table` on PandaLM's agreement table, run once for the two tests that
    read what it printed and wrote (issue 43: the same command twice before): click's result
    and the --out folder."""
    # --out under a temporary folder: the default (./calibration) is the checkout's, whose
    # tracked report (calibration/reports/table/gpt35/) a test must never rewrite.
    out = tmp_path_factory.mktemp("pandalm") / "cal"
    result = CliRunner().invoke(main, [
        "calibrate", "--table", str(PANDALM), "--judge-column", "gpt35",
        "--human-columns", "annotator1,annotator2,annotator3", "--compare", "pandalm7b",
        "--out", str(out)])
    return result, out


def test_table_mode_reproduces_pandalm(pandalm_table) -> None:
    result, _ = pandalm_table
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    for figure in ("0.7107", "0.5879", "0.5736", "0.5755"):
        assert figure in flat, figure
    for pair, kappa in (("annotator1~annotator2", "0.852"), ("annotator1~annotator3", "0.879"),
                        ("annotator2~annotator3", "0.862")):
        assert f"{pair} {kappa}" in flat
    assert "between the two judges" in flat


def test_table_mode_writes_the_figures_it_prints(pandalm_table) -> None:
    """--table --out DIR writes reports/table/<judge column>/ (report.json, report.md, plots),
    and report.json holds the very figures printed (parsed from both, compared)."""
    result, out = pandalm_table
    assert result.exit_code == 0, result.output
    folder = out / "reports" / "table" / "gpt35"
    assert {p.name for p in folder.iterdir()} == {"report.json", "report.md", "f1.png",
                                                    "confusion.png"}
    report = json.loads((folder / "report.json").read_text())
    printed_rows = {}
    for line in result.output.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 8 and cells[0] in ("gpt35", "pandalm7b"):
            printed_rows[cells[0]] = cells[1:]
    assert set(printed_rows) == {"gpt35", "pandalm7b"}
    for column, (n, accuracy, precision, recall, f1, kappa, with_humans) in printed_rows.items():
        m = report["judges"][column]
        assert int(n) == m["n"]
        intervals = report["intervals"][column]
        for shown, key in ((accuracy, "accuracy"), (kappa, "kappa")):
            # the figure with its 95% interval (Wilson for the accuracy, bootstrap for kappa)
            low, high = intervals[key]
            assert shown == f"{m[key]:.{4 if key == 'accuracy' else 3}f} [{low:.2f}, {high:.2f}]"
            assert low < m[key] < high and high - low > 0.01, (column, key)
        for shown, key in ((precision, "macro_precision"), (recall, "macro_recall"),
                           (f1, "macro_f1")):
            assert shown == f"{m[key]:.4f}", (column, key)
        assert with_humans == f"{report['judge_human_kappa'][column]:.3f}"
    flat = " ".join(result.output.split())
    header = re.search(r"(\d+) items, gold = human majority on (\d+) \((\d+) ties", flat)
    assert header is not None
    assert [int(g) for g in header.groups()] == [report["items"], report["gold_items"],
                                                 report["ties"]]
    for pair, shown in re.findall(r"(annotator\d~annotator\d) (\d\.\d{3})", flat):
        assert shown == f"{report['human_kappa'][pair]:.3f}"
    assert re.search(r"Krippendorff's alpha (\d\.\d{3})", flat).group(1) == \
        f"{report['alpha']:.3f}"
    between = re.search(r"accuracy (\d\.\d{4}), kappa (\d\.\d{3})", flat)
    assert between.groups() == (f"{report['between_judges']['accuracy']:.4f}",
                                f"{report['between_judges']['kappa']:.3f}")
    assert report["judges"]["gpt35"]["accuracy"] == pytest.approx(0.7107, abs=5e-5)
    markdown = (folder / "report.md").read_text()
    assert "| gpt35 | 999 | 0.7107 [0.68, 0.74] | 0.5879 | 0.5736 | 0.5755 | 0.496 [0.45, 0.54] |" \
        in markdown


def test_cli_calibrate_resolve_on_examples(tmp_path: Path) -> None:
    from judging.run.runner import RunRequest, run_judging
    from tests.conftest import REGISTRY, SUBMISSIONS

    run = tmp_path / "run"
    run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=run, registry=REGISTRY,
                           measure_cache=module_measure_cache()))
    labels = ROOT / "calibration" / "sets" / "examples" / "labels.jsonl"
    result = CliRunner().invoke(main, ["calibrate", str(run), "--labels", str(labels),
                                       "--out", str(tmp_path / "calibration")])
    assert result.exit_code == 0, result.output
    assert "construction labels" in " ".join(result.output.split())
    markdown = next((tmp_path / "calibration" / "reports").rglob("report.md")).read_text()
    assert "not human labels" in markdown
    result = CliRunner().invoke(main, ["resolve", str(run), "--labels", str(labels),
                                       "--calibration", str(tmp_path / "calibration")])
    assert result.exit_code == 0, result.output
    assert "14 claim(s)" in result.output
    result = CliRunner().invoke(main, ["leaderboard", str(run)])
    assert result.exit_code == 0 and "leaderboard.html" in result.output


def test_compare_two_judges_side_by_side(tmp_path: Path, verdict_rubric) -> None:
    from judging.calibrate.compare import compare_run

    judgments, labels = _perfect(verdict_rubric, 20)
    other = []
    for i, judgment in enumerate(judgments):  # a second judge that flips every fourth answer
        value = judgment.answer("verdict_consistent").value
        other.append(_judgment(verdict_rubric, judgment.claim,
                               {"verdict_consistent": (value if i % 4 else not value, 0.8)},
                               judge="openai:other"))
    run = _run(tmp_path, judgments + other, labels)
    results = calibrate_run(run, out=tmp_path / "c", rubrics_dir=RUBRICS)
    rows = compare_run(results, run, JUDGE, "openai:other")
    row = next(r for r in rows if r.criterion == "verdict_consistent")
    assert row.group == "verdict-justification@1.0.0" and row.both == 20
    assert row.agreement == pytest.approx(15 / 20)
    assert row.left_f1 == 1.0 and row.right_f1 < 1.0
    result = CliRunner().invoke(main, ["calibrate", str(run), "--out", str(tmp_path / "c2"),
                                       "--compare", f"{JUDGE},openai:other",
                                       "--rubrics-dir", str(RUBRICS)])
    assert result.exit_code == 0, result.output
    assert "0.75" in result.output
    with pytest.raises(CalibrationError, match="not a mix"):
        compare_run(results, run, JUDGE, "verdict-justification@1.0.0")


def test_compare_tells_judges_from_rubric_versions_by_the_run(tmp_path: Path,
                                                              verdict_rubric) -> None:
    """A judge of another backend whose name holds "@" (a model pinned to a revision) is a judge,
    not a rubric version: the run's records say which it is, not the spelling (issue 43: the
    check knew only the "openai:" prefix)."""
    from judging.calibrate.compare import compare_run

    judgments, labels = _perfect(verdict_rubric, 8)
    pinned = "local:org/model@2026-11"
    other = [_judgment(verdict_rubric, j.claim,
                       {"verdict_consistent": (j.answer("verdict_consistent").value, 0.8)},
                       judge=pinned) for j in judgments]
    run = _run(tmp_path, judgments + other, labels)
    results = calibrate_run(run, out=tmp_path / "c", rubrics_dir=RUBRICS)
    row = next(r for r in compare_run(results, run, JUDGE, pinned)
               if r.criterion == "verdict_consistent")
    assert row.group == "verdict-justification@1.0.0" and row.agreement == 1.0
    with pytest.raises(CalibrationError, match="neither a judge nor a rubric version"):
        compare_run(results, run, JUDGE, "nobody@1.0.0")
