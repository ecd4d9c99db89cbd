"""The CLI's console takes its width from the environment it prints in, not from the one its
module was imported in (issue 43: an xdist worker imported the CLI while COLUMNS=80 was set,
and every later command of that process printed its tables cut to 80 columns)."""

from __future__ import annotations

import io

import pytest
from rich.table import Table

from judging.cli.options import PIPE_WIDTH, PipeWideConsole

LONG = "too few to say (n=3) " * 8  # one cell wider than 80 columns


def _printed(console: PipeWideConsole) -> str:
    table = Table("criterion", "agreement")
    table.add_row("scale_disclosed", LONG)
    console.print(table)
    return console.file.getvalue()


def test_columns_at_import_do_not_fix_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "24")
    console = PipeWideConsole(file=io.StringIO())
    monkeypatch.delenv("COLUMNS")
    monkeypatch.delenv("LINES")
    assert console.size.width == PIPE_WIDTH
    assert LONG.strip() in _printed(console)  # the cell whole, on one line


def test_columns_when_printing_still_set_the_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    console = PipeWideConsole(file=io.StringIO())
    monkeypatch.setenv("COLUMNS", "60")
    assert console.size.width == 60
    assert LONG.strip() not in _printed(console)  # cut to the 60 columns asked for
    assert PipeWideConsole(file=io.StringIO(), width=70).size.width == 70
