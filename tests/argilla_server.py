"""Pytest plugin: one real local Argilla server per test session (`argilla` fixture).

The server is `judging.review.server.start_background` on a free port with a temporary home: the
real argilla-server on SQLite with the in-memory search engine, run by the interpreter of the
server's own environment (JUDGING_ARGILLA_PYTHON, else the checkout's .venv-argilla, which
`make test` builds with `make argilla-env`); the environment the tests run in holds no
argilla-server. It is never skipped: when it cannot start, the tests that use it fail with the
tail of its log, or with how to build the server's environment.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from judging.errors import JudgingError
from judging.review import server as review_server
from judging.review.users import api_key_for

ROOT = Path(__file__).resolve().parent.parent


def server_python() -> str | None:
    """The server environment's interpreter: JUDGING_ARGILLA_PYTHON, else the checkout's
    .venv-argilla/bin/python if it exists (None: start_background then says how to build it)."""
    explicit = os.environ.get("JUDGING_ARGILLA_PYTHON")
    if explicit:
        return explicit
    default = ROOT / review_server.DEFAULT_SERVER_PYTHON
    return str(default) if default.is_file() else None


def pytest_configure(config: pytest.Config) -> None:
    # The `judging review serve` commands the tests run as subprocesses find it the same way.
    found = server_python()
    if found is not None:
        os.environ["JUDGING_ARGILLA_PYTHON"] = found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclasses.dataclass
class ArgillaServer:
    """A running local server: its URL, the owner's API key, its home; SDK and HTTP clients."""

    url: str
    api_key: str
    home: Path
    info: review_server.ServerInfo

    def client(self, api_key: str | None = None) -> Any:
        import argilla as rg

        return rg.Argilla(api_url=self.url, api_key=api_key or self.api_key, timeout=30)

    def http(self, api_key: str | None = None) -> httpx.Client:
        """An HTTP client on the API, authenticated as the owner or as `api_key`'s user."""
        return httpx.Client(base_url=self.url, headers={"X-Argilla-Api-Key": api_key or self.api_key},
                            timeout=30)

    def create_user(self, username: str | None = None, password: str = "annotator-pass",
                    role: str = "annotator", workspaces: list[str] = ()) -> UserLogin:
        return create_user(self, username or f"user-{uuid.uuid4().hex[:8]}", password, role, workspaces)

    def log_tail(self, lines: int = 40) -> str:
        return review_server.log_tail(self.home, lines)


@dataclasses.dataclass(frozen=True)
class UserLogin:
    id: str
    username: str
    password: str
    api_key: str
    role: str


def create_user(server: ArgillaServer, username: str, password: str, role: str = "annotator",
                workspaces: list[str] = ()) -> UserLogin:
    """Create a user (as the owner), add it to `workspaces` (names), and return its API key."""
    with server.http() as http:
        created = http.post("/api/v1/users", json={"username": username, "password": password,
                                                   "first_name": username, "role": role})
        created.raise_for_status()
        user_id = created.json()["id"]
        if workspaces:
            listed = http.get("/api/v1/me/workspaces")  # an owner sees every workspace
            listed.raise_for_status()
            ids = {item["name"]: item["id"] for item in listed.json()["items"]}
            for name in workspaces:
                http.post(f"/api/v1/workspaces/{ids[name]}/users",
                          json={"user_id": user_id}).raise_for_status()
    return UserLogin(id=user_id, username=username, password=password,
                     api_key=api_key_for(server.url, username, password), role=role)


def start_server(home: Path, port: int | None = None) -> ArgillaServer:
    try:
        info = review_server.start_background(home, port=port or free_port(), timeout=90,
                                              python=server_python())
    except JudgingError as exc:
        tail = getattr(exc, "log_tail", None) or review_server.log_tail(home, 40)
        pytest.fail(f"the local Argilla server did not start: {exc}\n--- server log:\n{tail}", pytrace=False)
    return ArgillaServer(url=info.url, api_key=info.api_key, home=info.home, info=info)


@pytest.fixture(scope="session")
def argilla(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArgillaServer]:
    """The session's local Argilla server (stopped at the end of the session)."""
    home = tmp_path_factory.mktemp("argilla-home")
    running = start_server(home)
    try:
        yield running
    finally:
        review_server.stop(home)
