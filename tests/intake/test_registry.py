"""The organizers' registry: authoritative references, doctored copies flagged."""

from __future__ import annotations

import io
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
from tests.conftest import REGISTRY, SUBMISSIONS, SubmissionBuilder, render_chart


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
        assert "redrawn at full resolution" in details[0]


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
