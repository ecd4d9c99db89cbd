"""Property-based tests (hypothesis) of the loaders, the aggregation and the signal functions.

Deterministic and bounded for CI: `derandomize=True`, no example database, a small number of
examples per property (the whole file runs in well under 30 s). Examples that once found a bug
are kept as explicit `@example`s.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from judging.errors import ManifestError, RubricError
from judging.intake.manifest import load_submission
from judging.models import (
    AnswerStatus,
    Claim,
    ClaimInput,
    ClaimKey,
    CriterionAnswer,
    Outcome,
    Signal,
    SignalStatus,
    SubmissionHeader,
    Tolerance,
)
from judging.rubrics import Rubric, aggregate, parse_rubric_text
from judging.rules import number_in_text
from judging.signals import agreement, compare_figures, measure_numbers

from .test_rubrics import MINIMAL


def bounded(max_examples: int) -> settings:
    return settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# --- the manifest loader ----------------------------------------------------------------------

HEADER = "submission_id: prop/sub\npaper_id: paper-1\n"
CLAIM_KEYS = ["claim_id", "kind", "statement", "source", "published_figure", "reproduced_figure",
              "reported_value", "reproduced_value", "values", "tolerance", "verdict",
              "justification", "scale_note", "evidence"]
OTHER_KEYS = ["submission_id", "paper_id", "paper_title", "agent", "human_help", "claims",
              "absolute", "relative", "script", "logs", "proof_script", "problem_kind",
              "problem_note", "name", "reported", "reproduced", "model"]
#: Paths that exist, escape, loop, or are special files in the folder built below.
PATHS = ["run.py", "logs/run.txt", "figures/a.png", "logs", "missing.txt", "../outside.txt",
         "logs/../run.py", "/etc/passwd", "C:\\x.txt", "out-link.txt", "out-dir/secret.txt",
         "loop.txt", "pipe.txt", "in-link.txt", " run.py", "a\x00b", "a\nb", "./run.py",
         "logs//run.txt", "figures/", "\\\\server\\share\\x"]
WORDS = ["figure", "number", "table", "theorem", "verified", "falsified", "inconclusive",
         "paper-error", "code-bug", "other", "none", "light", "prop/sub", "paper-1", "c1", "c 1",
         "c1::x", "é", "\x1b[2J", "", " ", "2001-13-01"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30),
    st.floats(), st.text(max_size=20), st.sampled_from(PATHS), st.sampled_from(WORDS))
json_like = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(CLAIM_KEYS + OTHER_KEYS), st.text(max_size=8),
                                  st.integers(-3, 3), st.none(), st.booleans()),
                        children, max_size=6)),
    max_leaves=25)


@st.composite
def claims(draw: st.DrawFn) -> object:
    """Mostly-valid claims of every kind, with some fields dropped or replaced by junk."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_like)
    kind = draw(st.sampled_from(["figure", "number", "table", "theorem"]))
    claim: dict[object, object] = {
        "claim_id": draw(st.sampled_from(["c1", "c2", "p/c3", "c 4", "c1"])), "kind": kind,
        "statement": "s", "verdict": draw(st.sampled_from(["verified", "falsified",
                                                           "inconclusive"])),
        "evidence": {"script": draw(st.sampled_from(PATHS)),
                     "logs": draw(st.lists(st.sampled_from(PATHS), max_size=3))}}
    if kind == "figure":
        claim["published_figure"] = draw(st.sampled_from(PATHS))
        claim["reproduced_figure"] = draw(st.sampled_from(PATHS))
    elif kind == "number":
        claim["reported_value"] = draw(st.floats())
        claim["reproduced_value"] = draw(st.floats())
        claim["tolerance"] = draw(st.sampled_from([{"absolute": 0.5}, {"relative": 0.01},
                                                   {"absolute": -1}, {}, None]))
    elif kind == "table":
        claim["values"] = [{"name": draw(st.sampled_from(WORDS)), "reported": 1.0,
                            "reproduced": draw(st.floats())}]
    for key in draw(st.lists(st.sampled_from(CLAIM_KEYS + OTHER_KEYS), max_size=3)):
        if draw(st.booleans()):
            claim.pop(key, None)
        else:
            claim[key] = draw(json_like)
    return claim


manifests = st.one_of(
    json_like,
    st.builds(lambda header, items: {**header, "claims": items},
              st.sampled_from([{"submission_id": "prop/sub", "paper_id": "paper-1"},
                               {"submission_id": "prop/sub", "paper_id": "paper-1",
                                "agent": {"name": "x"}, "human_help": "none"},
                               {"submission_id": "prop sub", "paper_id": "p"}]),
              st.lists(claims(), max_size=6)))

TOKENS = list("abc:-[]{},&*!|>'\"#%@`?\n \t0123456789.eE+_/\\") + [
    "claims:\n", "  - ", "claim_id: c1\n", "kind: number\n", "verdict: verified\n",
    "reproduced_value: ", "evidence: {logs: [", "]}\n", "!!int ", "!!float ", "!!timestamp ",
    "!!binary ", "!!python/object:os.system ", "!!set ", "&a ", "*a ", "<<: ", "2001-13-01",
    "9" * 5000, "\x00", "\x1b", "\ufeff", "é", "\x85", "\u2028", "---\n", "...\n", "%YAML 1.1\n",
    "? ", ".nan", ".inf", "~", "null", "0x1F", "0o17", "1_000", "190:20:30", "'", "\"\\x00\""]
yamlish = st.builds(lambda prefix, tokens: prefix + "".join(tokens),
                    st.sampled_from(["", HEADER, HEADER + "claims:\n  - "]),
                    st.lists(st.sampled_from(TOKENS), max_size=40))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A submission folder with real files, symlinks leaving it, a loop and a FIFO."""
    root = tmp_path_factory.mktemp("prop-sub")
    outside = tmp_path_factory.mktemp("prop-outside")
    (outside / "secret.txt").write_text("secret")
    (root / "logs").mkdir()
    (root / "figures").mkdir()
    (root / "run.py").write_text("print(1)\n")
    (root / "logs" / "run.txt").write_text("final 93.8\n")
    (root / "figures" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    os.symlink(outside / "secret.txt", root / "out-link.txt")
    os.symlink(outside, root / "out-dir")
    os.symlink("loop.txt", root / "loop.txt")
    os.symlink("run.py", root / "in-link.txt")
    os.mkfifo(root / "pipe.txt")
    return root


def _check_load(folder: Path, n_claims: int | None) -> None:
    try:
        loaded = load_submission(folder)
    except ManifestError as exc:
        assert str(exc).strip()
        return
    if n_claims is not None:  # every claim is accounted for, once
        assert len(loaded.claims) + len(loaded.problems) == n_claims
    for problem in loaded.problems:
        assert problem.reason.strip()
    ids = [c.claim.claim_id for c in loaded.claims]
    assert len(ids) == len(set(ids))
    root = folder.resolve()
    for claim in loaded.claims:
        paths = [claim.published_path, claim.reproduced_path, *claim.evidence_paths.values()]
        for path in paths:
            if path is not None:
                assert path.resolve().is_relative_to(root), path
                assert not path.is_symlink()


def _write_manifest(folder: Path, text: str, name: str = "submission.yaml") -> None:
    for old in ("submission.yaml", "submission.json"):
        (folder / old).unlink(missing_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


@bounded(120)
@given(data=manifests, as_json=st.booleans())
@example(data={"submission_id": "prop/sub", "paper_id": "paper-1",
               "claims": [{"claim_id": "c1", "kind": "number", "statement": "s",
                           "verdict": "verified", "reproduced_value": 1.0,
                           "evidence": {"logs": ["loop.txt"]}}]}, as_json=False)  # loop: crash
@example(data={"submission_id": "prop/sub", "paper_id": "paper-1",
               "claims": [{"claim_id": "c1", "kind": "number", "statement": "s",
                           "verdict": "verified", "reproduced_value": 1.0,
                           "evidence": {"logs": ["pipe.txt"]}}]}, as_json=False)  # FIFO: hang
def test_manifest_loader_never_crashes_on_data(folder: Path, data: object, as_json: bool) -> None:
    if as_json:
        try:
            text = json.dumps(data)
        except (TypeError, ValueError):  # non-string keys JSON cannot hold
            return
        _write_manifest(folder, text, "submission.json")
    else:
        _write_manifest(folder, yaml.safe_dump(data, allow_unicode=True))
    claims_list = data.get("claims") if isinstance(data, dict) else None
    _check_load(folder, len(claims_list) if isinstance(claims_list, list) else None)


@bounded(150)
@given(text=yamlish)
@example(text=HEADER + "claims: []\nsubmitted: 2001-13-01\n")  # ValueError from PyYAML: crash
@example(text=HEADER + "claims: []\nseed: " + "9" * 5000 + "\n")  # int > 4300 digits: crash
@example(text=HEADER + "claims: []\nseed: !!timestamp x\n")  # AttributeError: crash
@example(text="!!int ")  # IndexError: crash (found by hypothesis)
@example(text="!!float a")  # ValueError: crash (found by hypothesis)
@example(text=HEADER + "claims: []\nseed: !!bool x\n")  # KeyError: crash
@example(text=HEADER + "paper_title: \"a\\0b\"\nclaims: []\n")
def test_manifest_loader_never_crashes_on_text(folder: Path, text: str) -> None:
    _write_manifest(folder, text)
    _check_load(folder, None)


# --- the rubric loader and the aggregation ----------------------------------------------------

RUBRIC_TOKENS = TOKENS + ["id: demo\n", "version: \"1.0.0\"\n", "version: 1.0\n",
                          "applies_to: verdict\n", "criteria:\n", "scale: ordinal\n",
                          "scale: binary\n", "levels: {1: a, 2: b, 3: c}\n", "pass_at: 2\n",
                          "weight: -1\n", "gate: true\n", "offline: {rule: nope}\n",
                          "offline: {signal: pixel.ssim, better: higher, pass_at: 0.8}\n",
                          "pass_threshold: 2\n"]


@st.composite
def mutated_rubric(draw: st.DrawFn) -> str:
    text = MINIMAL
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:position] + draw(st.sampled_from(RUBRIC_TOKENS)) + text[position:]
        else:
            text = text[:position] + text[position + draw(st.integers(1, 12)):]
    return text


rubric_texts = st.one_of(
    mutated_rubric(),
    st.lists(st.sampled_from(RUBRIC_TOKENS), max_size=40).map("".join),
    st.text(max_size=200))


def _yaml_is_broken(text: str) -> bool:
    try:  # the loader's own parser: libyaml and pure-Python PyYAML differ on tabs, for one
        yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    except Exception:  # noqa: BLE001 - PyYAML lets ValueError, IndexError, KeyError... through
        return True
    return False


@bounded(200)
@given(text=rubric_texts)
@example(text=MINIMAL + "x: 2001-13-01\n")
@example(text="!!int")
@example(text="a: 1\n? [x]\n: 2\n")  # unhashable key: a located error, not "cannot be read"
@example(text="\x1f")  # a two-line error message (found by hypothesis)
@example(text="a: \x00")
@example(text=MINIMAL.replace("id: demo", "id: &x demo"))
def test_rubric_loader_returns_a_rubric_or_a_located_error(text: str) -> None:
    try:
        rubric = parse_rubric_text(text, path="prop.yaml")
    except RubricError as exc:
        message = str(exc)
        assert message.startswith("prop.yaml") and "\n" not in message
        if _yaml_is_broken(text) or "anchors and aliases" in message:
            assert exc.line is not None, message
        return
    assert isinstance(rubric, Rubric)
    assert not _yaml_is_broken(text)


@st.composite
def rubrics(draw: st.DrawFn) -> Rubric:
    criteria = []
    for i in range(draw(st.integers(1, 6))):
        criterion: dict[str, object] = {
            "id": f"c{i}", "question": f"Is criterion number {i} met?",
            "weight": draw(st.floats(0.05, 10)), "gate": draw(st.booleans())}
        if draw(st.booleans()):
            criterion["scale"] = "binary"
        else:
            n = draw(st.integers(3, 7))
            criterion.update(scale="ordinal", levels={k: f"level {k}" for k in range(1, n + 1)},
                             pass_at=draw(st.integers(2, n)))
        criteria.append(criterion)
    return Rubric.model_validate({
        "id": "prop", "version": "1.0.0", "applies_to": "verdict", "title": "Prop",
        "instructions": "Judge the claim carefully.", "criteria": criteria,
        "pass_threshold": draw(st.floats(0.01, 1.0))})


def _top(criterion) -> bool | int:  # noqa: ANN001
    return True if criterion.scale == "binary" else criterion.n_levels


@st.composite
def rubric_and_answers(draw: st.DrawFn) -> tuple[Rubric, list[CriterionAnswer]]:
    rubric = draw(rubrics())
    answers = []
    for criterion in rubric.criteria:
        status = draw(st.sampled_from(["scored", "scored", "scored", "unscored",
                                       "not_applicable", "missing"]))
        if status == "missing":
            continue
        if status == "scored":
            value = (draw(st.booleans()) if criterion.scale == "binary"
                     else draw(st.integers(1, criterion.n_levels)))
            answers.append(CriterionAnswer(criterion_id=criterion.id,
                                           status=AnswerStatus.scored, value=value,
                                           passed=criterion.passes(value)))
        else:
            answers.append(CriterionAnswer(criterion_id=criterion.id,
                                           status=AnswerStatus(status), reason="n/a"))
    return rubric, answers


@bounded(300)
@given(case=rubric_and_answers())
def test_aggregate_invariants(case: tuple[Rubric, list[CriterionAnswer]]) -> None:
    rubric, answers = case
    result = aggregate(rubric, answers)
    assert result.score is None or 0.0 <= result.score <= 1.0
    assert 0.0 <= result.coverage <= 1.0
    scored = [a for a in answers if a.status is AnswerStatus.scored]
    assert (result.score is None) == (not scored)
    if result.outcome is Outcome.passed:
        assert result.coverage == 1.0 and not result.failed_gates
        assert result.score is not None and result.score >= rubric.pass_threshold - 1e-9
    if result.failed_gates:
        assert result.outcome is Outcome.failed
    if result.coverage < 1.0 and not result.failed_gates:
        assert result.outcome is Outcome.incomplete

    # monotonicity: raising any one scored answer never lowers the score, never un-passes
    for index, answer in enumerate(answers):
        if answer.status is not AnswerStatus.scored:
            continue
        criterion = rubric.criterion(answer.criterion_id)
        if answer.value == _top(criterion):
            continue
        better = True if criterion.scale == "binary" else int(answer.value) + 1
        raised = [*answers]
        raised[index] = answer.model_copy(update={"value": better,
                                                  "passed": criterion.passes(better)})
        after = aggregate(rubric, raised)
        assert after.score is not None and result.score is not None
        assert after.score >= result.score
        assert after.coverage == result.coverage
        if result.outcome is Outcome.passed:
            assert after.outcome is Outcome.passed


@bounded(100)
@given(rubric=rubrics())
def test_all_top_answers_score_one_and_pass(rubric: Rubric) -> None:
    answers = [CriterionAnswer(criterion_id=c.id, status=AnswerStatus.scored, value=_top(c),
                               passed=True) for c in rubric.criteria]
    result = aggregate(rubric, answers)
    assert result.score == 1.0 and result.coverage == 1.0
    assert result.outcome is Outcome.passed and not result.failed_gates


# --- signals ----------------------------------------------------------------------------------


@st.composite
def figures(draw: st.DrawFn) -> Image.Image:
    """Small images of several kinds (drawn from a seed: fast to generate, easy to shrink)."""
    width, height = draw(st.integers(8, 200)), draw(st.integers(8, 200))
    mode = draw(st.sampled_from(["RGB", "L"]))
    style = draw(st.sampled_from(["noise", "constant", "blocks", "lines", "dots"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    channels = 3 if mode == "RGB" else 1
    if style == "noise":
        array = rng.integers(0, 256, (height, width, channels), dtype=np.uint8)
    elif style == "constant":
        array = np.broadcast_to(rng.integers(0, 256, channels, dtype=np.uint8),
                                (height, width, channels)).copy()
    elif style == "blocks":
        small = rng.integers(0, 256, (rng.integers(1, 6), rng.integers(1, 6), channels),
                             dtype=np.uint8)
        array = np.asarray(Image.fromarray(small.squeeze(-1) if channels == 1 else small)
                           .resize((width, height), Image.Resampling.NEAREST))
    else:
        image = Image.new(mode, (width, height), "white")
        pen = ImageDraw.Draw(image)
        for _ in range(rng.integers(1, 6)):
            colour = tuple(int(c) for c in rng.integers(0, 256, channels))
            points = [(int(rng.integers(0, width)), int(rng.integers(0, height)))
                      for _ in range(2)]
            if style == "lines":
                pen.line(points, fill=colour if channels == 3 else colour[0],
                         width=int(rng.integers(1, 4)))
            else:
                pen.point(points, fill=colour if channels == 3 else colour[0])
        return image
    array = array.reshape(height, width, channels)
    return Image.fromarray(array.squeeze(-1) if channels == 1 else array, mode)


def _check_signals(signals) -> None:  # noqa: ANN001
    assert -1.0 <= signals.ssim <= 1.0 + 1e-9
    assert signals.edge_f1 is None or 0.0 <= signals.edge_f1 <= 1.0
    assert 0.0 <= signals.palette_distance <= 1.0 + 1e-9
    assert 0.0 <= signals.phash_distance <= 1.0
    assert 0.0 <= signals.mean_abs_diff <= 1.0
    assert isinstance(signals.copy, bool)


@bounded(25)
@given(a=figures(), b=figures())
@example(a=Image.new("L", (8, 200), 255), b=Image.new("RGB", (200, 8), "black"))
def test_compare_figures_never_raises_and_stays_in_range(a: Image.Image, b: Image.Image) -> None:
    comparison = compare_figures(a, b)
    _check_signals(comparison.signals)
    assert comparison.published.size == comparison.reproduced.size == comparison.diff.size


@bounded(25)
@given(a=figures())
def test_a_figure_compared_with_itself_scores_top(a: Image.Image) -> None:
    signals = compare_figures(a, a.copy()).signals
    _check_signals(signals)
    assert signals.ssim == pytest.approx(1.0, abs=1e-6)
    assert signals.edge_f1 in (None, 1.0)
    assert signals.palette_distance == 0.0 and signals.phash_distance == 0.0
    assert signals.mean_abs_diff == 0.0 and signals.copy is True


finite = st.floats(allow_nan=False, allow_infinity=False)
tolerances = st.one_of(
    st.none(),
    st.builds(lambda x: Tolerance(absolute=x), st.floats(0, 1e6)),
    st.builds(lambda x: Tolerance(relative=x), st.floats(0, 10)))


@bounded(300)
@given(reported=finite, reproduced=finite, tolerance=tolerances)
@example(reported=94.1, reproduced=93.6, tolerance=Tolerance(absolute=0.5))
@example(reported=1e308, reproduced=-1e308, tolerance=Tolerance(absolute=0.5))
def test_numeric_agreement_invariants(reported: float, reproduced: float,
                                      tolerance: Tolerance | None) -> None:
    found = agreement(reported=reported, reproduced=reproduced, tolerance=tolerance)
    swapped = agreement(reported=reproduced, reproduced=reported, tolerance=tolerance)
    assert found.abs_diff == swapped.abs_diff >= 0
    assert (found.rel_diff is None) == (reported == 0)
    if tolerance is None:
        assert found.within is None
    elif tolerance.absolute is not None:
        if found.abs_diff <= tolerance.absolute:
            assert found.within is True
        elif found.abs_diff > tolerance.absolute + 1e-6 * max(1.0, abs(reported)):
            assert found.within is False
    elif reported == 0:
        assert found.within is (reproduced == 0)
    else:
        assert found.rel_diff is not None
        if found.rel_diff <= tolerance.relative:
            assert found.within is True
        elif found.rel_diff > tolerance.relative + 1e-6:
            assert found.within is False


@bounded(200)
@given(reported=finite, reproduced=finite, tolerance=tolerances)
@example(reported=1e308, reproduced=-1e308, tolerance=Tolerance(absolute=0.5))  # inf -> null
@example(reported=1e-300, reproduced=1e300, tolerance=None)  # rel_diff overflows
@example(reported=6.816413959971242e-307, reproduced=123.0, tolerance=None)  # found by hypothesis
def test_number_signals_are_finite_and_survive_json(reported: float, reproduced: float,
                                                    tolerance: Tolerance | None) -> None:
    """Every stored signal round-trips through JSON: an overflowing difference written as null
    once made the whole run directory unreadable."""
    claim = Claim(claim_id="c1", kind="number", statement="s", verdict="verified",
                  reported_value=reported, reproduced_value=reproduced, tolerance=tolerance)
    signals = measure_numbers(ClaimInput(
        key=ClaimKey(submission_id="s", claim_id="c1"),
        submission=SubmissionHeader(submission_id="s", paper_id="p"), claim=claim,
        root=Path(".")))
    for name, signal in signals.items():
        if signal.status is SignalStatus.ok and isinstance(signal.value, float):
            assert math.isfinite(signal.value), name
        assert Signal.model_validate_json(signal.model_dump_json()) == signal, name


reasonable = st.builds(lambda x, d: round(x, d), st.floats(-1e9, 1e9), st.integers(0, 6))


@bounded(300)
@given(value=reasonable, decimals=st.integers(0, 6), noise=st.sampled_from(["", "loss ", "x="]))
@example(value=93.8, decimals=2, noise="top1 ")
@example(value=-0.0, decimals=0, noise="")
@example(value=1e-05, decimals=6, noise="")
def test_a_number_is_found_where_it_is_written(value: float, decimals: int, noise: str) -> None:
    assert number_in_text(value, f"{value}")
    assert number_in_text(value, f"{noise}{value}, epoch 3")
    shown = f"{value:.{decimals}f}"
    if float(shown) == value:  # written with at least the value's own precision
        assert number_in_text(value, f"{noise}{shown}\n")


@bounded(300)
@given(value=finite, other=finite)
@example(value=1e307, other=93.8)  # value * 100 overflowed to inf, and inf <= inf matched
@example(value=-1.7e308, other=1.0)
@example(value=1.797693134862316e+306, other=1.0)  # found by hypothesis
def test_a_number_is_not_found_in_unrelated_numbers(value: float, other: float) -> None:
    small, large = sorted((abs(value), abs(other)))
    if small < 1.0 or large / small <= 1000:
        return  # close in scale: might legitimately match (as a percentage, rounded...)
    assert not number_in_text(value, f"the log says {other}")


# --- the ranking ------------------------------------------------------------------------------
# The leaderboard's stated properties (docs/explanation/ranking.md), on random boards through
# `build_leaderboard`, the one function every leaderboard view ranks with. A claim here is
# (outcome, the AI's outcome while it waits, flagged a copy of the published figure).

from judging.models import NotAddressed  # noqa: E402
from judging.resolve import ClaimDecision, build_leaderboard, no_claim_passes, rule_lines  # noqa: E402

RANK_OUTCOMES = ["pass", "fail", "pending", "incomplete", "not_addressed"]
ranked_claim = st.tuples(st.sampled_from(RANK_OUTCOMES),
                         st.sampled_from([None, "pass", "fail", "incomplete"]),
                         st.booleans()).map(
    lambda c: (c[0], c[1] if c[0] in ("pending", "incomplete") else None,
               c[2] and c[0] != "not_addressed"))
rank_boards = st.lists(st.lists(ranked_claim, max_size=5), min_size=1, max_size=6)


def _board_rows(board) -> dict[str, dict]:
    finals, missing = [], []
    for s, claims in enumerate(board):
        for c, (outcome, ai, copied) in enumerate(claims):
            if outcome == "not_addressed":
                missing.append(NotAddressed(submission_id=f"s{s}", paper_id="p",
                                            claim_id=f"p/c{c}"))
                continue
            finals.append(ClaimDecision(
                claim=ClaimKey(submission_id=f"s{s}", claim_id=f"p/c{c}"), paper_id="p",
                kind=None, verdict=None, outcomes={}, outcome=outcome, upheld="pending",
                decided_by=["humans"] if outcome in ("pass", "fail") else [], ai_outcome=ai,
                copied_figure=copied))
    return {r["submission"]: r for r in build_leaderboard(finals, missing).submissions}


def _rank(board, s: int) -> int:
    return _board_rows(board)[f"s{s}"]["rank"] if board[s] else 1 + sum(
        1 for r in _board_rows(board).values() if r["passed"])


def _changed(board, s: int, c: int | None, claim) -> list:
    copy = [list(claims) for claims in board]
    if c is None:
        copy[s].append(claim)
    else:
        copy[s][c] = claim
    return copy


board_and_claim = rank_boards.flatmap(lambda board: st.tuples(
    st.just(board), st.integers(0, len(board) - 1),
    st.integers(0, max(0, max(len(c) for c in board) - 1))))


@bounded(200)
@given(board_and_claim)
def test_turning_a_pass_into_a_fail_never_improves_a_rank(case) -> None:
    board, s, c = case
    if c >= len(board[s]) or board[s][c][0] != "pass" or board[s][c][2]:
        return
    failed = _changed(board, s, c, ("fail", None, False))
    assert _board_rows(failed)[f"s{s}"]["rank"] >= _board_rows(board)[f"s{s}"]["rank"]


@bounded(200)
@given(board_and_claim, st.booleans())
def test_adding_a_failed_claim_never_improves_and_a_passed_one_never_worsens(case, copy
                                                                             ) -> None:
    board, s, _ = case
    if not board[s]:
        return
    before = _board_rows(board)[f"s{s}"]["rank"]
    # A failed claim (or an AI fail awaiting review, or a flagged copy of any outcome).
    for added in (("fail", None, False), ("pending", "fail", False), ("pending", "pass", True)):
        assert _board_rows(_changed(board, s, None, added))[f"s{s}"]["rank"] >= before, added
    assert _board_rows(_changed(board, s, None, ("pass", None, False)))[f"s{s}"]["rank"] <= before


@bounded(200)
@given(board_and_claim)
def test_a_flagged_copy_counts_as_a_fail(case) -> None:
    board, s, c = case
    if c >= len(board[s]) or board[s][c][0] == "not_addressed":
        return
    outcome, ai, _ = board[s][c]
    copied = _changed(board, s, c, (outcome, ai, True))
    as_fail = _changed(board, s, c, ("fail", None, False))
    row, fail_row = _board_rows(copied)[f"s{s}"], _board_rows(as_fail)[f"s{s}"]
    if outcome == "pass":  # people passed it: their word is final over the flag
        unflagged = _board_rows(_changed(board, s, c, (outcome, ai, False)))[f"s{s}"]
        assert (row["passed"], row["failed"]) == (unflagged["passed"], unflagged["failed"])
        return
    assert (row["passed"], row["failed"]) == (fail_row["passed"], fail_row["failed"])
    assert row["rank"] == fail_row["rank"]


@bounded(100)
@given(rank_boards)
def test_every_view_says_when_no_claim_can_pass(board) -> None:
    rows = list(_board_rows(board).values())
    lines = rule_lines(rows)
    assert "fails (fewer first)" in lines[0]
    assert no_claim_passes(rows) == (len(lines) == 2) == (
        any(r["claims"] for r in rows) and all(r["passed"] == 0 for r in rows))
