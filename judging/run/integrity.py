"""Integrity across submissions: reproduced figures that are (nearly) identical between different
submissions, and justifications copied between them. Both sides of a pair are flagged.

Run over the whole run directory after each `judging run` (cheap: a 256-bit perceptual hash per
reproduced figure, computed while measuring, and word shingles of each justification); the pairs
are kept in RUN_DIR/integrity.json, which review, reports and publishing read.
"""

from __future__ import annotations

import itertools
import re

import imagehash
from PIL import Image

from judging.models import (
    HASH_SIZE,
    ClaimInput,
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


def find_pairs(fingerprints: dict[str, Fingerprint], claims: dict[str, ClaimInput]
               ) -> IntegrityReport:
    """Pairs from different submissions. Quadratic in the number of claims, which is fine at a
    hackathon's scale (1,000 claims compare in about a second)."""
    report = IntegrityReport()
    hashes = [(key, fp.claim.submission_id, int(fp.phash, 16))
              for key, fp in sorted(fingerprints.items())]
    report.figures = len(hashes)
    for (key_a, sub_a, hash_a), (key_b, sub_b, hash_b) in itertools.combinations(hashes, 2):
        if sub_a == sub_b:
            continue
        distance = (hash_a ^ hash_b).bit_count()
        if distance <= FIGURE_MAX_DISTANCE:
            report.pairs.append(IntegrityPair(kind="duplicate_figure",
                                              a=fingerprints[key_a].claim,
                                              b=fingerprints[key_b].claim, score=distance))
    texts = [(key, claim.key.submission_id, shingles(claim.claim.justification))
             for key, claim in sorted(claims.items())]
    texts = [t for t in texts if t[2]]
    report.justifications = len(texts)
    for (key_a, sub_a, set_a), (key_b, sub_b, set_b) in itertools.combinations(texts, 2):
        if sub_a == sub_b:
            continue
        similarity = len(set_a & set_b) / len(set_a | set_b)
        if similarity >= TEXT_MIN_SIMILARITY:
            report.pairs.append(IntegrityPair(kind="copied_justification", a=claims[key_a].key,
                                              b=claims[key_b].key,
                                              score=round(similarity, 4)))
    return report
