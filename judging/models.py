"""Domain models: everything read from YAML/JSON or persisted is one of these (extra fields forbidden)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    ValidationInfo,
    model_validator,
)


class StrictModel(BaseModel):
    """Base for every model read from a file or written to one: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


#: Validation context of data read from a run-directory file (`VersionedModel.from_file`): there, a
#: missing version means "written before versions were recorded", i.e. the model's first version.
FROM_FILE = {"judging.from_file": True}


class VersionedModel(StrictModel):
    """A whole file or one line of a file: it names its schema version, first, as "schema".

    Each subclass declares, as its first field,
    `schema_: Literal["judging.<name>/<n>"] = Field(default="judging.<name>/<n>", alias="schema")`.
    Bump <n> only when the shape changes (a field renamed, removed, retyped or made required), and
    add the step from the previous version to the subclass's `migrate`; a new optional field is
    not a shape change. Readers accept every previous version: `migrate` upgrades the raw data
    before validation, one commented step per version. The version never enters an input hash.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True,
                              populate_by_name=True)

    #: The version of files written before versions were recorded (they have no "schema" field).
    FIRST_VERSION: ClassVar[int] = 1

    @classmethod
    def current_schema(cls) -> str:
        return cls.model_fields["schema_"].default

    @classmethod
    def schema_name(cls) -> str:
        return cls.current_schema().rsplit("/", 1)[0]

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Upgrade `data`, which names its version in "schema", to the current version."""
        return data

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "schema_" in data:
            data["schema"] = data.pop("schema_")
        if "schema" not in data:
            if not (info.context or {}).get("judging.from_file"):
                return data  # built in code: the field's default, the current version
            data["schema"] = f"{cls.schema_name()}/{cls.FIRST_VERSION}"
        version = data["schema"]
        current = cls.current_schema()
        if not (isinstance(version, str) and version.startswith(cls.schema_name() + "/")):
            raise ValueError(f"schema {version!r} is not a {cls.schema_name()} version "
                             f"(this code reads {current} and earlier)")
        if version != current:
            data = cls.migrate(data)
        if data.get("schema") != current:
            raise ValueError(f"schema {version!r} is unknown: this code reads {current} and "
                             f"earlier (was the file written by a newer judging?)")
        return data

    @classmethod
    def from_file(cls, raw: str | bytes) -> Self:
        """One file's (or one line's) JSON, upgraded from any earlier version."""
        return cls.model_validate_json(raw, context=FROM_FILE)

    # Files name the version as "schema" (the field is `schema_`: `schema` is a BaseModel name).
    def model_dump(self, *, by_alias: bool = True, **kwargs: Any) -> dict[str, Any]:
        return super().model_dump(by_alias=by_alias, **kwargs)

    def model_dump_json(self, *, by_alias: bool = True, **kwargs: Any) -> str:
        return super().model_dump_json(by_alias=by_alias, **kwargs)


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


FiniteFloat = Annotated[float, AfterValidator(_finite)]

#: Ids appear in file names, Argilla record ids and URLs: a conservative character set, no "::".
Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/+@-]*$",
                                              max_length=200)]

#: Limits on free text from participants: large enough for any honest text, small enough that one
#: hostile manifest cannot exhaust memory or a judge's context. Every cut to fit one of them names
#: it (tests/test_structure.py finds a number spelled instead).
#: A claim's statement (and the title a found claim carries into it): a paragraph, not a page.
MAX_STATEMENT_CHARS = 4_000
#: The participant's argument for a claim, the longest text a prompt carries of it (the prompt
#: says when it was cut).
MAX_JUSTIFICATION_CHARS = 20_000
#: A note about a claim: a quote on the page, a scale note, the verdict as written, a flag's
#: detail, a reason, a script's stderr tail.
MAX_NOTE_CHARS = 4_000
#: A Hub submission's files, at most, by default (the organizer's `--max-download-files`): a
#: reproduction is a report, results, logs, figures and scripts (a Space is read to 2,000
#: files); tens of thousands is a dump that would fill the disk with inodes before it is read.
MAX_SOURCE_FILES = 5_000
#: A Hub submission's bytes, at most, by default (`--max-download-mb`): reports, logs and figures
#: are megabytes; this leaves room for a small checkpoint while a few hundred submissions still
#: fit one judging machine's disk.
MAX_SOURCE_BYTES = 2 * 1024**3
#: What a reviewer reads beside an answer or a signal: a rationale a panel composes from its
#: members, a signal's reason listing what it found. A paragraph, cut where it grows with its input.
MAX_RATIONALE_CHARS = 2_000


def _relative_path(value: str) -> str:
    if not value or value.strip() != value:
        raise ValueError("must be a non-empty path without surrounding spaces")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("must not contain control characters (newlines, tabs, NUL)")
    if PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute() or \
            PureWindowsPath(value).drive:
        raise ValueError(f"{value!r} is absolute: paths must be relative to the submission folder")
    if ".." in re.split(r"[\\/]", value):
        raise ValueError(f"{value!r} contains '..': paths must stay inside the submission folder")
    return value


RelativePath = Annotated[str, StringConstraints(max_length=500), AfterValidator(_relative_path)]


class ClaimKind(StrEnum):
    figure = "figure"
    number = "number"
    table = "table"
    theorem = "theorem"


class Verdict(StrEnum):
    """The participant's verdict on a claim (not ours: ours is an Outcome)."""

    verified = "verified"
    falsified = "falsified"
    inconclusive = "inconclusive"


class OwnVerdict(StrEnum):
    """A judge's (or reviewer's) own verdict on a claim, from the evidence, whatever the
    participant said: the ICML 2026 challenge's four labels. `toy`: the evidence is real but
    only at a reduced scale or scope, so it settles neither direction."""

    verified = "verified"
    falsified = "falsified"
    toy = "toy"
    inconclusive = "inconclusive"


#: The criterion of a verdict rubric (verdict-justification 1.2.0 and later) that asks for the
#: judge's own verdict; `resolve` makes it the claim's final verdict.
OWN_VERDICT = "own_verdict"
#: The review question every record asks ("Overall, does the claim pass this rubric?"): pass,
#: fail or cannot_tell. A decision, not a note (resolve/decide.py).
OVERALL_VERDICT = "overall_verdict"


class ProblemKind(StrEnum):
    paper_error = "paper-error"
    code_bug = "code-bug"
    environment = "environment"
    data = "data"
    other = "other"


class HumanHelp(StrEnum):
    none = "none"
    light = "light"
    heavy = "heavy"


class Tolerance(StrictModel):
    absolute: FiniteFloat | None = Field(default=None, ge=0)
    """Largest allowed |reproduced - reported|."""
    relative: FiniteFloat | None = Field(default=None, ge=0)
    """Largest allowed |reproduced - reported| / |reported|."""

    @model_validator(mode="after")
    def _exactly_one(self) -> Tolerance:
        if (self.absolute is None) == (self.relative is None):
            raise ValueError("give exactly one of 'absolute' or 'relative'")
        return self

    def describe(self) -> str:
        return f"±{self.absolute:g}" if self.absolute is not None else f"±{self.relative:.3g} relative"


def _single_line(value: str) -> str:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValueError("must be one line without control characters")
    return value


SingleLine = Annotated[str, AfterValidator(_single_line)]


class TableValue(StrictModel):
    name: SingleLine = Field(min_length=1, max_length=200)
    """The table cell, e.g. "BLEU (en-de)"."""
    reported: FiniteFloat | None = None
    """The paper's value (may come from the registry)."""
    reproduced: FiniteFloat | None = None
    """The reproduction's value; absent when it could not be measured."""
    tolerance: Tolerance | None = None
    """Overrides the claim's tolerance for this cell."""


#: A Hugging Face Jobs hardware name (`cpu-basic`, `a10g-small`...), checked against the Hub's
#: list when a re-run asks for it.
Flavor = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]
#: A key in a results file or an output line: a dotted path for nested JSON objects.
ResultKey = Annotated[str, StringConstraints(min_length=1, max_length=200),
                      AfterValidator(_single_line)]


class RerunRead(StrictModel):
    """Where `judging rerun` reads the number(s) of a re-run of the claim's script."""

    source: Literal["file", "line", "json"]
    """file: a JSON file the script writes (`file`, read after the run); line: the last
    `KEY=VALUE` line of its output; json: its last line of output, as JSON."""
    file: RelativePath | None = None
    """source file: the results file, relative to the submission folder (the working directory)."""
    key: ResultKey | None = None
    """Number claims: the key of the number (dotted for nested objects); json without a key: the
    line is the number itself, or an object with one number."""
    keys: dict[Annotated[str, StringConstraints(max_length=200)], ResultKey] | None = Field(
        default=None, max_length=200)
    """Table claims: the key of each cell, by cell name (default: the cell's name)."""

    @model_validator(mode="after")
    def _consistent(self) -> RerunRead:
        if (self.source == "file") != (self.file is not None):
            raise ValueError("'file' names the results file, and only for source: file")
        if self.source == "line" and self.key is None and self.keys is None:
            raise ValueError("source: line needs the 'key' of the KEY=VALUE line (or 'keys' for "
                             "a table)")
        if self.key is not None and self.keys is not None:
            raise ValueError("give 'key' (a number claim) or 'keys' (a table claim), not both")
        return self


class RerunSpec(StrictModel):
    """How `judging rerun` runs the claim's script (`evidence.script`) and reads its number. Every
    field is optional: without one, the script runs with no arguments in the environment found
    beside it (uv.lock, pyproject.toml, requirements.txt, a Dockerfile) and its last line of
    output is read as JSON (or the registry's pattern for the claim, when it gives one)."""

    args: list[Annotated[str, StringConstraints(max_length=500), AfterValidator(_single_line)]] \
        = Field(default_factory=list, max_length=50)
    """The script's command-line arguments."""
    environment: RelativePath | None = None
    """The environment file: uv.lock, pyproject.toml, requirements.txt or Dockerfile."""
    python: Annotated[str, StringConstraints(pattern=r"^[<>=!~0-9., ]{1,40}$")] | None = None
    """The Python version when the environment file does not pin one, e.g. "3.11"."""
    read: RerunRead | None = None
    timeout_s: int | None = Field(default=None, ge=1, le=7 * 24 * 3600)
    """The run's wall-time limit (default: `judging rerun --timeout`)."""
    flavor: Flavor | None = None
    """The Hugging Face Jobs hardware for `--engine hf-jobs` (default: cpu-basic)."""


class Evidence(StrictModel):
    script: RelativePath | None = None
    """The script that produced the reproduction."""
    scripts: list[RelativePath] = Field(default_factory=list, max_length=50)
    """Further scripts of the reproduction (a logbook's run cells name several). Left out of
    input hashes while empty."""
    logs: list[RelativePath] = Field(default_factory=list, max_length=50)
    """Log files that show the reproduced numbers."""
    traces: list[RelativePath] = Field(default_factory=list, max_length=50)
    """The agent's traces of the reproduction (Claude-Code event JSONL, `judging.traces`): the
    session that ran it. Left out of input hashes while empty."""
    proof_script: RelativePath | None = None
    """For a falsified claim: a script that shows the problem."""
    problem_kind: ProblemKind | None = None
    """For a falsified claim: what kind of problem was found."""
    problem_note: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    """Required when problem_kind is "other"."""
    rerun: RerunSpec | None = None
    """How `judging rerun` runs `script` and reads its number. Left out of input hashes while
    unset."""

    @model_validator(mode="after")
    def _note_for_other(self) -> Evidence:
        if self.problem_kind is ProblemKind.other and not (self.problem_note or "").strip():
            raise ValueError("problem_kind 'other' needs a problem_note")
        return self


class FieldProvenance(StrictModel):
    """How one field of a claim was obtained when it was read from prose (a logbook page)."""

    how: Annotated[str, StringConstraints(
        pattern=r"^(declared|pattern|order|llm:[^\s]{1,200})$")]
    """declared (the participant's own structured field: a table cell, a cell title, a
    `Verdict:` line), pattern (a deterministic text pattern), order (a claim id numbered by
    the claim's position, the text giving no number), or llm:MODEL."""
    quote: str = Field(max_length=MAX_NOTE_CHARS)
    """The verbatim text it came from (a substring of the page)."""
    place: SingleLine | None = Field(default=None, max_length=200)
    """Which declared place: "Verdict line", "claims table cell", "run output key=value",
    "results file results.json", "short_description", ... (None: not recorded)."""
    model: SingleLine | None = Field(default=None, max_length=200)
    """LLM-extracted fields: the model that answered."""
    request_hash: SingleLine | None = Field(default=None, max_length=200)
    """LLM-extracted fields: the hash of the request (the answer cache's key)."""
    cached: bool | None = None
    """LLM-extracted fields: the answer came from the cache (no call was made)."""


class Claim(StrictModel):
    """One claim of a submission, as written in its manifest (or read from a logbook page)."""

    claim_id: Identifier
    """Unique within the submission; registry claims share their registry id."""
    kind: ClaimKind
    source: SingleLine | None = Field(default=None, max_length=200)
    """Where in the paper, e.g. "Figure 3"."""
    statement: str = Field(min_length=1, max_length=MAX_STATEMENT_CHARS)
    published_figure: RelativePath | None = None
    reproduced_figure: RelativePath | None = None
    reported_value: FiniteFloat | None = None
    reproduced_value: FiniteFloat | None = None
    values: list[TableValue] | None = Field(default=None, max_length=200)
    """Table claims: one entry per cell compared."""
    # Figure data (`judging.figures.data`): the chart signals compare series data to data where a
    # side has it. Left out of input hashes while unset (run/lines.py HASHED_ALWAYS).
    reproduced_data: RelativePath | None = None
    """Figure claims: the reproduced figure's plotted data (CSV or JSON), beside the figure."""
    published_data: RelativePath | None = None
    """Figure claims: the published figure's data, when the submission supplies the reference;
    a registry claim's data comes from the registry (`published_data` there)."""
    tolerance: Tolerance | None = None
    verdict: Verdict | None = None
    """Required in a manifest; from a logbook it may be absent, with the reason in `absent`."""
    justification: str = Field(default="", max_length=MAX_JUSTIFICATION_CHARS)
    scale_note: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    """Honesty about scale, e.g. "trained for 1/4 of the steps"."""
    evidence: Evidence = Field(default_factory=Evidence)
    # Fields read from prose (logbooks). Each is left out of input hashes while unset
    # (run/lines.py HASHED_ALWAYS), so runs judged before they existed resume unchanged.
    source_verdict: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    """The participant's own verdict label, verbatim (e.g. "PARTIAL / BLOCKED.")."""
    toy: bool = False
    """The participant calls the evidence toy / reduced scale: a scale, not a direction."""
    provenance: dict[str, FieldProvenance] = Field(default_factory=dict, max_length=50)
    """Per field read from prose (verdict, reported_value, ...): how, and the quote."""
    absent: dict[str, str] = Field(default_factory=dict, max_length=50)
    """Fields looked for and not found, with the reason (e.g. verdict, reproduced_value)."""
    theorem_values: bool = False
    """A theorem claim that carries the numbers of its numerical audit (logbooks)."""

    @model_validator(mode="after")
    def _fields_fit_kind(self) -> Claim:
        kind = self.kind
        if self.verdict is None and not self.absent.get("verdict"):
            raise ValueError("verdict: Field required (verified, falsified or inconclusive)")
        if kind is not ClaimKind.figure and (self.published_figure or self.reproduced_figure):
            raise ValueError(f"published_figure/reproduced_figure are for figure claims, not {kind}")
        if kind is not ClaimKind.figure and (self.published_data or self.reproduced_data):
            raise ValueError(f"published_data/reproduced_data are for figure claims, not {kind}")
        if kind is not ClaimKind.table and self.values is not None:
            raise ValueError(f"'values' is for table claims, not {kind}")
        if kind is ClaimKind.table and self.values is not None and not self.values:
            raise ValueError("a table claim needs at least one entry in 'values'")
        if kind is ClaimKind.table and (self.reported_value is not None
                                        or self.reproduced_value is not None):
            raise ValueError("a table claim lists its numbers under 'values'")
        if kind is ClaimKind.theorem and not self.theorem_values and (
                self.reported_value is not None or self.reproduced_value is not None):
            raise ValueError("a theorem claim has no reported/reproduced value")
        if self.verdict is not Verdict.inconclusive:
            if kind is ClaimKind.figure and not self.reproduced_figure \
                    and "reproduced_figure" not in self.absent:
                raise ValueError("a figure claim needs reproduced_figure (unless inconclusive)")
            if kind is ClaimKind.number and self.reproduced_value is None \
                    and "reproduced_value" not in self.absent:
                raise ValueError("a number claim needs reproduced_value (unless inconclusive)")
            if kind is ClaimKind.table and self.values is None:
                raise ValueError("a table claim needs 'values' (unless inconclusive)")
        return self


class Agent(StrictModel):
    name: str = Field(min_length=1, max_length=200)
    model: str | None = Field(default=None, max_length=200)


class SubmissionHeader(StrictModel):
    """A submission manifest without its claims (claims are validated one by one)."""

    submission_id: Identifier
    """Unique; for a Hugging Face Space, its repo id."""
    paper_id: Identifier
    paper_title: str | None = Field(default=None, max_length=500)
    agent: Agent | None = None
    human_help: HumanHelp | None = None
    warnings: list[Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)]] = Field(
        default_factory=list, max_length=200)
    """What intake noticed about the submission as a whole (a logbook's orphan pages, dangling
    links, index.md and logbook.json disagreeing). Left out of input hashes while empty."""


class Submission(SubmissionHeader):
    claims: list[Claim]


class SubmissionSource(StrictModel):
    """Where a submission's files were read from, when that is a Hugging Face repo: the revision
    judged (set by intake, never by the participant's manifest)."""

    source: str
    """The Hub source as downloaded, e.g. `hf://spaces/OWNER/NAME@<sha>`."""
    repo_type: str
    repo_id: str
    revision: str | None = None
    """The commit judged (a 40-hex sha when it was resolved: `--as-of`, discovery or given),
    else the branch or tag as given (None: the default branch)."""
    committed_at: datetime | None = None
    """The date of that commit, when known."""
    as_of: datetime | None = None
    """The deadline of `--as-of`: the commit is the last one at or before it."""
    discovered_by: list[str] = Field(default_factory=list)
    """The tags of `--discover` that found it (empty: named on the command line)."""


def natural_key(text: str | None) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the digit runs of an id by value: `r2` before `r10`, `c9` before
    `c10` (every id list a person reads is ordered by it).

    >>> sorted(["p/r10", "p/r2", "p/c1"], key=natural_key)
    ['p/c1', 'p/r2', 'p/r10']
    """
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", text or "") if part)


class ClaimKey(StrictModel):
    """The identity of a claim everywhere: several submissions reproduce the same registry claim."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    submission_id: str
    claim_id: str

    def __str__(self) -> str:
        return f"{self.submission_id}::{self.claim_id}"

    def sort_key(self) -> tuple:
        """Natural order: by submission, then claim id (`c2` before `c10`)."""
        return natural_key(self.submission_id), natural_key(self.claim_id)


class ReferenceOrigin(StrEnum):
    registry = "registry"
    participant = "participant-supplied"


class Flag(StrictModel):
    """Something a reviewer should know about a claim (a doctored reference, a copied figure...)."""

    name: str
    detail: str


#: The flag on a claim that has no published figure to compare with (a logbook claim that answers
#: no registry claim with one): figure-match is not applicable to it; the verdict rubric judges it.
FIGURE_MATCH_NOT_APPLICABLE = "figure_match_not_applicable"


class ClaimInput(VersionedModel):
    """A claim ready to judge: validated, registry applied, its files resolved inside the submission.
    One line of claims.jsonl."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.claim/1"] = Field(default="judging.claim/1", alias="schema")
    key: ClaimKey
    submission: SubmissionHeader
    claim: Claim
    """The effective claim: the registry's reference fields replace the participant's."""
    root: Path
    """The submission folder."""
    published_path: Path | None = None
    reproduced_path: Path | None = None
    published_data_path: Path | None = None
    """The published figure's data file: the registry's for a registry claim that has one."""
    reproduced_data_path: Path | None = None
    """The reproduced figure's data file (a logbook's: written under the run directory)."""
    participant_reference_path: Path | None = None
    """The submission's own copy of a registry figure, to check it against the registry's."""
    evidence_paths: dict[str, Path] = Field(default_factory=dict)
    """Resolved evidence files by role: script, proof_script, logs[0], logs[1]..."""
    reference: ReferenceOrigin = ReferenceOrigin.participant
    flags: list[Flag] = Field(default_factory=list)
    manifest_line: int | None = None
    source: SubmissionSource | None = None
    """The Hub revision the submission was read at (None: a local folder). Not in input hashes:
    the files' contents are."""
    origin: str | None = None
    """Where the claim was read when it is not a manifest's: e.g. a logbook page and row."""
    rerun_pattern: str | dict[str, str] | None = None
    """The registry's pattern for reading the claim's number from a re-run's output (a regular
    expression whose first group is the number; a table's, one per cell name). Set by intake from
    the registry, never by the participant."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.claim/1 is the first version; lines written before versions were recorded carry
        # no "schema" and are read as /1 (same shape).
        return data


class ClaimProblem(StrictModel):
    """A claim that could not be loaded; it is recorded as an error, the others go on."""

    submission_id: str
    claim_id: str | None
    """None when the claim's own id is missing or invalid."""
    index: int
    """Position in the manifest's claims list."""
    manifest: str
    line: int | None
    reason: str
    kind: ClaimKind | None = None
    verdict: Verdict | None = None

    @property
    def key(self) -> ClaimKey:
        return ClaimKey(submission_id=self.submission_id,
                        claim_id=self.claim_id or f"#claim-{self.index}")


class NotAddressed(VersionedModel):
    """A registry claim of a submission's paper that the submission has no claim for (one line of
    not_addressed.jsonl, rewritten by each `judging run` from its inputs). The leaderboard counts
    it as a judged claim that did not pass."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.not_addressed/1"] = Field(default="judging.not_addressed/1",
                                                        alias="schema")
    submission_id: str
    paper_id: str
    claim_id: str
    """The registry claim's id."""
    statement: str | None = None
    """The registry's text of the claim."""
    source: str | None = None
    """Where in the paper, when the registry says."""

    @property
    def key(self) -> ClaimKey:
        return ClaimKey(submission_id=self.submission_id, claim_id=self.claim_id)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.not_addressed/1 is the first version.
        return data


# --- judgments -------------------------------------------------------------------------------


class AnswerStatus(StrEnum):
    scored = "scored"
    unscored = "unscored"
    not_applicable = "not_applicable"


class ConfidenceSource(StrEnum):
    self_reported = "self-reported"
    sample_agreement = "sample-agreement"
    signal = "signal"
    rule = "rule"


class CriterionAnswer(StrictModel):
    criterion_id: str
    status: AnswerStatus
    reason: str | None = None
    """Why the criterion is unscored or not applicable."""
    value: bool | int | str | None = None
    """yes/no for binary criteria, the level for ordinal ones, the category for categorical
    ones; None unless scored."""
    passed: bool | None = None
    """yes, or level >= the criterion's pass_at; None unless scored (and for a category, which
    neither passes nor fails)."""
    quote: str | None = None
    """Categorical answers (the judge's own verdict): the passage of the evidence it rests on,
    verbatim."""
    rationale: str = ""
    confidence: float | None = Field(default=None, ge=0, le=1)
    confidence_source: ConfidenceSource | None = None
    evidence: list[str] = Field(default_factory=list)
    """Names of the signals or rule checks the answer rests on."""
    members: int | None = None
    """Panels and sample sets: how many member answers were scored."""
    agreement: float | None = Field(default=None, ge=0, le=1)
    """Panels and sample sets: share of the scored members that gave the aggregate answer."""
    spread: float | None = None
    """Panels and sample sets: max - min level (ordinal) or the minority share (yes/no)."""


#: The text in place of a reason already shown, naming the criterion it is shown beside (a bare
#: "(as above)" sent the reader hunting up the table for which row it meant).
SAME_AS = "same reason as {}"


def shown_reasons(reasons: Sequence[str | None], names: Sequence[str]) -> list[str | None]:
    """Each reason as a table of answers shows it: a reason repeated is shown once, where it
    first stands, with how many criteria it holds for; its later places name the criterion
    (`names`, one per reason) where it is spelled out.

    >>> shown_reasons(["no rule", "fine", "no rule", None, "no rule"], ["a", "b", "c", "d", "e"])
    ['no rule (3 criteria)', 'fine', 'same reason as a', None, 'same reason as a']
    """
    if len(names) != len(reasons):
        raise ValueError(f"{len(reasons)} reasons for {len(names)} names")
    counts = Counter(r for r in reasons if r)
    first: dict[str, str] = {}
    shown: list[str | None] = []
    for reason, name in zip(reasons, names):
        if not reason or counts[reason] == 1:
            shown.append(reason)
        elif reason in first:
            shown.append(SAME_AS.format(first[reason]))
        else:
            first[reason] = name
            shown.append(f"{reason} ({counts[reason]} criteria)")
    return shown


def answer_texts(answers: Sequence[CriterionAnswer]) -> list[str]:
    """What a table of answers shows beside each: the rationale of a scored answer, else its
    reason, a repeated reason once with its count (`shown_reasons`)."""
    reasons = shown_reasons([None if a.status is AnswerStatus.scored else a.reason
                             for a in answers], [a.criterion_id for a in answers])
    return [a.rationale if a.status is AnswerStatus.scored else (reason or "")
            for a, reason in zip(answers, reasons)]


def answer_value_text(value: bool | int | str | None) -> str | None:
    """An answer's value as a table of answers shows it: yes/no, the level or the category;
    None unless scored.

    >>> answer_value_text(True), answer_value_text(4), answer_value_text(None)
    ('yes', '4', None)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


# --- untrusted text made inert where it is shown ---------------------------------------------
# A participant's claim, a script's stderr, a reason quoting either: the terminal (the CLI's
# consoles) and Argilla's Markdown fields go through these; HTML (the report, the dashboard) is
# escaped by its templates. Hand-written: rich keeps ESC (it strips only bell, backspace, CR and
# form feeds) and its ANSI decoder misses OSC sequences ended by BEL; no maintained library
# covers C1 controls and bidi overrides as well, and neither markdown-it nor argilla has a
# Markdown escaping function.

# ESC sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC (ESC P|X|^|_ ...
# ST), and two-character escapes; C1's own CSI (0x9b) and OSC (0x9d) likewise.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?")
# What is left of C0 and C1 (newline and tab kept), DEL, and the bidirectional overrides and
# isolates that reorder what a reader sees (a "Trojan Source" line).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                       "\u2066-\u2069]")


def for_terminal(text: str) -> str:
    """`text` with no escape sequence and no control character but newline and tab: nothing
    in it moves the cursor, erases, retitles the window or reorders a line.

    >>> for_terminal("ok\\x1b]0;pwned\\x07\\x1b[2J\\x1b[1A done\\r\\u202e")
    'ok done'
    """
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


# Markdown that makes a browser fetch or follow something: images and links and reference
# definitions (each needs a bracket), raw HTML and autolinks (`<`), bare URLs that GFM links by
# itself (`://`, `www.`), and the backslash (so that ours are not undone). The rest (`!`, `(`,
# emphasis) is inert once these are escaped, and is left as the participant wrote it.
_MARKDOWN_ACTIVE = re.compile(r"[\\\[\]<]|(?<=:)//|(?<=www)\.", re.IGNORECASE)


def for_markdown(text: str) -> str:
    """`text` shown as itself by a Markdown renderer: every character that could open an
    image, a link or raw HTML is backslash-escaped (CommonMark shows an escaped ASCII
    punctuation character as the character), so the reader sees the attacker's markup as text
    and the browser fetches nothing.

    >>> print(for_markdown("see ![x](http://a.example/p.png) <img src=x>"))
    see !\\[x\\](http:\\/\\/a.example/p.png) \\<img src=x>
    """
    cleaned = for_terminal(text)
    return _MARKDOWN_ACTIVE.sub(lambda m: "".join("\\" + c for c in m.group(0)), cleaned)


class Outcome(StrEnum):
    passed = "pass"
    failed = "fail"
    incomplete = "incomplete"


class Aggregate(StrictModel):
    score: float | None
    """Weighted mean over the scored criteria (ordinal normalised to [0, 1]); None if none scored."""
    coverage: float
    """Share of the applicable weight that was scored."""
    outcome: Outcome
    failed_gates: list[str] = Field(default_factory=list)
    """Gate criteria answered "fail": the outcome is fail whatever the score."""


class LineStatus(StrEnum):
    scored = "scored"
    unscored = "unscored"
    error = "error"


def ref_name(rubric_id: str, version: str) -> str:
    """How a rubric version is named everywhere: `id@version`."""
    return f"{rubric_id}@{version}"


class RubricRef(StrictModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    version: str
    hash: str

    def __str__(self) -> str:
        return ref_name(self.id, self.version)


class TokenUsage(StrictModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


SettingValue = str | int | float | bool | None

#: The per-call settings an LLM judge records of what the endpoint served: the response's
#: `model`, its `system_fingerprint`, and the provider its headers (or body) name.
SERVED_SETTINGS = ("served_model", "system_fingerprint", "served_by")


class Provenance(StrictModel):
    judge: str
    """The judge spec, e.g. "offline" or "openai:gpt-4.1-mini"."""
    model: str | None = None
    settings: dict[str, SettingValue] = Field(default_factory=dict)
    template_hash: str | None = None
    """Rubric content hash + the version of the code that assembles the prompt (or applies rules);
    None on error lines written before any judge ran."""
    request_hash: str | None = None
    """Hash of the full request (the answer cache key); None when nothing was requested."""
    raw_answer: str | None = None
    usage: TokenUsage | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    cached: bool = False
    """The answer was replayed from the answer cache (no call was made for this line)."""
    timestamp: datetime
    code_version: str

    def served(self) -> str | None:
        """What the endpoint said served the call, as one string: the response's `model` (which
        a router may change behind the requested name), its `system_fingerprint` (the backend
        build) and the provider it names, where present (the LLM judge records them per call in
        `settings`: SERVED_SETTINGS); None when the endpoint said nothing."""
        model, fingerprint, provider = (self.settings.get(name) for name in SERVED_SETTINGS)
        if model is None and fingerprint is None:
            return None
        return (f"{model or '?'}" + (f" @ {fingerprint}" if fingerprint else "")
                + (f" ({provider})" if provider else ""))


class SignalStatus(StrEnum):
    ok = "ok"
    absent = "absent"


class Signal(StrictModel):
    """A measured value, or its honest absence (never a made-up 0)."""

    value: float | bool | None = None
    status: SignalStatus = SignalStatus.ok
    reason: str | None = None
    """Why the signal is absent."""

    @model_validator(mode="after")
    def _value_xor_reason(self) -> Signal:
        if isinstance(self.value, float) and not math.isfinite(self.value):
            raise ValueError("a signal value must be finite (record it as absent)")
        if self.status is SignalStatus.ok and self.value is None:
            raise ValueError("an ok signal needs a value")
        if self.status is SignalStatus.absent and (self.value is not None or not self.reason):
            raise ValueError("an absent signal has no value and needs a reason")
        return self

    @classmethod
    def absent(cls, reason: str) -> Signal:
        return cls(status=SignalStatus.absent, reason=reason)


#: Bounds of a chart reading trace (`ChartTrace`, one per figure claim on each judgment line of
#: its figure rubric): room for what a reviewer reads (a 2x4 facet grid, a dozen series, a dozen ticks per
#: axis), so that one hostile figure with hundreds of marks or OCR fragments cannot swell the
#: judgments file. What is cut is counted (`*_count`), never silently lost.
MAX_TRACE_PANELS = 8
"""Panels recorded per figure (their number is kept)."""
MAX_TRACE_SERIES = 8
"""Series recorded per panel."""
MAX_TRACE_TICKS = 12
"""Tick labels recorded per axis."""
MAX_TRACE_NAMES = 12
"""Legend names recorded per panel."""
MAX_TRACE_NOTES = 12
"""Notes (a panel's problems, the evidence's confirmations and doubts) recorded per list."""
MAX_TRACE_PANEL_NOTES = 4
"""Problems recorded per panel."""
MAX_TRACE_TEXT = 240
"""Characters of one note (a problem, a doubt)."""
MAX_TRACE_LABEL = 40
"""Characters of one tick label, legend name or series style as read."""
MAX_TRACE_BYTES = 100_000
"""The JSON of a trace at every bound above stays under this (tests/signals/chart/test_trace.py
builds one)."""

TraceText = Annotated[str, StringConstraints(max_length=MAX_TRACE_TEXT)]
TraceLabel = Annotated[str, StringConstraints(max_length=MAX_TRACE_LABEL)]


class AxisTrace(StrictModel):
    """One axis as the reader fitted it to its tick labels."""

    scale: Literal["linear", "log"]
    data_range: tuple[float, float] | None
    """The data values at the plot area's edges (None: not finite)."""
    ticks: list[TraceLabel] = Field(default_factory=list, max_length=MAX_TRACE_TICKS)
    """The tick labels on the fit, as read."""
    tick_count: int = 0
    confidence: float
    borrowed: bool = False
    """Taken from an aligned panel (shared axes), not read on this one."""


class SeriesTrace(StrictModel):
    """One series the reader found in a panel."""

    name: TraceLabel | None = None
    """Its legend name, when the legend was read."""
    name_sure: bool = True
    style: TraceLabel
    kind: Literal["line", "scatter", "bar"]
    points: int
    confidence: float
    units: Literal["data", "x normalised", "y normalised", "normalised"] = "data"
    """"normalised": plot-area units on the axis that was not read."""


class PanelTrace(StrictModel):
    """One plot area: its axes (None: not read, see `problems`), legend and series."""

    bbox: tuple[int, int, int, int]
    x: AxisTrace | None = None
    y: AxisTrace | None = None
    legend: list[TraceLabel] = Field(default_factory=list, max_length=MAX_TRACE_NAMES)
    legend_count: int = 0
    series: list[SeriesTrace] = Field(default_factory=list, max_length=MAX_TRACE_SERIES)
    series_count: int = 0
    problems: list[TraceText] = Field(default_factory=list, max_length=MAX_TRACE_PANEL_NOTES)
    problem_count: int = 0


class FigureTrace(StrictModel):
    """What was read of one figure of the pair."""

    source: Literal["image", "data"]
    """Read from the image, or built from the figure's data file."""
    readable: bool
    reason: TraceText | None = None
    """Why the figure (or its data) could not be read, or which of its axes could not."""
    size: tuple[int, int] = (0, 0)
    panels: list[PanelTrace] = Field(default_factory=list, max_length=MAX_TRACE_PANELS)
    panel_count: int = 0

    def items(self) -> list[str]:
        """What was read, in words (plain text), one item a line: `ChartTrace.sections` and
        `judging chart` say a figure's reading this way."""
        return _figure_items(self)


class PanelPairTrace(StrictModel):
    """The independent readings of one pair of panels that the evidence weighs (each None when
    it could not be made; see judging.signals.chart.evidence.PanelEvidence)."""

    index: int
    series: float | None = None
    """Agreement of the paired series' data in [0, 1]."""
    crossed: float | None = None
    """The agreement of the series paired by their data alone, where the legends pair otherwise."""
    ink: tuple[float, float] | None = None
    """Shares of each chart's data ink near the other's."""
    series_on_ink: tuple[float, float] | None = None
    x_ticks: float | None = None
    """Overlap of the x axes' ranges from their tick labels."""
    x_data: float | None = None
    """Overlap of the series' x extents."""
    y_in_data: bool = False
    x_axes_confirmed: bool = False
    axes_doubt: TraceText | None = None
    series_doubt: TraceText | None = None
    unmatched: int = 0
    scales_differ: bool = False
    names: Literal["unnamed", "agree", "unread", "disagree"] = "unnamed"


class ChartTrace(StrictModel):
    """The reading trace of a figure pair: what the chart reader read of each figure (panels,
    axes and their tick labels, legend, series), how sure it was, and what the evidence behind
    `chart.same_data` confirmed or doubted: why the AI answered, or why it did not. Bounded
    (MAX_TRACE_*); written with the chart signals on the claim's judgment lines."""

    published: FigureTrace
    reproduced: FigureTrace
    panels: list[PanelPairTrace] = Field(default_factory=list, max_length=MAX_TRACE_PANELS)
    """The evidence of each pair of panels (reading order)."""
    same_data: float | None = None
    agreement: float | None = None
    difference: float | None = None
    confirmed: list[TraceText] = Field(default_factory=list, max_length=MAX_TRACE_NOTES)
    confirmed_count: int = 0
    doubts: list[TraceText] = Field(default_factory=list, max_length=MAX_TRACE_NOTES)
    doubt_count: int = 0
    reading_confidence: float | None = None
    absent: TraceText | None = None
    """Why there is no evidence at all (a figure unreadable), when there is none."""

    def sections(self) -> list[tuple[str, list[str]]]:
        """The trace in words, as (heading, items): one source of wording for the report and
        the review records (plain text: the caller escapes it for its medium)."""
        head = []
        if self.absent:
            head.append(f"no evidence: {self.absent}")
        if self.same_data is not None:
            head.append(f"chart.same_data {self.same_data:.2f} (agreement "
                        f"{_share(self.agreement)}, difference {_share(self.difference)})")
        if self.reading_confidence is not None:
            head.append(f"reading confidence {self.reading_confidence:.2f}")
        head += [f"confirmed: {c}" for c in self.confirmed]
        if self.confirmed_count > len(self.confirmed):
            head.append(f"... {self.confirmed_count - len(self.confirmed)} more confirmed")
        if not self.confirmed and self.same_data is not None:
            head.append("nothing confirmed by two independent readings: the AI abstains "
                        "where its rubric needs a confirmed answer")
        head += [f"doubt: {d}" for d in self.doubts]
        if self.doubt_count > len(self.doubts):
            head.append(f"... {self.doubt_count - len(self.doubts)} more doubts")
        out = [("Evidence: why the AI answered or abstained", head)]
        for pair in self.panels:
            out.append((f"Panel pair {pair.index}", _pair_items(pair)))
        for side, figure in (("published", self.published), ("reproduced", self.reproduced)):
            out.append((f"Read of the {side} figure", figure.items()))
        return out

    def markdown(self) -> str:
        """The trace as Markdown (every text read from a figure escaped: OCR of participant
        images)."""
        parts = []
        for heading, items in self.sections():
            parts.append(f"**{heading}**\n" + "\n".join(f"- {for_markdown(i)}" for i in items))
        return "\n\n".join(parts)


def _share(value: float | None) -> str:
    return "unread" if value is None else f"{value:.2f}"


def _pair_items(pair: PanelPairTrace) -> list[str]:
    items = [f"series agreement {_share(pair.series)}; ink overlap "
             + ("unread" if pair.ink is None else f"{pair.ink[0]:.2f} / {pair.ink[1]:.2f}")
             + f"; x ranges: tick labels {_share(pair.x_ticks)}, data {_share(pair.x_data)}",
             f"y values compared in data units: {'yes' if pair.y_in_data else 'no'}; x axes "
             f"confirmed by three tick labels: {'yes' if pair.x_axes_confirmed else 'no'}; "
             f"legend names: {pair.names}"]
    if pair.crossed is not None:
        items.append(f"paired by their data alone the series agree {pair.crossed:.2f}")
    if pair.unmatched:
        items.append(f"{pair.unmatched} published series without a counterpart")
    if pair.scales_differ:
        items.append("the axes' scale types differ (linear and log)")
    items += [f"axes doubt: {d}" for d in (pair.axes_doubt, pair.series_doubt) if d]
    return items


def _axis_text(name: str, axis: AxisTrace | None) -> str:
    if axis is None:
        return f"{name} axis: not read"
    span = ("data range not finite" if axis.data_range is None
            else f"{axis.data_range[0]:.4g} to {axis.data_range[1]:.4g}")
    ticks = ", ".join(axis.ticks) + (", ..." if axis.tick_count > len(axis.ticks) else "")
    return (f"{name} axis: {axis.scale}, {span}, confidence {axis.confidence:.2f}"
            + (", borrowed from an aligned panel" if axis.borrowed else
               f", {axis.tick_count} tick labels ({ticks})"))


def _figure_items(figure: FigureTrace) -> list[str]:
    items = [("built from its data file" if figure.source == "data" else
              f"read from its image ({figure.size[0]}x{figure.size[1]})")
             + ("" if figure.readable else ": unreadable")
             + (f" ({figure.reason})" if figure.reason else "")
             + f"; {figure.panel_count} panel(s)"]
    for n, panel in enumerate(figure.panels, 1):
        where = f"panel {n}: " if figure.panel_count > 1 else ""
        items += [where + _axis_text("x", panel.x), where + _axis_text("y", panel.y)]
        if panel.legend_count:
            items.append(where + f"legend ({panel.legend_count}): " + ", ".join(panel.legend)
                         + (", ..." if panel.legend_count > len(panel.legend) else ""))
        else:
            items.append(where + "no legend read")
        for s in panel.series:
            items.append(where + f"series {s.name or '(unnamed)'}"
                         + ("" if s.name_sure else " (name uncertain)")
                         + f": {s.kind}, {s.style}, {s.points} points, confidence "
                         f"{s.confidence:.2f}" + ("" if s.units == "data" else f", {s.units}"))
        if panel.series_count > len(panel.series):
            items.append(where + f"... {panel.series_count - len(panel.series)} more series")
        items += [where + f"problem: {p}" for p in panel.problems]
        if panel.problem_count > len(panel.problems):
            items.append(where + f"... {panel.problem_count - len(panel.problems)} more problems")
    if figure.panel_count > len(figure.panels):
        items.append(f"... {figure.panel_count - len(figure.panels)} more panels")
    return items


class Artifacts(StrictModel):
    """Images written to the run directory for reviewers (paths relative to the run directory)."""

    published: str | None = None
    reproduced: str | None = None
    diff: str | None = None
    overlay: str | None = None
    """The data read back from both charts, on one set of axes."""


JUDGMENT_SCHEMA = "judging.judgment/1"


class Judgment(VersionedModel):
    """One line of judgments.jsonl: one (claim key, rubric, judge, sample)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.judgment/1"] = Field(default=JUDGMENT_SCHEMA, alias="schema")
    run_id: str
    claim: ClaimKey
    paper_id: str | None = None
    kind: ClaimKind | None = None
    verdict: Verdict | None = None
    """The participant's verdict."""
    reference: ReferenceOrigin | None = None
    rubric: RubricRef | None
    """None only for a claim that failed before any rubric applied."""
    judge: str
    sample: int = 0
    swapped: bool = False
    """The figures were shown in swapped order (reproduced first), to detect position bias."""
    input_hash: str
    """Hash of everything the judgment depends on; a rerun skips lines with the same hash."""
    final: bool = True
    """False when the line records a passing failure (budget spent, endpoint unreachable): a rerun
    tries it again. Model behaviour (a refusal, a malformed answer) is final."""
    status: LineStatus
    reason: str | None = None
    answers: list[CriterionAnswer] = Field(default_factory=list)
    aggregate: Aggregate | None = None
    signals: dict[str, Signal] = Field(default_factory=dict)
    flags: list[Flag] = Field(default_factory=list)
    artifacts: Artifacts = Field(default_factory=Artifacts)
    chart_trace: ChartTrace | None = None
    """What the chart reader read of the figure pair and why chart.same_data is what it is (a
    figure claim measured with the chart signals), on the lines of its figure rubric only
    (`Rubric.reads_chart`; every line of the claim in runs written before issue 43): readers
    take it from there (`rundir.claim_chart_trace`)."""
    provenance: Provenance
    withdrawn: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    """Set on a line that withdraws its identity (an optional field, no shape change): why the
    line before it no longer holds for its submission's latest load (a load error since fixed, a
    claim the submission no longer has). The run's reader (`RunStore`) drops the identity; the
    earlier lines stay in the append-only file, and a later line of the identity counts again."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.judgment/1 is the first version: every judgment line has always carried it.
        return data

    def answer(self, criterion_id: str) -> CriterionAnswer | None:
        return next((a for a in self.answers if a.criterion_id == criterion_id), None)


class Label(VersionedModel):
    """One human answer to one question of one record, pulled from Argilla (labels.jsonl)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.label/1"] = Field(default="judging.label/1", alias="schema")
    claim: ClaimKey
    rubric: RubricRef
    criterion: str
    """A criterion id, or `overall_verdict` / `note`."""
    value: bool | int | str
    """yes/no as a bool, a level as an int, the overall verdict or the note as text."""
    annotator: str
    annotator_id: str
    status: Literal["submitted"] = "submitted"
    """Only submitted responses become labels (drafts and discards are counted, not used)."""
    updated_at: datetime
    blind: bool
    """From the calibration dataset: the reviewer did not see the AI's answers."""
    dataset: str
    record_id: str
    source: Literal["human", "construction"] = "human"
    """construction: derived from how an example was built, never to be called a human label."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.label/1 is the first version; labels written before versions were recorded
        # (calibration/sets/examples/labels.jsonl among them) carry no "schema": read as /1.
        return data


HASH_SIZE = 16
"""Side of the perceptual hash of a figure: 16 x 16 = 256 bits."""


class Fingerprint(VersionedModel):
    """A reproduced figure's perceptual hash, recorded when the claim is measured
    (fingerprints.jsonl)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.fingerprint/1"] = Field(default="judging.fingerprint/1",
                                                      alias="schema")
    claim: ClaimKey
    phash: str
    """256-bit DCT hash of the trimmed reproduced figure, hex."""

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.fingerprint/1 is the first version; lines written before versions were recorded
        # carry no "schema" and are read as /1 (same shape).
        return data


class IntegrityPair(StrictModel):
    kind: Literal["duplicate_figure", "copied_justification", "duplicate_submission"]
    a: ClaimKey
    b: ClaimKey
    score: float
    """Hash distance in bits (figures) or shingle similarity (justifications)."""


class IntegrityReport(VersionedModel):
    """The integrity side file (integrity.json): copies found across submissions."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.integrity/1"] = Field(default="judging.integrity/1", alias="schema")
    figures: int = 0
    """Reproduced figures compared."""
    justifications: int = 0
    pairs: list[IntegrityPair] = Field(default_factory=list)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.integrity/1 is the first version; side files written before versions were
        # recorded carry no "schema" and are read as /1 (same shape).
        return data

    def flags(self) -> dict[str, list[Flag]]:
        """Flags for both claims of every pair, by claim key."""
        return integrity_flags(self.pairs)


def integrity_flags(pairs: Iterable[IntegrityPair]) -> dict[str, list[Flag]]:
    """Flags for both claims of every pair, by claim key (`pairs` may be a stream: the side
    file's reader gives them one at a time)."""
    found: dict[str, list[Flag]] = {}
    for pair in pairs:
        if pair.kind == "duplicate_submission":
            for this, other in ((pair.a, pair.b), (pair.b, pair.a)):
                found.setdefault(str(this), []).append(Flag(
                    name=pair.kind, detail=f"the same user submitted the same paper twice: "
                                           f"{other.submission_id} is judged too ({other})"))
            continue
        what = ("reproduced figure is (nearly) identical to" if pair.kind == "duplicate_figure"
                else "justification is copied from or to")
        measure = (f"{pair.score:g} of {HASH_SIZE ** 2} hash bits differ"
                   if pair.kind == "duplicate_figure" else f"{pair.score:.0%} similar")
        for this, other in ((pair.a, pair.b), (pair.b, pair.a)):
            found.setdefault(str(this), []).append(Flag(
                name=pair.kind, detail=f"{what} {other} in another submission ({measure})"))
    return found


# --- what the endpoint served (drift) ---------------------------------------------------------

#: The flag on a judgment whose call the endpoint says another model or build served than the
#: run's first calls of the same judge (drift.json).
SERVED_CHANGED = "served_changed"


class ServedChange(StrictModel):
    """A line whose call was served by another model or build than the judge's first calls."""

    judge: str
    claim: ClaimKey
    rubric: str | None
    served: str
    """What the endpoint said served this call (`Provenance.served`)."""
    first: str
    """What it said for the judge's first calls of the run directory."""
    at: datetime


class DriftReport(VersionedModel):
    """The drift side file (drift.json): what each LLM judge's endpoint said it served, and the
    lines served by another model or build than the first (flagged on read)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.drift/1"] = Field(default="judging.drift/1", alias="schema")
    served: dict[str, list[str]] = Field(default_factory=dict)
    """Per judge, every served model or build seen, first seen first."""
    changes: list[ServedChange] = Field(default_factory=list)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.drift/1 is the first version.
        return data

    def flags(self) -> dict[str, list[Flag]]:
        found: dict[str, list[Flag]] = {}
        for change in self.changes:
            found.setdefault(str(change.claim), []).append(Flag(
                name=SERVED_CHANGED,
                detail=f"{change.judge} on {change.rubric}: the endpoint served "
                       f"{change.served!r}, where the run's first calls were served by "
                       f"{change.first!r}; calibrations made on the first do not hold"))
        return found


# --- consensus across submissions --------------------------------------------------------------

#: The flags consensus writes (judging consensus): a reproduction whose verdict is the opposite of
#: its registry claim's consensus, a reproduced value far from the others, and a reproduction that
#: adds no support because it is a copy of another one.
CONTRADICTS_CONSENSUS = "contradicts_consensus"
VALUE_OUTLIER = "value_outlier"
NOT_INDEPENDENT = "not_independent"
CONSENSUS_FLAGS = (CONTRADICTS_CONSENSUS, VALUE_OUTLIER, NOT_INDEPENDENT)

Direction = Literal["verified", "falsified"]


class ReproducedValue(StrictModel):
    """One value of one reproduction: a number claim's (name "value") or a table cell's."""

    name: str
    reported: float | None = None
    reproduced: float
    z: float | None = None
    """Modified z-score against the other reproductions (None: too few to compare)."""
    outlier: bool = False


class Reproduction(StrictModel):
    """One submission's reproduction of a registry claim, as consensus sees it."""

    claim: ClaimKey
    agent: str | None = None
    """The agent's name (and model) that did the reproduction."""
    human_help: str | None = None
    verdict: Verdict | None = None
    source_verdict: str | None = None
    """The participant's own verdict label, verbatim (logbooks)."""
    toy: bool = False
    """Reduced scale by the participant's own account: its verdict is not counted."""
    final_verdict: str | None = None
    """The claim's final verdict from `resolve` (human, else trusted AI): verified, falsified,
    toy or inconclusive; None when it has none (not resolved, pending, or no rubric asks)."""
    counted_verdict: str | None = None
    """The verdict the consensus counts: the final verdict where there is one, else the
    participant's (None: neither, or toy)."""
    counted_from: Literal["final", "participant"] | None = None
    """Which of the two `counted_verdict` is."""
    scale_note: str | None = None
    values: list[ReproducedValue] = Field(default_factory=list)
    outcomes: dict[str, str] = Field(default_factory=dict)
    """The AI's outcome per rubric `id@version` (figure-match, verdict-justification...), from
    the line that speaks for the AI (a panel, else an LLM judge, else offline)."""
    independent: bool = True
    """False when it copies another reproduction of the claim (a duplicate figure, a copied
    justification: the group counts once) or its figure copies the published one."""
    copy_of: list[ClaimKey] = Field(default_factory=list)
    """The reproductions it shares a figure or justification with."""
    counted: bool = False
    """Its verdict counts toward the consensus: independent, not toy, verified/falsified/
    inconclusive (the final verdict where there is one, else the participant's)."""
    flags: list[Flag] = Field(default_factory=list)
    """The consensus flags of this reproduction (CONSENSUS_FLAGS)."""


class ValueSpread(StrictModel):
    """The spread of one value (a number claim's, or one table cell) across reproductions."""

    name: str
    reported: float | None = None
    n: int
    """Values of independent, non-toy reproductions (the reference the z-scores use)."""
    median: float | None = None
    mad: float | None = None
    """Median absolute deviation of the reference values (unscaled)."""
    floor: float | None = None
    """The claim's tolerance in the value's units: the smallest deviation used in z-scores."""
    minimum: float | None = None
    maximum: float | None = None
    outliers: list[ClaimKey] = Field(default_factory=list)

    def describe(self) -> str:
        """In words: "median 80.05, MAD 0.1, 79.9..95 (n=4)" (a table cell's with its name)."""
        name = "" if self.name == "value" else f"{self.name}: "
        if self.median is None or self.mad is None:
            span = f", {self.minimum:g}..{self.maximum:g}" if self.minimum is not None \
                and self.maximum is not None else ""
            return f"{name}n={self.n}{span}"
        return (f"{name}median {self.median:g}, MAD {self.mad:g}, {self.minimum:g}.."
                f"{self.maximum:g} (n={self.n})")


class ClaimConsensus(StrictModel):
    """Every reproduction of one registry claim side by side, and what they agree on."""

    claim_id: str
    paper_id: str | None = None
    kind: ClaimKind | None = None
    statement: str | None = None
    reproductions: list[Reproduction] = Field(default_factory=list)
    independent: int = 0
    """Reproductions that are not copies of another."""
    votes: dict[str, int] = Field(default_factory=dict)
    """Counted verdicts (independent, not toy) by verdict."""
    counted_from: dict[str, int] = Field(default_factory=dict)
    """How many counted verdicts are final verdicts ("final") and how many the participants'
    own ("participant")."""
    verdict: Direction | None = None
    """The consensus: the majority direction when at least `min_support` counted reproductions
    give it and it holds more than half of them."""
    support: int = 0
    """Counted reproductions that give the consensus verdict (0 without one)."""
    agreement: float | None = None
    """Share of counted verdicts that agree with the most common one (None: none counted)."""
    reason: str
    """Why there is a consensus, or why not (too few, a tie, no majority)."""
    spread: list[ValueSpread] = Field(default_factory=list)

    def reproduction(self, key: ClaimKey | str) -> Reproduction | None:
        return next((r for r in self.reproductions if str(r.claim) == str(key)), None)


class ConsensusRules(StrictModel):
    min_support: int = 3
    """Counted reproductions needed for a consensus verdict."""
    outlier_z: float = 3.5
    """A value whose modified z-score exceeds this (in absolute value) is an outlier."""


class ConsensusReport(VersionedModel):
    """The consensus side file (consensus.json): per registry claim, its reproductions side by
    side; flags merged into judgments on read (rundir.flags), never written into them."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.consensus/1"] = Field(default="judging.consensus/1",
                                                    alias="schema")
    computed_at: datetime | None = None
    inputs_hash: str | None = None
    """Hash of what it was computed from (chosen judgment lines, integrity pairs): a later
    `judging run` that changes them makes it stale."""
    rules: ConsensusRules = Field(default_factory=ConsensusRules)
    claims: list[ClaimConsensus] = Field(default_factory=list)
    _index: tuple[tuple[int, int], dict[str, tuple[ClaimConsensus, Reproduction]]] | None = \
        PrivateAttr(default=None)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.consensus/1 is the first version.
        return data

    def claim(self, claim_id: str) -> ClaimConsensus | None:
        """The consensus of one registry claim, by its registry id."""
        return next((c for c in self.claims if c.claim_id == claim_id), None)

    def of(self, key: ClaimKey | str) -> tuple[ClaimConsensus, Reproduction] | None:
        """The registry claim a claim key reproduces, and its row there (None: not a registry
        claim, or not in this report)."""
        # An index by claim key, made on first use (and again if `claims` changed): the second
        # pass of `judging run` asks for every claim, and a scan per claim would be quadratic.
        stamp = (id(self.claims), len(self.claims))
        if self._index is None or self._index[0] != stamp:
            index: dict[str, tuple[ClaimConsensus, Reproduction]] = {}
            for consensus in self.claims:
                for row in consensus.reproductions:
                    index.setdefault(str(row.claim), (consensus, row))
            self._index = (stamp, index)
        return self._index[1].get(str(key))

    def agrees(self, key: ClaimKey | str) -> bool | None:
        """Whether a reproduction's verdict is its registry claim's consensus verdict: True when
        it is, False when it is the opposite direction (or inconclusive), None when there is no
        consensus, no verdict, or the claim is no registry claim (the falsification audit's
        "the other reproductions agree")."""
        found = self.of(key)
        if found is None or found[0].verdict is None or found[1].verdict is None:
            return None
        return found[1].verdict.value == found[0].verdict

    def flags(self) -> dict[str, list[Flag]]:
        """The consensus flags, by claim key."""
        return {str(r.claim): list(r.flags) for c in self.claims for r in c.reproductions
                if r.flags}


# --- merging run directories (judging merge) ---------------------------------------------------

#: The flag `judging merge` puts on a claim whose run directories disagree (conflicts.json).
MERGE_CONFLICT = "merge_conflict"


class ConflictSide(StrictModel):
    """One of the disagreeing lines of a merge conflict, and where it came from."""

    source: str
    """The run directory it was read from."""
    run_id: str
    shard: str | None = None
    line: Judgment


class MergeConflict(StrictModel):
    """Two final lines of one (claim, rubric, judge, sample, order) with different answers, met
    by `judging merge`. The line of the first directory given (or already in the merged one) is
    the one in judgments.jsonl; every line is kept here, and the claim is flagged."""

    claim: ClaimKey
    rubric: str | None
    """`id@version` (None: a loader error line)."""
    judge: str
    sample: int = 0
    swapped: bool = False
    kept: ConflictSide
    others: list[ConflictSide]

    def describe(self) -> str:
        def side(s: ConflictSide) -> str:
            answers = ", ".join(f"{a.criterion_id}={a.value if a.value is not None else a.status}"
                                for a in s.line.answers)
            return f"{s.source} [{s.line.status.value}: {answers}]"

        what = f"{self.claim} {self.rubric or 'loader'} {self.judge}#{self.sample}" + \
            ("/swapped" if self.swapped else "")
        return f"{what}: kept {side(self.kept)}; differs: " + "; ".join(map(side, self.others))


class ConflictReport(VersionedModel):
    """The conflicts side file (conflicts.json), written by `judging merge`."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.conflicts/1"] = Field(default="judging.conflicts/1", alias="schema")
    conflicts: list[MergeConflict] = Field(default_factory=list)

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.conflicts/1 is the first version.
        return data

    def flags(self) -> dict[str, list[Flag]]:
        """A `merge_conflict` flag on every claim with a conflict, by claim key."""
        found: dict[str, list[Flag]] = {}
        for conflict in self.conflicts:
            sources = ", ".join(s.source for s in (conflict.kept, *conflict.others))
            found.setdefault(str(conflict.claim), []).append(Flag(
                name=MERGE_CONFLICT,
                detail=f"run directories disagree on {conflict.rubric or 'loading'} by "
                       f"{conflict.judge}#{conflict.sample} ({sources}); the first one's line is "
                       f"shown, every line is in conflicts.json"))
        return found


# --- re-runs (judging rerun) -------------------------------------------------------------------


class RerunStatus(StrEnum):
    """What re-running a claim's script gave."""

    reproduced = "reproduced"
    """It ran, and its number(s) agree with the participant's (the paper's when the participant
    gave none) within the claim's tolerance."""
    differs = "differs"
    """It ran, and a number differs (both numbers recorded)."""
    failed = "failed"
    """It did not run to a number: an exit code other than 0, a limit, or no number printed."""
    timeout = "timeout"
    """Stopped at the wall-time or CPU-time limit."""
    not_run = "not_run"
    """Not run, with why: no script, no environment, the environment failed, it needs a
    container engine, over budget."""


class RerunValue(StrictModel):
    """One number of a re-run beside the paper's and the participant's."""

    name: str
    """"value" for a number claim, the cell's name for a table claim."""
    rerun: float | None = None
    """What the re-run gave (None: not found in its output)."""
    reported: float | None = None
    """The paper's value."""
    reproduced: float | None = None
    """The participant's value."""
    matches_participant: bool | None = None
    """Within the claim's tolerance of the participant's value (None: no value to compare)."""
    matches_paper: bool | None = None
    """Within the claim's tolerance of the paper's value."""
    how: str
    """How it was read: the results file and key, the output line's key, the registry's pattern,
    the last JSON line."""
    quote: str | None = Field(default=None, max_length=500)
    """The output line (or results-file entry) it was read from."""
    problem: str | None = None
    """Why no number was read."""


class RerunLimits(StrictModel):
    """The limits a re-run ran under (every local run: the sandbox enforces them)."""

    wall_s: float
    cpu_s: int
    memory_mb: int
    """Memory of the whole process tree where a cgroup holds it (`RerunRecord.memory_limit`),
    and address space per process always."""
    processes: int
    output_mb: float
    """Output kept per stream (stdout, stderr); more stops the run."""
    disk_mb: int
    """Size of the scratch folder (the submission's copy), of /tmp and of home, and, for an
    install, of the environment it writes (`Sandbox.run`'s keep)."""


class RerunEnvironment(StrictModel):
    """The environment a re-run used."""

    kind: Literal["uv.lock", "pyproject.toml", "requirements.txt", "Dockerfile"]
    file: str
    """The environment file, relative to the submission folder."""
    key: str
    """Hash of what the environment is built from (the lock file, the Python): one build per
    key, reused."""
    python: str | None = None
    """The interpreter's version, e.g. "3.11.7"."""
    built: bool = False
    """Built by this re-run (False: found built in the cache)."""
    build_s: float | None = None


class RerunRecord(VersionedModel):
    """One re-run of one claim's script (one line of reruns.jsonl; the newest line of a claim
    counts)."""

    # Bump only when the shape changes, with a step in `migrate` (see VersionedModel).
    schema_: Literal["judging.rerun/1"] = Field(default="judging.rerun/1", alias="schema")
    claim: ClaimKey
    status: RerunStatus
    reason: str
    """One line in our words: what happened."""
    attempted: bool
    """An environment was built (or failed to build) and the script was started: False for a
    claim left alone (no script, no environment, needs a container, over budget)."""
    input_hash: str
    """Hash of what the re-run depends on (the submission's files, the declaration, the
    environment file, the limits, the sandbox): a rerun skips a claim whose final line has it."""
    final: bool = True
    """False for a passing reason (over budget, an engine that could not be reached): a later
    `judging rerun` tries it again."""
    values: list[RerunValue] = Field(default_factory=list)
    exit_code: int | None = None
    stderr_tail: str | None = Field(default=None, max_length=MAX_NOTE_CHARS)
    """The last lines of the script's stderr (or of the resolver's output when the environment
    failed)."""
    duration_s: float | None = None
    cpu_s: float | None = None
    """CPU time of the script's process tree."""
    environment: RerunEnvironment | None = None
    engine: Literal["local", "ray", "hf-jobs"]
    node: str | None = None
    """The host it ran on (Ray), or the Hub job's id (HF Jobs)."""
    job_url: str | None = None
    sandbox: str | None
    """How it was contained, e.g. "bubblewrap 0.8.0, no network"; None when run with
    --no-sandbox (recorded on every such result)."""
    limits: RerunLimits | None = None
    logs: str | None = None
    """The folder of its logs, relative to the run directory (reruns/<claim>/)."""
    cost_usd: float | None = None
    """HF Jobs: the price of the job's running time at the flavor's rate."""
    memory_limit: Literal["process tree", "per process"] | None = None
    """How `limits.memory_mb` and `limits.processes` held: "process tree" (summed over every
    process of the run by a cgroup: tmpfs files, shared memory, memfd and inodes count), "per
    process" (no cgroup could be made: address space and processes per process only, kernel
    objects unbounded in total); None where nothing ran here (HF Jobs, not run)."""
    memory_peak_mb: float | None = None
    """The run's peak memory over its process tree (the cgroup's), MiB."""
    started_at: datetime
    finished_at: datetime

    @classmethod
    def migrate(cls, data: dict[str, Any]) -> dict[str, Any]:
        # judging.rerun/1 is the first version (memory_limit and memory_peak_mb were added
        # later as optional fields: older lines read as None).
        return data


#: The facts of a re-run that rubrics read (signal catalogue: `rerun.attempted`, `rerun.agrees`).
RERUN_ATTEMPTED = "rerun.attempted"
RERUN_AGREES = "rerun.agrees"


def rerun_signals(record: RerunRecord | None) -> dict[str, Signal]:
    """The re-run's facts as signals: `rerun.attempted` (a re-run was tried) and `rerun.agrees`
    (its numbers agree with the participant's), absent with the reason where there is none."""
    if record is None:
        why = "not re-run: `judging rerun` has no result for this claim"
        return {RERUN_ATTEMPTED: Signal.absent(why), RERUN_AGREES: Signal.absent(why)}
    said = f"re-run {record.status.value}: {record.reason}"
    attempted = Signal(value=record.attempted, reason=said)
    if record.status in (RerunStatus.reproduced, RerunStatus.differs):
        agrees = Signal(value=record.status is RerunStatus.reproduced, reason=said)
    else:
        agrees = Signal.absent(said)
    return {RERUN_ATTEMPTED: attempted, RERUN_AGREES: agrees}


def rerun_text(lines: list[Judgment]) -> str | None:
    """What the re-run of a claim gave, in words, from the first of its judgment lines that read
    it (the report, the review records and the dashboard show it beside the participant's
    number): e.g. "re-run reproduced: re-run 93.8 vs participant 93.8 and paper 94.1"."""
    for line in lines:
        attempted = line.signals.get(RERUN_ATTEMPTED)
        if attempted is not None and attempted.status is SignalStatus.ok and attempted.reason:
            return attempted.reason
    return None
