"""After its first pass a run reads claims.jsonl once (issue 43): the integrity check, the
consensus (for the second pass and the side file) and the second pass's claims all come from
that one read (`run.feed.StoredClaims`), where each of them read the whole file before."""

from __future__ import annotations

from pathlib import Path

import pytest

from judging.run.runner import RunRequest, run_judging
from judging.rundir.store import RunStore
from tests.conftest import SubmissionBuilder


@pytest.mark.slow  # a whole `judging run`
def test_a_run_with_a_second_pass_reads_its_claims_once(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    submission = SubmissionBuilder(tmp_path / "sub")
    submission.number_claim("paper-1/c1")
    # A falsified claim: the falsification audit judges it in the second pass.
    submission.number_claim("paper-1/c2", reproduced=80.0, verdict="falsified",
                            log="final top1 80.00\n")
    scans = []
    whole_file = RunStore.iter_claims

    def counted(store: RunStore):
        scans.append(store.root)
        yield from whole_file(store)

    monkeypatch.setattr(RunStore, "iter_claims", counted)
    out = tmp_path / "run"
    run_judging(RunRequest(sources=[str(submission.write())], out=out))
    assert len(scans) == 1
    monkeypatch.undo()
    lines = list(RunStore.open(out, create=False).latest())
    audited = {str(j.claim) for j in lines
               if j.rubric is not None and j.rubric.id == "falsification-audit"}
    assert audited == {"tester/sub-1::paper-1/c2"}
    assert (out / "consensus.json").is_file() and (out / "integrity.json").is_file()
