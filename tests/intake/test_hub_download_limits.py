"""A Hub submission is downloaded only within the host's limits (issue 40): its files are counted
and sized from the Hub's listing of one commit before anything is fetched, over the fake Hub's
real HTTP, and a Space over the limits is refused with one line in our words; the limits are the
organizer's (`--max-download-files`, `--max-download-mb`, or their environment variables),
never the Space's; and the download itself is measured: files that hold more than the listing
said are removed and refused."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from judging.cli import main
from judging.errors import SourceError
from judging.intake import DownloadLimits, expand_source, fetch_hub_source, parse_hub_source
from judging.models import MAX_SOURCE_BYTES, MAX_SOURCE_FILES
from tests.fakehub import FakeHub

SPACE = ("space", "mallory/big-repro")
FRONT = ("---\ntitle: Slopes\nsdk: static\n# the Space cannot raise the host's limits\n"
         "max_download_files: 100000\n---\n\n# Slopes\n\n"
         "| Claim | Paper | Ours | Verdict |\n|---|---|---|---|\n"
         "| C1 The slope is minus one | -1.00 | -0.998 | VERIFIED |\n")


def space_files(logs: int, log_bytes: int = 10) -> dict[str, str]:
    return {"README.md": FRONT, **{f"logs/run{i}.log": "x" * log_bytes for i in range(logs)}}


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    with FakeHub({SPACE: space_files(logs=6, log_bytes=1000)}) as fake:
        fake.patch(monkeypatch, tmp_path / "hf-home")
        yield fake


def downloads(hub: FakeHub) -> list[str]:
    return [path for method, path in hub.requests if "/resolve/" in path]


def test_the_default_limits_are_the_hosts_named_constants() -> None:
    assert DownloadLimits() == DownloadLimits(files=MAX_SOURCE_FILES, bytes=MAX_SOURCE_BYTES)
    assert MAX_SOURCE_FILES >= 1000 and MAX_SOURCE_BYTES >= 2**30


def test_a_space_with_too_many_files_is_refused_before_a_byte_is_fetched(
        hub: FakeHub, tmp_path: Path) -> None:
    source = parse_hub_source(f"hf://spaces/{SPACE[1]}")
    with pytest.raises(SourceError) as info:
        fetch_hub_source(source, download_root=tmp_path / "dl", limits=DownloadLimits(files=5))
    message = str(info.value)
    assert message.startswith(f"hf://spaces/{SPACE[1]}: more than 5 files")
    assert "--max-download-files" in message and message.endswith("not downloaded")
    assert "\n" not in message
    assert downloads(hub) == [] and not (tmp_path / "dl").exists()
    # the listing was read, the Space's own front matter changed nothing
    assert any("/tree/" in path for _, path in hub.requests)


def test_a_space_too_large_is_refused_before_a_byte_is_fetched(hub: FakeHub, tmp_path: Path
                                                               ) -> None:
    with pytest.raises(SourceError, match=r"more than 0\.0 MiB in \d+ files.*--max-download-mb"):
        expand_source(f"hf://spaces/{SPACE[1]}", download_root=tmp_path / "dl",
                      limits=DownloadLimits(bytes=4000))
    assert downloads(hub) == []


def test_a_space_within_the_limits_is_downloaded(hub: FakeHub, tmp_path: Path) -> None:
    folder = fetch_hub_source(parse_hub_source(f"hf://spaces/{SPACE[1]}"),
                              download_root=tmp_path / "dl",
                              limits=DownloadLimits(files=7, bytes=6000 + len(FRONT)))
    assert (folder / "README.md").read_text() == FRONT
    assert len(list((folder / "logs").iterdir())) == 6


def test_files_holding_more_than_the_listing_said_are_removed(hub: FakeHub, tmp_path: Path
                                                             ) -> None:
    for i in range(6):  # the listing says 10 bytes per log; each holds 1000
        hub.listed_sizes[(*SPACE, f"logs/run{i}.log")] = 10
    root = tmp_path / "dl"
    with pytest.raises(SourceError) as info:
        fetch_hub_source(parse_hub_source(f"hf://spaces/{SPACE[1]}"), download_root=root,
                         limits=DownloadLimits(bytes=2000 + len(FRONT)))
    assert "downloaded files hold more than" in str(info.value)
    assert "removed, not judged" in str(info.value)
    assert not (root / "spaces" / "mallory" / "big-repro" / "@main").exists()


def test_the_organizer_sets_the_limits_on_the_command_line_or_in_the_environment(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(tmp_path)
    spec = f"hf://spaces/{SPACE[1]}"
    result = CliRunner().invoke(main, ["run", spec, "--out", str(tmp_path / "run"),
                                       "--judge", "offline", "--max-download-files", "3"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    lines = [x for x in [*result.stderr.splitlines(), *logged] if "more than 3 files" in x]
    assert len(lines) == 1 and spec in lines[0], (result.stderr, logged)
    assert "Traceback" not in result.output + result.stderr
    assert downloads(hub) == []

    monkeypatch.setenv("JUDGING_MAX_DOWNLOAD_FILES", "3")  # the organizer's environment
    result = CliRunner().invoke(main, ["run", spec, "--out", str(tmp_path / "run2"),
                                       "--judge", "offline"])
    assert result.exit_code == 1 and downloads(hub) == []
    # the command line wins over the environment: 7 files fit
    result = CliRunner().invoke(main, ["run", spec, "--out", str(tmp_path / "run3"),
                                       "--judge", "offline", "--max-download-files", "7"])
    assert result.exit_code == 0, result.output
    assert downloads(hub)


def test_without_the_hub_a_copy_downloaded_earlier_is_measured_whole(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakehub import patch_hub

    source, root = parse_hub_source(f"hf://spaces/{SPACE[1]}"), tmp_path / "dl"
    folder = fetch_hub_source(source, download_root=root)
    patch_hub(monkeypatch, "http://127.0.0.1:1", tmp_path / "hf-home")  # no Hub any more
    assert fetch_hub_source(source, download_root=root) == folder  # the copy, as before
    with pytest.raises(SourceError, match="downloaded files hold more than 5 files"):
        fetch_hub_source(source, download_root=root, limits=DownloadLimits(files=5))
    assert not folder.exists()
