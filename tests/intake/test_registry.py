"""The organizers' registry: authoritative references, doctored copies flagged."""

from __future__ import annotations

import io
import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from judging.errors import RegistryError
from judging.intake.manifest import load_submission
from judging.intake.registry import load_registry
from judging.models import ReferenceOrigin
from judging.run.measure import MeasureOptions, measure_claim
from tests.conftest import (
    ICML_EXTRA_CLAIM,
    REGISTRY,
    SUBMISSIONS,
    SubmissionBuilder,
    render_chart,
    write_icml_registry,
)


def _claims(folder: str) -> dict:
    loaded = load_submission(SUBMISSIONS / folder, registry=load_registry(REGISTRY))
    return {c.claim.claim_id: c for c in loaded.claims}


def test_registry_figure_replaces_the_participants_copy() -> None:
    claim = _claims("bob-neurips26-4821")["neurips26-4821/c6"]
    assert claim.reference is ReferenceOrigin.registry
    assert claim.published_path.parent == REGISTRY.parent.resolve() / "figures"
    assert claim.participant_reference_path.name == "paper_fig5.png"


def test_doctored_reference_figure_is_flagged() -> None:
    claim = _claims("bob-neurips26-4821")["neurips26-4821/c6"]
    measured = measure_claim(claim, options=MeasureOptions())
    (flag,) = [f for f in measured.flags if f.name == "reference_mismatch"]
    assert "differs from the registry's" in flag.detail


def test_honest_reference_copy_is_not_flagged() -> None:
    claim = _claims("alice-neurips26-4821")["neurips26-4821/c1"]
    measured = measure_claim(claim, options=MeasureOptions())
    assert not [f for f in claim.flags + measured.flags if f.name == "reference_mismatch"]


def test_claim_outside_the_registry_keeps_its_reference() -> None:
    claim = _claims("carol-iclr27-0137")["iclr27-0137/c5"]
    assert claim.reference is ReferenceOrigin.participant
    assert claim.published_path.is_relative_to((SUBMISSIONS / "carol-iclr27-0137").resolve())


def _registry(tmp_path: Path, claims: list[dict]) -> Path:
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump({"claims": claims}))
    return path


def test_doctored_value_and_tolerance(tmp_path: Path, submission: SubmissionBuilder) -> None:
    submission.number_claim("paper-1/c1", reported=93.0, tolerance={"absolute": 2.0})
    registry = load_registry(_registry(tmp_path, [
        {"claim_id": "paper-1/c1", "paper_id": "paper-1", "reported_value": 94.1,
         "tolerance": {"absolute": 0.5}, "statement": "Top-1 is 94.1%"}]))
    (claim,) = load_submission(submission.write(), registry=registry).claims
    assert claim.claim.reported_value == 94.1
    assert claim.claim.tolerance.absolute == 0.5
    details = [f.detail for f in claim.flags if f.name == "reference_mismatch"]
    assert any("reported_value 93 differs from the registry's 94.1" in d for d in details)
    assert any("tolerance ±2 differs" in d for d in details)


def test_registry_figure_for_a_figure_claim(tmp_path: Path, submission: SubmissionBuilder) -> None:
    reference = render_chart()
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "ref.png").write_bytes(reference)
    doctored = render_chart(log_y=True)
    submission.figure_claim("paper-1/f1", published=doctored, reproduced=doctored)
    registry = load_registry(_registry(tmp_path, [
        {"claim_id": "paper-1/f1", "published_figure": "figs/ref.png"}]))
    (claim,) = load_submission(submission.write(), registry=registry).claims
    measured = measure_claim(claim, options=MeasureOptions())
    # The reproduction copies the doctored reference: compared with the registry's figure, it is
    # not a copy, and the doctored reference is flagged.
    assert measured.signals["pixel.copy"].value is False
    assert [f.name for f in measured.flags] == ["reference_mismatch"]


def _png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("change, flagged", [
    ("resized", False),  # the registry's figure, saved again at another size: the same figure
    ("one curve 0.5% higher", True),  # near-identical at the normalised size, redrawn data
])
def test_near_identical_reference_copies(tmp_path: Path, submission: SubmissionBuilder,
                                         change: str, flagged: bool) -> None:
    reference = render_chart()
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "ref.png").write_bytes(reference)
    if change == "resized":
        image = Image.open(io.BytesIO(reference)).convert("RGB")
        own = _png(image.resize((image.width * 3 // 4, image.height * 3 // 4)))
    else:
        x = np.linspace(0, 10, 200)
        own = render_chart(series={"train": (x, np.exp(-x / 3) + 0.105),
                                   "val": (x, np.exp(-x / 4) + 0.15)})
    submission.figure_claim("paper-1/f1", published=own, reproduced=render_chart(style="ggplot"))
    registry = load_registry(_registry(tmp_path, [
        {"claim_id": "paper-1/f1", "published_figure": "figs/ref.png"}]))
    (claim,) = load_submission(submission.write(), registry=registry).claims
    details = [f.detail for f in measure_claim(claim, options=MeasureOptions()).flags
               if f.name == "reference_mismatch"]
    assert bool(details) is flagged, details
    if flagged:
        assert "of its pixels redrawn" in details[0]


@pytest.mark.parametrize("content, message", [
    ({"claims": [{"claim_id": "a", "published_figure": "missing.png"}]}, "not found"),
    ({"claims": [{"claim_id": "a"}, {"claim_id": "a"}]}, "duplicate"),
    ({"claims": [{"claim_id": "a", "published_figure": "../x.png"}]}, "'..'"),
    ({"claims": [{"claim_id": "a", "colour": "red"}]}, "unknown field"),
])
def test_bad_registries(tmp_path: Path, content: dict, message: str) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump(content))
    with pytest.raises(RegistryError, match=message):
        load_registry(path)


def test_jsonl_registry(tmp_path: Path) -> None:
    path = tmp_path / "registry.jsonl"
    path.write_text('{"claim_id": "a", "reported_value": 1.5}\n\n{"claim_id": "b"}\n')
    assert set(load_registry(path).claims) == {"a", "b"}
    path.write_text('{"claim_id": "a"}\n{"claim_id": 3}\n')
    with pytest.raises(RegistryError, match=r"registry.jsonl:2"):
        load_registry(path)


# --- the ICML shape: {paper_id: [{text: ...}, ...]} ------------------------------------------


def test_icml_shape_loads_with_positional_ids(tmp_path: Path,
                                              caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        registry = load_registry(write_icml_registry(tmp_path, extra_papers={
            "iclr27-9999": [{"text": "Adapters converge twice as fast."}]}))
    assert registry.shape == "icml"
    assert list(registry.claims) == [*(f"neurips26-4821/c{n}" for n in range(1, 8)),
                                     "iclr27-9999/c1"]
    ours = load_registry(REGISTRY).claims
    for n in range(1, 7):
        entry, reference = registry.claims[f"neurips26-4821/c{n}"], ours[f"neurips26-4821/c{n}"]
        assert entry.paper_id == "neurips26-4821"
        assert entry.statement == reference.statement  # `text` is the statement
        assert (entry.source, entry.published_figure, entry.reported_value, entry.tolerance,
                entry.values) == (reference.source, reference.published_figure,
                                  reference.reported_value, reference.tolerance, reference.values)
    assert registry.claims["neurips26-4821/c7"].statement == ICML_EXTRA_CLAIM
    assert registry.claims["iclr27-9999/c1"].paper_id == "iclr27-9999"
    # Keys with no registry field are ignored, and named once.
    assert registry.ignored_keys == ("figure_ref", "section")
    assert "figure_ref, section" in caplog.text
    assert [e.claim_id for e in registry.for_paper("iclr27-9999")] == ["iclr27-9999/c1"]


def test_icml_shape_in_json(tmp_path: Path) -> None:
    path = tmp_path / "claims.json"
    path.write_text(json.dumps({"p-1": [{"text": "a"}, {"text": "b", "reported_value": 2.5,
                                                        "claim_id": "p-1/c2"}]}))
    registry = load_registry(path)
    assert {k: (v.statement, v.reported_value) for k, v in registry.claims.items()} == {
        "p-1/c1": ("a", None), "p-1/c2": ("b", 2.5)}


def test_a_claim_with_a_registry_id_answers_it(tmp_path: Path) -> None:
    submissions = tmp_path / "submissions"
    shutil.copytree(SUBMISSIONS, submissions)
    registry = load_registry(write_icml_registry(tmp_path / "registry"))
    loaded = load_submission(submissions / "alice-neurips26-4821", registry=registry)
    claims = {c.claim.claim_id: c for c in loaded.claims}
    assert all(c.reference is ReferenceOrigin.registry for c in claims.values())
    figure = claims["neurips26-4821/c1"]
    assert figure.published_path == (tmp_path / "registry" / "figures" /
                                      "neurips26-4821-fig3.png").resolve()
    number = claims["neurips26-4821/c3"]
    assert number.claim.reported_value == 94.1 and number.claim.tolerance.absolute == 0.5
    assert number.claim.statement == registry.claims["neurips26-4821/c3"].statement
    # A paper the ICML registry does not list: every claim is participant-supplied.
    carol = load_submission(submissions / "carol-iclr27-0137", registry=registry)
    assert {c.reference for c in carol.claims} == {ReferenceOrigin.participant}
    assert registry.not_addressed("neurips26-4821", set(claims)) == [
        registry.claims["neurips26-4821/c6"], registry.claims["neurips26-4821/c7"]]


@pytest.mark.parametrize("content, message, line", [
    ("p-1:\n  - text: fine\n  - just a string\n",
     r":3: claim 2 of paper p-1 is not a mapping with a 'text' \(found str\) \(field: p-1\[1\]\)",
     3),
    ("p-1:\n  - text: fine\n  - source: Figure 2\n", r"claim 2 of paper p-1 has no 'text'", 3),
    ("p-1:\n  - text: '  '\n", r"claim 1 of paper p-1 has no 'text'", 2),
    ("p-1:\n  - text: a\np-2: {text: b}\n", r"'p-2' does not hold a list of claims", 3),
    ("- text: a\n", r"the registry is not a mapping \(found list\)", 1),
    ("{}\n", r"the registry is empty", None),
    ("p-1:\n  - text: a\n    claim_id: p-1/c9\n", r"claim_id 'p-1/c9' disagrees with where the "
                                                   r"claim is listed", 3),
    ("p-1:\n  - text: " + "x" * 4001 + "\n", r"claim 1 of paper p-1: String should have at "
                                             r"most 4000 characters \(field: p-1\[0\]\.text\)", 2),
    ("p-1:\n  - text: a\n    tolerance: {absolute: -1}\n",
     r"claim 1 of paper p-1: Input should be greater", 3),
    ("p-1:\n  - text: a\n    kind: chart\n", r"claim 1 of paper p-1: Input should be", 3),
    ("'bad id':\n  - text: a\n", r"paper id 'bad id' cannot name claims", 1),
    ("p-1:\n  - text: a\n    published_figure: ../x.png\n", r"'\.\.'", 3),
])
def test_malformed_icml_registries(tmp_path: Path, content: str, message: str,
                                   line: int | None) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(content)
    with pytest.raises(RegistryError, match=message) as raised:
        load_registry(path)
    assert "\n" not in str(raised.value)  # one line
    assert raised.value.line == line


def _data_registry(tmp_path: Path, *, figure: bool = True, data: str | None = "ref.json"
                   ) -> Path:
    (tmp_path / "figs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "figs" / "ref.png").write_bytes(render_chart())
    (tmp_path / "figs" / "ref.json").write_text('{"series": [{"name": "a", "y": [1, 2]}]}')
    entry: dict = {"claim_id": "paper-1/f1", "paper_id": "paper-1"}
    if figure:
        entry["published_figure"] = "figs/ref.png"
    if data:
        entry["published_data"] = f"figs/{data}"
    return _registry(tmp_path, [entry])


@pytest.mark.parametrize("own, flag", [
    (None, None),
    ('{"series": [{"name": "a", "y": [1, 2]}]}', None),  # the same bytes: an honest copy
    ('{"series": [{"name": "a", "y": [1, 9]}]}', "reference_mismatch"),
])
def test_registry_data_replaces_the_participants(tmp_path: Path, submission: SubmissionBuilder,
                                                 own: str | None, flag: str | None) -> None:
    registry = load_registry(_data_registry(tmp_path / "reg"))
    extra = {"published_data": submission.file("figures/own.json", own)} if own else {}
    submission.figure_claim("paper-1/f1", published=b"png", reproduced=b"png", **extra)
    (claim,) = load_submission(submission.write(), registry=registry).claims
    assert claim.published_data_path == (tmp_path / "reg" / "figs" / "ref.json").resolve()
    flags = [f for f in claim.flags if f.name == flag]
    assert bool(flags) == (flag is not None)
    if flags:
        assert "differs from the registry's data" in flags[0].detail


def test_participant_data_of_a_registry_figure_without_data_is_not_used(
        tmp_path: Path, submission: SubmissionBuilder) -> None:
    registry = load_registry(_data_registry(tmp_path / "reg", data=None))
    submission.figure_claim("paper-1/f1", published=b"png", reproduced=b"png",
                            published_data=submission.file("figures/own.json", "{}"))
    (claim,) = load_submission(submission.write(), registry=registry).claims
    assert claim.published_data_path is None
    assert [f.name for f in claim.flags] == ["published_data_ignored"]


def test_registry_data_without_a_registry_figure_goes_with_the_participants_figure(
        tmp_path: Path, submission: SubmissionBuilder) -> None:
    registry = load_registry(_data_registry(tmp_path / "reg", figure=False))
    submission.figure_claim("paper-1/f1", published=b"png", reproduced=b"png")
    (claim,) = load_submission(submission.write(), registry=registry).claims
    assert claim.published_path.parent == (submission.root / "figures").resolve()
    assert claim.published_data_path.name == "ref.json"


def test_a_missing_registry_data_file_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="published_data figs/gone.json not found"):
        load_registry(_data_registry(tmp_path, data="gone.json"))


def test_icml_shape_reads_published_data(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("x,y\n1,2\n")
    path = tmp_path / "icml.yaml"
    path.write_text(yaml.safe_dump({"p1": [{"text": "Loss falls.", "published_data": "d.csv"}]}))
    registry = load_registry(path)
    assert registry.ignored_keys == ()
    assert registry.data_path(registry.claims["p1/c1"]) == (tmp_path / "d.csv").resolve()
