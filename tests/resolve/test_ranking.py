"""The ranking's stated properties (docs/explanation/ranking.md), checked with hypothesis on random
leaderboards through `build_leaderboard`, the function every table (CLI, page, dashboard, a
Space reading the published dataset) ranks with:

- turning a claim that waits for review into a fail never raises its submission; into a pass
  never lowers it (whatever the AI said meanwhile);
- a registry claim not addressed counts as not passed: not addressing a claim that passes or
  waits never raises a submission, and it is in `claims`, never in `passed`; a failed claim
  weighs more than a claim not made (tests/test_properties.py: a fail never lifts a rank);
- ties are ties: equal keys share a rank (competition ranking), marked `tie`, listed in natural
  order of their ids whatever the input order;
- the AI's outcome stands in, provisionally, for a claim nobody has decided.

Plus the event's rules: a participant's papers beyond the limit are flagged and not counted.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from judging.models import ClaimKey, NotAddressed
from judging.resolve import ClaimDecision, EventRules, build_leaderboard, outcome_label

OUTCOMES = ["pass", "fail", "pending", "incomplete", "not_addressed"]
WAITING = ("pending", "incomplete")

# One claim: (outcome, the AI's outcome while it waits).
claim = st.tuples(st.sampled_from(OUTCOMES),
                  st.sampled_from([None, "pass", "fail", "incomplete"])).map(
    lambda c: (c[0], c[1] if c[0] in WAITING else None))
# A board: submission index -> its claims (ids s0..sN, claim ids c0..cM).
boards = st.lists(st.lists(claim, min_size=0, max_size=6), min_size=1, max_size=7)


def decisions(board: list[list[tuple[str, str | None]]]):
    finals, missing = [], []
    for s, claims in enumerate(board):
        for c, (outcome, ai) in enumerate(claims):
            if outcome == "not_addressed":
                missing.append(NotAddressed(submission_id=f"s{s}", paper_id="p",
                                            claim_id=f"p/c{c}"))
                continue
            finals.append(ClaimDecision(
                claim=ClaimKey(submission_id=f"s{s}", claim_id=f"p/c{c}"), paper_id="p",
                kind=None, verdict=None, outcomes={}, outcome=outcome, upheld="pending",
                decided_by=[], ai_outcome=ai))
    return finals, missing


def rows(board) -> dict[str, dict]:
    finals, missing = decisions(board)
    return {r["submission"]: r for r in build_leaderboard(finals, missing).submissions}


def rank(board, s: int) -> int:
    """The rank of submission s (1 + how many rank strictly above it)."""
    return rows(board)[f"s{s}"]["rank"] if board[s] else 0


def with_claim(board, s: int, c: int, value: tuple[str, str | None]):
    changed = [list(claims) for claims in board]
    changed[s][c] = value
    return changed


waiting_claims = boards.flatmap(lambda board: st.tuples(st.just(board), st.sampled_from(
    [(s, c) for s, claims in enumerate(board) for c, (o, _) in enumerate(claims)
     if o in WAITING] or [None])))


@settings(max_examples=300, deadline=None)
@given(waiting_claims)
def test_a_fail_never_raises_and_a_pass_never_lowers(case) -> None:
    board, where = case
    if where is None:
        return
    s, c = where
    before = rank(board, s)
    ai = board[s][c][1]
    # A reviewer's fail (the AI's outcome no longer counts once people decided).
    assert rank(with_claim(board, s, c, ("fail", None)), s) >= before
    assert rank(with_claim(board, s, c, ("pass", None)), s) <= before
    # Whatever the AI said: its outcome stands in until then, never more than a decision.
    assert rows(board)[f"s{s}"]["ai_passed"] >= (ai == "pass")


@settings(max_examples=300, deadline=None)
@given(boards.flatmap(lambda board: st.tuples(st.just(board), st.sampled_from(
    [(s, c) for s, claims in enumerate(board) for c in range(len(claims))] or [None]))))
def test_not_addressing_a_claim_never_raises_and_it_counts_as_not_passed(case) -> None:
    board, where = case
    if where is None:
        return
    s, c = where
    skipped = with_claim(board, s, c, ("not_addressed", None))
    if rows(board)[f"s{s}"]["failed"] == rows(skipped)[f"s{s}"]["failed"]:
        assert rank(skipped, s) >= rank(board, s)  # a pass or a waiting claim given up
    else:
        assert rank(skipped, s) <= rank(board, s)  # a fail weighs more than no claim
    row = rows(skipped)[f"s{s}"]
    assert row["claims"] == len(board[s])
    assert row["not_addressed"] == sum(o == "not_addressed" for o, _ in skipped[s])
    assert row["passed"] + row["failed"] + row["undecided"] + row["not_addressed"] == \
        row["claims"]
    if row["pass_rate"] is not None:
        assert row["pass_rate"] == round(row["passed"] / (row["passed"] + row["failed"]
                                                          + row["not_addressed"]), 3)


@settings(max_examples=200, deadline=None)
@given(boards, st.randoms(use_true_random=False))
def test_ties_share_a_rank_in_a_deterministic_order(board, random) -> None:
    finals, missing = decisions(board)
    ranked = build_leaderboard(finals, missing).submissions
    random.shuffle(finals)
    random.shuffle(missing)
    assert build_leaderboard(finals, missing).submissions == ranked  # input order is irrelevant
    key = lambda r: (r["passed"], -r["failed"], -r["not_addressed"])  # noqa: E731
    for position, row in enumerate(ranked):
        better = sum(1 for other in ranked if key(other) > key(row))
        assert row["rank"] == better + 1
        equal = [o["submission"] for o in ranked if key(o) == key(row)]
        assert row["tie"] == (len(equal) > 1)
        # Tied rows are adjacent, in natural order of their ids (s2 before s10).
        assert [o["submission"] for o in ranked if key(o) == key(row)] == \
            sorted(equal, key=lambda sid: int(sid[1:]))
        if position:
            assert ranked[position - 1]["rank"] <= row["rank"]


def test_the_ai_outcome_ranks_provisionally_until_people_decide() -> None:
    # s0: one AI pass awaiting review; s1: one claim nobody (not even the AI) could decide.
    board = [[("pending", "pass")], [("pending", "incomplete")]]
    first, second = build_leaderboard(*decisions(board)).submissions
    assert (first["submission"], first["passed"], first["ai_passed"]) == ("s0", 1, 1)
    assert (second["submission"], second["undecided"]) == ("s1", 1)
    assert outcome_label("pending", "pass") == "AI pass, awaiting review"
    assert outcome_label("incomplete", "fail") == "AI fail, awaiting review"
    assert outcome_label("pass", None) == "pass" and outcome_label("pending", None) == "pending"
    # Once people decide, the decision counts and nothing is provisional any more.
    first, _ = build_leaderboard(*decisions([[("pass", None)], [("fail", None)]])).submissions
    assert (first["passed"], first["ai_passed"]) == (1, 0)


def test_a_participants_papers_beyond_the_limit_are_flagged_not_counted() -> None:
    # alice submits 4 papers (one of them twice), the limit is 2; bob submits one.
    def final(submission: str, paper: str, outcome: str) -> ClaimDecision:
        return ClaimDecision(claim=ClaimKey(submission_id=submission, claim_id=f"{paper}/c1"),
                             paper_id=paper, kind=None, verdict=None, outcomes={},
                             outcome=outcome, upheld="pending", decided_by=[])

    finals = [final("alice/p1", "p1", "fail"), final("alice/p1-again", "p1", "pass"),
              final("alice/p2", "p2", "pass"), final("alice/p3", "p3", "pass"),
              final("alice/p10", "p10", "pass"), final("bob/p1", "p1", "pass")]
    start = datetime(2026, 12, 1, tzinfo=UTC)
    # p3 was submitted before p2 (by commit date); p10 has no date: counted last.
    submitted = {"alice/p1": start, "alice/p1-again": start + timedelta(hours=5),
                 "alice/p3": start + timedelta(hours=1), "alice/p2": start + timedelta(hours=2)}
    board = build_leaderboard(finals, rules=EventRules(max_papers_per_participant=2),
                              submitted=submitted)
    alice = next(r for r in board.participants if r["participant"] == "alice")
    # p1 (its best submission: the pass) and p3 count; p2 and p10 are beyond the limit.
    assert (alice["papers"], alice["submissions"], alice["counted"], alice["passed"],
            alice["failed"]) == (4, 5, 2, 2, 0)
    assert "2 beyond the limit of 2" in alice["note"]
    by_id = {r["submission"]: r for r in board.submissions}
    for beyond in ("alice/p2", "alice/p10"):
        assert by_id[beyond]["rank"] is None and "2-paper limit" in by_id[beyond]["note"]
    assert [r["submission"] for r in board.submissions][-2:] == ["alice/p2", "alice/p10"]
    assert "counts for the participant" in by_id["alice/p1"]["note"]
    assert by_id["alice/p3"]["rank"] is not None and by_id["alice/p3"]["note"] == ""
    # A Space's folder named as the Hub's cache names it (owner--name) is its owner's.
    assert EventRules().participant("MachineLearning-Nerd--icml26-sosmc") == \
        "MachineLearning-Nerd"
    assert EventRules().participant("solo") == "solo"
    # Without a limit every paper counts; an explicit map names a team's participant.
    free = build_leaderboard(finals, rules=EventRules(participants={"bob/p1": "alice"}))
    (alice,) = free.participants
    assert (alice["papers"], alice["counted"], alice["passed"]) == (4, 4, 4)
