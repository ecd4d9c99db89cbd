"""The consensus rules (docs/explanation/consensus.md): the majority direction among independent,
full-scale reproductions; modified z-scores with the deviation floored at the tolerance; copies
count once; toy runs are shown, not counted."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest
import yaml

import judging.consensus.rules as rules
from judging.consensus import compute_consensus, consensus_verdict, modified_z, value_scale
from judging.run.runner import RunRequest, run_judging
from tests.conftest import SubmissionBuilder

LONG = ("We trained the released model for the full schedule on eight GPUs and evaluated the "
        "final checkpoint on the held-out split three times with different seeds, averaging.")


@pytest.mark.parametrize(("votes", "verdict", "support", "why"), [
    ({"verified": 3}, "verified", 3, "3 of 3"),
    ({"falsified": 4, "verified": 1}, "falsified", 4, "4 of 5"),
    ({"verified": 3, "falsified": 2}, "verified", 3, "3 of 5"),
    ({"verified": 2}, None, 0, "too few"),
    ({"verified": 2, "inconclusive": 0}, None, 0, "too few"),
    ({"verified": 3, "falsified": 3}, None, 0, "a tie"),
    ({"verified": 3, "inconclusive": 3}, None, 0, "no majority"),
    ({"verified": 3, "falsified": 1, "inconclusive": 2}, None, 0, "no majority"),
    ({"inconclusive": 5}, None, 0, "inconclusive"),
    ({}, None, 0, "no independent"),
])
def test_consensus_verdict(votes, verdict, support, why) -> None:
    got, n, reason = consensus_verdict(votes)
    assert (got, n) == (verdict, support) and why in reason


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(rules).failed == 0


def test_the_tolerance_floors_the_deviation() -> None:
    # Three equal values: the MAD is 0, and without the floor every other value would be an
    # outlier. Floored at the tolerance, a value within a tolerance or so is not.
    median, mad, scale = value_scale([80.0, 80.0, 80.0, 80.3], floor=0.5)
    assert (median, mad, scale) == (80.0, 0.0, 0.5)
    assert abs(modified_z(80.3, median=median, scale=scale)) < 3.5
    assert modified_z(83.0, median=median, scale=scale) > 3.5
    assert modified_z(80.3, median=80.0, scale=value_scale([80.0] * 3, floor=None)[2]) is None
    # With spread wider than the tolerance, the MAD decides.
    _, mad, scale = value_scale([1.0, 2.0, 3.0, 4.0, 100.0], floor=0.1)
    assert scale == mad == 1.0


def _run(tmp_path: Path, specs: list[dict], *, table: bool = False) -> Path:
    """A registry with one claim (a number, or a table of two cells) and one submission per
    spec (value(s), verdict, toy, justification)."""
    claim = ({"claim_id": "p/t", "paper_id": "p", "statement": "BLEU 27.4, chrF 57.9",
              "tolerance": {"relative": 0.02},
              "values": [{"name": "BLEU", "reported": 27.4}, {"name": "chrF", "reported": 57.9}]}
             if table else
             {"claim_id": "p/c", "paper_id": "p", "statement": "Accuracy is 80.0%",
              "reported_value": 80.0, "tolerance": {"absolute": 0.5}})
    tmp_path.mkdir(parents=True, exist_ok=True)
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"claims": [claim]}))
    folders = []
    for n, spec in enumerate(specs):
        sub = SubmissionBuilder(tmp_path / f"s{n}", f"team{n}/p", "p")
        extra = {"justification": spec.get("justification", f"Run {n}, see the logs.")}
        if spec.get("toy"):
            extra["toy"] = True
            extra["scale_note"] = "one tenth of the data"
        if table:
            sub.claims.append({"claim_id": "p/t", "kind": "table", "statement": "BLEU, chrF",
                               "tolerance": {"relative": 0.02},
                               "values": [{"name": "BLEU", "reported": 27.4,
                                           "reproduced": spec["value"][0]},
                                          {"name": "chrF", "reported": 57.9,
                                           "reproduced": spec["value"][1]}],
                               "verdict": spec.get("verdict", "verified"),
                               "evidence": {"logs": []}, **extra})
        else:
            sub.number_claim("p/c", reported=80.0, reproduced=spec["value"],
                             verdict=spec.get("verdict", "verified"), **extra)
        folders.append(sub.write())
    out = tmp_path / "run"
    run_judging(RunRequest(sources=[str(f) for f in folders], out=out, registry=registry))
    return out


def _flags(report) -> dict[str, list[str]]:
    return {key: sorted(f.name for f in flags) for key, flags in report.flags().items()}


def test_toy_runs_are_shown_not_counted(tmp_path: Path) -> None:
    run = _run(tmp_path, [{"value": 80.0}, {"value": 80.1}, {"value": 60.0, "toy": True},
                          {"value": 79.9, "verdict": "inconclusive"}, {"value": 80.2}])
    (claim,) = compute_consensus(run).claims
    assert (claim.verdict, claim.support, claim.votes) == ("verified", 3,
                                                           {"inconclusive": 1, "verified": 3})
    toy = claim.reproduction("team2/p::p/c")
    assert toy.toy and not toy.counted and toy.independent and toy.scale_note
    # The toy value is scored against the full-scale ones but not flagged: its scale explains it.
    assert toy.values[0].z < -3.5 and not toy.values[0].outlier
    assert _flags(compute_consensus(run)) == {}
    assert claim.spread[0].n == 4  # the reference: independent, full-scale values


def test_mostly_inconclusive_has_no_consensus_and_flags_no_contradiction(tmp_path: Path) -> None:
    run = _run(tmp_path, [{"value": 80.0}, {"value": 80.1}, {"value": 80.0},
                          {"value": 79.0, "verdict": "falsified"},
                          {"value": 80.0, "verdict": "inconclusive"},
                          {"value": 80.0, "verdict": "inconclusive"}])
    (claim,) = compute_consensus(run).claims
    assert claim.verdict is None and "no majority" in claim.reason
    assert "contradicts_consensus" not in str(_flags(compute_consensus(run)))


def test_copies_count_once(tmp_path: Path) -> None:
    # team0, team1 and team2 hand in one justification (a chain of copies: one group); with
    # team3 and team4 that is 3 independent reproductions, enough for a consensus of 3.
    copied = {"justification": LONG}
    run = _run(tmp_path, [{"value": 80.0, **copied}, {"value": 80.0, **copied},
                          {"value": 80.0, **copied}, {"value": 80.1}, {"value": 79.9}])
    report = compute_consensus(run)
    (claim,) = report.claims
    assert (claim.verdict, claim.support, claim.independent) == ("verified", 3, 3)
    assert _flags(report) == {"team1/p::p/c": ["not_independent"],
                              "team2/p::p/c": ["not_independent"]}
    assert [str(k) for k in claim.reproduction("team0/p::p/c").copy_of] == ["team1/p::p/c",
                                                                          "team2/p::p/c"]
    # Four copies and one other: too few independent reproductions for a consensus.
    run = _run(tmp_path / "b", [{"value": 80.0, **copied} for _ in range(4)] + [{"value": 80.0}])
    (claim,) = compute_consensus(run).claims
    assert (claim.verdict, claim.independent) == (None, 2) and "too few" in claim.reason


def test_table_cells_have_a_spread_each_with_a_relative_floor(tmp_path: Path) -> None:
    run = _run(tmp_path, [{"value": (27.3, 57.9)}, {"value": (27.4, 58.0)},
                          {"value": (27.5, 57.8)}, {"value": (27.4, 41.0)}], table=True)
    report = compute_consensus(run)
    (claim,) = report.claims
    spreads = {s.name: s for s in claim.spread}
    assert set(spreads) == {"BLEU", "chrF"}
    assert spreads["BLEU"].floor == pytest.approx(0.02 * 27.4)
    assert spreads["chrF"].floor == pytest.approx(0.02 * 57.9)
    assert [str(k) for k in spreads["chrF"].outliers] == ["team3/p::p/t"]
    assert spreads["BLEU"].outliers == []
    (flag,) = report.flags()["team3/p::p/t"]
    assert flag.name == "value_outlier" and "(chrF) 41" in flag.detail


def test_the_command_without_registry_claims_and_on_a_bad_folder(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from judging.cli import main

    sub = SubmissionBuilder(tmp_path / "s", "team/p", "p")
    sub.number_claim("p/own")
    out = tmp_path / "run"
    run_judging(RunRequest(sources=[str(sub.write())], out=out))
    result = CliRunner().invoke(main, ["consensus", str(out)])
    assert result.exit_code == 0 and "no registry claim in this run" in result.output
    result = CliRunner().invoke(main, ["consensus", str(out), "--json"])
    assert result.exit_code == 0 and '"schema": "judging.consensus/1"' in result.output
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(main, ["consensus", str(empty)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1

