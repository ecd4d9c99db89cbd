"""The measure stage: compute a claim's signals and write its reviewer images to the run directory."""

from __future__ import annotations

import functools
import hashlib
import logging
import math
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from PIL import Image

from judging.atomic import write_png_atomic
from judging.errors import FigureDataError, ImageLoadError
from judging.figures.data import FigureDataFile, load_figure_data
from judging.hashing import content_hash, file_sha256
from judging.models import Artifacts, ClaimInput, ClaimKind, Flag, Signal, Tolerance
from judging.rules import plotting_rerun
from judging.run.integrity import figure_phash
from judging.rundir import claim_images
from judging.signal_catalogue import signal_names
from judging.signals import (
    CHART_SIGNALS,
    CHART_SOURCE_SIGNALS,
    DEFAULT_MAX_PIXELS,
    DEFAULT_SIZE,
    ChartReading,
    CopyCheck,
    agreement,
    check_copy,
    compare_charts,
    compare_figures,
    load_image,
    read_chart,
    reading_from_data,
    reduce_towards,
    render_overlay,
    table_agreement,
    trim_border,
    without_reference_lines,
)

log = logging.getLogger(__name__)

#: Bump when signal definitions change: part of every judgment's input hash.
SIGNALS_VERSION = "signals/6"


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


FIGURE_SIGNALS = (*signal_names("pixel"), *CHART_SIGNALS, *CHART_SOURCE_SIGNALS)


#: Chart readings of this process by pixel content (oldest dropped first past READINGS_KEPT).
_READINGS: dict[str, ChartReading] = {}
READINGS_KEPT = 128


def read_chart_once(image: Image.Image) -> ChartReading:
    """read_chart, remembered by pixel content for this process: reading a chart costs about
    0.3 s, and one process (a rerun with other rubrics, the test suite) meets a figure again."""
    digest = hashlib.sha256(image.mode.encode() + repr(image.size).encode()
                            + image.tobytes()).hexdigest()
    reading = _READINGS.get(digest)
    if reading is None:
        reading = read_chart(image)
        if len(_READINGS) >= READINGS_KEPT:
            _READINGS.pop(next(iter(_READINGS)))
        _READINGS[digest] = reading
    return reading


@dataclass
class ChartPair:
    """The chart comparison of a figure pair, and how each side was read."""

    signals: dict[str, Signal]
    overlay: Image.Image | None = None
    reference_lines: int = 0
    """Unnamed flat lines of an image side left out because the data side has no such series."""


def chart_readings(published: Image.Image, reproduced: Image.Image, *,
                   published_data: FigureDataFile | None = None,
                   reproduced_data: FigureDataFile | None = None
                   ) -> tuple[ChartReading, ChartReading, int]:
    """The readings of a figure pair: a side with data is built from it, the other read from
    its image; a scale a data file leaves unstated comes from the other side. When one side is
    data and the other an image, the image's reference lines that the data has no series for
    are left out (their count is the third value)."""
    published_reading = read_chart_once(published) if published_data is None else None
    reproduced_reading = read_chart_once(reproduced) if reproduced_data is None else None
    if published_data is not None:
        # both from data: the reproduced data lends the scales it states
        other = (reading_from_data(reproduced_data.data) if reproduced_data is not None
                 else reproduced_reading)
        published_reading = reading_from_data(published_data.data, other=other)
    if reproduced_data is not None:
        reproduced_reading = reading_from_data(reproduced_data.data, other=published_reading)
    assert published_reading is not None and reproduced_reading is not None
    left_out = 0
    if published_data is None and reproduced_data is not None:
        published_reading, left_out = without_reference_lines(published_reading,
                                                              reproduced_reading)
    elif published_data is not None and reproduced_data is None:
        reproduced_reading, left_out = without_reference_lines(reproduced_reading,
                                                               published_reading)
    return published_reading, reproduced_reading, left_out


def compare_pair(published: Image.Image, reproduced: Image.Image, *,
                 tolerance: Tolerance | None, published_data: FigureDataFile | None = None,
                 reproduced_data: FigureDataFile | None = None) -> ChartPair:
    """The chart.* signals of a figure pair and the overlay of the data of both (from a side's
    data file instead of its image where one is given)."""
    try:
        published_reading, reproduced_reading, left_out = chart_readings(
            published, reproduced, published_data=published_data,
            reproduced_data=reproduced_data)
        comparison = compare_charts(published_reading, reproduced_reading, tolerance=tolerance)
        overlay = render_overlay(published_reading, reproduced_reading, comparison)
    except Exception as exc:  # heuristics over untrusted images: a failure is an absent signal
        log.exception("reading the charts failed")
        reason = f"chart reading failed ({type(exc).__name__}: {str(exc)[:120]})"
        return ChartPair(signals={name: Signal.absent(reason) for name in CHART_SIGNALS})
    signals = {}
    for name in CHART_SIGNALS:
        value = comparison.signals.get(name)
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            signals[name] = Signal.absent(comparison.reasons.get(name) or "could not be computed")
        elif isinstance(value, bool):
            signals[name] = Signal(value=value)
        else:
            # A present signal may say why it is what it is (the reading confidence's doubts).
            signals[name] = Signal(value=round(float(value), 6),
                                   reason=comparison.reasons.get(name))
    return ChartPair(signals=signals, overlay=overlay, reference_lines=left_out)


def measure_chart(published: Image.Image, reproduced: Image.Image, *,
                  tolerance: Tolerance | None, published_data: FigureDataFile | None = None,
                  reproduced_data: FigureDataFile | None = None
                  ) -> tuple[dict[str, Signal], Image.Image | None]:
    """The chart.* signals of a figure pair and the overlay (see `compare_pair`)."""
    pair = compare_pair(published, reproduced, tolerance=tolerance,
                        published_data=published_data, reproduced_data=reproduced_data)
    return pair.signals, pair.overlay


def _save_png(image: Image.Image, path: Path) -> None:
    write_png_atomic(image, path, optimize=False, compress_level=1)


def copy_signals(claim: ClaimInput, check: CopyCheck) -> tuple[dict[str, Signal], list[Flag]]:
    """`pixel.copy` and `pixel.identical_rerender`, and their flag: a pixel-identical figure
    whose cited logs show its plotting script re-run is an identical re-render for a human to
    confirm (a bit-exact re-run of deterministic plotting code is possible), not a copy."""
    rerun = plotting_rerun(claim) if check.identical else None
    signals = {"pixel.copy": Signal(value=check.copy and rerun is None),
               "pixel.identical_rerender": Signal(value=rerun is not None)}
    if rerun is not None:
        return signals, [Flag(name="identical_rerender", detail=(
            f"the reproduced figure is pixel-identical to the published figure ({check.how}), "
            f"and {rerun.describe()}: a human should confirm a bit-exact re-run of the "
            f"plotting code")[:4000])]
    if check.copy:
        return signals, [Flag(name="copy", detail=f"the reproduced figure is a copy of the "
                                                  f"published figure ({check.how})")]
    return signals, []


def measure_figures(claim: ClaimInput, *, options: MeasureOptions, out_dir: Path | None,
                    run_root: Path | None) -> Measurement:
    result = Measurement()
    if claim.published_path is None:
        result.figure_error = "no published figure (neither in the submission nor the registry)"
    elif claim.reproduced_path is None:
        result.figure_error = "no reproduced figure"
    if result.figure_error:
        result.signals = {name: Signal.absent(result.figure_error) for name in FIGURE_SIGNALS}
        return result
    assert claim.published_path is not None and claim.reproduced_path is not None
    try:
        published = load_image(claim.published_path, max_pixels=options.max_pixels)
    except ImageLoadError as exc:
        result.figure_error = f"published figure: {exc}"
    else:
        try:
            reproduced = load_image(claim.reproduced_path, max_pixels=options.max_pixels)
        except ImageLoadError as exc:
            result.figure_error = f"reproduced figure: {exc}"
    if result.figure_error:
        result.signals = {name: Signal.absent(result.figure_error) for name in FIGURE_SIGNALS}
        return result

    result.fingerprint = figure_phash(trim_border(reduce_towards(reproduced, options.image_size)))
    same_bytes = file_sha256(claim.published_path) == file_sha256(claim.reproduced_path)
    comparison = compare_figures(published, reproduced, size=options.image_size,
                                 same_bytes=same_bytes)
    pixel = comparison.signals
    result.signals = {
        "pixel.ssim": Signal(value=round(pixel.ssim, 6)),
        "pixel.edge_f1": (Signal(value=round(pixel.edge_f1, 6)) if pixel.edge_f1 is not None
                          else Signal.absent("neither figure has any visible stroke")),
        "pixel.palette_distance": Signal(value=round(pixel.palette_distance, 6)),
        "pixel.phash_distance": Signal(value=round(pixel.phash_distance, 6)),
        "pixel.mean_abs_diff": Signal(value=round(pixel.mean_abs_diff, 6)),
    }
    copied, flags = copy_signals(claim, comparison.copy_check)
    result.signals.update(copied)
    result.flags.extend(flags)
    if claim.participant_reference_path is not None:
        result.flags.extend(check_participant_reference(claim, published, options=options))
    overlay = None
    if options.chart:
        published_data, published_flag = figure_data(claim, "published")
        reproduced_data, reproduced_flag = figure_data(claim, "reproduced")
        pair = compare_pair(published, reproduced, tolerance=claim.claim.tolerance,
                            published_data=published_data, reproduced_data=reproduced_data)
        overlay = pair.overlay
        result.signals.update(pair.signals)
        result.signals["chart.published_from_data"] = Signal(value=published_data is not None)
        result.signals["chart.reproduced_from_data"] = Signal(value=reproduced_data is not None)
        result.flags += [f for f in (published_flag, reproduced_flag) if f is not None]
        if published_data is not None or reproduced_data is not None:
            result.flags.append(data_path_flag(claim, published_data, reproduced_data,
                                               reference_lines=pair.reference_lines))
    if out_dir is not None and run_root is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = claim_images(out_dir)
        overlay_path = paths.pop("overlay")
        if overlay is not None:
            paths["overlay"] = overlay_path
            _save_png(overlay.convert("RGB"), paths["overlay"])
        _save_png(comparison.published, paths["published"])
        _save_png(comparison.reproduced, paths["reproduced"])
        _save_png(comparison.diff, paths["diff"])
        result.images = paths
        result.artifacts = Artifacts(**{k: p.relative_to(run_root).as_posix()
                                        for k, p in paths.items()})
    return result


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
                       f"{side('reproduced', reproduced)} ({how}){lines}"[:4000])


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


#: The difference of two finite floats can overflow (1e308 - -1e308), and a relative difference
#: can too (1e300 / 1e-300): such a value cannot be stored in JSON (it would be written as null and
#: make the run directory unreadable), so the signal is recorded as absent with the reason.
_OVERFLOW = "too large to represent as a 64-bit float (the computation overflows)"


def _number(value: float) -> Signal:
    return Signal(value=value) if math.isfinite(value) else Signal.absent(_OVERFLOW)


def measure_numbers(claim: ClaimInput) -> dict[str, Signal]:
    c = claim.claim
    if c.kind is ClaimKind.number:
        if c.reported_value is None:
            reason = "no reported value (neither in the submission nor the registry)"
        elif c.reproduced_value is None:
            reason = "no reproduced value"
        else:
            found = agreement(reported=c.reported_value, reproduced=c.reproduced_value,
                              tolerance=c.tolerance)
            return {
                "numeric.abs_diff": _number(found.abs_diff),
                "numeric.rel_diff": (_number(found.rel_diff) if found.rel_diff is not None
                                     else Signal.absent("the reported value is 0")),
                "numeric.within_tolerance": (Signal(value=found.within) if found.within is not None
                                             else Signal.absent("the claim gives no tolerance")),
            }
        return {name: Signal.absent(reason) for name in
                ("numeric.abs_diff", "numeric.rel_diff", "numeric.within_tolerance")}
    if c.kind is ClaimKind.table:
        if not c.values:
            reason = "no table values"
            return {name: Signal.absent(reason) for name in
                    ("numeric.within_tolerance", "numeric.cells_within", "numeric.rel_diff")}
        table = table_agreement(c.values, tolerance=c.tolerance)
        within = table.all_within
        fraction = table.within_fraction
        max_rel = table.max_rel_diff
        return {
            "numeric.within_tolerance": (
                Signal(value=within) if within is not None else
                Signal.absent("some cells lack a value or a tolerance")),
            "numeric.cells_within": (Signal(value=fraction) if fraction is not None else
                                     Signal.absent("no cell could be compared")),
            "numeric.rel_diff": (_number(max_rel) if max_rel is not None else
                                 Signal.absent("no cell has a non-zero reported value")),
        }
    return {}


def measure_claim(claim: ClaimInput, *, options: MeasureOptions, run_root: Path | None = None,
                  out_dir: Path | None = None) -> Measurement:
    """All signals of one claim; figure images are written under `out_dir` when given."""
    if claim.claim.kind is ClaimKind.figure:
        result = measure_figures(claim, options=options, out_dir=out_dir, run_root=run_root)
    else:
        result = Measurement()
    result.signals.update(measure_numbers(claim))
    return result


#: Claim fields that no measurement reads (identity and prose): left out of the measurement key,
#: so that the same figures under another claim id or wording are measured once.
NOT_MEASURED = frozenset({"claim_id", "source", "statement", "justification", "scale_note",
                          "verdict", "source_verdict", "toy", "provenance", "absent",
                          "theorem_values"})
#: The code a measurement runs, besides the signals package (whose every file counts).
MEASURE_MODULES = ("run/measure.py", "run/integrity.py", "figures/data.py", "figures/formats.py",
                   "rules.py", "models.py", "signal_catalogue.py")
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
