"""The run store (judging.rundir.store.RunStore): opening a run directory, appending and resuming,
torn and damaged lines, the newest line per identity, stored claims and fingerprints.

The judgments, claims and fingerprints are real ones: the offline judge's run over the bundled
examples (once per module, copied before a test changes anything); lines that need a particular
identity or status are built with the constructed judgments of the calibration tests.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from judging.errors import RunStoreError
from judging.models import ClaimInput, Fingerprint, Judgment, LineStatus
from judging.run.runner import RunRequest, run_judging
from judging.rundir.store import RunInfo, RunStore, line_key, read_jsonl
from tests.conftest import REGISTRY, SUBMISSIONS
from tests.constructed import _claims, _judgment

JUDGMENTS, CLAIMS, FINGERPRINTS, RUN_JSON = ("judgments.jsonl", "claims.jsonl",
                                             "fingerprints.jsonl", "run.json")


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline judge's run over the bundled examples (read only: copy it to change it)."""
    out = tmp_path_factory.mktemp("store") / "run"
    result = run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=out, registry=REGISTRY))
    # 8 figure claims x 2 rubrics + 6 others, + the falsification audit of 3 falsified claims
    assert result.written == 25 and not result.source_errors
    return out


@pytest.fixture
def run(judged: Path, tmp_path: Path) -> Path:
    """A private copy of the examples' run."""
    return Path(shutil.copytree(judged, tmp_path / "run"))


def _raw_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


# --- opening ------------------------------------------------------------------------------------


def test_open_creates_a_run_directory(tmp_path: Path) -> None:
    store = RunStore.open(tmp_path / "new" / "run")
    assert store.root.is_dir() and list(store.root.iterdir()) == []
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", store.info.run_id)
    assert store.judgments() == [] and store.latest() == [] and store.claims() == {}
    assert store.fingerprints() == {}
    # run.json is written on request only, and a reopen reads it back.
    assert not (store.root / RUN_JSON).exists()
    store.write_info()
    again = RunStore.open(store.root, create=False)
    assert again.info == store.info
    assert json.loads((store.root / RUN_JSON).read_text())["schema"] == "judging.run/1"
    assert not list(store.root.glob("*.tmp"))


def test_an_empty_folder_or_one_with_only_diffs_may_become_a_run(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert RunStore.open(tmp_path / "empty").root == tmp_path / "empty"
    (tmp_path / "diffs-only" / "diffs").mkdir(parents=True)
    assert RunStore.open(tmp_path / "diffs-only").judgments() == []


@pytest.mark.parametrize("name", ["todo.txt", JUDGMENTS])  # judgments without run.json too
def test_a_folder_with_other_files_is_refused_and_left_alone(tmp_path: Path, name: str) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / name).write_text("x")
    with pytest.raises(RunStoreError, match="exists and is not a run directory"):
        RunStore.open(notes)
    assert sorted(p.name for p in notes.iterdir()) == [name]
    assert (notes / name).read_text() == "x"


def test_without_create_a_missing_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunStoreError, match=r"not a run directory \(no run.json\)"):
        RunStore.open(tmp_path / "nothing", create=False)
    assert not (tmp_path / "nothing").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunStoreError, match="not a run directory"):
        RunStore.open(tmp_path / "empty", create=False)


def test_a_submission_folder_is_not_suggested_as_a_run_directory() -> None:
    # `judging app SUBMISSION_FOLDER` (or report, resolve...): the way out is a run directory
    # of its own, never `--out SUBMISSION_FOLDER`, which would write a run into the submission.
    folder = SUBMISSIONS / "alice-neurips26-4821"
    with pytest.raises(RunStoreError) as raised:
        RunStore.open(folder, create=False)
    message = str(raised.value)
    assert "a submission?" in message and f"--out {folder}" not in message
    assert f"judging run {folder} --out runs/alice-neurips26-4821" in message


@pytest.mark.parametrize("content", ['{"name": "another tool"}', "not json at all"])
def test_run_json_of_another_tool_is_refused(tmp_path: Path, content: str) -> None:
    (tmp_path / RUN_JSON).write_text(content)
    with pytest.raises(RunStoreError, match="run.json: not a judging run file"):
        RunStore.open(tmp_path)


# --- append, reopen, resume ---------------------------------------------------------------------


def test_append_then_reopen_keeps_every_line_and_resumes(judged: Path, tmp_path: Path) -> None:
    source = RunStore.open(judged, create=False)
    judgments = source.judgments()
    assert len(judgments) == 25 and all(isinstance(j, Judgment) for j in judgments)

    store = RunStore.open(tmp_path / "copy")
    store.info = RunInfo(run_id=source.info.run_id, created_at=source.info.created_at)
    store.write_info()
    for judgment in judgments[:10]:
        store.append(judgment)
    assert all(store.has(line_key(j)) for j in judgments[:10])
    assert not any(store.has(line_key(j)) for j in judgments[10:])
    store.close()

    # A resumed run sees the first ten as done and appends the rest after them.
    resumed = RunStore.open(tmp_path / "copy")
    assert resumed.info.run_id == source.info.run_id
    assert [line_key(j) for j in resumed.judgments()] == [line_key(j) for j in judgments[:10]]
    assert all(resumed.has(line_key(j)) for j in judgments[:10])
    assert not any(resumed.has(line_key(j)) for j in judgments[10:])
    for judgment in judgments[10:]:
        resumed.append(judgment)
    resumed.close()

    reopened = RunStore.open(tmp_path / "copy", create=False)
    assert reopened.judgments() == judgments  # every field survives the round trip
    assert reopened.latest() == judgments
    assert len(_raw_lines(reopened.paths.judgments)) == 25
    # The same work with another input (a changed file) is not done.
    changed = judgments[0].model_copy(update={"input_hash": "sha256:" + "0" * 64})
    assert not reopened.has(line_key(changed))


def test_a_rerun_of_finished_work_adds_nothing(run: Path) -> None:
    before = (run / JUDGMENTS).read_bytes()
    result = run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=run, registry=REGISTRY))
    assert result.written == 0 and result.skipped == 25
    assert (run / JUDGMENTS).read_bytes() == before


def test_a_line_that_is_not_final_is_not_done(tmp_path: Path, verdict_rubric) -> None:
    (claim,) = _claims(1)
    passing = _judgment(verdict_rubric, claim, {}).model_copy(
        update={"final": False, "status": LineStatus.error, "reason": "budget spent"})
    store = RunStore.open(tmp_path / "run")
    store.write_info()
    store.append(passing)
    assert not store.has(line_key(passing))
    store.close()
    reopened = RunStore.open(tmp_path / "run")
    assert not reopened.has(line_key(passing))
    assert reopened.latest() == [passing]  # it is still the claim's newest line
    done = passing.model_copy(update={"final": True, "status": LineStatus.scored,
                                      "reason": None})
    reopened.append(done)
    assert reopened.has(line_key(done)) and reopened.latest() == [done]


def test_the_newest_line_per_identity_wins(tmp_path: Path, verdict_rubric) -> None:
    a, b = _claims(2)
    old_a = _judgment(verdict_rubric, a, {"verdict_consistent": (False, 0.6)})
    line_b = _judgment(verdict_rubric, b, {"verdict_consistent": (True, 0.9)})
    new_a = _judgment(verdict_rubric, a, {"verdict_consistent": (True, 0.9)}).model_copy(
        update={"input_hash": "sha256:" + "1" * 64})
    # Another sample, another order or another judge is another identity, not a newer line.
    sample_a = old_a.model_copy(update={"sample": 1})
    swapped_a = old_a.model_copy(update={"swapped": True})
    other_judge_a = _judgment(verdict_rubric, a, {}, judge="openai:other")
    store = RunStore.open(tmp_path / "run")
    store.write_info()
    for judgment in (old_a, line_b, sample_a, swapped_a, other_judge_a, new_a):
        store.append(judgment)
    store.close()
    reopened = RunStore.open(tmp_path / "run", create=False)
    assert len(reopened.judgments()) == 6  # the file keeps every line
    # in the order of the newest lines: a's newer line comes last
    assert reopened.latest() == [line_b, sample_a, swapped_a, other_judge_a, new_a]
    assert reopened.latest() == store.latest()  # the same answer before and after a reopen
    assert reopened.latest()[-1].answer("verdict_consistent").value is True
    # Both inputs of claim a were judged: neither is asked again.
    assert reopened.has(line_key(old_a)) and reopened.has(line_key(new_a))


# --- torn and damaged lines ---------------------------------------------------------------------


@pytest.mark.parametrize("name", [JUDGMENTS, CLAIMS, FINGERPRINTS])
def test_a_torn_last_line_is_cut_on_reopen(run: Path, name: str) -> None:
    path = run / name
    intact = path.read_bytes()
    last = _raw_lines(path)[-1]
    path.write_bytes(intact + last[: len(last) // 2])  # a crash in the middle of a line
    # Opening to read leaves the file alone and ignores the torn line ...
    store = RunStore.open(run, create=False)
    assert len(store.judgments()) == 25 and len(store.claims()) == 14
    assert len(store.fingerprints()) == 7
    assert path.read_bytes() == intact + last[: len(last) // 2]
    # ... opening to write cuts it, so the next line starts on a fresh line.
    store = RunStore.open(run)
    assert path.read_bytes() == intact
    if name == JUDGMENTS:
        store.append(store.judgments()[0])
        store.close()
        assert len(RunStore.open(run, create=False).judgments()) == 26
    assert len(store.judgments()) == 25 + (name == JUDGMENTS)


def test_read_jsonl_ignores_only_a_torn_last_line(run: Path, caplog: pytest.LogCaptureFixture
                                                  ) -> None:
    path = run / JUDGMENTS
    lines = _raw_lines(path)
    path.write_bytes(b"".join(lines[:-1]) + b"\n\n" + lines[-1][:40])  # a blank line, torn tail
    with caplog.at_level("WARNING"):
        records = read_jsonl(path, Judgment)
    assert len(records) == 24
    assert "ignoring a torn last line (40 bytes)" in caplog.text
    assert read_jsonl(run / "missing.jsonl", Judgment) == []


@pytest.mark.parametrize("where", ["middle", "last, with its newline"])
def test_a_damaged_line_is_an_error_that_names_it(run: Path, where: str) -> None:
    path = run / JUDGMENTS
    lines = _raw_lines(path)
    index = 4 if where == "middle" else len(lines) - 1
    lines[index] = lines[index].replace(b'"run_id"', b'"run_ID"', 1)
    path.write_bytes(b"".join(lines))
    expected = rf"{re.escape(str(path))}:{index + 1}: not a valid Judgment line \(.+\); the " \
        r"file was edited or damaged"
    with pytest.raises(RunStoreError, match=expected):
        read_jsonl(path, Judgment)
    with pytest.raises(RunStoreError, match=expected):
        RunStore.open(run)
    with pytest.raises(RunStoreError, match=expected):
        RunStore.open(run, create=False)


def test_a_line_of_another_schema_is_refused(run: Path) -> None:
    path = run / JUDGMENTS
    lines = _raw_lines(path)
    record = json.loads(lines[0])
    record["schema"] = "judging.judgment/2"
    path.write_bytes(json.dumps(record).encode() + b"\n" + b"".join(lines[1:]))
    with pytest.raises(RunStoreError, match=rf"{re.escape(str(path))}:1: not a valid Judgment"):
        RunStore.open(run, create=False)


def test_a_last_line_missing_only_its_newline_is_not_lost_on_resume(run: Path) -> None:
    path = run / JUDGMENTS
    path.write_bytes(path.read_bytes()[:-1])  # the crash came between the line and its newline
    store = RunStore.open(run)
    on_disk = {line_key(j) for j in store.judgments() if j.final}
    assert store.keys <= on_disk, "the store says done for a line that is no longer in the file"


# --- claims and fingerprints --------------------------------------------------------------------


def test_claims_round_trip_and_only_changes_are_appended(judged: Path, tmp_path: Path) -> None:
    claims = list(RunStore.open(judged, create=False).claims().values())
    assert len(claims) == 14 and all(isinstance(c, ClaimInput) for c in claims)
    store = RunStore.open(tmp_path / "run")
    store.write_info()
    store.record_claims(claims)
    size = (store.root / CLAIMS).stat().st_size
    store.record_claims(claims)  # nothing changed: nothing written
    assert (store.root / CLAIMS).stat().st_size == size
    reopened = RunStore.open(tmp_path / "run")
    assert list(reopened.claims().values()) == claims
    edited = claims[3].model_copy(update={"manifest_line": 999})
    reopened.record_claims([claims[0], edited])
    assert len(_raw_lines(reopened.root / CLAIMS)) == 15  # only the edited claim
    newest = RunStore.open(tmp_path / "run", create=False).claims()
    assert newest[str(edited.key)] == edited and len(newest) == 14


def test_fingerprints_round_trip_and_the_newest_wins(judged: Path, tmp_path: Path) -> None:
    fingerprints = RunStore.open(judged, create=False).fingerprints()
    assert len(fingerprints) == 7
    assert all(isinstance(f, Fingerprint) and re.fullmatch(r"[0-9a-f]{64}", f.phash)
               for f in fingerprints.values())
    store = RunStore.open(tmp_path / "run")
    store.write_info()
    for fingerprint in fingerprints.values():
        store.record_fingerprint(fingerprint)
    assert RunStore.open(tmp_path / "run", create=False).fingerprints() == fingerprints
    first = next(iter(fingerprints.values()))
    remeasured = Fingerprint(claim=first.claim, phash="0" * 64)
    store.record_fingerprint(remeasured)
    newest = RunStore.open(tmp_path / "run", create=False).fingerprints()
    assert newest[str(first.claim)] == remeasured
    assert {k: v for k, v in newest.items() if k != str(first.claim)} == \
        {k: v for k, v in fingerprints.items() if k != str(first.claim)}
