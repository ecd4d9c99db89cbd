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

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction

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


def find_pairs(fingerprints: Mapping[str, Fingerprint] | Iterable[Fingerprint],
               claims: Mapping[str, ClaimInput] | Iterable[ClaimInput]) -> IntegrityReport:
    """Pairs from different submissions (each pair once, the smaller claim key as `a`, sorted),
    found through indexes (see the module docstring) rather than by comparing every pair.
    `fingerprints` and `claims` may be streams (one pass over each; only the hashes and the
    shingles of each claim are kept)."""
    report = IntegrityReport()
    figures = {}
    for fp in (fingerprints.values() if isinstance(fingerprints, Mapping) else fingerprints):
        figures[str(fp.claim)] = fp
    keys = sorted(figures)
    report.figures = len(keys)
    found = []
    for i, j, distance in _close_hashes([int(figures[k].phash, 16) for k in keys],
                                        [figures[k].claim.submission_id for k in keys]):
        found.append((keys[i], keys[j], IntegrityPair(
            kind="duplicate_figure", a=figures[keys[i]].claim, b=figures[keys[j]].claim,
            score=distance)))
    report.pairs = [pair for *_, pair in sorted(found, key=lambda f: (f[0], f[1]))]

    # Per claim only its key and its shingle ids (8 bytes each) are kept, not the claim.
    texts: list[tuple[str, ClaimKey, np.ndarray]] = []
    for claim in (claims.values() if isinstance(claims, Mapping) else claims):
        tokens = _shingle_ids(claim.claim.justification)
        if len(tokens):
            texts.append((str(claim.key), claim.key, tokens))
    texts.sort(key=lambda t: t[0])
    report.justifications = len(texts)
    found = []
    for i, j, similarity in _similar_sets([t[2] for t in texts],
                                          [t[1].submission_id for t in texts]):
        found.append((texts[i][0], texts[j][0], IntegrityPair(
            kind="copied_justification", a=texts[i][1], b=texts[j][1],
            score=round(similarity, 4))))
    report.pairs += [pair for *_, pair in sorted(found, key=lambda f: (f[0], f[1]))]
    return report


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


def _close_hashes(hashes: list[int], submissions: list[str]
                  ) -> Iterator[tuple[int, int, int]]:
    """(i, j, distance) of the hashes from different submissions at most FIGURE_MAX_DISTANCE
    bits apart (multi-index hashing)."""
    n = len(hashes)
    if n < 2:
        return
    nbytes = HASH_SIZE ** 2 // 8
    bits = np.unpackbits(np.frombuffer(b"".join(h.to_bytes(nbytes, "big") for h in hashes),
                                       dtype=np.uint8).reshape(n, nbytes), axis=1)
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
    if not len(pairs):
        return
    distance = (bits[pairs[:, 0]] != bits[pairs[:, 1]]).sum(axis=1)
    for (i, j), d in zip(pairs.tolist(), distance.tolist(), strict=True):
        if d <= FIGURE_MAX_DISTANCE and submissions[i] != submissions[j]:
            yield i, j, int(d)


def _similar_sets(sets: list[np.ndarray], submissions: list[str]
                  ) -> Iterator[tuple[int, int, float]]:
    """(i, j, Jaccard similarity) of the sets from different submissions at least
    TEXT_MIN_SIMILARITY alike (prefix filtering, then the exact similarity)."""
    n = len(sets)
    if n < 2:
        return
    # Exact arithmetic for ceil(t * size): 0.6 * 5 is 3.0000000000000004 in floats, and a prefix
    # one shingle too short could miss a pair.
    t = Fraction(TEXT_MIN_SIMILARITY).limit_denominator(1000)
    sizes = np.array([len(s) for s in sets])
    flat = np.concatenate(sets)
    owner = np.repeat(np.arange(n), sizes)
    tokens, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
    del flat  # each array here is one entry per shingle of the run: none is kept longer
    # Rank of each token in the global order: rarest first, ties by token.
    rank = np.empty(len(tokens), dtype=np.int64)
    rank[np.lexsort((np.arange(len(tokens)), counts))] = np.arange(len(tokens))
    ranked = rank[inverse]
    del tokens, inverse, counts, rank
    # Within each set, order its tokens by rank and keep the prefix.
    order = np.lexsort((ranked, owner))
    ranked, owner_sorted = ranked[order], owner[order]
    del order, owner
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    position = np.arange(len(ranked)) - starts[owner_sorted]
    prefix = sizes - np.array([math.ceil(t * int(size)) for size in sizes]) + 1
    keep = position < prefix[owner_sorted]
    del position
    prefix_tokens, prefix_owner = ranked[keep], owner_sorted[keep]
    del keep, owner_sorted
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


def _prefix_pairs(tokens: np.ndarray, owners: np.ndarray) -> Iterator[np.ndarray]:
    """Pairs of owners (i < j) sharing a token: the items grouped by token."""
    order = np.argsort(tokens, kind="stable")
    for pairs in _run_pairs(order, tokens):
        yield np.sort(owners[pairs], axis=1)
