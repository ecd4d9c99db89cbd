"""Measuring a claim in a run: load its figures and data files, ask `judging.signals` for the
signals (`measure_pair`, `measure_numbers`), and write the reviewer images to the run directory;
the measurement key under which the measurement cache (`pool.MeasurementCache`) keeps it."""

from __future__ import annotations

import functools
import hashlib
import logging
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from PIL import Image

from judging.atomic import write_png_atomic
from judging.errors import FigureDataError, ImageLoadError
from judging.figures.data import FigureDataFile, load_figure_data
from judging.hashing import content_hash, file_sha256
from judging.models import (
    MAX_NOTE_CHARS,
    Artifacts,
    ChartTrace,
    ClaimInput,
    ClaimKind,
    Flag,
    Signal,
)
from judging.rules import plotting_rerun
from judging.run.integrity import figure_phash
from judging.rundir import claim_images
from judging.signals import (
    DEFAULT_MAX_PIXELS,
    DEFAULT_SIZE,
    FIGURE_SIGNALS,
    TRACE_SIGNAL,
    PairSignals,
    check_copy,
    load_image,
    measure_numbers,
    measure_pair,
    reduce_towards,
    reproduced_values,
    trim_border,
    value_in_tool_output,
)
from judging.traces import ToolCall, tool_calls

log = logging.getLogger(__name__)

#: Bump when signal definitions change: part of every judgment's input hash.
SIGNALS_VERSION = "signals/9"


@dataclass(frozen=True)
class MeasureOptions:
    image_size: int = DEFAULT_SIZE
    max_pixels: int = DEFAULT_MAX_PIXELS
    chart: bool = True
    """Read the plotted data back from both figures (the chart.* signals)."""

    def as_settings(self) -> dict[str, int | str | bool]:
        return {"signals": SIGNALS_VERSION, "image_size": self.image_size,
                "max_pixels": self.max_pixels, "chart": self.chart}


@dataclass
class Measurement:
    signals: dict[str, Signal] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)
    artifacts: Artifacts = field(default_factory=Artifacts)
    images: dict[str, Path] = field(default_factory=dict)
    figure_error: str | None = None
    """Why a figure claim's figures could not be compared (the figure rubric cannot be judged)."""
    fingerprint: str | None = None
    """Perceptual hash of the trimmed reproduced figure (integrity checks across submissions)."""
    cpu_s: float = 0.0
    """CPU seconds the measurement took (0 for one read from the measurement cache)."""
    cached: bool = False
    """Read from the measurement cache (nothing was measured)."""
    chart_trace: ChartTrace | None = None
    """What the chart reader read of the pair, and why chart.same_data is what it is."""


def _save_png(image: Image.Image, path: Path) -> None:
    write_png_atomic(image, path, optimize=False, compress_level=1)


def _absent_figures(reason: str) -> Measurement:
    return Measurement(figure_error=reason,
                       signals={name: Signal.absent(reason) for name in FIGURE_SIGNALS})


def _load_pair(claim: ClaimInput, options: MeasureOptions
               ) -> tuple[Image.Image, Image.Image] | str:
    """The claim's published and reproduced figures, or why they cannot be compared."""
    if claim.published_path is None:
        return "no published figure (neither in the submission nor the registry)"
    if claim.reproduced_path is None:
        return "no reproduced figure"
    try:
        published = load_image(claim.published_path, max_pixels=options.max_pixels)
    except ImageLoadError as exc:
        return f"published figure: {exc}"
    try:
        return published, load_image(claim.reproduced_path, max_pixels=options.max_pixels)
    except ImageLoadError as exc:
        return f"reproduced figure: {exc}"


def _rerun(claim: ClaimInput) -> str | None:
    """How the claim's logs show its plotting script re-run, if they do."""
    found = plotting_rerun(claim)
    return found.describe() if found is not None else None


def measure_figures(claim: ClaimInput, *, options: MeasureOptions, out_dir: Path | None,
                    run_root: Path | None) -> Measurement:
    """A figure claim's signals (`signals.measure_pair` over the loaded figures and data files)
    and flags; the reviewer images are written under `out_dir` when given."""
    loaded = _load_pair(claim, options)
    if isinstance(loaded, str):
        return _absent_figures(loaded)
    published, reproduced = loaded
    assert claim.published_path is not None and claim.reproduced_path is not None
    published_data, published_flag = figure_data(claim, "published") if options.chart \
        else (None, None)
    reproduced_data, reproduced_flag = figure_data(claim, "reproduced") if options.chart \
        else (None, None)
    pair = measure_pair(
        published, reproduced, size=options.image_size, tolerance=claim.claim.tolerance,
        same_bytes=file_sha256(claim.published_path) == file_sha256(claim.reproduced_path),
        chart=options.chart, published_data=published_data, reproduced_data=reproduced_data,
        rerun=lambda: _rerun(claim))
    result = Measurement(signals=pair.signals, flags=list(pair.flags),
                         chart_trace=pair.chart_trace)
    # The reproduced figure as the pixel comparison trimmed it (after a conversion to RGB, which
    # changes no pixel of an RGB figure): one trim less per claim.
    trimmed = pair.comparison.trimmed_reproduced
    result.fingerprint = figure_phash(
        trimmed if trimmed is not None and reproduced.mode == "RGB" else
        trim_border(reduce_towards(reproduced, options.image_size)))
    if claim.participant_reference_path is not None:
        result.flags.extend(check_participant_reference(claim, published, options=options))
    result.flags += [f for f in (published_flag, reproduced_flag) if f is not None]
    if published_data is not None or reproduced_data is not None:
        result.flags.append(data_path_flag(claim, published_data, reproduced_data,
                                           reference_lines=pair.reference_lines))
    if out_dir is not None and run_root is not None:
        result.images = _write_images(pair, out_dir)
        result.artifacts = Artifacts(**{k: p.relative_to(run_root).as_posix()
                                        for k, p in result.images.items()})
    return result


def _write_images(pair: PairSignals, out_dir: Path) -> dict[str, Path]:
    """The normalised figures, their diff and the chart overlay (when there is one), for
    reviewers."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = claim_images(out_dir)
    overlay_path = paths.pop("overlay")
    if pair.overlay is not None:
        paths["overlay"] = overlay_path
        _save_png(pair.overlay.convert("RGB"), paths["overlay"])
    _save_png(pair.comparison.published, paths["published"])
    _save_png(pair.comparison.reproduced, paths["reproduced"])
    _save_png(pair.comparison.diff, paths["diff"])
    return paths


def _data_name(claim: ClaimInput, side: str) -> str:
    """How a data file is named to people: as the manifest names it, else by its file name (the
    registry's, or one a logbook's raw data was written to)."""
    path = claim.published_data_path if side == "published" else claim.reproduced_data_path
    named = claim.claim.published_data if side == "published" else claim.claim.reproduced_data
    assert path is not None
    if named is not None and (claim.root / named).resolve() == path.resolve():
        return named
    if side == "published" and claim.reference.value == "registry":
        return f"the registry's {path.name}"
    return path.name


def figure_data(claim: ClaimInput, side: str) -> tuple[FigureDataFile | None, Flag | None]:
    """The data file of one side of a figure claim (the published side read leniently: it is
    organizers' or a paper's export), or None and a flag saying why it was refused."""
    path = claim.published_data_path if side == "published" else claim.reproduced_data_path
    if path is None:
        return None, None
    name = _data_name(claim, side)
    try:
        return load_figure_data(path, lenient=side == "published", shown=name), None
    except FigureDataError as exc:
        reason = str(exc)
    except Exception as exc:  # an unexpected failure on one file must not sink the claim
        log.exception("reading the figure data %s failed", path)
        reason = f"{name}: {type(exc).__name__}: {str(exc)[:160]}"
    return None, Flag(name="figure_data_refused",
                      detail=f"the {side} figure's data was refused ({reason}); the {side} "
                             f"chart was read from its image instead")


def data_path_flag(claim: ClaimInput, published: FigureDataFile | None,
                   reproduced: FigureDataFile | None, *, reference_lines: int = 0) -> Flag:
    """Which path the chart comparison took, for the report and reviewers."""
    def side(name: str, data: FigureDataFile | None) -> str:
        if data is None:
            return f"the {name} series read from its image"
        return f"the {name} series from its data ({_data_name(claim, name)}, {data.describe()})"

    how = "data to data" if published is not None and reproduced is not None else \
        "data to image"
    lines = (f"; {reference_lines} unnamed horizontal line(s) of the image left out as "
             f"reference lines, which the data has no series for" if reference_lines else "")
    return Flag(name="compared_from_data",
                detail=f"chart signals compare {side('published', published)} with "
                       f"{side('reproduced', reproduced)} ({how}){lines}"[:MAX_NOTE_CHARS])


def check_participant_reference(claim: ClaimInput, registry_figure: Image.Image, *,
                                options: MeasureOptions) -> list[Flag]:
    """Flag a submission whose own copy of a registry figure differs from the registry's."""
    assert claim.participant_reference_path is not None
    if claim.published_path is not None and \
            file_sha256(claim.participant_reference_path) == file_sha256(claim.published_path):
        return []
    try:
        own = load_image(claim.participant_reference_path, max_pixels=options.max_pixels)
    except ImageLoadError as exc:
        return [Flag(name="reference_mismatch",
                     detail=f"the submission's copy of the published figure is unreadable ({exc});"
                            f" the registry's figure was used")]
    check = check_copy(registry_figure, own)
    if check.copy:
        return []
    return [Flag(name="reference_mismatch",
                 detail=f"the submission's copy of the published figure differs from the "
                        f"registry's ({check.how}); the registry's figure was used")]


def measure_claim(claim: ClaimInput, *, options: MeasureOptions, run_root: Path | None = None,
                  out_dir: Path | None = None) -> Measurement:
    """All signals of one claim; figure images are written under `out_dir` when given."""
    if claim.claim.kind is ClaimKind.figure:
        result = measure_figures(claim, options=options, out_dir=out_dir, run_root=run_root)
    else:
        result = Measurement()
    result.signals.update(measure_numbers(claim))
    if claim.claim.evidence.traces:
        result.signals[TRACE_SIGNAL] = measure_trace(claim)
    return result


def measure_trace(claim: ClaimInput) -> Signal:
    """`trace.value_in_tool_output` from the claim's trace files (read here, bounded)."""
    traces: dict[str, list[ToolCall]] = {}
    for i, name in enumerate(claim.claim.evidence.traces):
        path = claim.evidence_paths.get(f"traces[{i}]")
        if path is None or not path.is_file():
            continue
        try:
            traces[name] = tool_calls(path)
        except OSError:
            continue
    if not traces:
        return Signal.absent("none of the claim's traces can be read: "
                             + ", ".join(claim.claim.evidence.traces))
    return value_in_tool_output(reproduced_values(claim), traces)


#: Claim fields that no measurement reads (identity and prose): left out of the measurement key,
#: so that the same figures under another claim id or wording are measured once.
NOT_MEASURED = frozenset({"claim_id", "source", "statement", "justification", "scale_note",
                          "verdict", "source_verdict", "toy", "provenance", "absent",
                          "theorem_values"})
#: The code a measurement runs, besides the signals package (whose every file counts).
MEASURE_MODULES = ("run/measure.py", "run/integrity.py", "figures/data.py", "figures/formats.py",
                   "rules.py", "models.py", "signal_catalogue.py", "traces/__init__.py",
                   "traces/events.py")
#: Libraries whose version can change a measured value.
MEASURE_LIBRARIES = ("numpy", "scipy", "scikit-image", "pillow")


@functools.cache
def measure_code_digest() -> str:
    """sha256 of the source of the code that measures (the signals package and the modules in
    MEASURE_MODULES) and of the libraries' versions: a cached measurement is valid only for the
    code that made it, so an edit of a chart heuristic re-measures without a version bump."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    files = sorted((package / "signals").rglob("*.py")) + [package / m for m in MEASURE_MODULES]
    for path in files:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for name in MEASURE_LIBRARIES:
        try:
            digest.update(f"{name}=={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} absent\0".encode())
    return "sha256:" + digest.hexdigest()


def measurement_key(claim: ClaimInput, options: MeasureOptions) -> str | None:
    """What a figure claim's measurement depends on, as a hash: the contents of every file it
    reads (figures, data files, the participant's copy of a registry figure, the cited scripts
    and logs, by name and content), the claim's measured fields, the options and the code.
    None for other kinds of claims (their signals cost microseconds: nothing to cache)."""
    if claim.claim.kind is not ClaimKind.figure:
        return None
    files = {"published": claim.published_path, "reproduced": claim.reproduced_path,
             "participant_reference": claim.participant_reference_path,
             "published_data": claim.published_data_path,
             "reproduced_data": claim.reproduced_data_path, **claim.evidence_paths}
    return content_hash({
        "code": measure_code_digest(), "options": options.as_settings(),
        "claim": claim.claim.model_dump(mode="json", exclude=set(NOT_MEASURED)),
        "reference": claim.reference.value,
        # the names a flag shows (the data files' names) and the ones plotting_rerun looks for
        "data_names": {side: _data_name(claim, side) for side in ("published", "reproduced")
                       if (claim.published_data_path if side == "published"
                           else claim.reproduced_data_path) is not None},
        "files": {role: (path.name, file_sha256(path)) if path is not None else None
                  for role, path in sorted(files.items())}})
