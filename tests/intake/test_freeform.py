"""Free-form reports read by their structure (issue 40): every shape is written here by hand
(claims tables in any column order, "ours / paper" in one cell, verdict marks and Chinese
phrases, verdict headings over numbered sections and bullet lists, a link out of the folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judging.intake import load_folder
from judging.intake.extract import map_verdict
from judging.intake.freeform import read_report, read_reports
from judging.models import Verdict

FRONT = "---\ntitle: A reproduction\nsdk: static\n---\n"


def space(tmp_path: Path, files: dict[str, str]) -> Path:
    folder = tmp_path / "alice--repro-2601.00001"
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def by_statement(claims) -> dict[str, object]:
    return {c.claim.statement: c.claim for c in claims}


def _titled_verdicts(name: str, report: str) -> list[tuple[str, Verdict | None]]:
    """The claims `read_report` finds in a report, as (title, verdict), in report order."""
    return [(c.title, c.extraction.verdict) for c in read_report(name, report)]


def test_a_claims_table_is_read_by_what_its_headers_mean(tmp_path: Path) -> None:
    """Ours before paper, the claim text in the second column, an id first, emoji verdicts."""
    report = ("# Report\n\n| ID | Claim | Ours | Paper | Verdict |\n|---|---|---|---|---|\n"
              "| C1 | Top-1 error of the baseline | **16.74** | 16.45% | ✅ |\n"
              "| C2 | Gain from mixing | 1.2 ± 0.1 | 2.0 | ❌ |\n"
              "| C3 | Scaling to the large model | 40–55 | 50 | ⚠️ partial |\n")
    loaded = load_folder(space(tmp_path, {"README.md": FRONT + report}),
                         logbooks_dir=tmp_path / "out")
    claims = by_statement(loaded.claims)
    first = claims["Top-1 error of the baseline"]
    assert first.claim_id.endswith("/c1")
    assert (first.reported_value, first.reproduced_value) == (16.45, 16.74)
    assert first.verdict == Verdict.verified
    assert first.provenance["verdict"].quote == \
        "| C1 | Top-1 error of the baseline | **16.74** | 16.45% | ✅ |"
    second = claims["Gain from mixing"]
    assert second.verdict == Verdict.falsified and second.reproduced_value == 1.2
    third = claims["Scaling to the large model"]
    assert third.verdict == Verdict.inconclusive
    # a range is not one number: absent with its reason, never its first number
    assert third.reproduced_value is None and "reproduced_value" in third.absent


def test_ours_and_paper_in_one_cell_follow_the_headers_order(tmp_path: Path) -> None:
    report = ("## Ablation\n\n| Variant | Score (ours / paper) | 结论 |\n|---|---|---|\n"
              "| One memory module | 96.90 / 96.91 | 一致 |\n"
              "| Three memory modules | 97.10 / 98.80 | 不一致 |\n")
    claims = read_report("report.md", report)
    assert [c.title for c in claims] == ["One memory module", "Three memory modules"]
    one, three = (c.extraction for c in claims)
    assert (one.reported, one.reproduced, one.verdict) == (96.91, 96.90, Verdict.verified)
    assert (three.reported, three.reproduced, three.verdict) == (98.8, 97.1, Verdict.falsified)


def test_a_table_that_states_no_claim_is_not_read_as_one() -> None:
    report = ("| Field | Value |\n|---|---|\n| GPU | A100 |\n| Seeds | 3 |\n\n"
              "| Checkpoint | Accuracy |\n|---|---|\n| step 100 | 0.51 |\n")
    assert read_report("report.md", report) == []


def test_verdict_headings_carry_their_verdict_to_each_claim_below() -> None:
    report = ("# Report\n\n## Confirmed replications\n\n### 1. Efficacy predicts faithfulness\n\n"
              "Holds strongly.\n\n### 2. Larger models are more faithful\n\nYes.\n\n"
              "## What doesn't match\n\n### Task accuracy is far below the paper\n\nSee table.\n\n"
              "## Comparison with the paper\n\n### Agreements ✅\n\n- Agents beat both heuristics on wait time\n"
              "- Training converges within fifty episodes\n\n"
              "## 3. Method\n\n### 3.1 Backbone\n\nA ResNet.\n")
    claims = {c.title: c for c in read_report("REPORT.md", report)}
    assert claims["Efficacy predicts faithfulness"].extraction.verdict == Verdict.verified
    assert claims["Efficacy predicts faithfulness"].extraction.provenance["verdict"].quote == \
        "## Confirmed replications"
    assert claims["Task accuracy is far below the paper"].extraction.verdict == \
        Verdict.falsified
    items = [c for c in claims.values() if c.place == "list item"]
    assert {c.title for c in items} == {"Agents beat both heuristics on wait time",
                                        "Training converges within fifty episodes"}
    assert all(c.extraction.verdict == Verdict.verified for c in items)
    # a numbered section of the method is not a claim
    assert "Backbone" not in claims and "Method" not in claims


def test_a_marked_claim_heading_is_one_claim_with_its_number() -> None:
    report = "### Claim 2: The large model beats all baselines ✅\n\nIt does, by 3 points.\n"
    (claim,) = read_report("REPORT.md", report)
    assert claim.number == 2 and claim.title == "The large model beats all baselines"
    assert claim.extraction.verdict == Verdict.verified


@pytest.mark.parametrize(("label", "verdict"), [
    ("✅", Verdict.verified), ("✓ (within 18%)", Verdict.verified),
    ("❌ not run", Verdict.inconclusive), ("❌", Verdict.falsified),
    ("🟡 direction only", Verdict.inconclusive), ("OUT_OF_TOL", Verdict.falsified),
    ("一致", Verdict.verified), ("主表少 1 个 不一致", Verdict.falsified),
    ("代理完成", Verdict.inconclusive), ("✅ Reproduced", Verdict.verified),
    ("The effect replicates", Verdict.verified), ("忠实复现", Verdict.verified),
])
def test_one_table_maps_marks_codes_and_phrases(label: str, verdict: Verdict) -> None:
    assert map_verdict(label).verdict == verdict


def test_a_badge_or_a_plain_word_is_no_verdict() -> None:
    assert map_verdict("MIT licence").verdict is None
    assert read_report("README.md", "[![badge](https://img.shields.io/x.svg)](https://x)\n") \
        == []


def test_a_link_out_of_the_folder_is_not_followed_and_the_rest_is_read(tmp_path: Path
                                                                       ) -> None:
    report = ("See [the paper](../paper/full.md).\n\n| Claim | Paper | Ours | Status |\n"
              "|---|---|---|---|\n| Accuracy on the test set | 91.2 | 90.8 | ✅ |\n")
    loaded = load_folder(space(tmp_path, {"README.md": FRONT + report}),
                         logbooks_dir=tmp_path / "out")
    (claim,) = loaded.claims
    assert claim.claim.statement == "Accuracy on the test set"
    assert (claim.claim.reported_value, claim.claim.reproduced_value) == (91.2, 90.8)
    assert any("outside the Space: not followed" in p.reason for p in loaded.problems)


def test_a_damaged_logbook_cell_header_is_flagged_and_its_page_still_read() -> None:
    """A generator left text after a cell header's JSON: the header is read up to its JSON, the
    text is kept in the body and the damage is one warning; a header that is no JSON at all is
    still an error."""
    from judging.intake.logbook.reader import parse_cells

    page = ("# Claim 1: the slope is -1\n\n---\n<!-- trackio-cell\n"
            '{"type": "markdown", "id": "c1"} (generated by tool v2)\n-->\n'
            "**Verdict:** verified\n")
    warnings: list[str] = []
    title, cells, markers = parse_cells(page, warnings)
    assert markers and cells[-1].meta == {"type": "markdown", "id": "c1"}
    assert "(generated by tool v2)" in cells[-1].body and "**Verdict:** verified" in \
        cells[-1].body
    assert len(warnings) == 1 and "damaged cell header" in warnings[0]
    with pytest.raises(ValueError, match="not one line of JSON"):
        parse_cells(page.replace('{"type": "markdown", "id": "c1"}', "type: markdown"), [])


def test_a_list_under_a_lead_line_naming_claims_and_their_verdict() -> None:
    report = ("## Summary\n\nPublished claims reproduced:\n\n- Nouns are learned before verbs\n"
              "- Verb learning speeds up after the first fifty nouns\n\nSetup steps:\n\n"
              "- Install the package\n- Download the corpus\n")
    claims = read_report("README.md", report)
    assert [c.title for c in claims] == ["Nouns are learned before verbs",
                                         "Verb learning speeds up after the first fifty nouns"]
    assert all(c.extraction.verdict == Verdict.verified for c in claims)
    assert claims[0].extraction.provenance["verdict"].quote == "Published claims reproduced:"


def test_two_reports_stating_one_claim_are_merged_and_their_disagreement_flagged(
        tmp_path: Path) -> None:
    readme = ("## Results\n\n| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Tool-use accuracy after training | 70.6 | 64.7 | ✅ |\n")
    report = ("## Results\n\n| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Tool-use accuracy after training | 70.6 | 63.2 | ❌ |\n"
              "| Science accuracy after training | 70.2 | 48.3 | ❌ |\n\n"
              "Our forgetting curve matches the paper's description closely.\n")
    loaded = load_folder(space(tmp_path, {"README.md": FRONT + readme, "REPORT.md": report}),
                         logbooks_dir=tmp_path / "out")
    claims = by_statement(loaded.claims)
    # the two table rows, and the sentence of prose as a claim with no verdict or value
    assert len(loaded.claims) == 3
    prose = claims["Our forgetting curve matches the paper's description closely."]
    assert prose.verdict is None and prose.reproduced_value is None
    assert "needs --extract" in prose.provenance["statement"].place + str(
        loaded.claims[2].model_dump())
    tool = claims["Tool-use accuracy after training"]
    # the fuller report's verdict is read; a value the two give differently is absent
    assert tool.verdict == Verdict.falsified and tool.reported_value == 70.6
    assert tool.reproduced_value is None
    assert tool.absent["reproduced_value"] == \
        "the reports disagree: 63.2 in REPORT.md, 64.7 in README.md"
    flag = next(f for f in loaded.claims[0].flags + loaded.claims[1].flags
                if f.name == "reports_disagree")
    assert "REPORT.md and README.md disagree" in flag.detail and "64.7" in flag.detail
    # the sentence of prose is counted for the LLM extractor, never silently dropped
    assert any("1 claims stated in prose (REPORT.md: 1): read as statements only; their "
               "verdicts and values need --extract" in w
               for w in loaded.header.warnings)


@pytest.mark.parametrize(("name", "title", "text", "expected"), [
    ("bob/pythia-ppt-noise-repro", "PPT noise (arXiv 2605.11841)", "# Repro\n", "2605.11841"),
    ("bob/repro", None, "Paper: [X](https://openreview.net/forum?id=NW31gAylIm)\n",
     "NW31gAylIm"),
    ("bob/repro", None, "- **OSTI ID:** 1984484\n", "osti-1984484"),
    ("bob/repro", None, "See https://doi.org/10.1109/TPWRS.2021.3102345.\n",
     "10.1109/TPWRS.2021.3102345"),
    ("bob/repro", None, "# Repro of arXiv:2310.06123\n\n" + "text\n" * 20
     + "Cites arXiv:2103.00020 and arXiv:1602.05629.\n", "2310.06123"),
    ("bob/repro", None, "Cites arXiv:2103.00020 and arXiv:1602.05629.\n", None),
])
def test_paper_identity_from_the_name_title_and_text(name: str, title: str | None, text: str,
                                                      expected: str | None) -> None:
    from judging.intake.identity import paper_identity

    assert paper_identity(tags=[], name=name, title=title,
                          texts=[("README.md", text)])[0] == expected


def test_list_items_opening_with_a_bold_verdict_are_claims() -> None:
    report = ("## 結論\n\n- **核心主旨有重現：** 六組配對全部是 RE 優於 baseline。\n"
              "- **Refuted:** the Fashion-MNIST error stays above the paper's.\n"
              "- **Setup:** eight GPUs and five seeds per run.\n")
    assert _titled_verdicts("README.md", report) == [
        ("六組配對全部是 RE 優於 baseline。", Verdict.verified),
        ("the Fashion-MNIST error stays above the paper's.", Verdict.falsified)]


def test_a_row_the_paper_states_nothing_for_gets_no_verdict() -> None:
    report = ("| Dataset | Paper | Ours | Status |\n|---|---|---|---|\n"
              "| In domain | 39.0 | 38.9 | ✅ |\n| Out of domain | — | 4.27 | ❌ failure |\n")
    first, second = read_report("README.md", report)
    assert first.extraction.verdict == Verdict.verified
    assert second.extraction.verdict is None and "no claim of the paper" in \
        second.extraction.absent["verdict"]


def test_rows_whose_names_differ_by_a_number_or_a_model_are_two_claims() -> None:
    readme = ("| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Test 2019 accuracy of the tree model | 73.1 | 68.3 | ⚠️ |\n"
              "| Restored load of the GCN agent | 100 | 99.7 | ✅ |\n")
    report = ("| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Test 2020 accuracy of the tree model | 73.3 | 69.3 | ⚠️ |\n"
              "| Restored load of the MLP agent | 73.5 | 55.2 | ✅ |\n"
              "| Wall time of training | 6.4 | 0.7 | ⚠️ |\n")
    reading = read_reports([("README.md", readme), ("REPORT.md", report)])
    assert len(reading.claims) == 5 and reading.warnings == []
    assert all(c.extraction.reproduced is not None for c in reading.claims)


def test_one_claim_number_in_two_reports_is_one_claim_read_from_the_fuller() -> None:
    from judging.intake.freeform import read_reports

    readme = "| Claim | Verdict |\n|---|---|\n| C5 — exact numbers at scale | ⬜ out of scope |\n"
    report = ("| ID | Claim | Verdict |\n|---|---|---|\n| C4 | Smooth in t | ✅ |\n"
              "| C5 | Exact bytes per token table | ⬜ |\n")
    reading = read_reports([("README.md", readme), ("REPORT.md", report)])
    assert sorted((c.number, c.page.origin) for c in reading.claims) == [
        (4, "REPORT.md"), (5, "REPORT.md")]
    five = next(c for c in reading.claims if c.number == 5)
    assert five.extraction.provenance["also_stated"].place == "also stated in README.md"


def test_the_llm_reads_claims_stated_in_prose_each_quote_checked(tmp_path: Path) -> None:
    """Through the real `openai` client to the local fake server: a claim stated in a sentence
    is read with its verdict and values, each quote on the report; a claim whose quote is
    invented is rejected and counted; the table's claim stays the structure reader's."""
    from judging.judges import LLMOptions, StructuredCaller
    from judging.judges.openai import AnswerCache
    from judging.testing.fake_openai import FakeOpenAI

    report = ("# Report\n\n| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Accuracy on the test split | 91.2 | 90.8 | ✅ |\n\n"
              "The paper's scaling result is reproduced: the authors report a slope of 0.50 "
              "and our runs give 0.48.\n")

    def policy(request: dict) -> dict:
        system = next(m["content"] for m in request["messages"] if m["role"] == "system")
        if system.startswith("You list the claims"):
            sentence = ("The paper's scaling result is reproduced: the authors report a slope "
                        "of 0.50 and our runs give 0.48.")
            return {"claims": [
                {"quote": sentence,
                 "verdict": {"label": "reproduced", "quote": sentence},
                 "reported_value": {"value": 0.5, "quote": "the authors report a slope of 0.50"},
                 "reproduced_value": {"value": 0.48, "quote": "our runs give 0.48"}},
                {"quote": "Memory use halves at every scale.", "verdict": None,
                 "reported_value": None, "reproduced_value": None},
                {"quote": "| Accuracy on the test split | 91.2 | 90.8 | ✅ |", "verdict": None,
                 "reported_value": {"value": 99.0, "quote": "91.2"},
                 "reproduced_value": None}]}
        return {"reported_value": None, "reproduced_value": None, "verdict": None,
                "toy": None, "scale_note": None}

    folder = space(tmp_path, {"README.md": FRONT + report})
    with FakeOpenAI(policy) as fake:
        options = LLMOptions(base_url=fake.url, api_key="sk-test-not-a-secret", max_retries=1,
                             timeout=10.0, cache_dir=tmp_path / "cache")
        caller = StructuredCaller("fake-extractor", options,
                                  cache=AnswerCache(tmp_path / "cache"))
        loaded = load_folder(folder, logbooks_dir=tmp_path / "out", extractor=caller)
    claims = by_statement(loaded.claims)
    assert len(loaded.claims) == 2
    table = claims["Accuracy on the test split"]
    assert table.reported_value == 91.2  # the structure reader's, not the LLM's 99
    prose = next(c for c in loaded.claims if c.claim.provenance["statement"].how.startswith(
        "llm:"))
    assert prose.claim.verdict == Verdict.verified
    assert (prose.claim.reported_value, prose.claim.reproduced_value) == (0.5, 0.48)
    assert prose.claim.provenance["reproduced_value"].quote == "our runs give 0.48"
    assert any("1 prose claims the LLM named were rejected" in w
               and "Memory use halves" in w for w in loaded.header.warnings)


def test_a_linked_dataset_named_as_the_submissions_trace_is_its_trace(tmp_path: Path) -> None:
    """`<user>/<name>-agent-trace` is this submission's trace whatever its sessions name; a
    user's collection of sessions counts only where a session names the paper."""
    import json

    def session(text: str) -> str:
        return json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": text}]}, "uuid": "u0", "sessionId": "s1"}) + "\n"

    linked = ".judging/linked/datasets/bob"
    folder = space(tmp_path, {
        "README.md": FRONT + "| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
                             "| Loss falls | 0.5 | 0.48 | ✅ |\n",
        f"{linked}/pythia-agent-trace/s1.jsonl": session("reproduce the noise result"),
        f"{linked}/hf-chat-traces/s2.jsonl": session("plan my holiday"),
    })
    (claim,) = load_folder(folder, logbooks_dir=tmp_path / "out").claims
    assert claim.claim.evidence.traces == [f"{linked}/pythia-agent-trace/s1.jsonl"]


def test_a_header_naming_only_the_papers_side_of_a_pair_is_still_a_pair() -> None:
    report = ("| 数据集 | w/o FP（仅光流，本/论文） |\n|---|---|\n| Ped2 | 97.47 / 98.8 |\n")
    (claim,) = read_report("REPORT.md", report)
    assert (claim.extraction.reproduced, claim.extraction.reported) == (97.47, 98.8)


def test_a_table_of_thousands_of_rows_is_judged_up_to_the_limit_and_said(tmp_path: Path
                                                                         ) -> None:
    from judging.intake.manifest import MAX_CLAIMS_PER_SUBMISSION

    rows = "".join(f"| Setting number {i} | {i}.5 | {i}.4 | ✅ |\n" for i in range(3000))
    report = "| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n" + rows
    loaded = load_folder(space(tmp_path, {"README.md": FRONT + report}),
                         logbooks_dir=tmp_path / "out")
    assert len(loaded.claims) == MAX_CLAIMS_PER_SUBMISSION
    assert any("3,000 claims read by structure, over the limit" in w
               for w in loaded.header.warnings)


def test_the_papers_claims_under_a_heading_naming_them_are_claims_with_no_verdict() -> None:
    report = ("# Repro\n\n## The paper's reported results\n\n"
              "Recall rises monotonically with the memory size.\n\n"
              "| Setting | Model | Accuracy |\n|---|---|---|\n| Full | Tiny-JEPA | 91.2% |\n\n"
              "## Ours vs the paper's results\n\n| Setting | Accuracy |\n|---|---|\n"
              "| Full | 88.0% |\n\n## Reproduced\n\n- **Verified:** recall rises with the "
              "memory size, as the paper says\n")
    reading = read_reports([("README.md", report)])
    stated = {c.title: c for c in reading.stated}
    # each paragraph and row under the paper's heading; a comparison heading is not one
    assert set(stated) == {"Recall rises monotonically with the memory size.",
                           "Full · Tiny-JEPA"}
    row = stated["Full · Tiny-JEPA"]
    assert row.extraction.verdict is None and row.extraction.reported is None
    assert row.extraction.provenance["statement"].quote == "| Full | Tiny-JEPA | 91.2% |"
    # the reproducer's assessed claim is read once, with its verdict, from where it is assessed
    assert [c.extraction.verdict for c in reading.claims] == [Verdict.verified]


def test_a_claim_the_reports_assess_is_not_read_again_from_the_papers_statement() -> None:
    report = ("## Paper claims\n\n- Recall rises with the memory size\n\n## Results\n\n"
              "| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Recall rises with the memory size | 0.9 | 0.8 | ❌ |\n")
    reading = read_reports([("README.md", report)])
    assert reading.stated == [] and reading.claims[0].extraction.verdict == Verdict.falsified


def test_a_sentence_giving_two_verdicts_on_the_paper_is_a_claim_stated_in_prose() -> None:
    report = ("## Headline\n\nSteering raises self-attribution. But no candidate clears the "
              "paper's probe gate: the effect replicates, the procedure fails.\n\n"
              "## Setup\n\nWe used one GPU for the paper's model.\n")
    reading = read_reports([("README.md", report)])
    (claim,) = reading.stated
    assert claim.title.startswith("But no candidate clears") and claim.extraction.verdict is None
    assert reading.prose == {"README.md": 1}


def test_a_results_tables_row_labelled_as_the_papers_is_the_papers_claim() -> None:
    report = ("## Pre-training\n\n| Checkpoint | Steps | Loss |\n|---|---|---|\n"
              "| Tiny-base (ours) | 4,000 | 0.90 |\n| *Paper: Tiny-large, 13K steps* | 13,000 "
              "| 0.95 |\n\n| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Loss falls with steps | 0.95 | 0.90 | ✅ |\n")
    reading = read_reports([("REPORT.md", report)])
    (row,) = reading.stated
    assert row.title == "Paper: Tiny-large, 13K steps" and row.extraction.verdict is None
    assert row.extraction.reported is None and row.place == "table row"
    # its id follows the report's other claims: no two claims of a report share one
    ids = [c.local_id for c in reading.claims + reading.stated]
    assert len(ids) == len(set(ids)) == 2


def test_items_listed_as_not_covered_are_claims_with_no_verdict() -> None:
    report = ("## Scope\n\nDone:\n\n- Table 1 on CIFAR-10\n\nNot yet covered:\n\n"
              "- The ablations of Tables 2-4\n- Deeper ResNets of Table 1\n\n"
              "### 11.5 未复现项（论文非核心内容）\n\n1. **VAE 单格（Table 2）**：需改写网络。\n")
    claims = read_report("README.md", report)
    assert [c.title for c in claims] == ["The ablations of Tables 2-4",
                                         "Deeper ResNets of Table 1",
                                         "VAE 单格（Table 2）：需改写网络。"]
    assert all(c.extraction.verdict is None for c in claims)
    assert "not run" in claims[0].extraction.absent["verdict"]


# --- values a reader would not stake a claim on (issue 40, the lockbox's wrong values) -------

def _values(report: str) -> dict[str, tuple[float | None, float | None, dict[str, str]]]:
    return {c.title: (c.extraction.reported, c.extraction.reproduced, c.extraction.absent)
            for c in read_report("REPORT.md", report)}


def test_a_slash_is_a_count_only_of_a_whole_total() -> None:
    report = ("| Aspect | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Resolved issues | 54/300 | 54/300（18.00%） | ✅ |\n"
              "| Hidden layer sizes | 4000/1000 | 256/128 | ⚠️ |\n"
              "| Train and test split | 4046/68 | 4046/68 | ✅ |\n"
              "| Two scores in one cell | 0.91 | 96.53 / 96.27 | ✅ |\n")
    values = _values(report)
    assert values["Resolved issues"][:2] == (54, 54)
    for row in ("Hidden layer sizes", "Train and test split"):
        reported, reproduced, absent = values[row]
        assert reported is reproduced is None
        assert "not a count of a total" in absent["reproduced_value"]
    assert values["Two scores in one cell"][1] is None


def test_a_parenthesis_holding_another_number_leaves_the_value_absent() -> None:
    report = ("| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Latency per episode | 2.0 s | 2.4 s (seed 2: 2.5 s) | ✅ |\n"
              "| Accuracy on the test split | 91.0 | 90.5 (90.1 on the other split) | ✅ |\n"
              "| Accuracy with three seeds | 91.0 | 90.5 (3 seeds) | ✅ |\n"
              "| Accuracy against the paper | 91.0 | 90.5 (+0.4 pp) | ✅ |\n"
              "| Accuracy restated | 91.0% | 90.5% (90.5) | ✅ |\n")
    values = _values(report)
    for row in ("Latency per episode", "Accuracy on the test split"):
        assert values[row][1] is None
        assert "second number" in values[row][2]["reproduced_value"]
    # a setting, a difference or the same number in the parenthesis is no second value
    for row in ("Accuracy with three seeds", "Accuracy against the paper", "Accuracy restated"):
        assert values[row][:2] == (91.0, 90.5)


def test_a_column_measured_against_the_paper_is_not_the_papers_value() -> None:
    report = ("| Metric | Ours | Δ vs paper | Gap to paper | 與論文差距 |\n|---|---|---|---|---|\n"
              "| Top-1 accuracy | 76.1 | -0.3 | 0.3 | 0.3 |\n")
    (claim,) = read_report("REPORT.md", report)
    # still a claims table (ours against the paper): ours read, the paper's value absent
    assert (claim.extraction.reported, claim.extraction.reproduced) == (None, 76.1)
    assert "no column of the table holds the reported value" in \
        claim.extraction.absent["reported_value"]


def test_a_column_of_a_sides_text_or_question_holds_no_value() -> None:
    report = ("| Claim | Paper section | Paper | Ours | Reproduced? |\n|---|---|---|---|---|\n"
              "| The loss falls below a fifth | 4.2 | 0.2 | 0.19 | ✅ yes |\n\n"
              "| Claim | Paper | Reproduction status |\n|---|---|---|\n"
              "| The large model wins | 3.0 | 3/3 seeds |\n")
    first, second = read_report("REPORT.md", report)
    assert first.extraction.reported == 0.2 and first.extraction.verdict == Verdict.verified
    # a status column is the verdict's, not ours: "3/3 seeds" is no reproduced value
    assert second.extraction.reproduced is None and second.extraction.verdict is None


def test_a_verdict_column_may_come_first() -> None:
    report = ("| Verdict | Claim | Paper | Ours |\n|---|---|---|---|\n"
              "| ✅ | The loss falls below a fifth | 0.2 | 0.19 |\n"
              "| ❌ | The large model wins | 3.0 | 1.0 |\n\n"
              "| Verdict | Meaning |\n|---|---|\n| ✅ | within tolerance |\n")
    assert _titled_verdicts("REPORT.md", report) == [
        ("The loss falls below a fifth", Verdict.verified),
        ("The large model wins", Verdict.falsified)]  # a legend states no claim


def test_a_percent_against_a_fraction_is_not_compared() -> None:
    report = ("| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| Accuracy on the test set | 91.2% | 0.3001 | ❌ |\n"
              "| Accuracy on the dev set | 91.2% | 90.1% | ✅ |\n")
    values = _values(report)
    reported, reproduced, absent = values["Accuracy on the test set"]
    assert (reported, reproduced) == (91.2, None)
    assert "different scales" in absent["reproduced_value"]
    assert values["Accuracy on the dev set"][:2] == (91.2, 90.1)


def test_a_results_key_naming_a_spread_or_a_comparison_is_no_sides_value(tmp_path: Path
                                                                          ) -> None:
    import json

    from judging.intake.extract import key_side

    assert [key_side(k) for k in ("paper_acc", "ours_acc", "paper_std", "ours_ci_low",
                                  "diff_vs_paper", "tolerance_paper", "delta_reproduced",
                                  "observed_final_mae_ratio")] == \
        ["reported", "reproduced", None, None, None, None, None, "reproduced"]
    report = "# Repro\n\n### Claim 1: The loss falls below a fifth ✅\n\nIt does.\n"
    folder = space(tmp_path, {"README.md": FRONT + report, "results/summary.json": json.dumps(
        {"ours_loss": 0.19, "ours_loss_std": 0.01, "diff_vs_paper": -0.01})})
    (claim,) = load_folder(folder, logbooks_dir=tmp_path / "out").claims
    assert (claim.claim.reported_value, claim.claim.reproduced_value) == (None, 0.19)


def test_two_results_files_giving_one_side_differently_leave_it_absent(tmp_path: Path
                                                                       ) -> None:
    import json

    report = "# Repro\n\n### Claim 1: The loss falls below a fifth ✅\n\nIt does.\n"
    folder = space(tmp_path, {"README.md": FRONT + report,
                              "results/first.json": json.dumps({"reproduced": 0.19}),
                              "results/second.json": json.dumps({"reproduced": 0.25,
                                                                 "paper": 0.2})})
    (claim,) = load_folder(folder, logbooks_dir=tmp_path / "out").claims
    assert claim.claim.reported_value == 0.2 and claim.claim.reproduced_value is None
    reason = claim.claim.absent["reproduced_value"]
    assert reason.startswith("the Space's files disagree: ") and "0.19" in reason \
        and "0.25" in reason


def test_a_claims_parts_are_claims_of_their_own_not_a_second_claim(tmp_path: Path) -> None:
    report = ("| ID | Claim | Paper | Ours | Verdict |\n|---|---|---|---|---|\n"
              "| C2 | Accuracy holds on both sets | 91.0 | 90.0 | ✅ |\n"
              "| C2.1 | on the dev set | 92.0 | 85.0 | ❌ |\n"
              "| C2a | on the test set | 90.0 | 89.0 | ✅ |\n\n"
              "| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| ↳&nbsp;the held-out split | 90.5 | 88.0 | ⚠️ |\n")
    loaded = load_folder(space(tmp_path, {"README.md": FRONT + report}),
                         logbooks_dir=tmp_path / "out")
    assert loaded.problems == []
    claims = by_statement(loaded.claims)
    assert set(claims) == {"Accuracy holds on both sets", "on the dev set", "on the test set",
                           "the held-out split"}
    assert claims["Accuracy holds on both sets"].claim_id.endswith("/c2")
    assert claims["on the dev set"].verdict == Verdict.falsified
    assert claims["on the dev set"].reproduced_value == 85.0


def test_claim_sections_declare_their_verdict_in_the_title_or_a_label_line() -> None:
    report = ("# Report\n\n## Summary\n\n| Claim | Paper | Ours |\n|---|---|---|\n"
              "| Loss | 0.2 | 0.19 |\n\n## Results\n\n"
              "### 1. The loss falls below a fifth — reproduced\n\nIt does.\n\n"
              "### 2. The large model wins\n\n**Status:** ❌\n\n"
              "### 3. Scaling holds\n\nVerdict: partially reproduced\n\n"
              "### 4. Method\n\nA ResNet.\n\n"
              "### Claim 5: Robustness to noise\n\nStatus: reproduced\n\nVerdict: not reproduced\n")
    claims = {c.title: c.extraction for c in read_report("REPORT.md", report)}
    assert claims["The loss falls below a fifth"].verdict == Verdict.verified
    assert claims["The large model wins"].verdict == Verdict.falsified
    assert claims["The large model wins"].provenance["verdict"].quote == "**Status:** ❌"
    # a short title's words are its statement, not its verdict ("holds")
    assert claims["Scaling holds"].verdict == Verdict.inconclusive
    # labels that disagree leave the verdict absent; a numbered method section is no claim
    assert claims["Robustness to noise"].verdict is None
    assert "Method" not in claims


def test_a_numbered_heading_with_its_verdict_after_a_dash_is_one_claim() -> None:
    report = ("## 1. The loss falls below a fifth — reproduced\n\ntext\n\n"
              "## 2. The large model wins: not reproduced\n\ntext\n\n"
              "## 3. Method: consistent hashing\n\ntext\n")
    assert _titled_verdicts("REPORT.md", report) == [
        ("The loss falls below a fifth", Verdict.verified),
        ("The large model wins", Verdict.falsified)]  # a report's "not reproduced": failed


def test_list_items_carrying_their_verdict_are_claims(tmp_path: Path) -> None:
    report = ("# Report\n\n## Key results\n\n"
              "- ✅ The loss falls below a fifth after ten thousand steps\n"
              "- The large model beats every baseline (❌)\n"
              "- ⚠️ Scaling to a billion parameters holds\n\n"
              "## Claims\n\n1. Recall rises with the memory size — **reproduced**\n"
              "2. Training converges within fifty episodes: **not reproduced**\n\n"
              "## Features\n\n- ✅ Runs on a laptop without a GPU\n\n"
              "## Progress\n\n- [x] ✅ Download the released data set\n")
    loaded = load_folder(space(tmp_path, {"README.md": FRONT + report}),
                         logbooks_dir=tmp_path / "out")
    verdicts = {c.claim.statement: c.claim.verdict for c in loaded.claims}
    assert verdicts == {
        "The loss falls below a fifth after ten thousand steps": Verdict.verified,
        "The large model beats every baseline": Verdict.falsified,
        "Scaling to a billion parameters holds": Verdict.inconclusive,
        "Recall rises with the memory size": Verdict.verified,
        "Training converges within fifty episodes": Verdict.falsified}
    first = next(c.claim for c in loaded.claims if c.claim.verdict == Verdict.verified)
    assert first.provenance["verdict"].quote == \
        "- ✅ The loss falls below a fifth after ten thousand steps"


def test_a_column_of_verdict_words_is_the_verdict_column_a_value_column_is_not() -> None:
    report = ("| Claim | Result |\n|---|---|\n| The loss falls below a fifth | Reproduced |\n"
              "| The large model beats every baseline | Refuted |\n"
              "| Scaling holds at a billion parameters | Partially |\n\n"
              "| Method | Paper WER | Reproduced WER |\n|---|---|---|\n"
              "| Dense half precision | 3.9 | N/A |\n| Four-bit weights | 3.6 | 2.88 |\n"
              "| Eight-bit weights | 3.7 | N/A |\n")
    claims = {c.title: c.extraction for c in read_report("REPORT.md", report)}
    assert [claims[t].verdict for t in ("The loss falls below a fifth",
                                        "The large model beats every baseline",
                                        "Scaling holds at a billion parameters")] == [
        Verdict.verified, Verdict.falsified, Verdict.inconclusive]
    # "N/A" in a column of our values is no verdict: the column stays ours
    assert claims["Four-bit weights"].reproduced == 2.88


def test_a_claim_heading_without_a_title_states_its_claim_in_its_first_paragraph() -> None:
    report = ("# Repro\n\n## Summary\n\n| Metric | Paper | Ours |\n|---|---|---|\n"
              "| AUC | 0.95 | 0.93 |\n\n## Claim 1\n\n**Verdict:** reproduced\n\n"
              "The AUC on the test split stays above nine tenths. More text here.\n\n"
              "## Claim 2\n\nThe loss falls below a fifth.\n\nVerdict: not reproduced\n")
    claims = {c.title: c for c in read_report("REPORT.md", report)}
    one = claims["The AUC on the test split stays above nine tenths."]
    assert one.number == 1 and one.extraction.verdict == Verdict.verified
    assert one.extraction.provenance["statement"].quote == \
        "The AUC on the test split stays above nine tenths. More text here."
    assert claims["The loss falls below a fifth."].extraction.verdict == Verdict.falsified


@pytest.mark.parametrize(("sentence", "pair"), [
    ("The paper reports 94.1% and we measured 93.8%.", (94.1, 93.8)),
    ("The paper reports 0.2 loss and we measured 0.19 loss.", (0.2, 0.19)),
    ("The paper reports 12 layers; we measured 0.93 accuracy.", None),
    ("The paper reports 91.2% while we measured 0.30.", None),
])
def test_a_sentence_pairs_two_numbers_only_of_one_measure(sentence: str, pair) -> None:
    from judging.intake.extract import sentence_values

    values = {v.side: v.value for v in sentence_values(sentence)}
    assert (values["reported"], values["reproduced"]) == pair if pair else values == {}


def test_a_count_against_a_percent_or_a_row_saying_not_comparable_gives_no_pair() -> None:
    report = ("| Claim | Paper | Ours | Notes |\n|---|---|---|---|\n"
              "| Issues resolved on the test split | 54/300 | 18.0% | |\n"
              "| Issues resolved on the dev split | 18.0% | 20.0% | not directly comparable |\n"
              "| Issues resolved on the full split | 54/300 | 55/300 | |\n")
    values = _values(report)
    assert values["Issues resolved on the test split"][:2] == (54, None)
    reported, reproduced, absent = values["Issues resolved on the dev split"]
    assert reported is reproduced is None and "not comparable" in absent["reported_value"]
    assert values["Issues resolved on the full split"][:2] == (54, 55)


def test_a_results_rows_own_index_is_not_a_claims_number(tmp_path: Path) -> None:
    import json

    report = ("| ID | Claim | Verdict |\n|---|---|---|\n| C1 | The loss falls below a fifth | ✅ |\n"
              "| C2 | The large model wins | ❌ |\n")
    rows = [{"id": i, "reproduced_loss": 0.1 * i} for i in range(1, 4)]
    folder = space(tmp_path, {"README.md": FRONT + report,
                              "results/per_seed.json": json.dumps(rows),
                              "results/claims.csv": "claim_id,paper,ours\nC2,3.0,1.0\n",
                              "results/items.csv": "id,reproduced\n1,0.5\n2,0.6\n"})
    claims = by_statement(load_folder(folder, logbooks_dir=tmp_path / "out").claims)
    assert claims["The loss falls below a fifth"].reproduced_value is None
    two = claims["The large model wins"]
    assert (two.reported_value, two.reproduced_value) == (3.0, 1.0)


def test_a_bold_claim_and_the_verdict_after_it_are_one_claim() -> None:
    report = ("## Results\n\n- **Loss falls below a fifth:** reproduced; we measured 0.19.\n"
              "- **Large model beats the baselines:** not reproduced, ours loses by 3 points.\n"
              "- **Dataset:** CIFAR-10, from scratch.\n\n"
              "**Recall rises with memory size.** Refuted: it falls.\n")
    assert _titled_verdicts("README.md", report) == [
        ("Loss falls below a fifth", Verdict.verified),
        ("Large model beats the baselines", Verdict.falsified),
        ("Recall rises with memory size", Verdict.falsified)]


def test_items_under_a_heading_or_lead_naming_claims_are_claims_with_no_verdict() -> None:
    report = ("# Report\n\n## Claims tested\n\n1. The loss falls below a fifth.\n"
              "2. The large model beats every baseline.\n\n## Setup\n\n"
              "We test two claims of the paper:\n\n- Recall rises with the memory size.\n"
              "- Training converges within fifty episodes.\n\n## 结论\n\n"
              "- 论文主张二：大模型胜出 —— 未复现\n\n## Progress\n\n- [x] The claims were listed\n\n"
              "## Results\n\n| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
              "| The loss falls below a fifth | 0.2 | 0.19 | ✅ |\n")
    reading = read_reports([("README.md", report)])
    assessed = {c.title: c.extraction.verdict for c in reading.claims}
    assert assessed == {"论文主张二：大模型胜出": Verdict.falsified,
                        "The loss falls below a fifth": Verdict.verified}
    # the listed claims with no verdict, but the one the table assesses, read there only
    stated = {c.title: c.extraction for c in reading.stated}
    assert set(stated) == {"The large model beats every baseline.",
                           "Recall rises with the memory size.",
                           "Training converges within fifty episodes."}
    assert all(ex.verdict is None and "declares no verdict" in ex.absent["verdict"]
               for ex in stated.values())


def test_a_value_a_looser_reader_took_from_a_cell_of_several_numbers_is_dropped() -> None:
    from judging.intake.extract import Extraction
    from judging.intake.freeform import keep_single_numbers
    from judging.models import FieldProvenance

    row = "| C2 | Efficiency plateaus | 4.45 bpt @200k, flat after ~50k | 5.80 |"
    ex = Extraction(reported=4.45, reproduced=5.8)
    for name in ("reported_value", "reproduced_value"):
        ex.provenance[name] = FieldProvenance(how="declared", quote=row, place="table cell")
    keep_single_numbers(ex)
    assert (ex.reported, ex.reproduced) == (None, 5.8)
    assert "more than one number" in ex.absent["reported_value"]


def test_a_row_the_paper_states_nothing_for_gives_no_reproduced_value() -> None:
    report = ("| Dataset | Paper | Ours | Status |\n|---|---|---|---|\n"
              "| In domain | 39.0 | 38.9 | ✅ |\n| Out of domain | — | 4.27 | ❌ failure |\n")
    first, second = read_report("README.md", report)
    assert first.extraction.reproduced == 38.9
    assert second.extraction.reproduced is None
    assert "reproducer's own number" in second.extraction.absent["reproduced_value"]


def test_a_later_sentence_naming_the_paper_under_its_findings_is_a_finding_of_its_own() -> None:
    report = ("## The original finding\n\nRecall is U-shaped over the position of the answer.\n"
              "In the paper's sharpest result, recall in the middle falls below the\n"
              "closed-book baseline. We used one GPU.\n")
    stated = read_reports([("README.md", report)]).stated
    assert [c.title for c in stated] == [
        "Recall is U-shaped over the position of the answer. In the paper's sharpest result, "
        "recall in the middle falls below the closed-book baseline. We used one GPU.",
        "In the paper's sharpest result, recall in the middle falls below the closed-book "
        "baseline."]
    assert stated[1].extraction.provenance["statement"].quote == \
        "In the paper's sharpest result, recall in the middle falls below the"
    assert all(c.extraction.verdict is None for c in stated)
