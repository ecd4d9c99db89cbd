"""Figure-data files: our JSON shape (strict), its one-panel shorthand, organizers' JSON read
leniently (the realfig-dev shape), long and wide CSV; and one test per error, each naming the
file, the line where there is one, and what is wrong."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from judging.errors import FigureDataError
from judging.figures import data as figure_data
from judging.figures.data import load_figure_data, parse_figure_data

OURS = {"title": "Loss", "panels": [
    {"xscale": "linear", "yscale": "log", "xlabel": "step", "xlim": [0, 4],
     "series": [{"name": "train", "x": [1, 2, 3], "y": [0.9, 0.5, 0.3]},
                {"name": "val", "x": [1, 2, 3], "y": [1.0, 0.7, 0.6], "kind": "scatter"}]},
    {"kind": "bars", "series": [{"name": "count", "y": [3, 1, 2]}]}]}

#: The shape of /work/shared/datasets/realfig-dev/data/*.json, written out here (never copied).
REALFIG = {"title": "GDP", "layout": [1, 1], "legend_title": "country", "id": "gm-x",
           "panels": [{"title": "", "xlabel": "year", "ylabel": "GDP", "kind": "linepoints",
                       "xscale": "linear", "yscale": "linear", "xcats": ["a", "b"],
                       "spans": [{"x0": 1, "x1": 2, "name": "war"}],
                       "series": [{"name": "AU", "x": [1952, 1957], "y": [10039.6, 10949.6],
                                   "lo": [1, 2], "hi": [3, 4], "fit": True}]}]}


def parse(text: str, form: str | None = None, **kw) -> figure_data.FigureDataFile:
    return parse_figure_data(text, name="f.data", form=form, **kw)


def error(text: str, form: str | None = None, **kw) -> FigureDataError:
    with pytest.raises(FigureDataError) as caught:
        parse(text, form, **kw)
    return caught.value


# -- good files --------------------------------------------------------------------------------

def test_our_json_shape_reads_every_field(tmp_path: Path) -> None:
    path = tmp_path / "fig.json"
    path.write_text(json.dumps(OURS, indent=1))
    read = load_figure_data(path)
    assert read.form == "JSON" and read.ignored == ()
    first, second = read.data.panels
    assert (first.xscale, first.yscale, first.xlim) == ("linear", "log", (0.0, 4.0))
    assert first.series[0].x == [1.0, 2.0, 3.0] and first.series[1].kind == "scatter"
    assert second.kind == "bar"  # "bars" is read as bar
    assert second.series[0].x is None and second.series[0].xs() == [0.0, 1.0, 2.0]
    assert read.describe() == "JSON: 2 panels, 3 series, 9 points"


def test_one_panel_shorthand() -> None:
    read = parse(json.dumps({"yscale": "log", "series": [{"name": "a", "y": [1, 2]}]}))
    assert read.form == "JSON, one panel"
    assert read.data.panels[0].yscale == "log" and read.data.panels[0].series[0].y == [1, 2]


def test_a_dump_reads_back_strictly() -> None:
    data = parse(json.dumps(OURS)).data
    again = parse(data.model_dump_json(exclude_none=True)).data
    assert again == data


def test_organizers_json_is_read_leniently_and_names_what_it_ignored() -> None:
    read = parse(json.dumps(REALFIG), lenient=True)
    panel = read.data.panels[0]
    assert panel.kind == "line" and panel.series[0].y == [10039.6, 10949.6]
    assert set(read.ignored) == {"layout", "legend_title", "id", "panels[].xcats",
                                 "panels[].spans", "panels[].series[].lo",
                                 "panels[].series[].hi", "panels[].series[].fit"}
    assert "not read: layout" in read.describe()
    # the same file in our strict shape: an unknown key is named, with its line and field
    text = json.dumps(REALFIG, indent=1)
    failure = error(text)
    assert "unknown key 'lo'" in str(failure) and "more errors" in str(failure)
    assert failure.line == next(n for n, ln in enumerate(text.splitlines(), 1) if '"lo"' in ln)
    assert failure.field == "panels[0].series[0].lo"


def test_lenient_reading_still_checks_the_fields_it_reads() -> None:
    bad = json.loads(json.dumps(REALFIG))
    bad["panels"][0]["series"][0]["y"] = [1, "2"]
    assert "valid number" in str(error(json.dumps(bad), lenient=True))


def test_wide_csv(tmp_path: Path) -> None:
    path = tmp_path / "fig.csv"
    path.write_text("\ufeff# written by run.py\nstep,train,val\n1,0.9,1.0\n2,,0.7\n\n3,0.3,0.6\n")
    read = load_figure_data(path)
    assert read.form == "CSV, wide"
    panel = read.data.panels[0]
    assert panel.xlabel == "step" and panel.xscale is None  # a CSV states no scale
    train, val = panel.series
    assert (train.name, train.x, train.y) == ("train", [1.0, 3.0], [0.9, 0.3])
    assert val.x == [1.0, 2.0, 3.0]


def test_long_csv_with_panels_kinds_and_an_ignored_column() -> None:
    read = parse("series,x,y,panel,kind,note\nA,1,2,left,bar,x\nA,2,3,left,,\n"
                 "B,1,5,right,,\nB,2,1e-3,right,,\n", form="csv")
    assert read.form == "CSV, long" and read.ignored == ("note",)
    left, right = read.data.panels
    assert (left.title, right.title) == ("left", "right")
    assert left.series[0].kind == "bar" and left.series[0].y == [2.0, 3.0]
    assert right.series[0].y == [5.0, 0.001]


def test_csv_categories_tabs_and_semicolons() -> None:
    read = parse("model\tscore\nsmall\t1\nlarge\t3\nsmall\t2\n")
    assert read.data.panels[0].series[0].x == [0.0, 1.0, 0.0]
    read = parse("x;y1\n1;2\n2;3\n")
    assert read.data.panels[0].series[0].name == "y1"


# -- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,line,message", [
    ('{"panels": [\n', 2, "not valid JSON"),
    ('{\n "panels": [{"series": [\n  {"name": "a", "y": [1, NaN]}]}]}', 3, "finite number"),
    ('{\n "panels": [{"series": [\n  {"name": "a", "y": [1, 1e999]}]}]}', 3, "finite number"),
    ('{"panels": [{"series": [{"name": "a", "y": [1, "2"]}]}]}', 1, "valid number, found '2'"),
    ('{"panels": [{"series": [{"name": "a", "y": [true]}]}]}', 1, "valid number"),
    ('{"panels": [\n {"xsacle": "log", "series": [{"name": "a", "y": [1]}]}]}', 2,
     "unknown key 'xsacle'"),
    ('{"panels": [{"series": [{"name": "a", "x": [1], "y": [1, 2]}]}]}', 1, "one x per y"),
    ('{"panels": [{"yscale": "log", "series": [{"name": "a", "y": [1, 0]}]}]}', 1,
     "not positive"),
    ('{"panels": [{"xlim": [2, 1], "series": [{"name": "a", "y": [1]}]}]}', 1, "low < high"),
    ('{"panels": [{"series": [{"name": "a", "y": [1]}, {"name": "a", "y": [2]}]}]}', 1,
     "two series are named 'a'"),
    ('{"panels": [{"series": [{"name": "a", "y": [1]}], "kind": "pie"}]}', 1, "kind"),
    ('{"panels": [{"series": []}]}', 1, "at least 1"),
    ('{"panels": [],\n "panels": []}', 2, "duplicate key 'panels'"),
    ('{"panels": [], "series": []}', 1, "both 'panels' and 'series'"),
    ('{"title": "x"}', 1, "no 'panels' and no 'series'"),
    ('[1, 2]', 1, "found a JSON list"),
])
def test_json_errors_name_the_line_and_the_problem(text: str, line: int, message: str) -> None:
    failure = error(text)
    assert message in str(failure)
    assert failure.line == line and failure.path == "f.data"
    assert str(failure).startswith(f"f.data:{line}: ")


def test_json_errors_name_the_field() -> None:
    failure = error('{"panels": [{"series": [{"name": "a", "y": [1, NaN]}]}]}')
    assert failure.field == "panels[0].series[0].y[1]"
    failure = error('{"series": [{"name": "a", "y": [1, NaN]}]}')
    assert failure.field == "series[0].y[1]"  # the shorthand's own path


@pytest.mark.parametrize("text,line,message", [
    ("series,x,y\na,1,2\na,2,x\n", 3, "y 'x' is not a number"),
    ("series,x,y\na,1,2\nb,2\n", 3, "2 cells, the header has 3"),
    ("series,x,y\n,1,2\n", 2, "series name is empty"),
    ("series,x,y\na,1,\n", 2, "y is empty"),
    ("step,train\n1,2\n2,nan\n", 3, "train 'nan' is not a finite number"),
    ("step,train\n1,2\n2,1e999\n", 3, "is not a finite number"),
    ("step,train\n1,2,3\n", 2, "3 cells, the header has 2"),
    ("cat,h\nA,1\n3,2\n", 2, "holds numbers elsewhere (line 3)"),
    ("step,train\n,2\n", 2, "step is empty"),
    ("step,a,a\n1,2,3\n", 1, "two columns are named 'a'"),
    ("step,,b\n1,2,3\n", 1, "column 2 has no name"),
    ("step,a,b\n1,2,\n", 1, "series 'b' has no values"),
    ("step\n1\n", 1, "one column"),
    ("1,2\n3,4\n", 1, "must be a header"),
    ("step,a\n", 1, "a header but no rows"),
    ('step,a\n1,"2\n', 2, "not valid CSV"),
])
def test_csv_errors_name_the_line_and_the_problem(text: str, line: int, message: str) -> None:
    failure = error(text, form="csv")
    assert message in str(failure), str(failure)
    assert failure.line == line, str(failure)


def test_csv_kinds_must_agree() -> None:
    assert "several kinds" in str(error("series,x,y,kind\na,1,2,line\na,2,3,bar\n"))


def test_empty_and_nul_and_encoding(tmp_path: Path) -> None:
    assert "empty" in str(error("  \n"))
    assert "NUL" in str(error("step,a\n1,\x002\n"))
    path = tmp_path / "bad.csv"
    path.write_bytes(b"step,a\n1,\xff\n")
    with pytest.raises(FigureDataError, match=r"bad.csv:2: not valid UTF-8"):
        load_figure_data(path)


def test_files_that_are_missing_special_or_too_large(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FigureDataError, match="cannot read the figure data"):
        load_figure_data(tmp_path / "nothing.csv", shown="figures/nothing.csv")
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(FigureDataError, match="not a regular file"):
        load_figure_data(fifo)  # and it does not hang waiting for a writer
    big = tmp_path / "big.csv"
    big.write_text("step,a\n" + "1,2\n" * 100)
    monkeypatch.setattr(figure_data, "MAX_FIGURE_DATA_BYTES", 200)
    with pytest.raises(FigureDataError, match="over the limit of 200"):
        load_figure_data(big)


def test_too_many_points_rows_series_or_panels(monkeypatch: pytest.MonkeyPatch) -> None:
    half = figure_data.MAX_POINTS // 2 + 1
    points = {"panels": [{"series": [{"name": "a", "y": [1.0] * half},
                                     {"name": "b", "y": [2.0] * half}]}]}
    assert "points, over the limit of 200,000" in str(error(json.dumps(points)))
    too_many = {"panels": [{"series": [{"name": f"s{i}", "y": [1]} for i in range(201)]}]}
    assert "at most 200" in str(error(json.dumps(too_many)))
    panels = {"panels": [{"series": [{"name": "a", "y": [1]}]}] * 37}
    assert "at most 36" in str(error(json.dumps(panels)))
    monkeypatch.setattr(figure_data, "MAX_POINTS", 5)
    assert "over 5 rows" in str(error("step,a\n" + "1,2\n" * 7))  # counted while reading
