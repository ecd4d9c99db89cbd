"""Files a submission holds that are not what they claim to be (issue 38, rows 14 and 15): a
Space's README.md, a logbook's pages/index.md or logbook.json that is a FIFO (reading it would
wait forever for a writer), a 300 MB index.md (reading it would take the memory of the whole
file), a page linked to a host file. Each is one line in our words, never a hang, never the
file's text; the rest of the submission is judged.

The CLI runs as a process with a time limit: a hang is a failure, not a stuck test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from judging.errors import UnsafePathError
from judging.intake import MAX_CONTROL_FILE_BYTES, read_confined
from judging.intake.logbook.reader import MAX_PAGE_BYTES
from tests.conftest import JUDGING_CLI

GOOD_PAGE = ("# Claim 1: loss halves\n---\n<!-- trackio-cell\n"
             '{"type": "markdown", "id": "c-1", "title": "Result"}\n-->\n'
             "The paper reports 0.50 and we measured 0.51.\n\n**Verdict: VERIFIED**\n")
#: Long enough for a run of four small submissions on a busy machine; a FIFO read blocks forever.
RUN_TIMEOUT_S = 240
HOST_MARKER = "HOST-FILE-MARKER-7734-do-not-echo"


def _logbook(root: Path, *, index: str | None = "# Repro\n\n[Good](#/claim-1-good)\n",
             manifest: dict | None = None) -> Path:
    (root / "pages" / "claim-1-good").mkdir(parents=True)
    (root / "pages" / "claim-1-good" / "page.md").write_text(GOOD_PAGE)
    if index is not None:
        (root / "pages" / "index.md").write_text(index)
    (root / "logbook.json").write_text(json.dumps(manifest or {"title": "Repro"}))
    return root


def test_fifos_are_one_line_each_and_never_a_hang(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    index_fifo = _logbook(subs / "index-fifo", index=None)
    os.mkfifo(index_fifo / "pages" / "index.md")
    json_fifo = _logbook(subs / "json-fifo")
    (json_fifo / "logbook.json").unlink()
    os.mkfifo(json_fifo / "logbook.json")
    page_link = _logbook(subs / "page-link")
    host_file = tmp_path / "host.md"
    host_file.write_text(f"# Claim 2: host\n{HOST_MARKER}\n**Verdict: VERIFIED**\n")
    (page_link / "pages" / "claim-2-host").mkdir()
    os.symlink(host_file, page_link / "pages" / "claim-2-host" / "page.md")
    space = subs / "readme-fifo"
    space.mkdir()
    os.mkfifo(space / "README.md")
    (space / "report.md").write_text("# Report\n\n## Claim 1: slope\n\n**Verdict: VERIFIED**\n")
    run = tmp_path / "run"
    result = subprocess.run([*JUDGING_CLI, "run", str(subs), "--out", str(run), "--judge",
                             "offline"], capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                            env={**os.environ, "COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    output = " ".join((result.stdout + result.stderr).split())
    assert "pages/index.md: a FIFO (named pipe), not a regular file: not read" in output
    assert "logbook.json: a FIFO (named pipe), not a regular file: not read" in output
    assert "readme-fifo" in output  # named in the line about folders not judged
    assert "Traceback" not in output
    lines = [json.loads(x) for x in (run / "judgments.jsonl").read_text().splitlines()]
    judged = {line["claim"]["submission_id"] for line in lines if line["status"] != "error"}
    assert {"index-fifo", "json-fifo", "page-link"} <= judged
    everything = b"".join(p.read_bytes() for p in run.rglob("*") if p.is_file())
    assert HOST_MARKER.encode() not in everything


def test_a_300_mb_index_is_refused_by_its_size_and_memory_stays_low(tmp_path: Path) -> None:
    root = _logbook(tmp_path / "big-index", index=None)
    with (root / "pages" / "index.md").open("wb") as handle:  # sparse: no disk is used
        handle.truncate(300 * 1024 * 1024)
    # peak RSS of the probe's own address space (VmHWM): getrusage's ru_maxrss would carry
    # this pytest process's peak over into the forked child
    probe = ("import json, re, sys\nfrom pathlib import Path\n"
             "from judging.intake import read_logbook\n"
             "logbook = read_logbook(Path(sys.argv[1]))\n"
             "status = Path('/proc/self/status').read_text()\n"
             "peak = int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) / 1024\n"
             "print(json.dumps({'rss_mb': peak, 'warnings': logbook.warnings, "
             "'pages': [p.slug for p in logbook.pages]}))\n")
    result = subprocess.run([sys.executable, "-c", probe, str(root)], capture_output=True,
                            text=True, timeout=RUN_TIMEOUT_S, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert f"pages/index.md: 314,572,800 bytes, over the limit of {MAX_PAGE_BYTES:,} for this " \
           f"kind of file: not read" in report["warnings"]
    assert report["pages"] == ["claim-1-good"]  # the folder listing stands in for the index
    # importing the intake costs tens of MB; reading the index would cost 300 MB at least
    assert report["rss_mb"] < 150, report["rss_mb"]


@pytest.mark.parametrize("make, words", [
    (lambda p, outside: os.mkfifo(p), "a FIFO (named pipe), not a regular file"),
    (lambda p, outside: os.symlink(outside, p), "a symbolic link, not a regular file"),
    (lambda p, outside: os.symlink("/dev/zero", p), "a symbolic link, not a regular file"),
    (lambda p, outside: p.write_bytes(b"3" * (MAX_CONTROL_FILE_BYTES + 1)),
     f"{MAX_CONTROL_FILE_BYTES + 1:,} bytes, over the limit of {MAX_CONTROL_FILE_BYTES:,}"),
])
def test_read_confined_refuses_without_blocking_or_echoing(tmp_path: Path, make, words) -> None:
    root = tmp_path / "sub"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text(HOST_MARKER)
    make(root / ".python-version", outside)
    with pytest.raises(UnsafePathError) as refused:
        read_confined(root, ".python-version", limit=MAX_CONTROL_FILE_BYTES)
    assert str(refused.value).startswith(words)
    assert HOST_MARKER not in str(refused.value) and str(outside) not in str(refused.value)


def test_read_confined_follows_only_links_that_stay_inside_and_no_folder_link(
        tmp_path: Path) -> None:
    root = tmp_path / "sub"
    (root / "env").mkdir(parents=True)
    (root / "env" / "pyproject.toml").write_text("[project]\n")
    os.symlink("env/pyproject.toml", root / "pyproject.toml")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "uv.lock").write_text(HOST_MARKER)
    os.symlink(outside, root / "linked")
    assert read_confined(root, "pyproject.toml", limit=100, links=True) == b"[project]\n"
    with pytest.raises(UnsafePathError, match="^a symbolic link"):
        read_confined(root, "pyproject.toml", limit=100)
    with pytest.raises(UnsafePathError, match="^a link that leaves the submission folder$"):
        read_confined(root, "linked/uv.lock", limit=100, links=True)
    with pytest.raises(UnsafePathError, match="^a folder on its way is a symbolic link"):
        read_confined(root, "linked/uv.lock", limit=100)
    with pytest.raises(FileNotFoundError):
        read_confined(root, "missing.txt", limit=100)
