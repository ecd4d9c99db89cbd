"""`judging compare RUN_DIR --reference FILE`: the run's own verdicts beside another judge's on the
same claims (e.g. the ICML 2026 Logbook Judge's archived verdicts on the same logbooks).

The reference is a table (CSV/JSONL: a submission column, a claim index or text column, a verdict
column) or the ICML `verdicts.json` shape: a list (or a mapping) of records
`{"space_id": ..., "claims": [{"claim": text, "verdict": ...}, ...]}`, a claim's index being its
1-based position. A reference claim is matched to a run claim of the same submission by index
(the participant's claim number N, the trailing number of the claim id), else by text (the
closest statement, when it is close enough and no other is as close). Ours is the claim's final
verdict (`resolve`) where one was decided, else the AI's own verdict (the verdict rubric's
`own_verdict` of the line that speaks for the AI); which one is said per claim.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

import judging.calibrate.metrics as agreement
from judging.calibrate.tables import read_table
from judging.errors import CalibrationError
from judging.hashing import file_sha256
from judging.models import OWN_VERDICT, AnswerStatus, ClaimInput, OwnVerdict
from judging.rundir import RunStore, iter_final_verdicts, judged_claims

LABELS = [v.value for v in OwnVerdict]
#: A reference claim given by text matches the run claim whose statement is this similar to it
#: (difflib ratio on lower-cased words), and no other claim of the submission as similar.
TEXT_MATCH_AT_LEAST = 0.6
#: Column names tried, in order, when the options do not name them.
SUBMISSION_COLUMNS = ("space_id", "submission_id", "submission", "logbook")
INDEX_COLUMNS = ("claim_idx", "claim_index", "index")
TEXT_COLUMNS = ("claim", "claim_text", "text", "statement")
VERDICT_COLUMNS = ("verdict", "archived", "label")
#: Reference labels read as ours (the ICML judge's are already the four labels).
ALIASES = {"verify": "verified", "falsify": "falsified", "reduced": "toy", "toy-scale": "toy",
           "unclear": "inconclusive", "blocked": "inconclusive"}


@dataclass(frozen=True)
class ReferenceVerdict:
    submission: str
    index: int | None
    text: str | None
    verdict: str


@dataclass
class Matched:
    claim: str
    reference: str
    ours: str
    source: str
    """final (resolve's final verdict) or ai (the AI's own verdict, not yet decided)."""
    how: str
    """index or text."""


@dataclass
class ReferenceComparison:
    run: str
    reference: str
    sha256: str
    reference_claims: int
    matched: list[Matched]
    unmatched_reference: list[str] = field(default_factory=list)
    """Reference claims with no run claim, or whose run claim has no verdict of ours (why)."""
    unmatched_run: list[str] = field(default_factory=list)
    """Run claims of the reference's submissions that no reference claim names."""
    metrics: agreement.ClassificationMetrics | None = None
    """Ours (predicted) against the reference (gold), over the four labels."""
    alpha: float | None = None
    baseline: agreement.BaselineMetrics | None = None
    sources: dict[str, int] = field(default_factory=dict)
    intervals: agreement.AgreementIntervals | None = None
    """Of the agreement and the kappa (none from fewer items than an interval needs)."""

    def payload(self) -> dict:
        return {"schema": "judging.compare-report/1", "run": self.run,
                "reference": self.reference, "sha256": self.sha256,
                "reference_claims": self.reference_claims,
                "matched": [asdict(m) for m in self.matched],
                "unmatched_reference": self.unmatched_reference,
                "unmatched_run": self.unmatched_run,
                "metrics": self.metrics.as_dict() if self.metrics else None,
                "alpha": self.alpha, "baseline": self.baseline.as_dict() if self.baseline
                else None, "sources": self.sources,
                "intervals": self.intervals.as_dict() if self.intervals else None}


def _label(raw: object, where: str) -> str:
    text = str(raw or "").strip().lower()
    text = ALIASES.get(text, text)
    if text not in LABELS:
        raise CalibrationError(f"{where}: verdict {raw!r} is not one of {', '.join(LABELS)}")
    return text


def _pick(columns: list[str], given: str | None, candidates: tuple[str, ...], what: str,
          path: Path, *, required: bool = True) -> str | None:
    if given is not None:
        if given not in columns:
            raise CalibrationError(f"{path}: no column {given} (columns: {', '.join(columns)})")
        return given
    found = next((c for c in candidates if c in columns), None)
    if found is None and required:
        raise CalibrationError(f"{path}: no {what} column (tried {', '.join(candidates)}; name "
                               f"it with the option)")
    return found


def read_reference(path: Path, *, submission_column: str | None = None,
                   index_column: str | None = None, text_column: str | None = None,
                   verdict_column: str | None = None) -> list[ReferenceVerdict]:
    """The reference's verdicts, from a table or the ICML verdicts.json shape."""
    if not path.is_file():
        raise CalibrationError(f"{path}: no such reference file")
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise CalibrationError(f"{path}: not JSON ({exc})") from None
        records = list(data.values()) if isinstance(data, dict) else data
        if not isinstance(records, list):
            raise CalibrationError(f"{path}: expected a list of records with space_id and claims")
        found = []
        for n, record in enumerate(records):
            where = f"{path} record {n}"
            if not isinstance(record, dict) or not isinstance(record.get("claims"), list):
                raise CalibrationError(f"{where}: expected {{space_id, claims: [...]}}")
            space = record.get("space_id") or record.get("submission_id")
            if not space:
                raise CalibrationError(f"{where}: no space_id")
            for position, claim in enumerate(record["claims"], start=1):
                if not isinstance(claim, dict) or claim.get("verdict") in (None, ""):
                    continue  # a claim the judge left out: no verdict (never "inconclusive")
                # The archive gives the claim's text ("claim") at its position; a raw judge
                # answer gives the claim's index ("claim": N).
                raw = claim.get("claim")
                numbered = isinstance(raw, int) or (isinstance(raw, str) and raw.isdigit())
                text = claim.get("text") if numbered or not isinstance(raw, str) else raw
                found.append(ReferenceVerdict(
                    submission=str(space), index=int(raw) if numbered else position,  # type: ignore[arg-type]
                    text=text if isinstance(text, str) and text.strip() else None,
                    verdict=_label(claim["verdict"], f"{where} claim {position}")))
        return found
    rows = read_table(path)
    if not rows:
        raise CalibrationError(f"{path}: the table is empty")
    columns = list(rows[0])
    submission = _pick(columns, submission_column, SUBMISSION_COLUMNS, "submission", path)
    index = _pick(columns, index_column, INDEX_COLUMNS, "claim index", path, required=False)
    text = _pick(columns, text_column, TEXT_COLUMNS, "claim text", path, required=False)
    verdict = _pick(columns, verdict_column, VERDICT_COLUMNS, "verdict", path)
    if index is None and text is None:
        raise CalibrationError(f"{path}: no claim index or claim text column (tried "
                               f"{', '.join(INDEX_COLUMNS + TEXT_COLUMNS)})")
    found = []
    for n, row in enumerate(rows, start=2):
        raw_index = (row.get(index) or "").strip() if index else ""
        if raw_index and not raw_index.isdigit():
            raise CalibrationError(f"{path}:{n}: claim index {raw_index!r} is not a number")
        if not (row.get(verdict) or "").strip():
            continue
        found.append(ReferenceVerdict(
            submission=(row.get(submission) or "").strip(),  # type: ignore[arg-type]
            index=int(raw_index) if raw_index else None,
            text=(row.get(text) or "").strip() or None if text else None,
            verdict=_label(row.get(verdict), f"{path}:{n}")))
    return found


def _norm_submission(name: str) -> str:
    """`owner/name` and the folder form `owner--name` name the same Space."""
    return name.strip().lower().replace("--", "/")


def claim_number(claim: ClaimInput) -> int | None:
    """The participant's claim number: the trailing number of the claim id (`PAPER/c3`,
    `PAPER/claims-r3`)."""
    match = re.search(r"(\d+)$", claim.claim.claim_id)
    return int(match.group(1)) if match else None


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9.%]+", text.lower()))


def _by_text(text: str, claims: list[ClaimInput]) -> ClaimInput | None:
    scores = sorted(((SequenceMatcher(None, _words(text), _words(c.claim.statement)).ratio(), n)
                     for n, c in enumerate(claims)), reverse=True)
    if not scores or scores[0][0] < TEXT_MATCH_AT_LEAST:
        return None
    if len(scores) > 1 and scores[1][0] >= scores[0][0] - 1e-9:
        return None  # two claims as close: no guess
    return claims[scores[0][1]]


def our_verdicts(store: RunStore) -> dict[str, tuple[str, str]]:
    """Claim key -> (our verdict, its source): resolve's final verdict where one was decided,
    else the AI's scored own verdict: of the lines that speak for the AI, the first (in rubric
    `id@version` order) that the own-verdict question applies to, as resolve reads it."""
    ours: dict[str, tuple[str, str]] = {}
    for key, _, speaking in judged_claims(store):
        answer = next((a for line, _ in speaking if (a := line.answer(OWN_VERDICT)) is not None
                       and a.status is not AnswerStatus.not_applicable), None)
        if answer is not None and answer.status is AnswerStatus.scored and \
                isinstance(answer.value, str):
            ours[key] = (answer.value, "ai")
    for key, verdict in iter_final_verdicts(store.root):
        if verdict is not None and verdict != "pending":
            ours[key] = (verdict, "final")
    return ours


def compare_reference(run_dir: Path, reference: Path, **columns: str | None
                      ) -> ReferenceComparison:
    """Our verdicts against the reference's on the claims both have."""
    verdicts = read_reference(reference, **columns)
    if not verdicts:
        raise CalibrationError(f"{reference}: no verdict in the reference")
    store = RunStore.open(run_dir, create=False)
    try:
        by_submission: dict[str, list[ClaimInput]] = defaultdict(list)
        for claim in store.iter_claims():
            by_submission[_norm_submission(claim.key.submission_id)].append(claim)
        ours = our_verdicts(store)
    finally:
        store.close()
    result = ReferenceComparison(run=str(run_dir), reference=str(reference),
                                 sha256=file_sha256(reference) or "",
                                 reference_claims=len(verdicts), matched=[])
    named: set[str] = set()
    for ref in verdicts:
        name = f"{ref.submission} claim {ref.index if ref.index is not None else repr(ref.text)}"
        claims = by_submission.get(_norm_submission(ref.submission), [])
        if not claims:
            result.unmatched_reference.append(f"{name}: no such submission in the run")
            continue
        # The text first: the reference's numbering (an organizers' registry) need not be the
        # participant's; the index when the text matches no statement closely enough.
        found, how = (_by_text(ref.text, claims), "text") if ref.text else (None, "text")
        if found is None and ref.index is not None:
            found = next((c for c in claims if claim_number(c) == ref.index), None)
            how = "index"
        if found is None:
            result.unmatched_reference.append(f"{name}: no claim of the run matches it")
            continue
        key = str(found.key)
        named.add(key)
        if key not in ours:
            result.unmatched_reference.append(f"{name}: {key} has no verdict of ours (no "
                                              f"own_verdict answer, nothing decided)")
            continue
        verdict, source = ours[key]
        result.matched.append(Matched(claim=key, reference=ref.verdict, ours=verdict,
                                      source=source, how=how))
    seen = {_norm_submission(v.submission) for v in verdicts}
    result.unmatched_run = sorted(str(c.key) for name in seen
                                  for c in by_submission.get(name, []) if str(c.key) not in named)
    if result.matched:
        gold = [m.reference for m in result.matched]
        mine = [m.ours for m in result.matched]
        result.metrics = agreement.classification_metrics(gold, mine, labels=LABELS)
        result.intervals = agreement.agreement_intervals(gold, mine, labels=LABELS)
        result.alpha = agreement.krippendorff_alpha([gold, mine], level="nominal",
                                                    values=LABELS)
        result.baseline = agreement.random_baseline(gold, labels=LABELS)
        result.sources = dict(Counter(m.source for m in result.matched))
    return result


def compare_markdown(result: ReferenceComparison) -> str:
    def fmt(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    m = result.metrics
    lines = [f"# Our verdicts against {Path(result.reference).name}", "",
             f"- run: `{result.run}`; reference: `{result.reference}` "
             f"(`{result.sha256[:19]}...`), {result.reference_claims} reference verdicts",
             f"- matched: {len(result.matched)} claims (" + ", ".join(
                 f"{n} {'final verdicts' if s == 'final' else 'AI own verdicts'}"
                 for s, n in sorted(result.sources.items())) + ")",
             f"- left out: {len(result.unmatched_reference)} reference claims, "
             f"{len(result.unmatched_run)} run claims the reference does not name", ""]
    if m is None:
        lines.append("No claim matched: nothing to compare.")
    else:
        b = result.baseline
        shown = result.intervals or agreement.AgreementIntervals(m.n, None, None)
        lines += ["| | n | agreement [95%] | Cohen's κ [95%] | Krippendorff's α | macro F1 |",
                  "|---|---|---|---|---|---|",
                  f"| ours vs reference | {m.n} | {shown.show(m.accuracy, 'accuracy')} | "
                  f"{shown.show(m.kappa, 'kappa')} | "
                  f"{fmt(result.alpha)} | {fmt(m.macro_f1)} |",
                  f"| ↳ chance: the reference's label frequencies | {m.n} | "
                  f"{fmt(b.accuracy if b else None)} | 0.000 | | "
                  f"{fmt(b.macro_f1 if b else None)} |", "",
                  "Read the agreement against the chance row, and against each judge's own "
                  "retest agreement (`judging calibrate --retest`): two judges cannot agree with "
                  "each other more than each agrees with itself.", "",
                  "## Confusion (rows: reference, columns: ours)", "",
                  "| reference \\ ours | " + " | ".join(LABELS) + " |",
                  "|---" * (len(LABELS) + 1) + "|"]
        lines += [f"| {label} | " + " | ".join(str(n) for n in row) + " |"
                  for label, row in zip(LABELS, m.confusion)]
        differing = [x for x in result.matched if x.ours != x.reference]
        lines += ["", f"## Claims where the verdicts differ ({len(differing)})", "",
                  "| claim | reference | ours | ours from | matched by |", "|---|---|---|---|---|"]
        lines += [f"| {x.claim} | {x.reference} | {x.ours} | {x.source} | {x.how} |"
                  for x in differing]
    if result.unmatched_reference:
        lines += ["", "## Reference claims left out", ""]
        lines += [f"- {why}" for why in result.unmatched_reference]
    return "\n".join(lines) + "\n"


def write_compare_report(result: ReferenceComparison, folder: Path) -> Path:
    from judging.calibrate.report import write_report

    return write_report(folder, result.payload(), compare_markdown(result))
