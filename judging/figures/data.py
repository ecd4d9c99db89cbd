"""Figure data: the series a figure plots, in data units, as a JSON or CSV file beside the figure.

A reproduced figure may come with its data (the manifest's `reproduced_data`; a logbook figure
cell's `raw` fence), and the registry may carry the published figure's (`published_data`, e.g.
series digitized once by the organizers). The chart signals then compare the series data to data
and read the image only for a side without data. This module is the format: the parse, its
limits and its errors; `judging.signals.chart.data` turns a `FigureData` into a chart reading.

JSON (our shape; unknown keys are refused, so a misspelt `xsacle` cannot pass for a linear axis):

    {"panels": [{"xscale": "linear", "yscale": "log",
                 "series": [{"name": "train", "x": [1, 2, 3], "y": [0.9, 0.5, 0.3]}]}]}

- `panels` in reading order (rows top to bottom, each left to right), as the image reader pairs
  them; `{"series": [...], ...}` is the shorthand for one panel;
- a panel: `series` (at least one), optional `xscale`/`yscale` (`linear` | `log`; unstated: the
  other side's scale, else linear), `kind` (`line` | `scatter` | `bar`, the default of its series;
  unstated: line), `xlim`/`ylim` (`[low, high]`, the axis range when the figure sets one), and
  the descriptive `title`, `xlabel`, `ylabel`;
- a series: `name`, `y`, optional `x` (one per y; left out: positions 0, 1, 2, ..., as for bars
  over categories) and `kind`;
- the figure: `panels` and an optional `title`.

Read leniently (`lenient=True`: the published side's data, organizers' or a paper's export such
as the realfig-dev files, which add `id`, `layout`, `spans`, bands `lo`/`hi`...), the keys above
are checked the same and any other key is ignored and named in `FigureDataFile.ignored`.

CSV (a tolerant reader: a header line, then one row per point; `#` comment lines and blank lines
are skipped; commas, or tabs or semicolons when the header has no comma):

- long: columns `series,x,y`, optional `panel` (panels in order of first appearance) and `kind`;
  other columns are ignored (named in `ignored`);
- wide: the first column is x, every other column one series named by its header; an empty cell
  is no point of that series.

An x column of text only (category labels) gives positions 0, 1, 2, ... in order of first
appearance. Every value must be a finite number; a file is at most `MAX_FIGURE_DATA_BYTES`, with
at most `MAX_POINTS` points, `MAX_SERIES` series and `MAX_PANELS` panels. Errors name the file,
the line (where there is one), the field and what is wrong (`FigureDataError`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    ValidationError,
    model_validator,
)

from judging._yaml import parse_document
from judging.errors import FigureDataError, InputFileError

#: Limits: the largest figure in the realfig-dev set (about 30,000 scatter points, 300 kB of JSON)
#: is well inside them; a hostile file is refused before it costs memory or time.
MAX_FIGURE_DATA_BYTES = 8 * 1024 * 1024
MAX_POINTS = 200_000
MAX_SERIES = 200
MAX_PANELS = 36
MAX_NAME_CHARS = 200
#: Errors in JSON files up to this size are located to a line (through the YAML node tree).
_LOCATE_BYTES = 2 * 1024 * 1024

Scale = Literal["linear", "log"]
Kind = Literal["line", "scatter", "bar"]
#: Other names of the kinds (plotting libraries' and the realfig-dev set's), read as these.
KIND_ALIASES = {"lines": "line", "linepoints": "line", "line+points": "line",
                "lines+markers": "line", "curve": "line", "step": "line", "points": "scatter",
                "point": "scatter", "markers": "scatter", "bars": "bar", "column": "bar",
                "columns": "bar", "histogram": "bar"}


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number (not NaN or infinity)")
    return value


#: A number as JSON writes it: not a string, not a boolean, finite.
Number = Annotated[float, Strict(), AfterValidator(_finite)]


def _kind(value: object) -> object:
    if isinstance(value, str):
        key = value.strip().lower()
        return KIND_ALIASES.get(key, key)
    return value


KindName = Annotated[Kind, BeforeValidator(_kind)]


def _one_line(value: str) -> str:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("must be one line without control characters")
    return value


Name = Annotated[str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS),
                 AfterValidator(_one_line)]
Text = Annotated[str, StringConstraints(max_length=500)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class DataSeries(_Model):
    """One series of a panel, in data units."""

    name: Name
    """The legend name (compared with the other side's names when both have them)."""
    x: list[Number] | None = Field(default=None, max_length=MAX_POINTS)
    """One x per y; None: positions 0, 1, 2, ... (bars over categories)."""
    y: list[Number] = Field(min_length=1, max_length=MAX_POINTS)
    kind: KindName | None = None
    """line | scatter | bar; None: the panel's kind, else line."""

    @model_validator(mode="after")
    def _one_x_per_y(self) -> DataSeries:
        if self.x is not None and len(self.x) != len(self.y):
            raise ValueError(f"series {self.name!r}: x has {len(self.x)} values and y "
                             f"{len(self.y)}: give one x per y (or leave x out for positions "
                             f"0, 1, 2, ...)")
        return self

    def xs(self) -> list[float]:
        return self.x if self.x is not None else [float(i) for i in range(len(self.y))]


def _check_limits(name: str, limits: tuple[float, float] | None, scale: Scale | None) -> None:
    if limits is None:
        return
    lo, hi = limits
    if not lo < hi:
        raise ValueError(f"{name} [{lo:g}, {hi:g}] must be [low, high] with low < high")
    if scale == "log" and lo <= 0:
        raise ValueError(f"{name} [{lo:g}, {hi:g}] must be positive on a log axis")


class DataPanel(_Model):
    """One plot area: its series, and what the data cannot say by itself (scales, limits)."""

    title: Text | None = None
    xlabel: Text | None = None
    ylabel: Text | None = None
    xscale: Scale | None = None
    """linear | log; None (not stated): the other side's scale, else linear."""
    yscale: Scale | None = None
    xlim: tuple[Number, Number] | None = None
    """The x axis range when the figure sets one; None: the data's extent plus a 5% margin."""
    ylim: tuple[Number, Number] | None = None
    kind: KindName | None = None
    """The default kind of the panel's series."""
    series: list[DataSeries] = Field(min_length=1, max_length=MAX_SERIES)

    @model_validator(mode="after")
    def _consistent(self) -> DataPanel:
        names: set[str] = set()
        for series in self.series:
            if series.name in names:
                raise ValueError(f"two series are named {series.name!r}: names must differ "
                                 f"within a panel")
            names.add(series.name)
            for axis, scale, values in (("x", self.xscale, series.x), ("y", self.yscale,
                                                                        series.y)):
                if scale == "log" and values is not None:
                    bad = next((v for v in values if v <= 0), None)
                    if bad is not None:
                        raise ValueError(f"series {series.name!r}: {axis} value {bad:g} is not "
                                         f"positive, and the panel's {axis}scale is log")
        _check_limits("xlim", self.xlim, self.xscale)
        _check_limits("ylim", self.ylim, self.yscale)
        return self


class FigureData(_Model):
    """A figure's plotted data: its panels in reading order."""

    title: Text | None = None
    panels: list[DataPanel] = Field(min_length=1, max_length=MAX_PANELS)

    @model_validator(mode="after")
    def _bounded(self) -> FigureData:
        series = sum(len(p.series) for p in self.panels)
        if series > MAX_SERIES:
            raise ValueError(f"{series} series, over the limit of {MAX_SERIES}")
        if self.points() > MAX_POINTS:
            raise ValueError(f"{self.points():,} points, over the limit of {MAX_POINTS:,}")
        return self

    def points(self) -> int:
        return sum(len(s.y) for p in self.panels for s in p.series)

    def summary(self) -> str:
        n_panels = len(self.panels)
        n_series = sum(len(p.series) for p in self.panels)
        return (f"{n_panels} panel{'s' * (n_panels != 1)}, {n_series} series, "
                f"{self.points():,} points")


@dataclass(frozen=True)
class FigureDataFile:
    """A figure-data file as read: the data, the form it was in, and the keys not read."""

    data: FigureData
    form: str
    """JSON | JSON, one panel | CSV, long | CSV, wide"""
    ignored: tuple[str, ...] = ()
    """Keys (lenient JSON) or columns (long CSV) that were not read, e.g. `panels[].spans`."""

    def describe(self) -> str:
        text = f"{self.form}: {self.data.summary()}"
        if self.ignored:
            shown = ", ".join(self.ignored[:8]) + (", ..." if len(self.ignored) > 8 else "")
            text += f"; not read: {shown}"
        return text


# --- files ------------------------------------------------------------------------------------

def load_figure_data(path: Path | str, *, lenient: bool = False, shown: str | None = None
                     ) -> FigureDataFile:
    """Read a figure-data file (JSON or CSV by its suffix, else by its first character).

    `shown` names the file in errors (e.g. its path inside the submission). Raises
    FigureDataError with the file, the line and what is wrong."""
    path = Path(path)
    name = shown or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise FigureDataError(f"cannot read the figure data: {exc.strerror or exc}",
                              path=name) from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise FigureDataError("not a regular file", path=name)
        if info.st_size > MAX_FIGURE_DATA_BYTES:
            raise FigureDataError(f"the file is {info.st_size:,} bytes, over the limit of "
                                  f"{MAX_FIGURE_DATA_BYTES:,} for figure data", path=name)
        raw = handle.read(MAX_FIGURE_DATA_BYTES + 1)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise FigureDataError(f"not valid UTF-8 (byte {exc.start})", path=name,
                              line=line) from exc
    suffix = path.suffix.lower()
    form: Literal["json", "csv"] | None = ("json" if suffix == ".json" else
                                           "csv" if suffix in (".csv", ".tsv") else None)
    return parse_figure_data(text, name=name, form=form, lenient=lenient)


def parse_figure_data(text: str, *, name: str, form: Literal["json", "csv"] | None = None,
                      lenient: bool = False) -> FigureDataFile:
    """Parse figure data from text (JSON when `form` says so or the text starts with `{` or
    `[`, else CSV). `lenient` reads JSON as organizers' data: unknown keys ignored, named."""
    if len(text) > MAX_FIGURE_DATA_BYTES:
        raise FigureDataError(f"{len(text):,} characters, over the limit of "
                              f"{MAX_FIGURE_DATA_BYTES:,} for figure data", path=name)
    if "\x00" in text:
        raise FigureDataError("NUL character in the text: not CSV or JSON", path=name,
                              line=text.count("\n", 0, text.index("\x00")) + 1)
    text = text.removeprefix("\ufeff")
    if form is None:
        form = "json" if text.lstrip()[:1] in ("{", "[") else "csv"
    if not text.strip():
        raise FigureDataError("the file is empty", path=name)
    if form == "json":
        return _parse_json(text, name=name, lenient=lenient)
    return _parse_csv(text, name=name)


# --- JSON -------------------------------------------------------------------------------------

class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


_SHAPE = ('figure data is {"panels": [{"series": [{"name": ..., "x": [...], "y": [...]}]}]} '
          'or, for one panel, {"series": [...]}')


def _parse_json(text: str, *, name: str, lenient: bool) -> FigureDataFile:
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise FigureDataError(f"not valid JSON: {exc.msg} (column {exc.colno})", path=name,
                              line=exc.lineno) from exc
    except _DuplicateKey as exc:
        line = _duplicate_line(text, name)
        raise FigureDataError(f"duplicate key {exc.args[0]!r}", path=name, line=line) from None
    except RecursionError as exc:
        raise FigureDataError("not valid JSON: nested too deeply", path=name) from exc
    if not isinstance(data, dict):
        raise FigureDataError(f"found a JSON {type(data).__name__}: {_SHAPE}", path=name, line=1)
    prefix: tuple[str | int, ...] = ()
    form = "JSON"
    if "panels" not in data:
        if "series" not in data:
            raise FigureDataError(f"no 'panels' and no 'series': {_SHAPE}", path=name, line=1)
        form, prefix = "JSON, one panel", ("panels", 0)
        data = {"panels": [data]}
    elif "series" in data:
        raise FigureDataError("both 'panels' and 'series' at the top: give 'panels', or "
                              "'series' alone for one panel", path=name, line=1)
    ignored: list[str] = []
    if lenient:
        data = _known_keys(data, ignored, shorthand=bool(prefix))
    try:
        figure = FigureData.model_validate(data)
    except ValidationError as exc:
        raise _json_error(exc, text, name=name, prefix=prefix) from None
    return FigureDataFile(data=figure, form=form, ignored=tuple(dict.fromkeys(ignored)))


def _duplicate_line(text: str, name: str) -> int | None:
    if len(text) > _LOCATE_BYTES:
        return None
    try:
        parse_document(text, path=name, error_class=InputFileError)
    except InputFileError as exc:
        return exc.line
    return None


def _known_keys(data: dict[str, Any], ignored: list[str], *, shorthand: bool) -> dict[str, Any]:
    """`data` with only the keys of the models (lenient reading); the others named in `ignored`,
    indices left out (`panels[].series[].lo`)."""
    def keep(value: object, model: type[BaseModel], where: str) -> object:
        if not isinstance(value, dict):
            return value
        for key in value:
            if key not in model.model_fields:
                ignored.append(f"{where}{key}")
        return {k: v for k, v in value.items() if k in model.model_fields}

    top = keep(data, FigureData, "")
    assert isinstance(top, dict)
    panels = top.get("panels")
    if isinstance(panels, list):
        at = "" if shorthand else "panels[]."
        top["panels"] = panels = [keep(p, DataPanel, at) for p in panels]
        for panel in panels:
            if isinstance(panel, dict) and isinstance(panel.get("series"), list):
                panel["series"] = [keep(s, DataSeries, f"{at}series[].")
                                   for s in panel["series"]]
    return top


def _field_path(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _json_error(exc: ValidationError, text: str, *, name: str,
                prefix: tuple[str | int, ...]) -> FigureDataError:
    first = exc.errors()[0]
    loc = tuple(first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        model = {0: FigureData, 2: DataPanel, 4: DataSeries}.get(len(loc) - 1, FigureData)
        message = (f"unknown key {loc[-1]!r} (a {model.__name__} has: "
                   f"{', '.join(model.model_fields)})")
    elif first["type"] in ("float_type", "float_parsing") and loc:
        message = f"{message}, found {first.get('input')!r}"[:300]
    more = len(exc.errors()) - 1
    if more:
        message += f" (and {more} more error{'s' * (more > 1)})"
    line = None
    if len(text) <= _LOCATE_BYTES:
        try:
            line = parse_document(text, path=name, error_class=InputFileError).line_of(
                loc[len(prefix):] if loc[:len(prefix)] == prefix else loc)
        except InputFileError:
            line = None
    shown = loc[len(prefix):] if prefix and loc[:len(prefix)] == prefix else loc
    return FigureDataError(message, path=name, line=line, field=_field_path(shown) or None)


# --- CSV --------------------------------------------------------------------------------------

def _delimiter(header: str) -> str:
    if "," in header:
        return ","
    if "\t" in header:
        return "\t"
    if ";" in header:
        return ";"
    return ","


def _rows(text: str, name: str) -> list[tuple[int, list[str]]]:
    """(line number, cells) of every row that is not blank or a `#` comment."""
    lines = text.splitlines()
    header = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")), "")
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(header), strict=True)
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not any(c.strip() for c in cells) or cells[0].lstrip().startswith("#"):
                continue
            rows.append((line, [c.strip() for c in cells]))
            if len(rows) > MAX_POINTS + 1:
                raise FigureDataError(f"over {MAX_POINTS:,} rows, the limit of points in "
                                      f"figure data", path=name, line=line)
    except csv.Error as exc:
        raise FigureDataError(f"not valid CSV: {exc}", path=name, line=reader.line_num) from exc
    return rows


_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _number(cell: str) -> float | None:
    """The cell as a finite number; None when it is not written as one."""
    if not _NUMBER.match(cell):
        return None
    value = float(cell)
    return value if math.isfinite(value) else None


def _value(cell: str, *, column: str, line: int, name: str) -> float:
    value = _number(cell)
    if value is None:
        what = "is empty" if not cell else (
            "is not a finite number" if cell.lower().lstrip("+-") in (
                "nan", "inf", "infinity") or _NUMBER.match(cell) else "is not a number")
        raise FigureDataError(f"{column} {cell!r} {what}" if cell else f"{column} {what}",
                              path=name, line=line)
    return value


def _positions(cells: list[tuple[int, str]], *, name: str, column: str) -> list[float]:
    """An x column as numbers, or, when every cell is text, category positions 0, 1, 2, ...
    in order of first appearance."""
    empty = next((line for line, c in cells if not c), None)
    if empty is not None:
        raise FigureDataError(f"{column} is empty", path=name, line=empty)
    numbers = [_number(c) for _, c in cells]
    if all(v is not None for v in numbers):
        return numbers  # type: ignore[return-value]
    texts = [(line, c) for (line, c), v in zip(cells, numbers) if v is None]
    if len(texts) < len(cells):
        line, cell = texts[0]
        numeric_line = next(line for (line, _), v in zip(cells, numbers) if v is not None)
        raise FigureDataError(f"{column} {cell!r} is not a finite number, but the {column} "
                              f"column holds numbers elsewhere (line {numeric_line}): give "
                              f"numbers only, or category labels only", path=name, line=line)
    order: dict[str, float] = {}
    for _, c in cells:
        order.setdefault(c, float(len(order)))
    return [order[c] for _, c in cells]


def _parse_csv(text: str, *, name: str) -> FigureDataFile:
    rows = _rows(text, name)
    if not rows:
        raise FigureDataError("no header and no rows", path=name)
    header_line, header = rows[0]
    if len(rows) < 2:
        raise FigureDataError("a header but no rows of data", path=name, line=header_line)
    if all(_number(c) is not None for c in header):
        raise FigureDataError("the first line must be a header (series,x,y for the long form; "
                              "x and the series' names for the wide form), found numbers",
                              path=name, line=header_line)
    lower = [c.lower() for c in header]
    if {"series", "x", "y"} <= set(lower):
        return _long_csv(rows, lower, name=name)
    return _wide_csv(rows, header, name=name)


def _validated(data: dict[str, Any], *, name: str) -> FigureData:
    try:
        return FigureData.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise FigureDataError(first["msg"].removeprefix("Value error, "), path=name,
                              field=_field_path(tuple(first["loc"])) or None) from None


def _long_csv(rows: list[tuple[int, list[str]]], lower: list[str], *, name: str
              ) -> FigureDataFile:
    header_line = rows[0][0]
    for column in set(lower):
        if lower.count(column) > 1:
            raise FigureDataError(f"two columns are named {column!r}", path=name,
                                  line=header_line)
    at = {c: lower.index(c) for c in ("series", "x", "y", "panel", "kind") if c in lower}
    ignored = tuple(c for c in lower if c not in at)
    width = max(at.values()) + 1
    # panel -> series -> (kind, [(line, x cell)], [y])
    panels: dict[str, dict[str, tuple[list[str], list[tuple[int, str]], list[float]]]] = {}
    for line, cells in rows[1:]:
        if len(cells) < width:
            raise FigureDataError(f"{len(cells)} cells, the header has {len(lower)}",
                                  path=name, line=line)
        series = cells[at["series"]]
        if not series:
            raise FigureDataError("the series name is empty", path=name, line=line)
        panel = cells[at["panel"]] if "panel" in at else ""
        kinds, xs, ys = panels.setdefault(panel, {}).setdefault(series, ([], [], []))
        if "kind" in at and cells[at["kind"]]:
            kinds.append(cells[at["kind"]])
        xs.append((line, cells[at["x"]]))
        ys.append(_value(cells[at["y"]], column="y", line=line, name=name))
    out = []
    for panel, by_series in panels.items():
        all_x = _positions([cell for _, xs, _ in by_series.values() for cell in xs],
                           name=name, column="x")
        series_out, k = [], 0
        for series, (kinds, xs, ys) in by_series.items():
            if len(set(_kind(v) for v in kinds)) > 1:
                raise FigureDataError(f"series {series!r} has several kinds: "
                                      f"{', '.join(dict.fromkeys(kinds))}", path=name)
            entry: dict[str, Any] = {"name": series, "x": all_x[k:k + len(xs)], "y": ys}
            if kinds:
                entry["kind"] = kinds[0]
            series_out.append(entry)
            k += len(xs)
        out.append({"series": series_out, **({"title": panel} if panel else {})})
    return FigureDataFile(data=_validated({"panels": out}, name=name), form="CSV, long",
                          ignored=ignored)


def _wide_csv(rows: list[tuple[int, list[str]]], header: list[str], *, name: str
              ) -> FigureDataFile:
    header_line = rows[0][0]
    if len(header) < 2:
        raise FigureDataError("one column: a wide CSV has an x column and one column per "
                              "series (header: x and the series' names); a long one has "
                              "series,x,y", path=name, line=header_line)
    names = header[1:]
    for k, series in enumerate(names, start=2):
        if not series:
            raise FigureDataError(f"column {k} has no name in the header (a wide CSV names "
                                  f"each series)", path=name, line=header_line)
        if names.count(series) > 1:
            raise FigureDataError(f"two columns are named {series!r}", path=name,
                                  line=header_line)
    xs: list[tuple[int, str]] = []
    for line, cells in rows[1:]:
        if len(cells) > len(header):
            raise FigureDataError(f"{len(cells)} cells, the header has {len(header)}",
                                  path=name, line=line)
        xs.append((line, cells[0]))
    x = _positions(xs, name=name, column=header[0] or "x")
    series_out = []
    for k, series in enumerate(names, start=1):
        points = [(x[i], _value(cells[k], column=series, line=line, name=name))
                  for i, (line, cells) in enumerate(rows[1:])
                  if k < len(cells) and cells[k] != ""]
        if not points:
            raise FigureDataError(f"series {series!r} has no values", path=name,
                                  line=header_line)
        series_out.append({"name": series, "x": [p[0] for p in points],
                           "y": [p[1] for p in points]})
    panel: dict[str, Any] = {"series": series_out}
    if header[0]:
        panel["xlabel"] = header[0]
    return FigureDataFile(data=_validated({"panels": [panel]}, name=name), form="CSV, wide")
