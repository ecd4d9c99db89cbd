"""The deterministic value rules on hand-written claim texts (no real logbook is read)."""

from __future__ import annotations

from judging.intake.logbook.claims import statement_text
from judging.intake.logbook.extract import extract, result_number, statement_number


def run(prose: str, statement: str | None = None):
    return extract(prose, page_text=prose, cell_titles=[],
                   statement_text=statement if statement is not None
                   else statement_text("Claim 1: a claim", prose))


def test_statement_number_is_the_reported_value_and_result_bold_the_reproduced() -> None:
    prose = ("## Literal claim\n\n> Method X reduces MAE by up to 26.8% on Y (`0.623` versus "
             "`0.851`).\n\n## Result\n\n**PARTIAL.** We get **26.79%** on arXiv:2602.03061.\n")
    ex = run(prose)
    assert (ex.reported, ex.reproduced) == (26.8, 26.79)
    for name in ("reported_value", "reproduced_value"):
        assert ex.provenance[name].how == "pattern"
        assert ex.provenance[name].quote in prose


def test_equation_result_and_code_span_in_a_result_section() -> None:
    assert result_number("## Results\n\nExact arithmetic gives `100 × (0.851−0.623)/0.851 = "
                         "26.7920%`.\n")[0] == 26.792
    assert result_number("**Assessment: verified.** All 96 plans keep slack `0.01197`.\n"
                         )[0] == 0.01197
    assert result_number("## Verdict\n\nAt k=1 and N=4000 nothing else.\n") is None


def test_ignored_numbers_references_ids_dates_sizes_settings_exponents() -> None:
    assert statement_number("Theorem 4.5 (the anchor cites this as Theorem 4.1; v2 numbers it "
                            "4.5) holds for N=1,000 samples on 2026-07-19") is None
    assert statement_number("ITW EER: SONAR-Full 6.00% vs XLSR+AASIST 10.46%")[0] == 6.0
    assert statement_number("`√N(θ̂ − θ) → N(0, σ²)` converges in 12 epochs")[0] == 12
    assert result_number("## Result\n\nmax error `4.68e-14` in Section 3.2\n")[0] == 4.68e-14
    ex = run("Results in arXiv 2602.03061 measured over 4,000 replicates.\n", statement="")
    assert ex.reproduced is None and "reproduced_value" in ex.absent


def test_run_output_key_value_lines_and_the_prose_rounding() -> None:
    prose = ("The paper's ratio is `0.2189`.\n\n````output\npaper_v1_final_mae_ratio="
             "0.2188679245283019\nobserved_final_mae_ratio=0.22220327515221\nseed=42\n````\n")
    ex = run(prose, statement="")
    assert ex.reported == 0.2189 and ex.provenance["reported_value"].quote == "0.2189"
    assert ex.reproduced == 0.22220327515221
    assert ex.provenance["reproduced_value"].quote.startswith("observed_final_mae_ratio=")


def test_bold_in_a_table_is_a_cell_not_the_result() -> None:
    assert result_number("## Result\n\n| σ | VR |\n|---|---|\n| 0.08 | **0.0846** |\n") is None
