"""Figures as they come from the wild, drawn here with matplotlib (the failure kinds of issue 14).

Each function returns PNG bytes (JPEG for the re-encoded copy) from fixed data and fixed seeds:
Agg backend, fonts bundled with matplotlib only (DejaVu: "Open Sans" and Calibri are not bundled,
and a figure must not change with the fonts a machine happens to have), no PNG metadata, so a
function called twice gives the same bytes. Nothing here is copied from elsewhere: every look
(Plotly, Excel, a paper page) is imitated from its defaults, not taken from a file.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator  # noqa: E402
from PIL import Image  # noqa: E402


@contextmanager
def _style(style: str = "default", **rc) -> Iterator[None]:
    """A style from matplotlib's defaults up (no state leaks between figures or tests)."""
    with plt.rc_context():
        plt.rcdefaults()
        with plt.style.context(style), plt.rc_context(rc):
            yield


def _png(fig, *, dpi: int) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()


def size_of(data: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(data)).size


# -- 1. Plotly-style log axis with minor tick labels ---------------------------------------------

#: Request size (bytes) on a log axis, 100 to 20,000, and two latency curves (ms).
REQUEST_SIZES = np.geomspace(100, 20000, 40)
LATENCY = {
    "baseline": 2.0 + 6.0 * np.log10(REQUEST_SIZES / 100) ** 1.6,
    "batched": 1.5 + 2.5 * np.log10(REQUEST_SIZES / 100) ** 1.3,
}
PLOTLY_COLOURS = ("#636EFA", "#EF553B", "#00CC96", "#AB63FA")


def plotly_minor_label(value: float, _position: int | None = None) -> str:
    """Plotly's labels on a log axis with minor ticks: the decade in full ("100", "1000", "10k"),
    the ticks between decades by their leading digit only ("2", "3", "5")."""
    exponent = int(np.floor(np.log10(value) + 1e-9))
    leading = round(value / 10 ** exponent)
    if leading == 1:
        return f"{round(value / 1000)}k" if value >= 10000 else f"{round(value)}"
    return str(leading)


def plotly_log_minor() -> bytes:
    """Plotly's look (grey #E5ECF6 plot area, white grid, no frame, legend outside on the right)
    with a log x axis whose every tick is labelled: 100, 2, 3, 5, 1000, 2, 3, 5, 10k, 2."""
    with _style(**{"font.family": "DejaVu Sans", "font.size": 12, "text.color": "#2a3f5f",
                   "axes.labelcolor": "#2a3f5f", "xtick.color": "#2a3f5f",
                   "ytick.color": "#2a3f5f"}):
        fig = plt.figure(figsize=(7.0, 4.5), dpi=100)
        fig.patch.set_facecolor("white")
        ax = fig.add_axes((0.09, 0.13, 0.70, 0.80))
        ax.set_facecolor("#E5ECF6")
        for (name, y), colour in zip(LATENCY.items(), PLOTLY_COLOURS):
            ax.plot(REQUEST_SIZES, y, color=colour, linewidth=2, label=name)
        ax.set_xscale("log")
        ax.set_xlim(100, 20000)
        ax.set_ylim(0, 30)
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 3, 5)))
        ax.xaxis.set_major_formatter(FuncFormatter(plotly_minor_label))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.grid(True, which="major", color="white", linewidth=1)
        ax.set_axisbelow(True)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.tick_params(length=0, pad=6)
        ax.set_xlabel("request size (bytes)")
        ax.set_ylabel("latency (ms)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
                  borderaxespad=0)
        return _png(fig, dpi=100)


def plain_log() -> bytes:
    """The same data in matplotlib's default style with a normal log axis (10^2, 10^3, 10^4)."""
    with _style():
        fig, ax = plt.subplots(figsize=(8, 6), dpi=110)
        for name, y in LATENCY.items():
            ax.plot(REQUEST_SIZES, y, label=name)
        ax.set_xscale("log")
        ax.set_xlim(100, 20000)
        ax.set_ylim(0, 30)
        ax.set_xlabel("request size (bytes)")
        ax.set_ylabel("latency (ms)")
        ax.legend()
        return _png(fig, dpi=110)


# -- 2. A chart cropped from a paper page, with body text and a caption --------------------------

EPOCHS = np.arange(0, 42, 3)
ACCURACY = 0.91 - 0.55 * np.exp(-EPOCHS / 7.0)

BODY = ("hyper-parameters are those of Section 4.1; we train each model for 40 epochs with a\n"
        "cosine schedule and report the mean of three seeds. The validation split is held out\n"
        "from the training data and is never used for early stopping or model selection.")
CAPTION = ("Figure 3: Validation accuracy of the sparse-warmup ViT-S/4 on CIFAR-10. Accuracy\n"
           "rises quickly during warmup and saturates near 0.9 after about 25 epochs.")


def paper_page_crop() -> bytes:
    """A crop of a two-column paper page: three lines of body text above the chart, the chart
    (one series with markers, a framed legend with its marker entry), a two-line caption below."""
    with _style(**{"font.family": "DejaVu Serif", "font.size": 10}):
        fig = plt.figure(figsize=(6.4, 7.2), dpi=125)
        fig.text(0.06, 0.975, BODY, ha="left", va="top", fontsize=9.5, linespacing=1.5)
        ax = fig.add_axes((0.14, 0.24, 0.80, 0.56))
        ax.plot(EPOCHS, ACCURACY, "o-", color="#1f3b73", markersize=5, linewidth=1.4,
                label="sparse warmup")
        ax.set_xlim(0, 40)
        ax.set_ylim(0.3, 1.0)
        ax.set_xlabel("epoch")
        ax.set_ylabel("validation accuracy")
        ax.legend(loc="lower right", frameon=True, fancybox=False, edgecolor="black")
        fig.text(0.06, 0.13, CAPTION, ha="left", va="top", fontsize=9.5, linespacing=1.5)
        return _png(fig, dpi=125)


def clean_single_series() -> bytes:
    """The same series as a stand-alone chart in another style (a faithful reproduction)."""
    with _style("seaborn-v0_8-whitegrid"):
        fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120)
        ax.plot(EPOCHS, ACCURACY, "s--", color="#c44e52", markersize=6, label="sparse warmup")
        ax.set_xlim(0, 40)
        ax.set_ylim(0.3, 1.0)
        ax.set_xlabel("epoch")
        ax.set_ylabel("validation accuracy")
        ax.legend()
        return _png(fig, dpi=120)


# -- 3. An Excel forecast sheet: one line in four colours -----------------------------------------

MONTHS = np.arange(1, 37)
_ACTUAL_MONTHS = MONTHS[MONTHS <= 24]
_FORECAST_MONTHS = MONTHS[MONTHS >= 24]


def _forecast_data() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1403)
    trend = 120 + 4.0 * MONTHS + 18 * np.sin(2 * np.pi * MONTHS / 12)
    actual = trend[:24] + rng.normal(0, 5, 24)
    forecast = trend[23:].copy()
    forecast[0] = actual[-1]  # the forecast starts at the last actual value, as Excel draws it
    spread = 2.2 * np.arange(len(forecast)) ** 0.9 * 3
    return {"Sales": (_ACTUAL_MONTHS, actual),
            "Forecast(Sales)": (_FORECAST_MONTHS, forecast),
            "Lower Confidence Bound(Sales)": (_FORECAST_MONTHS, forecast - spread),
            "Upper Confidence Bound(Sales)": (_FORECAST_MONTHS, forecast + spread)}


FORECAST = _forecast_data()


def excel_forecast() -> bytes:
    """Excel's forecast sheet chart: actual in blue, forecast in orange, both confidence bounds
    grey dashed; Calibri-like sans at 9 pt in grey, horizontal grid lines only, legend below."""
    colours = {"Sales": "#4472C4", "Forecast(Sales)": "#ED7D31",
               "Lower Confidence Bound(Sales)": "#A5A5A5",
               "Upper Confidence Bound(Sales)": "#A5A5A5"}
    with _style(**{"font.family": "DejaVu Sans", "font.size": 9, "text.color": "#595959",
                   "xtick.color": "#595959", "ytick.color": "#595959",
                   "axes.labelcolor": "#595959"}):
        fig = plt.figure(figsize=(8.0, 4.8), dpi=120)
        ax = fig.add_axes((0.08, 0.22, 0.89, 0.66))
        for name, (x, y) in FORECAST.items():
            dashed = "Bound" in name
            ax.plot(x, y, color=colours[name], linewidth=1.5 if dashed else 2.25,
                    linestyle=(0, (4, 3)) if dashed else "-", label=name)
        ax.set_xlim(0, 37)
        ax.set_ylim(0, 350)
        ax.set_xticks(np.arange(0, 37, 6))
        ax.yaxis.grid(True, color="#D9D9D9", linewidth=0.75)
        ax.xaxis.grid(False)
        ax.set_axisbelow(True)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
        ax.spines["bottom"].set_color("#D9D9D9")
        ax.tick_params(length=0)
        ax.set_title("Sales forecast", fontsize=14, color="#595959", pad=10)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=4, frameon=False,
                  fontsize=8.5, columnspacing=1.2, handlelength=1.8)
        return _png(fig, dpi=120)


def ggplot_forecast() -> bytes:
    """The same four series re-plotted in matplotlib's ggplot style."""
    with _style("ggplot"):
        fig, ax = plt.subplots(figsize=(9, 6), dpi=100)
        for name, (x, y) in FORECAST.items():
            ax.plot(x, y, linestyle="--" if "Bound" in name else "-", label=name)
        ax.set_xlim(0, 37)
        ax.set_ylim(0, 350)
        ax.set_xlabel("month")
        ax.set_ylabel("sales")
        ax.legend(loc="upper left")
        return _png(fig, dpi=100)


# -- 4. Three different curves and their legend names ---------------------------------------------

STEPS = np.linspace(0, 50, 120)
THREE_CURVES = {
    "model A": 0.2 + 0.014 * STEPS,                           # rises steadily
    "model B": 0.15 + 0.75 * np.exp(-STEPS / 9.0),            # falls fast, then flattens
    "model C": 0.55 + 0.2 * np.sin(2 * np.pi * STEPS / 25.0),  # oscillates
}


def three_curves(*, names: Sequence[str] = tuple(THREE_CURVES), restyled: bool = False) -> bytes:
    """The three curves, labelled with `names` in curve order (swap two names to mislabel them).
    `restyled`: another style, palette and size, as a reproduction would be drawn."""
    style = "seaborn-v0_8-darkgrid" if restyled else "default"
    with _style(style):
        fig, ax = plt.subplots(figsize=(10, 7) if restyled else (8, 6),
                               dpi=100 if restyled else 110)
        palette = ("#55a868", "#8172b3", "#dd8452") if restyled else (None, None, None)
        for (_, y), name, colour in zip(THREE_CURVES.items(), names, palette):
            ax.plot(STEPS, y, label=name, linewidth=2, color=colour)
        ax.set_xlim(0, 50)
        ax.set_ylim(0, 1.0)
        ax.set_xlabel("training steps (k)")
        ax.set_ylabel("score")
        ax.legend(loc="upper center")
        return _png(fig, dpi=100 if restyled else 110)


# -- 5. Copies of a published figure --------------------------------------------------------------

def jpeg_copy(png: bytes, *, quality: int = 80) -> bytes:
    buffer = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def padded_copy(png: bytes, *, pad: int = 40) -> bytes:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    canvas = Image.new("RGB", (image.width + 2 * pad, image.height + 2 * pad), "white")
    canvas.paste(image, (pad, pad))
    buffer = io.BytesIO()
    canvas.save(buffer, format="PNG")
    return buffer.getvalue()


# -- 6 and 7. Exponential loss curves -------------------------------------------------------------

LOSS_STEPS = np.linspace(0, 20, 100)


def loss_curves(seed: int, *, noise: float = 0.0, size: tuple[float, float] = (6.4, 4.8)
                ) -> bytes:
    """Three exponential loss curves with rates drawn from `seed`; `noise` is multiplicative
    (a reproduction's run-to-run noise: 0.02 is 2%, drawn from seed + 1000); `size` in inches
    at 100 dpi (640x480 px by default)."""
    # one rate from each band, so that the three curves stay apart
    rates = np.random.default_rng(seed).uniform((0.12, 0.3, 0.6), (0.22, 0.45, 0.9))
    noisy = np.random.default_rng(seed + 1000)
    with _style():
        fig, ax = plt.subplots(figsize=size, dpi=100)
        for k, rate in enumerate(rates):
            y = 0.2 + 2.0 * np.exp(-rate * LOSS_STEPS) + 0.1 * k
            if noise:
                y = y * (1 + noise * noisy.standard_normal(y.shape))
            ax.plot(LOSS_STEPS, y, linewidth=1.8, label=f"rate {rate:.2f}")
        ax.set_xlim(0, 20)
        ax.set_ylim(0, 2.6)
        ax.set_xlabel("steps (k)")
        ax.set_ylabel("loss")
        ax.legend()
        return _png(fig, dpi=100)


# -- 9. Named clouds with a fit line each (ggplot2 geom_smooth, seaborn regplot) -----------------

#: Three groups of points: name, centre (x, y), slope of y on x. Drawn, like the Palmer penguins
#: figures of realfig-dev, as overlapping markers with a least-squares line in the group's colour.
CLOUD_GROUPS = (("Adelie", 190.0, 39.0, 0.15), ("Chinstrap", 196.0, 49.0, 0.2),
                ("Gentoo", 217.0, 47.5, 0.25))
CLOUD_STYLES = {
    "published": ("default", (8, 6), 30, ("tab:orange", "tab:purple", "tab:cyan")),
    "ggplot": ("ggplot", (7, 7), 12, ("#F8766D", "#00BA38", "#619CFF")),
    "seaborn": ("seaborn-v0_8-whitegrid", (9, 5), 50, ("#4c72b0", "#dd8452", "#55a868")),
}


def named_clouds(style: str = "published", *, shift: str | None = None,
                 reverse: str | None = None, names: Sequence[str] | None = None) -> bytes:
    """The three clouds drawn in one of CLOUD_STYLES. `shift`: that group moved up by a fifth of
    the y range; `reverse`: that group's y values in reverse x order (its trend reversed);
    `names`: the legend labels in group order (swap two to mislabel them)."""
    rng = np.random.default_rng(5)
    theme, size, marker, colours = CLOUD_STYLES[style]
    labels = names or [g[0] for g in CLOUD_GROUPS]
    with _style(theme):
        fig, ax = plt.subplots(figsize=size, dpi=100)
        for (name, cx, cy, slope), label, colour in zip(CLOUD_GROUPS, labels, colours):
            x = rng.normal(cx, 6, 120)
            y = cy + slope * (x - cx) + rng.normal(0, 2.5, 120)
            if name == shift:
                y = y + 5.5
            if name == reverse:
                order = np.argsort(x)
                y[order] = y[order][::-1]
            ax.scatter(x, y, s=marker, alpha=0.8, color=colour, label=label)
            k, b = np.polyfit(x, y, 1)
            ends = np.array([x.min(), x.max()])
            ax.plot(ends, k * ends + b, color=colour, linewidth=2)
        ax.set_xlabel("flipper length (mm)")
        ax.set_ylabel("bill length (mm)")
        ax.legend(title="species")
        return _png(fig, dpi=100)


def faceted_clouds(*, swap_in_panel: int | None = None) -> bytes:
    """Two groups of small dots in three facets (ggplot2's facet_wrap), one legend for all in
    the first facet. `swap_in_panel`: that facet's two groups drawn in each other's colours."""
    rng = np.random.default_rng(8)
    with _style("seaborn-v0_8-whitegrid"):
        fig, axes = plt.subplots(1, 3, figsize=(12, 4.5), dpi=100, sharey=True)
        for k, ax in enumerate(axes):
            colours = ["#1f77b4", "#d62728"]
            if k == swap_in_panel:
                colours.reverse()
            for (name, lift), colour in zip((("female", 0.0), ("male", 600.0)), colours):
                x = rng.normal(190 + 12 * k, 6, 60)
                y = 3300 + 400 * k + lift + 30 * (x - 190 - 12 * k) + rng.normal(0, 250, 60)
                ax.scatter(x, y, s=6, color=colour, label=name)
            ax.set_xlabel("flipper length (mm)")
        axes[0].set_ylabel("body mass (g)")
        axes[0].legend(loc="upper left")
        fig.tight_layout()
        return _png(fig, dpi=100)


# -- issue 27: what the readers of figures from other sources got wrong ---------------------------

def speedup(*, reference: str = "#b0b0b0", reference_style: str = ":", drop: str | None = None,
            style: str = "default", colours: Sequence[str] | None = None,
            names: Sequence[str] | None = None) -> bytes:
    """Parallel speed-up of three codes with a "perfect scaling" reference line (gnuplot's faint
    dotted grey in the published figure): `reference` is that line's colour and `drop` a code
    left out; `names` the legend labels in code order."""
    threads = np.arange(1, 25)
    codes = {"H2O": 1.0 + 9.0 * (1 - np.exp(-threads / 9.0)),
             "H3COH": np.minimum(threads, 12) * 0.95 + 0.08 * np.maximum(threads - 12, 0),
             "C14H10": 1.0 + 4.6 * (1 - np.exp(-threads / 6.0))}
    labels = list(names or codes)
    palette = list(colours or ("#009e73", "#56b4e9", "#e69f00"))
    with _style(style):
        fig, ax = plt.subplots(figsize=(7.2, 5.0), dpi=100)
        ax.plot(threads, threads, reference_style, color=reference, linewidth=1.2,
                label="perfect scaling")
        for (name, y), label, colour in zip(codes.items(), labels, palette):
            if name != drop:
                ax.plot(threads, y, color=colour, linewidth=2, label=label)
        ax.set_xlim(0, 25)
        ax.set_ylim(0, 15)
        ax.set_xlabel("threads")
        ax.set_ylabel("speed-up")
        ax.legend(loc="upper left")
        return _png(fig, dpi=100)


def grey_bars(*, names: Sequence[str] = ("batch 64", "batch 256", "batch 1024"),
              grey: bool = False) -> bytes:
    """Grouped bars of three series over five categories, in colours or in three greys a few
    levels apart (a restyle for print, whose legend swatches a reader can pair either way)."""
    heights = np.array([[41, 55, 63, 72, 81], [31, 44, 58, 66, 74], [50, 61, 70, 80, 88]], float)
    colours = ("#4d4d4d", "#606060", "#737373") if grey else ("#1f77b4", "#ff7f0e", "#2ca02c")
    with _style():
        fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
        x = np.arange(5)
        for k, (row, name, colour) in enumerate(zip(heights, names, colours)):
            ax.bar(x + (k - 1) * 0.27, row, width=0.27, color=colour, label=name)
        ax.set_xticks(x, ["A", "B", "C", "D", "E"])
        ax.set_ylim(0, 100)
        ax.set_ylabel("accuracy (%)")
        ax.legend(loc="upper left")
        return _png(fig, dpi=100)


def single_speedup(*, label_shift: int = 0) -> bytes:
    """One speed-up curve; `label_shift` moves the x label that many pixels to the right: what
    the same plotting code gives on a machine whose font engine places glyphs otherwise."""
    threads = np.arange(1, 25)
    with _style():
        fig, ax = plt.subplots(figsize=(7.2, 5.0), dpi=100)
        ax.plot(threads, 1.0 + 9.0 * (1 - np.exp(-threads / 9.0)), color="#009e73",
                linewidth=2, label="H2O")
        ax.set_xlim(0, 25)
        ax.set_ylim(0, 15)
        label = ax.set_xlabel("threads")
        if label_shift:
            x, y = label.get_position()
            label.set_position((x + label_shift / (0.775 * 720), y))
        ax.set_ylabel("speed-up")
        ax.legend(loc="upper left")
        return _png(fig, dpi=100)


def drawn_set() -> list[tuple[str, bytes, bytes]]:
    """A small set of (label, published, reproduced) pairs drawn here to check that the reader's
    confidence (chart.same_data) means what it says: restyles of three figures (faithful) and one
    meaningful change each (unfaithful)."""
    published = [loss_curves(3), speedup(), three_curves()]
    faithful = [loss_curves(3, size=(8.0, 5.0)),
                speedup(reference="#000000", style="seaborn-v0_8-whitegrid",
                        colours=("#1b9e77", "#7570b3", "#d95f02")),
                three_curves(restyled=True)]
    unfaithful = [loss_curves(4, size=(8.0, 5.0)),
                  speedup(drop="H3COH", style="seaborn-v0_8-whitegrid",
                          colours=("#1b9e77", "#7570b3", "#d95f02")),
                  three_curves(names=tuple(reversed(tuple(THREE_CURVES))), restyled=True)]
    return [("faithful", p, r) for p, r in zip(published, faithful)] + \
        [("unfaithful", p, r) for p, r in zip(published, unfaithful)]
