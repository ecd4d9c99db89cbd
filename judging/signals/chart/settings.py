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
    """The long side (pixels) of the working copy the geometry is read on: enough for a
    one-pixel line of a 1600-pixel figure to survive reduction, cheap to scan."""
    tick_reach: int = 12
    """How far (work pixels) an outward tick mark may extend a spine past the frame's
    corner."""
    max_grid_lines: int = 150
    """Caps that keep grid search cheap on images full of line-like texture."""
    max_grid_boxes: int = 60
    """At most this many grid boxes (the largest) are merged into panels."""
    straight_edge: float = 0.5
    """A tinted plot background is a rectangle: along its top or its bottom edge, at least this
    share of its columns start (end) within 3 work pixels of the same row. A filled band (a
    confidence ribbon drawn on a white plot, ggplot2's theme_minimal) has sloped edges."""
    edge_reach: int = 3
    """... within this many work pixels of the same row (anti-aliasing of the rectangle's edge)."""
    noisy_level: float = 1.5
    """A page whose median step between neighbouring pixels (green channel) exceeds this many
    levels is noisy (a JPEG, a scan): it is median-filtered before it is read (clean renders
    give 0)."""
    denoise_size: int = 3
    """Window (work pixels) of that median filter: removes specks, keeps one-pixel lines' ends."""
    dark_page: int = 100
    """A page background darker than this luma is a dark theme (data lighter than paper)."""
    line_thickness: int = 8
    """A long line thicker than this (work pixels) is a filled area or a bar, not a spine or a
    gridline."""
    line_own_share: float = 0.6
    """A run bridged over coloured data is a line when at least this share of it is its own
    grey ink (data may cross a spine; it may not make one)."""
    line_wobble: int = 3
    """Runs in neighbouring rows whose ends lie this close (work pixels) are one line drawn
    thicker than a pixel (anti-aliasing moves the ends by a pixel or two)."""
    box_slack: int = 3
    """A box sticking out of another by at most this many work pixels lies inside it (a
    frame's line width)."""
    spine_contrast: int = 28
    """Luminance difference from the background that a spine's pixel has at least (light grey
    spines of seaborn's styles are ~30 levels off white)."""
    grey_chroma: int = 60
    """A pixel with less chroma than this is grey (a spine, a tick, text); from it on, coloured
    data drawn over a spine."""
    ink_diff: int = 8
    """Channel difference from the background from which a pixel is ink (above JPEG ringing
    and anti-aliasing of the background itself)."""
    background_diff: int = 10
    """Channel difference from the background within which a pixel counts as background (a
    little above `ink_diff`: faint texture stays background)."""
    background_share: float = 0.25
    """A page with less background than this share has no plain background (a photograph,
    noise) and no grid is sought on it: noise makes "lines" everywhere."""
    border_cover: float = 0.9
    """A side of a border around the page's ink is drawn along at least this share of it."""
    border_sides: int = 3
    """Sides of that border that must be drawn (a spreadsheet's chart-area border may lose
    one to the image's crop)."""
    min_panel_share: float = 0.08
    """The smallest plot area kept, as a share of the page's width and height (five stacked
    gnuplot panels are each over a tenth of its height)."""
    min_panel: int = 16
    """... and in work pixels, whatever the page's size."""
    min_spine: int = 20
    """The shortest spine or gridline sought, work pixels."""
    tick_share: float = 0.03
    """Reach of a tick mark past a frame's corner as a share of the page's side (large pages
    draw longer ticks in work pixels); at least `tick_reach`."""
    corner_slack: int = 4
    """Work pixels by which two lines meant to meet (spines at a corner, gridlines' ends, a
    box's edges) may miss each other: line widths and anti-aliasing."""
    spine_align: int = 6
    """Work pixels by which the ends of a frame's opposite spines may differ (their own tick
    marks)."""
    tick_mark: int = 3
    """The width (work pixels) of a tick mark drawn outside a spine: the columns inspected to
    tell a tick from a frame running on; and the longest break in a row that joins two spines."""
    overlap_share: float = 0.1
    """A box that overlaps another by more than this share of the smaller (and is not inside
    it) is a competing reading of the same panel."""
    same_row: float = 0.3
    """Panels whose tops differ by less than this share of a panel's height are one row of the
    reading order."""
    grid_contrast: int = 8
    """A gridline's pixel is at least this many levels away from the background, on the far
    side from paper (gridlines may be thin light grey on light grey)."""
    grid_chroma: int = 40
    """A gridline is grey: less chroma than this."""
    grid_min_share: float = 0.1
    """The shortest gridline sought as a share of the page's side."""
    grid_own_share: float = 0.12
    """A gridline run bridged over data keeps at least this share of its own pixels (data and
    bars hide most of a gridline behind them)."""
    grid_lines: int = 3
    """Gridlines (both kinds together) that make a panel of a grid without a frame."""
    tint_min: int = 6
    """A tinted plot background differs from the page by at least this much (channel) ..."""
    tint_max: int = 90
    """... and at most this much (more is data or a dark frame, not a background tint)."""
    tint_share: float = 0.05
    """Candidate tinted pixels must be at least this share of the page to seek a tint."""
    tint_step: int = 8
    """Colour quantisation step (levels) of the search for the most common tint."""
    tint_count_share: float = 0.04
    """The most common tint must cover at least this share of the page."""
    tint_near: int = 10
    """Channel difference within which a pixel is the tint."""
    tint_closing: int = 3
    """Side of the square that closes gridlines and thin data across the tint (coarse pixels)."""
    tint_area_share: float = 0.03
    """A tinted region smaller than this share of the page is no plot area (a legend's box)."""
    tint_pad: int = 4
    """Work pixels added around a coarse region before its edges are read at full work
    resolution."""
    tint_floor: float = 0.15
    """Rows (columns) at an edge of a tint still belong to it while this share of them shows
    the tint (bars drawn over the tint cover the rest)."""
    tint_core: float = 0.4
    """The rows that are mostly tint must be at least this much tint over the box's width ..."""
    tint_fill: float = 0.15
    """... and the whole box at least this much (a frame of tint around white is no tint)."""
    ring_sides: int = 3
    """Sides of a tinted box whose outside can be read (the others at the page's edge), at the
    least."""
    ring_differs: float = 0.6
    """Just outside a tinted rectangle at least this share of the pixels are not the tint
    (sharp edges: a tinted area with soft edges is a shade, not a plot area)."""
    grid_spacing: float = 0.15
    """Gridlines continue a grid's spacing when their step differs from it by at most this
    share of it."""
    grid_cover: float = 0.45
    """A row (column) of a plot area is a gridline when more than this share of it is one
    low-chroma colour (data hide the rest)."""
    grid_thickness: int = 6
    """A gridline is at most this many work pixels thick."""
    grid_colour: int = 30
    """Channel difference from the gridlines' colour within which a pixel near a gridline is
    gridline."""
    grid_halfwidth: int = 2
    """Work pixels either side of a gridline's centre that its mask covers."""


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
    text_contrast: int = 60
    """Luminance difference from the background of the page's text mask (tick labels, titles)."""
    text_chroma: int = 90
    """Text is grey or dark: less chroma than this (coloured data is not text)."""
    min_strip: int = 3
    """A strip (or a crop) narrower than this many pixels holds no glyph."""
    strip_min: int = 12
    """The least depth (work pixels) of the strips searched for tick labels."""
    x_strip_share: float = 0.14
    """Depth of the x tick labels' strip below the plot area, as a share of the page's height."""
    x_strip_side: float = 0.06
    """How far the x strip runs past the plot area's sides (share of the page's width): end
    labels are centred on the corners."""
    y_strip_share: float = 0.2
    """Width of the y tick labels' strip left of the plot area, as a share of the page's width."""
    y_strip_end: float = 0.03
    """How far the y strip runs past the plot area's top and bottom (share of the page's height)."""
    min_glyph: int = 4
    """A component shorter than this many pixels is no glyph (a dot, a tick, noise)."""
    tick_width: int = 4
    """A tick mark is at most this many work pixels wide along its axis ..."""
    tick_length: int = 20
    """... and at most this long across it."""
    label_reach: float = 3.0
    """Glyphs further apart than this many glyph heights (beyond the gap) are never one label."""
    exponent_gap: float = 1.3
    """An exponent may sit this many glyph heights from its base (its faint minus sign lost)."""
    full_height: float = 0.7
    """A glyph at least this share of the label's height is full height (not an exponent)."""
    raised: float = 0.35
    """An exponent's bottom is at least this share of the label's height above the baseline ..."""
    raised_base: float = 0.3
    """... (this share when judged against one glyph or the crop's base height) ..."""
    sup_height: float = 0.85
    """... and it is at most this share of the label's height."""
    sup_shorter: float = 0.9
    """An exponent is at most this share of its base's height."""
    sup_top: float = 0.2
    """An exponent's top rises at most this share of the base's height above it."""
    sup_digit: float = 0.45
    """An exponent's digit is at least this share of the base's height (a flat mark is no digit)."""
    crop_pad: float = 0.35
    """White margin (glyph heights) around a crop sent to OCR: Tesseract needs paper around text."""
    crop_denoise: int = 3
    """Median filter (pixels) of a crop cut from a noisy page."""
    min_label: float = 0.6
    """A label shorter than this many glyph heights is a mark, not text."""
    max_label: float = 1.8
    """A label taller than this many glyph heights is two lines or a rotated title."""
    band_spread: float = 0.6
    """x labels whose centres lie within this many glyph heights are one row."""
    x_label_reach: float = 0.03
    """x labels may be centred this share of the page's width beyond the plot area's sides."""
    flat_tick: float = 0.3
    """A flat dash at most this many glyph heights tall beside the plot area is a tick mark."""
    right_align: float = 1.2
    """y labels are right-aligned: they end within this many glyph heights of the rightmost."""
    times_low: float = 0.3
    """A times sign is at least this share of the label's height ..."""
    times_wide: float = 1.5
    """... at most this many times as wide as tall ..."""
    times_centre: float = 0.2
    """... and centred within this share of the label's height on its middle."""
    reread_labels: int = 3
    """An axis refused with at least this many tick labels read with digits in them has its
    labels read again one by one (two labels fit any line: a second reading of fewer proves
    nothing)."""
    reread_slack: int = 1
    """... and the second reading's fit may leave out at most this many of them (the axis name
    a strip can hold beside its labels): illegible digits read twice line up by luck."""
    unit_gap: float = 1.0
    """A unit suffix set apart by a space ("200 k", "1 M": matplotlib's EngFormatter) joins the
    number on its baseline at most this many glyph heights to its left (a space is about half
    a glyph height; the gap that joins glyphs, half a glyph, lets wider spaces through)."""
    mantissa_width: float = 3.0
    """A mantissa set apart from its power of ten is at most this many glyph heights wide ..."""
    mantissa_tall: float = 1.2
    """... at most this share of the label's height tall ..."""
    baseline_slack: float = 0.25
    """... and on the label's baseline within this many glyph heights."""
    look_up: float = 0.6
    """A power's exponent is sought this share of the label's height above it ..."""
    look_right: float = 0.8
    """... and this share right of it (a faint exponent may be out of the text mask)."""
    min_crop_height: int = 6
    """A full-resolution crop lower than this many pixels holds no power of ten."""
    paper_percentile: float = 90
    """The paper's grey level in a crop: this percentile (text covers far less than a tenth)."""
    ink_floor: float = 40.0
    """A crop's ink is at least this many levels darker than its paper ..."""
    ink_share: float = 0.3
    """... or this share of the paper-to-darkest range, whichever is more."""
    on_base: float = 0.15
    """Glyphs ending within this share of the tallest's height of the baseline stand on it."""
    split_slack: float = 0.15
    """The base may end this share of its height past an exponent's left edge (kerning)."""
    raised_top: float = 0.25
    """An exponent's top is at most this share of the base's height below the base's top."""
    exponent_digit: float = 0.35
    """Raised glyphs at least this share of the base's height are the exponent's digits."""
    top_percentile: float = 25
    """The base's top from this percentile of its columns' tops (an exponent's columns rise
    higher)."""
    base_reach: float = 0.35
    """A column whose ink ends this share of the base's height above the baseline is the
    exponent's."""
    exponent_width: float = 0.3
    """A touching exponent is at least this share of the base's height wide."""
    exponent_rise: float = 0.1
    """A touching exponent's top rises at least this share of the base's height above the base's."""
    snap_reach: float = 0.6
    """A label snaps to a tick mark or gridline within this many glyph heights of its centre."""
    exact_log: float = 1e-9
    """log10 of a number this close to an integer is a power of ten (float rounding)."""
    integer_exponent: float = 1e-6
    """An exponent this close to an integer is one (a fitted or parsed value's rounding)."""
    max_exponent: int = 300
    """Exponents beyond this are misreads (float64 ends near 1e308)."""
    char_width: float = 0.75
    """A label wider than this many glyph heights per character read ..."""
    word_margin: float = 1.5
    """... plus this many reads as a word whose letters OCR dropped."""
    min_tick_gap: float = 3
    """Two labels closer than this many pixels along the axis cannot define a line."""
    power_inliers: float = 0.4
    """A power-of-ten fit needs at least this share of the power labels on it ..."""
    power_misread: int = 3
    """... with all but one in this many (at most) off the decades near it ..."""
    few_powers: int = 3
    """... and two exact readings when only this many labels or fewer were read."""
    log_digits: int = 6
    """Decimals to which log values are compared when counting distinct ones."""
    full_confidence: float = 4
    """Ticks beyond the first that give a fit its full confidence (five labels)."""
    residual_floor: float = 0.2
    """The least factor a fit's residual leaves of its confidence."""
    min_confidence: float = 0.05
    """The least confidence of a fit found (below: as good as none)."""
    fit_tolerance: float = 0.012
    """Labels lie on the axis line within this share of the axis length (at least 2 pixels)."""
    wordy_share: float = 0.4
    """An axis with at least this share of its labels words is categorical."""
    reversed_ticks: int = 3
    """A reversed fit is believed only with at least this many ticks on it."""


@dataclass(frozen=True)
class LegendSettings:
    """Finding the legend, reading its names and attaching them to series
    (judging.signals.chart.legend)."""

    max_entries: int = 30
    """At most this many entries per legend are kept (the best-read ones)."""
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
    blend_match: float = 45
    """A coloured series is the legend sample's within this channel distance (along the blend of
    the sample with the legend's face: thin samples are paler)."""
    grey_match: float = 50
    """A grey series is the sample's within this channel distance."""
    style_cost: float = 30.0
    """Colour distance added when a series' line style is not its sample's (dashed vs solid)."""
    min_glyph: float = 5.0
    """The least glyph height (work pixels) the legend's shape rules are scaled by."""
    glyph_low: float = 0.4
    """A letter is at least this many glyph heights tall ..."""
    glyph_high: float = 1.8
    """... at most this many ..."""
    glyph_wide: float = 2.2
    """... and at most this many wide (letters run together: a few) ..."""
    word_wide: float = 5
    """... or up to this many wide when sparsely inked (a word whose letters touch) ..."""
    word_fill: float = 0.65
    """... inked over less than this share of its box (a solid patch is a sample)."""
    small_wide: float = 1.6
    """A piece lower than a letter and narrower than this many glyph heights is a mark of text (a
    dot, a comma, a dash)."""
    min_conf: float = 35
    """An entry whose name OCR read with less confidence than this (0-100) names nothing."""
    row_low: float = 0.5
    """Glyphs of one text row are at least this share of its tallest's height ..."""
    row_high: float = 1.3
    """... and at most this share (this many glyph heights for a lone small glyph)."""
    title_reach: float = 2.5
    """A legend's title sits within this many glyph heights above its first entry."""
    stacked_high: float = 3.2
    """Two letters stacked (glyphs of two rows merged) are at most this many glyph heights tall."""
    beside_reach: float = 3
    """Text within this many glyph heights beside a piece (or a plot area) belongs with it."""
    stacked_upper: float = 0.25
    """The upper of two stacked letters starts within this share of the piece's height of its top
    ..."""
    stacked_lower: float = 0.4
    """... and the lower one at least this share below it."""
    frame_reach: float = 2.2
    """A legend's frame is sought this many glyph heights around its entries ..."""
    frame_pad: float = 0.9
    """... a frame side lying at least this many glyph heights from them."""
    frame_contrast: float = 25
    """A frame's line differs from the legend's face by more than this (channel) ..."""
    frame_cover: float = 0.7
    """... along at least this share of its length."""
    frame_sides: int = 3
    """Sides found that make a legend framed (one may hide under the plot's frame)."""
    own_low: float = 0.6
    """The text height an entry's sample is measured by: at least this many glyph heights ..."""
    own_high: float = 1.6
    """... at most this many (also the tallest sample, in glyph heights) ..."""
    own_share: float = 0.85
    """... else this share of the entry's text height."""
    prose_reach: float = 1.5
    """Text lines within this many text heights of an entry are its neighbours (prose around it)."""
    face_step: int = 8
    """Colour quantisation step (levels) of the search for a legend's face colour."""
    coloured_chroma: float = 40
    """A name or sample whose pixels have this median (or 80th-percentile) chroma is coloured."""
    same_colour: float = 30
    """Samples within this channel difference of each other look alike."""
    marks_size: float = 0.15
    """Samples whose widths and heights vary by less than this share are marks of one kind (tick
    marks) ..."""
    mark_aspect: float = 1.4
    """... a mark (or a marker) at most this many times as wide as tall (plus 2 pixels) ..."""
    mark_overlap: float = 0.6
    """... and the same shape: overlapping by this share (intersection over union)."""
    struck_ends: int = 4
    """The end pieces (1/this of the width) of a struck sample checked for a thin stroke."""
    word_gap: float = 1.6
    """Glyphs further apart than this many glyph heights are not one word."""
    touch: float = 0.2
    """Glyphs overlapping by up to this many glyph heights still sit side by side."""
    letter_gap: float = 0.8
    """Letters of one word lie closer than this share of the taller's height."""
    line_high: float = 2.2
    """A text line taller than this many glyph heights is two lines or a sample."""
    handle_reach: float = 4.5
    """An entry's sample is sought up to this many glyph heights beside its text ..."""
    handle_gap: float = 0.25
    """... from this many glyph heights away from it ..."""
    handle_half: float = 0.75
    """... in a band this many glyph heights either side of the text's middle ..."""
    handle_min: float = 0.6
    """... no narrower than this many glyph heights."""
    handle_ink: float = 45
    """A sample's pixel differs from the legend's face by more than this (channel)."""
    handle_pixels: int = 3
    """A sample has at least this many ink pixels."""
    handle_split: float = 0.7
    """A gap wider than this many glyph heights ends the sample (what lies beyond is other text)."""
    marker_wide: float = 1.2
    """A marker (or a filled patch) is at most (at least) this many glyph heights wide."""
    marker_away: float = 4.0
    """A marker sample lies within this many glyph heights of its text ..."""
    line_away: float = 2.6
    """... a line sample within this many."""
    marker_min: float = 0.25
    """A marker sample is at least this many glyph heights wide (a line sample half a glyph)."""
    chroma_percentile: float = 80
    """The percentile of a sample's chroma that decides whether it is coloured (thin samples are
    mostly anti-aliased)."""
    dark_percentile: float = 10
    """A grey sample's level: this percentile on a light face ..."""
    light_face: float = 127
    """... (a face lighter than mid-grey) ..."""
    light_percentile: float = 90
    """... and this one on a dark face."""
    patch_high: float = 0.45
    """A filled patch (a bar's sample) is at least this many glyph heights tall ..."""
    patch_fill: float = 0.8
    """... and inked over more than this share of its box."""
    dotted_pieces: int = 4
    """A dotted sample has at least this many pieces (each at most twice its height squared)."""
    dash_ratio: float = 3
    """Two pieces one this many times larger than the other are a line and a marker, not dashes."""
    crossing_cover: float = 0.9
    """A column inked over this share of the band is a line crossing the legend (a gridline, a
    series)."""
    crossing_width: float = 0.3
    """Such columns this many glyph heights wide (at least 2) are a crossing's run ..."""
    crossing_reach: float = 2.5
    """... checked this many glyph heights above and below the text ..."""
    crossing_tone: float = 40
    """... for its tone within this channel difference."""
    align_slack: float = 0.6
    """Entries whose text edges lie within this many glyph heights are one column ..."""
    entry_step: float = 3.2
    """... at most this many glyph heights apart (top to top) ..."""
    row_slack: float = 0.4
    """... and entries whose middles lie this close (glyph heights) one row."""
    crop_pad_min: int = 3
    """The least white margin (pixels) around a name's crop for OCR ..."""
    crop_pad: float = 0.4
    """... else this many glyph heights."""
    text_height: float = 0.8
    """A name's glyph height is this share of its text box's height (descenders, accents)."""


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
