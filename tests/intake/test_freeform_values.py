"""A stress set of the value shapes real reproduction reports use (issue 40), each with the
value a careful reader takes from it: a claims table's "ours / paper" in one cell, "93.1 (paper
94.0)", arrows, ranges, spreads, percent against fraction, difference and ratio columns, several
metrics or seeds, blanks, bounds, separators and decimal commas, footnote marks, emphasis, numbers
in the claim's own words, the words headers name the two sides with, claim headings carrying both
numbers, and values stated only in prose. Every report is written here from its parts; none is
copied.

Precision first: a value the reader gives must be the right one (`truth`); where the reader is
not sure it leaves the value absent with its reason. `reads` says which sides the reader is held
to give (the rest may be absent: recall, measured by `measure`)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from judging.intake import load_folder

FRONT = "---\ntitle: A reproduction\nsdk: static\n---\n"
KEY = "Top-1 accuracy on the test split"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


@dataclass(frozen=True)
class Case:
    name: str
    report: str
    paper: float | None
    """The paper's number a careful reader takes, None where none may be given."""
    ours: float | None
    reads: str = ""
    """The sides the reader is held to give: "p" paper, "o" ours."""
    key: str = KEY
    """Words of the claim's statement."""


def row(paper: str, ours: str, *, header=("Claim", "Paper", "Ours", "Verdict"),
        verdict: str = "✅") -> str:
    """A claims table of one row: the claim, then `paper` and `ours` in the header's columns."""
    cells = {"paper": paper, "ours": ours}
    out = []
    for name in header:
        low = name.lower()
        if low in ("claim", "metric"):
            out.append(KEY)
        elif low in ("verdict", "status"):
            out.append(verdict)
        else:
            out.append(cells.pop("paper" if "paper" in cells else "ours", "—"))
    return "# Reproduction\n\n" + table(list(header), [out])


def cols(header: list[str], cells: list[str]) -> str:
    """A claims table of one row whose cells are given as they stand."""
    return "# Reproduction\n\n" + table(header, [[KEY, *cells]])


CASES = [
    # -- the plain shape and the two sides in one cell
    Case("plain", row("94.0", "93.1"), 94.0, 93.1, "po"),
    Case("ours / paper cell", cols(["Claim", "Ours / Paper", "Verdict"], ["93.1 / 94.0", "✅"]),
         94.0, 93.1, "po"),
    Case("paper / ours cell", cols(["Claim", "Paper / Ours", "Verdict"], ["94.0 / 93.1", "✅"]),
         94.0, 93.1, "po"),
    Case("result (ours / paper)", cols(["Claim", "Result (ours / paper)", "Verdict"],
                                       ["93.1 / 94.0", "✅"]), 94.0, 93.1, "po"),
    Case("ours vs paper cell", cols(["Claim", "Ours vs paper", "Verdict"],
                                    ["93.1 vs 94.0", "✅"]), 94.0, 93.1),
    Case("two numbers in an ours cell", row("94.0", "93.1 / 92.7"), 94.0, None, "p"),
    Case("ours (paper X)", cols(["Claim", "Ours", "Verdict"], ["93.1 (paper 94.0)", "✅"]),
         94.0, 93.1, "o"),
    Case("ours (paper: X) beside a paper column", row("94.0", "93.1 (paper: 94.0)"),
         94.0, 93.1, "p"),
    Case("ours (paper X) against a paper column saying another", row("94.0", "93.1 (paper: 94.5)"),
         None, 93.1, "o"),
    Case("ours (original code X)", cols(["Claim", "Ours", "Verdict"],
                                        ["93.1 (original code 93.6)", "✅"]), None, 93.1),
    Case("ours (reported by the authors: X)", cols(
        ["Claim", "Ours", "Verdict"], ["93.1 (reported by the authors: 94.0)", "✅"]),
        94.0, 93.1, "po"),
    Case("result (paper X), sides unnamed", cols(["Claim", "Result", "Verdict"],
                                                 ["93.1 (paper 94.0)", "✅"]), 94.0, 93.1),
    Case("paper → ours header", cols(["Claim", "Paper → Ours", "Verdict"],
                                     ["94.1 → 93.8", "✅"]), 94.1, 93.8),
    Case("an arrow under an unnamed header", cols(["Claim", "Result", "Verdict"],
                                                  ["94.1 → 93.8", "✅"]), 94.1, 93.8),
    Case("an arrow in the ours cell", row("94.1", "94.1 → 93.8"), 94.1, 93.8, "p"),
    # -- ranges and spreads
    Case("range in ours", row("0.92", "0.91–0.93"), 0.92, None, "p"),
    Case("range with a hyphen in the paper", row("0.91-0.93", "0.90"), None, 0.90, "o"),
    Case("range in words", row("91 to 93", "92.0"), None, 92.0, "o"),
    Case("± spread", row("94.0 ± 0.2", "93.1 ± 0.3"), 94.0, 93.1, "po"),
    Case("(± spread)", row("94.0", "93.1 (±0.3)"), 94.0, 93.1, "po"),
    Case("(std X)", row("94.0", "93.1 (std 0.3)"), 94.0, 93.1, "po"),
    Case("(s.d. X)", row("94.0", "93.1 (s.d. 0.3)"), 94.0, 93.1, "po"),
    Case("(σ = X)", row("94.0", "93.1 (σ = 0.3)"), 94.0, 93.1, "po"),
    Case("(3 seeds)", row("94.0", "93.1 (3 seeds)"), 94.0, 93.1, "po"),
    Case("(n=3)", row("94.0", "93.1 (n=3)"), 94.0, 93.1, "po"),
    Case("(-0.9) after ours", row("94.0", "93.1 (-0.9)"), 94.0, 93.1, "po"),
    Case("(+0.4) after ours", row("92.7", "93.1 (+0.4)"), 92.7, 93.1, "po"),
    Case("seeds listed in one cell", row("94.0", "93.1, 92.8, 93.4"), 94.0, None, "p"),
    # -- scales
    Case("percent and percent", row("94.1%", "93.8%"), 94.1, 93.8, "po"),
    Case("fraction and fraction", row("0.941", "0.938"), 0.941, 0.938, "po"),
    Case("percent against fraction", row("94.1%", "0.938"), 94.1, None, "p"),
    Case("fraction against percent", row("0.941", "93.8%"), 0.941, None, "p"),
    Case("percent header against a fraction", cols(["Claim", "Paper (%)", "Ours", "Verdict"],
                                                   ["94.1", "0.938", "✅"]), 94.1, None, "p"),
    Case("plain numbers a hundredfold apart", row("94.1", "0.938"), 94.1, None, "p"),
    Case("hours against minutes", row("1.5 h", "95 min"), 1.5, None, "p"),
    Case("ms against s", row("12 ms", "0.013 s"), 12.0, None, "p"),
    Case("thousands suffix against a plain count", row("15k", "14,800"), 15.0, None, "p"),
    Case("one unit on both sides", row("12 ms", "13 ms"), 12.0, 13.0, "po"),
    # -- columns derived from the two sides
    *[Case(f"a {name} column", cols(["Claim", "Paper", "Ours", name, "Verdict"],
                                    ["94.0", "93.1", cell, "✅"]), 94.0, 93.1, "po")
      for name, cell in (("Δ", "-0.9"), ("diff", "-0.9"), ("Gap", "0.9"), ("Error %", "1.0"),
                         ("Rel. error", "0.96%"), ("Ratio", "0.99"), ("Speedup", "1.2x"),
                         ("x faster", "1.2"), ("Δ (pp)", "-0.9"), ("% of paper", "99.0"))],
    Case("ours and Δ vs paper only", cols(["Claim", "Ours", "Δ vs paper", "Verdict"],
                                          ["93.1", "-0.9", "✅"]), None, 93.1, "o"),
    Case("ours as a percent of the paper", cols(["Claim", "Paper", "Ours (% of paper)",
                                                 "Verdict"], ["94.0", "99.0", "✅"]),
         94.0, None, "p"),
    Case("x faster in the cells", cols(["Claim", "Paper", "Ours", "Verdict"],
                                       ["2.1x faster", "1.9x faster", "✅"]), 2.1, 1.9),
    # -- several metrics or seeds
    Case("two metrics per side", cols(["Claim", "Paper Top-1", "Paper Top-5", "Ours Top-1",
                                       "Ours Top-5", "Verdict"],
                                      ["94.0", "99.0", "93.1", "98.7", "✅"]), None, None),
    Case("two metrics in one cell with a slash", cols(
        ["Claim", "Paper (P/R)", "Ours (P/R)", "Verdict"], ["54/60", "50/58", "✅"]),
        None, None),
    Case("two metrics in one cell, spaced", cols(
        ["Claim", "Paper (Acc / F1)", "Ours (Acc / F1)", "Verdict"],
        ["94.0 / 88.0", "93.1 / 87.2", "✅"]), None, None),
    Case("a header spanning two metrics", "# Reproduction\n\n" + table(
        ["Claim", "Paper", "", "Ours", "", "Verdict"],
        [["", "Acc", "F1", "Acc", "F1", ""], [KEY, "94.0", "88.0", "93.1", "87.2", "✅"]]),
        None, None),
    Case("a side's spread column only", cols(["Claim", "Paper", "Ours (std)", "Verdict"],
                                             ["94.0", "0.3", "✅"]), 94.0, None, "p"),
    Case("a side's difference column only", cols(["Claim", "Paper", "Reproduced (Δ)",
                                                  "Verdict"], ["94.0", "-0.9", "✅"]),
         94.0, None, "p"),
    Case("a side's gain columns", cols(["Claim", "Paper gain", "Our gain", "Verdict"],
                                       ["+1.2", "+0.9", "✅"]), 1.2, 0.9, "po"),
    Case("seed columns and no ours", cols(["Claim", "Paper", "Seed 0", "Seed 1", "Seed 2",
                                           "Verdict"], ["94.0", "93.1", "92.8", "93.4", "✅"]),
         94.0, None, "p"),
    Case("two ours columns", cols(["Claim", "Paper", "Ours (seed 0)", "Ours (seed 1)",
                                   "Verdict"], ["94.0", "93.1", "92.8", "✅"]), 94.0, None, "p"),
    Case("ours (mean) beside seed columns", cols(
        ["Claim", "Paper", "Ours (mean of 3 seeds)", "Seed 0", "Seed 1", "Seed 2", "Verdict"],
        ["94.0", "93.1", "93.0", "92.9", "93.4", "✅"]), 94.0, 93.1, "po"),
    Case("an unnamed column of numbers beside ours", cols(
        ["Claim", "Paper", "Ours", "Std", "Verdict"], ["94.0", "93.1", "0.3", "✅"]),
        94.0, 93.1, "p"),
    Case("a baseline column beside ours", cols(["Claim", "Baseline", "Ours", "Verdict"],
                                               ["90.2", "93.1", "✅"]), None, 93.1),
    Case("the paper's and the code's numbers", cols(
        ["Claim", "Paper", "Original code", "Ours", "Verdict"],
        ["94.0", "93.6", "93.1", "✅"]), 94.0, 93.1, "o"),
    # -- blanks and bounds
    *[Case(f"ours {cell!r}", row("94.0", cell), 94.0, None, "p")
      for cell in ("N/A", "—", "-", "TBD", "not run", "OOM", "n.a.", "?")],
    Case("~ approximately", row("~94", "93.1"), 94.0, 93.1, "po"),
    Case("≈ approximately", row("≈ 94", "93.1"), 94.0, 93.1, "po"),
    Case("a lower bound", row(">90", "93.1"), None, 93.1, "o"),
    Case("a bound with ≥", row("≥ 90%", "93.1%"), None, 93.1, "o"),
    Case("a bound in words", row("at least 90", "93.1"), None, 93.1, "o"),
    Case("an upper bound", row("< 0.1", "0.08"), None, 0.08, "o"),
    # -- separators and decimal commas
    Case("thousands separators", row("1,024", "998"), 1024.0, 998.0, "po"),
    Case("decimal commas", row("94,0", "93,1"), 94.0, 93.1),
    Case("a decimal comma after a zero", row("0,941", "0,938"), 0.941, 0.938),
    Case("a comma thousands or decimal in a table of decimal commas",
         "# Reproduction\n\n" + table(["Claim", "Paper", "Ours", "Verdict"],
                                      [[KEY, "1,024", "1,019", "✅"],
                                       ["Loss on the dev split", "0,93", "0,95", "✅"]]),
         None, None),
    Case("a comma in a claim's words beside decimal points", "# Reproduction\n\n" + table(
        ["Claim", "Paper", "Ours", "Verdict"],
        [[KEY, "1,024", "1,019", "✅"], ["Loss with layers 1,2 frozen", "0.93", "0.95", "✅"]]),
        1024.0, 1019.0, "po"),
    # -- footnote marks and emphasis
    *[Case(f"footnote {cell!r}", row("94.0", cell), 94.0, 93.1, "po")
      for cell in ("93.1*", "93.1†", "93.1‡", "93.1^a", "93.1<sup>a</sup>", "93.1 [1]",
                   "93.1 (a)")],
    # a superscript digit may be a footnote or an exponent ("10²"): not declared
    Case("footnote '93.1¹'", row("94.0", "93.1¹"), 94.0, 93.1, "p"),
    Case("an exponent '10²'", row("100", "10²"), 100.0, None, "p"),
    *[Case(f"emphasis {cell!r}", row("94.0", cell), 94.0, 93.1, "po")
      for cell in ("**93.1**", "*93.1*", "_93.1_", "__93.1__", "`93.1`", "***93.1***",
                   "<b>93.1</b>", "**93.1** ✅", "93.1 ✅", "93.1&nbsp;", "93.1<br>(std 0.3)")],
    Case("two lines of numbers in a cell", row("94.0", "93.1<br>92.8"), 94.0, None, "p"),
    # -- numbers in the claim's own words
    Case("the paper's number in the claim, ours elsewhere", "# Reproduction\n\n" + table(
        ["Claim", "Ours", "Verdict"], [["Top-1 accuracy on the test split is 94.1%", "93.8%",
                                        "✅"]]), 94.1, 93.8, "o"),
    Case("the paper's number in the claim, a result column", "# Reproduction\n\n" + table(
        ["Claim", "Result", "Verdict"], [["Top-1 accuracy on the test split is 94.1%",
                                          "93.8%", "✅"]]), 94.1, 93.8),
    Case("the claim's number and a paper column", "# Reproduction\n\n" + table(
        ["Claim", "Paper", "Ours", "Verdict"], [["Top-1 accuracy on the test split above 90%",
                                                 "94.1", "93.8", "✅"]]), 94.1, 93.8, "po"),
    # -- the words headers name the two sides with
    *[Case(f"headers {p!r} / {o!r}", row("94.0", "93.1", header=("Claim", p, o, "Verdict")),
           94.0, 93.1, "po")
      for p, o in (("Reported", "Reproduced"), ("Original", "Measured"), ("Target", "Obtained"),
                   ("Published", "Achieved"), ("Paper value", "Our value"),
                   ("**Paper**", "**Ours**"), ("*Paper*", "*Ours*"), ("PAPER", "OURS"),
                   ("Claimed", "Observed"), ("Expected", "Actual"), ("论文", "复现"),
                   ("Paper (reported)", "Ours (measured)"), ("Authors", "This work"),
                   ("Original paper", "Replicated"))],
    Case("metric column first, sides after", row(
        "94.0", "93.1", header=("Metric", "Reported", "Reproduced", "Status")), 94.0, 93.1, "po"),
    Case("ours before the paper", row("93.1", "94.0", header=("Claim", "Ours", "Paper",
                                                                "Verdict")),
         94.0, 93.1, "po"),
    Case("a header naming both sides, no slash", cols(["Claim", "Reported (ours)", "Verdict"],
                                                      ["93.1", "✅"]), None, 93.1),
    Case("a transposed table", "# Reproduction\n\nVerdict: ✅ reproduced\n\n" + table(
        ["", "Top-1", "Top-5"], [["Paper", "94.0", "99.0"], ["Ours", "93.1", "98.7"]]),
         None, None, key="Top-1"),
    # -- claim headings carrying both numbers
    Case("claim heading (paper X, ours Y)", "# Reproduction\n\n### Claim 2: Top-1 accuracy "
         "on the test split (paper 0.82, ours 0.79) ✅\n\nWe reran the released code.\n",
         0.82, 0.79, "po"),
    Case("numbered heading — paper X, ours Y", "# Reproduction\n\n### 2. Top-1 accuracy on "
         "the test split — paper 0.82, ours 0.79 — ✅\n\nWe reran it.\n", 0.82, 0.79, "po"),
    Case("claim heading (ours X vs paper Y)", "# Reproduction\n\n### Claim 1: Top-1 accuracy "
         "on the test split ✅ (ours 0.79 vs paper 0.82)\n\nWe reran it.\n", 0.82, 0.79, "po"),
    Case("claim heading with a third number", "# Reproduction\n\n### Claim 2: Top-1 accuracy "
         "on the test split: paper 0.82, ours 0.79, baseline 0.70 ✅\n\nWe reran it.\n",
         0.82, 0.79),
    Case("claim heading naming the paper's baseline", "# Reproduction\n\n### Claim 2: Top-1 "
         "accuracy on the test split: ours (0.79) beats the paper's baseline 0.70 ✅\n", None,
         0.79),
    Case("claim heading, a percent against a fraction", "# Reproduction\n\n### Claim 2: Top-1 "
         "accuracy on the test split (paper 82%, ours 0.79) ✅\n", 82.0, None),
    Case("claim heading, hours against minutes", "# Reproduction\n\n### Claim 2: Top-1 "
         "accuracy on the test split trains in time (paper 1.5 h, ours 95 min) ✅\n", 1.5, None),
    Case("claim heading, one unit", "# Reproduction\n\n### Claim 2: Top-1 accuracy on the "
         "test split at speed (paper 12 ms, ours 13 ms) ✅\n", 12.0, 13.0, "po"),
    # -- a row with a cell missing or split: which number is under which header is not declared
    Case("a row with a cell missing", "# Reproduction\n\n| Claim | Paper | Ours | Verdict |\n"
         "|---|---|---|---|\n| " + KEY + " | 93.1 | ✅ |\n", None, None),
    Case("a row with a cell too many", "# Reproduction\n\n| Claim | Paper | Ours | Verdict |\n"
         "|---|---|---|---|\n| " + KEY + " | 10 | 94.0 | 93.1 | ✅ |\n", None, None),
    # -- values stated only in prose: absent offline
    Case("a claim section's prose", "# Reproduction\n\n## Claim 1: Top-1 accuracy on the test "
         "split ✅\n\nWe measured 93.1% against the paper's 94.0%.\n", None, None),
    Case("a list item's prose", "# Reproduction\n\n## Results\n\n- ✅ Top-1 accuracy on the "
         "test split: paper 94.0, ours 93.1\n", None, None),
    Case("a whole report's prose", "# Top-1 accuracy on the test split\n\n**Verdict:** ✅ "
         "Reproduced\n\nWe measured a top-1 accuracy of 93.1% against 94.0% in the paper.\n",
         None, None, key="Top-1"),
    Case("a whole report's prose, sides named", "# Top-1 accuracy on the test split\n\n"
         "**Verdict:** ✅ Reproduced\n\nPaper: 94.0. Ours: 93.1.\n", None, None, key="Top-1"),
    Case("a bold claim's prose", "# Reproduction\n\n**Claim 1: Top-1 accuracy on the test "
         "split**\n\nReproduced. We got 93.1 where the paper reports 94.0.\n", None, None),
]


def values(case: Case, root: Path, extra: Path | None = None
           ) -> tuple[float | None, float | None, dict[str, str]]:
    """(paper, ours, reasons) the Space loader gives the case's claim (with the files of
    `extra` beside its README); None, None when no claim states the case's words."""
    folder = root / f"alice--repro-{len(list(root.glob('alice--repro-*')))}"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(FRONT + case.report, encoding="utf-8")
    for path in extra.iterdir() if extra is not None else []:
        (folder / path.name).write_bytes(path.read_bytes())
    loaded = load_folder(folder, logbooks_dir=root / "out")
    found = [c.claim for c in loaded.claims if case.key.lower() in c.claim.statement.lower()]
    if not found:
        return None, None, {}
    claim = found[0]
    return claim.reported_value, claim.reproduced_value, dict(claim.absent)


def _same(got: float | None, want: float | None) -> bool:
    return got is not None and want is not None and abs(got - want) <= 1e-9 * max(1, abs(want))


def measure(cases: list[Case] = CASES) -> dict[str, object]:
    """Value precision (values given that are right) and recall (right values given of those a
    careful reader takes) over the stress set, and the cases of each wrong value."""
    given = right = wanted = 0
    wrong: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            paper, ours, _ = values(case, Path(tmp))
            for side, got, want in (("paper", paper, case.paper), ("ours", ours, case.ours)):
                wanted += want is not None
                if got is None:
                    continue
                given += 1
                if _same(got, want):
                    right += 1
                else:
                    wrong.append(f"{case.name}: {side} {got:g}, right {want}")
    return {"given": given, "right": right, "wanted": wanted, "wrong": wrong}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_value_given_is_right_and_the_sure_ones_are_given(case: Case, tmp_path: Path
                                                                ) -> None:
    paper, ours, absent = values(case, tmp_path)
    for side, got, want, name in (("p", paper, case.paper, "reported_value"),
                                  ("o", ours, case.ours, "reproduced_value")):
        if got is not None:
            assert _same(got, want), f"{name} {got} given, the right one is {want}"
        elif side in case.reads:
            raise AssertionError(f"{name} absent ({absent.get(name)}), {want} was to be read")


@pytest.mark.parametrize(("paper", "ours", "why"), [
    ("0.92", "0.91–0.93", "a range"),
    ("0.92", "> 0.9", "a bound"),
    ("94.0", "93.1 / 92.7", "not one number"),
    ("94.0", "93.1 (93.4 on the other split)", "second number"),
    ("1.5 h", "95 min", "different units"),
    ("15k", "14,800", "different units"),
    ("94.1", "0.938", "a hundredfold apart"),
    ("94.1%", "0.938", "different scales"),
    ("94.0", "93,1", "decimal commas and points"),
])
def test_a_value_left_absent_says_why(paper: str, ours: str, why: str, tmp_path: Path) -> None:
    case = Case("why", row(paper, ours), None, None)
    got_paper, got_ours, absent = values(case, tmp_path)
    assert got_ours is None and why in absent["reproduced_value"]
    assert got_paper is not None


@pytest.mark.slow  # the whole set through the loader: each case is also a test of its own
def test_the_stress_set_is_read_with_every_value_right() -> None:
    """The whole set at once: no value given is wrong, and most of those a reader can stake
    are given (the figure the issue reports: 135 of 192 before, with 10 wrong)."""
    got = measure()
    assert got["wrong"] == []
    assert got["right"] >= 0.85 * got["wanted"]


# -- shapes read outside this reader (space_claims: the whole-report fallback and the results
# files), left as they are here: each fails today, and the day it passes it leaves this list

def test_a_whole_reports_prose_gives_no_value_offline(tmp_path: Path) -> None:
    case = Case("whole", "# Top-1 accuracy on the test split\n\n**Verdict:** ✅ Reproduced\n\n"
                         "The paper reports 94.0% top-1; we measured 93.1%.\n", None, None,
                key="")
    assert values(case, tmp_path)[:2] == (None, None)


def test_a_results_files_percent_against_a_fraction_gives_no_pair(tmp_path: Path) -> None:
    case = Case("results", "# Reproduction\n\n" + table(["Claim", "Verdict"], [[KEY, "✅"]]),
                94.0, None)
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "results.json").write_text('{"paper_acc": 94.0, "ours_acc": 0.931}')
    paper, ours, _ = values(case, tmp_path, extra=folder)
    assert paper == 94.0 and ours is None
