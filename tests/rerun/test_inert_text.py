"""Untrusted text is inert wherever it is shown (issue 38, rows 10 and 11): a claim statement and
a failing script's last stderr line that carry terminal escapes and Markdown images and links
reach neither the organizer's terminal raw (`judging check`, `run`, `rerun`, through the CLI) nor
a reviewer's browser as live markup (the `claim` field read back from the real Argilla server,
rendered by a CommonMark renderer), and the report stays escaped."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from judging.cli import main
from judging.models import RerunStatus, for_markdown, for_terminal
from judging.rundir import read_reruns
from tests.rerun.conftest import judging, need_sandbox, script_claim

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[1A\x1b[31m\x9b2J\r\u202e"
ATTACK = ("![x](http://attacker.example/p.png) [a](javascript:alert(1)) "
          "<img src=http://attacker.example/i.png> <http://attacker.example/auto> "
          "www.attacker.example")
STATEMENT = f"Top-1 accuracy is 94.1% {ATTACK} {ESCAPES}"
# (its last line: a carriage return would start a new one)
STDERR = f"\x1b]0;pwned\x07\x1b[2J boom {ATTACK} \x1b[1A\x1b[31m\x9b2J\u202e"
#: What no terminal line may carry: ESC, BEL, CR, C1 controls, bidi overrides.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.output


@pytest.fixture(scope="module")
def hostile_text_run(tmp_path_factory: pytest.TempPathFactory, env_cache: Path):
    need_sandbox()
    from tests.conftest import SubmissionBuilder
    root = tmp_path_factory.mktemp("inert")
    builder = SubmissionBuilder(root / "subs" / "sub", "attacker/sub", "paper-1")
    builder.file("requirements.txt", "iniconfig==2.0.0\n")
    claim = script_claim(builder, "paper-1/c1", "eval.py",
                         f"import sys\nsys.stderr.write({STDERR!r} + '\\n')\nsys.exit(1)\n")
    claim["statement"] = STATEMENT
    builder.write()
    outputs = {"check": _cli("check", str(builder.root))}
    run = root / "run"
    outputs["run"] = _cli("run", str(root / "subs"), "--out", str(run), "--judge", "offline")
    outputs["rerun"] = _cli("rerun", str(run), "--env-cache", str(env_cache))
    # judged again with the re-run's result (what the review records and the report show)
    outputs["run again"] = _cli("run", str(root / "subs"), "--out", str(run), "--judge",
                                "offline")
    return run, outputs


def test_the_terminal_gets_no_escape_or_control_character(hostile_text_run) -> None:
    run, outputs = hostile_text_run
    record = next(iter(read_reruns(run).values()))
    assert record.status is RerunStatus.failed and "\x1b" in record.reason  # kept as data
    for command, output in outputs.items():
        assert not RAW.findall(output), (command, RAW.findall(output))
    line = next(line for line in outputs["rerun"].splitlines() if "paper-1/c1" in line)
    assert "exit code 1" in line and "boom" in line and "attacker.example" in line


def test_for_terminal_and_for_markdown_keep_the_words() -> None:
    import doctest

    import judging.models as models
    runner = doctest.DocTestRunner()
    for function in (models.for_terminal, models.for_markdown):
        for test in doctest.DocTestFinder().find(function, function.__name__,
                                                 globs=vars(models)):
            runner.run(test)
    assert runner.failures == 0 and runner.tries == 2
    assert for_terminal(f"a{ESCAPES}b\n\tc") == "ab\n\tc"
    assert for_terminal("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\") == "link"
    html = MarkdownIt("commonmark").render(for_markdown(STATEMENT))
    assert "<img" not in html and "<a " not in html and "attacker.example/p.png" in html


def test_argilla_shows_images_and_links_as_text(hostile_text_run, argilla) -> None:
    from judging.review.push import PushOptions, connect, push_run
    run, _ = hostile_text_run
    client = connect(argilla.url, argilla.api_key)
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    result = push_run(run, client=client, options=PushOptions(workspace=workspace))
    assert result.total >= 1
    fields = []
    for name in result.records:
        dataset = client.datasets(name=name, workspace=workspace)
        fields += [record.fields for record in dataset.records()]
    claims = [f["claim"] for f in fields if "attacker.example" in (f.get("claim") or "")]
    assert claims, "the claim's text is shown"
    for text in claims:
        html = MarkdownIt("commonmark").render(text)
        assert "<img" not in html and "<a " not in html and "javascript:" not in html.split(
            "[a](")[0] + "", html
        assert "\x1b" not in text
        # both the participant's statement and the script's stderr are there, as text
        assert "Top-1 accuracy is 94.1%" in html and "boom" in html, html
        assert "http://attacker.example/p.png" in html.replace("\\", "")


def test_the_report_stays_escaped(hostile_text_run) -> None:
    run, _ = hostile_text_run
    out = run.parent / "report.html"
    judging("report", str(run), "--out", str(out), "--single-page")
    html = out.read_text()
    assert "attacker.example/i.png" in html  # shown...
    assert "<img src=http://attacker.example" not in html  # ...as text
