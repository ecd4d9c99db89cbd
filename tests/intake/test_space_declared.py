"""What a free-form Space declares beside its reports, handed in by a hostile participant
(issue 40's hostile review): results files and logs that cannot be read, are built to take the
loader's time, or sink the Space. Each is one error line in our words, in bounded time, and the
Space's claim is still judged."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.intake import load_folder
from judging.intake.results import file_values

README = ("---\ntitle: t\ntags: [arxiv:2508.18741]\n---\n# Repro\n\n## Claim 1: slope\n\n"
          "The slope matches. **Verdict: VERIFIED**\n")
#: End to end (the CLI in process) and timed against crafted input of hundreds of KB.
pytestmark = pytest.mark.slow
LEAKS = ("Traceback", "pydantic", "validation error for", "_csv.Error")


def space(tmp_path: Path, files: dict[str, str | bytes], readme: str = README) -> Path:
    folder = tmp_path / "space"
    folder.mkdir()
    (folder / "README.md").write_text(readme)
    for rel, content in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return folder


def test_a_results_file_or_log_that_cannot_be_read_is_one_error_line(tmp_path: Path) -> None:
    folder = space(tmp_path, {"results.json": '{"paper_value": ',
                              "logs/run.log": b"\xff\xfe paper_value=1\n"})
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert [c.claim.claim_id for c in loaded.claims] == ["2508.18741/c1"]
    reasons = sorted(p.reason for p in loaded.problems)
    assert reasons == ["logs/run.log: not UTF-8 text (byte 0): not read",
                       "results.json: not valid JSON: not read"], reasons


def test_a_csv_field_over_the_csv_limit_is_one_error_and_the_claim_is_judged(tmp_path: Path
                                                                           ) -> None:
    folder = space(tmp_path, {"results.csv": 'claim,paper,ours\n1,"' + "x" * 200_000 + '",2\n'})
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert [c.claim.claim_id for c in loaded.claims] == ["2508.18741/c1"]
    [problem] = loaded.problems
    assert problem.reason.startswith("results.csv: not a readable CSV table"), problem.reason
    for command in (["check", str(folder)],
                    ["run", str(folder), "--out", str(tmp_path / "run"), "--judge", "offline"]):
        result = CliRunner().invoke(main, command)
        assert not any(leak in result.output for leak in LEAKS), result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            result.exception


def test_a_results_json_of_many_keys_is_read_in_linear_time(tmp_path: Path) -> None:
    # each value's quote was looked for line by line from the top: 60,000 keys on 60,000
    # lines took minutes (quadratic); read once, it is well under a second
    keys = ",\n".join(f'  "paper_{i}": {i}.5' for i in range(60_000))
    folder = space(tmp_path, {"results.json": "{\n" + keys + "\n}\n"})
    start = time.monotonic()
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert time.monotonic() - start < 20
    [claim] = loaded.claims
    assert claim.claim.absent["reported_value"].startswith(
        "results file on results.json gives 60000 different values"), claim.claim.absent
    whole, _, _ = file_values("results.json", "{\n" + keys + "\n}\n")
    assert [v.quote for v in whole[:2]] == ['"paper_0": 0.5,', '"paper_1": 1.5,']


def test_files_linked_out_of_the_space_are_one_error_each_and_never_read(tmp_path: Path
                                                                         ) -> None:
    # a log, a script, an environment file and an image that are links to a host file: none
    # is read (not by `check`'s personal-data scan either), none sinks the Space's claim
    host = tmp_path / "host.txt"
    host.write_text("contact: root-7734@example.org\n/home/alice/secret\n")
    folder = space(tmp_path, {})
    links = ["logs/run.log", "reproduce.py", "requirements.txt", "figure.png"]
    for rel in links:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).symlink_to(host)
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    [claim] = loaded.claims
    assert claim.claim.claim_id == "2508.18741/c1"
    assert not claim.claim.evidence.logs and claim.claim.evidence.script is None
    assert sorted(p.reason for p in loaded.problems) == sorted(
        f"{rel}: a link leaving the Space: not followed" for rel in links)
    result = CliRunner().invoke(main, ["check", str(folder)])
    assert "example.org" not in result.output and "/home/a" not in result.output, result.output
    assert str(tmp_path) not in result.output.replace(str(folder), "")


#: Lines built to make a pattern retry from every character: each was minutes of the loader's
#: time at this size (a toy-scale sentence, a number in a word, a link or image target, a
#: claims heading, a command line), and is read once now.
CRAFTED_LINES = ["a" * 100_000, "](" * 50_000, "![" * 2_000 + "x" * 50_000,
                 "# " + "\t" * 100_000 + "x", "_" * 100_000, "-" * 100_000, " " * 100_000 + "x",
                 "\n" * 50_000 + "python run.py"]


@pytest.mark.timeout(120)
def test_lines_crafted_to_backtrack_are_read_in_bounded_time(tmp_path: Path) -> None:
    folder = space(tmp_path, {}, README + "\n".join(CRAFTED_LINES) + "\n")
    start = time.monotonic()
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    elapsed = time.monotonic() - start
    assert [c.claim.claim_id for c in loaded.claims] == ["2508.18741/c1"]
    assert elapsed < 30, f"{elapsed:.1f} s"


def test_a_report_of_thousands_of_numbered_items_is_judged_up_to_the_claim_limit(
        tmp_path: Path) -> None:
    # 1,200 numbered items: 1,200 claims and second-claim 'second claim numbered 1' lines, each a line
    # of the run; the manifest's limit holds for pages too
    from judging.intake.manifest import MAX_CLAIMS_PER_SUBMISSION

    items = "".join(f"\n{i % 999 + 1}. item {i} verified\n" for i in range(1_200))
    folder = space(tmp_path, {}, README + "\n## Claims\n" + items)
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert len(loaded.claims) + len(loaded.problems) <= MAX_CLAIMS_PER_SUBMISSION + 1
    assert any(p.reason.startswith("1,") and "over the limit of 500 per submission" in p.reason
               for p in loaded.problems), [p.reason for p in loaded.problems][:3]


def test_a_link_out_is_refused_without_naming_where_it_leads_on_this_machine(tmp_path: Path
                                                                            ) -> None:
    # through /proc/self/cwd a link resolves to the judging process's own folder
    import os

    from judging.errors import UnsafePathError
    from judging.intake import confine

    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "fig.png").symlink_to("/proc/self/cwd/README.md")
    with pytest.raises(UnsafePathError) as info:
        confine(folder, "fig.png")
    assert "resolves outside the submission folder" in str(info.value)
    assert os.getcwd() not in str(info.value), str(info.value)


def test_a_trace_line_of_hundreds_of_mb_is_skipped_within_the_line_limit(tmp_path: Path
                                                                        ) -> None:
    # a Space's trace: three events, then one line of 300 MB without a newline (sparse: it
    # costs the participant nothing); reading it whole took the memory of the line
    import json
    import tracemalloc

    from judging.traces import MAX_LINE_BYTES, tool_calls

    def event(kind: str, content: list[dict], n: int) -> str:
        return json.dumps({"type": kind, "message": {"role": kind, "content": content},
                           "uuid": f"u{n}", "sessionId": "s"})

    trace = tmp_path / "trace.jsonl"
    trace.write_text("\n".join([
        event("assistant", [{"type": "tool_use", "id": "t1", "name": "Bash",
                             "input": {"command": "python r.py"}}], 1),
        event("user", [{"type": "tool_result", "tool_use_id": "t1",
                        "content": "measured=-0.998"}], 2)]) + "\n")
    with trace.open("ab") as handle:
        handle.write(b"x")
        handle.truncate(300 * 1024 * 1024)
    with trace.open("ab") as handle:
        handle.write(b"\n" + event("assistant", [{"type": "tool_use", "id": "t2",
                                                  "name": "Bash", "input": {"command": "ls"}}],
                                   3).encode() + b"\n")
    tracemalloc.start()
    try:
        calls = tool_calls(trace)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(c.id, c.output) for c in calls] == [("t1", "measured=-0.998")]
    assert peak < 4 * MAX_LINE_BYTES, f"{peak:,} bytes"


@pytest.mark.timeout(120)
def test_a_report_of_unclosed_code_fences_is_read_in_bounded_time(tmp_path: Path) -> None:
    # each unclosed fence looked for its closing line to the end of the text: 30,000 lines of
    # "```a" were minutes; the blocks of a report are still found as before
    from judging.intake.extract import output_fences, strip_fences

    folder = space(tmp_path, {}, README + "```a\n" * 30_000)
    start = time.monotonic()
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert time.monotonic() - start < 30
    assert [c.claim.claim_id for c in loaded.claims] == ["2508.18741/c1"]
    text = "a\n```python\nx = 1\n```\nb\n```output\nloss=0.5\n```  \n~~~\nc\n"
    assert strip_fences(text) == "a\n\nb\n\n~~~\nc\n"
    assert output_fences(text) == ["loss=0.5\n"]


@pytest.mark.timeout(120)
def test_a_line_of_image_brackets_and_a_long_list_are_parsed_in_bounded_time(tmp_path: Path
                                                                             ) -> None:
    # markdown-it's inline pass read a line of "![" to its end from every bracket, and each
    # item of a long list copied the rest of the tokens: minutes each at this size
    items = "".join(f"\n{i % 900 + 1}. item\n" for i in range(12_000))
    folder = space(tmp_path, {}, README + "![" * 50_000 + "\n" + items)
    start = time.monotonic()
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert time.monotonic() - start < 60
    assert "2508.18741/c1" in {c.claim.claim_id for c in loaded.claims}


@pytest.mark.timeout(120)
def test_a_line_of_unclosed_emphasis_markers_is_read_in_bounded_time(tmp_path: Path) -> None:
    # plain_text looked for each marker's closing one to the end of the line: minutes
    from judging.intake.extract import plain_text

    folder = space(tmp_path, {}, README + "**a " * 25_000 + "\n" + "`a " * 30_000 + "\n")
    start = time.monotonic()
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert time.monotonic() - start < 30
    assert "2508.18741/c1" in {c.claim.claim_id for c in loaded.claims}
    assert plain_text("Verdict: **TOY-VERIFIED** (`n=64`), a*b **x**") == \
        "Verdict: TOY-VERIFIED (n=64), a*b x"
