"""The consensus's inputs hash, now streamed (issue 43), is the hash the whole-file code gave:
`content_hash` of the lines' fields, the claim keys, the finals and every integrity pair dumped,
computed here as that code did, on a run with copies, constructed pairs and a final verdict; and
the consensus holds none of the pairs (a large run has tens of thousands)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from judging.consensus import compute_consensus, is_current
from judging.consensus.build import inputs_hash, read_final_verdicts
from judging.hashing import content_hash
from judging.models import ClaimKey, IntegrityPair
from judging.rundir import RunPaths, RunStore, read_integrity, write_integrity
from tests.consensus.test_rules import LONG, _run


def _whole_file_hash(store: RunStore) -> str:
    """`inputs_hash` as it was before it streamed (c598110): every pair read as a model and
    dumped into one dict with the lines and the claim keys."""
    integrity = read_integrity(store.root)
    lines = sorted((str(j.claim), str(j.rubric), j.judge, j.sample, j.input_hash)
                   for j in store.iter_latest_heads())
    found = {"lines": lines, "claims": sorted(store.claim_keys()),
             "pairs": [p.model_dump(mode="json") for p in integrity.pairs]}
    finals = read_final_verdicts(store)
    if finals:
        found["finals"] = sorted(finals.items())
    return content_hash(found)


def _hashes(run: Path) -> tuple[str, str]:
    store = RunStore.open(run, create=False)
    try:
        return inputs_hash(store), _whole_file_hash(store)
    finally:
        store.close()


def test_the_streamed_hash_is_the_whole_file_hash(tmp_path: Path) -> None:
    copied = {"justification": LONG}
    run = _run(tmp_path, [{"value": 80.0, **copied}, {"value": 80.0, **copied},
                          {"value": 80.1}, {"value": 79.9}])
    integrity = read_integrity(run)
    assert integrity.pairs  # the copies make pairs of their own
    streamed, whole = _hashes(run)
    assert streamed == whole
    report = compute_consensus(run)
    assert report.inputs_hash == whole and is_current(run, report)

    # Constructed pairs: every kind, a float that prints long, a key outside ASCII, and pairs
    # that name claims the run does not have (hashed, never grouped).
    extra = [IntegrityPair(kind=kind, a=ClaimKey(submission_id=f"équipe{n}/p", claim_id="p/c"),
                           b=ClaimKey(submission_id="team0/p", claim_id="p/c"),
                           score=0.1 + 0.2 * n)
             for n, kind in enumerate(["duplicate_figure", "copied_justification",
                                       "duplicate_submission"] * 3)]
    write_integrity(run, integrity.model_copy(update={"pairs": integrity.pairs + extra}))
    streamed, changed = _hashes(run)
    assert streamed == changed != whole
    assert not is_current(run, report)

    # A final verdict enters the hash (the finals part, between the claims and the lines).
    RunPaths(run).final.write_text(json.dumps(
        {"claim": {"submission_id": "team3/p", "claim_id": "p/c"},
         "final_verdict": "verified"}) + "\n", encoding="utf-8")
    streamed, with_final = _hashes(run)
    assert streamed == with_final != changed
    # The consensus is what it was: the constructed pairs name no claim of the run.
    again = compute_consensus(run)
    assert again.inputs_hash == with_final
    assert again.claims[0].independent == report.claims[0].independent == 3


def test_a_run_without_an_integrity_file_hashes_no_pairs(tmp_path: Path) -> None:
    run = _run(tmp_path, [{"value": 80.0}, {"value": 80.1}, {"value": 79.9}])
    RunPaths(run).integrity.unlink()
    streamed, whole = _hashes(run)
    assert streamed == whole


#: Bytes the consensus may grow by per integrity pair: the pairs are read one at a time and none is
#: kept (the copies between registry claims are, as two keys); read whole as models and dumped for
#: the hash, each pair cost about 2.9 KB (57 MB of tracemalloc's peak for 20,000 pairs).
HELD_PER_PAIR = 200


def _peak(run: Path) -> int:
    tracemalloc.start()
    try:
        compute_consensus(run)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_consensus_holds_no_pair(tmp_path: Path) -> None:
    run = _run(tmp_path, [{"value": 80.0}, {"value": 80.1}, {"value": 79.9}])
    alone = _peak(run)
    pairs = 5000
    keys = [ClaimKey(submission_id=f"team{n}/p", claim_id=f"p/c{n}") for n in range(100)]
    integrity = read_integrity(run)
    write_integrity(run, integrity.model_copy(update={"pairs": [
        IntegrityPair(kind="duplicate_submission", a=keys[n % 100], b=keys[(n * 7 + 1) % 100],
                      score=n / pairs) for n in range(pairs)]}))
    assert _peak(run) - alone < pairs * HELD_PER_PAIR
