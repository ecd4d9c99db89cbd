"""Judge a figure pair the way `judging run --judge offline` does, through stable APIs only.

A pair becomes a submission folder (manifest, figures, optional logs and script) read by the real
intake (`judging.intake.load_folder`), is measured by `judging.run.measure.measure_claim` and judged
by the `OfflineJudge`, completed by `complete_answers` and aggregated by `aggregate`, as
benchmarks/realfig_pairs.py does. The rubric is the newest published figure-match unless a version
is named, so these tests judge whatever the lead publishes next without being edited.
"""

from __future__ import annotations

import asyncio
import io
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from PIL import Image

from judging.intake import load_folder
from judging.judges.base import JudgeTask
from judging.judges.offline import OfflineJudge
from judging.models import AnswerStatus, ClaimInput, CriterionAnswer, Signal, SignalStatus
from judging.rubrics import Rubric, RubricLibrary, aggregate
from judging.run.lines import complete_answers
from judging.run.measure import MeasureOptions, measure_claim

Figure = bytes | Path


def figure_png(fig, *, format: str = "png", **savefig) -> bytes:
    """A matplotlib figure saved (`format`, savefig's options: dpi, pil_kwargs for a JPEG's
    quality) as the bytes a submission's file would hold; the figure is closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format=format, **savefig)
    plt.close(fig)
    return buffer.getvalue()


def png_image(data: bytes) -> Image.Image:
    """Saved figure bytes decoded as an RGB image, the way a submission's file would be read."""
    return Image.open(io.BytesIO(data)).convert("RGB")


def figure_image(fig, *, format: str = "png", **savefig) -> Image.Image:
    """`figure_png` decoded as an RGB image (`png_image`); the figure is closed."""
    return png_image(figure_png(fig, format=format, **savefig))


def load_rubric(rubric_ref: str = "figure-match") -> Rubric:
    """`id@version`, or the newest published version of `id` (figure-match@1.3.0 once published)."""
    library = RubricLibrary()
    if "@" not in rubric_ref:
        rubric_ref = library.latest_entry(rubric_ref).ref_name
    return library.load(rubric_ref)


@dataclass
class Judged:
    """One judged pair. Unpacks as `(outcome, answers, signals)`."""

    outcome: str
    """"pass" | "fail" | "incomplete"."""
    answers: dict[str, CriterionAnswer]
    """criterion id -> answer (every criterion of the rubric, in rubric order)."""
    signals: dict[str, Signal]
    flags: list[str] = field(default_factory=list)
    """The measured flags' names (e.g. "copy")."""
    rubric: str = ""
    figure_error: str | None = None

    def __iter__(self) -> Iterator:
        return iter((self.outcome, self.answers, self.signals))

    def value(self, name: str) -> float | bool | None:
        """A signal's value, None when absent or not measured."""
        signal = self.signals.get(name)
        if signal is None or signal.status is SignalStatus.absent:
            return None
        return signal.value

    def answer(self, criterion_id: str) -> str:
        """An answer in one short word: its value, "unscored" or "n/a"."""
        a = self.answers[criterion_id]
        if a.status is AnswerStatus.unscored:
            return "unscored"
        if a.status is AnswerStatus.not_applicable:
            return "n/a"
        return str(a.value)

    def explain(self) -> str:
        """Every answer with its rationale or reason, and the chart and pixel signals: the text
        an assertion shows when a case goes the wrong way."""
        lines = [f"outcome {self.outcome} under {self.rubric}; flags {self.flags}"]
        if self.figure_error:
            lines.append(f"figure error: {self.figure_error}")
        for a in self.answers.values():
            why = a.reason if a.status is AnswerStatus.unscored else a.rationale
            lines.append(f"  {a.criterion_id}: {self.answer(a.criterion_id)} ({why})")
        for name, signal in self.signals.items():
            if name.startswith(("chart.", "pixel.copy", "pixel.ssim")):
                shown = (f"absent ({signal.reason})" if signal.status is SignalStatus.absent
                         else signal.value)
                lines.append(f"  {name} = {shown}")
        return "\n".join(lines)


def write_figure_submission(folder: Path, published: Figure, reproduced: Figure, *,
                            logs: dict[str, str] | None = None, script: str | None = None,
                            published_name: str = "figures/published.png",
                            reproduced_name: str = "figures/reproduced.png") -> Path:
    """A submission folder with one figure claim; `logs` maps a relative path to its text and
    becomes the claim's evidence.logs, `script` (a source text) its evidence.script `plot.py`."""
    folder.mkdir(parents=True, exist_ok=True)

    def place(figure: Figure, name: str) -> str:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(figure if isinstance(figure, bytes) else Path(figure).read_bytes())
        return name

    evidence: dict = {"logs": []}
    for name, text in (logs or {}).items():
        place(text.encode(), name)
        evidence["logs"].append(name)
    if script is not None:
        evidence["script"] = place(script.encode(), "plot.py")
    claim = {"claim_id": "paper-1/f1", "kind": "figure", "source": "Figure 1",
             "statement": "The reproduced chart shows the same data as the published chart.",
             "verdict": "verified",
             "published_figure": place(published, published_name),
             "reproduced_figure": place(reproduced, reproduced_name),
             "justification": "The reproduced figure was plotted from our own run.",
             "evidence": evidence}
    manifest = {"submission_id": "tester/figtests", "paper_id": "paper-1",
                "agent": {"name": "pytest"}, "human_help": "none", "claims": [claim]}
    (folder / "submission.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False),
                                            encoding="utf-8")
    return folder


def load_claim(folder: Path, claim_id: str | None = None, **load) -> ClaimInput:
    """One claim of a submission folder, read by the real intake."""
    loaded = load_folder(folder, **load)
    assert not loaded.problems, loaded.problems
    claims = [c for c in loaded.claims if claim_id is None or c.claim.claim_id == claim_id]
    assert len(claims) == 1, [c.claim.claim_id for c in loaded.claims]
    return claims[0]


def judge_claim(claim: ClaimInput, rubric_ref: str = "figure-match") -> Judged:
    """Measure one claim and judge it with the offline judge under `rubric_ref`."""
    rubric = load_rubric(rubric_ref)
    measured = measure_claim(claim, options=MeasureOptions())
    answered = asyncio.run(OfflineJudge()(JudgeTask(claim=claim, rubric=rubric,
                                                    signals=measured.signals, images={})))
    answers = complete_answers(rubric, claim, answered.answers)
    outcome = aggregate(rubric, answers).outcome.value
    return Judged(outcome=outcome, answers={a.criterion_id: a for a in answers},
                  signals=dict(measured.signals), flags=[f.name for f in measured.flags],
                  rubric=rubric.ref_name, figure_error=measured.figure_error)


def judge_figure_pair(published_png: Figure, reproduced_png: Figure,
                      rubric_ref: str = "figure-match", *, folder: Path | None = None,
                      **submission) -> Judged:
    """Judge a (published, reproduced) pair, given as image bytes or paths; unpacks as
    `(outcome, answers, signals)`. `submission` goes to write_figure_submission (logs, script,
    file names). The submission is written under `folder`, else in a temporary folder removed
    afterwards."""
    if folder is not None:
        return judge_claim(load_claim(write_figure_submission(
            folder, published_png, reproduced_png, **submission)), rubric_ref)
    with tempfile.TemporaryDirectory(prefix="figure-pair-") as tmp:
        return judge_figure_pair(published_png, reproduced_png, rubric_ref,
                                 folder=Path(tmp) / "submission", **submission)
