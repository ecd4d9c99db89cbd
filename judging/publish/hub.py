"""Talking to the Hugging Face Hub: the repo id check, the token, and the upload of a staged folder."""

from __future__ import annotations

import os
import re

from judging.errors import PublishError
from judging.publish.scrub import scrub
from judging.publish.stage import Staged

TOKEN_HELP = "publishing needs a Hugging Face token: set HF_TOKEN or run `hf auth login`"


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
    from huggingface_hub.errors import (
        HfHubHTTPError,
        HFValidationError,
        OfflineModeIsEnabled,
    )

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
