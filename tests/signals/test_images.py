"""Safe loading of figure files (judging/signals/images.py): raster images of every mode, PDF,
SVG and EPS figures, each told by its content, and each failure with its reason."""

from __future__ import annotations

import logging
import shutil
import struct
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import EpsImagePlugin, Image

from judging.errors import ImageLoadError
from judging.figures.formats import vector_format
from judging.signals import compare_figures, load_image, read_chart
from judging.signals.images import VECTOR_DPI
from tests.conftest import CountingWeb, counting_web_server, open_png, render_chart

#: The chart of these tests, 8 x 6 inches: 800 x 600 as PNG at 100 dpi, 1200 x 900 as a vector
#: figure drawn at VECTOR_DPI.
FIGSIZE = (8, 6)


@pytest.fixture(scope="module")
def charts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One matplotlib chart (two series) saved as PNG, PDF, SVG and EPS."""
    folder = tmp_path_factory.mktemp("charts")
    paths = {}
    for fmt in ("png", "pdf", "svg", "eps"):
        paths[fmt] = folder / f"chart.{fmt}"
        paths[fmt].write_bytes(render_chart(fmt=fmt, size=FIGSIZE))
    return paths


def _series_count(image: Image.Image) -> int:
    reading = read_chart(image)
    assert reading.readable, reading.reason
    return sum(len(panel.series) for panel in reading.panels)


def _assert_same_chart(vector: Image.Image, png: Image.Image) -> None:
    """A vector figure drawn by us shows the chart its PNG shows: the size of VECTOR_DPI, ink on
    the page, the same series read back, and pixels alike once both are normalised."""
    expected = (FIGSIZE[0] * VECTOR_DPI, FIGSIZE[1] * VECTOR_DPI)
    assert vector.mode == "RGB"
    assert abs(vector.width - expected[0]) <= 2 and abs(vector.height - expected[1]) <= 2
    gray = np.asarray(vector.convert("L"))
    assert gray.min() < 50 and (gray < 200).mean() > 0.01  # not a blank page
    assert _series_count(vector) == _series_count(png) == 2
    assert compare_figures(png, vector).signals.ssim > 0.9


# --- raster images ---------------------------------------------------------------------------


def _save(path: Path, image: Image.Image, **kwargs) -> Path:
    image.save(path, **kwargs)
    return path


def test_unusual_but_valid_images_load(tmp_path: Path) -> None:
    deep = Image.fromarray((np.arange(64 * 64).reshape(64, 64) * 16).astype(np.uint16))
    cases = {
        "gray16.png": _save(tmp_path / "gray16.png", deep),
        "cmyk.jpg": _save(tmp_path / "cmyk.jpg", Image.new("CMYK", (32, 32), (0, 255, 255, 0))),
        "palette.png": _save(tmp_path / "palette.png",
                             Image.new("RGB", (32, 32), "red").convert("P")),
        "transparent.png": _save(tmp_path / "transparent.png",
                                 Image.new("RGBA", (32, 32), (0, 0, 255, 0))),
        "gray_alpha.png": _save(tmp_path / "gray_alpha.png", Image.new("LA", (32, 32), (0, 128))),
        "webp.webp": _save(tmp_path / "webp.webp", Image.new("RGB", (32, 32), "green")),
    }
    for name, path in cases.items():
        image = load_image(path)
        assert image.mode == "RGB", name
    # 16-bit values are scaled, not clipped: the gradient survives.
    gray = np.asarray(load_image(cases["gray16.png"]))[..., 0]
    assert gray.min() == 0 and gray.max() == 255
    # A fully transparent pixel is composited on white, not shown as its hidden colour.
    assert load_image(cases["transparent.png"]).getpixel((0, 0)) == (255, 255, 255)
    assert load_image(cases["cmyk.jpg"]).getpixel((5, 5))[0] > 200


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _png16(array: np.ndarray) -> bytes:
    """A 16-bit PNG of a (height, width, channels) uint16 array: Pillow cannot write 16-bit
    colour, so the chunks are written here (colour type 0 gray, 4 gray+alpha, 2 RGB, 6 RGBA)."""
    height, width, channels = array.shape
    colour_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = array.astype(">u2").reshape(height, width * channels)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 16, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw))
            + _chunk(b"IEND", b""))


def test_16_bit_pngs_load_as_the_chart_they_hold(tmp_path: Path) -> None:
    chart = open_png(render_chart(size=(4, 3)))
    rgb8 = np.asarray(chart)
    wide = rgb8.astype(np.uint16) * 257  # 8-bit v as 16-bit v*257: its high byte is v again
    (tmp_path / "rgb16.png").write_bytes(_png16(wide))
    with Image.open(tmp_path / "rgb16.png") as opened:
        assert opened.mode == "RGB"  # Pillow reads 16-bit colour as 8-bit ('RGB;16B')
    assert np.array_equal(np.asarray(load_image(tmp_path / "rgb16.png")), rgb8)

    alpha = np.full(wide.shape[:2] + (1,), 65535, dtype=np.uint16)
    alpha[:10, :10] = 0  # a transparent corner over a red "hidden" colour
    rgba = np.concatenate([wide, alpha], axis=2)
    rgba[:10, :10, :3] = (65535, 0, 0)
    (tmp_path / "rgba16.png").write_bytes(_png16(rgba))
    loaded = np.asarray(load_image(tmp_path / "rgba16.png"))
    assert (loaded[:10, :10] == 255).all()
    assert np.array_equal(loaded[10:, 10:], rgb8[10:, 10:])

    gray8 = np.asarray(chart.convert("L"))
    assert gray8.min() == 0 and gray8.max() == 255
    gray16 = gray8.astype(np.uint16) * 257
    _save(tmp_path / "gray16.png", Image.fromarray(gray16))  # Pillow writes 'I;16' itself
    with Image.open(tmp_path / "gray16.png") as opened:
        assert opened.mode == "I;16"
    assert np.array_equal(np.asarray(load_image(tmp_path / "gray16.png"))[..., 0], gray8)
    gray_alpha = np.stack([gray16, np.full_like(gray16, 65535)], axis=2)
    (tmp_path / "la16.png").write_bytes(_png16(gray_alpha))
    assert np.array_equal(np.asarray(load_image(tmp_path / "la16.png"))[..., 0], gray8)


def test_palette_pngs_load_with_transparency_on_white(tmp_path: Path) -> None:
    chart = open_png(render_chart(size=(4, 3)))
    palette = chart.quantize(colors=32)
    _save(tmp_path / "palette.png", palette)
    loaded = load_image(tmp_path / "palette.png")
    assert loaded.mode == "RGB" and loaded.size == chart.size
    assert np.abs(np.asarray(loaded, float) - np.asarray(chart, float)).mean() < 3
    # A palette with transparent entries (a quantized RGBA chart): those show white.
    rgba = chart.convert("RGBA")
    rgba.paste((0, 0, 255, 0), (0, 0, 20, 20))
    _save(tmp_path / "palette_alpha.png", rgba.quantize(colors=32))
    with Image.open(tmp_path / "palette_alpha.png") as opened:
        assert opened.mode == "P" and "transparency" in opened.info
    loaded = load_image(tmp_path / "palette_alpha.png")
    assert loaded.getpixel((5, 5)) == (255, 255, 255)
    assert _series_count(loaded) == _series_count(chart)
    # An RGB PNG whose tRNS chunk keys one colour out: that colour shows white.
    keyed = Image.new("RGB", (16, 16), (10, 20, 30))
    keyed.paste((200, 0, 0), (0, 0, 8, 16))
    _save(tmp_path / "keyed.png", keyed, transparency=(10, 20, 30))
    loaded = load_image(tmp_path / "keyed.png")
    assert loaded.getpixel((12, 5)) == (255, 255, 255) and loaded.getpixel((2, 5)) == (200, 0, 0)


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header claims `width` x `height` but carries almost no data."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + _chunk(b"IEND", b""))


#: Refused files and the reason each is given (test_bad_figure_files_are_refused_with_a_reason).
RASTER_REFUSALS = [
    ("figure.png", b"", "empty file"),
    ("figure.png", b"not an image at all", "not a readable image"),
    ("figure.png", _png_header_only(100, 100), "corrupt or truncated"),
    ("figure.png", _png_header_only(8_000, 8_000), "64,000,000 pixels, over the limit"),
    ("figure.png", _png_header_only(30_000, 30_000), "decompression bomb"),
]


def test_pixel_limit_is_the_users(tmp_path: Path) -> None:
    path = _save(tmp_path / "big.png", Image.new("RGB", (400, 300), "white"))
    load_image(path)
    with pytest.raises(ImageLoadError, match="over the limit of 100,000"):
        load_image(path, max_pixels=100_000)


def test_animated_and_unsupported_images(tmp_path: Path) -> None:
    frames = [Image.new("RGB", (16, 16), c) for c in ("red", "blue")]
    frames[0].save(tmp_path / "anim.png", save_all=True, append_images=frames[1:])
    with pytest.raises(ImageLoadError, match="animated"):
        load_image(tmp_path / "anim.png")
    frames[0].save(tmp_path / "fig.gif")
    with pytest.raises(ImageLoadError, match="GIF is not supported"):
        load_image(tmp_path / "fig.gif")
    with pytest.raises(ImageLoadError, match="not found"):
        load_image(tmp_path / "missing.png")


def test_wrong_extension_is_read_by_content(tmp_path: Path) -> None:
    path = _save(tmp_path / "figure.png", Image.new("RGB", (16, 16), "red"), format="JPEG")
    assert load_image(path).size == (16, 16)


# --- vector figures: told by content ---------------------------------------------------------


@pytest.mark.parametrize("head, kind", [
    (b"%PDF-1.7\n", "PDF"),
    (b"\n\n%PDF-1.4\n", "PDF"),  # a little junk before the header, as PDF readers allow
    (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "SVG"),
    (b"\xef\xbb\xbf  <SVG>", "SVG"),
    (b'<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n<svg ',
     "SVG"),
    (b"<!-- Created with Inkscape -->\n<svg\n width='1'>", "SVG"),
    (b"%!PS-Adobe-3.0 EPSF-3.0\n", "EPS"),
    (b"\xc5\xd0\xd3\xc6" + b"\x00" * 28, "EPS"),  # DOS EPS, PostScript behind a binary header
    (b"\x89PNG\r\n\x1a\n", None), (b"<?xml version='1.0'?><html/>", None), (b"<html>", None),
])
def test_vector_formats_are_sniffed_by_content(head: bytes, kind: str | None) -> None:
    assert vector_format(head) == kind


def test_a_pdf_under_any_name_is_read_as_pdf(tmp_path: Path, charts: dict[str, Path]) -> None:
    misnamed = tmp_path / "figure.png"
    misnamed.write_bytes(charts["pdf"].read_bytes())
    assert load_image(misnamed).size == load_image(charts["pdf"]).size


# --- PDF -------------------------------------------------------------------------------------


def test_pdf_figure_is_page_one_drawn_like_its_png(charts: dict[str, Path]) -> None:
    image = load_image(charts["pdf"])
    _assert_same_chart(image, load_image(charts["png"]))
    assert image.info["pages"] == 1


def test_pdfs_load_from_many_threads_at_once(charts: dict[str, Path]) -> None:
    """`judging run` measures claims in threads, and pdfium is not thread-safe: the loader
    serialises it, so concurrent loads neither crash nor mix their pixels."""
    from concurrent.futures import ThreadPoolExecutor

    expected = np.asarray(load_image(charts["pdf"]))
    with ThreadPoolExecutor(max_workers=8) as pool:
        loaded = list(pool.map(lambda _: np.asarray(load_image(charts["pdf"])), range(16)))
    assert all(np.array_equal(image, expected) for image in loaded)


def test_multi_page_pdf_reads_page_one_and_says_so(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    path = tmp_path / "pages.pdf"
    with PdfPages(path) as pages:
        for colour in ("red", "blue"):
            fig = plt.figure(figsize=(2, 2), facecolor=colour)
            pages.savefig(fig, facecolor=colour)
            plt.close(fig)
    with caplog.at_level(logging.WARNING, logger="judging.signals.images"):
        image = load_image(path)
    assert image.getpixel((100, 100)) == (255, 0, 0)  # page 1, red
    assert image.info["pages"] == 2
    assert "pages.pdf: a PDF of 2 pages; page 1 is read as the figure" in caplog.text


def _pdf(objects: list[bytes], trailer: bytes = b"") -> bytes:
    """A PDF of the given objects (1 0 obj is the catalogue), with a correct cross-reference
    table: what pdfium refuses in these tests is the content, not the file's structure."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += (b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, trailer, xref))
    return bytes(out)


def _page_pdf(media_box: bytes) -> bytes:
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [%s] >>" % media_box])


def test_a_huge_pdf_page_is_drawn_within_the_pixel_limit(tmp_path: Path) -> None:
    # 200 x 200 inches (the largest page PDF allows without UserUnit): 30,000 x 30,000 pixels
    # at 150 dpi, 900 M pixels, had it been drawn at its size.
    path = tmp_path / "poster.pdf"
    path.write_bytes(_page_pdf(b"0 0 14400 14400"))
    started = time.monotonic()
    image = load_image(path, max_pixels=1_000_000)
    assert image.width * image.height <= 1_000_000 and image.width > 990
    assert time.monotonic() - started < 5


PDF_REFUSALS = [
    ("figure.pdf", b"%PDF-1.4\nnothing else", r"not a readable PDF \(Failed to load document"),
    # pdfium refuses a PDF without pages as it opens it
    ("figure.pdf", _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                         b"<< /Type /Pages /Kids [] /Count 0 >>"]),
     "not a readable PDF"),
    # A standard security handler whose user password is not empty: pdfium cannot open it.
    ("figure.pdf", _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                         b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                         b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] >>",
                         b"<< /Filter /Standard /V 1 /R 2 /O <%s> /U <%s> /P -4 >>"
                         % (b"00" * 32, b"11" * 32)],
                        b"/Encrypt 4 0 R /ID [<00112233445566778899aabbccddeeff> "
                        b"<00112233445566778899aabbccddeeff>] "),
     "password.*an encrypted PDF cannot be read, submit it without its password"),
]


def test_a_truncated_pdf_is_refused(tmp_path: Path, charts: dict[str, Path]) -> None:
    path = tmp_path / "truncated.pdf"
    path.write_bytes(charts["pdf"].read_bytes()[:2000])
    with pytest.raises(ImageLoadError, match="truncated.pdf: not a readable PDF"):
        load_image(path)


# --- SVG -------------------------------------------------------------------------------------


def test_svg_figure_is_drawn_like_its_png(charts: dict[str, Path]) -> None:
    assert b"<!DOCTYPE svg" in charts["svg"].read_bytes()  # matplotlib's prolog is dropped
    _assert_same_chart(load_image(charts["svg"]), load_image(charts["png"]))


def test_svg_with_an_embedded_raster_image_loads(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.imshow([[0, 1], [1, 0]], cmap="gray")  # matplotlib embeds it as a PNG data URI
    fig.savefig(tmp_path / "heat.svg", format="svg")
    plt.close(fig)
    assert b"data:image/png;base64" in (tmp_path / "heat.svg").read_bytes()
    image = load_image(tmp_path / "heat.svg")
    assert image.size == (round(3 * VECTOR_DPI), round(2 * VECTOR_DPI))
    assert np.asarray(image.convert("L")).min() < 20  # the black cells are drawn


@pytest.fixture
def web() -> Iterator[CountingWeb]:
    """A local HTTP server that counts requests: an SVG's external image must never reach it."""
    with counting_web_server(_png16(np.full((4, 4, 3), 65535, dtype=np.uint16))) as server:
        yield server


def _svg(inner: str, size: str = "60") -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'width="{size}" height="{size}"><rect width="30" height="30"/>{inner}</svg>')


def test_svg_external_references_are_refused_and_never_fetched(tmp_path: Path,
                                                              web: CountingWeb) -> None:
    """Refused rather than drawn without the part they name: a figure missing a part would be
    judged as if it were whole. resvg reads local files itself, so nothing of the kind reaches
    it."""
    _save(tmp_path / "secret.png", Image.new("RGB", (20, 20), "red"))
    for href in (f"{web.url}/chart.png", f"{tmp_path}/secret.png", "secret.png",
                 f"file://{tmp_path}/secret.png"):
        for attribute in ("href", "xlink:href"):
            path = tmp_path / "figure.svg"
            path.write_text(_svg(f'<image {attribute}="{href}" width="20" height="20"/>'))
            with pytest.raises(ImageLoadError, match="figure.svg: the SVG has external "
                                                     "references, entities or scripts"):
                load_image(path)
    path.write_text(_svg(f'<rect width="5" height="5" style="fill:url({web.url}/f.svg#g)"/>'))
    with pytest.raises(ImageLoadError, match="external references"):
        load_image(path)
    assert web.hits == [], "an SVG reference was fetched"


SVG_REFUSALS = [
    ("figure.svg", b'<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
     b'\n<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"><text>&e;</text></svg>',
     "not well-formed XML"),  # the DOCTYPE is dropped, so its entity stays undefined
    ("figure.svg", b'<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"><rect',
     "no <svg> element"),
    ("figure.svg", b'<svg xmlns="http://www.w3.org/2000/svg" width="9"><script>x()</script></svg>',
     "scripts"),
    ("figure.svg", b"<svg>\xff\xfe</svg>", "an SVG that is not UTF-8 text"),
]


def test_a_huge_svg_is_drawn_within_the_pixel_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge.svg"
    path.write_text(_svg("", size="100000"))
    image = load_image(path, max_pixels=250_000)
    assert image.width * image.height <= 250_000 and image.width > 490


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("name, content, message",
                         RASTER_REFUSALS + PDF_REFUSALS + SVG_REFUSALS)
def test_bad_figure_files_are_refused_with_a_reason(tmp_path: Path, name: str, content: bytes,
                                                    message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ImageLoadError, match=message):
        load_image(path)


# --- EPS -------------------------------------------------------------------------------------


def test_eps_without_ghostscript_is_refused_clearly(charts: dict[str, Path],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Pillow's own record of where gs is: False is "looked, not found" (whatever this machine has)
    monkeypatch.setattr(EpsImagePlugin, "gs_binary", False)
    with pytest.raises(ImageLoadError, match=r"chart.eps: EPS figures need ghostscript \(gs\), "
                                             r"which is not installed"):
        load_image(charts["eps"])


@pytest.mark.skipif(shutil.which("gs") is None,
                    reason="ghostscript (gs) is not installed: EPS figures are refused here "
                           "(test_eps_without_ghostscript_is_refused_clearly)")
def test_eps_figure_is_drawn_like_its_png(charts: dict[str, Path]) -> None:
    image = load_image(charts["eps"])
    assert image.mode == "RGB"
    # Pillow's EPS scale is whole: 2 (144 dpi) for VECTOR_DPI 150
    assert image.size == (FIGSIZE[0] * 144, FIGSIZE[1] * 144)
    assert _series_count(image) == _series_count(load_image(charts["png"]))
    assert compare_figures(load_image(charts["png"]), image).signals.ssim > 0.9
