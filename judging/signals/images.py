"""Reading untrusted figure files into plain RGB, refusing what cannot be read safely.

PNG, JPEG and WebP are decoded by Pillow. Vector figures are drawn at `VECTOR_DPI` (smaller
when that would pass the pixel limit, which is checked before anything is drawn): PDF (its first
page) by pdfium, SVG by resvg with nothing external read, EPS by ghostscript through Pillow, only
where `gs` is installed. The format is told by the file's content, never by its name.
"""

from __future__ import annotations

import io
import logging
import threading
import warnings
from pathlib import Path

import numpy as np
from PIL import EpsImagePlugin, Image, ImageOps, UnidentifiedImageError

from judging.errors import ImageLoadError
from judging.figures.formats import (
    DEFAULT_MAX_PIXELS,
    FIGURE_FORMATS,
    SNIFF_BYTES,
    VECTOR_DPI,
    find_svg,
    fit_zoom,
    rasterize_svg,
    vector_format,
)

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
#: The raster formats Pillow decodes for us (EPS, which Pillow also opens, goes its own way).
SUPPORTED_FORMATS = frozenset({"PNG", "JPEG", "WEBP"})
#: PDF and EPS sizes are in points.
POINTS_PER_INCH = 72.0
_PDFIUM_LOCK = threading.Lock()


def load_image(path: Path | str, *, max_pixels: int = DEFAULT_MAX_PIXELS,
               max_bytes: int = DEFAULT_MAX_BYTES) -> Image.Image:
    """Open a figure file as 8-bit RGB on a white background.

    Raster images: the header is read first and oversized images are refused before any pixel
    is decoded. 16-bit, CMYK, palette and transparent images are converted; animated images are
    refused (which frame is "the figure" would be a guess).

    Vector figures are drawn at `VECTOR_DPI`, or smaller so as to stay within `max_pixels`
    (their size is read before anything is drawn):

    - PDF: page 1 only. A PDF of several pages is read as its first page and says so in a
      warning of this module's logger and in the image's ``info["pages"]``. An encrypted PDF
      (one that needs a password to open) is refused.
    - SVG: refused when it references anything outside itself (a file, a URL, an entity, a
      script): resvg would read such files from the disk, and a figure drawn without a part
      would be judged as if it were whole (`judging.figures.formats.svg_size`).
    - EPS: needs ghostscript (`gs`), which Pillow runs with -dSAFER; without it, refused.

    Every failure is an `ImageLoadError` whose message says what is wrong with the file.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise ImageLoadError(f"{path.name}: file not found") from exc
    except OSError as exc:
        raise ImageLoadError(f"{path.name}: cannot read ({exc.strerror or exc})") from exc
    if size == 0:
        raise ImageLoadError(f"{path.name}: empty file")
    if size > max_bytes:
        raise ImageLoadError(f"{path.name}: {size} bytes, over the {max_bytes}-byte limit")
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise ImageLoadError(f"{path.name}: cannot read ({exc.strerror or exc})") from exc
    kind = vector_format(head)
    if kind == "PDF":
        return _load_pdf(path, max_pixels=max_pixels)
    if kind == "SVG":
        return _load_svg(path, max_pixels=max_pixels)
    if kind == "EPS":
        return _load_eps(path, max_pixels=max_pixels)
    return _load_raster(path, max_pixels=max_pixels)


def _load_raster(path: Path, *, max_pixels: int) -> Image.Image:
    try:
        with warnings.catch_warnings():
            # Our own pixel limit below is the one that counts; Pillow's warning would be noise.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(path)
    except Image.DecompressionBombError as exc:
        raise ImageLoadError(f"{path.name}: refused as a decompression bomb ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise ImageLoadError(f"{path.name}: not a readable image (corrupt, or not "
                             f"{FIGURE_FORMATS})") from exc
    except OSError as exc:
        raise ImageLoadError(f"{path.name}: cannot open image ({exc})") from exc
    with image:
        if image.format not in SUPPORTED_FORMATS:
            raise ImageLoadError(f"{path.name}: format {image.format} is not supported "
                                 f"(use {FIGURE_FORMATS})")
        _check_pixels(path, image.size, max_pixels=max_pixels)
        if getattr(image, "n_frames", 1) > 1:
            raise ImageLoadError(f"{path.name}: animated image with {image.n_frames} frames; "
                                 f"submit a single still figure")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                image.load()
        except Image.DecompressionBombError as exc:
            raise ImageLoadError(f"{path.name}: refused as a decompression bomb ({exc})") from exc
        except (OSError, SyntaxError, ValueError, EOFError) as exc:
            raise ImageLoadError(f"{path.name}: corrupt or truncated {image.format} data ({exc})"
                                 ) from exc
        rgb = _to_rgb(ImageOps.exif_transpose(image))
        # Closing the file invalidates the image's pixels: hand back an independent copy.
        return rgb.copy() if rgb is image else rgb


def _check_pixels(path: Path, size: tuple[int, int], *, max_pixels: int) -> None:
    width, height = size
    if width <= 0 or height <= 0:
        raise ImageLoadError(f"{path.name}: image has no pixels ({width}x{height})")
    if width * height > max_pixels:
        raise ImageLoadError(f"{path.name}: {width}x{height} = {width * height:,} pixels, over "
                             f"the limit of {max_pixels:,} (a decompression bomb, or raise "
                             f"--max-pixels)")


def _load_pdf(path: Path, *, max_pixels: int) -> Image.Image:
    # pdfium is not thread-safe, not even across documents, and `judging run` measures claims in
    # threads: one PDF at a time, every pdfium object closed before the lock is released.
    with _PDFIUM_LOCK:
        return _draw_pdf_page_one(path, max_pixels=max_pixels)


def _draw_pdf_page_one(path: Path, *, max_pixels: int) -> Image.Image:
    import pypdfium2 as pdfium  # imported here: the CLI starts without it

    try:
        document = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        hint = (": an encrypted PDF cannot be read, submit it without its password"
                if "password" in str(exc).lower() else "")
        raise ImageLoadError(f"{path.name}: not a readable PDF ({exc}){hint}") from exc
    try:
        pages = len(document)
        if pages == 0:
            raise ImageLoadError(f"{path.name}: the PDF has no pages")
        if pages > 1:
            log.warning("%s: a PDF of %d pages; page 1 is read as the figure", path.name, pages)
        page = document[0]
        try:
            width, height = page.get_size()  # points, read before anything is drawn
            scale = fit_zoom(width, height, zoom=VECTOR_DPI / POINTS_PER_INCH,
                             max_pixels=max_pixels)
            # An opaque white fill: what a transparent page shows through is white, as on paper.
            bitmap = page.render(scale=scale, fill_color=(255, 255, 255, 255))
            try:
                # A copy: the bitmap's pixels are pdfium's, freed with it.
                image = bitmap.to_pil().convert("RGB").copy()
            finally:
                bitmap.close()
        finally:
            page.close()
    except pdfium.PdfiumError as exc:
        raise ImageLoadError(f"{path.name}: cannot draw page 1 of the PDF ({exc})") from exc
    finally:
        document.close()
    image.info["pages"] = pages
    return image


def _load_svg(path: Path, *, max_pixels: int) -> Image.Image:
    try:
        document = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImageLoadError(f"{path.name}: an SVG that is not UTF-8 text ({exc})") from exc
    except OSError as exc:
        raise ImageLoadError(f"{path.name}: cannot read ({exc.strerror or exc})") from exc
    element = find_svg(document)
    if element is None:
        raise ImageLoadError(f"{path.name}: no <svg> element (a truncated or corrupt SVG)")
    try:
        png = rasterize_svg(element, dpi=VECTOR_DPI, max_pixels=max_pixels, shrink=True)
    except ValueError as exc:  # what the SVG checks refused, or resvg could not draw
        raise ImageLoadError(f"{path.name}: {exc}") from exc
    with Image.open(io.BytesIO(png)) as image:
        return _to_rgb(image.convert("RGBA"))


def _load_eps(path: Path, *, max_pixels: int) -> Image.Image:
    if not EpsImagePlugin.has_ghostscript():
        raise ImageLoadError(f"{path.name}: EPS figures need ghostscript (gs), which is not "
                             f"installed (install it, or submit the figure as PDF, SVG or PNG)")
    try:
        image = Image.open(path, formats=["EPS"])
    except (UnidentifiedImageError, SyntaxError, OSError) as exc:
        raise ImageLoadError(f"{path.name}: not a readable EPS file ({exc})") from exc
    with image:
        _check_pixels(path, image.size, max_pixels=max_pixels)
        width, height = image.size  # points: Pillow reads the bounding box at 72 dpi
        # Pillow's EPS scale is a whole number: 2 (144 dpi) unless that passes the limit.
        scale = int(fit_zoom(width, height, zoom=VECTOR_DPI / POINTS_PER_INCH,
                             max_pixels=max_pixels))
        try:
            image.load(scale=max(1, scale))
        except (OSError, ValueError) as exc:
            raise ImageLoadError(f"{path.name}: ghostscript could not draw the EPS ({exc})"
                                 ) from exc
        rgb = _to_rgb(image)
        return rgb.copy() if rgb is image else rgb


def _to_rgb(image: Image.Image) -> Image.Image:
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        # High bit depth grayscale: stretch the actual range to 8 bits (Pillow's convert("L")
        # clips 16-bit values instead of scaling them).
        array = np.asarray(image, dtype=np.float64)
        low, high = float(array.min()), float(array.max())
        scaled = np.zeros_like(array) if high <= low else (array - low) / (high - low) * 255.0
        return Image.fromarray(scaled.round().astype(np.uint8), mode="L").convert("RGB")
    if mode == "P" or (mode in ("L", "RGB") and "transparency" in image.info):
        # A palette's transparent entries, or the one colour a tRNS chunk keys out of a
        # grayscale or RGB PNG, show the white background as a viewer shows it.
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif mode in ("LA", "PA", "La"):
        image = image.convert("RGBA")
    elif mode == "CMYK":
        image = image.convert("RGB")
    if image.mode == "RGBA" or image.mode == "RGBa":
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image, mask=image.getchannel("A"))
        return background
    return image.convert("RGB") if image.mode != "RGB" else image
