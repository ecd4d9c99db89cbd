"""The shapes a submission folder can have, and the one precedence list that decides a folder's
shape (issue 40): our manifest, else a Trackio logbook, else a free-form Space (a README with
front matter). Every place that asks "what is this folder?" (loading, `judging check`, a folder
of submissions) asks `shape_of`, so the order is spelled once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from judging.intake.logbook import is_logbook
from judging.intake.manifest import find_manifest
from judging.intake.space import is_space

#: Strongest first: a manifest beside a logbook or a README is what the participant declared;
#: a logbook's README may open with front matter too, and is still a logbook.
SHAPES: tuple[tuple[str, Callable[[Path], bool]], ...] = (
    ("manifest", lambda folder: find_manifest(folder) is not None),
    ("logbook", is_logbook),
    ("space", is_space),
)


def shape_of(folder: Path | str) -> str | None:
    """The first shape of `SHAPES` the folder has, else None."""
    folder = Path(folder)
    return next((name for name, test in SHAPES if test(folder)), None)
