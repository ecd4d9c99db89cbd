"""Integrity across submissions: shared reproduced figures and copied justifications."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from judging.cli import main
from judging.review.push import PushOptions, plan_records
from judging.rubrics import RubricLibrary
from judging.run.integrity import find_pairs, shingles
from judging.rundir.flags import read_integrity
from judging.rundir.store import RunStore
from tests.conftest import RUBRICS, SubmissionBuilder, render_chart

JUSTIFICATION = ("We re-ran the released training script for twenty thousand steps on a single "
                 "GPU and the validation loss falls below the reported threshold after about "
                 "ten thousand steps, exactly as in the published figure; see the logs.")


def _jpeg(png: bytes) -> bytes:
    buffer = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").resize((700, 525)).save(buffer, "JPEG",
                                                                       quality=80)
    return buffer.getvalue()


def _submissions(root: Path) -> list[Path]:
    x = np.linspace(0, 10, 200)
    published = render_chart()
    own = render_chart(series={"train": (x, np.exp(-x / 2.5) + 0.12),
                               "val": (x, np.exp(-x / 3.5) + 0.2)}, style="ggplot")
    folders = []
    alice = SubmissionBuilder(root / "alice", "alice/sub", "paper-1")
    alice.figure_claim("paper-1/f1", published=published, reproduced=own,
                       justification=JUSTIFICATION)
    alice.figure_claim("paper-1/f2", published=published, reproduced=render_chart(dpi=80),
                       justification="Our own words about a second figure, written by Alice "
                                     "herself with details nobody else has in their report.")
    folders.append(alice.write())
    bob = SubmissionBuilder(root / "bob", "bob/sub", "paper-1")
    # Bob hands in Alice's figure, re-encoded and resized, and her justification, lightly edited.
    bob.figure_claim("paper-1/f1", published=published, reproduced=_jpeg(own),
                     justification=JUSTIFICATION.replace("single", "one"))
    folders.append(bob.write())
    carol = SubmissionBuilder(root / "carol", "carol/sub", "paper-1")
    carol.figure_claim("paper-1/f1", published=published,
                       reproduced=render_chart(series={"train": (x, x / 10 + 0.1)}),
                       justification="A different run with a different story entirely, "
                                     "described in Carol's own words over enough words to count.")
    folders.append(carol.write())
    return folders


def test_shared_figures_and_copied_text_are_flagged_on_both(tmp_path: Path) -> None:
    folders = _submissions(tmp_path / "subs")
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", *map(str, folders), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "integrity:" in result.output
    report = read_integrity(out)
    kinds = sorted((p.kind, p.a.submission_id, p.b.submission_id) for p in report.pairs)
    assert kinds == [("copied_justification", "alice/sub", "bob/sub"),
                     ("duplicate_figure", "alice/sub", "bob/sub")]
    assert report.figures == 4 and report.justifications == 4
    flags = report.flags()
    assert {f.name for f in flags["alice/sub::paper-1/f1"]} == {"duplicate_figure",
                                                                "copied_justification"}
    assert {f.name for f in flags["bob/sub::paper-1/f1"]} == {"duplicate_figure",
                                                              "copied_justification"}
    assert "carol/sub::paper-1/f1" not in flags and "alice/sub::paper-1/f2" not in flags
    # Both raise the review priority, and the report shows them.
    store = RunStore.open(out, create=False)
    _, records, _ = plan_records(store, RubricLibrary(RUBRICS), PushOptions(blind_share=0.0))
    priority = {(r.claim_key, r.dataset): r.priority for r in records}
    flagged = priority[("bob/sub::paper-1/f1", "figure-match-1.4.0")]
    assert flagged.value >= 0.9 and "duplicate_figure" in flagged.reasons
    assert priority[("carol/sub::paper-1/f1", "figure-match-1.4.0")].value < 0.9
    CliRunner().invoke(main, ["report", str(out)])
    assert "duplicate_figure" in (out / "report.html").read_text()


def test_the_same_submission_is_not_compared_with_itself(tmp_path: Path) -> None:
    alice = SubmissionBuilder(tmp_path / "alice", "alice/sub", "paper-1")
    chart = render_chart()
    alice.figure_claim("paper-1/f1", published=chart, reproduced=chart,
                       justification=JUSTIFICATION)
    alice.figure_claim("paper-1/f2", published=chart, reproduced=chart,
                       justification=JUSTIFICATION)
    out = tmp_path / "run"
    CliRunner().invoke(main, ["run", str(alice.write()), "--out", str(out)])
    assert read_integrity(out).pairs == []


def test_short_justifications_are_not_called_copies() -> None:
    assert shingles("The numbers match the paper.") == frozenset()
    assert len(shingles(JUSTIFICATION)) > 10
    assert find_pairs({}, {}).pairs == []


def test_integrity_file_is_valid_json(tmp_path: Path) -> None:
    folders = _submissions(tmp_path / "subs")
    out = tmp_path / "run"
    CliRunner().invoke(main, ["run", *map(str, folders), "--out", str(out)])
    payload = json.loads((out / "integrity.json").read_text())
    assert payload["figures"] == 4
    # A rerun keeps the index complete even though nothing is re-measured.
    CliRunner().invoke(main, ["run", *map(str, folders), "--out", str(out)])
    assert len(read_integrity(out).pairs) == 2


def test_the_indexes_find_exactly_the_pairs_of_an_all_pairs_comparison() -> None:
    """Multi-index hashing and prefix filtering (judging/run/integrity.py) against the quadratic
    comparison they replace, on near-duplicates at and around both thresholds."""
    import itertools
    import random
    from types import SimpleNamespace

    from judging.models import HASH_SIZE, ClaimKey, Fingerprint
    from judging.run.integrity import FIGURE_MAX_DISTANCE, TEXT_MIN_SIMILARITY

    rng = random.Random(1)
    bits = HASH_SIZE ** 2
    bases = [rng.getrandbits(bits) for _ in range(30)]
    fingerprints = {}
    for n in range(400):
        value = rng.choice(bases)
        for _ in range(rng.randint(0, 2 * FIGURE_MAX_DISTANCE)):
            value ^= 1 << rng.randrange(bits)
        key = ClaimKey(submission_id=f"s{n % 37}", claim_id=f"c{n}")
        fingerprints[str(key)] = Fingerprint(claim=key, phash=f"{value:0{bits // 4}x}")
    expected = []
    for (a, fa), (b, fb) in itertools.combinations(sorted(fingerprints.items()), 2):
        distance = (int(fa.phash, 16) ^ int(fb.phash, 16)).bit_count()
        if fa.claim.submission_id != fb.claim.submission_id and distance <= FIGURE_MAX_DISTANCE:
            expected.append((a, b, distance))
    found = [(str(p.a), str(p.b), p.score) for p in find_pairs(fingerprints, {}).pairs]
    assert len(expected) > 100 and found == expected

    words = [f"w{i}" for i in range(300)]
    texts = [[rng.choice(words) for _ in range(rng.randint(15, 60))] for _ in range(25)]
    claims = {}
    for n in range(400):
        text = list(rng.choice(texts))
        for _ in range(rng.randint(0, 12)):
            text[rng.randrange(len(text))] = rng.choice(words)
        key = ClaimKey(submission_id=f"s{n % 23}", claim_id=f"c{n}")
        # find_pairs reads a claim's key and justification only
        claims[str(key)] = SimpleNamespace(key=key,
                                           claim=SimpleNamespace(justification=" ".join(text)))
    expected = []
    sets = [(k, c.key.submission_id, shingles(c.claim.justification))
            for k, c in sorted(claims.items())]
    for (a, sa, set_a), (b, sb, set_b) in itertools.combinations([s for s in sets if s[2]], 2):
        similarity = len(set_a & set_b) / len(set_a | set_b)
        if sa != sb and similarity >= TEXT_MIN_SIMILARITY:
            expected.append((a, b, round(similarity, 4)))
    found = [(str(p.a), str(p.b), p.score) for p in find_pairs({}, claims).pairs]  # type: ignore
    assert len(expected) > 50 and found == expected


def _whole_duplicate_submissions(papers: dict) -> list:
    """The pairs of duplicate submissions as they were made before they streamed (issue 43):
    every pair in one dict, sorted by its keys as strings at the end."""
    from judging.models import ClaimKey, IntegrityPair

    pairs = {}
    for submissions in papers.values():
        if len(submissions) < 2:
            continue
        ids = sorted(submissions)
        for i, first in enumerate(ids):
            for second in ids[i + 1:]:
                for this, other in ((first, second), (second, first)):
                    theirs = sorted(submissions[other])
                    for claim_id in sorted(submissions[this]):
                        match = claim_id if claim_id in theirs else theirs[0]
                        a, b = sorted([(this, claim_id), (other, match)])
                        pairs.setdefault((f"{a[0]}:{a[1]}", f"{b[0]}:{b[1]}"), IntegrityPair(
                            kind="duplicate_submission",
                            a=ClaimKey(submission_id=a[0], claim_id=a[1]),
                            b=ClaimKey(submission_id=b[0], claim_id=b[1]), score=1.0))
    return [pairs[k] for k in sorted(pairs)]


def test_duplicate_submissions_stream_the_pairs_of_the_whole_formula() -> None:
    """Made group by group and merged, the pairs are those of one dict sorted at the end, in
    the same order: submissions whose ids are prefixes of others ("u/s" sorts before "u/s2" as
    a tuple, after it as "u/s:..."), claims one submission has and another lacks, groups of
    several owners and papers interleaved."""
    import random

    from judging.run.integrity import duplicate_submissions

    rng = random.Random(3)
    papers = {}
    for paper in range(40):
        owner = f"u{paper % 3}"
        # A submission is of one paper: its id names it.
        subs = rng.sample([f"{owner}/s{paper}", f"{owner}/s{paper}2", f"{owner}/s{paper}-x",
                           f"{owner}/t{paper}", f"{owner}/s{paper}:0"], rng.randint(1, 4))
        papers[(owner, f"p{paper}")] = {
            sub: rng.sample([f"c{k}" for k in range(8)], rng.randint(1, 6)) for sub in subs}
    expected = _whole_duplicate_submissions(papers)
    assert len(expected) > 200
    assert duplicate_submissions(papers) == expected


def test_the_streamed_integrity_file_has_the_whole_reports_bytes(tmp_path: Path) -> None:
    """integrity.json written a pair at a time is what the whole report's JSON was, byte for
    byte (pairs of every kind, a non-ASCII key, no pair at all), and reads back the same."""
    from judging.models import ClaimKey, IntegrityPair, IntegrityReport
    from judging.rundir.flags import iter_integrity_pairs, write_integrity_pairs

    def key(n: int) -> ClaimKey:
        return ClaimKey(submission_id=f"ö{n}/sub", claim_id=f"paper/c{n}")

    pairs = [IntegrityPair(kind="duplicate_figure", a=key(1), b=key(2), score=3),
             IntegrityPair(kind="copied_justification", a=key(1), b=key(3), score=0.6667),
             IntegrityPair(kind="duplicate_submission", a=key(2), b=key(3), score=1.0)]
    for report in (IntegrityReport(figures=4, justifications=7, pairs=pairs),
                   IntegrityReport(figures=2)):
        written = write_integrity_pairs(tmp_path, figures=report.figures,
                                        justifications=report.justifications,
                                        pairs=iter(report.pairs))
        assert (tmp_path / "integrity.json").read_text(encoding="utf-8") == \
            report.model_dump_json(indent=2)
        assert read_integrity(tmp_path) == report
        assert list(iter_integrity_pairs(tmp_path)) == report.pairs
        assert sum(written.values()) == len(report.pairs)


def test_the_pairs_of_a_search_are_given_once():
    # pairs() drops its indexes as it goes: a second call would quietly give only the duplicate
    # submissions' pairs, so it is refused.
    from judging.run.integrity import IntegritySearch

    search = IntegritySearch({}, {})
    assert list(search.pairs()) == []
    with pytest.raises(RuntimeError, match="once"):
        list(search.pairs())
