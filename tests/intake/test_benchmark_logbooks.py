"""benchmarks/logbooks.py on a labelled set built here (the real sets are read by the benchmark,
never by tests): the measures per set, overall and leave-one-logbook-out, and how a value or a
verdict given where the label has none counts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.intake.test_logbook import cell, write_page

ROOT = Path(__file__).resolve().parents[2]


def _label(logbook: str, page: str, n: int | None, **fields) -> dict:
    return {"logbook": logbook, "paper_id": "Bench0001", "page": page, "claim_index": n,
            "reported": None, "reproduced": None, "self_verdict": None, "verdict_3way": None,
            "toy": False, **fields}


def test_the_benchmark_measures_a_small_labelled_set(tmp_path: Path) -> None:
    data = tmp_path / "set"
    for name in ("a", "b"):
        (data / name).mkdir(parents=True)
        (data / name / "logbook.json").write_text(json.dumps({"tags": ["paper-Bench0001"]}))
    write_page(data / "a", "claim-1-x", "# Claim 1: x" + cell("markdown")
               + "**Verdict: VERIFIED**\n\nThe paper reports 0.5 and we measured 0.52.\n")
    write_page(data / "a", "claim-2-y", "# Claim 2: y" + cell("markdown")
               + "The loss went up.\n")
    write_page(data / "b", "claim-1-z", "# Claim 1: z" + cell("markdown")
               + "**Verdict: FALSIFIED**\n\nThe paper reports 3 and we measured 7.\n")
    labels = [
        _label("a", "claim-1-x", 1, reported=0.5, reproduced=0.52, self_verdict="VERIFIED",
               verdict_3way="verified"),
        _label("a", "claim-2-y", 2, self_verdict="went up", verdict_3way="falsified"),
        # the label has no value and no verdict here: what the loader gives counts as wrong
        _label("b", "claim-1-z", 1),
    ]
    (data / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "logbooks.py"), "--data",
                           str(data), "--misses"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    rows = {line.split("  ")[0].strip(): line for line in out.splitlines() if "  " in line}
    assert "3/3 100.0%" in rows["claims found"]
    assert "1/2 50.0%" in rows["verdict (3-way)"]
    assert "1/2 50.0%" in rows["verdict precision"] and "BELOW" in rows["verdict precision"]
    assert "2/2 100.0%" in rows["values"]
    assert "2/4 50.0%" in rows["value precision"]
    assert "leave-one-logbook-out" in out
    assert "claim-2-y #2: no verdict, label falsified" in out
