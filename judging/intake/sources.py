"""Where submissions come from: a submission folder, a folder of them, or a Hugging Face repo
(`hf://spaces/...`, `hf://datasets/...`) downloaded as real files."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judging._yaml import (
    one_line,
)
from judging.errors import SourceError
from judging.intake.manifest import MANIFEST_NAMES
from judging.intake.paths import confine
from judging.intake.shapes import one_submission, shape_of
from judging.intake.space import read_space
from judging.models import MAX_SOURCE_BYTES, MAX_SOURCE_FILES

if TYPE_CHECKING:
    from huggingface_hub import HfApi

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


def hub_download_dir(source: HubSource, download_root: Path) -> Path:
    """Where a Hub source is downloaded: one folder per revision, so that revisions do not
    overwrite each other's files ("@" keeps a revision such as ".." from being read as a path
    step)."""
    return (download_root / f"{source.repo_type}s" / source.repo_id
            / f"@{source.revision or 'main'}")


def source_label(spec: str, folder: Path | None = None, *, download_root: Path) -> str:
    """How a submission folder is named from one run to the next, whether or not it could be
    read: a Hub source by its repo and the folder within it, without the revision (a Space fixed
    by a new commit is the same submission); a local folder by its path. `folder` None: the
    source as a whole (it could not be downloaded or listed)."""
    if not spec.startswith(HUB_PREFIX):
        return str(folder if folder is not None else spec)
    try:
        hub = parse_hub_source(spec)
    except SourceError:
        return spec
    label = f"{HUB_PREFIX}{hub.repo_type}s/{hub.repo_id}"
    if folder is None:
        return f"{label}/{hub.subdir}" if hub.subdir else label
    try:
        inside = folder.relative_to(hub_download_dir(hub, download_root)).as_posix()
    except ValueError:  # not under its download folder: name it by the folder itself
        return str(folder)
    return label if inside == "." else f"{label}/{inside}"


def label_name(label: str) -> str:
    """What a person calls the submission of a `source_label`: a Hub repo's id and the folder
    within it (its owner is the participant, as for a Space's submission id), else the
    folder's name."""
    if label.startswith(HUB_PREFIX):
        return label.removeprefix(HUB_PREFIX).split("/", 1)[-1]
    return Path(label).name or label


@dataclass(frozen=True)
class DownloadLimits:
    """What one Hub submission may hold to be downloaded: set by the organizer (`judging run
    --max-download-files / --max-download-mb`), never by anything the submission declares."""

    files: int = MAX_SOURCE_FILES
    bytes: int = MAX_SOURCE_BYTES

    def over(self, count: int, size: int) -> str | None:
        """Why `count` files of `size` bytes are over the limits, or None."""
        if count > self.files:
            return (f"more than {self.files:,} files, the most a submission may hold (the "
                    f"organizer's --max-download-files)")
        if size > self.bytes:
            return (f"more than {_mib(self.bytes)} in {count:,} files, the most a submission "
                    f"may hold (the organizer's --max-download-mb)")
        return None


def _mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


def fetch_hub_source(source: HubSource, *, download_root: Path, token: str | None = None,
                     limits: DownloadLimits | None = None) -> Path:
    """Download a Space or dataset repo into a folder of real files; return the submission
    folder. The files to download are counted and sized from the Hub's listing of one commit
    first, and that commit is downloaded: a repo over the host's `limits` is refused before a
    byte of it is fetched, and one whose downloaded files exceed them is removed and refused."""
    from huggingface_hub import snapshot_download

    limits = limits or DownloadLimits()
    local_dir = hub_download_dir(source, download_root)
    token = token or os.environ.get("HF_TOKEN") or None
    allow = [f"{source.subdir}/**"] if source.subdir else None
    # `.judging/` in a download is judging's own (the datasets a Space links): never the repo's
    # copy of it, at any depth (a Space judged from its subfolder, a dataset of Spaces), so a
    # participant cannot plant a trace there (the Hub's `*` spans folders)
    ignore = [".judging/*", "*/.judging/*"]
    with hub_errors(source.spec, revision=source.revision, failed="download failed"):
        listed, sha = _listing(source, token, allow, ignore, limits)
        # the commit listed, with the listing's own patterns: the files checked, no others
        snapshot_download(source.repo_id, repo_type=source.repo_type,
                          revision=sha or source.revision, local_dir=local_dir, token=token,
                          allow_patterns=allow, ignore_patterns=ignore)
    if listed is None:  # no Hub, and a copy downloaded earlier: measured whole
        listed = [p.relative_to(local_dir).as_posix() for p in local_dir.rglob("*")
                  if p.is_file() and p.relative_to(local_dir).parts[0] != ".cache"]
    held = sum(_size_on_disk(local_dir, path) for path in listed)
    if (why := limits.over(len(listed), held)) is not None:  # the download itself, measured
        shutil.rmtree(local_dir, ignore_errors=True)
        raise SourceError(f"{source.spec}: its downloaded files hold {why}: removed, not "
                          f"judged")
    folder = confine(local_dir, source.subdir) if source.subdir else local_dir
    if not folder.is_dir():
        raise SourceError(f"{source.spec}: the subfolder {source.subdir!r} is not in the repo")
    if source.repo_type == "space" and shape_of(folder) == "space":
        fetch_linked(folder, source, token=token)
    return folder


def _listing(source: HubSource, token: str | None, allow: list[str] | None, ignore: list[str],
             limits: DownloadLimits) -> tuple[list[str] | None, str | None]:
    """(the files the download will fetch, the commit listed), checked against `limits`; (None,
    None) when the Hub cannot be reached or HF_HUB_OFFLINE is set: `snapshot_download` then
    serves a copy downloaded earlier, or says why it cannot, as it does without a listing."""
    import httpx2
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import OfflineModeIsEnabled
    from huggingface_hub.file_download import REGEX_COMMIT_HASH

    api = HfApi(token=token)
    revision = source.revision or constants.DEFAULT_REVISION
    try:
        sha = revision if REGEX_COMMIT_HASH.fullmatch(revision) else api.repo_info(
            source.repo_id, repo_type=source.repo_type, revision=revision).sha
        return _listed_within(api, source, sha, allow, ignore, limits), sha
    except (httpx2.ConnectError, httpx2.TimeoutException, OfflineModeIsEnabled):
        return None, None


def _listed_within(api: HfApi, source: HubSource, sha: str | None, allow: list[str] | None,
                   ignore: list[str], limits: DownloadLimits) -> list[str]:
    """The files of one commit that the download will fetch (huggingface_hub's own pattern
    filter, as `snapshot_download` applies it), read from the Hub's listing as it pages in, or
    a SourceError at the first file over the limits: a repo of a million files is refused
    after a few pages, not listed whole."""
    from huggingface_hub import RepoFile
    from huggingface_hub.utils import filter_repo_objects

    entries = (e for e in api.list_repo_tree(source.repo_id, repo_type=source.repo_type,
                                             revision=sha, recursive=True)
               if isinstance(e, RepoFile))
    paths: list[str] = []
    total = 0
    for entry in filter_repo_objects(entries, allow_patterns=allow, ignore_patterns=ignore,
                                     key=lambda e: e.path):
        if entry.size is None:  # never downloaded blind
            raise SourceError(f"{source.spec}: the Hub's listing gives no size for "
                              f"{entry.path[:200]!r}, so the download cannot be bounded: not "
                              f"downloaded")
        paths.append(entry.path)
        total += entry.size
        if (why := limits.over(len(paths), total)) is not None:
            raise SourceError(f"{source.spec}: {why}: not downloaded")
    return paths


def _size_on_disk(local_dir: Path, path: str) -> int:
    try:  # lstat: a link is its own few bytes, never its target's
        return (local_dir / path).lstat().st_size
    except OSError:
        return 0


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
                  warn_skipped: bool = True, limits: DownloadLimits | None = None
                  ) -> list[Path]:
    """Submission folders named by a SOURCE argument.

    A folder that a shape (`shapes.SHAPES`) calls one submission is one; a folder that is
    none stands for its immediate subfolders that have a shape (e.g. `examples/submissions`);
    `hf://...` is downloaded first.
    `warn_skipped=False` for a check ahead of the load, which warns once itself.
    """
    if source.startswith(HUB_PREFIX):
        folder = fetch_hub_source(parse_hub_source(source), download_root=download_root,
                                  token=token, limits=limits)
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

