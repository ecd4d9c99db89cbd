"""Versioned YAML rubrics: schema, loading, the lock of published versions, aggregation, diff.

Layout: `rubrics/<rubric-id>/<version>.yaml`; `rubrics/LOCK` maps `id@version` to the content
hash of each published version. A published version is never edited: the loader refuses a file
whose hash no longer matches the lock. A file not in the lock is a draft.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from judging._yaml import (
    LocatedDocument,
    parse_document,
    raise_validation_error,
    read_document,
)
from judging.atomic import write_text_atomic
from judging.errors import RubricError
from judging.models import (
    FIGURE_MATCH_NOT_APPLICABLE,
    Aggregate,
    AnswerStatus,
    Claim,
    ClaimInput,
    ClaimKind,
    CriterionAnswer,
    Outcome,
    RubricRef,
    Signal,
    StrictModel,
    Verdict,
    ref_name,
)
from judging.rules import CONDITIONAL_RULES, RULES
from judging.signal_catalogue import CATALOGUE

#: The rubric that audits falsified claims (review push raises their priority unless its line
#: passes and the consensus agrees).
FALSIFICATION_AUDIT = "falsification-audit"
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
CRITERION_ID = r"^[a-z][a-z0-9_]{0,63}$"


class Scale(StrEnum):
    binary = "binary"
    ordinal = "ordinal"
    categorical = "categorical"
    """One of named categories (the judge's own verdict): neither passes nor fails, carries no
    weight in the score; calibrated with a confusion matrix and kappa."""


class Reliability(StrictModel):
    """How stable a judge's answers to a criterion must be before they are used
    (verdict-justification 1.2.0 and later)."""

    retest_alpha_at_least: float | None = Field(default=None, ge=0, le=1)
    """`calibrate --retest`: a judge whose retest Krippendorff's alpha on this criterion is below
    this is not trusted on it, whatever its agreement with people."""
    samples_agree_at_least: float | None = Field(default=None, ge=0, le=1)
    """`run --samples K`: an answer whose samples agree less than this (share of the scored
    samples that gave the aggregate answer) goes to a person, with that reason."""


class TrustCondition(StrictModel):
    """The measure an offline answer must be sure of: `fails_only_when` (figure-match 1.3.0 and
    later) guards a "no" (or a level below the pass level), `passes_only_when` (1.4.0) a "yes";
    when the measure is absent, or below `at_least`, or above `at_most`, the answer is not given
    and the criterion is unscored with the measure's doubts instead."""

    signal: str
    at_least: float | None = Field(default=None, ge=0, le=1)
    at_most: float | None = Field(default=None, ge=0, le=1)

    @model_validator(mode="after")
    def _one_bound(self) -> TrustCondition:
        if (self.at_least is None) == (self.at_most is None):
            raise ValueError("give either 'at_least' or 'at_most'")
        return self

    def holds(self, value: float | None) -> bool:
        if value is None:
            return False
        if self.at_least is not None:
            return value >= self.at_least
        assert self.at_most is not None
        return value <= self.at_most

    def unmet(self) -> str:
        """The bound a value that does not hold misses, e.g. "< 0.7"."""
        return f"< {self.at_least:g}" if self.at_least is not None else f"> {self.at_most:g}"

    @field_validator("signal")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in CATALOGUE:
            raise ValueError(f"unknown signal {name!r}; known signals: {', '.join(CATALOGUE)}")
        if CATALOGUE[name].kind != "score":
            raise ValueError(f"{name!r} is not a score in [0, 1]")
        return name


class OfflineRule(StrictModel):
    """How the offline judge answers a criterion: a named rule check the code provides
    (`{rule: NAME}`), or one signal with a threshold and a direction
    (`{signal: NAME, better: higher|lower, pass_at: X}`; ordinal criteria: `levels_at`)."""

    rule: str | None = None
    """A rule check, e.g. falsified_has_proof."""
    signal: str | None = None
    """A signal name from the catalogue, e.g. pixel.edge_f1."""
    better: Literal["higher", "lower"] | None = None
    pass_at: float | None = None
    """Binary criteria: the value at which the answer is yes (inclusive)."""
    levels_at: dict[int, float] | None = None
    """Ordinal criteria: the value each level from 2 up needs (level 1 otherwise)."""
    margin: float = Field(default=0.1, gt=0)
    """Distance from the threshold at which the offline judge's confidence reaches 1."""
    fails_only_when: TrustCondition | None = None
    """A failing answer is given only when this measure holds (else unscored)."""
    passes_only_when: TrustCondition | None = None
    """A passing answer is given only when this measure holds (else unscored)."""

    @field_validator("rule")
    @classmethod
    def _known_rule(cls, name: str | None) -> str | None:
        if name is not None and name not in RULES:
            raise ValueError(f"unknown rule {name!r}; known rules: {', '.join(sorted(RULES))}")
        return name

    @field_validator("signal")
    @classmethod
    def _known_signal(cls, name: str | None) -> str | None:
        if name is None:
            return name
        if name not in CATALOGUE:
            raise ValueError(f"unknown signal {name!r}; known signals: {', '.join(CATALOGUE)}")
        if CATALOGUE[name].kind == "flag":
            raise ValueError(f"{name!r} is a flag, not a measure: use a named rule instead")
        return name

    @model_validator(mode="after")
    def _one_kind(self) -> OfflineRule:
        if (self.rule is None) == (self.signal is None):
            raise ValueError("give either 'rule' or 'signal'")
        if self.rule is not None and (self.better or self.pass_at is not None
                                      or self.levels_at is not None):
            raise ValueError("a rule takes no 'better', 'pass_at' or 'levels_at'")
        if self.signal is not None and self.better is None:
            raise ValueError("a signal rule needs 'better: higher' or 'better: lower'")
        return self


class AppliesIf(StrictModel):
    """A criterion that only makes sense for some claims (e.g. proof scripts for falsified ones)."""

    verdict: list[Verdict] | None = None
    kind: list[ClaimKind] | None = None

    def matches(self, *, verdict: Verdict, kind: ClaimKind) -> bool:
        return ((self.verdict is None or verdict in self.verdict)
                and (self.kind is None or kind in self.kind))

    def describe(self) -> str:
        parts = []
        if self.verdict is not None:
            parts.append("verdict " + " or ".join(v.value for v in self.verdict))
        if self.kind is not None:
            parts.append("kind " + " or ".join(k.value for k in self.kind))
        return " and ".join(parts)


class Criterion(StrictModel):
    id: Annotated[str, Field(pattern=CRITERION_ID)]
    """snake_case, unique within the rubric; becomes an Argilla question name."""
    question: str = Field(min_length=10)
    """One question that a human and an LLM can both answer from the claim's material."""
    scale: Scale
    levels: dict[int, str] | None = None
    """Ordinal scales: a description for every level 1..N."""
    pass_at: int | None = None
    """Ordinal scales: the lowest level that counts as a pass (for F1 and gates)."""
    weight: float = Field(default=1.0, gt=0)
    gate: bool = False
    """A failed gate makes the outcome fail whatever the score."""
    guidance: str = ""
    """How to answer edge cases."""
    applies_if: AppliesIf | None = None
    """Claims this criterion applies to; elsewhere it is not applicable (and carries no weight)."""
    offline: OfflineRule | None = None
    """How the offline judge answers it; without one, the offline judge leaves it unscored."""
    categories: list[Annotated[str, Field(pattern=CRITERION_ID)]] | None = None
    """Categorical scales: the possible answers, in order."""
    reliability: Reliability | None = None
    """Stability the judge's answers must show (retest, samples)."""

    @model_validator(mode="after")
    def _scale_consistent(self) -> Criterion:
        if self.scale is not Scale.categorical and self.categories is not None:
            raise ValueError("only a categorical criterion has 'categories'")
        if self.scale is Scale.categorical:
            if self.levels is not None or self.pass_at is not None:
                raise ValueError("a categorical criterion has no 'levels' or 'pass_at'")
            if not self.categories or len(self.categories) < 2 or \
                    len(set(self.categories)) != len(self.categories):
                raise ValueError("a categorical criterion needs 'categories': two or more "
                                 "distinct names")
            if self.gate:
                raise ValueError("a categorical criterion cannot be a gate: a category neither "
                                 "passes nor fails")
            if self.offline is not None and self.offline.signal is not None:
                raise ValueError("a categorical criterion's offline answer comes from a rule "
                                 "({rule: NAME}), not a signal threshold")
        elif self.scale is Scale.binary:
            if self.levels is not None or self.pass_at is not None:
                raise ValueError("a binary criterion has no 'levels' or 'pass_at'")
        else:
            if not self.levels:
                raise ValueError("an ordinal criterion needs 'levels' (1..N with descriptions)")
            n = len(self.levels)
            if sorted(self.levels) != list(range(1, n + 1)) or n < 3:
                raise ValueError("ordinal 'levels' must be numbered 1..N with N >= 3, no gaps")
            if self.pass_at is None or not 2 <= self.pass_at <= n:
                raise ValueError(f"an ordinal criterion needs 'pass_at' between 2 and {n}")
        if self.offline is not None and self.offline.signal is not None:
            rule = self.offline
            if self.scale is Scale.binary:
                if rule.pass_at is None or rule.levels_at is not None:
                    raise ValueError("offline signal rule of a binary criterion needs 'pass_at' "
                                     "(and no 'levels_at')")
            else:
                if rule.levels_at is None or rule.pass_at is not None:
                    raise ValueError("offline signal rule of an ordinal criterion needs "
                                     "'levels_at' (and no 'pass_at')")
                if not set(rule.levels_at) <= set(range(2, len(self.levels or {}) + 1)):
                    raise ValueError("'levels_at' keys must be levels from 2 to N")
                ordered = [rule.levels_at[k] for k in sorted(rule.levels_at)]
                monotone = all(a <= b for a, b in zip(ordered, ordered[1:])) \
                    if rule.better == "higher" else all(a >= b for a, b in zip(ordered, ordered[1:]))
                if not monotone:
                    raise ValueError("'levels_at' thresholds must get stricter with the level")
        return self

    @property
    def n_levels(self) -> int:
        return len(self.levels) if self.levels else 2

    @property
    def scored(self) -> bool:
        """Whether its answers enter the score, the gates and pass/fail (a category does not)."""
        return self.scale is not Scale.categorical

    def passes(self, value: bool | int | str) -> bool | None:
        """Whether an answer passes; None for a category, which neither passes nor fails."""
        if self.scale is Scale.categorical:
            return None
        if self.scale is Scale.binary:
            return bool(value)
        return int(value) >= (self.pass_at or 0)

    def normalised(self, value: bool | int) -> float:
        """yes = 1, no = 0; level L of N = (L - 1) / (N - 1)."""
        if self.scale is Scale.binary:
            return 1.0 if value else 0.0
        return (int(value) - 1) / (self.n_levels - 1)

    def valid_value(self, value: object) -> bool:
        if self.scale is Scale.categorical:
            return isinstance(value, str) and value in (self.categories or [])
        if self.scale is Scale.binary:
            return isinstance(value, bool)
        return isinstance(value, int) and not isinstance(value, bool) and \
            1 <= value <= self.n_levels

    def applies(self, *, verdict: Verdict | None, kind: ClaimKind | None) -> bool:
        """The one rule of applicability: `applies_if` matches the claim's verdict and kind (a
        line that does not record them, written before they were kept, counts as matching)."""
        if self.applies_if is None or verdict is None or kind is None:
            return True
        return self.applies_if.matches(verdict=verdict, kind=kind)

    def applies_to(self, claim: Claim) -> bool:
        return self.applies(verdict=claim.verdict, kind=claim.kind)


class Rubric(StrictModel):
    id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,63}$")]
    version: str
    """Semantic version, e.g. 1.0.0 (quote it in YAML)."""
    applies_to: Literal["figure", "verdict"]
    """figure: figure claims' reproduced vs published figure; verdict: every claim's verdict."""
    applies_if: AppliesIf | None = None
    """Only claims that match are judged with this rubric (falsification-audit: falsified
    claims); the others get no line under it. Unset on rubrics written before it existed, so
    their published hashes are unchanged."""
    title: str = Field(min_length=3)
    instructions: str = Field(min_length=10)
    criteria: list[Criterion] = Field(min_length=1)
    aggregation: Literal["weighted_mean"] = "weighted_mean"
    pass_threshold: float = Field(gt=0, le=1)
    changelog: str | None = None
    """What changed since the previous version."""
    _hash: str | None = PrivateAttr(default=None)

    @field_validator("version", mode="before")
    @classmethod
    def _semver(cls, value: object) -> object:
        if not isinstance(value, str) or not SEMVER.match(value):
            raise ValueError(f"version must be a quoted semantic version like \"1.0.0\", "
                             f"got {value!r}")
        return value

    @field_validator("criteria")
    @classmethod
    def _unique_ids(cls, criteria: list[Criterion]) -> list[Criterion]:
        seen: set[str] = set()
        for criterion in criteria:
            if criterion.id in seen:
                raise ValueError(f"duplicate criterion id {criterion.id!r}")
            seen.add(criterion.id)
        return criteria

    @property
    def ref_name(self) -> str:
        return ref_name(self.id, self.version)

    def criteria_for(self, claim: Claim) -> list[Criterion]:
        """The criteria that apply to `claim` (the others are not applicable to it)."""
        return [c for c in self.criteria if c.applies_to(claim)]

    def judged_with(self, ref: RubricRef) -> bool:
        """Whether `ref` (from a judgment, label or artifact) names this very text."""
        return (self.id, self.version, self.content_hash()) == (ref.id, ref.version, ref.hash)

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        major, minor, patch = (int(p) for p in self.version.split("."))
        return major, minor, patch

    def content_hash(self) -> str:
        """sha256 of the canonical JSON of the content as written (comments, layout and defaults
        excluded, so that a new optional schema field does not change published hashes)."""
        if self._hash is None:
            canonical = json.dumps(self.model_dump(mode="json", exclude_unset=True),
                                   sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            self._hash = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        return self._hash

    def ref(self) -> RubricRef:
        return RubricRef(id=self.id, version=self.version, hash=self.content_hash())

    def criterion(self, criterion_id: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.id == criterion_id:
                return criterion
        raise KeyError(f"{self.ref_name} has no criterion {criterion_id!r}")

    @property
    def reads_chart(self) -> bool:
        """A figure rubric: it judges the figure pair, whose chart signals its criteria read. Its
        judgment lines alone carry the claim's chart reading trace (`Judgment.chart_trace`)."""
        return self.applies_to == "figure"

    def applies_to_kind(self, kind: ClaimKind) -> bool:
        return self.applies_to == "verdict" or kind is ClaimKind.figure

    def applies_to_claim(self, claim: Claim) -> bool:
        """Whether a claim is judged with this rubric: its kind, and the rubric's `applies_if`
        (a claim without a verdict matches no verdict condition)."""
        if not self.applies_to_kind(claim.kind):
            return False
        condition = self.applies_if
        if condition is None:
            return True
        if condition.verdict is not None and claim.verdict not in condition.verdict:
            return False
        return condition.kind is None or claim.kind in condition.kind

    def applies_to_input(self, claim: ClaimInput) -> bool:
        """Whether a loaded claim is judged with this rubric: `applies_to_claim`, and a figure
        rubric does not judge a claim flagged as having no published figure to compare with
        (`FIGURE_MATCH_NOT_APPLICABLE`: the verdict rubric judges it)."""
        if not self.applies_to_claim(claim.claim):
            return False
        return self.applies_to != "figure" or not any(
            f.name == FIGURE_MATCH_NOT_APPLICABLE for f in claim.flags)

    def describe_scope(self) -> str:
        """Which claims the rubric judges, for people (rubric show, guidelines, docs)."""
        if self.applies_if is not None:
            claims = "claims" if self.applies_to == "verdict" else "figure claims"
            return f"{claims} with {self.applies_if.describe()}"
        return "every claim" if self.applies_to == "verdict" else "figure claims"


def aggregate(rubric: Rubric, answers: Sequence[CriterionAnswer]) -> Aggregate:
    """Weighted mean over scored criteria; coverage is the scored share of the applicable weight.

    The outcome is pass/fail only at full coverage, else incomplete, except that a failed gate
    makes it fail at once.
    """
    by_id = {answer.criterion_id: answer for answer in answers}
    total = scored_weight = weighted = 0.0
    failed_gates: list[str] = []
    for criterion in rubric.criteria:
        answer = by_id.get(criterion.id)
        if not criterion.scored or (answer is not None and
                                    answer.status is AnswerStatus.not_applicable):
            continue
        total += criterion.weight
        if answer is None or answer.status is not AnswerStatus.scored or answer.value is None:
            continue
        scored_weight += criterion.weight
        weighted += criterion.weight * criterion.normalised(answer.value)
        if criterion.gate and not criterion.passes(answer.value):
            failed_gates.append(criterion.id)
    score = weighted / scored_weight if scored_weight else None
    coverage = scored_weight / total if total else 0.0
    if failed_gates:
        outcome = Outcome.failed
    elif total and scored_weight == total and score is not None:
        outcome = Outcome.passed if score >= rubric.pass_threshold - 1e-12 else Outcome.failed
    else:
        outcome = Outcome.incomplete
    return Aggregate(score=score, coverage=coverage, outcome=outcome, failed_gates=failed_gates)


# --- files, the lock and the library ---------------------------------------------------------

LOCK_NAME = "LOCK"
LOCK_HEADER = ("# Published rubric versions and their content hashes (judging rubric lock).\n"
               "# A published version is never edited: publish a new version instead.\n")


def load_rubric_file(path: Path) -> Rubric:
    """Validate one rubric file; errors name the file, the line and the field."""
    doc = read_document(path, error_class=RubricError)
    return _validate(doc)


def parse_rubric_text(text: str, *, path: str = "<rubric>") -> Rubric:
    return _validate(parse_document(text, path=path, error_class=RubricError))


def _validate(doc: LocatedDocument) -> Rubric:
    if not isinstance(doc.data, dict):
        raise RubricError("a rubric must be a mapping with id, version, criteria...", path=doc.path,
                          line=1)
    try:
        return Rubric.model_validate(doc.data)
    except ValidationError as exc:
        raise_validation_error(exc, doc, error_class=RubricError)
        raise  # unreachable: keeps type checkers content


class RubricStatus(StrEnum):
    published = "published"
    draft = "draft"


@dataclass(frozen=True)
class RubricEntry:
    id: str
    version: str
    path: Path
    status: RubricStatus
    locked_hash: str | None

    @property
    def ref_name(self) -> str:
        return ref_name(self.id, self.version)

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        return tuple(int(p) for p in self.version.split("."))  # type: ignore[return-value]


def default_rubrics_dir() -> Path:
    """The checkout's `rubrics/`, else `./rubrics` (the CLI reads JUDGING_RUBRICS_DIR)."""
    beside_package = Path(__file__).resolve().parent.parent / "rubrics"
    return beside_package if beside_package.is_dir() else Path("rubrics")


class RubricLibrary:
    """The rubrics of a `rubrics/` folder, checked against its lock."""

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root is not None else default_rubrics_dir()
        if not self.root.is_dir():
            raise RubricError(f"rubrics folder not found: {self.root} (set JUDGING_RUBRICS_DIR "
                                 f"or --rubrics-dir)")
        self.lock = self._read_lock()
        self._cache: dict[str, Rubric] = {}

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK_NAME

    def _read_lock(self) -> dict[str, str]:
        if not self.lock_path.exists():
            return {}
        doc = read_document(self.lock_path, error_class=RubricError)
        if doc.data is None:
            return {}
        if not isinstance(doc.data, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in doc.data.items()):
            raise RubricError("the lock must map 'id@version' to 'sha256:...'",
                              path=str(self.lock_path))
        return dict(doc.data)

    def entries(self) -> list[RubricEntry]:
        found = []
        for path in sorted(self.root.glob("*/*.yaml")):
            rubric_id, version = path.parent.name, path.stem
            if not SEMVER.match(version):
                continue
            locked = self.lock.get(ref_name(rubric_id, version))
            found.append(RubricEntry(rubric_id, version, path,
                                     RubricStatus.published if locked else RubricStatus.draft,
                                     locked))
        missing = set(self.lock) - {e.ref_name for e in found}
        if missing:
            raise RubricError(f"published rubric(s) missing from {self.root}: "
                              f"{', '.join(sorted(missing))}", path=str(self.lock_path))
        return sorted(found, key=lambda e: (e.id, e.version_tuple))

    def entry(self, ref_name: str) -> RubricEntry:
        rubric_id, _, version = ref_name.partition("@")
        for entry in self.entries():
            if entry.id == rubric_id and (entry.version == version or not version):
                if version:
                    return entry
        if not version:
            return self.latest_entry(rubric_id)
        known = ", ".join(e.ref_name for e in self.entries()) or "none"
        raise RubricError(f"no rubric {ref_name} in {self.root} (known: {known})")

    def latest_entry(self, rubric_id: str, *, include_drafts: bool = False) -> RubricEntry:
        candidates = [e for e in self.entries() if e.id == rubric_id
                      and (include_drafts or e.status is RubricStatus.published)]
        if not candidates:
            ids = sorted({e.id for e in self.entries()
                          if include_drafts or e.status is RubricStatus.published})
            close = difflib.get_close_matches(rubric_id, ids, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise RubricError(f"no published version of rubric {rubric_id!r} in {self.root} "
                                 f"(known: {', '.join(ids) or 'none'}){hint}")
        return max(candidates, key=lambda e: e.version_tuple)

    def load(self, ref_name: str) -> Rubric:
        """Load `id@version` (or the newest published `id`), refusing an edited published file."""
        entry = self.entry(ref_name)
        if entry.ref_name in self._cache:
            return self._cache[entry.ref_name]
        rubric = load_rubric_file(entry.path)
        if (rubric.id, rubric.version) != (entry.id, entry.version):
            raise RubricError(f"file declares {rubric.ref_name} but its path says "
                              f"{entry.ref_name}", path=str(entry.path), line=1)
        if entry.locked_hash is not None and rubric.content_hash() != entry.locked_hash:
            raise RubricError(
                f"published rubric {entry.ref_name} was edited in place (content hash "
                f"{rubric.content_hash()[:19]}..., locked {entry.locked_hash[:19]}...): a "
                f"published version is never changed; save the change as a new version",
                path=str(entry.path))
        self._cache[entry.ref_name] = rubric
        return rubric

    def judged(self, ref: RubricRef) -> Rubric:
        """The rubric a judgment, label or artifact names (`id@version` + hash), refused unless
        this folder holds the very text it was judged with: every stage that reads a run's
        rubrics back (resolve, review, calibrate, report) loads them here."""
        rubric = self.load(str(ref))
        if not rubric.judged_with(ref):
            raise RubricError(f"{ref} in {self.root} is not the text the run judged with (its "
                              f"hash is {rubric.content_hash()[:19]}..., the run's "
                              f"{ref.hash[:19]}...): give the rubrics folder the run used")
        return rubric

    def published_ids(self) -> list[str]:
        return sorted({e.id for e in self.entries() if e.status is RubricStatus.published})

    def defaults(self) -> list[Rubric]:
        """The newest published version of every rubric."""
        return [self.load(self.latest_entry(rid).ref_name) for rid in self.published_ids()]

    def lock_drafts(self, refs: Iterable[str] | None = None) -> list[str]:
        """Publish drafts: record their hashes in the lock. Returns the newly locked refs."""
        wanted = set(refs) if refs is not None else None
        added = []
        lock = dict(self.lock)
        for entry in self.entries():
            if entry.status is RubricStatus.published:
                continue
            if wanted is not None and entry.ref_name not in wanted:
                continue
            rubric = load_rubric_file(entry.path)
            lock[entry.ref_name] = rubric.content_hash()
            added.append(entry.ref_name)
        if added:
            body = yaml.safe_dump(dict(sorted(lock.items())), sort_keys=False)
            write_text_atomic(self.lock_path, LOCK_HEADER + body)
            self.lock = lock
        return added


def resolve_rubric(spec: str, library: RubricLibrary) -> Rubric:
    """A `--rubric` value: `id@version`, `id` (newest published), or a path to a YAML file."""
    candidate = Path(spec)
    if spec.endswith((".yaml", ".yml")) or candidate.is_file():
        return load_rubric_file(candidate)
    return library.load(spec)


def diff_rubrics(old: Rubric, new: Rubric) -> list[str]:
    """A reviewer's summary of what changed, then a unified diff of the canonical YAML."""
    lines: list[str] = []
    old_fields = old.model_dump(mode="json", exclude={"criteria"})
    new_fields = new.model_dump(mode="json", exclude={"criteria"})
    for key in sorted(set(old_fields) | set(new_fields)):
        if key in ("version", "changelog"):
            continue
        if old_fields.get(key) != new_fields.get(key):
            lines.append(f"changed {key}")
    old_criteria = {c.id: c for c in old.criteria}
    new_criteria = {c.id: c for c in new.criteria}
    for cid in old_criteria.keys() - new_criteria.keys():
        lines.append(f"removed criterion {cid}")
    for cid in new_criteria.keys() - old_criteria.keys():
        lines.append(f"added criterion {cid}")
    for cid in sorted(old_criteria.keys() & new_criteria.keys()):
        a = old_criteria[cid].model_dump(mode="json")
        b = new_criteria[cid].model_dump(mode="json")
        changed = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        if changed:
            lines.append(f"changed criterion {cid}: {', '.join(changed)}")
    if not lines:
        lines.append("no change in content")
    old_text = yaml.safe_dump(old.model_dump(mode="json"), sort_keys=False, width=100).splitlines()
    new_text = yaml.safe_dump(new.model_dump(mode="json"), sort_keys=False, width=100).splitlines()
    lines.append("")
    lines.extend(difflib.unified_diff(old_text, new_text, old.ref_name, new.ref_name, lineterm=""))
    return lines


def rule_not_applicable(criterion: Criterion, claim: ClaimInput,
                        signals: dict[str, Signal]) -> CriterionAnswer | None:
    """The "not applicable" answer of a criterion whose offline rule says it does not apply to
    this claim (e.g. `rerun_reproduces` on a claim that was not re-run), else None. Every judge
    answers such a criterion the same way, and it carries no weight."""
    if criterion.offline is None or criterion.offline.rule not in CONDITIONAL_RULES:
        return None
    result = RULES[criterion.offline.rule](claim, signals)
    if result.applicable:
        return None
    return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.not_applicable,
                           reason=result.rationale, evidence=[criterion.offline.rule])


def not_applicable(criterion: Criterion) -> CriterionAnswer:
    """The answer of a criterion whose `applies_if` excludes the claim (it carries no weight)."""
    assert criterion.applies_if is not None
    return CriterionAnswer(criterion_id=criterion.id, status=AnswerStatus.not_applicable,
                           reason=f"applies only to claims with {criterion.applies_if.describe()}")
