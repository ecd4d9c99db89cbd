"""Where submissions come from: a submission folder, a folder of them, or a Hugging Face repo
(`hf://spaces/...`, `hf://datasets/...`) downloaded as real files."""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from judging._yaml import (
    one_line,
)
from judging.errors import SourceError
from judging.intake.manifest import MANIFEST_NAMES
from judging.intake.paths import confine
from judging.intake.shapes import one_submission, shape_of
from judging.intake.space import read_space

log = logging.getLogger(__name__)

HUB_PREFIX = "hf://"


_HUB_SOURCE = re.compile(
    r"^hf://(?P<type>spaces|datasets)/(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)"
    r"(?:@(?P<revision>[\w./-]+?))?(?:/(?P<subdir>[^@]+))?$")


@dataclass(frozen=True)
class HubSource:
    repo_type: str
    """"space" or "dataset"."""
    repo_id: str
    revision: str | None
    subdir: str | None

    @property
    def spec(self) -> str:
        rev = f"@{self.revision}" if self.revision else ""
        sub = f"/{self.subdir}" if self.subdir else ""
        return f"hf://{self.repo_type}s/{self.repo_id}{rev}{sub}"


def parse_hub_source(spec: str) -> HubSource:
    match = _HUB_SOURCE.match(spec)
    if not match:
        raise SourceError(f"{spec!r} is not a Hub source: use hf://spaces/OWNER/NAME or "
                          f"hf://datasets/OWNER/NAME, optionally @REVISION and /SUBFOLDER")
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(match.group("repo"))
    except HFValidationError as exc:
        raise SourceError(f"{spec!r}: not a valid repo id: {exc}") from exc
    subdir = match.group("subdir")
    if subdir is not None:
        parts = subdir.split("/")
        if ".." in parts:
            raise SourceError(f"{spec!r}: the subfolder must not contain '..'")
        if "\\" in subdir or any(part in ("", ".") for part in parts[:-1]) or parts[0] == "":
            raise SourceError(f"{spec!r}: the subfolder must be a relative path like "
                              f"'team/alice' (no leading '/', '//' or '.')")
        subdir = subdir.rstrip("/") or None
    return HubSource(repo_type=match.group("type")[:-1], repo_id=match.group("repo"),
                     revision=match.group("revision"), subdir=subdir)


@contextlib.contextmanager
def hub_errors(what: str, *, revision: str | None = None,
               failed: str = "cannot reach the Hugging Face Hub") -> Iterator[None]:
    """Hub and network failures of a Hub call as one-line SourceErrors naming `what` (the one
    mapping for downloads, Space listings and commit histories)."""
    import httpx2
    from huggingface_hub import constants as hub_constants
    from huggingface_hub import errors as hub_errors_

    try:
        yield
    except hub_errors_.GatedRepoError as exc:
        raise SourceError(f"{what}: the repo is gated; accept its conditions on the Hub and "
                          f"set HF_TOKEN") from exc
    except hub_errors_.RepositoryNotFoundError as exc:
        raise SourceError(f"{what}: repo not found, or private and HF_TOKEN is missing or has "
                          f"no access") from exc
    except hub_errors_.RevisionNotFoundError as exc:
        shown = f" {revision!r}" if revision else ""
        raise SourceError(f"{what}: revision{shown} not found") from exc
    except hub_errors_.LocalEntryNotFoundError as exc:
        if hub_constants.is_offline_mode():
            raise SourceError(f"{what}: HF_HUB_OFFLINE is set and the repo is not downloaded "
                              f"yet") from exc
        cause = exc.__cause__
        why = f" ({one_line(cause)})" if isinstance(cause, hub_errors_.HfHubHTTPError) else ""
        raise SourceError(f"{what}: cannot reach the Hugging Face Hub{why} (offline, blocked "
                          f"network or Hub down) and no local copy exists; download it "
                          f"elsewhere and pass the folder instead") from exc
    except hub_errors_.HfHubHTTPError as exc:
        raise SourceError(f"{what}: the Hub answered with an error: {one_line(exc)}") from exc
    except (httpx2.HTTPError, OSError) as exc:
        raise SourceError(f"{what}: {failed} ({type(exc).__name__}: {one_line(exc)})") from exc


def fetch_hub_source(source: HubSource, *, download_root: Path, token: str | None = None
                     ) -> Path:
    """Download a Space or dataset repo into a folder of real files; return the submission folder."""
    from huggingface_hub import snapshot_download

    # one folder per revision: revisions must not overwrite each other's files ("@" keeps a
    # revision such as ".." from being read as a path step)
    local_dir = (download_root / f"{source.repo_type}s" / source.repo_id
                 / f"@{source.revision or 'main'}")
    token = token or os.environ.get("HF_TOKEN") or None
    allow = [f"{source.subdir}/**"] if source.subdir else None
    with hub_errors(source.spec, revision=source.revision, failed="download failed"):
        # `.judging/` in a download is judging's own (the datasets a Space links): never the
        # repo's copy of it, at any depth (a Space judged from its subfolder, a dataset of
        # Spaces), so a participant cannot plant a trace there (the Hub's `*` spans folders)
        snapshot_download(source.repo_id, repo_type=source.repo_type, revision=source.revision,
                          local_dir=local_dir, token=token, allow_patterns=allow,
                          ignore_patterns=[".judging/*", "*/.judging/*"])
    folder = confine(local_dir, source.subdir) if source.subdir else local_dir
    if not folder.is_dir():
        raise SourceError(f"{source.spec}: the subfolder {source.subdir!r} is not in the repo")
    if source.repo_type == "space" and shape_of(folder) == "space":
        fetch_linked(folder, source, token=token)
    return folder


#: A linked dataset is fetched only in part: its text files (traces, results, logs) up to these.
MAX_LINKED_FILES = 200
MAX_LINKED_FILE_BYTES = 50 * 1024 * 1024
MAX_LINKED_BYTES = 200 * 1024 * 1024
_LINKED_FILES = re.compile(r"(?i)\.(?:jsonl|json|csv|txt|log|md)$")


def fetch_linked(folder: Path, source: HubSource, *, token: str | None = None) -> list[str]:
    """Download the datasets a Space links that its owner owns (its README's `datasets:` and
    links to `huggingface.co/datasets/OWNER/...`): their text files, bounded, into
    `FOLDER/.judging/linked/datasets/OWNER/NAME/`, where the Space reader finds its traces and
    results. A dataset that cannot be fetched (private without a token, gone) is a warning in
    `FOLDER/.judging/linked/errors.txt`, read as the Space's file errors; the rest is judged.
    Returns the datasets fetched."""
    from huggingface_hub import HfApi, snapshot_download

    files = read_space(folder)
    owner = source.repo_id.split("/")[0]
    base = folder / ".judging" / "linked"
    fetched, errors = [], []
    for dataset in files.linked:
        if dataset.split("/")[0] != owner:
            continue  # another user's dataset is not this submission's
        target = base / "datasets" / dataset
        try:
            with hub_errors(f"hf://datasets/{dataset}"):
                entries = [e for e in HfApi(token=token).list_repo_tree(
                    dataset, repo_type="dataset", recursive=True)
                    if getattr(e, "size", None) is not None and _LINKED_FILES.search(e.path)
                    and e.size <= MAX_LINKED_FILE_BYTES]
                chosen, total = [], 0
                for entry in sorted(entries, key=lambda e: e.path)[:MAX_LINKED_FILES]:
                    if total + entry.size > MAX_LINKED_BYTES:
                        break
                    chosen.append(entry.path)
                    total += entry.size
                if len(chosen) < len(entries):  # said, never a silent part of the dataset
                    first = sorted(e.path for e in entries)[len(chosen)][:200]
                    errors.append(f"linked dataset {dataset}: {len(entries)} text files, only "
                                  f"the first {len(chosen)} fetched (at most "
                                  f"{MAX_LINKED_FILES} files, {MAX_LINKED_BYTES // 2**20} "
                                  f"MiB): from {first} on, not read")
                if chosen:
                    snapshot_download(dataset, repo_type="dataset", local_dir=target,
                                      token=token, allow_patterns=chosen)
            fetched.append(dataset)
        except SourceError as exc:
            errors.append(f"linked dataset {dataset}: {exc}")
    if errors:
        base.mkdir(parents=True, exist_ok=True)
        (base / "errors.txt").write_text("\n".join(errors) + "\n", encoding="utf-8")
    return fetched


def expand_source(source: str, *, download_root: Path, token: str | None = None,
                  warn_skipped: bool = True) -> list[Path]:
    """Submission folders named by a SOURCE argument.

    A folder that a shape (`shapes.SHAPES`) calls one submission is one; a folder that is
    none stands for its immediate subfolders that have a shape (e.g. `examples/submissions`);
    `hf://...` is downloaded first.
    `warn_skipped=False` for a check ahead of the load, which warns once itself.
    """
    if source.startswith(HUB_PREFIX):
        folder = fetch_hub_source(parse_hub_source(source), download_root=download_root,
                                  token=token)
    else:
        folder = Path(source)
        if not folder.exists():
            raise SourceError(f"{source}: no such folder")
        if not folder.is_dir():
            raise SourceError(f"{source}: not a folder (give the submission's folder, not its "
                              f"manifest)")
    subfolders: list[Path] = []
    children_: list[Path] = []

    def children() -> list[Path]:
        if not subfolders:  # listed once, and only when a shape asks or none is one here
            subfolders.extend(sorted(child for child in folder.iterdir()
                                     if child.is_dir() and not child.is_symlink()))
            children_.extend(child for child in subfolders if shape_of(child) is not None)
        return children_

    if one_submission(folder, hub=source.startswith(HUB_PREFIX), children=children):
        return [folder]
    children()
    skipped = [child.name for child in subfolders
               if child not in children_ and not child.name.startswith(".")]
    if children_ and skipped and warn_skipped:
        log.warning("%s: %d subfolder(s) without a %s skipped: %s", source, len(skipped),
                    MANIFEST_NAMES[0], ", ".join(skipped[:10]))
    if not children_:
        raise SourceError(f"{source}: no submission manifest ({MANIFEST_NAMES[0]}), Trackio "
                          f"logbook or Space (a README.md with front matter) in it or in its "
                          f"subfolders")
    return children_

