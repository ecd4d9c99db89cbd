"""Reading untrusted image files into plain RGB, refusing what cannot be read safely."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from judging.errors import ImageLoadError

#: Far above any real chart (a 300-dpi A4 page is 8.7 MP), far below decompression-bomb territory.
DEFAULT_MAX_PIXELS = 40_000_000
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
SUPPORTED_FORMATS = frozenset({"PNG", "JPEG", "WEBP"})


def load_image(path: Path | str, *, max_pixels: int = DEFAULT_MAX_PIXELS,
               max_bytes: int = DEFAULT_MAX_BYTES) -> Image.Image:
    """Open an image file as 8-bit RGB on a white background.

    The header is read first and oversized images are refused before any pixel is decoded.
    16-bit, CMYK, palette and transparent images are converted; animated images are refused
    (which frame is "the figure" would be a guess). Every failure is an `ImageLoadError` whose
    message says what is wrong with the file.
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
        with warnings.catch_warnings():
            # Our own pixel limit below is the one that counts; Pillow's warning would be noise.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(path)
    except Image.DecompressionBombError as exc:
        raise ImageLoadError(f"{path.name}: refused as a decompression bomb ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise ImageLoadError(f"{path.name}: not a readable image (corrupt, or not PNG/JPEG/WebP)"
                             ) from exc
    except OSError as exc:
        raise ImageLoadError(f"{path.name}: cannot open image ({exc})") from exc
    with image:
        if image.format not in SUPPORTED_FORMATS:
            raise ImageLoadError(f"{path.name}: format {image.format} is not supported "
                                 f"(use PNG, JPEG or WebP)")
        width, height = image.size
        if width <= 0 or height <= 0:
            raise ImageLoadError(f"{path.name}: image has no pixels ({width}x{height})")
        if width * height > max_pixels:
            raise ImageLoadError(f"{path.name}: {width}x{height} = {width * height:,} pixels, over "
                                 f"the limit of {max_pixels:,} (a decompression bomb, or raise "
                                 f"--max-pixels)")
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


def _to_rgb(image: Image.Image) -> Image.Image:
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        # High bit depth grayscale: stretch the actual range to 8 bits (Pillow's convert("L")
        # clips 16-bit values instead of scaling them).
        array = np.asarray(image, dtype=np.float64)
        low, high = float(array.min()), float(array.max())
        scaled = np.zeros_like(array) if high <= low else (array - low) / (high - low) * 255.0
        return Image.fromarray(scaled.round().astype(np.uint8), mode="L").convert("RGB")
    if mode == "P":
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
