"""HuggingChat conversation exports recognised as agent traces (issue 40): ML Intern is a
HuggingChat mode now, so a Space's trace is often an exported conversation (`.json`). The
exports are built here in the shape `judging/traces/chat.py` documents (chat-ui's stored
conversation: tool calls as message `updates`; and OpenAI-style `tool_calls` / `tool`
messages), and read through the loader and `judging run` like any trace."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from judging.cli import main
from judging.intake import load_folder, read_space
from judging.traces import is_trace, tool_calls

FRONT = "---\ntitle: MSBE slopes (arXiv 2508.18741)\nsdk: static\n---\n"
REPORT = ("# Reproducing MSBE slopes\n\n| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
          "| C1 slope | -1.00 | -0.998 | VERIFIED |\n| C2 intercept | 0.50 | 0.71 | FAILED |\n")


def chat_ui_export() -> dict:
    """One conversation as chat-ui stores it: the agent's tool call and its result are updates
    of the assistant's message."""
    return {"_id": "conv-1", "title": "Reproduce 2508.18741", "model": "ml-intern",
            "messages": [
                {"id": "m0", "from": "user", "content": "Reproduce arXiv 2508.18741"},
                {"id": "m1", "from": "assistant", "content": "Running the script.",
                 "updates": [
                     {"type": "status", "status": "started"},
                     {"type": "tool", "subtype": "call", "uuid": "t1",
                      "call": {"name": "hf_jobs", "parameters": {"command": "python "
                                                                            "reproduce.py"}}},
                     {"type": "tool", "subtype": "result", "uuid": "t1",
                      "result": {"status": "success", "outputs": [
                          {"stdout": "paper_slope=-1.00\nmeasured_slope=-0.998\n"}]}},
                     {"type": "tool", "subtype": "call", "uuid": "t2",
                      "call": {"name": "hf_jobs", "parameters": {"command": "python x.py"}}},
                     {"type": "tool", "subtype": "error", "uuid": "t2",
                      "message": "job failed: out of memory"}]}]}


def openai_style_export() -> dict:
    return {"conversation": {"id": "conv-2", "messages": [
        {"role": "user", "content": "Reproduce it"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": "python r.py"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "measured_slope=-0.998"}]}}


def test_both_export_shapes_give_their_tool_calls_and_outputs(tmp_path: Path) -> None:
    ui, oa = tmp_path / "hf-chat-export.json", tmp_path / "conversation.json"
    ui.write_text(json.dumps(chat_ui_export()))
    oa.write_text(json.dumps(openai_style_export()))
    assert is_trace(ui) and is_trace(oa)
    first, second = tool_calls(ui)
    assert (first.name, first.command, first.session) == ("hf_jobs", "python reproduce.py",
                                                          "conv-1")
    assert "measured_slope=-0.998" in first.output and not first.is_error
    assert second.is_error and "out of memory" in second.output
    (call,) = tool_calls(oa)
    assert call.command == "python r.py" and call.output == "measured_slope=-0.998"


def test_a_results_file_or_a_damaged_export_is_no_trace(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"paper": {"slope": -1.0}, "ours": {"slope": -0.998}}))
    assert not is_trace(results)
    cut = tmp_path / "export.json"
    cut.write_text(json.dumps(chat_ui_export())[:200])  # recognised by its head, unreadable
    assert is_trace(cut) and tool_calls(cut) == []


def test_a_spaces_huggingchat_export_is_its_trace_and_feeds_the_trace_signal(
        tmp_path: Path) -> None:
    folder = tmp_path / "chans--msbe-repro"
    (folder / "traces").mkdir(parents=True)
    (folder / "README.md").write_text(FRONT + REPORT)
    (folder / "traces" / "hf-chat-export.json").write_text(json.dumps(chat_ui_export()))
    (folder / "results.json").write_text(json.dumps({"slope": -0.998}))
    files = read_space(folder)
    assert files.traces == ["traces/hf-chat-export.json"] and files.results == ["results.json"]
    loaded = load_folder(folder, logbooks_dir=tmp_path / "lb")
    assert all(c.claim.evidence.traces == ["traces/hf-chat-export.json"] for c in loaded.claims)
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(folder), "--out", str(out), "--judge",
                                       "offline"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    signal = {line["claim"]["claim_id"]: line["signals"].get("trace.value_in_tool_output")
              for line in lines}
    # claim 1's reproduced value is in the output of the export's tool call; claim 2's is not
    assert signal["2508.18741/c1"]["value"] is True and "hf_jobs" in signal[
        "2508.18741/c1"]["reason"]
    assert signal["2508.18741/c2"]["value"] is False
