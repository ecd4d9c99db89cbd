"""The judge registry (judging/judges/registry.py): a backend registered in its table is made,
checked before the first call and closed by `judging run` and by `judging calibrate --retest`,
with no code of its own outside the table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from judging.calibrate.retest import retest_run
from judging.judges import (
    BACKENDS,
    Backend,
    JudgeConfigError,
    JudgeContext,
    OfflineJudge,
    UnknownJudgeSpec,
    extracts,
    make_extractor,
    make_judge,
)
from judging.run.runner import RunRequest, run_judging
from tests.conftest import RUBRICS, SubmissionBuilder

VERDICT = "verdict-justification@1.2.0"


class CountedJudge(OfflineJudge):
    """The offline judge's answers under another backend's name, counting what the stages ask
    of a judge besides answers."""

    events: list[str] = []

    def __init__(self, name: str) -> None:
        super().__init__()
        self.spec, self.model = f"counted:{name}", name

    def preflight(self) -> None:
        self.events.append(f"preflight {self.spec}")

    async def close(self) -> None:
        self.events.append(f"close {self.spec}")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    events: list[str] = []
    monkeypatch.setattr(CountedJudge, "events", events)
    monkeypatch.setitem(BACKENDS, "counted", Backend(
        "counted:NAME", lambda name, context: CountedJudge(name)))
    return events


def test_a_registered_backend_is_checked_closed_and_retested(tmp_path: Path,
                                                             counted: list[str]) -> None:
    sub = SubmissionBuilder(tmp_path / "src", "team/p", "p")
    for i in range(4):
        sub.number_claim(f"p/c{i}", reported=80.0, reproduced=80.0 if i % 2 == 0 else 70.0,
                         statement=f"Claim {i}: accuracy is 80.0% on split {i}")
    out = tmp_path / "run"
    run_judging(RunRequest(sources=[str(sub.write())], out=out, rubrics=[VERDICT],
                           judges=["counted:a", "counted:a", "offline"], rubrics_dir=RUBRICS))
    # Checked once per spec before the first call; every judge made is closed.
    assert counted == ["preflight counted:a", "close counted:a", "close counted:a"]
    judged = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert {line["judge"] for line in judged} >= {"counted:a", "offline"}

    counted.clear()
    done = retest_run(out, 3, seed=1, judges=["counted:a"], rubrics_dir=RUBRICS)
    assert done.written == 3 and done.failed == 0
    assert counted == ["close counted:a"]  # made again through the table, and closed
    retests = [json.loads(line) for line in (out / "retests.jsonl").read_text().splitlines()]
    assert {r["line"]["judge"] for r in retests} == {"counted:a"}


def test_unknown_specs_name_the_backends_there_are() -> None:
    with pytest.raises(UnknownJudgeSpec, match=r"unknown judge 'nothing:x': use 'offline' or "
                                               r"'openai:MODEL'"):
        make_judge("nothing:x")
    with pytest.raises(UnknownJudgeSpec, match=r"'offline:x'"):
        make_judge("offline:x")
    with pytest.raises(JudgeConfigError, match=r"unknown extractor 'offline': use "
                                               r"'openai:MODEL'$"):
        make_extractor("offline")
    assert extracts("openai:m") and not extracts("offline") and not extracts("nothing:m")


def test_a_runs_openai_judges_share_one_connection_pool() -> None:
    context = JudgeContext(connections=4)
    first, second = make_judge("openai:a", context), make_judge("openai:b", context)
    assert first.endpoint is second.endpoint  # type: ignore[attr-defined]
    assert first.endpoint.connections == 4  # type: ignore[attr-defined]
    alone = make_judge("openai:a")
    assert alone.endpoint is not first.endpoint  # type: ignore[attr-defined]
    asyncio.run(context.close())
