"""Walk one claim from a free-form Space to its leaderboard row and count the stops: the
package's functions that run, and the files they are in, stage by stage.

    python tools/walk.py [--list]

Issue 43 asks for a `farm-studio walk` of this path (stops and files, before and after a
change); that tool is not on this machine, so this one measures the same thing from the other
side: a Space with one claim (written here, the shape the NeurIPS 2026 hackathon publishes) is
judged offline, resolved and ranked in one process under `sys.setprofile`, and every function
of `judging/` that runs on the way is a stop. Hand-written because no library counts the code a
command path runs by function; `coverage` counts lines, and a line count says less about how
far a reader has to follow a claim than the functions it passes.

Compare two trees by running it with each on `PYTHONPATH` (the counts are of the tree imported).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

README = """---
title: Reproducing the baseline of 2601.00001
sdk: static
tags: [arxiv:2601.00001]
---

# Reproduction report

| Claim | Paper | Ours | Verdict |
|---|---|---|---|
| Top-1 accuracy of the baseline on the test set | 94.1 | 93.8 | ✅ |
"""


def _space(root: Path) -> Path:
    folder = root / "spaces" / "alice--repro-2601.00001"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(README, encoding="utf-8")
    return root / "spaces"


def _stops(package: Path, action: Callable[[], None]) -> set[tuple[str, str]]:
    """The (file, function) pairs of `package` that run while `action` does."""
    seen: set[tuple[str, str]] = set()
    prefix = str(package) + "/"

    def profile(frame, event, arg) -> None:
        # A comprehension or a lambda is a part of the function it stands in, not a stop.
        if event == "call" and frame.f_code.co_filename.startswith(prefix) and \
                not frame.f_code.co_name.startswith("<"):
            seen.add((frame.f_code.co_filename[len(prefix):], frame.f_code.co_qualname))

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print every stop")
    options = parser.parse_args()
    from click.testing import CliRunner

    import judging
    from judging.cli import main as cli

    package = Path(judging.__file__).parent
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        spaces, run = _space(root), root / "run"
        stages = {"run": ["run", str(spaces), "--judge", "offline", "--out", str(run)],
                  "resolve": ["resolve", str(run)],
                  "leaderboard": ["leaderboard", str(run)]}
        walked: set[tuple[str, str]] = set()
        print(f"package: {package}")
        for stage, arguments in stages.items():
            results = []
            stops = _stops(package, lambda a=arguments, r=results: r.append(
                CliRunner().invoke(cli, a, catch_exceptions=False)))
            if results[0].exit_code != 0:
                raise SystemExit(f"{stage} failed: {results[0].output}")
            walked |= stops
            print(f"{stage:12s} {len(stops):5d} stops in {len({f for f, _ in stops}):3d} files")
        print(f"{'together':12s} {len(walked):5d} stops in {len({f for f, _ in walked}):3d} files")
        intake = {s for s in walked if s[0].startswith("intake/")}
        print(f"{'of intake':12s} {len(intake):5d} stops in {len({f for f, _ in intake}):3d} files")
        if options.list:
            for file, function in sorted(walked):
                print(f"  {file}: {function}")


if __name__ == "__main__":
    main()
