"""The shapes a submission folder can have, and the one precedence list that decides a folder's
shape (issue 40). A shape is one module's object with the `Shape` protocol: it says whether a
folder has its shape, whether that folder is one submission or stands for its subfolders, and
loads it. Every place that asks "what is this folder?" (loading, `judging check`, a SOURCE
argument's expansion, a downloaded Space's linked datasets) asks this module, so the order is
spelled once: a new shape is one module and one line in `SHAPES`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from judging.hashing import slug
from judging.intake.logbook import LOGBOOK, StructuredAsk
from judging.intake.manifest import MANIFEST, LoadedSubmission
from judging.intake.registry import Registry
from judging.intake.space import SPACE


class Shape(Protocol):
    """One way a participant hands in a submission."""

    name: str

    def detect(self, folder: Path) -> bool:
        """The folder has this shape."""

    def one_submission(self, folder: Path, *, hub: bool,
                       children: Callable[[], list[Path]]) -> bool:
        """The folder (a SOURCE argument, downloaded when `hub`) is one submission of this
        shape, not a folder of submissions (`children`: its subfolders that have a shape)."""

    def load(self, folder: Path, *, out_dir: Path | None, registry: Registry | None,
             extractor: StructuredAsk | None, **places: frozenset[str]) -> LoadedSubmission:
        """The folder as a submission; what is written goes under `out_dir` (the run's)."""


#: Strongest first: a manifest beside a logbook or a README is what the participant declared;
#: a logbook's README may open with front matter too, and is still a logbook.
SHAPES: tuple[Shape, ...] = (MANIFEST, LOGBOOK, SPACE)


def shape_for(folder: Path | str) -> Shape | None:
    """The first shape of `SHAPES` the folder has, else None."""
    folder = Path(folder)
    return next((shape for shape in SHAPES if shape.detect(folder)), None)


def shape_of(folder: Path | str) -> str | None:
    """The name of the folder's shape, else None."""
    shape = shape_for(folder)
    return shape.name if shape is not None else None


def one_submission(folder: Path, *, hub: bool, children: Callable[[], list[Path]]) -> bool:
    """The folder is one submission (of the first shape, in `SHAPES` order, that says so), not
    a folder of them."""
    return any(shape.one_submission(folder, hub=hub, children=children) for shape in SHAPES)


def load_folder(folder: Path | str, *, registry: Registry | None = None,
                logbooks_dir: Path | None = None, extractor: StructuredAsk | None = None,
                **places: frozenset[str]) -> LoadedSubmission:
    """One submission folder of any shape (a folder of none is read as a manifest's, whose
    loader says what is missing). What a shape writes (a logbook's figures and run logs) goes
    under `logbooks_dir`/<the folder's slug>, in the run directory. `places` (`verdict_places`,
    `value_places`) narrow the declared places read (benchmarks)."""
    folder = Path(folder)
    # one output folder per source folder: the name to read it by, the full path to keep two
    # folders of one name apart
    resolved = folder.resolve()
    out_dir = (Path(logbooks_dir) / slug(f"{resolved.name}@{resolved}")
               if logbooks_dir is not None else None)
    shape = shape_for(folder) or MANIFEST
    return shape.load(folder, out_dir=out_dir, registry=registry, extractor=extractor, **places)
