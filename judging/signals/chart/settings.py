"""The chart reader's settings chosen from data, one named record per stage.

A value here was chosen by looking at figures; benchmarks/chart_signals.py chooses it again on
all real repositories but one and scores the one left out (leave-one-repository-out), so each
record can be replaced whole (`compare_charts(..., settings=...)`) without touching the code
around it. Structural constants (what a chart is made of, the precision of a drawing) stay
beside the code that uses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

#: Evidence value (agreement - difference) -> probability that the reproduction plots the same
#: data, fitted by `benchmarks/chart_signals.py --pairs realfig-dev --pairs realfig-dev2` on
#: the labelled pairs of all 13 real repositories (isotonic regression of the labels on the
#: evidence in bins a tenth wide, each block of bins given (faithful + 1) / (pairs + 2)); its
#: leave-one-repository-out reliability is the benchmark's. Linear between knots.
CALIBRATION = (
    (-1.0000, 0.0179),
    (-0.0001, 0.0179),
    (0.0000, 0.4384),
    (0.3999, 0.4384),
    (0.4000, 0.7143),
    (0.4999, 0.7143),
    (0.5000, 0.9851),
    (0.9999, 0.9851),
)


@dataclass(frozen=True)
class EvidenceSettings:
    """How the comparison weighs what its readings confirm (judging.signals.chart.evidence)."""

    calibration: tuple[tuple[float, float], ...] = CALIBRATION
    """Knots (evidence, probability of the same data), evidence increasing."""
    same_x_range: float = 0.85
    """Overlap (IoU) of two x ranges that a faithful re-plot keeps: below it (on the tick
    labels and the data both) the range was cut or extended. Set by hand (axis padding differs
    by a few percent between libraries; the changes cut to 55%), not chosen on the figures."""
    some_x_overlap: float = 0.2
    """Below this overlap (IoU) two x ranges share too little for one to be a crop of the
    other: one of the x axes was misread (set after cascade-fig3__faithful1, see the benchmark's
    record of changes)."""
    unverified_names_agreement: float = 0.0
    """The most agreement a pair can show when the published legend names its series and the
    reproduction's names were not read (a swap cannot be ruled out)."""
    confirm_at: float = 0.1
    """An agreement or a difference weaker than this is not confirmed (0). Chosen with the
    calibration, one repository left out at a time, among 0.1 to 0.3 (0.1 is about where 95% of
    the synthetic dev set's faithful re-plots stay: they differ by 0.085 or less)."""
    report_at: float = 0.3
    """Agreements and differences from this strength on are named plainly in the reason;
    weaker ones that still count (from `confirm_at`) are named as partial or slight."""

    def __post_init__(self) -> None:
        xs = [x for x, _ in self.calibration]
        if len(xs) < 2 or xs != sorted(xs):
            raise ValueError("calibration knots must be at least two, evidence increasing")


@dataclass(frozen=True)
class CompareSettings:
    """The comparison stage (judging.signals.chart.compare): how series are paired and compared,
    and how far a reading is trusted (chart.reading_confidence, figure-match 1.3.0); its
    `evidence` record weighs what the readings confirm (chart.same_data, 1.4.0). The values
    below `evidence` were chosen on the synthetic dev set and realfig-dev by issue 14's
    sessions (its closing note lists which after which pairs); the benchmark can replace the
    whole record."""

    evidence: EvidenceSettings = field(default_factory=EvidenceSettings)
    samples: int = 64
    """Points a curve is resampled to before curves are compared."""
    default_value_tolerance: float = 0.05
    """Without a claim tolerance, values agree within this share of the published y range:
    about the precision with which a value can be read off a chart (the rubric's guidance
    says 5%)."""
    reading_precision: float = 0.02
    """A claim tolerance tighter than this share of the y range is below what a chart can
    show."""
    flat: float = 0.04
    """A curve whose spread is below this share of its panel's y range is flat."""
    min_match: float = 0.35
    """Pairs whose data agree less than this are not "the same series" (counted as
    unmatched)."""
    min_series_width: float = 0.3
    """A line narrower than this share of the plot width is a fragment, not a series."""
    min_x_overlap: float = 0.2
    """Shares of x overlap below which two curves cannot be compared."""
    x_overlap_weight: float = 0.05
    """The share of _data_similarity that the x overlap holds: a tie-breaker between a
    series and a fragment of it, too small to pair series whose data disagree."""
    drawn_on_both: float = 0.9
    """An extra series with this share of its points on the other chart's data ink is drawn
    on both charts (see _compare_panels)."""
    drawn_over: float = 0.9
    """An unmatched series whose points lie this much on the ink of the chart's other series
    is no series of its own (see _drawn_over)."""
    blend_width: float = 0.6
    """... and spans at most this share of the widest other series' x range."""
    coverage_tolerance: float = 0.03
    """How far apart (as a share of the published axis span, on either axis) a point may be
    from a point of the other chart and still count as covered: about the drawing precision
    of a chart (a marker, a line width) at the sizes charts are read."""
    coverage_points: int = 3000
    """Points per chart and panel the coverage is computed on (a random, seeded subsample)."""
    cloud_grid: int = 8
    """Cells per axis of the grid on which two clouds' densities are compared."""
    cloud_bins: int = 6
    """Vertical bins of a cloud's conditional medians."""
    cloud_bin_points: int = 3
    """Points each of those bins needs on both sides."""
    cloud_spread: float = 0.04
    """A series whose points scatter this much (median spread of y within narrow x bins, as
    a share of the y axis) is a cloud, not a curve, whatever the reader called it."""
    cloud_trust: float = 0.7
    """The reading confidence of a panel with a cloud whose series both legends name alike
    (see _named_alike): enough to fail on; 0.5 otherwise."""
    full_x_overlap: float = 0.9
    """Two series whose x ranges overlap this much (IoU) are compared over all of their
    data: the ends of a re-plotted line move by a marker or a pixel column."""
    split_doubt: int = 2
    """Series counts of two paired panels that differ this much put the reader's series
    split in doubt (see _panel_evidence)."""
    name_floor: float = 0.5
    """The least likeness of two legend names that the best one-to-one pairing of the names
    may keep and still count as the same name read with OCR slips."""
    max_reliable_series: int = 8
    """Series told apart by colour alone beyond this many per panel are guesses (palettes
    repeat, translucent points blend into new colours)."""
    same_ink: float = 0.9
    """Both charts' data cover each other at least this much: the same ink, whatever the
    series."""
    min_data_points: int = 3
    """A panel none of whose series holds this many points has no data series read (spans
    shaded behind the data, a legend swatch), whatever the reader made of it."""
    small_scatter: int = 30
    """A scatter series with more markers than this is a cloud in which markers overlap."""
    partial_line: float = 0.7
    """A matched line spanning less than this share of its counterpart's plot width, under
    axes that span the same range, was (most likely) read in part."""
    categorical_x: float = 0.7
    """Trust in a comparison of charts with no numeric x axis on either side (categories,
    months, dates), x aligned on the data's extent: enough to fail on what the y values
    show."""
    confirmed_difference: float = 0.8
    """Trust given by a difference two independent readings confirm (see _confirmed_crop)."""
    crop_overlap: float = 0.7
    """Below this overlap (IoU) of both the x axes' ranges and the data's x ranges, the x
    range was cut (or extended): a faithful re-plot keeps the range within a few percent."""
    tick_residual: float = 0.02
    """Tick labels whose values lie off the axis fit by more than this share of the axis
    span were misread (or the fit is wrong)."""


DEFAULT_COMPARE = CompareSettings()


@dataclass(frozen=True)
class GeometrySettings:
    """Finding the plot areas, the page background and gridlines
    (judging.signals.chart.geometry)."""

    work_size: int = 800
    """work_size"""
    tick_reach: int = 12
    """How far (work pixels) an outward tick mark may extend a spine past the frame's
    corner."""
    max_grid_lines: int = 150
    """Caps that keep grid search cheap on images full of line-like texture."""
    max_grid_boxes: int = 60
    """max_grid_boxes"""
    straight_edge: float = 0.5
    """A tinted plot background is a rectangle: along its top or its bottom edge, at least this
    share of its columns start (end) within 3 work pixels of the same row. A filled band (a
    confidence ribbon drawn on a white plot, ggplot2's theme_minimal) has sloped edges."""


@dataclass(frozen=True)
class AxisSettings:
    """Reading the tick labels and fitting the axes (judging.signals.chart.axes)."""

    strip_contrast: int = 35
    """Contrast (luminance levels) a tick label's work-resolution pixels need: lower than
    the page's text mask, as small light-grey labels fade when the image is reduced."""
    fringe_contrast: int = 100
    fringe_chroma: int = 200
    """A tick label's pixel of this contrast (luminance levels) or more counts up to this
    chroma: ClearType draws a glyph's edges as coloured fringes (chroma 150-190 in Excel's
    charts), which a grey-text filter breaks into specks."""
    min_log_span: float = 0.5
    """Tick labels spanning less than this many decades are read as a log axis only when a log
    reading places clearly more of them than a linear one (axes.NARROW_LOG_LEAD)."""
    offset_reach: float = 2.5
    """How far (glyph heights) from the plot area an axis's offset text ("1e7") is sought:
    matplotlib sets it a padding above the frame (y) or below the tick labels (x)."""
    offset_span: float = 10.0
    """How far (glyph heights) into the plot area's width the search for it goes, from the
    corner it is aligned with: far enough to see a title's next word."""
    offset_align: float = 2.0
    """How far (glyph heights) its near end may sit from the plot area's corner."""


@dataclass(frozen=True)
class LegendSettings:
    """Finding the legend, reading its names and attaching them to series
    (judging.signals.chart.legend)."""

    max_entries: int = 30
    """_max_entries"""
    assign_margin: int = 12
    """Colour distance (channel levels) by which the fit of a series to its legend entry
    must beat any other pairing of either for the name to be sure (see Legend.assign_sure)."""
    names_share: float = 0.2
    """A legend found outside the plot area (beside, above or below it) has names holding at
    least this share of the glyphs on their own lines and the lines next to them: entries
    that are a few words of such lines are picked out of a paragraph (a caption under the
    plot), not a legend. Text further away (an axis title, a figure title) does not count."""
    struck_width: float = 1.8
    """A glyph-sized component at least this many glyph heights wide (and twice as wide as
    tall) whose end quarters are both a thin stroke on the same rows is a line-and-marker
    sample, never a letter of the name beside it (legend._struck)."""
    struck_stroke: float = 0.35
    """... a thin stroke: inked over at most this share of the component's height (letters
    run together fill their ends from top to bottom)."""
    entry_margin: float = 0.6
    """Around each entry of a legend drawn without a frame, this many glyph heights are the
    entry's (anti-aliasing, a sample's ends); the data around them are read."""
    faint_text: float = 0.5
    """A legend's names are drawn at full strength: a row of "glyphs" whose strongest pixel
    stands out from the background by less than this share of the region's strongest row is
    no name (the crossings of a pale dashed grid, light grey where the names are black)."""


@dataclass(frozen=True)
class SeriesSettings:
    """Extracting the series from a plot area (judging.signals.chart.series)."""

    max_components: int = 3000
    """More pieces than this in one colour is not a chart's series (noise, a photograph)."""
    max_blobs: int = 60
    """_max_blobs"""
    ink_points: int = 4000
    """Data-ink pixels a panel keeps for the series-free comparison (a seeded, even
    subsample)."""
    cloud_markers: int = 8
    """A cloud with a line through it: at least this many markers stand apart from the rest,
    and the markers (what survives an opening by a disk a third of their size) hold this
    share of the colour's ink."""
    cloud_ink: float = 0.5
    """cloud_ink"""
    cloud_stacked: float = 0.3
    """... and this share of the columns its markers cover cross two markers or more."""
    rim_hue: float = 10.0
    """Two line tracks of different colours whose hues lie this close (degrees) may be one
    line: a JPEG's ringing (ggplot2's lines saved as JPEG) or a wide anti-aliased edge leaves a
    paler, or more saturated, rim beside the stroke's core, read as a colour of its own."""
    rim_reach: float = 4.0
    """... when, over the columns both cover, the tracks lie this close (work pixels: a
    stroke's width and its rim) ..."""
    rim_share: float = 0.6
    """... in at least this share of those columns (the rim follows its stroke; two series of
    one hue that cross or meet for a while do not) ..."""
    rim_common: float = 0.3
    """... and those columns are at least this share of the rim's own (a rim often fills the
    gaps its stroke's core left: JPEG blocks split one line between the two colours)."""
    bar_tallest: float = 0.15
    """Marks read as bars whose tallest stays under this share of the plot area's height
    from their baseline are marks along it: an axis is scaled to its data, so a bar chart's
    bars stand well up it, while markers or a thick line lying along the baseline (a pulse
    train's zero stretches, a frame's edge) are only a marker tall ..."""
    bar_widths: float = 1.25
    """... unless they share one width (the widest at most this many times the narrowest), as
    a bar chart's bars do: low bars of their data's own heights stay bars."""
    dash_elongation: float = 1.5
    """Pieces of one colour that follow each other along x with gaps as long as themselves are
    a dashed line's dashes, not markers, when most are this many times longer than wide
    (principal axes of their pixels) ..."""
    dash_alignment: float = 25.0
    """... their long axis within this many degrees of the way to the next piece ..."""
    dash_spacing: float = 0.35
    """... and most steps from one piece to the next within this share of the median step
    (a dash pattern repeats along the line; markers at the data's x positions need not)."""


@dataclass(frozen=True)
class ReadSettings:
    """Assembling the reading (judging.signals.chart.read)."""

    min_side: int = 64
    """Images smaller than this (either side) are not charts one can read."""
    same_colour: int = 24
    """Largest channel difference between two series' colours that one legend entry names
    both."""


@dataclass(frozen=True)
class ReaderSettings:
    """The chart reader's stages (`read_chart(image, settings=...)`): issue 14's sessions chose
    these values on the synthetic dev set and realfig-dev (its closing note lists which after
    which pairs). Numbers written inline in the stages' helpers (pixel counts of a glyph, a
    tick mark) are the drawing's geometry, not choices from data."""

    read: ReadSettings = field(default_factory=ReadSettings)
    geometry: GeometrySettings = field(default_factory=GeometrySettings)
    axes: AxisSettings = field(default_factory=AxisSettings)
    legend: LegendSettings = field(default_factory=LegendSettings)
    series: SeriesSettings = field(default_factory=SeriesSettings)


DEFAULT_READER = ReaderSettings()
#: The settings of the reading under way: `read_chart` makes its record the active one for the
#: stages while it runs (a context variable: concurrent readings in threads each see their own).
_READER: ContextVar[ReaderSettings] = ContextVar("chart_reader_settings", default=DEFAULT_READER)


def reader_settings() -> ReaderSettings:
    return _READER.get()


@contextmanager
def reading_with(settings: ReaderSettings) -> Iterator[None]:
    """Make `settings` the reader's settings within the block."""
    token = _READER.set(settings)
    try:
        yield
    finally:
        _READER.reset(token)


#: The settings of the comparison under way: `compare_charts` makes its record the active one for
#: the comparison's helpers while it runs (a context variable, so concurrent comparisons in
#: threads each see their own), instead of handing it down through every helper.
_COMPARE: ContextVar[CompareSettings] = ContextVar("chart_compare_settings",
                                                   default=DEFAULT_COMPARE)


def compare_settings() -> CompareSettings:
    return _COMPARE.get()


@contextmanager
def comparing_with(settings: CompareSettings) -> Iterator[None]:
    """Make `settings` the comparison's settings within the block."""
    token = _COMPARE.set(settings)
    try:
        yield
    finally:
        _COMPARE.reset(token)
