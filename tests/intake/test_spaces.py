"""Free-form Spaces as the NeurIPS 2026 hackathon's participants publish them (issue 26, item 4),
written here by hand and served by the fake Hub: one Space per paper named after its arXiv id, a
README with front matter (tags, `short_description`), a report, results, logs, the environment,
the script, and the agent's trace in a linked dataset (Claude-Code event JSONL). Also the paper
aliases of the registry, `--discover`, two Spaces of one user for one paper, and hostile Spaces
(one clear error each, the rest judged)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from judging.cli import main
from judging.intake import load_folder, load_registry, read_space
from judging.intake.space import MAX_REPORT_BYTES, paper_of
from judging.models import Verdict
from tests.fakehub import FakeHub

ARXIV = "2508.18741"
SPACE = f"chans/neurips26-repro-{ARXIV}"
TRACES = f"chans/agent-trace-repro-{ARXIV}"
LEAKS = ("Traceback", "pydantic", "validation error for")


def event(kind: str, content: list[dict], n: int) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "model": "claude-test",
                                                 "content": content},
                       "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
                       "sessionId": "s1", "timestamp": f"2026-11-20T10:00:0{n}Z"})


def trace_lines() -> str:
    """A Claude-Code session: the agent runs the script; its output holds claim 1's value."""
    return "\n".join([
        event("user", [{"type": "text", "text": f"Reproduce arXiv {ARXIV}"}], 0),
        event("assistant", [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                             "input": {"command": "python reproduce.py"}}], 1),
        event("user", [{"type": "tool_result", "tool_use_id": "toolu_1",
                        "content": "paper_slope=-1.00\nmeasured_slope=-0.998\n"}], 2),
    ]) + "\n"


def neurips_space(**overrides: str) -> dict[str, str]:
    files = {
        "README.md": (
            "---\ntitle: MSBE slopes\nemoji: 🔬\nsdk: static\ntags:\n  - neurips26-repro\n"
            f"  - arxiv:{ARXIV}\nshort_description: \"Verified: MSBE slope -1.00, seed 0 "
            "matches authors to 1e-12\"\n---\n\n# Reproducing MSBE slopes\n\n"
            f"Traces: https://huggingface.co/datasets/{TRACES}\n\n"
            "Run `python reproduce.py`. The claims are in [the report](report.md).\n"),
        "report.md": (
            "# Report\n\n| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
            "| C1 slope | -1.00 | -0.998 | VERIFIED |\n| C2 intercept | 0.50 | 0.71 | FAILED |\n"),
        "reproduce.py": "print('paper_slope=-1.00')\nprint('measured_slope=-0.998')\n",
        "requirements.txt": "numpy==2.1.3\n",
        "logs/run.log": "paper_slope=-1.00\nmeasured_slope=-0.998\n",
    }
    files.update(overrides)
    return files


def registry(tmp_path: Path) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({
        "papers": [{"paper_id": "neurips26-4821", "arxiv": ARXIV, "neurips": 4821,
                    "openreview": "XZAOCytvKQ"}],
        "claims": [
            {"claim_id": "neurips26-4821/c1", "paper_id": "neurips26-4821", "kind": "number",
             "statement": "The MSBE slope is -1.", "reported_value": -1.0,
             "tolerance": {"absolute": 0.01}},
            {"claim_id": "neurips26-4821/c2", "paper_id": "neurips26-4821", "kind": "number",
             "statement": "The intercept is 0.5.", "reported_value": 0.5},
            {"claim_id": "neurips26-4821/c3", "paper_id": "neurips26-4821",
             "statement": "A third claim."}]}))
    return path


@pytest.fixture
def hub(monkeypatch, tmp_path):
    trace = {"sessions/2026-11-20/abc123.jsonl": trace_lines(),
             "README.md": "---\nlicense: mit\n---\nSessions\n"}
    with FakeHub({("space", SPACE): neurips_space(), ("dataset", TRACES): trace},
                 tags={("space", SPACE): ["neurips26-repro"]}) as hub:
        hub.patch(monkeypatch, tmp_path / "hf-home")
        yield hub


def test_a_neurips_space_with_its_trace_dataset_meets_the_registry_by_arxiv_id(
        hub: FakeHub, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", f"hf://spaces/{SPACE}", "--claims",
                                       str(registry(tmp_path)), "--out", str(out), "--judge",
                                       "offline"])
    assert result.exit_code == 0, result.output
    assert not any(leak in result.output for leak in LEAKS)
    claims = {json.loads(x)["claim"]["claim_id"]: json.loads(x)
              for x in (out / "claims.jsonl").read_text().splitlines()}
    # the arXiv-keyed Space's claims are the registry's neurips26-4821/cN
    assert set(claims) == {"neurips26-4821/c1", "neurips26-4821/c2"}
    c1 = claims["neurips26-4821/c1"]
    assert c1["submission"]["submission_id"] == SPACE
    assert c1["submission"]["paper_id"] == "neurips26-4821"
    assert c1["reference"] == "registry"
    assert c1["claim"]["verdict"] == "verified" and c1["claim"]["reproduced_value"] == -0.998
    assert c1["claim"]["provenance"]["verdict"]["place"] == "claims table cell"
    # the linked trace dataset was fetched beside the Space and is the claim's agent trace
    [trace] = c1["claim"]["evidence"]["traces"]
    assert trace.endswith("sessions/2026-11-20/abc123.jsonl") and trace.startswith(".judging/")
    assert claims["neurips26-4821/c2"]["claim"]["verdict"] == "falsified"
    # the trace signal: claim 1's value is in a tool call's output, claim 2's is not
    lines = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    signal = {line["claim"]["claim_id"]: line["signals"]["trace.value_in_tool_output"]
              for line in lines if "trace.value_in_tool_output" in line["signals"]}
    assert signal["neurips26-4821/c1"]["value"] is True
    assert "Bash" in signal["neurips26-4821/c1"]["reason"]
    assert signal["neurips26-4821/c2"]["value"] is False
    # the registry claim the Space does not address
    not_addressed = [json.loads(x) for x in (out / "not_addressed.jsonl").read_text()
                     .splitlines()]
    assert [n["claim_id"] for n in not_addressed] == ["neurips26-4821/c3"]
    # reviewers see the trace among the evidence
    from judging.review.dataset import claim_markdown
    from judging.rundir.store import RunStore

    store = RunStore.open(out, create=False)
    judgment = next(j for j in store.latest() if j.claim.claim_id == "neurips26-4821/c1")
    markdown = claim_markdown(store.claims()[str(judgment.claim)], judgment)
    assert "agent traces `.judging/linked/datasets/" in markdown


def test_judging_check_counts_the_spaces_trace(hub: FakeHub) -> None:
    result = CliRunner().invoke(main, ["check", f"hf://spaces/{SPACE}", "--json"])
    report = json.loads(result.stdout)
    [space] = report["submissions"]
    assert space["format"] == "space"
    trace = next(i for i in space["items"] if i["item"] == "trace")
    assert trace["status"] == "ok" and "1 agent trace" in trace["detail"]


def test_a_planted_judging_folder_in_a_space_is_never_downloaded(monkeypatch,
                                                                  tmp_path: Path) -> None:
    fake = {".judging/linked/datasets/chans/x/t.jsonl": trace_lines()}
    with FakeHub({("space", SPACE): neurips_space(**fake)}) as hub:
        hub.patch(monkeypatch, tmp_path / "hf-home")
        out = tmp_path / "run"
        result = CliRunner().invoke(main, ["run", f"hf://spaces/{SPACE}", "--out", str(out),
                                           "--judge", "offline"])
        assert result.exit_code == 0, result.output
        assert not any(".judging" in path for _, path in hub.requests)
    claims = [json.loads(x) for x in (out / "claims.jsonl").read_text().splitlines()]
    assert all(c["claim"]["evidence"].get("traces", []) == [] for c in claims)


def test_a_private_trace_dataset_is_one_warning_and_the_space_is_judged(monkeypatch,
                                                                        tmp_path: Path) -> None:
    with FakeHub({("space", SPACE): neurips_space(), ("dataset", TRACES): {"a.jsonl": "x"}},
                 private=[("dataset", TRACES)]) as hub:
        hub.patch(monkeypatch, tmp_path / "hf-home")
        out = tmp_path / "run"
        result = CliRunner().invoke(main, ["run", f"hf://spaces/{SPACE}", "--out", str(out),
                                           "--judge", "offline"])
        assert result.exit_code == 0, result.output
    claims = [json.loads(x) for x in (out / "claims.jsonl").read_text().splitlines()]
    assert {c["claim"]["claim_id"] for c in claims} == {f"{ARXIV}/c1", f"{ARXIV}/c2"}
    warnings = claims[0]["submission"]["warnings"]
    assert any(TRACES in w and "private" in w for w in warnings), warnings


@pytest.mark.parametrize(("front", "name", "body", "expected"), [
    ("tags:\n  - arxiv:2601.22449v2\n", "repro", "", "2601.22449"),
    ("tags:\n  - paper-XZAOCytvKQ\n", "repro", "", "XZAOCytvKQ"),
    ("tags: []\n", "repro-2601.22449-lorenz96", "", "2601.22449"),
    ("tags: []\n", "repro", "See https://arxiv.org/abs/2508.18741v3.", "2508.18741"),
    ("tags: []\n", "repro", "Compares arXiv:2508.18741 with arXiv:2601.22449.", None),
    ("tags: []\n", "repro", "A bare 2508.18741 is no arXiv id.", None),
])
def test_paper_identity_of_a_space(tmp_path: Path, front: str, name: str, body: str,
                                   expected: str | None) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "README.md").write_text(f"---\n{front}---\n{body}\n")
    assert paper_of(read_space(folder), f"bob/{name}")[0] == expected


def test_registry_aliases_name_one_paper(tmp_path: Path) -> None:
    reg = load_registry(registry(tmp_path))
    for alias in (ARXIV, f"arXiv:{ARXIV}v2", f"https://arxiv.org/abs/{ARXIV}", "4821",
                  "XZAOCytvKQ", "neurips26-4821"):
        assert reg.canonical(alias) == "neurips26-4821", alias
    assert [c.claim_id for c in reg.for_paper(ARXIV)][:1] == ["neurips26-4821/c1"]
    assert reg.canonical("2601.00001") is None


def test_a_space_whose_only_verdict_is_its_short_description(tmp_path: Path) -> None:
    folder = tmp_path / f"chans--neurips26-repro-{ARXIV}"
    folder.mkdir()
    (folder / "README.md").write_text(
        "---\ntags:\n  - neurips26-repro\nshort_description: 'Verified: MSBE slope -1.00, "
        "seed 0 matches authors to 1e-12'\n---\n# MSBE\n\nWe ran the notebook; the slope "
        "comes out at -1.00 as in the paper.\n")
    (folder / "results.json").write_text(json.dumps({"paper_slope": -1.0,
                                                     "measured_slope": -0.9999}))
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert loaded.header.submission_id == f"chans/neurips26-repro-{ARXIV}"
    [claim] = loaded.claims
    assert claim.claim.claim_id == f"{ARXIV}/report"
    assert claim.claim.verdict is Verdict.verified
    assert claim.claim.provenance["verdict"].place == "short_description"
    assert claim.claim.provenance["claim_id"].how == "order"
    # the results file names both sides: the values are declared there
    assert (claim.claim.reported_value, claim.claim.reproduced_value) == (-1.0, -0.9999)
    assert claim.claim.provenance["reproduced_value"].place == "results file on results.json"


def test_a_space_with_reports_and_no_claim_is_an_error_naming_them(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "README.md").write_text("---\ntitle: notes\n---\n# Notes\n\nWork in progress.\n")
    (folder / "plan.md").write_text("# Plan\n\nRead the paper.\n")
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert loaded.claims == []
    [problem] = loaded.problems
    assert "no claim found" in problem.reason
    assert "README.md" in problem.reason and "plan.md" in problem.reason


def test_hostile_spaces_get_one_clear_error_each_and_the_rest_is_judged(tmp_path: Path
                                                                        ) -> None:
    folder = tmp_path / "evil--space"
    (folder / "docs").mkdir(parents=True)
    (folder / "README.md").write_text("---\ntags: [arxiv:2508.18741\nshort: {{\n---\n"
                                      "# Evil\n\n[secret](../../../etc/passwd)\n")
    (folder / "docs" / "huge.md").write_text("# Huge\n" + "x" * (MAX_REPORT_BYTES + 10))
    (folder / "docs" / "binary.md").write_bytes(b"# Bin\n\x00\x01\x02" * 100)
    (folder / "docs" / "claims.md").write_text(
        "# Claims\n\n## Claim 1: slope\n\n**Verdict: VERIFIED**\n\n"
        "## Claim 2: intercept\n\n**Verdict: INCONCLUSIVE**\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n## Claim 9: x\n**Verdict: VERIFIED**\n")
    os.symlink(outside, folder / "docs" / "linked.md")
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert {c.claim.claim_id for c in loaded.claims} == {"space/c1", "space/c2"}
    reasons = sorted(p.reason for p in loaded.problems)
    assert len(reasons) == 5, reasons
    text = "\n".join(reasons)
    assert "README.md: the front matter is not YAML" in text
    assert "README.md: links '../../../etc/passwd', outside the Space" in text
    assert "docs/huge.md:" in text and "over the limit" in text
    assert "docs/binary.md: a binary file" in text
    assert "docs/linked.md: a link leaving the Space" in text
    assert "Secret" not in json.dumps([c.claim.model_dump(mode="json") for c in loaded.claims])
    # end to end: the error lines and the judged claims, no traceback
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(folder), "--out", str(out), "--judge",
                                       "offline"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    assert sum(1 for line in lines if line["status"] == "error") == 5
    assert {line["claim"]["claim_id"] for line in lines if line["status"] != "error"} == \
        {"space/c1", "space/c2"}
    assert not any(leak in result.output for leak in LEAKS)


def test_two_spaces_of_one_user_for_one_paper_are_both_judged_and_flagged(monkeypatch,
                                                                         tmp_path: Path
                                                                         ) -> None:
    other = f"chans/repro-{ARXIV}-take2"
    with FakeHub({("space", SPACE): neurips_space(), ("space", other): neurips_space(),
                  ("space", "dora/neurips26-repro-2601.22449"): neurips_space()},
                 tags={("space", s): ["neurips26-repro"]
                       for s in (SPACE, other, "dora/neurips26-repro-2601.22449")}) as hub:
        hub.patch(monkeypatch, tmp_path / "hf-home")
        out = tmp_path / "run"
        result = CliRunner().invoke(main, ["run", "--discover", "neurips26-repro", "--out",
                                           str(out), "--judge", "offline"])
        assert result.exit_code == 0, result.output
    claims = [json.loads(x) for x in (out / "claims.jsonl").read_text().splitlines()]
    assert {c["submission"]["submission_id"] for c in claims} == {
        SPACE, other, "dora/neurips26-repro-2601.22449"}
    pairs = json.loads((out / "integrity.json").read_text())["pairs"]
    duplicates = [p for p in pairs if p["kind"] == "duplicate_submission"]
    assert {p["a"]["submission_id"] for p in duplicates} | \
        {p["b"]["submission_id"] for p in duplicates} == {SPACE, other}
    assert len(duplicates) == 2  # c1 with c1, c2 with c2


def test_the_llm_reads_a_spaces_prose_values_with_a_quote_check(tmp_path: Path) -> None:
    from judging.testing.fake_openai import FakeOpenAI, default_policy

    folder = tmp_path / f"chans--neurips26-repro-{ARXIV}"
    folder.mkdir()
    (folder / "README.md").write_text(
        "---\ntags: [neurips26-repro]\nshort_description: 'Verified: top-1 within 0.2'\n---\n"
        "# Top-1\n\nThe authors' headline is 0.93; this run reached 0.91 after 3 epochs.\n")

    def policy(request: dict) -> dict | str:
        system = next(m["content"] for m in request["messages"] if m["role"] == "system")
        if not system.startswith("You extract facts"):
            return default_policy(request)
        return {"reported_value": {"value": 0.93, "quote": "The authors' headline is 0.93"},
                "reproduced_value": {"value": 0.95, "quote": "this run reached 0.91"},
                "verdict": None, "toy": None, "scale_note": None}

    with FakeOpenAI(policy) as server:
        out = tmp_path / "run"
        result = CliRunner().invoke(main, ["run", str(folder), "--out", str(out), "--judge",
                                           "openai:m", "--base-url", server.url, "--api-key",
                                           "sk-test", "--cache-dir", str(tmp_path / "cache")])
        assert result.exit_code == 0, result.output
    [claim] = [json.loads(x)["claim"] for x in (out / "claims.jsonl").read_text().splitlines()]
    assert claim["reported_value"] == 0.93
    assert claim["provenance"]["reported_value"]["how"] == "llm:m"
    # 0.95 is not in its quote: rejected, left absent with the reason
    assert claim.get("reproduced_value") is None
    assert "not in its quote" in claim["absent"]["reproduced_value"]


def test_a_logbook_tagged_with_an_openreview_id_meets_the_registrys_paper(tmp_path: Path
                                                                          ) -> None:
    from tests.intake.test_logbook import cell, write_page

    root = tmp_path / "lb"
    (root / "pages").mkdir(parents=True)
    (root / "logbook.json").write_text(json.dumps({"space_id": "eve/repro",
                                                   "tags": ["paper-XZAOCytvKQ"]}))
    write_page(root, "claim-2-x", "# Claim 2: x" + cell("markdown") + "**Verdict: VERIFIED**\n")
    loaded = load_folder(root, registry=load_registry(registry(tmp_path)),
                         logbooks_dir=tmp_path / "out")
    [claim] = loaded.claims
    assert claim.claim.claim_id == "neurips26-4821/c2" and claim.reference.value == "registry"
    assert any("XZAOCytvKQ" in w and "neurips26-4821" in w for w in loaded.header.warnings)


def test_a_huge_readme_is_one_error_and_the_reports_are_judged(tmp_path: Path) -> None:
    folder = tmp_path / "big--space"
    folder.mkdir()
    (folder / "README.md").write_text("---\ntags: [arxiv:2508.18741]\n---\n"
                                      + "padding " * (MAX_REPORT_BYTES // 8 + 10))
    (folder / "report.md").write_text("# Report\n\n## Claim 1: slope\n\n**Verdict: VERIFIED**\n")
    loaded = load_folder(folder, logbooks_dir=tmp_path / "out")
    assert [c.claim.claim_id for c in loaded.claims] == ["space/c1"]
    [problem] = loaded.problems
    assert problem.reason.startswith("README.md: ") and "over the limit" in problem.reason


def test_an_id_that_cannot_be_one_is_one_error_in_our_words(tmp_path: Path) -> None:
    from judging.errors import ManifestError

    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "README.md").write_text("---\ntags:\n  - paper-" + "A" * 300 + "\n---\n# x\n")
    with pytest.raises(ManifestError) as info:
        load_folder(folder, logbooks_dir=tmp_path / "out")
    assert "paper_id: longer than 200 characters" in str(info.value)
    assert not any(leak in str(info.value) for leak in (*LEAKS, "errors.pydantic.dev"))


def test_a_folder_of_spaces_with_a_dataset_card_stands_for_its_spaces(tmp_path: Path) -> None:
    from judging.intake import expand_source

    root = tmp_path / "event"
    root.mkdir()
    (root / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n# The event's Spaces\n")
    for name in ("alice--repro-2508.18741", "bob--repro-2601.22449"):
        (root / name).mkdir()
        (root / name / "README.md").write_text("---\ntags: [neurips26-repro]\n---\n# x\n")
    assert [p.name for p in expand_source(str(root), download_root=tmp_path / "dl")] == \
        ["alice--repro-2508.18741", "bob--repro-2601.22449"]
    assert expand_source(str(root / "alice--repro-2508.18741"),
                         download_root=tmp_path / "dl") == [root / "alice--repro-2508.18741"]


def test_a_linked_dataset_that_is_no_dataset_id_is_one_error_and_the_space_is_judged(
        monkeypatch, tmp_path: Path) -> None:
    # a `datasets:` entry is a folder of the download and a Hub call: one with '..' sank the
    # whole run with the Hub client's exception (HFValidationError), no line written
    bad = "chans/../../../../../../tmp/planted"
    readme = neurips_space()["README.md"].replace(
        "sdk: static\n", f"sdk: static\ndatasets:\n  - {bad}\n  - 'chans/x y'\n")
    with FakeHub({("space", SPACE): neurips_space(**{"README.md": readme}),
                  ("dataset", TRACES): {"t.jsonl": trace_lines()}}) as hub:
        hub.patch(monkeypatch, tmp_path / "hf-home")
        out = tmp_path / "run"
        result = CliRunner().invoke(main, ["run", f"hf://spaces/{SPACE}", "--out", str(out),
                                           "--judge", "offline"])
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            repr(result.exception)
        assert not any("planted" in path or "x y" in path for _, path in hub.requests)
    lines = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    errors = sorted(line["reason"] for line in lines if line["status"] == "error")
    assert errors == [f"claim could not be loaded: README.md: links the dataset {bad!r}, "
                      f"which is not a dataset id (owner/name): not fetched",
                      "claim could not be loaded: README.md: links the dataset 'chans/x y', "
                      "which is not a dataset id (owner/name): not fetched"], errors
    judged = {line["claim"]["claim_id"] for line in lines if line["status"] != "error"}
    assert judged == {"2508.18741/c1", "2508.18741/c2"}, judged
