"""A logbook figure cell's `raw` fence as figure data: written as a figure-data file under the run
directory (never into the logbook), named as the claim's `reproduced_data`, and compared data to
data with a registry's published data. Logbooks made with the real trackio CLI, and by hand."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import yaml

from judging.figures.data import load_figure_data
from judging.intake import load_logbook, load_registry
from judging.intake.logbook.figures import figure_data_of_raw
from judging.run.measure import MeasureOptions, measure_claim
from tests.conftest import needs_trackio, render_chart
from tests.intake.test_logbook import cell, write_page
from tests.trackio_batch import tk_batch

X = np.linspace(1, 20, 40)
LOSS = {"train": 2.0 / X + 0.1, "val": 2.5 / X + 0.2}


def loss_csv(curves: dict[str, np.ndarray] = LOSS) -> str:
    return "step," + ",".join(curves) + "\n" + "".join(
        f"{x:g}," + ",".join(f"{c[i]:.6g}" for c in curves.values()) + "\n"
        for i, x in enumerate(X))


def loss_png(curves: dict[str, np.ndarray] = LOSS, **style) -> bytes:
    return render_chart(series={k: (X, v) for k, v in curves.items()}, **style)


def registry_for(folder: Path, claim_id: str) -> Path:
    """A registry giving `claim_id` the published figure and its data."""
    folder.mkdir(parents=True)
    (folder / "fig.png").write_bytes(loss_png())
    (folder / "fig.json").write_text(json.dumps({"series": [
        {"name": k, "x": X.tolist(), "y": v.tolist()} for k, v in LOSS.items()]}))
    path = folder / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [{"claim_id": claim_id, "published_figure":
                                                "fig.png", "published_data": "fig.json"}]}))
    return path


@needs_trackio
def test_a_trackio_figure_with_raw_data_is_compared_data_to_data(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "loss.png").write_bytes(loss_png(style="ggplot", size=(9, 6)))
    # One trackio interpreter for the four commands (tests/trackio_batch.py).
    made = tk_batch(ws, ["open", "--no-serve", "--title", "Reproduction: loss"],
                    ["page", "Claim 1: loss falls"],
                    ["cell", "figure", "--page", "claim-1-loss-falls", "--title", "Loss",
                     "--image", "loss.png", "--raw-text", loss_csv()],
                    ["cell", "markdown", "--page", "claim-1-loss-falls", "--title",
                     "Verdict: VERIFIED", "The loss falls as in Figure 2."])
    assert [done.returncode for done in made] == [0] * 4, [done.stderr for done in made]
    meta = ws / ".trackio" / "metadata.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "tags": ["paper-Loss0001"]}))

    out = tmp_path / "run" / "logbooks" / "ws"
    registry = load_registry(registry_for(tmp_path / "registry", "Loss0001/c1"))
    (claim,) = load_logbook(ws, out_dir=out, registry=registry).claims
    assert claim.claim.reproduced_data == "figures/claim-1-loss-falls/1.data.json"
    assert claim.reproduced_data_path == (out / claim.claim.reproduced_data).resolve()
    data = load_figure_data(claim.reproduced_data_path).data  # our own shape, read strictly
    assert [s.name for s in data.panels[0].series] == ["train", "val"]
    assert np.allclose(data.panels[0].series[0].y, LOSS["train"], rtol=1e-5)
    assert not list(ws.rglob("*.data.json"))  # nothing written into the logbook

    measured = measure_claim(claim, options=MeasureOptions())
    assert measured.signals["chart.reproduced_from_data"].value is True
    assert measured.signals["chart.published_from_data"].value is True
    assert measured.signals["chart.match_score"].value >= 0.9


def _handmade(tmp_path: Path, raw_lang: str, raw: str) -> Path:
    root = tmp_path / "published"
    png = base64.b64encode(loss_png(style="ggplot")).decode()
    write_page(root, "claim-1-loss", "# Claim 1: loss" + cell("figure", "Loss")
               + f'````html\n<img src="data:image/png;base64,{png}">\n````\n\n'
               + f"````{raw_lang}\n{raw}\n````\n"
               + cell("markdown", "Verdict: VERIFIED") + "It falls.\n")
    (root / "logbook.json").write_text(json.dumps({"tags": ["paper-Loss0001"]}))
    return root


def test_plotly_traces_in_a_raw_fence_become_figure_data(tmp_path: Path) -> None:
    traces = {"data": [{"type": "scatter", "name": k, "x": X.tolist(), "y": v.tolist()}
                       for k, v in LOSS.items()], "layout": {"title": "loss"}}
    root = _handmade(tmp_path, "raw", json.dumps(traces))
    registry = load_registry(registry_for(tmp_path / "registry", "Loss0001/c1"))
    (claim,) = load_logbook(root, out_dir=tmp_path / "out", registry=registry).claims
    assert claim.reproduced_data_path is not None
    measured = measure_claim(claim, options=MeasureOptions())
    assert measured.signals["chart.reproduced_from_data"].value is True
    assert measured.signals["chart.match_score"].value >= 0.9
    reversed_ = {"data": [{"name": k, "x": X.tolist(), "y": v[::-1].tolist()}
                          for k, v in LOSS.items()]}
    root = _handmade(tmp_path / "b", "json", json.dumps(reversed_))
    (claim,) = load_logbook(root, out_dir=tmp_path / "b" / "out", registry=registry).claims
    measured = measure_claim(claim, options=MeasureOptions())
    assert measured.signals["chart.reproduced_from_data"].value is True
    assert measured.signals["chart.match_score"].value < 0.5  # its data says: reversed


def test_a_raw_fence_that_is_no_series_leaves_reproduced_data_unset(tmp_path: Path) -> None:
    root = _handmade(tmp_path, "raw", "these are notes, not numbers")
    (claim,) = load_logbook(root, out_dir=tmp_path / "out").claims
    assert claim.claim.kind.value == "figure" and claim.claim.reproduced_data is None
    assert claim.reproduced_data_path is None


def test_raw_fence_shapes() -> None:
    ours = figure_data_of_raw(json.dumps({"series": [{"name": "a", "y": [1, 2]}],
                                          "layout": {"ignored": True}}))
    assert ours is not None and ours.panels[0].series[0].y == [1.0, 2.0]
    long = figure_data_of_raw("series,x,y\na,1,2\nb,1,3\n")
    assert long is not None and [s.name for s in long.panels[0].series] == ["a", "b"]
    records = figure_data_of_raw(json.dumps([{"step": 1, "loss": 2}, {"step": 2, "loss": 1}]))
    assert records is not None and records.panels[0].series[0].x == [1.0, 2.0]
    one = figure_data_of_raw(json.dumps({"loss": [3, 2, 1]}))
    assert one is not None and one.panels[0].series[0].xs() == [0.0, 1.0, 2.0]
    assert figure_data_of_raw("{not json") is None
    assert figure_data_of_raw(json.dumps({"loss": [1, float("nan")]})) is None
