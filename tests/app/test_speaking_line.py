"""The dashboard and the leaderboard show the AI's line that resolve decides from (issue 43).

A claim judged twice, by two panels (offline + an LLM judge that passes everything, then offline
+ one that fails everything): both panel lines stay newest for their identities. The run reader
(`rundir.speaking`) lets the first in the run's file order speak; the dashboard used to rank by
judge name and took the other panel, so its "AI figure-match" said fail where resolve's AI said
pass. Judged through the real `openai` client over HTTP to the local fake server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judging.app.data import load_dataset_folder, load_run
from judging.judges.openai import LLMOptions
from judging.resolve import resolve_run
from judging.resolve.intervals import run_claim_rows
from judging.run.runner import RunRequest, run_judging
from judging.rundir import RunStore
from judging.testing.fake_openai import FakeOpenAI, default_policy
from tests.conftest import REGISTRY, SUBMISSIONS, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

#: Judged first: its panel is first in file order and speaks. Named so that it sorts last.
PASSING = "fake-zeta"
#: Judged second: its panel sorts first by name (the old dashboard rule's pick).
FAILING = "fake-alpha"


def _policy(request: dict) -> str:
    """The default scripted judge, except that FAILING answers every criterion no / level 1."""
    answers = json.loads(default_policy(request))
    if request.get("model") == FAILING:
        for answer in answers.values():
            if isinstance(answer, dict) and "answer" in answer:
                answer["answer"] = "no" if answer["answer"] in ("yes", "no") else "1"
    return json.dumps(answers)


def _judge_twice(out: Path, url: str) -> None:
    for model in (PASSING, FAILING):
        run_judging(RunRequest(
            sources=[str(SUBMISSIONS / "alice-neurips26-4821")], out=out, registry=REGISTRY,
            rubrics=["figure-match"], judges=["offline", f"openai:{model}"],
            measure_cache=module_measure_cache(),
            llm=LLMOptions(base_url=url, api_key="sk-test-not-a-secret", max_retries=0,
                           timeout=10.0)))


def test_dashboard_and_leaderboard_show_the_line_resolve_decides_from(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(_policy) as fake:
        _judge_twice(out, fake.url)
    decisions, _ = resolve_run(out, calibration_dir=tmp_path / "no-calibration")
    lines = RunStore.open(out, create=False).latest()
    spoke = {(str(d.claim), str(d.rubric)): d.ai_judge for d in decisions}
    data = load_run(out, calibration_dir=tmp_path / "no-calibration")
    rows = {row.key: row for row in run_claim_rows(out)}
    from judging.publish import stage

    space = load_dataset_folder(stage(out, out=tmp_path / "staged",
                                      calibration_dir=tmp_path / "no-calibration",
                                      repo_id="org/verdicts").folder)
    figure_claims = sorted({str(j.claim) for j in lines if j.rubric.id == "figure-match"})
    assert len(figure_claims) == 2
    disagreeing = 0
    for key in figure_claims:
        panels = [j for j in lines if str(j.claim) == key and j.judge.startswith("panel(")]
        assert [p.judge for p in panels] == [f"panel(offline×1, openai:{PASSING}×1)",
                                             f"panel(offline×1, openai:{FAILING}×1)"]
        outcomes = {p.judge: p.aggregate.outcome.value for p in panels}
        # The two old rules disagree: resolve took the first panel in file order, the
        # dashboard the first by name.
        chosen = spoke[(key, str(panels[0].rubric))]
        assert chosen == panels[0].judge != min(outcomes)
        disagreeing += outcomes[chosen] != outcomes[min(outcomes)]
        # The dashboard (run directory and published dataset) and the leaderboard's AI column
        # show the outcome of the line resolve decided from.
        assert data.claims[key].figure_match_ai_outcome() == outcomes[chosen]
        assert space.claims[key].figure_match_ai_outcome() == outcomes[chosen]
        assert [j.judge for j in data.claims[key].judgments if j.speaks] == [chosen]
        assert [j.judge for j in space.claims[key].judgments if j.speaks] == [chosen]
        assert rows[key].ai == outcomes[chosen]
    # On Alice's first figure (a faithful reproduction) the two panels' outcomes differ (pass
    # against fail): the old dashboard showed fail where resolve's AI said pass.
    assert disagreeing == 1
