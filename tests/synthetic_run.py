"""A run directory of N claims written directly (no judging): for the paged report's browser test
and benchmarks/report.py, which need tens of thousands of judgment lines in seconds.

Claims are number and figure claims of SUBMISSION_SIZE per submission, judged by the offline judge
on two rubrics (figure claims) or one (number claims), with outcomes in a fixed pattern, a flag on
every 37th claim and a line with an error on every 101st. A handful of figure claims
(`with_images`) get their own four images under diffs/, each a flat colour with a label, so a
test can tell from a screenshot that a claim's figures loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from PIL import Image, ImageDraw

from judging.hashing import slug
from judging.models import (
    Aggregate,
    AnswerStatus,
    Artifacts,
    ClaimKey,
    ClaimKind,
    CriterionAnswer,
    Flag,
    Judgment,
    LineStatus,
    Outcome,
    Provenance,
    RubricRef,
    Signal,
    Verdict,
)
from judging.rundir import RunStore, claim_images

SUBMISSION_SIZE = 20
FIGURE = RubricRef(id="figure-match", version="1.3.0", hash="sha256:" + "f" * 64)
VERDICT = RubricRef(id="verdict-justification", version="1.0.0", hash="sha256:" + "e" * 64)
#: The flat colours of a claim's four images (published, reproduced, diff, overlay).
COLOURS = {"published": (230, 0, 230), "reproduced": (0, 200, 90), "diff": (250, 160, 0),
           "overlay": (0, 120, 250)}
#: Participant-looking text put into every flagged claim's flag detail (the report escapes it).
HOSTILE = "<script>window.pwned = 1</script><img src=x onerror='window.pwned = 2'>"


@dataclass
class SyntheticRun:
    root: Path
    claims: int
    submissions: list[str] = field(default_factory=list)
    with_images: list[str] = field(default_factory=list)
    """Claim keys whose figures are real image files."""
    flagged: list[str] = field(default_factory=list)
    outcomes: dict[str, list[str]] = field(default_factory=dict)
    """Claim key -> the outcome label of each of its lines."""


def _outcome(i: int, rubric: int) -> Outcome:
    return (Outcome.passed, Outcome.failed, Outcome.passed, Outcome.incomplete)[(i + rubric) % 4]


def _image(colour: tuple[int, int, int], text: str) -> Image.Image:
    image = Image.new("RGB", (400, 300), colour)
    ImageDraw.Draw(image).text((10, 10), text, fill=(0, 0, 0))
    return image


def write_synthetic_run(root: Path, n_claims: int, *, images: int = 3) -> SyntheticRun:
    store = RunStore.open(root)
    store.write_info()
    made = SyntheticRun(root=root, claims=n_claims)
    timestamp = datetime(2026, 12, 1, tzinfo=UTC)
    provenance = Provenance(judge="offline", settings={"signals": "synthetic"},
                            timestamp=timestamp, code_version="synthetic")
    image_every = max(1, n_claims // max(1, images))
    for i in range(n_claims):
        submission = f"team-{i // SUBMISSION_SIZE:05d}/repro"
        if i % SUBMISSION_SIZE == 0:
            made.submissions.append(submission)
        figure = i % 5 < 2
        paper = f"paper-{(i // SUBMISSION_SIZE) % 97:03d}"
        key = ClaimKey(submission_id=submission, claim_id=f"{paper}/{'f' if figure else 'n'}{i}")
        flags = [Flag(name="duplicate_figure" if figure else "copied_justification",
                      detail=f"synthetic flag {HOSTILE}")] if i % 37 == 0 else []
        if flags:
            made.flagged.append(str(key))
        artifacts = Artifacts()
        if figure and i >= len(made.with_images) * image_every and len(made.with_images) < images:
            folder = store.paths.diffs / slug(str(key))
            folder.mkdir(parents=True, exist_ok=True)
            paths = claim_images(folder)
            for name, path in paths.items():
                _image(COLOURS[name], f"{name} {key}").save(path)
            artifacts = Artifacts(**{name: path.relative_to(root).as_posix()
                                     for name, path in paths.items()})
            made.with_images.append(str(key))
        rubrics = [FIGURE, VERDICT] if figure else [VERDICT]
        labels = []
        for r, rubric in enumerate(rubrics):
            error = i % 101 == 0 and r == 0
            outcome = _outcome(i, r)
            answers = [CriterionAnswer(criterion_id="same_trend" if rubric is FIGURE else
                                       "justified", status=AnswerStatus.scored,
                                       value=outcome is Outcome.passed,
                                       passed=outcome is Outcome.passed,
                                       rationale=f"synthetic answer {i}")]
            line = Judgment(
                run_id=store.info.run_id, claim=key, paper_id=paper,
                kind=ClaimKind.figure if figure else ClaimKind.number, verdict=Verdict.verified,
                rubric=rubric, judge="offline", input_hash=f"synthetic-{i}-{r}",
                status=LineStatus.error if error else LineStatus.scored,
                reason="synthetic error" if error else None, answers=answers,
                aggregate=Aggregate(score=1.0 if outcome is Outcome.passed else 0.0,
                                    coverage=1.0 if outcome is not Outcome.incomplete else 0.5,
                                    outcome=outcome),
                signals={"pixel.ssim": Signal(value=0.5 + (i % 50) / 100)} if figure else {},
                flags=flags, artifacts=artifacts if rubric is FIGURE else Artifacts(),
                provenance=provenance)
            store.append(line)
            labels.append("error" if error else outcome.value)
        made.outcomes[str(key)] = labels
    store.close()
    return made
