"""The deterministic value and verdict rules on hand-written texts (no real logbook is read):
values only from declared places, labels only from declared places, conflicts left absent."""

from __future__ import annotations

from judging.intake.extract import (
    IN_PROSE,
    Extraction,
    Label,
    choose_values,
    decide_verdict,
    heading_label,
    output_values,
    sentence_values,
    table_values,
    text_labels,
)
from judging.models import Verdict


def values_of(prose: str, values) -> Extraction:
    ex = Extraction()
    choose_values(ex, values, prose, prose)
    return ex


def test_a_number_in_prose_is_absent_with_the_reason_never_the_first_number() -> None:
    prose = ("## Literal claim\n\n> Method X reduces MAE by up to 26.8% on Y (`0.623` versus "
             "`0.851`).\n\n## Result\n\n**PARTIAL.** We get **26.79%** with a bound 3Be^(2B); "
             "the float check gives 1e-14.\n")
    ex = values_of(prose, sentence_values(prose))
    assert ex.reported is None and ex.reproduced is None
    assert ex.absent["reported_value"] == IN_PROSE
    assert ex.absent["reproduced_value"] == IN_PROSE
    ex = values_of("No numbers at all here.", [])
    assert "no number" in ex.absent["reported_value"]


def test_one_sentence_pairing_both_sides_gives_both_values_with_the_quote() -> None:
    prose = "The paper reports 1.5 and we measured 0.9 on the test split.\n"
    ex = values_of(prose, sentence_values(prose))
    assert (ex.reported, ex.reproduced) == (1.5, 0.9)
    for name in ("reported_value", "reproduced_value"):
        assert ex.provenance[name].how == "declared"
        assert ex.provenance[name].place == "sentence pairing both"
        assert ex.provenance[name].quote in prose
    # one side alone is not a pairing; a reference number is not a value
    assert sentence_values("The paper reports 1.5 in its abstract.") == []
    assert sentence_values("The paper reports Table 3 and we measured 0.9.") == []


def test_run_output_keys_naming_a_side_and_json_lines() -> None:
    output = ("paper_v1_final_mae_ratio=0.2188679245283019\nobserved_final_mae_ratio=0.2222\n"
              "seed=42\ntarget_entropy=5.05\nmax_error=1e-14\npaper_batch_size=256\n"
              "measured_seed=3\n"
              '{"reported_value": 94.1, "measured_accuracy": 93.8, "n": 4000}\n')
    found = {(v.side, v.value, v.place) for v in output_values(output)}
    assert found == {("reported", 0.2188679245283019, "run output key=value"),
                     ("reproduced", 0.2222, "run output key=value"),
                     ("reported", 94.1, "run output JSON"),
                     ("reproduced", 93.8, "run output JSON")}


def test_several_values_for_one_side_from_one_place_are_ambiguous() -> None:
    output = "measured_loss=0.5\nmeasured_acc=0.9\n"
    ex = values_of(output, output_values(output))
    assert ex.reproduced is None
    assert "2 different values" in ex.absent["reproduced_value"]


def test_a_table_row_reads_only_paper_and_ours_columns() -> None:
    header = ["Paper statement", "Paper prediction", "Observed evidence", "Assessment"]
    row = ["Theorems 4.2-4.3", "bias `= 0`", "maximum `4.68e-14`", "**Aligned**"]
    values = table_values(header, row, "| raw |")
    assert {(v.side, v.value) for v in values} == {("reported", 0.0),
                                                   ("reproduced", 4.68e-14)}


def test_labels_from_declared_places_and_a_title_that_is_a_statement() -> None:
    text = ("**Assessment: verified.** A clean-room audit.\n\nLocal outcome: `mixed`.\n\n"
            "## Verdict\n\n**Not verified.**\n\n- **Directly verified:** a part\n")
    labels = {(lb.text, lb.place) for lb in text_labels(text)}
    assert ("verified.", "Verdict line") in labels
    assert ("mixed.", "Verdict line") in labels
    assert ("Not verified.", "verdict heading") in labels
    assert not any("Directly" in t for t, _ in labels)  # a list item's bold lead labels a part
    assert heading_label("Claim 1 — verified") == "verified"
    assert heading_label("C3 VERIFIED at paper scale (Colab GPU)") is not None
    assert heading_label("Falsified") == "Falsified"
    assert heading_label("Claim 2 - Finite optimum") is None
    assert heading_label("Consistent hashing in practice") is None
    # a verdict word naming what follows is a caption or a section, not a label
    assert heading_label("Reproduced figure") is None
    # a claim's title states it; only a verdict after the claim's name is a label
    assert heading_label("Claim 2 — Consistent estimation of the mean") is None
    assert heading_label("Claim 3: Supported decoding for long inputs") is None
    assert heading_label("Current Claim 1 — VERIFIED") == "VERIFIED"
    captions = text_labels("**Reproduced figure 3.** below\n\n## Verified claims\n\n"
                           "**Mechanism reproduced.**\n")
    assert [lb.text for lb in captions] == ["Mechanism reproduced"]


def test_conflicting_labels_are_left_for_the_judge_and_a_change_takes_the_last() -> None:
    same_cell = [Label("FAIL", "**Verdict: FAIL**", "Verdict line", 1, 0, None, 0),
                 Label("VERIFIED", "**Verdict: VERIFIED**", "Verdict line", 1, 9, None, 0)]
    ex = Extraction()
    decide_verdict(ex, same_cell)
    assert ex.verdict is None and ex.contradiction is not None
    assert "conflicting labels" in ex.absent["verdict"]
    over_time = [Label("FAIL", "[FAIL] run 1", "cell title", 1, 0, "2026-07-16T10:00", 0),
                 Label("VERIFIED", "C3 VERIFIED", "cell title", 1, 5, "2026-07-17T10:00", 3)]
    ex = Extraction()
    decide_verdict(ex, over_time)
    assert ex.verdict is Verdict.verified and ex.changed == ("[FAIL] run 1", "C3 VERIFIED")
    # a lower tier disagreeing is flagged, the participant's own label stands
    mixed = [Label("VERIFIED", "**VERIFIED:**", "bold label", 2, 0),
             Label("not-verified", '"claim_2": "not-verified"', "run output JSON", 4, 9)]
    ex = Extraction()
    decide_verdict(ex, mixed)
    assert ex.verdict is Verdict.verified and ex.contradiction is not None
    # a split label is no verdict
    ex = Extraction()
    decide_verdict(ex, [Label("VERIFIED for A; FALSIFIED for B", "q", "Verdict line", 1)])
    assert ex.verdict is None and "conflicting" in ex.absent["verdict"]
    # a label declaring no verdict gives none
    ex = Extraction()
    decide_verdict(ex, [Label("Not scored as a result", "q", "claims table cell", 1)])
    assert ex.verdict is None and "verdict" in ex.absent
