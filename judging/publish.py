"""`judging publish`: a run's final decisions as a Hugging Face dataset.

Stages a folder (default `RUN_DIR/publish/`, rebuilt each time):

    README.md               the dataset card (YAML front matter: license, pretty_name, tags,
                            configs)
    data/claims.parquet     one row per claim: verdict, outcome, upheld, statement, justification...
    data/claims.jsonl       the same rows as JSON lines
    data/decisions.parquet  one row per (claim, rubric, criterion): who decided, and the answer
    data/decisions.jsonl
    data/judgments.parquet  one row per AI judgment line (the newest per claim/rubric/judge/sample)
    data/judgments.jsonl

then uploads it with `HfApi.create_repo` + `upload_folder` (or, with `--dry-run`, only lists it).

Nothing personal or local leaves the machine: every string that goes into a staged file passes
through `scrub` (emails, tokens and keys, home-directory paths, the absolute paths of this
machine), absolute paths recorded in the run (submission folders, resolved files, diff images)
are dropped, and reviewers are pseudonymised as `reviewer-<6 hex>` from a salted hash.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import os
import re
import secrets
import shutil
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .errors import JudgingError
from .models import ClaimInput, Judgment
from .resolve import DECISIONS, FINAL, ClaimDecision, RubricDecision
from .store import RunStore, read_jsonl

DEFAULT_LICENSE = "cc-by-4.0"
STAGING = "publish"
SALT_FILE = ".publish-salt"
SALT_ENV = "JUDGING_PUBLISH_SALT"
TOKEN_HELP = "publishing needs a Hugging Face token: set HF_TOKEN or run `hf auth login`"
CONFIGS = ("claims", "decisions", "judgments")
TAGS = ["reproducibility", "ml-papers", "claims", "llm-as-a-judge", "rubric-evaluation",
        "human-review", "judging"]


class PublishError(JudgingError):
    """The run cannot be published (not resolved, no token, the Hub refused or is unreachable)."""


# --- scrubbing ------------------------------------------------------------------------------

_KEY_NAMES = (r"api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|"
              r"client[_-]?secret|access[_-]?token|auth[_-]?token|token|secret|password|passwd")

#: (kind, name, pattern, replacement), applied in order to every text that leaves the machine.
#: Values that merely look random (content hashes such as `sha256:<hex>`, request ids) match none.
SCRUB_PATTERNS: tuple[tuple[str, str, re.Pattern[str], str], ...] = (
    ("token", "jwt", re.compile(
        r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), "[token]"),
    ("token", "bearer", re.compile(
        r"\b(?P<scheme>Bearer\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,}",
        re.IGNORECASE), r"\g<scheme>[token]"),
    ("token", "huggingface", re.compile(r"\b(?:hf|api_org)_[A-Za-z0-9]{20,}\b"), "[token]"),
    ("token", "openai", re.compile(
        r"\bsk-(?:proj-|svcacct-|admin-|ant-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"), "[token]"),
    ("token", "github", re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b"), "[token]"),
    ("token", "aws", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[token]"),
    ("token", "slack", re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"), "[token]"),
    ("token", "assignment", re.compile(
        r"(?P<key>\b(?:[A-Za-z0-9]+[_-])*(?:" + _KEY_NAMES + r")\b[\"']?\s*[:=]\s*[\"']?)"
        r"(?!sha256:)(?=[^\s\"'`,;]*\d)[^\s\"'`,;]{8,}", re.IGNORECASE), r"\g<key>[token]"),
    ("email", "email", re.compile(
        r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"), "[email]"),
    ("home", "posix", re.compile(r"(?<![\w.~-])/(?:home|Users)/[^/\s\"'`<>|:;,()\[\]]+"),
     "[home]"),
    ("home", "windows", re.compile(r"\b[A-Za-z]:[\\/]+Users[\\/]+[^\\/\s\"'`<>|:;,()\[\]]+",
                                   re.IGNORECASE), "[home]"),
    ("home", "root", re.compile(r"(?<![\w.~-])/root(?![\w.-])"), "[home]"),
)
SCRUB_KINDS = ("email", "token", "home", "local_path")


@functools.lru_cache(maxsize=32)
def _local_pattern(paths: tuple[str, ...]) -> re.Pattern[str] | None:
    usable = sorted({p.rstrip("/\\") for p in paths if len(p.rstrip("/\\")) > 1},
                    key=len, reverse=True)
    if not usable:
        return None
    return re.compile("(?:" + "|".join(map(re.escape, usable)) + r")(?![A-Za-z0-9_-])")


def scrub(text: str, *, local_paths: Sequence[str] = ()) -> tuple[str, Counter[str]]:
    """`text` with personal data replaced, and the replacements made per kind.

    Emails become `[email]`, tokens and keys `[token]`, home directories (`/home/<user>`,
    `/Users/<user>`, `C:\\Users\\<user>`, `/root`) `[home]`, and any of `local_paths` (absolute
    paths of this machine) `[local]`. Pure: the same input always gives the same output.
    """
    counts: Counter[str] = Counter()
    for kind, _name, pattern, replacement in SCRUB_PATTERNS:
        text, n = pattern.subn(replacement, text)
        if n:
            counts[kind] += n
    local = _local_pattern(tuple(local_paths))
    if local is not None:
        text, n = local.subn("[local]", text)
        if n:
            counts["local_path"] += n
    return text, counts


def leftovers(text: str) -> Counter[str]:
    """What `scrub` would still replace in `text` (the check run on every staged file)."""
    return scrub(text)[1]


class Scrubber:
    """Scrubs every string of nested rows against this machine's paths, adding up the counts."""

    def __init__(self, local_paths: Iterable[str] = ()):
        self.local_paths = tuple(sorted(set(local_paths)))
        self.counts: Counter[str] = Counter()

    def text(self, value: str | None) -> str | None:
        if value is None:
            return None
        cleaned, counts = scrub(value, local_paths=self.local_paths)
        self.counts.update(counts)
        return cleaned

    def tree(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.tree(k) if isinstance(k, str) else k: self.tree(v)
                    for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.tree(v) for v in value]
        return value


def _local_roots(run_dir: Path, claims: Iterable[ClaimInput], extra: Iterable[Path]) -> set[str]:
    """Absolute paths of this machine that must never appear in a published file: the run, the
    submission folders and files, the checkout, the working directory, and their parents (down to
    two levels, e.g. /work/main but not /work)."""
    paths: list[Path] = [run_dir, Path.cwd(), Path(__file__).resolve().parent.parent, *extra]
    for claim in claims:
        paths.append(claim.root)
        paths += [p for p in (claim.published_path, claim.reproduced_path,
                              claim.participant_reference_path) if p is not None]
        paths += list(claim.evidence_paths.values())
    roots: set[str] = set()
    for path in paths:
        for variant in {Path(os.path.abspath(path)), _resolved(path)}:
            for candidate in (variant, *variant.parents):
                if len(candidate.parts) >= 3:
                    roots.add(str(candidate))
    return roots


def _resolved(path: Path) -> Path:
    try:
        return Path(path).resolve()
    except OSError:
        return Path(os.path.abspath(path))


def _public_endpoint(value: Any) -> Any:
    """A judge endpoint, unless it is on this machine or a private network."""
    if not isinstance(value, str):
        return value
    host = urlsplit(value).hostname or ""
    try:
        address = ipaddress.ip_address(host)
        local = address.is_private or address.is_loopback or address.is_link_local or \
            address.is_unspecified
    except ValueError:
        local = host in ("", "localhost") or "." not in host or \
            host.endswith((".local", ".localhost", ".internal", ".lan", ".home.arpa"))
    return "[local endpoint]" if local else value


# --- pseudonyms -----------------------------------------------------------------------------


def pseudonym(name: str, salt: str) -> str:
    """A stable, salted pseudonym for a reviewer. Construction labels (`construction:...`, written
    by a program) keep their name: they are not people."""
    if name.startswith("construction:"):
        return name
    digest = hashlib.sha256(f"{salt}\0{name}".encode()).hexdigest()
    return f"reviewer-{digest[:6]}"


def publish_salt(run_dir: Path) -> str:
    """`JUDGING_PUBLISH_SALT`, else a random salt kept in `RUN_DIR/.publish-salt` (never uploaded):
    pseudonyms stay the same from one publish of the run to the next."""
    if os.environ.get(SALT_ENV):
        return os.environ[SALT_ENV]
    path = run_dir / SALT_FILE
    if path.is_file():
        salt = path.read_text(encoding="utf-8").strip()
        if salt:
            return salt
    salt = secrets.token_hex(16)
    path.write_text(salt + "\n", encoding="utf-8")
    return salt


# --- tables ---------------------------------------------------------------------------------


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    s, f, i, b = pa.string(), pa.float64(), pa.int64(), pa.bool_()
    strings = pa.list_(pa.string())
    return {
        "claims": pa.schema([
            ("submission_id", s), ("claim_id", s), ("paper_id", s), ("paper_title", s),
            ("kind", s), ("source", s), ("verdict", s), ("outcome", s), ("upheld", s),
            ("outcomes", s), ("decided_by", strings), ("reference", s), ("flags", strings),
            ("statement", s), ("justification", s), ("scale_note", s), ("reported_value", f),
            ("reproduced_value", f), ("values", s), ("tolerance", s), ("problem_kind", s),
            ("problem_note", s), ("evidence_files", strings), ("agent_name", s),
            ("agent_model", s), ("human_help", s)]),
        "decisions": pa.schema([
            ("submission_id", s), ("claim_id", s), ("paper_id", s), ("kind", s), ("verdict", s),
            ("rubric_id", s), ("rubric_version", s), ("rubric_hash", s), ("rubric_outcome", s),
            ("criterion", s), ("status", s), ("value", s), ("passed", b), ("decided_by", s),
            ("who", strings), ("reason", s), ("ai_judge", s), ("ai_calibration", s)]),
        "judgments": pa.schema([
            ("run_id", s), ("submission_id", s), ("claim_id", s), ("paper_id", s), ("kind", s),
            ("verdict", s), ("reference", s), ("rubric_id", s), ("rubric_version", s),
            ("rubric_hash", s), ("judge", s), ("sample", i), ("swapped", b), ("final", b),
            ("status", s), ("reason", s), ("outcome", s), ("score", f), ("coverage", f),
            ("failed_gates", strings), ("answers", s), ("signals", s), ("flags", strings),
            ("flag_details", s), ("model", s), ("settings", s), ("template_hash", s),
            ("request_hash", s), ("input_hash", s), ("raw_answer", s), ("prompt_tokens", i),
            ("completion_tokens", i), ("total_tokens", i), ("cost_usd", f), ("latency_s", f),
            ("timestamp", s), ("code_version", s)]),
    }


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False)


def _value_text(value: bool | int | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def claim_rows(finals: list[ClaimDecision], claims: dict[str, ClaimInput],
               scrubber: Scrubber) -> list[dict[str, Any]]:
    rows = []
    for final in finals:
        content = claims.get(str(final.claim))
        claim = content.claim if content is not None else None
        header = content.submission if content is not None else None
        evidence = claim.evidence if claim is not None else None
        files = ([evidence.script] if evidence and evidence.script else []) + \
            (list(evidence.logs) if evidence else []) + \
            ([evidence.proof_script] if evidence and evidence.proof_script else [])
        row = {
            "submission_id": final.claim.submission_id, "claim_id": final.claim.claim_id,
            "paper_id": final.paper_id, "paper_title": header.paper_title if header else None,
            "kind": final.kind.value if final.kind else None,
            "source": claim.source if claim else None,
            "verdict": final.verdict.value if final.verdict else None,
            "outcome": final.outcome, "upheld": final.upheld,
            "outcomes": dict(final.outcomes), "decided_by": list(final.decided_by),
            "reference": content.reference.value if content is not None else None,
            "flags": [flag.name for flag in content.flags] if content is not None else [],
            "statement": claim.statement if claim else None,
            "justification": claim.justification if claim else None,
            "scale_note": claim.scale_note if claim else None,
            "reported_value": claim.reported_value if claim else None,
            "reproduced_value": claim.reproduced_value if claim else None,
            "values": [v.model_dump(mode="json") for v in claim.values]
            if claim and claim.values is not None else None,
            "tolerance": claim.tolerance.model_dump(mode="json", exclude_none=True)
            if claim and claim.tolerance else None,
            "problem_kind": evidence.problem_kind.value if evidence and evidence.problem_kind
            else None,
            "problem_note": evidence.problem_note if evidence else None,
            "evidence_files": files,
            "agent_name": header.agent.name if header and header.agent else None,
            "agent_model": header.agent.model if header and header.agent else None,
            "human_help": header.human_help.value if header and header.human_help else None,
        }
        row = scrubber.tree(row)
        for key in ("outcomes", "values", "tolerance"):
            row[key] = _json(row[key])
        rows.append(row)
    return rows


def decision_rows(decisions: list[RubricDecision], scrubber: Scrubber, salt: str
                  ) -> list[dict[str, Any]]:
    rows = []
    for decision in decisions:
        for answer in decision.answers:
            who = [pseudonym(name, salt) for name in answer.who] \
                if answer.decided_by == "humans" else list(answer.who)
            rows.append(scrubber.tree({
                "submission_id": decision.claim.submission_id,
                "claim_id": decision.claim.claim_id, "paper_id": decision.paper_id,
                "kind": decision.kind.value if decision.kind else None,
                "verdict": decision.verdict.value if decision.verdict else None,
                "rubric_id": decision.rubric.id, "rubric_version": decision.rubric.version,
                "rubric_hash": decision.rubric.hash, "rubric_outcome": decision.outcome,
                "criterion": answer.criterion, "status": answer.status,
                "value": _value_text(answer.value), "passed": answer.passed,
                "decided_by": answer.decided_by, "who": who, "reason": answer.reason,
                "ai_judge": decision.ai_judge, "ai_calibration": decision.ai_calibration}))
    return rows


def judgment_rows(judgments: list[Judgment], scrubber: Scrubber) -> list[dict[str, Any]]:
    rows = []
    for j in judgments:
        p = j.provenance
        settings = {k: (_public_endpoint(v) if k == "endpoint" else v)
                    for k, v in p.settings.items()}
        aggregate = j.aggregate
        row = scrubber.tree({
            "run_id": j.run_id, "submission_id": j.claim.submission_id,
            "claim_id": j.claim.claim_id, "paper_id": j.paper_id,
            "kind": j.kind.value if j.kind else None,
            "verdict": j.verdict.value if j.verdict else None,
            "reference": j.reference.value if j.reference else None,
            "rubric_id": j.rubric.id if j.rubric else None,
            "rubric_version": j.rubric.version if j.rubric else None,
            "rubric_hash": j.rubric.hash if j.rubric else None,
            "judge": j.judge, "sample": j.sample, "swapped": j.swapped, "final": j.final,
            "status": j.status.value, "reason": j.reason,
            "outcome": aggregate.outcome.value if aggregate else None,
            "score": aggregate.score if aggregate else None,
            "coverage": aggregate.coverage if aggregate else None,
            "failed_gates": list(aggregate.failed_gates) if aggregate else [],
            "answers": [a.model_dump(mode="json") for a in j.answers],
            "signals": {k: v.model_dump(mode="json") for k, v in j.signals.items()},
            "flags": [flag.name for flag in j.flags],
            "flag_details": {flag.name: flag.detail for flag in j.flags} or None,
            "model": p.model, "settings": settings, "template_hash": p.template_hash,
            "request_hash": p.request_hash, "input_hash": j.input_hash,
            "raw_answer": p.raw_answer,
            "prompt_tokens": p.usage.prompt_tokens if p.usage else None,
            "completion_tokens": p.usage.completion_tokens if p.usage else None,
            "total_tokens": p.usage.total_tokens if p.usage else None,
            "cost_usd": p.cost_usd, "latency_s": p.latency_s,
            "timestamp": p.timestamp.isoformat().replace("+00:00", "Z"),
            "code_version": p.code_version})
        for key in ("answers", "signals", "flag_details", "settings"):
            row[key] = _json(row[key])
        rows.append(row)
    return rows


# --- staging --------------------------------------------------------------------------------


@dataclass
class StagedFile:
    path: str
    """Relative to the staging folder, with forward slashes."""
    size: int
    rows: int | None
    """Rows of a data file; None for the card."""


@dataclass
class Staged:
    folder: Path
    run_id: str
    files: list[StagedFile]
    scrubbed: Counter[str]
    """Replacements made, by kind (email, token, home, local_path)."""
    rows: dict[str, int] = field(default_factory=dict)
    card: str = ""


def require_resolved(run_dir: Path) -> None:
    missing = [name for name in (FINAL, DECISIONS) if not (Path(run_dir) / name).is_file()]
    if missing:
        raise PublishError(f"{run_dir}: no final decisions yet ({' and '.join(missing)} missing); "
                           f"run `judging resolve {run_dir}` first")


def _prepare_folder(folder: Path, run_dir: Path) -> None:
    """Empty the staging folder, refusing to delete anything that is not a previous staging."""
    folder = folder.resolve()
    run = run_dir.resolve()
    if folder == run or folder in run.parents:
        raise PublishError(f"--out {folder}: would overwrite the run directory; choose another")
    if folder.exists():
        if not folder.is_dir():
            raise PublishError(f"--out {folder}: exists and is not a folder")
        strangers = [p.name for p in folder.iterdir()
                     if p.name not in ("README.md", "data", ".cache")]
        if strangers:
            shown = ", ".join(sorted(strangers)[:3])
            raise PublishError(f"--out {folder}: holds other files ({shown}); give an empty or "
                               f"new folder")
        shutil.rmtree(folder)
    (folder / "data").mkdir(parents=True)


def _write_table(folder: Path, name: str, rows: list[dict[str, Any]], schema: Any
                 ) -> list[StagedFile]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = folder / "data" / f"{name}.parquet"
    jsonl = folder / "data" / f"{name}.jsonl"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), parquet)
    with jsonl.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps({c: row[c] for c in schema.names}, ensure_ascii=False) + "\n")
    return [StagedFile(f"data/{name}.parquet", parquet.stat().st_size, len(rows)),
            StagedFile(f"data/{name}.jsonl", jsonl.stat().st_size, len(rows))]


def stage(run_dir: Path, *, out: Path | None = None, calibration_dir: Path | None = None,
          license: str = DEFAULT_LICENSE, repo_id: str | None = None,
          salt: str | None = None) -> Staged:
    """Build the dataset folder for a resolved run (nothing is sent anywhere)."""
    from .calibrate import calibration_root

    run_dir = Path(run_dir)
    require_resolved(run_dir)
    store = RunStore.open(run_dir, create=False)
    finals = read_jsonl(run_dir / FINAL, ClaimDecision)
    decisions = read_jsonl(run_dir / DECISIONS, RubricDecision)
    judgments = store.latest()
    claims = store.claims()
    calibration_dir = calibration_root(calibration_dir)
    folder = Path(out) if out is not None else run_dir / STAGING
    _prepare_folder(folder, run_dir)
    salt = salt or publish_salt(run_dir)
    scrubber = Scrubber(_local_roots(run_dir, claims.values(),
                                     [folder, calibration_dir, Path.home()]))
    schemas = _schemas()
    tables = {"claims": claim_rows(finals, claims, scrubber),
              "decisions": decision_rows(decisions, scrubber, salt),
              "judgments": judgment_rows(judgments, scrubber)}
    files: list[StagedFile] = []
    for name in CONFIGS:
        files += _write_table(folder, name, tables[name], schemas[name])
    card = dataset_card(
        run_id=store.info.run_id, repo_id=repo_id, license=license, tables=tables,
        decisions=decisions, judgments=judgments, calibration_dir=calibration_dir,
        scrubbed=scrubber.counts)
    card = scrubber.text(card) or ""
    (folder / "README.md").write_text(card, encoding="utf-8", newline="\n")
    files.insert(0, StagedFile("README.md", (folder / "README.md").stat().st_size, None))
    for item in files:  # the last line of defence: nothing the patterns know may remain
        if item.path.endswith((".jsonl", ".md")):
            left = leftovers((folder / item.path).read_text(encoding="utf-8"))
            if left:
                raise PublishError(f"{item.path} still holds {dict(left)} after scrubbing; "
                                   f"nothing was uploaded (please report this)")
    return Staged(folder=folder, run_id=store.info.run_id, files=files,
                  scrubbed=Counter(scrubber.counts),
                  rows={name: len(rows) for name, rows in tables.items()}, card=card)


def describe(staged: Staged, repo_id: str, *, private: bool) -> list[str]:
    """What an upload sends, one line each (the `--dry-run` listing)."""
    from huggingface_hub import constants

    lines = [f"would upload to {constants.ENDPOINT}/datasets/{repo_id} "
             f"({'private' if private else 'public'} dataset) from {staged.folder}:"]
    width = max(len(f.path) for f in staged.files)
    for item in staged.files:
        rows = "" if item.rows is None else f"  {item.rows} row(s)"
        lines.append(f"  {item.path:<{width}}  {_size(item.size):>9}{rows}")
    total = sum(f.size for f in staged.files)
    lines.append(f"  {len(staged.files)} file(s), {_size(total)}")
    lines.append("scrubbed: " + ", ".join(f"{staged.scrubbed.get(kind, 0)} {kind}"
                                          for kind in SCRUB_KINDS))
    return lines


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB" if n < 1 << 20 else \
        f"{n / (1 << 20):.1f} MiB"


# --- uploading ------------------------------------------------------------------------------

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


def check_repo_id(repo_id: str) -> str:
    if not _REPO_ID.match(repo_id) or ".." in repo_id or repo_id.endswith((".git", ".")):
        raise PublishError(f"--repo {repo_id!r}: use ORG/NAME (letters, digits, '.', '_', '-')")
    return repo_id


def hub_token() -> str:
    """HF_TOKEN, else the token saved by `hf auth login`."""
    token = (os.environ.get("HF_TOKEN") or "").strip()
    if token:
        return token
    try:
        from huggingface_hub import get_token

        token = get_token()
    except Exception as exc:  # an OIDC exchange that failed, an unreadable token file
        raise PublishError(f"{TOKEN_HELP} ({_one_line(exc)})") from None
    if not token:
        raise PublishError(TOKEN_HELP)
    return token


def _one_line(exc: BaseException | str) -> str:
    """An error as one scrubbed line (a server may echo a header or a path back)."""
    text = scrub(" ".join(str(exc).split()))[0]
    return text[:300] or type(exc).__name__


def _network_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module, name in (("httpx2", "TransportError"), ("httpx", "TransportError"),
                         ("requests", "ConnectionError"), ("requests", "Timeout")):
        try:
            errors.append(getattr(__import__(module), name))
        except (ImportError, AttributeError):
            pass
    return tuple(errors)


def upload(staged: Staged, repo_id: str, *, private: bool, token: str) -> str:
    """Create the dataset repo if needed and upload the staged folder; the dataset's URL."""
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import HfHubHTTPError, HFValidationError, OfflineModeIsEnabled

    endpoint = constants.ENDPOINT
    # huggingface_hub reads HF_HUB_OFFLINE once, at import: honour a later setting too.
    offline_env = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes",
                                                                           "on")
    if constants.HF_HUB_OFFLINE or offline_env:
        raise PublishError("the Hugging Face Hub is in offline mode (HF_HUB_OFFLINE is set): "
                           "unset it to publish, or use --dry-run")
    api = HfApi(token=token)
    try:
        url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(repo_id=repo_id, repo_type="dataset", folder_path=staged.folder,
                          commit_message=f"judging publish: run {staged.run_id}",
                          ignore_patterns=[".cache/**"])
    except OfflineModeIsEnabled:
        raise PublishError("the Hugging Face Hub is in offline mode (HF_HUB_OFFLINE is set): "
                           "unset it to publish, or use --dry-run") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status == 401:
            raise PublishError("the Hugging Face Hub refused the token (401 Unauthorized): set a "
                               "valid HF_TOKEN or run `hf auth login`") from None
        if status == 403:
            owner = repo_id.split("/")[0]
            raise PublishError(f"the token may not create or write {repo_id} (403 Forbidden): use "
                               f"a token with write access to {owner}") from None
        detail = exc.server_message or str(exc).splitlines()[0]
        raise PublishError(f"the Hugging Face Hub refused the upload to {repo_id} "
                           f"({status or 'error'}): {_one_line(detail)}") from None
    except HFValidationError as exc:
        raise PublishError(f"--repo {repo_id!r}: {_one_line(exc)}") from None
    except ValueError as exc:  # the Hub found the card's metadata invalid, a malformed answer
        raise PublishError(f"the Hugging Face Hub refused the upload to {repo_id}: "
                           f"{_one_line(exc)}") from None
    except _network_errors() as exc:
        raise PublishError(f"cannot reach the Hugging Face Hub at {endpoint}: "
                           f"{_one_line(exc)}") from None
    return str(url) if url else f"{endpoint}/datasets/{repo_id}"


@dataclass
class Published:
    staged: Staged
    url: str | None
    """None on a dry run."""


def publish(run_dir: Path, repo_id: str, *, private: bool = False, dry_run: bool = False,
            calibration_dir: Path | None = None, out: Path | None = None,
            license: str = DEFAULT_LICENSE) -> Published:
    """Stage RUN_DIR's final decisions and, unless `dry_run`, upload them as a Hub dataset."""
    check_repo_id(repo_id)
    require_resolved(Path(run_dir))
    token = None if dry_run else hub_token()
    staged = stage(run_dir, out=out, calibration_dir=calibration_dir, license=license,
                   repo_id=repo_id)
    if dry_run:
        return Published(staged, None)
    assert token is not None
    return Published(staged, upload(staged, repo_id, private=private, token=token))


def utc_today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


# --- the dataset card -----------------------------------------------------------------------


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def _counts(values: Iterable[Any], order: Sequence[str]) -> list[tuple[str, int]]:
    counts = Counter("none" if v is None else str(v) for v in values)
    known = [(k, counts.pop(k)) for k in order if k in counts]
    return known + sorted(counts.items())


def _f1(value: float | None, interval: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def calibration_summary(calibration_dir: Path, judgments: list[Judgment]) -> list[str]:
    """Per (rubric version, judge): the trusted criteria with their F1 and interval, or why
    nothing is trusted ("not calibrated", a stale calibration)."""
    from pydantic import ValidationError

    from .calibrate import load_artifact, staleness

    seen: dict[tuple[str, str], Judgment] = {}
    for j in judgments:
        if j.rubric is not None:
            seen.setdefault((str(j.rubric), j.judge), j)
    lines: list[str] = []
    for (ref_name, judge), line in sorted(seen.items()):
        assert line.rubric is not None
        lines.append(f"### {ref_name}, judge `{judge}`")
        lines.append("")
        try:
            artifact = load_artifact(calibration_dir, line.rubric, judge)
        except (ValidationError, OSError, ValueError):
            lines += ["Calibration artifact unreadable: treated as **not calibrated** (the judge's "
                      "answers decide nothing).", ""]
            continue
        if artifact is None:
            lines += ["**Not calibrated**: no calibration of this judge on this rubric version, "
                      "so none of its answers decided a criterion on its own.", ""]
            continue
        stale = staleness(artifact, rubric=line.rubric, template_hash=line.provenance.template_hash,
                          model=line.provenance.model)
        labels = artifact.labels
        source = {"construction": "**construction labels** (derived from how the examples were "
                                  "built; not human labels)",
                  "human": "human labels",
                  "mixed": "a mix of human and **construction labels** (construction labels "
                           "are derived from how examples were built, not given by people)"
                  }[labels.source]
        blind = "blind labels only" if labels.blind_only else "anchored labels included"
        lines.append(f"Calibrated on {labels.used} {source} from {labels.annotators} "
                     f"annotator(s), {blind} (created {artifact.created_at:%Y-%m-%d}).")
        if stale:
            lines += ["", f"The calibration is **stale** ({stale}): it trusts nothing."]
        trusted = [c for c in artifact.criteria if c.decision == "trusted"]
        options = artifact.options
        rule = (f"support >= {options.min_support}, coverage >= {options.min_coverage:g} and "
                f"an F1 95% interval lower bound >= {options.floor:g}")
        if trusted and not stale:
            lines.append(f"Trusted criteria ({rule}): " + ", ".join(
                f"`{c.criterion}` (F1 {_f1(c.f1, c.f1_interval)}, n={c.support})"
                for c in trusted) + ".")
        else:
            lines.append(f"Trusted criteria: none (a criterion is trusted at {rule}).")
        lines.append("")
        lines += _table(["criterion", "decision", "support", "coverage", "F1 [95% CI]"],
                        [(c.criterion, c.decision.replace("_", " "), c.support,
                          "-" if c.coverage is None else f"{c.coverage:.2f}",
                          _f1(c.f1, c.f1_interval)) for c in artifact.criteria])
        lines.append("")
    if not lines:
        lines = ["No AI judgment in this run.", ""]
    return lines


def dataset_card(*, run_id: str, repo_id: str | None, license: str,
                 tables: dict[str, list[dict[str, Any]]], decisions: list[RubricDecision],
                 judgments: list[Judgment], calibration_dir: Path,
                 scrubbed: Counter[str]) -> str:
    """README.md for the Hub: YAML front matter (license, pretty_name, tags, configs) + body."""
    import yaml

    claims = tables["claims"]
    name = (repo_id or "judging-run").split("/")[-1]
    pretty = f"Judged reproduction claims ({name})"
    n = len(claims)
    size = "n<1K" if n < 1000 else "1K<n<10K" if n < 10_000 else "10K<n<100K" \
        if n < 100_000 else "100K<n<1M"
    front = {"license": license, "pretty_name": pretty, "language": ["en"], "tags": TAGS,
             "size_categories": [size],
             "configs": [{"config_name": c, "data_files": [
                 {"split": "train", "path": f"data/{c}.parquet"}], **({"default": True}
                                                                     if c == "claims" else {})}
                 for c in CONFIGS]}
    out = ["---", yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(), "---", ""]
    papers = {row["paper_id"] for row in claims}
    submissions = {row["submission_id"] for row in claims}
    code_versions = sorted({j.provenance.code_version for j in judgments})
    out += [
        f"# {pretty}", "",
        f"Final decisions on **{n} claim(s)** from {len(papers)} paper(s), reproduced by "
        f"{len(submissions)} submission(s) and judged with "
        f"`judging` (rubric-based, AI-then-human judging of claims reproduced from ML "
        f"papers).", "",
        "Each submission reproduced claims from a paper (\"Fig. 3 shows X\", \"Table 2: 94.1%\") "
        "and gave a **verdict** (verified, falsified or inconclusive) with a justification. Each "
        "claim was scored against versioned rubrics, first by AI judges, then by people; each "
        "criterion was finally decided by the reviewers' majority, else by the AI where a "
        "calibration trusts that judge on that criterion, else left *pending review*. The "
        "claim's **outcome** (pass, fail, incomplete, pending) is ours; the **verdict** is the "
        "participant's; **upheld** says whether the verdict stands.", "",
        f"Run `{run_id}`; code version {', '.join(f'`{v}`' for v in code_versions) or 'unknown'}; "
        f"published {utc_today()}.", "",
        "## Configs", "",
        f"- `claims` ({len(claims)} rows, `data/claims.parquet`): one row per claim: ids, kind, "
        "the participant's verdict, our outcome (overall and per rubric, `outcomes` as JSON), "
        "whether the verdict is upheld, who decided, and the claim's statement, justification "
        "and scale note (scrubbed, see below).",
        f"- `decisions` ({len(tables['decisions'])} rows, `data/decisions.parquet`): one row per "
        "(claim, rubric, criterion): status (decided, pending, not applicable), the value "
        "(`yes`/`no` or a level), whether it passes, who decided (`humans` or `ai`) and why a "
        "criterion is pending.",
        f"- `judgments` ({len(tables['judgments'])} rows, `data/judgments.parquet`): one row per "
        "AI judgment (the newest per claim, rubric, judge and sample): per-criterion answers "
        "with rationales (`answers`, JSON), aggregate score, coverage and outcome, measured "
        "signals, flags, and provenance (model, settings, prompt-template and request hashes, "
        "token usage, cost, code version, the raw answer).", "",
        "Each table is also given as JSON lines (`data/*.jsonl`, the same rows).", ""]

    refs: dict[str, tuple[str, str, str, str]] = {}
    for d in decisions:
        refs[f"{d.rubric}#{d.rubric.hash}"] = (d.rubric.id, d.rubric.version, d.applies_to,
                                                d.rubric.hash)
    for j in judgments:
        if j.rubric is not None:
            refs.setdefault(f"{j.rubric}#{j.rubric.hash}", (j.rubric.id, j.rubric.version, "-",
                                                            j.rubric.hash))
    out += ["## Rubrics", ""]
    out += _table(["rubric", "version", "applies to", "content hash"],
                  [(i, v, a, f"`{h}`") for i, v, a, h in sorted(refs.values())])
    out += ["", "## Judges", ""]
    judges: dict[str, dict[str, Any]] = {}
    for j in judgments:
        entry = judges.setdefault(j.judge, {"models": set(), "lines": 0})
        entry["lines"] += 1
        if j.provenance.model:
            entry["models"].add(j.provenance.model)
    out += _table(["judge", "model", "judgment lines"], [
        (f"`{judge}`", ", ".join(f"`{m}`" for m in sorted(e["models"])) or
         ("none: offline rules (signal thresholds and rule checks)" if judge == "offline"
          else "-"), e["lines"]) for judge, e in sorted(judges.items())])
    out += ["", "## Calibration", "",
            "How far each AI judge agrees with people, per criterion (`judging calibrate`). Only "
            "trusted criteria let the AI decide without a reviewer.", ""]
    out += calibration_summary(calibration_dir, judgments)

    decision_rows_ = tables["decisions"]
    deciders = Counter("not applicable" if r["status"] == "not_applicable" else
                       "pending review" if r["status"] == "pending" else
                       "humans" if r["decided_by"] == "humans" else
                       "construction labels" if r["decided_by"] == "construction" else
                       "trusted AI" for r in decision_rows_)
    out += ["## Results", "", "### Participant verdicts", ""]
    out += _table(["verdict", "claims"], _counts((r["verdict"] for r in claims),
                                                 ["verified", "falsified", "inconclusive"]))
    out += ["", "### Outcomes", ""]
    out += _table(["outcome", "claims"], _counts((r["outcome"] for r in claims),
                                                 ["pass", "fail", "incomplete", "pending"]))
    out += ["", "### Verdict upheld", ""]
    out += _table(["upheld", "claims"], _counts((r["upheld"] for r in claims),
                                                ["yes", "no", "pending"]))
    out += ["", "### Who decided each criterion", ""]
    out += _table(["decided by", "criteria"],
                  [(k, deciders.get(k, 0)) for k in ("humans", "construction labels",
                                                      "trusted AI", "pending review",
                                                      "not applicable")])
    if deciders.get("construction labels"):
        out += ["", "Construction labels state what the answer must be given how an example "
                    "was built: no person gave them."]
    out += ["", "## Personal data", "",
            "Before upload, every text that came from participants or models (statements, "
            "justifications, scale notes, rationales, raw answers, reasons, flags) was scrubbed; "
            "replacements made:", ""]
    labels = {"email": "email addresses -> `[email]`",
              "token": "tokens and keys (Hugging Face, OpenAI, GitHub, AWS, Slack, bearer "
                       "tokens, JWTs, `api_key=...`-style assignments) -> `[token]`",
              "home": "home-directory paths (`/home/<user>`, `/Users/<user>`, "
                      "`C:\\Users\\<user>` and root's home) -> `[home]`",
              "local_path": "absolute paths of the judging machine -> `[local]`"}
    out += _table(["kind", "replacements"],
                  [(labels[k], scrubbed.get(k, 0)) for k in SCRUB_KINDS])
    out += ["",
            "Local file paths recorded by the run (submission folders, resolved figure and log "
            "files, diff images) are not published, nor are API keys (never recorded) or local "
            "judge endpoints. Reviewers are pseudonymised as `reviewer-<6 hex>`, a salted hash "
            "of their user name: stable across publishes of this run, and the salt is not "
            "published. Construction labels keep their generator's name "
            "(`construction:...`): no person gave them. Submission ids are the participants' "
            "public submission handles.", ""]
    return "\n".join(out)


__all__ = ["PublishError", "SCRUB_PATTERNS", "Published", "Staged", "StagedFile", "describe",
           "hub_token", "publish", "pseudonym", "scrub", "stage", "upload"]
