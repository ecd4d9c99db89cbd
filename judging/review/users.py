"""Reviewers: Argilla users in a workspace, with the API key they need for the REST API."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import argilla as rg
import httpx

from judging.errors import ReviewError
from judging.review.push import quiet_lookups


@dataclass(frozen=True)
class Reviewer:
    username: str
    password: str
    role: str
    workspace: str
    api_key: str


def api_key_for(api_url: str, username: str, password: str) -> str:
    """`rg.User.create()` does not expose the new user's key: log in, then ask /me."""
    base = api_url.rstrip("/")
    with httpx.Client(base_url=base, timeout=30) as http:
        token = http.post("/api/v1/token", data={"username": username, "password": password})
        if token.status_code >= 400:
            raise ReviewError(f"cannot log in as {username!r} ({token.status_code})")
        me = http.get("/api/v1/me",
                      headers={"Authorization": f"Bearer {token.json()['access_token']}"})
        if me.status_code >= 400:
            raise ReviewError(f"cannot read {username!r}'s profile ({me.status_code})")
        return me.json()["api_key"]


def add_reviewer(client: rg.Argilla, username: str, *, role: str = "annotator",
                 workspace: str, password: str | None = None) -> Reviewer:
    """Create the user if needed and add it to the workspace (created if missing)."""
    if role not in ("annotator", "admin", "owner"):
        raise ReviewError(f"unknown role {role!r}: annotator, admin or owner")
    with quiet_lookups():
        target = client.workspaces(workspace)
        user = client.users(username=username)
    if target is None:
        target = rg.Workspace(name=workspace, client=client).create()
    if user is None:
        password = password or secrets.token_urlsafe(12)
        user = rg.User(username=username, password=password, role=role, client=client).create()
    elif password is None:
        raise ReviewError(f"user {username!r} exists: give its --password to print its API key")
    elif user.role != role:
        raise ReviewError(f"user {username!r} exists with role {user.role}, not {role}")
    if username not in {u.username for u in target.users}:
        target.add_user(user)
    return Reviewer(username=username, password=password, role=role, workspace=workspace,
                    api_key=api_key_for(client.api_url, username, password))
