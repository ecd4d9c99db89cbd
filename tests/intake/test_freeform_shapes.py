"""The shapes real free-form reports use, in variations the development reports do not have
(issue 40): every report here is built by the test from its parts, none copied. Each case says
what a careful reader takes from it, and leaves absent what a reader could not stake."""

from __future__ import annotations

from pathlib import Path

import pytest

from judging.intake import load_folder
from judging.intake.freeform import read_report
from judging.models import Verdict

V, F, I = Verdict.verified, Verdict.falsified, Verdict.inconclusive
FRONT = "---\ntitle: A reproduction\nsdk: static\n---\n"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


def read(text: str) -> dict[str, tuple]:
    """statement -> (verdict, reported, reproduced) of each claim the report states."""
    return {c.title: (c.extraction.verdict, c.extraction.reported, c.extraction.reproduced)
            for c in read_report("REPORT.md", text)}


@pytest.mark.parametrize(("header", "rows", "want"), [
    # the claim in the second column, ours before the paper, a number first
    (["#", "Claim", "Ours", "Paper", "Status"],
     [["1", "Accuracy on the clean split", "91.2", "92.0", "✓"],
      ["2", "Accuracy under label noise", "60.1", "70.3", "✗"]],
     {"Accuracy on the clean split": (V, 92.0, 91.2),
      "Accuracy under label noise": (F, 70.3, 60.1)}),
    (["Claim", "Reported", "Obtained", "Result"],
     [["Top-1 accuracy of the small model", "76.1", "75.8", "PASS"]],
     {"Top-1 accuracy of the small model": (V, 76.1, 75.8)}),
    (["Metric", "Original", "Reproduced value", "Verdict"],
     [["BLEU on the news test set", "28.4", "27.9", "✅ reproduced"],
      ["Perplexity on the small corpus", "58.3", "71.0", "❌ Not reproduced"]],
     {"BLEU on the news test set": (V, 28.4, 27.9),
      "Perplexity on the small corpus": (F, 58.3, 71.0)}),
    (["Claim", "Target", "Measured", "Flag"],
     [["Coverage of the interval", "0.95", "0.81", "OUT_OF_TOL"]],
     {"Coverage of the interval": (F, 0.95, 0.81)}),
    (["Claim", "Expected", "Achieved", "Verdict"],
     [["Recall at ten on the dev split", "0.62", "0.60", "🟡"]],
     {"Recall at ten on the dev split": (I, 0.62, 0.60)}),
    (["指标", "论文", "复现", "结论"],
     [["测试集准确率", "91.2", "90.8", "复现成功"], ["鲁棒准确率", "70.3", "60.1", "未复现"],
      ["训练时间", "12", "?", "部分复现"]],
     {"测试集准确率": (V, 91.2, 90.8), "鲁棒准确率": (F, 70.3, 60.1), "训练时间": (I, 12.0, None)}),
    # "ours / paper" in one cell, in the header's order
    (["Setting", "Ours / Paper", "⚑"],
     [["Accuracy with all the data", "90.1 / 91.0", "⚠️"]],
     {"Accuracy with all the data": (I, 91.0, 90.1)}),
    # a question column answered yes / no; "N/A" answers nothing
    (["Claim", "Paper", "Ours", "Reproduced?"],
     [["Accuracy on the clean split", "91.2", "90.8", "Yes"],
      ["Accuracy under label noise", "70.3", "60.1", "No, ten points lower"],
      ["Speed on one GPU", "2.0", "-", "N/A"]],
     {"Accuracy on the clean split": (V, 91.2, 90.8),
      "Accuracy under label noise": (F, 70.3, 60.1), "Speed on one GPU": (I, 2.0, None)}),
])
def test_a_claims_table_is_read_by_what_its_headers_mean_in_any_words(header, rows, want):
    assert read(table(header, rows)) == want


@pytest.mark.parametrize(("ours", "why"), [
    ("40–55", "range"), ("1.2 ± 0.3 (1.4 on the other split)", "second number"),
    ("256/128", "two numbers"),
])
def test_a_cell_that_is_not_one_number_leaves_the_value_absent_with_its_reason(ours, why):
    (claim,) = read_report("REPORT.md", table(["Claim", "Paper", "Ours", "Verdict"],
                                              [["The gain from mixing", "1.5", ours, "✅"]]))
    assert claim.extraction.reproduced is None
    assert claim.extraction.absent["reproduced_value"]


def test_two_sides_on_different_scales_give_no_pair() -> None:
    got = read(table(["Claim", "Paper", "Ours", "Verdict"],
                     [["Share of issues resolved", "91.2%", "0.30", "❌"]]))
    assert got == {"Share of issues resolved": (F, 91.2, None)}


def test_claim_sections_state_their_verdict_by_code_or_in_chinese() -> None:
    report = ("# Report\n\n### Claim 1: The small model reaches ninety percent\n\nStatus: PASS\n\n"
              "### Claim 2: The large model is faster\n\nStatus: FAIL\n\n"
              "### Claim 3: Memory stays flat with the batch size\n\nStatus: OUT_OF_TOL\n\n"
              "### 主张 4：基础模型的准确率更高\n\n结论：复现成功\n\n"
              "### 主张 5：大模型训练更快\n\n结论：部分复现\n")
    claims = {c.title: c for c in read_report("REPORT.md", report)}
    assert {t: c.extraction.verdict for t, c in claims.items()} == {
        "The small model reaches ninety percent": V, "The large model is faster": F,
        "Memory stays flat with the batch size": F, "基础模型的准确率更高": V, "大模型训练更快": I}
    assert claims["基础模型的准确率更高"].number == 4
    assert claims["Memory stays flat with the batch size"].extraction.provenance[
        "verdict"].quote == "Status: OUT_OF_TOL"


def test_what_matches_and_what_does_not_sections_judge_their_items() -> None:
    report = ("# Report\n\n## What matches\n\n- Accuracy of the small model is within a point\n"
              "- Training converges in fifty epochs\n\n## What doesn't\n\n"
              "- The large model is no faster than the small one\n\n"
              "## What didn't replicate\n\n- Memory stays flat across batch sizes\n\n"
              "## Consistent hashing\n\n- The shards are assigned by a hash ring\n")
    assert {t: v for t, (v, *_) in read(report).items()} == {
        "Accuracy of the small model is within a point": V,
        "Training converges in fifty epochs": V,
        "The large model is no faster than the small one": F,
        "Memory stays flat across batch sizes": F}


def test_list_items_closing_with_their_label_after_a_colon_under_the_results() -> None:
    report = ("# Report\n\n## Results\n\n- Accuracy of the small model within a point: reproduced\n"
              "- The large model is faster than the small one: not reproduced\n"
              "- Memory use with eight workers: not reproduced yet\n\n## 结论\n\n"
              "- 基础模型的准确率与论文一致：复现成功\n- 大模型在长序列上速度更快：未复现\n\n"
              "## Setup\n\n- Data set used for every run: reproduced from the release\n")
    assert {t: v for t, (v, *_) in read(report).items()} == {
        "Accuracy of the small model within a point": V,
        "The large model is faster than the small one": F,
        "Memory use with eight workers": I,
        "基础模型的准确率与论文一致": V, "大模型在长序列上速度更快": F}


@pytest.mark.parametrize(("label", "verdict"), [
    ("✅", V), ("✔️", V), ("✓", V), ("🟢", V), ("🟡", I), ("⚠️", I), ("⬜", I), ("❌", F),
    ("✗", F), ("🔴", F), ("OUT_OF_TOL", F), ("WITHIN_TOL", V), ("复现成功", V), ("部分复现", I),
    ("未复现", F), ("Not reproduced", F), ("❌ not reproduced", F), ("⚠️ not reproduced", I),
    ("Not reproduced yet", I), ("![status](https://img.shields.io/badge/status-verified-green)", V),
])
def test_a_verdict_mark_code_badge_or_phrase_maps_through_one_table(label, verdict) -> None:
    got = read(table(["Claim", "Verdict"], [["The loss falls below a fifth", label]]))
    assert got["The loss falls below a fifth"][0] == verdict


def test_a_row_with_neither_sides_number_keeps_its_verdict_and_its_results_file_values(
        tmp_path: Path) -> None:
    folder = tmp_path / "alice--repro-2601.00001"
    folder.mkdir()
    (folder / "README.md").write_text(FRONT + "# Report\n\n" + table(
        ["ID", "Claim", "Paper", "Ours", "Verdict"],
        [["C1", "Top-1 accuracy on the test split", "", "", "✅"],
         ["C2", "A finding of our own on the dev split", "—", "4.2", "❌"]]), encoding="utf-8")
    (folder / "results.csv").write_text("claim_id,paper_value,reproduced_value\nC1,76.1,75.8\n",
                                        encoding="utf-8")
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    claims = {c.claim.statement: c.claim for c in loaded.claims}
    one = claims["Top-1 accuracy on the test split"]
    assert (one.verdict, one.reported_value, one.reproduced_value) == (V, 76.1, 75.8)
    own = claims["A finding of our own on the dev split"]
    assert own.verdict is None and own.reproduced_value is None  # the paper states nothing


def test_reports_that_disagree_are_read_once_and_the_disputed_value_left_absent(
        tmp_path: Path) -> None:
    folder = tmp_path / "alice--repro-2601.00001"
    folder.mkdir()
    rows = [["C1", "Top-1 accuracy on the test split", "76.1", "75.8", "✅"],
            ["C2", "Throughput of the large model", "2.0", "1.0", "❌"]]
    (folder / "README.md").write_text(FRONT + "# Summary\n\n" + table(
        ["ID", "Claim", "Paper", "Ours", "Verdict"], rows), encoding="utf-8")
    (folder / "NOTES.md").write_text("# Notes\n\n" + table(
        ["ID", "Claim", "Paper", "Ours", "Verdict"],
        [["C1", "Top-1 accuracy on the test split", "76.1", "74.0", "⚠️"]]), encoding="utf-8")
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    [one] = [c.claim for c in loaded.claims if c.claim.statement.startswith("Top-1")]
    assert one.reported_value == 76.1 and one.reproduced_value is None
    assert "disagree" in one.absent["reproduced_value"]
    assert any("disagree" in w for w in loaded.header.warnings)


def test_a_report_with_only_an_overall_verdict_is_one_claim(tmp_path: Path) -> None:
    folder = tmp_path / "alice--repro-2601.00001"
    folder.mkdir()
    (folder / "README.md").write_text(
        FRONT + "# Reproduction\n\nWe reran the released code on one GPU.\n\n"
        "**Overall verdict:** ⚠️ Partially reproduced\n", encoding="utf-8")
    [claim] = load_folder(folder, logbooks_dir=tmp_path / "out").claims
    assert claim.claim.claim_id.endswith("/report") and claim.claim.verdict == I


@pytest.mark.parametrize(("code", "verdict"), [
    ("`BLOCKED_EXACT_MODEL_RERUN`", I), ("NOT_REPRODUCED", F), ("FAILED_CHECK", F),
    ("COMPLETE_PUBLIC_ARTIFACT_RUN", None), ("OUT_OF_TOL", F),
])
def test_a_status_code_is_read_by_its_words(code, verdict) -> None:
    got = read(table(["Claim", "Status"], [["The loss falls below a fifth", code],
                                           ["The large model beats every baseline", "✅"]]))
    assert got["The loss falls below a fifth"][0] == verdict


def test_a_status_table_headed_in_chinese_is_a_claims_table() -> None:
    got = read(table(["实验", "完成情况"], [["主表的基线模型", "代理完成"],
                                         ["消融实验中的三个变体", "完成"]]))
    # the rows are claims; "完成" (done) is no verdict on the paper's claim
    assert got == {"主表的基线模型": (I, None, None), "消融实验中的三个变体": (None, None, None)}


def test_a_results_file_naming_the_reference_side_pairs_with_ours(tmp_path: Path) -> None:
    import json

    folder = tmp_path / "alice--repro-2601.00001"
    folder.mkdir()
    (folder / "README.md").write_text(FRONT + "# Report\n\n" + table(
        ["ID", "Claim", "Verdict"], [["C1", "Top-1 accuracy on the test split", "✅"]]),
        encoding="utf-8")
    (folder / "results.json").write_text(json.dumps({"C1": {"ref_acc": 76.1,
                                                            "measured_acc": 75.8}}))
    [claim] = load_folder(folder, logbooks_dir=tmp_path / "out").claims
    assert (claim.claim.reported_value, claim.claim.reproduced_value) == (76.1, 75.8)


def test_a_results_yaml_with_paper_and_ours_keys_gives_the_claims_values(tmp_path: Path) -> None:
    folder = tmp_path / "alice--repro-2601.00001"
    (folder / "results").mkdir(parents=True)
    (folder / "README.md").write_text(FRONT + "# Report\n\n" + table(
        ["ID", "Claim", "Verdict"], [["C1", "Top-1 accuracy on the test split", "✅"],
                                     ["C2", "Throughput of the large model", "❌"]]),
        encoding="utf-8")
    (folder / "results" / "summary.yaml").write_text(
        "C1:\n  paper: 76.1\n  ours: 75.8\nC2:\n  paper_tokens_per_s: 2000\n", encoding="utf-8")
    # aliases are refused unread: one alias per level expands without bound when walked
    (folder / "results" / "bomb.yml").write_text(
        "a: &a [1, 1, 1]\nb: &b [*a, *a, *a]\nC2: {ours: *b}\n", encoding="utf-8")
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    claims = {c.claim.statement: c.claim for c in loaded.claims}
    one = claims["Top-1 accuracy on the test split"]
    assert (one.reported_value, one.reproduced_value) == (76.1, 75.8)
    assert one.provenance["reproduced_value"].quote == "ours: 75.8"
    assert claims["Throughput of the large model"].reproduced_value is None
    assert any("aliases" in p.reason and "bomb.yml" in (p.manifest or "")
               for p in loaded.problems) or any("aliases" in w for w in loaded.header.warnings)


def test_a_numbered_heading_may_close_with_its_verdict_in_brackets() -> None:
    report = ("# Report\n\n## 1. The loss falls below a fifth (reproduced)\n\ntext\n\n"
              "## 2. The large model beats the baselines [❌]\n\ntext\n\n"
              "## 3. 基础模型的准确率更高（部分复现）\n\ntext\n\n"
              "## 4. Training (partial)\n\ntext\n\n## 5. Results on the test split (see Table 2)\n\n"
              "text\n\n## 6. 方法：一致性哈希\n\ntext\n")
    assert {t: v for t, (v, *_) in read(report).items()} == {
        "The loss falls below a fifth": V, "The large model beats the baselines": F,
        "基础模型的准确率更高": I}
