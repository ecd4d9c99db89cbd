"""What an organizer of the NeurIPS 2026 hackathon gets in a Space beside its report: a folder of
thousands of data files, a results file that is not JSON or is hundreds of megabytes. Each is one
line in our words (in `judging check` as in `judging run`), never a silent miss, and the report's
claims are judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.intake import load_folder, read_space
from judging.intake import space as space_shape
from judging.intake.results import MAX_RESULTS_BYTES

#: The Space reader's file limit (2,000), smaller here: the same walk on 2,000 files made on
#: disk takes seconds on a busy machine, a unit test's budget.
LIMIT = 40

README = ("---\ntitle: repro-2508.18741\nsdk: static\n---\n# Report\n\n"
          "| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
          "| C1 top-1 on CIFAR-10 | 94.1 | 93.8 | ✅ |\n")


def space(tmp_path: Path, data_files: int, files: dict[str, str] | None = None,
          data: str = "data") -> Path:
    folder = tmp_path / "alice--neurips26-repro-2508.18741"
    (folder / data).mkdir(parents=True)
    (folder / "README.md").write_text(README, encoding="utf-8")
    for i in range(data_files):
        (folder / data / f"{i:05}.txt").write_text("x")
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def test_a_space_of_more_files_than_read_says_so_and_what_was_not_read(tmp_path: Path,
                                                                       monkeypatch) -> None:
    monkeypatch.setattr(space_shape, "MAX_FILES", LIMIT)
    folder = space(tmp_path, LIMIT + 5, {"results/metrics.json": '{"paper": 1, "ours": 2}'})
    files = read_space(folder)
    [(where, what)] = files.errors
    assert where == "files"
    assert what == (f"the Space holds more than {LIMIT} files: only the first "
                    f"{LIMIT} (shallowest first) were read; not read to their end: "
                    f"data/, results/")
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert [c.claim.claim_id for c in loaded.claims] == ["2508.18741/c1"]
    assert any(what in p.reason for p in loaded.problems)


def test_the_reports_above_a_folder_of_many_files_are_read(tmp_path: Path, monkeypatch
                                                           ) -> None:
    # depth first, the data folder's files took the whole limit before the notes were reached
    monkeypatch.setattr(space_shape, "MAX_FILES", LIMIT)
    folder = space(tmp_path, LIMIT + 5, {"notes/report.md": "# Notes\n"}, data="data/raw")
    files = read_space(folder)
    assert [rel for rel, _ in files.reports] == ["notes/report.md"]
    assert files.errors[0][1].endswith("not read to their end: data/raw/")


def test_a_space_of_exactly_the_limit_reads_everything_and_says_nothing(tmp_path: Path,
                                                                        monkeypatch) -> None:
    monkeypatch.setattr(space_shape, "MAX_FILES", LIMIT)
    folder = space(tmp_path, LIMIT - 1)  # and the README
    files = read_space(folder)
    assert files.errors == [] and len(files.results) + len(files.reports) == 0
    assert space_shape.MAX_FILES == LIMIT


def checklist(folder: Path) -> str:
    result = CliRunner().invoke(main, ["check", str(folder)], env={"COLUMNS": "300"})
    assert "Traceback" not in result.output
    return result.output


def test_check_says_a_results_file_that_run_cannot_read(tmp_path: Path) -> None:
    bad = space(tmp_path / "bad", 0, {"results.json": '{"paper": 94.1, "ours": '})
    output = checklist(bad)
    assert "results.json: not valid JSON: not read" in output
    assert "results files: results.json" not in output  # not called read
    huge = space(tmp_path / "huge", 0, {
        "results.json": json.dumps({"paper": 94.1, "pad": "x" * MAX_RESULTS_BYTES})})
    output = checklist(huge)
    assert f"over the limit of {MAX_RESULTS_BYTES:,}" in output
    good = space(tmp_path / "good", 0, {"results.json": '{"paper": 94.1, "ours": 93.8}'})
    assert "results files: results.json" in checklist(good)


PROSE = ("---\ntitle: Reproducing sparse warmup (arXiv 2508.18741)\nsdk: static\n---\n"
         "# Reproduction report\n\nWe re-trained ViT-S/4 with sparse warmup on CIFAR-10.\n"
         "The paper reports 94.1% top-1 accuracy and we measured 93.8% on the test set, "
         "which is within the authors' tolerance.\n\n"
         "Overall our runs agree with the paper's main findings.\n")


def prose_listing(claims: list[dict]):
    def policy(request: dict) -> dict:
        system = next(m["content"] for m in request["messages"] if m["role"] == "system")
        if system.startswith("You list the claims"):
            return {"claims": claims}
        return {"reported_value": None, "reproduced_value": None, "verdict": None,
                "toy": None, "scale_note": None}
    return policy


def load_with_llm(tmp_path: Path, folder: Path, claims: list[dict], fault: str | None = None):
    """The Space loaded with the LLM extractor, through the real client to the fake server."""
    from judging.judges import LLMOptions, StructuredCaller
    from judging.judges.openai import AnswerCache
    from judging.testing.fake_openai import FakeOpenAI

    with FakeOpenAI(prose_listing(claims)) as fake:
        if fault:
            for _ in range(4):
                fake.add_fault(fault)
        options = LLMOptions(base_url=fake.url, api_key="sk-test-not-a-secret", max_retries=0,
                             timeout=10.0, cache_dir=tmp_path / "cache")
        caller = StructuredCaller("fake-extractor", options,
                                  cache=AnswerCache(tmp_path / "cache"))
        return load_folder(folder, logbooks_dir=tmp_path / "out", extractor=caller)


def test_a_prose_report_keeps_its_claims_when_the_llm_lists_none(tmp_path: Path) -> None:
    # offline the report is read as claims stated in prose; with an LLM that listed none (or
    # failed) it was "no claim found ... no claims table", as if the Space said nothing
    folder = space(tmp_path, 0)
    (folder / "README.md").write_text(PROSE, encoding="utf-8")
    offline = load_folder(folder, logbooks_dir=tmp_path / "offline")
    statements = sorted(c.claim.statement for c in offline.claims)
    assert statements and not offline.problems
    for fault, name in ((None, "none"), ("500", "error")):
        loaded = load_with_llm(tmp_path / name, folder, [], fault)
        assert not loaded.problems, [p.reason for p in loaded.problems]
        assert sorted(c.claim.statement for c in loaded.claims) == statements
        assert all(c.claim.verdict is None and c.claim.reproduced_value is None
                   for c in loaded.claims)


def test_a_prose_claim_the_llm_read_is_not_stated_twice(tmp_path: Path) -> None:
    folder = space(tmp_path, 0)
    (folder / "README.md").write_text(PROSE, encoding="utf-8")
    sentence = "The paper reports 94.1% top-1 accuracy and we measured 93.8% on the test set"
    loaded = load_with_llm(tmp_path, folder, [{
        "quote": sentence, "verdict": None,
        "reported_value": {"value": 94.1, "quote": "The paper reports 94.1%"},
        "reproduced_value": {"value": 93.8, "quote": "we measured 93.8%"}}])
    read = [c.claim for c in loaded.claims if "94.1" in c.claim.statement
            or "94.1" in (c.claim.justification or "")]
    assert len(read) == 1 and (read[0].reported_value, read[0].reproduced_value) == (94.1, 93.8)


def test_check_says_the_numbers_of_a_prose_claim_were_not_read(tmp_path: Path) -> None:
    # it said "results ok: theorem: no number needed" of "the paper reports 94.1% ... 93.8%"
    folder = space(tmp_path, 0)
    (folder / "README.md").write_text(PROSE, encoding="utf-8")
    output = " ".join(checklist(folder).split())
    assert "no number read: stated in prose: needs --extract" in output
    assert "no number needed" not in output


@pytest.mark.slow  # the fake Hub and a Space's download
def test_a_linked_dataset_fetched_in_part_says_so(tmp_path: Path, monkeypatch) -> None:
    # the first MAX_LINKED_FILES text files were fetched and the rest dropped without a word
    from judging.intake.sources import MAX_LINKED_FILES, expand_source
    from tests.fakehub import FakeHub

    readme = README.replace("sdk: static\n", "sdk: static\ndatasets: [alice/runs]\n")
    runs = {f"logs/{i:04}.txt": "loss=0.5\n" for i in range(MAX_LINKED_FILES + 3)}
    with FakeHub({("space", "alice/neurips26-repro-2508.18741"): {"README.md": readme},
                  ("dataset", "alice/runs"): runs}) as hub:
        hub.patch(monkeypatch, tmp_path / "hf-home")
        [folder] = expand_source("hf://spaces/alice/neurips26-repro-2508.18741",
                                 download_root=tmp_path / "dl")
    errors = [what for where, what in read_space(folder).errors if where == "linked datasets"]
    assert errors == [f"linked dataset alice/runs: {MAX_LINKED_FILES + 3} text files, only the "
                      f"first {MAX_LINKED_FILES} fetched (at most {MAX_LINKED_FILES} files, 200 "
                      f"MiB): from logs/{MAX_LINKED_FILES:04}.txt on, not read"]


def test_json_nested_past_the_parsers_depth_is_one_line_and_the_space_is_judged(
        tmp_path: Path) -> None:
    # every .json of a Space is sniffed as an agent trace first: a results file nested 5,000
    # deep raised RecursionError there and the whole Space was "internal error while loading"
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    folder = space(tmp_path, 0, {"results.json": deep, "traces/run.jsonl": deep + "\n",
                                 "chat-export.json": '{"messages": [{"role": "user", "a": '
                                 + deep + "}]}"})
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert [c.claim.claim_id for c in loaded.claims] == ["2508.18741/c1"]
    assert [p.reason for p in loaded.problems] == ["results.json: not valid JSON: not read"]
