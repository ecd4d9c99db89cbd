"""Integrity across submissions: reproduced figures that are (nearly) identical between different
submissions, and justifications copied between them. Both sides of a pair are flagged.

Run over the whole run directory after each `judging run` (cheap: a 256-bit perceptual hash per
reproduced figure, computed while measuring, and word shingles of each justification); the pairs
are kept in RUN_DIR/integrity.json, which review, reports and publishing read.

Neither check compares every pair (36k claims make 650M pairs): both are indexed, and both find
exactly the pairs an all-pairs comparison finds.
- Figures: multi-index hashing (Norouzi et al., "Fast Search in Hamming Space with Multi-Index
  Hashing", CVPR 2012). The 256 bits are cut into FIGURE_MAX_DISTANCE + 1 chunks; two hashes at
  most FIGURE_MAX_DISTANCE bits apart agree on at least one whole chunk (pigeonhole), so only
  hashes sharing a chunk value are compared.
- Justifications: prefix filtering (Chaudhuri et al., "A Primitive Operator for Similarity Joins
  in Data Cleaning", ICDE 2006; Bayardo et al., "Scaling Up All Pairs Similarity Search", WWW
  2007). Shingles are ordered rarest first; two sets of Jaccard similarity >= t share a shingle
  among the first |s| - ceil(t|s|) + 1 of either, so only sets sharing such a prefix shingle
  are compared, and each candidate is checked with its exact Jaccard similarity.
Hand-written because the maintained libraries do not fit: datasketch's MinHash LSH is
approximate (a pair just above the threshold can be missed, and flags must not depend on a hash
draw) and its in-memory index holds a set per band and claim; faiss would add a large native
dependency for a 256-bit range search that numpy does in a few lines.
"""

from __future__ import annotations

import heapq
import math
import re
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

import imagehash
import numpy as np
from PIL import Image

from judging.models import (
    HASH_SIZE,
    ClaimInput,
    ClaimKey,
    Fingerprint,
    IntegrityPair,
    IntegrityReport,
)
from judging.rundir import write_integrity_pairs

if TYPE_CHECKING:
    from judging.rundir import RunStore

#: Of 256 perceptual-hash bits. Distinct charts measured 72 bits apart at the least (two renders
#: of one chart with a series dropped); re-encoded or resized copies stay within a few bits.
FIGURE_MAX_DISTANCE = 16


SHINGLE_WORDS = 5


#: Jaccard similarity of 5-word shingles; justifications shorter than MIN_WORDS are too generic
#: ("The numbers match.") to call copied.
TEXT_MIN_SIMILARITY = 0.6


MIN_WORDS = 15


def figure_phash(image: Image.Image) -> str:
    return str(imagehash.phash(image, hash_size=HASH_SIZE))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:[.'][a-z0-9]+)*", text.lower())


def shingles(text: str, *, size: int = SHINGLE_WORDS) -> frozenset[tuple[str, ...]]:
    words = _words(text)
    if len(words) < MIN_WORDS:
        return frozenset()
    return frozenset(tuple(words[i:i + size]) for i in range(len(words) - size + 1))


class IntegritySearch:
    """The integrity check of one run, made to be written as it goes (`judging.run.memory`).

    Built in one pass over the fingerprints and one over the claims (`fingerprints` and `claims`
    may be streams; a later fingerprint of one claim replaces an earlier one, while each claim
    is given once, as `RunStore.iter_claims` gives them: one given twice is paired twice),
    keeping per claim only its key's strings and its hash or shingle ids, and the figure pairs
    found as index arrays (16 bytes a pair). `figures` and `justifications` are then known (integrity.json writes them
    before its pairs), and `pairs()` makes the pairs one at a time in the file's order, so that
    `rundir.write_integrity_pairs` writes each as it is made: a run holds no pair, where a list of
    them grew by about 3.6 KB a claim on the scale benchmark (two pairs a claim)."""

    def __init__(self, fingerprints: Mapping[str, Fingerprint] | Iterable[Fingerprint],
                 claims: Mapping[str, ClaimInput] | Iterable[ClaimInput]) -> None:
        self._figure_keys, self._close = _figure_index(
            fingerprints.values() if isinstance(fingerprints, Mapping) else fingerprints)
        self.figures = len(self._figure_keys)
        self._names, self._shingles, self._sizes, self._papers = _text_index(
            claims.values() if isinstance(claims, Mapping) else claims)
        self.justifications = len(self._names)
        self._consumed = False

    def pairs(self) -> Iterator[IntegrityPair]:
        """Pairs from different submissions, each once (the smaller claim key as `a`): the
        figures', then the justifications', then the duplicate submissions', each kind in order
        of (a, b) as strings. One pass: the indexes are dropped as they are used, so a second
        call is an error (it would give only the duplicate submissions' pairs)."""
        if self._consumed:
            raise RuntimeError("IntegritySearch.pairs() gives the pairs once: build a new search")
        self._consumed = True
        keys, (rows, distances) = self._figure_keys, self._close
        for start in range(0, len(rows), DISTANCE_BLOCK):  # as Python ints a block at a time
            block = slice(start, start + DISTANCE_BLOCK)
            for (i, j), distance in zip(rows[block].tolist(), distances[block].tolist(),
                                        strict=True):
                yield IntegrityPair(kind="duplicate_figure", a=_key(keys[i]), b=_key(keys[j]),
                                    score=distance)
        del keys, rows, distances
        self._figure_keys, self._close = [], _NO_PAIRS
        names, shingle_ids, sizes = self._names, self._shingles, self._sizes
        self._shingles, self._sizes = _NO_IDS, _NO_SIZES
        # `_similar_sets` gives (i, j) in index order, i < j, and the names are in key order: the
        # pairs come sorted by (a, b) without being held to be sorted.
        for i, j, similarity in _similar_sets(shingle_ids, sizes, [n[1] for n in names]):
            yield IntegrityPair(kind="copied_justification", a=_key(names[i][1:]),
                                b=_key(names[j][1:]), score=round(similarity, 4))
        del names, shingle_ids, sizes
        self._names = []
        yield from _duplicate_submission_pairs(self._papers)


def write_run_integrity(store: RunStore, claims: Iterable[ClaimInput] | None = None
                        ) -> Counter[str]:
    """The integrity check over everything a run directory holds (a run's claims, or the union
    of merged shards), written to integrity.json a pair at a time as `IntegritySearch` makes
    them; returns the pairs written by kind. Neither the run nor a merge holds its pairs
    (`judging.run.memory`). `claims`: the store's claims as `RunStore.iter_claims` gives them,
    from a read the caller shares with other uses (`judging run`'s `StoredClaims`)."""
    search = IntegritySearch(store.iter_fingerprints(),
                             store.iter_claims() if claims is None else claims)
    return write_integrity_pairs(store.root, figures=search.figures,
                                 justifications=search.justifications, pairs=search.pairs())


def find_pairs(fingerprints: Mapping[str, Fingerprint] | Iterable[Fingerprint],
               claims: Mapping[str, ClaimInput] | Iterable[ClaimInput]) -> IntegrityReport:
    """Pairs from different submissions (each pair once, the smaller claim key as `a`, sorted),
    found through indexes (see the module docstring) rather than by comparing every pair, all in
    one report: for small runs and tests; a run writes `IntegritySearch.pairs()` as they come."""
    search = IntegritySearch(fingerprints, claims)
    return IntegrityReport(figures=search.figures, justifications=search.justifications,
                           pairs=list(search.pairs()))


_NO_PAIRS = (np.empty((0, 2), dtype=np.int64), np.empty(0, dtype=np.int64))
_NO_IDS = np.empty(0, dtype=np.uint64)
_NO_SIZES = np.empty(0, dtype=np.int64)


def _figure_index(fingerprints: Iterable[Fingerprint]
                  ) -> tuple[list[tuple[str, str]], tuple[np.ndarray, np.ndarray]]:
    """The figure claims' keys (submission, claim id) in key order, and the close pairs among
    them as index rows (i < j, in (i, j) order: the pairs' (a, b) order) with their distances.
    Per claim only its key's strings and its hash are kept while searching, not the fingerprint
    (its model is ten times that)."""
    figures: dict[str, tuple[str, str, int]] = {}
    for fp in fingerprints:
        figures[str(fp.claim)] = (sys.intern(fp.claim.submission_id), fp.claim.claim_id,
                                  int(fp.phash, 16))
    ordered = [figures[k] for k in sorted(figures)]
    del figures
    close = _close_hashes([f[2] for f in ordered], [f[0] for f in ordered])
    return [f[:2] for f in ordered], close


def _text_index(claims: Iterable[ClaimInput]) -> tuple[
        list[tuple[str, str, str]], np.ndarray, np.ndarray,
        dict[tuple[str, str], dict[str, list[str]]]]:
    """The claims with a justification long enough to compare, in key order (key, submission,
    claim id); their shingle ids one set after the other in that order and each set's size; and
    the submissions of each (owner, paper) with their claim ids (for `duplicate_submissions`)."""
    # The shingle ids of every claim in one array (8 bytes each), their counts in another.
    names: list[tuple[str, str, str]] = []
    ids = array("Q")
    sizes = array("q")
    papers: dict[tuple[str, str], dict[str, list[str]]] = {}
    for claim in claims:
        owner, sep, _ = claim.key.submission_id.partition("/")
        if sep:  # a Hub repo id: its owner's submissions of one paper
            papers.setdefault((owner, claim.submission.paper_id), {}).setdefault(
                claim.key.submission_id, []).append(claim.key.claim_id)
        tokens = _shingle_ids(claim.claim.justification)
        if len(tokens):
            key = claim.key
            names.append((str(key), sys.intern(key.submission_id), key.claim_id))
            ids.frombytes(tokens.tobytes())
            sizes.append(len(tokens))
    # In claim key order (as `_similar_sets` numbers them).
    order = sorted(range(len(names)), key=lambda i: names[i][0])
    names = [names[i] for i in order]
    flat = np.frombuffer(ids, dtype=np.uint64)
    count = np.frombuffer(sizes, dtype=np.int64)
    starts = np.r_[0, np.cumsum(count)[:-1]].astype(np.int64)
    ordered = np.concatenate([flat[starts[i]:starts[i] + count[i]] for i in order]) \
        if order else _NO_IDS
    count = count[order] if order else _NO_SIZES
    return names, ordered, count, papers


def duplicate_submissions(papers: Mapping[tuple[str, str], Mapping[str, list[str]]]
                          ) -> list[IntegrityPair]:
    """Two submissions of one owner for one paper (two Spaces of one user): each claim of one
    paired with the other's claim of the same id, else with its first claim, so that every
    claim of both carries the flag; both are judged. All in a list (see
    `_duplicate_submission_pairs`)."""
    return list(_duplicate_submission_pairs(papers))


def _duplicate_submission_pairs(papers: Mapping[tuple[str, str], Mapping[str, list[str]]]
                                ) -> Iterator[IntegrityPair]:
    """The pairs of `duplicate_submissions`, in order of (a, b) as strings, made one at a time:
    each (owner, paper) group makes its pairs in that order (`_group_pairs`) and the groups are
    merged, so that only one pair per group is held (the scale benchmark's groups make two pairs
    a claim)."""
    groups = [_group_pairs(submissions) for submissions in papers.values()
              if len(submissions) >= 2]
    for _, _, pair in heapq.merge(*groups, key=lambda made: (made[0], made[1])):
        yield pair


def _group_pairs(submissions: Mapping[str, list[str]]
                 ) -> Iterator[tuple[str, str, IntegrityPair]]:
    """One owner's submissions of one paper, paired claim by claim: each claim of a submission
    with the other's claim of the same id, else with the other's first claim (so a claim that is
    some other's first is paired with each of its claims that have no match). Made claim by claim
    in key order, each claim's pairs with the later of the two keys, sorted: (a, b) in order."""
    held = {sub: set(ids) for sub, ids in submissions.items()}
    first = {sub: min(ids) for sub, ids in submissions.items()}
    claims = sorted(((f"{sub}:{claim_id}", sub, claim_id) for sub, ids in submissions.items()
                     for claim_id in ids), key=lambda c: c[0])
    for name, this, claim_id in claims:
        partners: set[tuple[str, str]] = set()
        for other in held:
            if other == this:
                continue
            partners.add((other, claim_id if claim_id in held[other] else first[other]))
            if claim_id == first[this]:  # the other's claims without a match here
                partners.update((other, c) for c in held[other] if c not in held[this])
        # `a` is the smaller of the two as (submission, claim id), as in the pairs' other kinds.
        later = sorted(((f"{p[0]}:{p[1]}", p) for p in partners if (this, claim_id) < p),
                       key=lambda made: made[0])
        for other_name, partner in later:
            yield name, other_name, IntegrityPair(kind="duplicate_submission",
                                                  a=_key((this, claim_id)), b=_key(partner),
                                                  score=1.0)


def _key(held: tuple) -> ClaimKey:
    return ClaimKey(submission_id=held[0], claim_id=held[1])


def _shingle_ids(text: str) -> np.ndarray:
    """The justification's shingles as 64-bit ids, for the arrays of `_similar_sets`. Python's own
    hash: the ids live for one `find_pairs` call in one process, and two distinct shingles
    sharing one has odds of about 2^-64 per pair (it cannot make a copy of a text)."""
    return np.array(sorted({hash(shingle) & 0xFFFF_FFFF_FFFF_FFFF for shingle in shingles(text)}),
                    dtype=np.uint64)


def _run_pairs(order: np.ndarray, values: np.ndarray) -> Iterator[np.ndarray]:
    """Index pairs (i < j, as rows) of the items sharing a value: `order` sorts `values`."""
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], len(order)]
    for start, end in zip(starts, ends, strict=True):
        if end - start < 2:
            continue
        members = np.sort(order[start:end])
        a, b = np.triu_indices(len(members), k=1)
        yield np.stack([members[a], members[b]], axis=1)


def _unique_pairs(chunks: Iterable[np.ndarray], n: int) -> np.ndarray:
    """The distinct pairs of `chunks` (rows i < j), merged as they come: a pair shared through
    many buckets is held once, not once per bucket."""
    merged = np.empty(0, dtype=np.int64)
    waiting: list[np.ndarray] = []
    size = 0
    for chunk in chunks:
        waiting.append(chunk[:, 0].astype(np.int64) * n + chunk[:, 1])
        size += len(chunk)
        if size > 1_000_000:
            merged = np.unique(np.concatenate([merged, *waiting]))
            waiting, size = [], 0
    codes = np.unique(np.concatenate([merged, *waiting]))
    return np.stack([codes // n, codes % n], axis=1)


#: Candidate pairs whose distance is computed at once (bounds the temporary arrays).
DISTANCE_BLOCK = 65_536

#: Set bits of each byte value.
_POPCOUNT = np.array([bin(value).count("1") for value in range(256)], dtype=np.uint8)


def _close_hashes(hashes: list[int], submissions: list[str]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The hashes from different submissions at most FIGURE_MAX_DISTANCE bits apart
    (multi-index hashing): their index rows (i < j, sorted) and their distances."""
    n = len(hashes)
    if n < 2:
        return _NO_PAIRS
    nbytes = HASH_SIZE ** 2 // 8
    packed = np.frombuffer(b"".join(h.to_bytes(nbytes, "big") for h in hashes),
                           dtype=np.uint8).reshape(n, nbytes)
    bits = np.unpackbits(packed, axis=1)
    parts = FIGURE_MAX_DISTANCE + 1
    candidates = []
    for part in range(parts):
        # Chunk `part` takes every parts-th bit: charts share a run of almost constant bits (the
        # lowest frequencies of the hash), and a chunk made of them would put every chart in one
        # bucket; strided chunks spread them (the pigeonhole holds for any partition of the bits).
        chunk = bits[:, part::parts].astype(np.int64)
        values = chunk @ (np.int64(1) << np.arange(chunk.shape[1], dtype=np.int64))
        candidates.append(_unique_pairs(_run_pairs(np.argsort(values, kind="stable"), values),
                                        n))
    pairs = _unique_pairs(candidates, n)
    del bits, candidates
    if not len(pairs):
        return _NO_PAIRS
    # Similar charts share chunks, so the candidates grow faster than the hashes: their distances
    # are taken from the packed bytes (32 per hash, not 256 bits), a block of pairs at a time,
    # and only the close pairs are kept.
    close = []
    for start in range(0, len(pairs), DISTANCE_BLOCK):
        block = pairs[start:start + DISTANCE_BLOCK]
        distance = _POPCOUNT[packed[block[:, 0]] ^ packed[block[:, 1]]].sum(axis=1)
        near = distance <= FIGURE_MAX_DISTANCE
        close.append((block[near], distance[near]))
    rows = np.concatenate([block for block, _ in close])
    distances = np.concatenate([distance for _, distance in close]).astype(np.int64)
    owner = np.unique(np.array(submissions), return_inverse=True)[1].reshape(-1)
    apart = owner[rows[:, 0]] != owner[rows[:, 1]]
    # `_unique_pairs` sorts its codes (i * n + j), so the rows are in (i, j) order.
    return rows[apart], distances[apart]


def _similar_sets(flat: np.ndarray, sizes: np.ndarray, submissions: list[str]
                  ) -> Iterator[tuple[int, int, float]]:
    """(i, j, Jaccard similarity) of the sets from different submissions at least
    TEXT_MIN_SIMILARITY alike (prefix filtering, then the exact similarity). `flat` holds every
    set's distinct ids one set after the other, `sizes` their lengths."""
    n = len(sizes)
    if n < 2:
        return
    # Exact arithmetic for ceil(t * size): 0.6 * 5 is 3.0000000000000004 in floats, and a prefix
    # one shingle too short could miss a pair.
    t = Fraction(TEXT_MIN_SIMILARITY).limit_denominator(1000)
    ranked = _token_ranks(flat)
    # Within each set, order its tokens by rank: one in-place sort of (set, rank) packed in an
    # integer (ranks are distinct within a set), the order of a lexsort without its index array.
    shift = max(1, int(ranked.max()).bit_length()) if len(ranked) else 1
    packed = np.repeat(np.arange(n, dtype=np.int64), sizes)
    packed <<= shift
    packed |= ranked
    del ranked
    packed.sort()
    packed &= (1 << shift) - 1
    ranked = packed  # by set, then by rank within a set
    # Keep each set's prefix (its first `prefix` entries).
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    prefix = sizes - np.array([math.ceil(t * int(size)) for size in sizes]) + 1
    keep = np.arange(len(ranked)) < np.repeat(starts + prefix, sizes)
    prefix_tokens = ranked[keep]
    del keep
    prefix_owner = np.repeat(np.arange(n, dtype=np.int64), prefix)
    candidates = _prefix_pairs(prefix_tokens, prefix_owner)
    pairs = _unique_pairs(candidates, n)
    del prefix_tokens, prefix_owner
    # Views, not copies: `ranked` is sorted by set, then by rank within a set.
    by_set = [ranked[starts[k]:starts[k] + sizes[k]] for k in range(n)]
    for i, j in pairs.tolist():
        if submissions[i] == submissions[j]:
            continue
        small, large = sorted((int(sizes[i]), int(sizes[j])))
        if small < t * large:  # too different in size to reach t
            continue
        shared = len(np.intersect1d(by_set[i], by_set[j], assume_unique=True))
        similarity = shared / (sizes[i] + sizes[j] - shared)
        if similarity >= TEXT_MIN_SIMILARITY:
            yield i, j, float(similarity)


def _token_ranks(flat: np.ndarray) -> np.ndarray:
    """Each entry's rank in the global order of the distinct values: rarest first, ties by value.
    What `np.unique(..., return_inverse=True, return_counts=True)` gives, with half of its
    temporary arrays (each one entry per shingle of the run)."""
    total = len(flat)
    if total == 0:
        return np.empty(0, dtype=np.int64)
    order = np.argsort(flat)  # equal values share one rank: any order among them will do
    values = flat[order]
    first = np.empty(total, dtype=bool)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    del values
    starts = np.flatnonzero(first)
    counts = np.diff(starts, append=total)
    del starts
    group = np.cumsum(first, dtype=np.int64)  # of each sorted entry: its value's index, from 1
    del first
    group -= 1
    # Rarest first, ties by value: a stable sort of the counts (values are in ascending order).
    by_count = np.argsort(counts, kind="stable")
    del counts
    rank = np.empty(len(by_count), dtype=np.int64)
    rank[by_count] = np.arange(len(by_count))
    del by_count
    group = rank[group]
    del rank
    ranked = np.empty(total, dtype=np.int64)
    ranked[order] = group
    return ranked


def _prefix_pairs(tokens: np.ndarray, owners: np.ndarray) -> Iterator[np.ndarray]:
    """Pairs of owners (i < j) sharing a token: the items grouped by token."""
    order = np.argsort(tokens, kind="stable")
    for pairs in _run_pairs(order, tokens):
        yield np.sort(owners[pairs], axis=1)
