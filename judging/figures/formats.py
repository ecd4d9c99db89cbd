"""The figure file formats every stage accepts, and the safe rasterization of SVG they share.

A figure is a PNG, JPEG or WebP image, a PDF (its first page), an SVG, or an EPS file (EPS only
where ghostscript is installed). Files are told apart by their content, never by their name:
a JPEG named `.png` is read as the JPEG it is (`vector_format` sniffs the vector formats; Pillow
identifies the raster ones). `judging.signals.load_image` is the one loader of figure files.

SVG is rasterized in two stages, a logbook's inline figures (intake) and a submission's figure
files (signals), which may not import each other: the checks that keep the rasterizer from
reading or fetching anything live here, below both, so that the two cannot drift apart.
"""

from __future__ import annotations

import base64
import io
import math
import re
import tempfile
import warnings
import xml.etree.ElementTree as ET

from PIL import Image, UnidentifiedImageError

#: The formats a figure may have, as messages name them (content decides how a file is read).
FIGURE_FORMATS = "PNG, JPEG, WebP, PDF (page 1), SVG or EPS (with ghostscript)"

#: Far above any real chart (a 300-dpi A4 page is 8.7 MP), far below decompression-bomb territory.
DEFAULT_MAX_PIXELS = 40_000_000
#: The side (pixels) figures are scaled to before they are compared (`--image-size`): here
#: beside the pixel limit, so that the command line shows both defaults without importing the
#: signals (scikit-image).
DEFAULT_SIZE = 512
#: The largest SVG rasterized (its markup).
MAX_SVG_CHARS = 5 * 1024 * 1024
#: The resolution vector figures are drawn at, unless that would exceed the pixel limit: about
#: the 100-150 dpi of a chart saved as PNG, so a PDF and a PNG of one chart read alike.
VECTOR_DPI = 150.0
#: CSS pixels per inch: an SVG's own unit (its `width="100"` is 100 px at 96 dpi).
SVG_DPI = 96.0

_SVG_ELEMENT = re.compile(r"<svg\b.*?</svg\s*>", re.IGNORECASE | re.DOTALL)
_EXTERNAL_REF = re.compile(r"(?:xlink:)?href\s*=\s*[\"'](?!#|data:)|url\(\s*[\"']?(?!#|data:)|"
                           r"<script\b|<foreignObject\b|@import|<!DOCTYPE|<!ENTITY|<\?xml-stylesheet",
                           re.IGNORECASE)
#: An SVG's own raster images may only be data URIs of these types (their header is checked).
_SVG_RASTER = re.compile(r"data:image/(?:png|jpe?g|webp|gif);base64,", re.IGNORECASE)
_SVG_UNITS = {"": 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54,
              "mm": 96 / 25.4, "em": 16.0, "ex": 8.0}
#: How much of a file `vector_format` needs: an XML prolog, a DOCTYPE and a comment or two may
#: come before `<svg`; PDF allows up to 1,024 bytes of junk before `%PDF-`.
SNIFF_BYTES = 4096
_DOS_EPS = b"\xc5\xd0\xd3\xc6"  # the binary header of a "DOS EPS" file (PostScript + preview)


def vector_format(head: bytes) -> str | None:
    """"PDF", "SVG" or "EPS" when the first bytes of a file are one of those, else None (a
    raster image, or nothing we read: Pillow decides). PostScript that is not marked EPSF is
    taken as EPS too, as Pillow and ghostscript take it."""
    if b"%PDF-" in head[:1024]:
        return "PDF"
    if head.startswith((b"%!PS", _DOS_EPS)):
        return "EPS"
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text[:4].lower() == b"<svg":
        return "SVG"
    if text.startswith((b"<?xml", b"<!--", b"<!DOCTYPE")) and re.search(rb"<svg[\s>]", text,
                                                                         re.IGNORECASE):
        return "SVG"
    return None


def find_svg(document: str) -> str | None:
    """The first `<svg>...</svg>` element of a document, without what comes before it: an XML
    prolog or DOCTYPE (matplotlib writes both) is dropped, so a DTD is never read and an entity
    it defines stays undefined (refused by `svg_size`)."""
    match = _SVG_ELEMENT.search(document)
    return match.group(0) if match else None


def open_checked(data: bytes, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """A raster image opened from its header, refused (ValueError) when over `max_pixels`
    before any pixel is decoded (Pillow reads only the header in `open`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise ValueError(f"image over the limit of {max_pixels:,} pixels (a decompression "
                         f"bomb?): refused from its header, not decoded ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise ValueError("not a readable image (corrupt, or not PNG/JPEG/WebP/GIF)") from exc
    width, height = image.size
    if width <= 0 or height <= 0 or width * height > max_pixels:
        image.close()
        raise ValueError(f"image is {width}x{height} pixels, over the limit of {max_pixels:,} "
                         f"(a decompression bomb?): refused from its header, not decoded")
    return image


def _svg_length(value: str | None) -> float | None:
    if value is None:
        return None
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([a-z]*)\s*", value, re.IGNORECASE)
    if not m or m.group(2).lower() not in _SVG_UNITS:
        return None
    return float(m.group(1)) * _SVG_UNITS[m.group(2).lower()]


def svg_size(svg: str, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> tuple[float, float]:
    """Refuse (ValueError) an SVG that could make the rasterizer read or fetch anything (a
    file, a URL, an entity, a script, a nested SVG); return its size in CSS pixels.

    resvg itself reads `<image href>` paths from the disk (absolute ones, and relative ones
    against the working directory), so nothing of the kind may reach it: every `href`/`src`
    must be a same-document `#id` or a raster data URI whose header is within `max_pixels`.
    An SVG that names an external file or URL is refused, not drawn without it: a figure with
    a part missing would be judged as if it were whole."""
    if len(svg) > MAX_SVG_CHARS:
        raise ValueError(f"the SVG is {len(svg):,} characters, over the limit of "
                         f"{MAX_SVG_CHARS:,}")
    if _EXTERNAL_REF.search(svg):
        raise ValueError("the SVG has external references, entities or scripts: not rendered")
    try:
        root = ET.fromstring(svg)
    except ET.ParseError as exc:
        raise ValueError(f"the SVG is not well-formed XML ({exc})") from exc
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1].lower() if isinstance(element.tag, str) else ""
        if tag in ("script", "foreignobject", "iframe", "object", "embed"):
            raise ValueError(f"the SVG has a <{tag}> element: not rendered")
        for name, value in element.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on"):
                raise ValueError(f"the SVG has an event handler ({local}): not rendered")
            if local in ("href", "src"):
                value = value.strip()
                if value.startswith("#"):
                    continue
                if not _SVG_RASTER.match(value):
                    raise ValueError(f"the SVG references {value[:80]!r}: only same-document "
                                     f"#ids and raster data URIs are rendered")
                open_checked(base64.b64decode(re.sub(r"\s+", "", value.split(",", 1)[1])),
                             max_pixels=max_pixels).close()
            if "url(" in value.lower() and re.search(r"url\(\s*['\"]?(?!#)", value, re.I):
                raise ValueError("the SVG has a url() reference: not rendered")
    width, height = _svg_length(root.get("width")), _svg_length(root.get("height"))
    box = [float(v) for v in re.findall(r"-?[0-9]*\.?[0-9]+(?:e[+-]?\d+)?",
                                        root.get("viewBox") or "")]
    if (width is None or height is None) and len(box) == 4:
        width = width if width is not None else box[2]
        height = height if height is not None else box[3]
    width = 100.0 if width is None else width
    height = 100.0 if height is None else height
    if width <= 0 or height <= 0:
        raise ValueError(f"the SVG is {width:g}x{height:g} pixels: nothing to render")
    return width, height


def check_svg(svg: str, *, max_pixels: int = DEFAULT_MAX_PIXELS) -> tuple[int, int]:
    """`svg_size`, refusing an SVG whose own size is over `max_pixels`; its size in pixels."""
    width, height = svg_size(svg, max_pixels=max_pixels)
    if width * height > max_pixels:
        raise ValueError(f"the SVG is {width:g}x{height:g} pixels, over the limit of "
                         f"{max_pixels:,}: not rendered")
    return max(1, round(width)), max(1, round(height))


def fit_zoom(width: float, height: float, *, zoom: float, max_pixels: int) -> float:
    """`zoom`, or the largest smaller one at which a `width` x `height` drawing stays within
    `max_pixels` (a vector figure is drawn smaller rather than refused)."""
    if width * height * zoom * zoom <= max_pixels:
        return zoom
    # less a hair, for the rounding of each side to whole pixels
    return math.sqrt(max_pixels / (width * height)) * 0.999


def rasterize_svg(svg: str, *, dpi: float = SVG_DPI, max_pixels: int = DEFAULT_MAX_PIXELS,
                  shrink: bool = False) -> bytes:
    """The SVG as PNG on white, through resvg, after the checks of `svg_size`.

    Drawn at `dpi` (96, the SVG's own size, by default). An SVG that would be over `max_pixels`
    at that resolution is refused, or with `shrink` drawn smaller to fit (a vector figure loses
    nothing to a lower resolution that a chart reader needs; its pixel count is bounded before
    anything is allocated). resvg's resource folder is an empty temporary one, so even a
    relative path it were given would find nothing."""
    width, height = svg_size(svg, max_pixels=max_pixels)
    zoom = fit_zoom(width, height, zoom=dpi / SVG_DPI, max_pixels=max_pixels)
    if zoom < dpi / SVG_DPI and not shrink:
        raise ValueError(f"the SVG is {width:g}x{height:g} pixels, over the limit of "
                         f"{max_pixels:,}: not rendered")
    size = max(1, round(width * zoom)), max(1, round(height * zoom))
    if not re.match(r"<svg\b[^>]*\sxmlns\s*=", svg):  # inline HTML SVG omits its namespace
        svg = re.sub(r"^<svg\b", '<svg xmlns="http://www.w3.org/2000/svg"', svg, count=1)
    try:
        import resvg_py
    except ImportError as exc:
        raise ValueError("no SVG rasterizer installed (pip install resvg-py)") from exc
    with tempfile.TemporaryDirectory(prefix="judging-svg-") as empty:
        # dpi 96: resvg-py's default of 0 turns pt/in/cm sizes into zero ("invalid size"); the
        # size in pixels is ours (the limit above holds for what is drawn)
        png = resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff", resources_dir=empty,
                                    width=size[0], height=size[1], dpi=SVG_DPI)
    return bytes(png)
