"""The copy check: re-encoded, re-framed, resized and gray copies are copies; re-renders of the
same data (another style, 2% noise, a curve half a percent higher, another transparency) are
not; pixel identity is told apart from the rest."""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
import pytest
from PIL import Image, ImageDraw
from skimage.filters import window

from judging.signals import check_copy, compare_figures, pixel_identical
from judging.signals.copies import (
    COPY_MAX_REDRAWN_SHARE,
    COPY_MAX_TONE_SHARE,
    COPY_MIN_CORRELATION,
    Alignment,
    peel_borders,
    phase_shift,
)
from tests.conftest import open_png, render_chart

X = np.linspace(0, 10, 200)


def _series(*, noise: float = 0.0, val_shift: float = 0.0, seed: int = 0):
    rng = np.random.default_rng(seed)
    train = (np.exp(-X / 3) + 0.1) * (1 + noise * rng.standard_normal(len(X)))
    val = (np.exp(-X / 4) + 0.15 + val_shift) * (1 + noise * rng.standard_normal(len(X)))
    return {"train": (X, train), "val": (X, val)}


@pytest.fixture(scope="module")
def base() -> Image.Image:
    return open_png(render_chart())


def _jpeg(image: Image.Image, quality: int, **options) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality, **options)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def _pad(image: Image.Image, sides: tuple[int, int, int, int], colour="white") -> Image.Image:
    left, top, right, bottom = sides
    canvas = Image.new("RGB", (image.width + left + right, image.height + top + bottom), colour)
    canvas.paste(image, (left, top))
    return canvas


def _crop(image: Image.Image, share: float) -> Image.Image:
    dx, dy = round(share * image.width), round(share * image.height)
    return image.crop((dx, dy, image.width - dx, image.height - dy))


def _scaled(image: Image.Image, factor: float,
            method: Image.Resampling = Image.Resampling.BICUBIC) -> Image.Image:
    return image.resize((round(image.width * factor), round(image.height * factor)), method)


def _gray_709(image: Image.Image) -> Image.Image:
    # Another luma formula than Pillow's (ITU-R 709 weights, as scikit-image's rgb2gray).
    gray = np.asarray(image, np.float32) @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    return Image.fromarray(np.clip(gray.round(), 0, 255).astype(np.uint8)).convert("RGB")


COPIES: dict[str, Callable[[Image.Image], Image.Image]] = {
    "jpeg q80": lambda im: _jpeg(im, 80),
    "jpeg q60": lambda im: _jpeg(im, 60),
    "jpeg q95": lambda im: _jpeg(im, 95),
    "jpeg q60 4:4:4": lambda im: _jpeg(im, 60, subsampling=0),
    "padded 40 px white": lambda im: _pad(im, (40, 40, 40, 40)),
    "padded 10% gray, uneven": lambda im: _pad(im, (80, 20, 50, 60), colour=(200, 200, 200)),
    "cropped 3%": lambda im: _crop(im, 0.03),
    "cropped 5%, into the labels": lambda im: _crop(im, 0.05),
    "resized 70%": lambda im: _scaled(im, 0.7),
    "resized 50% nearest": lambda im: _scaled(im, 0.5, Image.Resampling.NEAREST),
    "resized 2x lanczos": lambda im: _scaled(im, 2.0, Image.Resampling.LANCZOS),
    "gray": lambda im: im.convert("L").convert("RGB"),
    "gray (709 weights)": _gray_709,
    "cropped 3%, resized 80%, jpeg q75": lambda im: _jpeg(_scaled(_crop(im, 0.03), 0.8), 75),
    "padded 40 px, jpeg q70": lambda im: _jpeg(_pad(im, (40, 40, 40, 40)), 70),
}


@pytest.mark.parametrize("name", list(COPIES))
def test_transformed_copies_are_copies(base: Image.Image, name: str) -> None:
    copy = COPIES[name](base)
    check = check_copy(base, copy)
    assert check.copy is True, check.how
    # ... and the measure stage's cheap gate (compare_figures) sends them to that check.
    assert compare_figures(base, copy).signals.copy is True
    # A border added, or cut within the figure's own white margin, leaves the pixels as they were.
    assert check.identical is (name in ("padded 40 px white", "padded 10% gray, uneven",
                                        "cropped 3%"))


def _scatter(*, alpha: float = 0.15, seed: int | None = None) -> Image.Image:
    """About 6,000 translucent points in three clouds (the kind of figure JPEG hurts most)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    for k, (mx, my) in enumerate([(1, 2), (3, 1), (2, 4)]):
        rng = np.random.default_rng(100 + k if seed is None else 1000 * seed + k)
        ax.scatter(mx + 0.6 * rng.standard_normal(2000), my + 0.5 * rng.standard_normal(2000),
                   s=12, alpha=alpha, label=f"group {k}")
    ax.legend()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(fig)
    return open_png(buffer.getvalue())


def test_compare_figures_reports_the_copy_check(base: Image.Image) -> None:
    copied = compare_figures(base, _jpeg(_pad(base, (40, 40, 40, 40)), 80))
    assert copied.signals.copy is True and copied.signals.identical is False
    assert copied.copy_check.copy is True and copied.signals.redrawn_share is not None
    redrawn = compare_figures(base, open_png(render_chart(series=_series(noise=0.02))))
    assert redrawn.signals.copy is False


def test_a_dense_translucent_scatter_survives_jpeg() -> None:
    # realfig-dev's eco-facet-sex copy: JPEG q80 of ~15k translucent points was missed before.
    scatter = _scatter()
    for quality in (80, 60):
        check = check_copy(scatter, _jpeg(scatter, quality))
        assert check.copy is True, check.how


@pytest.mark.parametrize("name, make", [
    ("another style", lambda: render_chart(style="ggplot")),
    ("2% noise on the data, same style", lambda: render_chart(series=_series(noise=0.02))),
    ("a seed change of that noise", lambda: render_chart(series=_series(noise=0.02, seed=1))),
    ("the val curve 0.5% of its range higher", lambda: render_chart(
        series=_series(val_shift=0.005))),
    ("much thicker lines", lambda: render_chart(linewidth=4.0)),
])
def test_rerenders_are_not_copies(base: Image.Image, name: str, make) -> None:
    if name == "a seed change of that noise":
        base = open_png(render_chart(series=_series(noise=0.02)))
    check = check_copy(base, open_png(make()))
    assert check.copy is False, f"{name}: {check.how}"


def test_the_same_points_with_another_transparency_are_not_a_copy() -> None:
    # Every mark where it was, only drawn darker: the shade test, not the redrawn one, sees it.
    check = check_copy(_scatter(alpha=0.15), _scatter(alpha=0.3))
    assert check.copy is False
    assert check.tone_share is not None and check.tone_share > COPY_MAX_TONE_SHARE
    reseeded = check_copy(_scatter(), _scatter(seed=1))
    assert reseeded.copy is False


def _sparse_log_scatter(style: str, points: int, size: tuple[float, float]) -> Image.Image:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.style.context(style):
        fig, ax = plt.subplots(figsize=size, dpi=100)
        x = np.arange(points)
        ax.scatter(x, 10.0 ** x, s=12)
        ax.set_yscale("log")
        ax.grid(True)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", metadata={"Software": None})
        plt.close(fig)
    return open_png(buffer.getvalue())


def test_a_sparse_figure_drawn_again_elsewhere_is_not_a_copy() -> None:
    # realfig-dev's vl-point-log: thin marks only (grid, text, a few points), the re-plot nearly
    # gray. Its thin strokes escape the 2x2 opening; the correlation of the marks does not.
    published = _sparse_log_scatter("default", 8, (4.0, 3.5))
    check = check_copy(published, _gray(_sparse_log_scatter("bmh", 4, (7.2, 4.05))))
    assert check.copy is False, check.how
    assert check.correlation is not None and check.correlation < COPY_MIN_CORRELATION


def _noisy_curve(*, seed: int, jitter: float) -> Image.Image:
    """A decaying curve with noise of `jitter` (axis heights), drawn with Pillow: two seeds are
    the same plot run twice, which aligns well and correlates little (the scale benchmark's
    figure pairs)."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (400, 300), "white")
    draw = ImageDraw.Draw(image)
    draw.line([(30, 10), (30, 270), (390, 270)], fill="black", width=2)
    x = np.linspace(0, 1, 120)
    y = 0.8 * np.exp(-3 * x) + 0.1 + rng.normal(0, jitter, x.size)
    draw.line(list(zip((30 + x * 350).tolist(), (270 - y * 240).tolist())), fill="#1f77b4",
              width=2)
    return image


def test_a_copy_check_that_need_not_explain_gives_the_same_verdict() -> None:
    """explain=False (the pixel signals, which show `how` of copies only) answers a pair whose
    marks correlate too little for a copy without its redrawn share at 256 px: the same verdict
    and correlation; the explained check still says how much was redrawn (a reference_mismatch
    flag shows it)."""
    published, reproduced = _noisy_curve(seed=0, jitter=0.005), _noisy_curve(seed=1, jitter=0.02)
    explained = check_copy(published, reproduced)
    quick = check_copy(published, reproduced, explain=False)
    assert (quick.copy, quick.identical, quick.near_identical) == (False, False, False)
    assert quick.correlation == explained.correlation < COPY_MIN_CORRELATION
    assert quick.scale == explained.scale
    assert "redrawn at 256 px" in explained.how and "redrawn" not in quick.how


def _gray(image: Image.Image) -> Image.Image:
    return image.convert("L").convert("RGB")


def _pastel_chart(shift: float) -> Image.Image:
    """A pale curve (no strong ink) under a black title (the only strong ink)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 6), dpi=100)
    ax.axis("off")
    ax.set_title("Validation loss", color="black")
    y = np.exp(-X / 3) + 0.1
    y[120:160] += shift
    ax.plot(X, y, color="#a6cee3", linewidth=2)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return open_png(buffer.getvalue())


def test_a_moved_stretch_of_a_pale_curve_is_not_a_copy() -> None:
    check = check_copy(_pastel_chart(0.0), _pastel_chart(0.015))
    assert check.copy is False
    assert check.redrawn_share is not None and check.redrawn_share > 2 * COPY_MAX_REDRAWN_SHARE


def test_pixel_identity(base: Image.Image) -> None:
    assert pixel_identical(base, base.copy())
    assert pixel_identical(base, _pad(base, (10, 0, 30, 5), colour="black"))
    assert not pixel_identical(base, _jpeg(base, 95))
    assert not pixel_identical(base, _scaled(base, 0.7))
    same = check_copy(base, base.copy())
    assert same.copy and same.identical and same.redrawn_share == 0.0
    assert check_copy(base, base, same_bytes=True).how == "byte-identical files"
    assert compare_figures(base, base.copy()).signals.identical is True
    assert compare_figures(base, _jpeg(base, 95)).signals.identical is False


def test_alignment_finds_the_resize_and_the_frame(base: Image.Image) -> None:
    copy = _pad(_scaled(_crop(base, 0.02), 0.75), (30, 12, 0, 40), colour=(40, 40, 40))
    check = check_copy(base, copy)
    assert check.copy is True
    assert check.scale is not None
    assert check.scale == pytest.approx((1 / 0.75, 1 / 0.75), rel=3e-3)


def test_peel_borders_removes_one_colour_at_a_time(base: Image.Image) -> None:
    inner = peel_borders(base)
    padded = _pad(base, (25, 5, 15, 35), colour=(200, 200, 200))
    box = peel_borders(padded)
    assert (box[0] - 25, box[1] - 5, box[2] - 25, box[3] - 5) == inner
    blank = Image.new("RGB", (50, 40), "white")
    assert peel_borders(blank) == (0, 0, 50, 40)


def test_phase_shift_is_sub_pixel() -> None:
    rng = np.random.default_rng(3)
    image = Image.fromarray(rng.integers(0, 256, (96, 128), dtype=np.uint8)).resize(
        (256, 192), Image.Resampling.BICUBIC)
    reference = np.asarray(image.crop((40, 40, 168, 136)), np.float32)
    moved = np.asarray(image.resize((128, 96), Image.Resampling.BICUBIC,
                                    box=(40 - 0.3, 40 + 0.6, 168 - 0.3, 136 + 0.6)), np.float32)
    taper = window("hann", reference.shape)
    dy, dx, peak, located_y, located_x = phase_shift((reference - reference.mean()) * taper,
                                                     (moved - moved.mean()) * taper)
    assert (dy, dx) == pytest.approx((0.6, -0.3), abs=0.1)
    assert peak > 0.3 and located_y and located_x


def test_implausible_alignments_are_refused() -> None:
    assert Alignment((1.0, 1.0), (0.0, 0.0)).plausible()
    assert not Alignment((1.0, 2.0), (0.0, 0.0)).plausible()
    assert not Alignment((0.0, 0.0), (0.0, 0.0)).plausible()
    assert not Alignment((float("nan"), 1.0), (0.0, 0.0)).plausible()


@pytest.mark.parametrize("a, b", [
    (Image.new("RGB", (1, 1), "white"), Image.new("RGB", (40, 3), "black")),
    (Image.new("L", (8, 200), 255), Image.new("RGB", (200, 8), "black")),
    (Image.new("RGB", (64, 64), "white"), Image.new("RGB", (64, 64), "white")),
])
def test_degenerate_figures_do_not_break_the_check(a: Image.Image, b: Image.Image) -> None:
    check = check_copy(a, b)
    assert isinstance(check.copy, bool)
