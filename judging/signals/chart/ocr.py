"""OCR for chart reading: one persistent tesseract engine per thread, text crops read in one call.

Tick labels and legend entries are located geometrically by the chart reader (it knows where each
label is); their crops are stacked one under the other into a single image that tesseract reads in
one pass (page segmentation "single block"), and each recognised line is mapped back to its crop
by position. One call per chart and text kind instead of one per label or a process per call.
"""

from __future__ import annotations

import glob
import math
import os
import re
import threading
from dataclasses import dataclass

import numpy as np
from PIL import Image

MAX_EXPONENT = 300
"""A misread exponent ("10^1000"): no float holds a power of ten beyond 10^308."""
TEN = 10.0
"""The base of the powers of ten tick labels write."""
PERCENT = 100.0
"""A value in percent is a hundredth."""
WHITE = 255
"""The sheet's background (8-bit grey)."""
BORDER = 6
"""White pixels left around a piece when Tesseract is pointed at it."""
ONE_GLYPH = 1.2
"""A piece narrower than 1.2 times its height is one character."""

#: Characters a tick label can be made of (matplotlib writes the minus as U+2212).
TICK_WHITELIST = "0123456789.,-+eE%kKMGTmµu"
#: Height (px) the cap height of every crop is scaled to before recognition.
TARGET_HEIGHT = 30
_GAP = 18

_local = threading.local()


class OcrUnavailable(RuntimeError):
    """tesserocr or tesseract's English model is missing."""


def tessdata_path() -> str | None:
    """Tesseract's model folder: $TESSDATA_PREFIX, else the Debian/Ubuntu and usual locations."""
    candidates = []
    env = os.environ.get("TESSDATA_PREFIX")
    if env:
        candidates += [env, os.path.join(env, "tessdata")]
    candidates += sorted(glob.glob("/usr/share/tesseract-ocr/*/tessdata"), reverse=True)
    candidates += ["/usr/share/tessdata", "/usr/local/share/tessdata",
                   "/opt/homebrew/share/tessdata"]
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "eng.traineddata")):
            return folder.rstrip("/") + "/"
    return None


def engine():
    """This thread's tesseract engine (created on first use and kept)."""
    api = getattr(_local, "api", None)
    if api is None:
        try:
            import tesserocr
        except ImportError as exc:  # pragma: no cover - tesserocr is a dependency here
            raise OcrUnavailable(f"tesserocr is not installed ({exc})") from exc
        path = tessdata_path()
        if path is None:
            raise OcrUnavailable("tesseract's English model (eng.traineddata) was not found; "
                                 "install tesseract-ocr-eng or set TESSDATA_PREFIX")
        try:
            api = tesserocr.PyTessBaseAPI(
                path=path, lang="eng", oem=tesserocr.OEM.LSTM_ONLY,
                psm=tesserocr.PSM.SINGLE_BLOCK,
                variables={"load_system_dawg": "0", "load_freq_dawg": "0",
                           "debug_file": "/dev/null"})
        except RuntimeError as exc:
            raise OcrUnavailable(f"tesseract could not start: {exc}") from exc
        _local.api = api
    return api


@dataclass
class Crop:
    """One piece of text to read: a grayscale array (dark text on light) and its cap height."""
    pixels: np.ndarray
    height: float


def read_crops(crops: list[Crop], *, whitelist: str | None, ocr=None) -> list[tuple[str, float]]:
    """Read each crop's text in one tesseract call: [(text, confidence 0..100)] in crop order."""
    if not crops:
        return []
    api = ocr if ocr is not None else engine()
    pieces = []
    for crop in crops:
        arr = crop.pixels
        scale = TARGET_HEIGHT / max(crop.height, 1.0)
        h, w = arr.shape
        size = (max(1, round(w * scale)), max(1, round(h * scale)))
        image = Image.fromarray(arr)
        if size != (w, h):
            image = image.resize(size, Image.Resampling.BICUBIC if scale > 1
                                 else Image.Resampling.BOX)
        pieces.append(image)
    width = max(p.width for p in pieces) + 2 * _GAP
    height = sum(p.height for p in pieces) + _GAP * (len(pieces) + 1)
    sheet = Image.new("L", (width, height), WHITE)
    spans = []
    y = _GAP
    for piece in pieces:
        sheet.paste(piece, (_GAP, y))
        spans.append((y, y + piece.height))
        y += piece.height + _GAP
    import tesserocr

    api.SetPageSegMode(tesserocr.PSM.SINGLE_BLOCK)
    api.SetVariable("tessedit_char_whitelist", whitelist or "")
    api.SetImage(sheet)
    api.Recognize()
    words: list[list[tuple[float, str, float]]] = [[] for _ in crops]
    iterator = api.GetIterator()
    level = tesserocr.RIL.WORD
    if iterator is not None:
        for item in tesserocr.iterate_level(iterator, level):
            try:
                text = item.GetUTF8Text(level)
            except RuntimeError:  # tesserocr raises "No text returned" for an empty word
                continue
            box = item.BoundingBox(level)
            if not text or box is None:
                continue
            centre = (box[1] + box[3]) / 2
            for index, (top, bottom) in enumerate(spans):
                if top - _GAP / 2 <= centre <= bottom + _GAP / 2:
                    words[index].append((box[0], text.strip(), item.Confidence(level)))
                    break
    out = []
    for found in words:
        found.sort()
        text = " ".join(w for _, w, _ in found if w)
        conf = min((c for _, _, c in found), default=0.0)
        out.append((text, conf))
    # Layout analysis can drop a lone small glyph (a "0"); read those crops one by one.
    for index, (text, _) in enumerate(out):
        if text:
            continue
        top, bottom = spans[index]
        piece = pieces[index]
        api.SetPageSegMode(tesserocr.PSM.SINGLE_CHAR if piece.width < ONE_GLYPH * piece.height
                           else tesserocr.PSM.SINGLE_LINE)
        api.SetRectangle(max(0, _GAP - BORDER), max(0, top - BORDER), piece.width + 2 * BORDER,
                     bottom - top + 2 * BORDER)
        try:
            text = (api.GetUTF8Text() or "").strip()
        except RuntimeError:  # "No text returned"
            text = ""

        out[index] = (text, float(api.MeanTextConf()) if text else 0.0)
    api.Clear()
    return out


_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "m": 1e-3, "µ": 1e-6, "u": 1e-6}
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def parse_number(text: str) -> float | None:
    """A tick label's value: '0.5', '−1', '1e-3', '10^3', '10³', '10^0.5', '2.5k', '1M', '50%',
    '1,000'."""
    # a superscript exponent is a power of ten ("10³"), not more digits ("103")
    s = re.sub(r"10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)$", r"10^\1", text.strip()).translate(_SUPERSCRIPTS)
    s = (s.replace("−", "-").replace("–", "-").replace("—", "-").replace("×", "x")
         .replace(" ", "").replace("$", "").replace("{", "").replace("}", ""))
    if not s:
        return None
    if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")
    s = s.replace(",", ".")
    percent = s.endswith("%")
    if percent:
        s = s[:-1]
    factor = 1.0
    if s and s[-1] in _SUFFIX and len(s) > 1:
        factor = _SUFFIX[s[-1]]
        s = s[:-1]
    # pgfplots labels a log axis of less than a few decades at half decades too: "10^0.5".
    power = re.fullmatch(r"([+-]?)(?:(\d+(?:\.\d+)?)x?)?10\^([+-]?\d{1,4}(?:\.\d+)?)", s)
    if power:
        base = float(power.group(2)) if power.group(2) else 1.0
        exponent = float(power.group(3))
        if abs(exponent) > MAX_EXPONENT:
            return None
        value = (-1.0 if power.group(1) == "-" else 1.0) * base * TEN ** exponent
    elif _NUMBER.match(s):
        value = float(s)
    else:
        return None
    value *= factor
    if percent:
        value /= PERCENT
    return value if math.isfinite(value) else None
