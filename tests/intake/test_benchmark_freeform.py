"""benchmarks/freeform.py on a labelled set of free-form reports built here (the real set is read
by the benchmark, never by tests): how claims are matched to labels, the shares, the lockbox on
its own line, and a wrong value counted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _label(submission: str, n: int, quote: str, **fields) -> dict:
    return {"submission": submission, "paper_id": "arXiv:2601.00001", "claim_index": n,
            "claim": quote, "quote": quote, "verdict": None, "verdict_quote": None,
            "toy": False, "reported_value": None, "reproduced_value": None, "unit": None,
            "value_quote": None, "figure": None, "notes": "", **fields}


def test_the_freeform_benchmark_measures_a_small_labelled_set(tmp_path: Path) -> None:
    data = tmp_path / "set"
    (data / "alice--repro").mkdir(parents=True)
    (data / "alice--repro" / "README.md").write_text(
        "# Repro of arXiv:2601.00001\n\n| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
        "| Accuracy on the test split | 91.2 | 90.8 | ✅ |\n"
        "| Loss falls below the baseline | 0.50 | 0.71 | ❌ |\n\n"
        "The paper's robustness result is reproduced in our runs too.\n")
    (data / "bob--other").mkdir(parents=True)
    (data / "bob--other" / "README.md").write_text("# Notes\n\nNothing structured here.\n")
    labels = [
        _label("alice--repro", 1, "| Accuracy on the test split | 91.2 | 90.8 | ✅ |",
               verdict="verified", reported_value=91.2, reproduced_value=90.8),
        # the label says falsified, with other numbers: the loader's values count as wrong
        _label("alice--repro", 2, "| Loss falls below the baseline | 0.50 | 0.71 | ❌ |",
               verdict="falsified", reported_value=0.5, reproduced_value=0.7),
        _label("alice--repro", 3, "robustness result is reproduced", verdict="verified"),
        _label("bob--other", 1, "Nothing structured here."),
    ]
    (data / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "freeform.py"), "--data",
                           str(data), "--misses"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    rows = {line.split("  ")[0].strip(): line for line in out.splitlines() if "  " in line}
    # the prose sentence is a claim of its own offline, with no verdict (it needs --extract)
    assert "3/4 75%" in rows["claims found"]
    assert "2/2 100%" in rows["verdict precision"]
    assert "3/4 75%" in rows["value precision"]
    assert "1" in rows["prose claims counted"].split()[-1]
    assert "alice--repro #2: reproduced 0.71 (table cell), label 0.7" in out
    assert "alice--repro #3: no verdict, label verified" in out
    assert "bob--other #1: not found" in out and "leave-one-owner-out" in out
