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
    data/not_addressed.*    one row per registry claim a submission left unanswered
    data/consensus.parquet  one row per registry claim: the consensus of its reproductions
    data/consensus.jsonl    (`judging consensus`: verdict, support, spread, flagged claims)
    data/leaderboard.*      one row for the event and one per submission: the pass rate with its
                            95% interval, the human-only one, the rank's 95% interval, and a
                            note (why a row is unranked: nothing of it could be judged)
    figures/<claim>/*.png   the normalised published and reproduced figures, the diff and the
                            chart overlay of each figure claim (named in the claims' `figures`)

then uploads it with `HfApi.create_repo` + `upload_folder` (or, with `--dry-run`, only lists it).

Nothing personal or local leaves the machine: every string that goes into a staged file passes
through `scrub` (emails, tokens and keys, home-directory paths, the absolute paths of this
machine), absolute paths recorded in the run (submission folders, resolved files, diff images)
are dropped, and reviewers are pseudonymised as `reviewer-<6 hex>` from a salted hash.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judging.errors import PublishError
from judging.models import Judgment
from judging.publish.card import DEFAULT_LICENSE, dataset_card
from judging.publish.rows import (
    CONFIGS,
    FIGURES_DIR,
    claim_rows,
    consensus_rows,
    decision_rows,
    judgment_rows,
    leaderboard_rows,
    not_addressed_rows,
    table_schemas,
)
from judging.publish.scrub import (
    SCRUB_KINDS,
    Scrubber,
    leftovers,
    local_roots,
    publish_salt,
)
from judging.resolve import ClaimDecision, RubricDecision, run_leaderboard
from judging.rundir import (
    RunPaths,
    RunStore,
    flags_by_claim,
    read_jsonl,
    read_not_addressed,
    with_flags,
)


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
    paths = RunPaths(Path(run_dir))
    missing = [path.name for path in (paths.final, paths.decisions) if not path.is_file()]
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
                     if p.name not in ("README.md", "data", FIGURES_DIR, ".cache")]
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


def _stage_figures(folder: Path, run_dir: Path, judgments: list[Judgment]
                   ) -> tuple[dict[str, dict[str, str]], list[StagedFile]]:
    """Copy each claim's normalised figures (diffs/<claim>/, written by `judging run`) to
    figures/<claim>/; claim key -> {kind: path in the dataset}. Only files inside the run's
    diffs/ folder are copied (an artifact path is the run's own, but never trusted blindly)."""
    diffs = RunPaths(run_dir).diffs.resolve()
    by_claim: dict[str, dict[str, str]] = {}
    files: list[StagedFile] = []
    for judgment in sorted(judgments, key=lambda j: (str(j.claim), str(j.rubric))):
        key = str(judgment.claim)
        if key in by_claim or not judgment.artifacts.diff:
            continue
        staged: dict[str, str] = {}
        for kind in ("published", "reproduced", "diff", "overlay"):
            relative = getattr(judgment.artifacts, kind)
            if not relative:
                continue
            source = (run_dir / relative).resolve()
            if not source.is_file() or diffs not in source.parents:
                continue
            target = f"{FIGURES_DIR}/{source.parent.name}/{source.name}"
            (folder / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, folder / target)
            staged[kind] = target
            files.append(StagedFile(target, (folder / target).stat().st_size, None))
        if staged:
            by_claim[key] = staged
    return by_claim, files


def stage(run_dir: Path, *, out: Path | None = None, calibration_dir: Path | None = None,
          license: str = DEFAULT_LICENSE, repo_id: str | None = None,
          salt: str | None = None) -> Staged:
    """Build the dataset folder for a resolved run (nothing is sent anywhere)."""
    from judging.calibrate import calibration_root
    from judging.consensus import load_consensus

    run_dir = Path(run_dir)
    require_resolved(run_dir)
    store = RunStore.open(run_dir, create=False)
    finals = read_jsonl(RunPaths(run_dir).final, ClaimDecision)
    decisions = read_jsonl(RunPaths(run_dir).decisions, RubricDecision)
    judgments = store.latest()
    claims = store.claims()
    calibration_dir = calibration_root(calibration_dir)
    folder = Path(out) if out is not None else RunPaths(run_dir).publish_staging
    _prepare_folder(folder, run_dir)
    salt = salt or publish_salt(run_dir)
    scrubber = Scrubber(local_roots(run_dir, claims.values(),
                                     [folder, calibration_dir, Path.home()]))
    schemas = table_schemas()
    figures, figure_files = _stage_figures(folder, run_dir, judgments)
    consensus = load_consensus(run_dir)
    # The flags of the side files (integrity, consensus, merge conflicts) are published merged,
    # as every reader of the run sees them (report, review push, the dashboard): in the claims'
    # and the judgments' `flags`, the consensus ones from the very consensus the `consensus`
    # table publishes. A Space reading the dataset then shows what the local dashboard shows.
    side_flags = flags_by_claim(run_dir, consensus=consensus)
    board = run_leaderboard(run_dir)
    tables = {"claims": claim_rows(finals, claims, scrubber, figures, side_flags=side_flags),
              "decisions": decision_rows(decisions, scrubber, salt),
              "judgments": judgment_rows([with_flags(j, side_flags) for j in judgments],
                                         scrubber),
              "not_addressed": not_addressed_rows(read_not_addressed(run_dir), scrubber),
              "consensus": consensus_rows(consensus, scrubber),
              "leaderboard": leaderboard_rows(board, scrubber)}
    files: list[StagedFile] = []
    for name in CONFIGS:
        files += _write_table(folder, name, tables[name], schemas[name])
    files += figure_files
    card = dataset_card(
        run_id=store.info.run_id, repo_id=repo_id, license=license, tables=tables,
        decisions=decisions, judgments=judgments, calibration_dir=calibration_dir,
        scrubbed=scrubber.counts, board=board)
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
