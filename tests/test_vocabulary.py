"""Small shared helpers of judging/models.py that every table a person reads goes through: ids in
natural order (r2 before r10) and a repeated reason shown once with its count. Their doctests,
and where they show: the Argilla record's AI assessment, the report."""

from __future__ import annotations

import doctest

import judging.models as models
from judging.models import ClaimKey, natural_key, shown_reasons
from tests.constructed import _judgment


def test_the_docstring_examples_hold() -> None:
    runner = doctest.DocTestRunner()
    for function in (models.natural_key, models.shown_reasons):
        for test in doctest.DocTestFinder().find(function, function.__name__,
                                                 globs=vars(models)):
            runner.run(test)
    assert runner.failures == 0 and runner.tries >= 2


def test_natural_order() -> None:
    assert sorted(["p/r10", "p/r2", "p/r1"], key=natural_key) == ["p/r1", "p/r2", "p/r10"]
    keys = [ClaimKey(submission_id="s", claim_id=f"p/c{n}") for n in (10, 2, 1)]
    assert [k.claim_id for k in sorted(keys, key=ClaimKey.sort_key)] == ["p/c1", "p/c2", "p/c10"]


def test_a_repeated_reason_is_shown_once_with_a_count(verdict_rubric) -> None:
    from judging.review.dataset import ai_assessment

    claim = ClaimKey(submission_id="s", claim_id="p/c1")
    line = _judgment(verdict_rubric, claim, {"verdict_consistent": (True, 0.9)})
    unscored = [a for a in line.answers if a.status.value == "unscored"]
    assert len(unscored) >= 3 and len({a.reason for a in unscored}) == 1
    shown = shown_reasons([a.reason for a in unscored], [a.criterion_id for a in unscored])
    assert shown[0] == f"{unscored[0].reason} ({len(unscored)} criteria)"
    # later places name the criterion where the reason is spelled out, never "(as above)"
    assert set(shown[1:]) == {f"same reason as {unscored[0].criterion_id}"}
    from judging.models import answer_texts

    texts = answer_texts(line.answers)
    assert not any("as above" in t for t in texts)
    # The Argilla record: one row naming every criterion of the reason, with their count.
    text = ai_assessment(line)
    assert text.count(unscored[0].reason) == 1
    assert ", ".join(a.criterion_id for a in unscored) + f" ({len(unscored)})" in text
