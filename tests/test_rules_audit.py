"""The falsification-audit rules: the proof script is present, its run is logged to its end (exit
code 0 where recorded, no traceback at the end), the problem kind, and the consensus fact."""

from __future__ import annotations

import pytest

from judging.intake.manifest import load_submission
from judging.models import ClaimInput, Signal
from judging.rules import (
    consensus_agrees,
    ends_in_traceback,
    problem_kind_given,
    proof_run_logged,
    proof_script_present,
)
from tests.conftest import SubmissionBuilder

PROOF = "import json\nprint('overlap 1893 of 5000')\n"


def _falsified(submission: SubmissionBuilder, *, proof: str | bytes | None = PROOF,
               logs: dict[str, str] | None = None, kind: str | None = "code-bug") -> ClaimInput:
    evidence = {"script": submission.file("run.py", "print('run')\n"),
                "logs": [submission.file(name, text) for name, text in (logs or {}).items()],
                "proof_script": submission.file("proof.py", proof) if proof is not None
                else None, "problem_kind": kind}
    submission.claims.clear()  # one claim per call: the builder is reused within a test
    submission.number_claim(reported=94.1, reproduced=91.2, verdict="falsified", log=None,
                            evidence=evidence)
    (claim,) = load_submission(submission.write()).claims
    return claim


def test_the_proof_script_must_be_a_present_text_file(submission: SubmissionBuilder) -> None:
    assert proof_script_present(_falsified(submission), {}).value is True
    assert proof_script_present(_falsified(submission, proof=None), {}).rationale == \
        "no proof_script is named"
    binary = proof_script_present(_falsified(submission, proof=b"\x7fELF\x00\x01"), {})
    assert binary.value is False and "binary" in binary.rationale
    empty = proof_script_present(_falsified(submission, proof=""), {})
    assert empty.value is False and "empty" in empty.rationale


@pytest.mark.parametrize("log, passes, why", [
    ("$ python proof.py\noverlap 1893 of 5000\n", True, "line 1"),
    # a logbook run cell's log: the exit code is recorded
    ("command: python proof.py\nexit code: 0\nduration: 3 s\npage: p\ncell: c\n--- output ---\n"
     "overlap 1893 of 5000\n", True, "exit code 0"),
    ("command: python proof.py\nexit code: 1\n--- output ---\noverlap\n", False, "exit code 1"),
    ("$ python proof.py\nstarting\nTraceback (most recent call last):\n  File \"proof.py\", "
     "line 2, in <module>\n    main()\nValueError: units mismatch\n", False, "traceback"),
    # a caught exception printed by a run that went on is not a failed run
    ("$ python proof.py\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
     "KeyError: 'a'\nretrying\nstep 1\nstep 2\nstep 3\noverlap 1893 of 5000\n", True, "line 1"),
    ("$ python proof.py\n", False, "no output"),
    # no cited log can be tied to the script: no answer (a person reads the log)
    ("val_loss 0.19\nfinal top1 91.20\n", None, "no cited log can be tied"),
])
def test_the_proof_run_is_logged_to_its_end(submission: SubmissionBuilder, log: str,
                                             passes: bool, why: str) -> None:
    result = proof_run_logged(_falsified(submission, logs={"logs/run.txt": log}), {})
    assert result.value is passes, result.rationale
    assert why in result.rationale


def test_a_log_named_after_the_proof_counts_with_less_confidence(
        submission: SubmissionBuilder) -> None:
    result = proof_run_logged(_falsified(submission, logs={"logs/proof.txt": "overlap 1893\n"}),
                              {})
    assert result.value is True and "named after" in result.rationale
    assert result.confidence == 0.7


def test_no_proof_no_answer(submission: SubmissionBuilder) -> None:
    # proof_script_present answers "no"; whether a run was logged cannot be asked.
    result = proof_run_logged(_falsified(submission, proof=None,
                                         logs={"logs/run.txt": "$ python proof.py\nok\n"}), {})
    assert result.value is None and "no proof_script" in result.rationale


def test_a_sound_falsification_whose_log_is_not_named_after_the_proof(
        submission: SubmissionBuilder) -> None:
    # proof.py's own log is logs/proof_c1.txt and does not print the command: it cannot be
    # tied to the script, so the rule abstains (it used to answer "no").
    result = proof_run_logged(_falsified(submission, logs={
        "logs/proof_c1.txt": "overlap 1893 of 5000 test images are in the training set\n"}), {})
    assert result.value is None and "logs/proof_c1.txt" in result.rationale
    # The same log naming a failed run of the script: "no", and why.
    failed = proof_run_logged(_falsified(submission, logs={
        "logs/proof_c1.txt": "$ python proof.py\nTraceback (most recent call last):\n"
                             "  File \"proof.py\", line 1\nOSError: data missing\n"}), {})
    assert failed.value is False and "traceback" in failed.rationale


def test_ends_in_traceback() -> None:
    assert ends_in_traceback("ok\n") is None
    assert ends_in_traceback("Traceback (most recent call last):\n  File \"a\"\nOSError: x\n"
                             "\n") == "OSError: x"
    assert ends_in_traceback("Traceback (most recent call last):\n  File \"a\", line 3\n") \
        is not None  # cut before its exception line: the run died


def test_problem_kind(submission: SubmissionBuilder) -> None:
    assert problem_kind_given(_falsified(submission), {}).value is True
    assert problem_kind_given(_falsified(submission, kind=None), {}).value is False


def test_the_consensus_fact_is_read_when_given(submission: SubmissionBuilder) -> None:
    claim = _falsified(submission)
    missing = consensus_agrees(claim, {})
    assert missing.value is None and missing.rationale.startswith("no consensus available")
    absent = consensus_agrees(claim, {"consensus.agrees": Signal.absent(
        "2 independent reproductions, fewer than 3")})
    assert absent.value is None and "fewer than 3" in absent.rationale
    assert consensus_agrees(claim, {"consensus.agrees": Signal(value=True)}).value is True
    assert consensus_agrees(claim, {"consensus.agrees": Signal(value=False)}).value \
        is False
