"""Attacks on the engine layer that `judging rerun` runs on (issue 43): the tar helper that ships a
submission's folder to a Ray node and brings a claim's logs back, and the budget of tasks run at
once (its Ray test is in test_engine_rules.py, which shares the Ray cluster).

The archives here are made by hand, as a node that is not ours (or a script that took one over,
a `--no-sandbox` run on a remote node) would send them back: on the Python this package runs,
tarfile's own "data" filter lets a chain of links past PATH_MAX write anywhere.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from judging.engines.ray import EngineError, pack_tree, unpack_tree

#: A folder name long enough that 16 of them nest past PATH_MAX (4096).
LONG = "d" * 247
STEPS = "abcdefghijklmnop"


def _archive(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, data in members:
            if data is not None:
                member.size = len(data)
            archive.addfile(member, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type, member.linkname = kind, link
    return member


def _past_path_max() -> bytes:
    """Links whose real path is longer than PATH_MAX, where `os.path.realpath` stops resolving:
    `escape` looks inside to the "data" filter, and leads two folders above the target (from a
    claim's logs folder: into the run directory)."""
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    path = ""
    for step in STEPS:
        members.append((_member(os.path.join(path, LONG), tarfile.DIRTYPE), None))
        members.append((_member(os.path.join(path, step), tarfile.SYMTYPE, LONG), None))
        path = os.path.join(path, LONG)
    deep = os.path.join(*STEPS, "l" * 254)
    members.append((_member(deep, tarfile.SYMTYPE, "../" * len(STEPS)), None))
    members.append((_member("escape", tarfile.SYMTYPE, deep + "/../.."), None))
    members.append((_member("escape/pwned.txt"), b"written outside\n"))
    return _archive(*members)


HOSTILE_ARCHIVES = {
    "links past PATH_MAX": _past_path_max,
    "a link out, then a file through it": lambda: _archive(
        (_member("out", tarfile.SYMTYPE, "../.."), None),
        (_member("out/pwned.txt"), b"x")),
    "a hard link to a file of the node": lambda: _archive(
        (_member("passwd", tarfile.LNKTYPE, "../../pwned.txt"), None)),
    "a hard link to a file not in the archive": lambda: _archive(
        (_member("passwd", tarfile.LNKTYPE, "etc/passwd"), None)),
    "a symbolic link, even inside": lambda: _archive(
        (_member("link", tarfile.SYMTYPE, "stdout.txt"), None)),
    "a device": lambda: _archive((_member("null", tarfile.CHRTYPE), None)),
    "an absolute name": lambda: _archive((_member("/tmp/pwned.txt"), b"x")),
    "a sparse file of 1 TiB": lambda: _archive((_sparse(), None)),
    "logs of 10 MB": lambda: _archive((_member("stdout.txt"), b"y" * (10 << 20))),
}


def _sparse() -> tarfile.TarInfo:
    member = _member("big.bin", tarfile.GNUTYPE_SPARSE)
    member.size = 1 << 40
    return member


@pytest.mark.parametrize("attack", list(HOSTILE_ARCHIVES))
def test_an_archive_from_a_node_writes_nothing_outside_the_logs_folder(tmp_path: Path,
                                                                       attack: str) -> None:
    target = tmp_path / "run" / "reruns" / "claim"
    with pytest.raises(EngineError, match="an archive was refused"):
        unpack_tree(HOSTILE_ARCHIVES[attack](), target, symlinks=False, max_bytes=1 << 20)
    # before: the links past PATH_MAX wrote run/pwned.txt, in the run directory itself
    for outside in (tmp_path / "run" / "pwned.txt", tmp_path / "pwned.txt",
                    Path("/tmp/pwned.txt")):
        assert not outside.exists(), outside


def test_a_submissions_links_reach_the_node_as_links_never_followed(tmp_path: Path) -> None:
    """The submission shipped to a node keeps its links as the local sandbox's copy does (an
    absolute one was refused, failing the claim on Ray only), and a link chain past PATH_MAX
    shipped the same way writes nothing through its links."""
    folder = tmp_path / "submission"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "a.txt").write_text("a\n")
    os.symlink("/etc", folder / "system")
    os.symlink("data/a.txt", folder / "same.txt")
    os.link(folder / "data" / "a.txt", folder / "hard.txt")
    node = tmp_path / "node" / "submission"
    unpack_tree(pack_tree(folder), node)
    assert os.readlink(node / "system") == "/etc" and os.readlink(node / "same.txt") == \
        "data/a.txt"
    assert (node / "hard.txt").read_text() == "a\n"
    with pytest.raises(EngineError):
        unpack_tree(_past_path_max(), tmp_path / "node2" / "x" / "submission")
    assert not (tmp_path / "node2" / "pwned.txt").exists()


def test_a_folder_sent_back_keeps_its_hard_links(tmp_path: Path) -> None:
    """A shard's run directory links its images to its measurement cache: they come back."""
    folder = tmp_path / "shard"
    (folder / "cache").mkdir(parents=True)
    (folder / "cache" / "img.png").write_bytes(b"png")
    (folder / "figures").mkdir()
    os.link(folder / "cache" / "img.png", folder / "figures" / "img.png")
    unpack_tree(pack_tree(folder), tmp_path / "back", symlinks=False, max_bytes=1 << 20)
    assert (tmp_path / "back" / "figures" / "img.png").read_bytes() == b"png"


def test_a_budget_in_the_other_unit_is_refused_not_ignored() -> None:
    """`--budget '$5'` on the local or Ray engine (run time) and `--budget 2h` on HF Jobs
    (dollars) capped nothing: every claim started, silently."""
    from judging.engines import Budget, BudgetDriver
    from judging.engines.budget import BudgetUnitError

    with pytest.raises(BudgetUnitError, match=r"--budget \$5: this engine spends run time"):
        BudgetDriver(Budget(usd=5))
    with pytest.raises(BudgetUnitError, match="this engine spends dollars"):
        BudgetDriver(Budget(seconds=7200), usd=True)
    assert BudgetDriver(Budget(seconds=60)).refuses(61) is not None
    assert BudgetDriver(Budget(usd=5), usd=True).refuses(6) is not None
