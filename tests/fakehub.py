"""A tiny, real HTTP server that impersonates the Hugging Face Hub for `snapshot_download`.

It serves Spaces, datasets (and models) from folders or in-memory dicts on 127.0.0.1, so the Hub
code paths of `judging` run against real HTTP without the internet:

    with FakeHub({("space", "alice/repro"): folder}) as hub:
        env = hub.environ(tmp_path)          # HF_ENDPOINT=hub.url, HF_HOME=tmp, no token, no xet
        subprocess.run([..., "judging", "run", "hf://spaces/alice/repro", ...], env=env)
        assert ("HEAD", "/spaces/alice/repro/resolve/<sha>/submission.yaml") in hub.requests

or in-process with `hub.patch(monkeypatch, tmp_path)` (huggingface_hub reads HF_ENDPOINT once, at
import, into `constants.ENDPOINT` and `constants.HUGGINGFACE_CO_URL_TEMPLATE`; `patch` rewrites both,
plus the cache and token locations, so nothing touches the user's ~/.cache/huggingface).

The requests `snapshot_download(repo_id, repo_type=..., local_dir=...)` makes (huggingface_hub 2.4,
seen in this server's log), and what this server answers:

  GET  /api/{type}s/{owner}/{name}[/revision/{rev}]   repo info: JSON with `id`, `sha`, `siblings`
       (skipped by the client when the revision is already a 40-hex commit hash)
  GET  /api/{type}s/{owner}/{name}/tree/{sha}[/{path}]?recursive=true&expand=false
       the file listing: [{"type": "file", "path", "size", "oid"}, {"type": "directory", ...}];
       no `xetHash`/`lfs` keys, so every file is a plain HTTP download (never xet)
  HEAD /{type}s/{owner}/{name}/resolve/{sha}/{path}    per-file metadata: X-Repo-Commit, ETag,
       Content-Length (no X-Xet-Hash header, again so nothing goes through xet)
  GET  /{type}s/{owner}/{name}/resolve/{sha}/{path}    the bytes (with `Range: bytes=N-` support)

Models use the same paths without the `{type}s/` prefix (`/api/models/...` for the API).

Listing and history (what `HfApi.list_spaces` and `HfApi.list_repo_commits` call):

  GET  /api/spaces?filter=T[&filter=U...][&limit=N][&expand=sha&expand=tags...][&cursor=C]
       the Spaces carrying every tag T, U... (AND, like the Hub), sorted by id, `page_size` (1,000
       by default, as the Hub) or `limit` per page, whichever is smaller; a further page is named
       by a `Link: <absolute url>; rel="next"` header (huggingface_hub's `paginate` follows it).
       Items: `_id`, `id` and, with `expand`, only the expanded properties; without `expand`
       the Hub's defaults (`likes`, `private`, `sdk`, `tags`, `createdAt`...). Private Spaces are
       listed only for a good token.
  GET  /api/{type}s/{owner}/{name}/commits/{revision}[?p=N]
       the history of that branch (or from that commit), newest first, `commits_page_size` per
       page with the same Link paging: [{"id", "title", "message", "authors": [{"user"}],
       "date": "...Z"}].

Tags: `FakeHub(..., tags={("space", "a/b"): ["t1", "t2"]})` or `hub.tag(key, *tags)`; a Space with
tags but no files (`hub.add(key, {})`) is listed and costs nothing, for listings of thousands.
History: `hub.commit(key, files, date=datetime, title=...)` adds a commit on top of a branch (the
branch head moves; earlier commits stay reachable by sha, each with its own files).
`allow_patterns` filters the tree listing client-side: only matching files get HEAD + GET. A second
download into the same `local_dir` makes only the repo-info call (the tree is cached under
`local_dir/.cache/huggingface/trees/`, each file's commit under `.../download/*.metadata`). Even
with `local_dir`, the client writes `refs/<revision>` into `HF_HUB_CACHE`: point HF_HOME at a temp dir.

`hub.faults.append((method, path_regex, status))` injects failures: that status without an
X-Error-Code, or for status 0 a connection closed without an answer.

Errors are shaped the way `huggingface_hub.utils.hf_raise_for_status` classifies them, i.e. by the
`X-Error-Code` header (the real Hub also sends `X-Error-Message` and a JSON `{"error": ...}`):

  missing repo, or private without a valid token  401 (404 with a token) + X-Error-Code: RepoNotFound
  gated repo without access (files only)          401 (403 with a token) + X-Error-Code: GatedRepo
  unknown branch/tag                              404 + X-Error-Code: RevisionNotFound
  unknown file                                    404 + X-Error-Code: EntryNotFound
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

RepoKey = tuple[str, str]
"""(repo_type, repo_id): repo_type is "space", "dataset" or "model"."""

Files = Mapping[str, bytes | str] | Path | str
"""A repo's content: a folder, or a mapping of relative path -> content."""

REPO_TYPES = ("space", "dataset", "model")
DEFAULT_BRANCH = "main"
GOOD_TOKEN = "hf_fakehub_good_token"
DEFAULT_DATE = datetime(2026, 1, 1, tzinfo=UTC)
"""The date of a commit made by `add` (a `commit` names its own)."""


def _read_files(files: Files) -> dict[str, bytes]:
    if isinstance(files, (str, Path)):
        root = Path(files)
        if not root.is_dir():
            raise ValueError(f"{root} is not a folder")
        out = {}
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if path.is_file() and ".git" not in rel.split("/"):
                out[rel] = path.read_bytes()
        return out
    return {k.strip("/"): (v.encode() if isinstance(v, str) else bytes(v)) for k, v in files.items()}


def _git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Snapshot:
    """One commit of one repo."""

    sha: str
    files: dict[str, bytes]
    date: datetime = DEFAULT_DATE
    title: str = "Upload folder"
    author: str = "fakehub"

    def folders(self) -> set[str]:
        out = set()
        for name in self.files:
            parts = name.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                out.add("/".join(parts[:i]))
        return out


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    branches: dict[str, Snapshot] = field(default_factory=dict)
    history: dict[str, list[Snapshot]] = field(default_factory=dict)
    """Per branch, its commits oldest first (the last is the branch head)."""
    tags: list[str] = field(default_factory=list)

    def resolve(self, revision: str) -> Snapshot | None:
        if revision in self.branches:
            return self.branches[revision]
        for commits in self.history.values():
            for snap in commits:
                if snap.sha == revision:
                    return snap
        return None

    def log(self, revision: str) -> list[Snapshot] | None:
        """The commits reachable from a branch or a commit, newest first."""
        if revision in self.history:
            return list(reversed(self.history[revision]))
        for commits in self.history.values():
            shas = [snap.sha for snap in commits]
            if revision in shas:
                return list(reversed(commits[:shas.index(revision) + 1]))
        return None


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    """The decoded path, without the query string."""
    query: str
    authorization: str | None

    def __str__(self) -> str:
        return f"{self.method} {self.path}" + (f"?{self.query}" if self.query else "")


class FakeHub:
    """A fake Hugging Face Hub on 127.0.0.1:<free port>, run in a background thread.

    repos:   {(repo_type, repo_id): files} for the `main` branch, or
             {(repo_type, repo_id, branch): files} for other branches/tags.
    private: repo keys that answer like a missing repo unless `Authorization: Bearer <token>` names
             one of `tokens`.
    gated:   repo keys whose info and listing are public but whose files need a token.
    """

    page_size = 1000
    """Spaces per listing page (the Hub's own page size)."""
    commits_page_size = 50
    """Commits per history page."""
    filter_mode = "all"
    """How several `filter` tags combine in a listing: "all" (the Hub) or "any" (a server that
    matches fewer tags than asked, for clients that must check the tags themselves)."""

    def __init__(self, repos: Mapping[tuple, Files] | None = None, *,
                 private: Iterable[RepoKey] = (), gated: Iterable[RepoKey] = (),
                 tokens: Iterable[str] = (GOOD_TOKEN,),
                 tags: Mapping[RepoKey, Iterable[str]] | None = None):
        self.repos: dict[RepoKey, Repo] = {}
        for key, files in (repos or {}).items():
            self.add(key, files)
        for key, repo_tags in (tags or {}).items():
            self.tag(key, *repo_tags)
        self.private = {self._check_key(k) for k in private}
        self.gated = {self._check_key(k) for k in gated}
        self.tokens = set(tokens)
        self.listed_sizes: dict[tuple[str, str, str], int] = {}
        """(repo type, repo id, path) -> the size the tree listing says, instead of the file's
        own: a listing that disagrees with the bytes served."""
        self.requests: list[tuple[str, str]] = []
        """(method, decoded path without the query), in arrival order."""
        self.details: list[LoggedRequest] = []
        """The same requests with their query string and Authorization header."""
        self.unexpected: list[LoggedRequest] = []
        """Requests to endpoints this fake does not implement (a test should expect none)."""
        self.faults: list[tuple[str, str, int]] = []
        """(method, regex on the decoded path, status): matching requests get that status
        (with no X-Error-Code), or, for status 0, a connection closed without an answer."""
        self._lock = threading.Lock()
        self.jobs = FakeJobs(self)
        """The Jobs API (`run_job`, `inspect_job`, `fetch_job_logs`, `list_jobs_hardware`)."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- content ---------------------------------------------------------------------------

    @staticmethod
    def _check_key(key: tuple) -> RepoKey:
        repo_type, repo_id = key[0], key[1]
        if repo_type not in REPO_TYPES or repo_id.count("/") != 1:
            raise ValueError(f"bad repo key {key!r}: use (type, 'owner/name') with type in "
                             f"{REPO_TYPES}")
        return repo_type, repo_id

    def add(self, key: tuple, files: Files) -> Snapshot:
        """Add (or replace) a branch of a repo; returns the snapshot (its `.sha` is the commit)."""
        repo_type, repo_id = self._check_key(key)
        branch = key[2] if len(key) > 2 else DEFAULT_BRANCH
        content = _read_files(files)
        digest = hashlib.sha1(json.dumps([repo_type, repo_id, branch]).encode())
        for name in sorted(content):
            digest.update(name.encode() + b"\0" + content[name])
        repo = self.repos.setdefault((repo_type, repo_id), Repo(repo_type, repo_id))
        repo.branches[branch] = Snapshot(sha=digest.hexdigest(), files=content)
        repo.history[branch] = [repo.branches[branch]]
        return repo.branches[branch]

    def commit(self, key: tuple, files: Files, *, date: datetime, title: str = "Update",
               author: str = "fakehub") -> Snapshot:
        """A new commit on top of a branch (created when missing): the branch head moves to it,
        earlier commits keep their own files. Returns it (`.sha`)."""
        repo_type, repo_id = self._check_key(key)
        branch = key[2] if len(key) > 2 else DEFAULT_BRANCH
        content = _read_files(files)
        if date.tzinfo is None:
            raise ValueError("give commit dates with a time zone")
        repo = self.repos.setdefault((repo_type, repo_id), Repo(repo_type, repo_id))
        commits = repo.history.setdefault(branch, [])
        parent = commits[-1].sha if commits else ""
        digest = hashlib.sha1(json.dumps([repo_type, repo_id, branch, parent,
                                          date.isoformat(), title]).encode())
        for name in sorted(content):
            digest.update(name.encode() + b"\0" + content[name])
        snap = Snapshot(sha=digest.hexdigest(), files=content, date=date.astimezone(UTC),
                        title=title, author=author)
        commits.append(snap)
        repo.branches[branch] = snap
        return snap

    def tag(self, key: tuple, *tags: str) -> None:
        """Give a repo (README front-matter) tags: listings filter on them."""
        repo_type, repo_id = self._check_key(key)
        repo = self.repos.setdefault((repo_type, repo_id), Repo(repo_type, repo_id))
        repo.tags = list(dict.fromkeys([*repo.tags, *tags]))

    def sha(self, repo_type: str, repo_id: str, branch: str = DEFAULT_BRANCH) -> str:
        return self.repos[(repo_type, repo_id)].branches[branch].sha

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeHub:
        handler = type("Handler", (_Handler,), {"hub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name="fakehub")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake hub is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # --- pointing huggingface_hub at it ----------------------------------------------------

    def environ(self, home: Path | str, base: Mapping[str, str] | None = None,
                token: str | None = None) -> dict[str, str]:
        """Environment for a subprocess that talks to this hub and keeps its caches in `home`."""
        return hub_environ(self.url, home, base=base, token=token)

    def patch(self, monkeypatch: Any, home: Path | str, token: str | None = None) -> list[float]:
        """Point the already-imported huggingface_hub of this process at this hub (pytest
        monkeypatch; undone at the end of the test); the retries' waits (see patch_hub)."""
        return patch_hub(monkeypatch, self.url, home, token=token)

    # --- log helpers -----------------------------------------------------------------------

    def log(self, request: LoggedRequest) -> None:
        with self._lock:
            self.requests.append((request.method, request.path))
            self.details.append(request)

    def log_unexpected(self, request: LoggedRequest) -> None:
        with self._lock:
            self.unexpected.append(request)

    def downloaded(self, repo_type: str, repo_id: str) -> set[str]:
        """Files of a repo fetched with GET .../resolve/<rev>/<file>."""
        prefix = f"{_url_prefix(repo_type)}{repo_id}/resolve/"
        out = set()
        for method, path in list(self.requests):
            if method == "GET" and path.startswith("/" + prefix):
                out.add(path[len(prefix) + 1:].split("/", 1)[1])
        return out

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.details.clear()
            self.unexpected.clear()


def _hub_date(date: datetime) -> str:
    """The Hub's date format: UTC, milliseconds, "Z"."""
    return date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{date.microsecond // 1000:03d}Z"


def _url_prefix(repo_type: str) -> str:
    return "" if repo_type == "model" else f"{repo_type}s/"


def hub_environ(url: str, home: Path | str, base: Mapping[str, str] | None = None,
                token: str | None = None) -> dict[str, str]:
    """A hermetic environment for a subprocess: Hub at `url`, every HF cache under `home`."""
    import os

    env = dict(os.environ if base is None else base)
    for name in [k for k in env if k.startswith(("HF_", "HUGGING_FACE_"))]:
        del env[name]
    home = Path(home)
    env.update({
        "HF_ENDPOINT": url,
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
        "HF_XET_CACHE": str(home / "xet"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
        "HF_HUB_ETAG_TIMEOUT": "5",
        "HF_HUB_DOWNLOAD_TIMEOUT": "5",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    })
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                  "all_proxy"):
        env.pop(proxy, None)
    if token is not None:
        env["HF_TOKEN"] = token
    return env


class BackoffWaits:
    """Stands for the `time` module in huggingface_hub's HTTP helpers: the waits of its retries
    (`http_backoff`: 1, 2, 4, 8, 8 s on a refused connection or a 5xx) are recorded, not slept.
    An unreachable Hub then fails in milliseconds rather than 23 s, after the same retries."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def patch_hub(monkeypatch: Any, url: str, home: Path | str,
              token: str | None = None) -> list[float]:
    """In-process equivalent of `hub_environ` for an already-imported huggingface_hub. Returns
    the waits of huggingface_hub's retries, recorded rather than slept (BackoffWaits)."""
    from huggingface_hub import constants
    from huggingface_hub.utils import _http

    home = Path(home)
    url = url.rstrip("/")
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE", "HF_HUB_OFFLINE",
                 "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    if token is not None:
        monkeypatch.setenv("HF_TOKEN", token)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_XET_CACHE", str(home / "xet"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_IMPLICIT_TOKEN", True)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_PROGRESS_BARS", True)
    monkeypatch.setattr(constants, "HF_HUB_ETAG_TIMEOUT", 5)
    monkeypatch.setattr(constants, "HF_HUB_DOWNLOAD_TIMEOUT", 5)
    waits = BackoffWaits()
    monkeypatch.setattr(_http, "time", waits)
    return waits.waits


# --- the request handler ---------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    protocol_version = "HTTP/1.1"
    server_version = "FakeHub/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        self._dispatch(body=True)

    def do_HEAD(self) -> None:
        self._dispatch(body=False)

    def do_POST(self) -> None:
        self._dispatch(body=True, unsupported=True)

    do_PUT = do_DELETE = do_PATCH = do_POST

    # --- plumbing --------------------------------------------------------------------------

    def _dispatch(self, *, body: bool, unsupported: bool = False) -> None:
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        request = LoggedRequest(self.command, path, parts.query,
                                self.headers.get("Authorization"))
        length = int(self.headers.get("Content-Length") or 0)
        payload = self.rfile.read(length) if length else b""
        self._send_body = body
        # logged before answering, so the log is complete as soon as the client has its answer
        self.hub.log(request)
        for method, pattern, status in list(self.hub.faults):
            if method == self.command and re.search(pattern, path):
                if status == 0:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                else:
                    self._error(status, None, "fakehub: injected fault")
                return
        handled = False
        if path.startswith("/api/jobs") or path == "/api/whoami-v2":  # the Jobs API (FakeJobs)
            handled = self.hub.jobs.route(self, path, payload)
        elif not unsupported:
            try:
                handled = self._route(parts.path, parse_qs(parts.query))
            except Exception as exc:  # a bug in the fake: make it visible as a 500
                self._error(500, "InternalError", f"fakehub: {type(exc).__name__}: {exc}")
                handled = True
        if not handled:
            self.hub.log_unexpected(request)
            self._error(404, None, f"fakehub does not implement {self.command} {path}")

    def _send(self, status: int, payload: bytes, headers: Mapping[str, str] | None = None,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("X-Request-Id", "fakehub")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self._send_body:
            self.wfile.write(payload)

    def _json(self, data: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(200, json.dumps(data).encode(), headers)

    def _error(self, status: int, code: str | None, message: str,
               headers: Mapping[str, str] | None = None) -> None:
        extra = {"X-Error-Message": message, **(headers or {})}
        if code:
            extra["X-Error-Code"] = code
        self._send(status, json.dumps({"error": message}).encode(), extra)

    def _token(self) -> str | None:
        auth = self.headers.get("Authorization") or ""
        return auth[len("Bearer "):] if auth.startswith("Bearer ") else None

    def _authorized(self) -> bool:
        return self._token() in self.hub.tokens

    def _repo(self, repo_type: str, repo_id: str) -> Repo | None:
        """The repo if the caller may see it; otherwise answers like the Hub and returns None."""
        key = (repo_type, repo_id)
        repo = self.hub.repos.get(key)
        if repo is None or (key in self.hub.private and not self._authorized()):
            # the Hub hides private repos: same answer as for a missing one
            status = 404 if self._token() else 401
            self._error(status, "RepoNotFound", "Repository not found")
            return None
        return repo

    def _snapshot(self, repo: Repo, revision: str) -> Snapshot | None:
        snap = repo.resolve(revision)
        if snap is None:
            self._error(404, "RevisionNotFound", "Invalid rev id: " + revision)
        return snap

    # --- routes ----------------------------------------------------------------------------

    def _route(self, raw_path: str, query: dict[str, list[str]]) -> bool:
        # keep percent-encoding until the segments are split: revisions like refs%2Fpr%2F1
        segments = [unquote(s) for s in raw_path.strip("/").split("/")]
        if segments and segments[0] == "api":
            if self.command == "GET" and len(segments) == 2 and segments[1] == "spaces":
                return self._list_spaces(query)
            if self.command != "GET" or len(segments) < 4:
                return False
            kind = segments[1]
            if kind not in ("spaces", "datasets", "models"):
                return False
            repo_type, repo_id, rest = kind[:-1], "/".join(segments[2:4]), segments[4:]
            if not rest:
                return self._info(repo_type, repo_id, DEFAULT_BRANCH)
            if rest[0] == "revision" and len(rest) == 2:
                return self._info(repo_type, repo_id, rest[1])
            if rest[0] == "commits" and len(rest) >= 2:
                return self._commits(repo_type, repo_id, "/".join(rest[1:]), query)
            if rest[0] == "tree" and len(rest) >= 2:
                recursive = (query.get("recursive") or ["False"])[0].lower() == "true"
                return self._tree(repo_type, repo_id, rest[1], "/".join(rest[2:]), recursive)
            return False
        if segments and segments[0] in ("spaces", "datasets"):
            repo_type, segments = segments[0][:-1], segments[1:]
        else:
            repo_type = "model"
        if len(segments) >= 5 and segments[2] == "resolve":
            return self._resolve(repo_type, "/".join(segments[:2]), segments[3],
                                 "/".join(segments[4:]))
        return False

    def _info(self, repo_type: str, repo_id: str, revision: str) -> bool:
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return True
        snap = self._snapshot(repo, revision)
        if snap is None:
            return True
        key = (repo_type, repo_id)
        data: dict[str, Any] = {
            "_id": hashlib.md5(repo_id.encode()).hexdigest()[:24],
            "id": repo_id,
            "author": repo_id.split("/")[0],
            "sha": snap.sha,
            "lastModified": _hub_date(snap.date),
            "private": key in self.hub.private,
            "gated": "auto" if key in self.hub.gated else False,
            "disabled": False,
            "likes": 0,
            "tags": list(repo.tags),
            "siblings": [{"rfilename": name} for name in sorted(snap.files)],
        }
        if repo_type == "space":
            data.update({"sdk": "static", "subdomain": repo_id.replace("/", "-"),
                         "runtime": {"stage": "RUNNING", "hardware": {"current": "cpu-basic",
                                                                      "requested": "cpu-basic"}}})
        if repo_type == "dataset":
            data["downloads"] = 0
        self._json(data)
        return True

    def _next_link(self, query: dict[str, list[str]], **update: str) -> str:
        params = [(k, v) for k, values in query.items() if k not in update for v in values]
        params += list(update.items())
        return f'<{self.hub.url}{urlsplit(self.path).path}?{urlencode(params)}>; rel="next"'

    def _list_spaces(self, query: dict[str, list[str]]) -> bool:
        wanted = query.get("filter", [])
        spaces = sorted((repo for (repo_type, _), repo in self.hub.repos.items()
                         if repo_type == "space"), key=lambda repo: repo.repo_id)
        combine = all if self.hub.filter_mode == "all" else any
        spaces = [repo for repo in spaces
                  if (not wanted or combine(tag in repo.tags for tag in wanted))
                  and (("space", repo.repo_id) not in self.hub.private or self._authorized())]
        if "author" in query:
            spaces = [r for r in spaces if r.repo_id.split("/")[0] == query["author"][0]]
        start = int((query.get("cursor") or ["0"])[0])
        size = self.hub.page_size
        if "limit" in query:
            size = max(1, min(size, int(query["limit"][0])))
        page = spaces[start:start + size]
        expand = query.get("expand") or query.get("expand[]") or []
        items = []
        for repo in page:
            head = repo.branches.get(DEFAULT_BRANCH)
            full = {"author": repo.repo_id.split("/")[0], "sha": head.sha if head else None,
                    "lastModified": _hub_date(head.date if head else DEFAULT_DATE),
                    "createdAt": _hub_date(repo.history.get(DEFAULT_BRANCH, [head])[0].date
                                           if head else DEFAULT_DATE),
                    "likes": 0, "trendingScore": 0,
                    "private": ("space", repo.repo_id) in self.hub.private, "sdk": "static",
                    "tags": list(repo.tags)}
            keys = expand or ["likes", "trendingScore", "private", "sdk", "tags", "createdAt"]
            item = {"_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24],
                    "id": repo.repo_id}
            item.update({k: full[k] for k in keys if k in full})
            items.append(item)
        headers = {}
        if start + size < len(spaces):
            headers["Link"] = self._next_link(query, cursor=str(start + size))
        self._json(items, headers)
        return True

    def _commits(self, repo_type: str, repo_id: str, revision: str,
                 query: dict[str, list[str]]) -> bool:
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return True
        commits = repo.log(revision)
        if commits is None:
            self._error(404, "RevisionNotFound", "Invalid rev id: " + revision)
            return True
        page_no = int((query.get("p") or ["0"])[0])
        size = self.hub.commits_page_size
        page = commits[page_no * size:(page_no + 1) * size]
        items = [{"id": snap.sha, "title": snap.title, "message": "",
                  "authors": [{"user": snap.author, "avatar": None}],
                  "date": _hub_date(snap.date)} for snap in page]
        headers = {}
        if (page_no + 1) * size < len(commits):
            headers["Link"] = self._next_link(query, p=str(page_no + 1))
        self._json(items, headers)
        return True

    def _tree(self, repo_type: str, repo_id: str, revision: str, folder: str,
              recursive: bool) -> bool:
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return True
        snap = self._snapshot(repo, revision)
        if snap is None:
            return True
        folder = folder.strip("/")
        prefix = folder + "/" if folder else ""
        folders = snap.folders()
        if folder and folder not in folders:
            self._error(404, "EntryNotFound", f"{folder} does not exist on {revision}")
            return True
        entries = []
        for name in sorted(folders):
            if name.startswith(prefix) and (recursive or "/" not in name[len(prefix):]):
                entries.append({"type": "directory", "oid": hashlib.sha1(name.encode()).hexdigest(),
                                "size": 0, "path": name})
        for name, data in sorted(snap.files.items()):
            if name.startswith(prefix) and (recursive or "/" not in name[len(prefix):]):
                size = self.hub.listed_sizes.get((repo_type, repo_id, name), len(data))
                entries.append({"type": "file", "oid": _git_blob_oid(data), "size": size,
                                "path": name})
        self._json(entries)
        return True

    def _resolve(self, repo_type: str, repo_id: str, revision: str, filename: str) -> bool:
        if self.command not in ("GET", "HEAD"):
            return False
        repo = self._repo(repo_type, repo_id)
        if repo is None:
            return True
        snap = self._snapshot(repo, revision)
        if snap is None:
            return True
        commit = {"X-Repo-Commit": snap.sha}
        if (repo_type, repo_id) in self.hub.gated and not self._authorized():
            status = 403 if self._token() else 401
            self._error(status, "GatedRepo",
                        f"Access to {repo_type} {repo_id} is restricted. You must have access "
                        f"to it and be authenticated to access it. Please log in.", commit)
            return True
        data = snap.files.get(filename)
        if data is None:
            self._error(404, "EntryNotFound", "Entry not found", commit)
            return True
        etag = _git_blob_oid(data)
        headers = {**commit, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
        rng = self.headers.get("Range")
        status = 200
        if rng and rng.startswith("bytes=") and self.command == "GET":
            start_s, _, end_s = rng[len("bytes="):].partition("-")
            start = int(start_s or 0)
            end = int(end_s) if end_s else len(data) - 1
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start:end + 1], 206
        self._send(status, data, headers, content_type="application/octet-stream")
        return True


# --- the Jobs API ------------------------------------------------------------------------------


class FakeJobs:
    """Hugging Face Jobs as huggingface_hub 2.4 calls them (hf_api.py `run_job`, `inspect_job`,
    `wait_for_job`, `fetch_job_logs`, `list_jobs_hardware`):

      POST /api/jobs/{namespace}                 the job spec (JSON) -> JobInfo, stage SCHEDULING
      GET  /api/jobs/{namespace}/{id}            JobInfo (status.stage, durations.runningSecs)
      GET  /api/jobs/{namespace}/{id}/logs       server-sent events, `data: {"timestamp", "data"}`
      POST /api/jobs/{namespace}/{id}/cancel     stage CANCELED
      GET  /api/jobs/hardware                    the flavors and their prices (HARDWARE)
      GET  /api/whoami-v2                        {"name": WHOAMI}

    A job runs for real, as a stand-in for its container: its command in bubblewrap on this
    machine (the host's files read-only, an empty /tmp, the network of this machine for its
    installs, its repo volumes mounted read-only at their revision), with `PATH` holding uv and
    this machine's interpreters; its docker image is recorded, not pulled. Its timeout (the
    spec's timeoutSeconds) ends it in stage ERROR, "Job timeout". `specs` keeps every spec
    received, for tests to check what was sent (no secrets, no environment).
    """

    WHOAMI = "organizer"
    HARDWARE = [
        {"name": "cpu-basic", "prettyName": "CPU Basic", "cpu": "2 vCPU", "ram": "16 GB",
         "unitCostMicroUSD": 167, "unitCostUSD": 0.000167, "unitLabel": "minute"},
        {"name": "cpu-upgrade", "prettyName": "CPU Upgrade", "cpu": "8 vCPU", "ram": "32 GB",
         "unitCostMicroUSD": 500, "unitCostUSD": 0.0005, "unitLabel": "minute"},
    ]

    def __init__(self, hub: FakeHub):
        self.hub = hub
        self.specs: list[dict] = []
        self.jobs: dict[str, dict] = {}
        self.path_dirs: list[str] = []
        """Folders put first on a job's PATH (uv's, the interpreters')."""
        self._lock = threading.Lock()

    def route(self, handler: _Handler, path: str, payload: bytes) -> bool:
        parts = path.strip("/").split("/")
        if path == "/api/whoami-v2" and handler.command == "GET":
            handler._json({"name": self.WHOAMI, "type": "user"})
        elif parts == ["api", "jobs", "hardware"] and handler.command == "GET":
            handler._json(self.HARDWARE)
        elif len(parts) == 3 and handler.command == "POST":
            handler._json(self._create(parts[2], json.loads(payload or b"{}")))
        elif len(parts) == 4 and handler.command == "GET" and parts[3] in self.jobs:
            handler._json(self._info(parts[3]))
        elif len(parts) == 5 and parts[4] == "logs" and parts[3] in self.jobs:
            events = "".join("data: " + json.dumps(event) + "\n\n"
                              for event in list(self.jobs[parts[3]]["logs"]))
            handler._send(200, events.encode(), content_type="text/event-stream")
        elif len(parts) == 5 and parts[4] == "cancel" and parts[3] in self.jobs:
            self._end(parts[3], "CANCELED", "canceled")
            handler._json({})
        else:
            return False
        return True

    @staticmethod
    def _now() -> str:
        return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"

    def _create(self, namespace: str, spec: dict) -> dict:
        job_id = hashlib.sha1(f"{len(self.jobs)}{json.dumps(spec)}".encode()).hexdigest()[:24]
        with self._lock:
            self.specs.append(spec)
            self.jobs[job_id] = {"spec": spec, "namespace": namespace, "stage": "SCHEDULING",
                                 "message": None, "logs": [], "created": self._now(),
                                 "started": None, "running": None}
        threading.Thread(target=self._execute, args=(job_id,), daemon=True).start()
        return self._info(job_id)

    def _info(self, job_id: str) -> dict:
        job = self.jobs[job_id]
        spec = job["spec"]
        image = {"spaceId": spec["spaceId"]} if "spaceId" in spec else \
            {"dockerImage": spec.get("dockerImage")}
        return {"id": job_id, "createdAt": job["created"], **image,
                "command": spec.get("command"), "arguments": spec.get("arguments"),
                "environment": spec.get("environment"), "secrets": spec.get("secrets"),
                "flavor": spec.get("flavor"), "labels": spec.get("labels"),
                "volumes": spec.get("volumes"),
                "status": {"stage": job["stage"], "message": job["message"]},
                "durations": {"runningSecs": job["running"]},
                "owner": {"id": "fakehub", "name": job["namespace"], "type": "user"}}

    def _end(self, job_id: str, stage: str, message: str | None) -> None:
        job = self.jobs[job_id]
        if job["stage"] in ("SCHEDULING", "RUNNING"):
            job["stage"], job["message"] = stage, message

    def _execute(self, job_id: str) -> None:
        import os
        import subprocess
        import tempfile
        import time

        job = self.jobs[job_id]
        spec = job["spec"]
        with tempfile.TemporaryDirectory(prefix="fakehub-job-") as tmp:
            binds: list[str] = []
            for i, volume in enumerate(spec.get("volumes") or []):
                repo = self.hub.repos.get((volume["type"], volume["source"]))
                snap = repo.resolve(volume.get("revision") or DEFAULT_BRANCH) if repo else None
                if snap is None:
                    self._end(job_id, "ERROR", f"volume {volume['source']} not found")
                    return
                folder = Path(tmp) / f"volume-{i}"
                for name, data in snap.files.items():
                    (folder / name).parent.mkdir(parents=True, exist_ok=True)
                    (folder / name).write_bytes(data)
                binds += ["--ro-bind", str(folder), volume["mountPath"]]
            env = {"PATH": os.pathsep.join([*self.path_dirs, "/usr/local/bin", "/usr/bin",
                                            "/bin"]),
                   "HOME": "/tmp/home", "UV_PYTHON_DOWNLOADS": "never",
                   "UV_CACHE_DIR": "/tmp/uv-cache", "UV_LINK_MODE": "copy",
                   **{k: v for k, v in (spec.get("environment") or {}).items()},
                   **{k: os.environ[k] for k in ("SSL_CERT_FILE", "SSL_CERT_DIR")
                      if k in os.environ}}
            host: list[str] = []  # the host's folders read-only, so that volumes can be added
            for entry in sorted(Path("/").iterdir()):
                if entry.name in ("proc", "dev", "sys", "tmp"):
                    continue
                if entry.is_symlink():
                    host += ["--symlink", os.readlink(entry), str(entry)]
                elif entry.is_dir():
                    host += ["--ro-bind", str(entry), str(entry)]
            # the tools put on PATH stay visible when they live under /tmp (a clone there)
            tools = [arg for d in self.path_dirs if Path(d).is_dir() and Path(d) != Path("/tmp")
                     and Path(d).is_relative_to("/tmp") for arg in ("--ro-bind", d, d)]
            command = ["bwrap", *host, "--dev", "/dev", "--proc", "/proc",
                       "--tmpfs", "/tmp", *tools, "--unshare-pid", "--die-with-parent", *binds,
                       "--chdir", "/tmp", "--", *spec["command"]]
            job["stage"], job["started"] = "RUNNING", time.monotonic()
            process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True,
                                       errors="replace", start_new_session=True)
            timer = threading.Timer(float(spec.get("timeoutSeconds") or 3600), process.kill)
            timer.start()
            for line in process.stdout:  # type: ignore[union-attr]
                job["logs"].append({"timestamp": self._now(), "data": line.rstrip("\n")})
            code = process.wait()
            timed_out = not timer.is_alive() and code < 0
            timer.cancel()
            job["running"] = int(round(time.monotonic() - job["started"]))
            if timed_out:
                self._end(job_id, "ERROR", "Job timeout")
            elif code == 0:
                self._end(job_id, "COMPLETED", None)
            else:
                self._end(job_id, "ERROR", f"Job failed with exit code: {code}")
