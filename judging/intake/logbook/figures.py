"""A logbook page's figures and run cells, written under an output folder of the run directory
(never into the source folder).

- data-URI images (PNG, JPEG, WEBP) are decoded and re-encoded as PNG; inline SVG is rasterized
  with resvg (no external references: an SVG naming any is refused);
- Plotly or other HTML figures are drawn from their `raw` fence (CSV or JSON) by our own
  matplotlib code: the participant's JavaScript is never run;
- a figure cell holding only data (a `raw` fence, no image) gives data, not an image;
- a `raw` fence that holds the figure's series (figure data, `judging.figures.data`, or the
  columns `parse_raw` finds: Plotly traces, records, CSV) is also written as a figure-data JSON
  file, which the claim names as its `reproduced_data`: the chart signals compare it as data;
- an image hot-linked from elsewhere is recorded as "not fetched" with its URL;
- run cells become one log file each: command, exit code, duration, output;
- the scripts a run cell names (script arguments of its command, e.g. `python train.py --x`)
  are written beside the logs: the body trackio recorded in the cell (a fence titled with the
  script's name), else the file itself when it is inside the logbook's workspace folder.
"""

from __future__ import annotations

import base64
import binascii
import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from judging.atomic import write_bytes_atomic, write_text_atomic
from judging.errors import FigureDataError
from judging.figures.data import FigureData, parse_figure_data
from judging.figures.formats import (
    DEFAULT_MAX_PIXELS,
    find_svg,
    open_checked,
)
from judging.figures.formats import rasterize_svg as _rasterize_svg
from judging.intake.extract import fenced
from judging.intake.logbook.reader import Cell, Page

#: Decoded images larger than this are refused from their header, before their pixels are read
#: (the figure signals' limit).
MAX_PIXELS = DEFAULT_MAX_PIXELS
MAX_DATA_URI_BYTES = 30 * 1024 * 1024

DECODED, DATA_ONLY, NOT_FETCHED, NOT_DRAWN, ERROR = (
    "decoded", "data-only", "not fetched", "not drawn", "error")

#: A fence's opening line: its language; and that of a script trackio recorded (`title=`).
_FENCE_LINE = re.compile(r"(?:`{3,}|~{3,})[ \t]*(?P<lang>[\w.+-]*)")
_SCRIPT_LINE = re.compile(r"(?:`{3,}|~{3,})[ \t]*[\w.+-]*[ \t]+title=(?P<name>[^\s`]+)")
_DATA_URI = re.compile(r"data:image/(?P<type>png|jpe?g|webp|gif|svg\+xml)(?P<b64>;base64)?,"
                       r"(?P<data>[A-Za-z0-9+/=%\s._~-]+)", re.IGNORECASE)
#: HTML that draws a chart with script (Plotly, Vega, a canvas): drawn from its raw data instead.
_CHART_HTML = re.compile(r"plotly|vega|<canvas\b|<script\b|chart", re.IGNORECASE)
_IMG_SRC = re.compile(r"<img\b[^>]*?\bsrc\s*=\s*[\"'](?P<src>[^\"']+)[\"']", re.IGNORECASE)
#: An image's alt text stops at the next `![` and its source at a `]`: a line of `![` read each
#: alt text to the line's end (quadratic).
_MD_IMAGE = re.compile(r"!\[(?P<alt>(?:[^\]!]|!(?!\[))*)\]\((?P<src>[^)\s\]]+)"
                       r"(?:\s+\"[^\"]*\")?\)")


@dataclass
class Figure:
    page: str
    index: int
    """Position among the page's figures (1-based)."""
    status: str
    """decoded | data-only | not fetched | not drawn | error"""
    how: str
    """png | jpeg | webp | svg | raw-data plot | markdown image | ..."""
    cell_id: str | None = None
    title: str = ""
    path: str | None = None
    """The decoded image, relative to the output folder."""
    data_path: str | None = None
    """The figure's plotted data (its raw fence), relative to the output folder."""
    figure_data_path: str | None = None
    """That data as a figure-data JSON file (`judging.figures.data`), relative to the output
    folder, when the fence holds series."""
    url: str | None = None
    detail: str = ""
    poster: bool = False

    @property
    def accounted(self) -> bool:
        return self.status in (DECODED, DATA_ONLY) or (self.status == NOT_FETCHED
                                                       and bool(self.url))


@dataclass
class RunLog:
    page: str
    index: int
    path: str
    """Relative to the output folder."""
    command: list[str]
    exit_code: int | None
    duration_s: float | None
    output: str
    scripts: list[str] = field(default_factory=list)
    """The scripts the run names, written under the output folder (relative to it)."""
    missing_scripts: list[str] = field(default_factory=list)
    """Scripts the command names whose body neither the cell nor the workspace holds."""


#: File endings of the scripts a run cell's command names.
SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".r", ".jl", ".js", ".ts", ".pl", ".rb", ".m", ".lua")
#: The largest script copied from the workspace.
MAX_SCRIPT_BYTES = 1024 * 1024


def script_arguments(argv: list[str]) -> list[str]:
    """The arguments of a command that name scripts (`python train.py --x` -> `train.py`)."""
    return [a for a in argv[1:] if not a.startswith("-") and "=" not in a
            and a.lower().endswith(SCRIPT_SUFFIXES)] + \
        ([argv[0]] if argv and argv[0].lower().endswith(SCRIPT_SUFFIXES) else [])


def _safe_name(name: str) -> str:
    parts = [re.sub(r"[^A-Za-z0-9._-]+", "_", p) for p in name.replace("\\", "/").split("/")
             if p not in ("", ".", "..")]
    return "/".join(p for p in parts if p.strip("._")) or "script"


def _blocks(body: str, opening: re.Pattern[str], group: str) -> list[tuple[str, str]]:
    """(the opening line's `group`, body) of each closed fence of a cell whose opening line
    matches `opening`, by `extract.fenced`'s one pass (a pattern looking from each unclosed
    fence to the cell's end took minutes on a cell of 40,000 of them)."""
    out = []
    for start, body_start, body_end, _ in fenced(body):
        line = opening.match(body, start, body_start)
        if line is not None:
            out.append((line.group(group), body[body_start:body_end]))
    return out


def fences(body: str) -> list[tuple[str, str]]:
    """(language, body) of each closed fence of a cell, in order."""
    return [(lang.lower(), text) for lang, text in _blocks(body, _FENCE_LINE, "lang")]


def script_bodies(body: str) -> dict[str, str]:
    """The scripts trackio recorded in a cell: fences titled with the script's name."""
    return dict(_blocks(body, _SCRIPT_LINE, "name"))


def _is_poster(cell: Cell) -> bool:
    return bool(cell.meta.get("poster")) or "poster" in cell.title.lower()


def _png_from_bytes(data: bytes) -> bytes:
    import warnings

    from PIL import Image

    with open_checked(data, max_pixels=MAX_PIXELS) as image:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                image.load()
        except (OSError, SyntaxError, EOFError) as exc:
            raise ValueError(f"corrupt or truncated {image.format} data ({exc})") from exc
        converted = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    out = io.BytesIO()
    converted.save(out, format="PNG")
    return out.getvalue()


def rasterize_svg(svg: str) -> bytes:
    """The SVG as PNG at its own size (96 dpi), refused when over MAX_PIXELS, re-encoded as
    the other decoded figures are (`judging.figures.formats.rasterize_svg` checks it first)."""
    return _png_from_bytes(_rasterize_svg(svg, max_pixels=MAX_PIXELS))


def decode_data_uri(uri: str) -> tuple[bytes, str]:
    match = _DATA_URI.match(uri.strip())
    if not match:
        raise ValueError("not an image data URI (png, jpeg, webp, svg)")
    kind = match.group("type").lower()
    data = re.sub(r"\s+", "", match.group("data"))
    if len(data) > MAX_DATA_URI_BYTES:
        raise ValueError(f"data URI of {len(data):,} characters, over the limit")
    if match.group("b64"):
        try:
            raw = base64.b64decode(data, validate=False)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"bad base64: {exc}") from exc
    else:
        from urllib.parse import unquote_to_bytes
        raw = unquote_to_bytes(data)
    if kind == "svg+xml":
        document = raw.decode("utf-8", "replace")
        # the <svg> element alone: an XML prolog or DOCTYPE (matplotlib writes one) is dropped,
        # so a DTD is never read and an entity it defines stays undefined (refused)
        return rasterize_svg(find_svg(document) or document), "svg"
    return _png_from_bytes(raw), "jpeg" if kind == "jpg" else kind


def parse_raw(text: str) -> dict[str, list[float]] | None:
    """The plotted data of a raw fence as columns of numbers (CSV or JSON), else None."""
    text = text.strip()
    columns: dict[str, list[float]] = {}
    if text.startswith(("{", "[")):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if isinstance(data, dict) and isinstance(data.get("data"), list):
            data = data["data"]  # a Plotly figure: traces with x and y
        if isinstance(data, list) and data and all(isinstance(d, dict) for d in data):
            if all("y" in d for d in data):
                for i, trace in enumerate(data):
                    ys = _numbers(trace.get("y"))
                    if ys:
                        name = str(trace.get("name") or f"series {i + 1}")
                        columns[f"{name}.x"] = _numbers(trace.get("x")) or \
                            [float(k) for k in range(len(ys))]
                        columns[name] = ys
                return columns or None
            keys = [k for k in data[0] if _numbers([d.get(k) for d in data])]
            return {k: _numbers([d.get(k) for d in data]) for k in keys} or None
        if isinstance(data, dict):
            out = {str(k): _numbers(v) for k, v in data.items() if _numbers(v)}
            return out or None
        return None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return None
    if len(rows) < 2:
        return None
    header = rows[0]
    for j, name in enumerate(header):
        values = _numbers([row[j] if j < len(row) else None for row in rows[1:]])
        if values and len(values) == len(rows) - 1:
            columns[name.strip() or f"column {j + 1}"] = values
    return columns or None


def figure_data_of_raw(text: str) -> FigureData | None:
    """The series of a raw fence as figure data: the figure-data format itself (JSON read
    leniently, or CSV), else the columns `parse_raw` finds (a Plotly figure's traces, records, a
    dict of columns), the first column as x unless traces carry their own; None otherwise."""
    try:
        return parse_figure_data(text, name="raw fence", lenient=True).data
    except FigureDataError:
        pass
    columns = parse_raw(text)
    if not columns:
        return None
    names = list(columns)
    if any(n.endswith(".x") for n in names):
        series = [{"name": n, "x": columns.get(f"{n}.x") or None, "y": columns[n]}
                  for n in names if not n.endswith(".x")]
        panel: dict[str, object] = {"series": series}
    elif len(names) > 1:
        x = columns[names[0]]
        panel = {"xlabel": names[0][:500], "series": [
            {"name": n, "x": x, "y": columns[n]} for n in names[1:]
            if len(columns[n]) == len(x)]}
    else:
        panel = {"series": [{"name": names[0], "y": columns[names[0]]}]}
    try:
        return FigureData.model_validate({"panels": [panel]})
    except ValidationError:
        return None


def _numbers(values: object) -> list[float]:
    if not isinstance(values, list):
        return []
    out = []
    for value in values:
        try:
            out.append(float(value))
        except (TypeError, ValueError):
            return []
    return out


def draw_raw(columns: dict[str, list[float]], title: str) -> bytes:
    """Our own line chart of a figure's raw data: the first column is x, the others are y."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(columns)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    try:
        if any(n.endswith(".x") for n in names):
            for name in names:
                if not name.endswith(".x"):
                    ax.plot(columns.get(f"{name}.x", range(len(columns[name]))), columns[name],
                            label=name)
        else:
            x = columns[names[0]] if len(names) > 1 else list(range(len(columns[names[0]])))
            for name in names[1:] or names:
                ax.plot(x, columns[name], label=name)
            if len(names) > 1:
                ax.set_xlabel(names[0])
        ax.set_title(title[:80])
        ax.legend(fontsize=8)
        out = io.BytesIO()
        fig.savefig(out, format="png")
    finally:
        plt.close(fig)
    return out.getvalue()


class PageMaterializer:
    """Writes one page's figures and run logs under `out_dir` and says what each became."""

    def __init__(self, out_dir: Path, root: Path) -> None:
        self.out_dir = Path(out_dir)
        self.root = Path(root)

    def _write(self, relative: str, data: bytes | str) -> str:
        target = self.out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            write_bytes_atomic(target, data)
        else:
            write_text_atomic(target, data)
        return relative

    def figures(self, page: Page) -> list[Figure]:
        figures: list[Figure] = []
        for cell in page.cells:
            if cell.type == "figure":
                figures += self._figure_cell(page, cell, len(figures))
            elif cell.type in ("markdown", "preamble"):
                figures += self._inline_images(page, cell.body, len(figures), cell)
        return figures

    def _new(self, page: Page, n: int, cell: Cell | None, **kw: object) -> Figure:
        return Figure(page=page.slug, index=n + 1,
                      cell_id=(cell.meta.get("id") if cell is not None else None),
                      title=cell.title if cell is not None else "",
                      poster=cell is not None and _is_poster(cell), **kw)  # type: ignore[arg-type]

    def _save_image(self, fig: Figure, png: bytes) -> None:
        fig.path = self._write(f"figures/{fig.page}/{fig.index}.png", png)

    def _figure_cell(self, page: Page, cell: Cell, n: int) -> list[Figure]:
        parts = fences(cell.body)
        html = "\n".join(body for lang, body in parts if lang in ("html", "svg", ""))
        raw = next((body for lang, body in parts if lang in ("raw", "csv", "json")), None)
        if not parts:
            html = cell.body  # an unfenced body (a bare <iframe>, an <img>)
        fig = self._new(page, n, cell, status=NOT_DRAWN, how="html")
        if raw is not None:
            fig.data_path = self._write(f"figures/{page.slug}/{fig.index}.data.txt", raw)
            data = figure_data_of_raw(raw)
            if data is not None:
                fig.figure_data_path = self._write(
                    f"figures/{page.slug}/{fig.index}.data.json",
                    data.model_dump_json(exclude_none=True, indent=1))
        sources = [m.group("src") for m in _IMG_SRC.finditer(html)]
        try:
            data_uris = [s for s in sources if s.startswith("data:")]
            svg = find_svg(html)
            if data_uris:
                png, fig.how = decode_data_uri(data_uris[0])
                self._save_image(fig, png)
                fig.status = DECODED
            elif svg:
                fig.how = "svg"
                self._save_image(fig, rasterize_svg(svg))
                fig.status = DECODED
            elif sources and re.match(r"https?://", sources[0]):
                fig.status, fig.how, fig.url = NOT_FETCHED, "hot-linked image", sources[0]
                fig.detail = "hot-linked: not fetched (a judging run reaches nothing outside)"
            elif raw is not None and _CHART_HTML.search(html) and (columns := parse_raw(raw)):
                fig.how = "raw-data plot"
                self._save_image(fig, draw_raw(columns, cell.title or page.title))
                fig.status = DECODED
                fig.detail = ("drawn by judging from the cell's raw data (the participant's "
                              "HTML/JavaScript is never run)")
            elif raw is not None:
                fig.status, fig.how = DATA_ONLY, "raw data"
                fig.detail = "the figure cell holds data, not an image"
            else:
                fig.detail = "an HTML figure without image or raw data: not drawn (its " \
                             "JavaScript is never run)"
                if not html.strip():
                    fig.detail = "empty figure cell"
        except Exception as exc:  # a bad image is an error on this figure, the rest go on
            fig.status, fig.detail = ERROR, f"{type(exc).__name__}: {exc}"
        if fig.status == DECODED and raw is not None and fig.how != "raw-data plot":
            fig.detail = "image decoded; its raw data kept beside it"
        return [fig]

    def _inline_images(self, page: Page, body: str, n: int, cell: Cell) -> list[Figure]:
        found: list[Figure] = []
        sources = [m.group("src") for m in _MD_IMAGE.finditer(body)]
        sources += [m.group("src") for m in _IMG_SRC.finditer(body)]
        for src in sources:
            fig = Figure(page=page.slug, index=n + len(found) + 1, status=ERROR,
                         how="markdown image", cell_id=cell.meta.get("id"), title=cell.title)
            try:
                if src.startswith("data:"):
                    png, fig.how = decode_data_uri(src)
                    self._save_image(fig, png)
                    fig.status = DECODED
                elif re.match(r"[a-z][a-z0-9+.-]*://", src, re.IGNORECASE):
                    fig.status, fig.url = NOT_FETCHED, src
                    fig.detail = "hot-linked: not fetched (a judging run reaches nothing outside)"
                elif (target := self._inside(page, src)) is None:
                    fig.detail = (f"image path {src[:80]!r} leaves the logbook (.., an absolute "
                                  f"path or a link out): not read")
                elif not target.is_file():
                    fig.detail = f"image {src[:80]!r} is not in the logbook"
                elif target.stat().st_size > MAX_DATA_URI_BYTES:
                    fig.detail = f"image {src[:80]!r} is over {MAX_DATA_URI_BYTES:,} bytes"
                else:
                    self._save_image(fig, _png_from_bytes(target.read_bytes()))
                    fig.status, fig.how = DECODED, "local image"
            except ValueError as exc:
                fig.detail = f"{src[:80]!r}: {exc}"
            except Exception as exc:
                fig.detail = f"{type(exc).__name__}: {exc}"
            found.append(fig)
        return found

    def _inside(self, page: Page, src: str) -> Path | None:
        """The file a relative image path names, when it (after every link) is inside the
        logbook root; None for an absolute path, `..` out of the root, or a link out."""
        from urllib.parse import unquote

        path = unquote(src.split("#")[0].split("?")[0])
        if not path or path.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", path):
            return None
        target = (page.path.parent / path).resolve()
        try:
            target.relative_to(self.root.resolve())
        except ValueError:
            return None
        return target

    def run_logs(self, page: Page) -> list[RunLog]:
        logs: list[RunLog] = []
        for cell in page.cells:
            if not cell.is_run:
                continue
            command = cell.meta.get("command")
            argv = [str(a) for a in command] if isinstance(command, list) else \
                ([str(command)] if command else [])
            exit_code = cell.meta.get("exit_code")
            duration = cell.meta.get("duration_s")
            output = next((body for lang, body in fences(cell.body) if lang == "output"), "")
            index = len(logs) + 1
            text = (f"command: {' '.join(argv)}\nexit code: {exit_code}\n"
                    f"duration: {duration} s\npage: {page.slug}\ncell: {cell.meta.get('id')}\n"
                    f"--- output ---\n{output}")
            path = self._write(f"logs/{page.slug}/run-{index}.txt", text)
            run = RunLog(page=page.slug, index=index, path=path, command=argv,
                         exit_code=exit_code if isinstance(exit_code, int) else None,
                         duration_s=float(duration) if isinstance(duration, (int, float))
                         else None, output=output)
            self._scripts(page, cell, run)
            logs.append(run)
        return logs

    def _scripts(self, page: Page, cell: Cell, run: RunLog) -> None:
        """Write the scripts the run names under scripts/<page>/run-<n>/ (never run them)."""
        bodies = script_bodies(cell.body)
        names = list(dict.fromkeys(script_arguments(run.command) + list(bodies)))
        for name in names[:20]:
            body: str | bytes | None = bodies.get(name)
            if body is None:
                body = next((b for n, b in bodies.items()
                             if Path(n).name == Path(name).name), None)
            if body is None:
                body = self._workspace_file(name)
            if body is None:
                run.missing_scripts.append(name)
                continue
            run.scripts.append(self._write(
                f"scripts/{page.slug}/run-{run.index}/{_safe_name(name)}", body))

    def _workspace_file(self, name: str) -> bytes | None:
        """A script named by a run, read from the workspace when it is a regular file inside it
        (a published logbook is its own workspace)."""
        workspace = self.root.parent.parent if self.root.parent.name == ".trackio" else self.root
        if Path(name).is_absolute():
            return None
        try:
            target = (workspace / name).resolve()
            target.relative_to(workspace.resolve())
            if target.is_file() and target.stat().st_size <= MAX_SCRIPT_BYTES:
                return target.read_bytes()
        except (OSError, ValueError):
            return None
        return None
