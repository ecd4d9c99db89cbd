"""`judging similarity` and `judging chart`: the signals of one figure pair, printed."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from judging.cli.options import console, friendly_errors
from judging.figures.formats import DEFAULT_MAX_PIXELS, DEFAULT_SIZE


@click.command()
@click.argument("published", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.argument("reproduced", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print the signals as JSON.")
@click.option("--size", type=click.IntRange(64, 4096), default=DEFAULT_SIZE, show_default=True)
@click.option("--diff", "diff_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="Also write the diff image here (PNG).")
@click.option("--max-pixels", type=click.IntRange(1), default=DEFAULT_MAX_PIXELS, show_default=True)
@friendly_errors
def similarity(published: Path, reproduced: Path, as_json: bool, size: int,
               diff_path: Path | None, max_pixels: int) -> None:
    """Pixel signals of a published vs a reproduced figure."""
    from dataclasses import asdict

    from judging.hashing import file_sha256
    from judging.signal_catalogue import CATALOGUE
    from judging.signals import compare_figures, load_image

    comparison = compare_figures(load_image(published, max_pixels=max_pixels),
                                 load_image(reproduced, max_pixels=max_pixels), size=size,
                                 same_bytes=file_sha256(published) == file_sha256(reproduced))
    # Catalogued signals only (the measures behind the copy flag are not signals of their own).
    values = {name: value for name, value in asdict(comparison.signals).items()
              if f"pixel.{name}" in CATALOGUE}
    if diff_path is not None:
        comparison.diff.save(diff_path, format="PNG")
    if as_json:
        click.echo(json.dumps({f"pixel.{k}": v for k, v in values.items()}, indent=2))
        return
    table = Table(title=f"{published.name} vs {reproduced.name}")
    table.add_column("signal")
    table.add_column("value", justify="right")
    table.add_column("meaning")
    for name, value in values.items():
        shown = "absent" if value is None else (str(value) if isinstance(value, bool)
                                               else f"{value:.4f}")
        table.add_row(f"pixel.{name}", shown, CATALOGUE[f"pixel.{name}"].description)
    console.print(table)
    if diff_path is not None:
        console.print(f"diff image: {diff_path}")


@click.command()
@click.argument("figure", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.argument("reproduced", required=False,
                type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print the reading (and signals) as JSON.")
@click.option("--overlay", "overlay_path", type=click.Path(path_type=Path, dir_okay=False),
              default=None, help="With two figures: write the overlay of both readings (PNG).")
@click.option("--max-pixels", type=click.IntRange(1), default=DEFAULT_MAX_PIXELS, show_default=True)
@friendly_errors
def chart(figure: Path, reproduced: Path | None, as_json: bool, overlay_path: Path | None,
          max_pixels: int) -> None:
    """Read the plotted data back from a chart; with a second chart, the chart.* signals."""
    from judging.signal_catalogue import CATALOGUE
    from judging.signals import compare_charts, load_image, read_chart, render_overlay
    from judging.signals.chart import chart_trace, figure_trace

    readings = [read_chart(load_image(path, max_pixels=max_pixels))
                for path in [figure] + ([reproduced] if reproduced is not None else [])]
    comparison = compare_charts(*readings) if len(readings) == 2 else None
    # What the evidence behind chart.same_data confirmed or doubted (the run's reading trace).
    trace = chart_trace(*readings, comparison, published_source="image",
                        reproduced_source="image") if comparison is not None else None
    if overlay_path is not None:
        if comparison is None:
            raise click.UsageError("--overlay needs two figures")
        image = render_overlay(*readings, comparison)
        if image is None:
            raise click.ClickException("neither chart could be read: no overlay written")
        image.save(overlay_path, format="PNG")
    # One description of a reading, the run's: the trace's figures (`FigureTrace`).
    figures = [trace.published, trace.reproduced] if trace is not None else \
        [figure_trace(readings[0], source="image")]
    if as_json:
        out: dict = {"published" if comparison else "chart": figures[0].model_dump(mode="json")}
        if comparison is not None:
            out["reproduced"] = figures[1].model_dump(mode="json")
            out["signals"] = comparison.signals
            out["absent"] = comparison.reasons
            out["trace"] = trace.model_dump(mode="json") if trace is not None else None
        out["points"] = [_points_shown(r) for r in readings]
        click.echo(json.dumps(out, indent=2))
        return
    for path, described in zip([figure, reproduced], figures):
        console.print(f"[bold]{escape(path.name)}[/]")
        for item in described.items():
            console.print(f"  {item}", markup=False)
    if comparison is not None:
        table = Table(title=f"{figure.name} vs {reproduced.name}")
        for column in ("signal", "value", "meaning"):
            table.add_column(column, justify="right" if column == "value" else "left")
        for name, value in comparison.signals.items():
            shown = (f"absent ({comparison.reasons.get(name, '')})" if value is None
                     else str(value).lower() if isinstance(value, bool) else f"{value:.4f}")
            table.add_row(name, shown, CATALOGUE[name].description)
        console.print(table)
    if trace is not None:
        heading, items = trace.sections()[0]
        console.print(f"[bold]{heading}[/]", markup=True)
        for item in items:
            console.print(f"  {item}", markup=False)
    if overlay_path is not None:
        console.print(f"overlay image: {overlay_path}")


#: Points of each series given by `judging chart --json` (evenly spaced over the series): what
#: the reader made of the curve, without printing thousands of pixels.
POINTS_SHOWN = 50


def _points_shown(reading) -> list[list[list[list[float]]]]:
    """Per panel, per series (the trace's order), up to POINTS_SHOWN points in data units."""
    return [[[[round(float(x), 6), round(float(y), 6)]
              for x, y in s.points[:: max(1, len(s.points) // POINTS_SHOWN)]]
             for s in p.series] for p in reading.panels]
