"""The rule of the one reader of a judged run (`rundir.speaking`): which line speaks for the AI
on a (claim, rubric version)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from judging.models import ClaimKey, Judgment, LineStatus, Provenance, RubricRef
from judging.rundir import choose_judgment, speaking_lines

KEY = ClaimKey(submission_id="alice/repro", claim_id="paper/c1")
V1 = RubricRef(id="figure-match", version="1.0.0", hash="sha256:one")
V2 = RubricRef(id="figure-match", version="1.1.0", hash="sha256:two")


def _line(judge: str, *, model: str | None = None, status: LineStatus = LineStatus.scored,
          rubric: RubricRef | None = V1) -> Judgment:
    return Judgment(run_id="r", claim=KEY, rubric=rubric, judge=judge, input_hash=judge,
                    status=status,
                    provenance=Provenance(judge=judge, model=model, code_version="test",
                                          timestamp=datetime(2026, 12, 7, tzinfo=UTC)))


def test_a_panel_speaks_then_an_llm_then_the_offline_judge() -> None:
    offline = _line("offline")
    llm = _line("openai:m", model="m")
    panel = _line("panel(offline×1, openai:m×2)")
    for order in ([offline, llm, panel], [panel, llm, offline], [llm, offline, panel]):
        assert choose_judgment(order) is panel
    assert choose_judgment([offline, llm]) is llm
    # The rank is by what a line is (a model named), not by its judge's name.
    nameless = _line("openai:", model=None)
    assert choose_judgment([nameless, offline]) is nameless  # a tie: the first line
    assert choose_judgment([offline, nameless]) is offline
    assert choose_judgment([offline, nameless, llm]) is llm


def test_a_scored_line_before_a_failed_one_and_ties_in_file_order() -> None:
    failed = _line("openai:a", model="a", status=LineStatus.error)
    scored = _line("openai:b", model="b")
    assert choose_judgment([failed, scored]) is scored
    first, second = _line("panel(openai:z×2)"), _line("panel(openai:a×2)")
    assert choose_judgment([first, second]) is first
    assert choose_judgment([_line("loader", rubric=None)]) is None


def test_one_spoken_line_per_rubric_version_in_version_order() -> None:
    lines = [_line("offline", rubric=V2), _line("offline"), _line("openai:m", model="m"),
             _line("loader", rubric=None)]
    random.Random(0).shuffle(lines)
    spoken = list(speaking_lines(lines))
    assert [(str(s.line.rubric), s.line.judge, len(s.group)) for s in spoken] == \
        [("figure-match@1.0.0", "openai:m", 2), ("figure-match@1.1.0", "offline", 1)]
