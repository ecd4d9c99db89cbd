"""The copy rule and the re-run evidence it reads: a copy fails independent reproduction, an
identical re-render whose logs show the plotting script re-run is left to a human."""

from __future__ import annotations

import pytest

from judging.intake.manifest import load_submission
from judging.models import ClaimInput, Signal
from judging.rules import RULES, not_a_copy, plotting_rerun
from tests.conftest import SubmissionBuilder

FIGURE = "paper-1_f1_repro.png"
PLOTS = f"import matplotlib.pyplot as plt\nplt.savefig('figures/{FIGURE}')\n"


def _claim(submission: SubmissionBuilder, *, scripts: dict[str, str] | None = None,
           logs: dict[str, str] | None = None) -> ClaimInput:
    names = [submission.file(name, text) for name, text in (scripts or {}).items()]
    evidence: dict = {"logs": [submission.file(name, text) for name, text in (logs or {}).items()]}
    if names:
        evidence["script"], evidence["scripts"] = names[0], names[1:]
    submission.figure_claim(published=b"not read", reproduced=b"not read", evidence=evidence)
    (claim,) = load_submission(submission.write()).claims
    return claim


def _signals(copy: bool, rerender: bool | None) -> dict[str, Signal]:
    signals = {"pixel.copy": Signal(value=copy)}
    if rerender is not None:
        signals["pixel.identical_rerender"] = Signal(value=rerender)
    return signals


def test_the_rule_is_registered() -> None:
    assert RULES["not_a_copy"] is not_a_copy


def test_an_identical_rerender_is_left_to_a_human(submission: SubmissionBuilder) -> None:
    claim = _claim(submission, scripts={"plot.py": PLOTS},
                   logs={"logs/plot.txt": f"step 10\nwrote figures/{FIGURE} (300 dpi)\n"})
    result = not_a_copy(claim, _signals(copy=False, rerender=True))
    assert result.value is None
    assert result.rationale.startswith("pixel-identical, but the logs show ")
    assert f'"wrote figures/{FIGURE} (300 dpi)"' in result.rationale
    assert result.rationale.endswith("a human should confirm a bit-exact re-run")


def test_a_copy_fails_and_a_rerender_passes(submission: SubmissionBuilder) -> None:
    claim = _claim(submission)
    copied = not_a_copy(claim, _signals(copy=True, rerender=False))
    assert copied.value is False and copied.confidence < 1
    assert "no cited log shows its plotting script re-run" in copied.rationale
    assert not_a_copy(claim, _signals(copy=False, rerender=False)).value is True
    # Judgments measured before pixel.identical_rerender existed read as before.
    assert not_a_copy(claim, _signals(copy=True, rerender=None)).value is False
    unavailable = not_a_copy(claim, {"pixel.copy": Signal.absent("no reproduced figure")})
    assert unavailable.value is None and "no reproduced figure" in unavailable.rationale


def test_a_log_naming_the_figure_is_preferred(submission: SubmissionBuilder) -> None:
    claim = _claim(submission, scripts={"train.py": "print(1)\n", "plot.py": PLOTS},
                   logs={"logs/run.txt": "$ python plot.py\nsaved figures/" + FIGURE + "\n"})
    evidence = plotting_rerun(claim)
    assert evidence is not None
    assert evidence.line == f"saved figures/{FIGURE}" and evidence.script == "plot.py"
    assert evidence.log == "logs/run.txt"


def test_a_command_running_the_plotting_script_counts(submission: SubmissionBuilder) -> None:
    claim = _claim(submission, scripts={"scripts/make_fig.py": PLOTS},
                   logs={"logs/run-1.txt": "command: python scripts/make_fig.py --out figures\n"
                                           "exit code: 0\n--- output ---\ndone\n"})
    evidence = plotting_rerun(claim)
    assert evidence is not None and evidence.line.startswith("command: python scripts/make_fig.py")


@pytest.mark.parametrize("scripts, logs", [
    ({}, {"logs/a.txt": f"saved figures/{FIGURE}\n"}),                     # no script cited
    ({"train.py": "print(1)\n"}, {"logs/a.txt": f"saved figures/{FIGURE}\n"}),  # none plots
    ({"plot.py": PLOTS}, {}),                                                # no log
    ({"plot.py": PLOTS}, {"logs/a.txt": "loss 0.2\n"}),                      # log says nothing
    ({"plot.py": PLOTS}, {"logs/a.txt": f"command: python plot.py\nexit code: 2\n{FIGURE}\n"}),
    ({"plot.py": PLOTS}, {"logs/a.txt": f"saved figures/old_{FIGURE}\n"}),   # another file
])
def test_no_rerun_without_a_plotting_script_and_a_log_of_it(submission: SubmissionBuilder,
                                                            scripts: dict, logs: dict) -> None:
    assert plotting_rerun(_claim(submission, scripts=scripts, logs=logs)) is None


def test_a_script_that_names_the_figure_counts_as_plotting(submission: SubmissionBuilder) -> None:
    # Saved through a helper of the project's own: the figure's file name is in the script.
    claim = _claim(submission, scripts={"fig.py": f"helpers.export('{FIGURE}')\n"},
                   logs={"logs/a.txt": f"exported {FIGURE}\n"})
    assert plotting_rerun(claim) is not None
