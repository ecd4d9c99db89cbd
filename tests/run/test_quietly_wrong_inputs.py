"""Inputs that were quietly wrong (issue 39), each through the CLI as a user runs it: a corrupt
PNG that `check` called ok, a logbook without its index or without pages, the example logbook's
front matter, a broken manifest that still made a run folder, a copied run that duplicated its
claims on resume.

Each command is a process of its own, forked from a server that imported the package once
(tests/forked_cli.py: issue 43)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import EXAMPLES, JUDGING_SCRIPT, REGISTRY, SubmissionBuilder
from tests.forked_cli import ForkedCli

DANA = EXAMPLES / "logbooks" / "dana-neurips26-4821"


@pytest.fixture
def measured_once(measurement_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's measurement cache for this test's processes (JUDGING_MEASURE_CACHE, read
    through `_env`), for a test that judges the example logbook for what a run says of its files
    (the index, the front matter), not for its figures' measurements. For this test alone (not
    the module's `shared_measurements`): the copied run keeps its own cache in its directory,
    since what a copy of a run directory holds is what that test is about."""
    monkeypatch.setenv("JUDGING_MEASURE_CACHE", str(measurement_cache))


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkedCli]:
    server = ForkedCli.start(tmp_path_factory.mktemp("cli"), env=_env(),
                             argv0=str(JUDGING_SCRIPT))
    yield server
    server.stop()


def _judging(cli: ForkedCli, *args: str | Path, cwd: Path | None = None
             ) -> subprocess.CompletedProcess:
    return cli.run(list(map(str, args)), timeout=300, cwd=cwd, env=_env())


def _env() -> dict[str, str]:
    # wide enough that no line of a table is cut where a test reads it
    return {**os.environ, "COLUMNS": "250"}


def _png(color: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), color).save(buffer, format="PNG")
    return buffer.getvalue()


def test_check_decodes_a_figure_as_run_does(tmp_path: Path, cli: ForkedCli) -> None:
    good = _png("white")
    corrupt = good[:60] + b"\0" * (len(good) - 60)  # a valid header, broken pixel data
    sub = SubmissionBuilder(tmp_path / "sub")
    sub.figure_claim(published=good, reproduced=corrupt)
    sub.write()
    checked = _judging(cli, "check", sub.root)
    assert checked.returncode != 0, checked.stdout
    out = " ".join(checked.stdout.split())
    assert "cannot be read as `judging run` reads it" in out and "corrupt" in out
    judged = _judging(cli, "run", sub.root, "--out", tmp_path / "run", "--judge", "offline")
    assert "corrupt" in judged.stdout + judged.stderr or \
        "corrupt" in (tmp_path / "run" / "judgments.jsonl").read_text()


@pytest.mark.usefixtures("measured_once")
def test_a_logbook_without_its_index_is_said(tmp_path: Path, cli: ForkedCli) -> None:
    book = tmp_path / "book"
    shutil.copytree(DANA, book)
    (book / "pages" / "index.md").unlink()
    judged = _judging(cli, "run", book, "--out", tmp_path / "run", "--judge", "offline")
    assert judged.returncode == 0, judged.stderr
    assert "no pages/index.md" in " ".join(judged.stderr.split())
    checked = _judging(cli, "check", book, "--profile", "icml2026")
    out = " ".join(checked.stdout.split())
    assert "pages/index.md is missing" in out and "(no H1)" not in out


def test_a_logbook_with_no_pages_fails(tmp_path: Path, cli: ForkedCli) -> None:
    book = tmp_path / "book"
    shutil.copytree(DANA, book)
    shutil.rmtree(book / "pages")
    (book / "pages").mkdir()
    judged = _judging(cli, "run", book, "--out", tmp_path / "run", "--judge", "offline")
    assert judged.returncode == 1
    assert "nothing judged" in judged.stderr and "no claim found" in judged.stderr


@pytest.mark.usefixtures("measured_once")
def test_the_example_logbooks_front_matter_is_yaml_and_bad_yaml_is_said(tmp_path: Path,
                                                                        cli: ForkedCli
                                                                        ) -> None:
    import yaml

    text = (DANA / "README.md").read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["title"].startswith("Reproduction: ") and "paper-neurips26-4821" in front["tags"]
    book = tmp_path / "book"
    shutil.copytree(DANA, book)
    (book / "README.md").write_text(text.replace(f"title: '{front['title']}'",
                                                 f"title: {front['title']}"))
    checked = _judging(cli, "check", book)
    out = " ".join(checked.stdout.split())
    assert "front matter is not YAML" in out
    judged = _judging(cli, "run", book, "--out", tmp_path / "run", "--judge", "offline")
    assert judged.returncode == 0 and "front matter is not YAML" in judged.stderr
    # the tags are still read: the paper id comes from paper-neurips26-4821
    claims = (tmp_path / "run" / "claims.jsonl").read_text()
    assert '"paper_id":"neurips26-4821"' in claims


def test_a_broken_manifest_alone_makes_no_run_folder(tmp_path: Path, cli: ForkedCli) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "submission.yaml").write_text("submission_id: x/y\nclaims: [\n")
    judged = _judging(cli, "run", broken, "--out", tmp_path / "run", "--judge", "offline")
    assert judged.returncode != 0
    assert "not valid YAML" in judged.stderr
    assert not (tmp_path / "run").exists()


def test_a_copied_run_resumes_without_duplicating_claims(tmp_path: Path, cli: ForkedCli) -> None:
    first = tmp_path / "a"
    args = [EXAMPLES / "submissions", EXAMPLES / "logbooks", "--claims", REGISTRY,
            "--judge", "offline"]
    assert _judging(cli, "run", *args, "--out", first).returncode == 0
    stored = (first / "claims.jsonl").read_text()
    assert str(first.resolve()) not in stored  # its own files are named relative to it
    # an older run wrote absolute paths: the same lines, as the old code wrote them
    old = "".join(json.dumps(_absolute(json.loads(line), first.resolve())) + "\n"
                  for line in stored.splitlines())
    (first / "claims.jsonl").write_text(old)
    assert str(first.resolve()) in old
    for copy in (tmp_path / "b", tmp_path / "c"):
        shutil.copytree(first, copy)
        lines = (copy / "claims.jsonl").read_text().count("\n")
        judgments = (copy / "judgments.jsonl").read_text().count("\n")
        resumed = _judging(cli, "run", *args, "--out", copy)
        assert resumed.returncode == 0, resumed.stderr
        assert "0 new judgment line(s)" in " ".join(resumed.stdout.split())
        assert (copy / "claims.jsonl").read_text().count("\n") == lines
        assert (copy / "judgments.jsonl").read_text().count("\n") == judgments
        shutil.rmtree(first)  # the report reads the copy's own files, not the original's
        report = _judging(cli, "report", copy)
        assert report.returncode == 0, report.stderr
        shutil.copytree(copy, first)


def _absolute(line: dict, root: Path) -> dict:
    def fix(value):
        if isinstance(value, str) and (value.startswith("logbooks/")
                                       or value.startswith("sources/")):
            return str(root / value)
        return value

    for name in ("root", "published_path", "reproduced_path", "published_data_path",
                 "reproduced_data_path", "participant_reference_path"):
        line[name] = fix(line.get(name))
    line["evidence_paths"] = {k: fix(v) for k, v in line.get("evidence_paths", {}).items()}
    return line
