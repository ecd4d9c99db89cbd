"""Every change judging makes to argilla-server's code, in one place, applied once.

The local review server runs argilla-server 2.8.0 in one process without Redis or Elasticsearch,
and a few of its hot paths are wasteful for that set-up. Each patch below says why it exists; they
are written against argilla-server 2.8.0's internals, so :func:`apply_patches` first checks that
this is the installed version (:func:`check_version`) and refuses any other with a clear error
rather than patching code it was not written for.

Call :func:`apply_patches` after the ARGILLA_* variables are set (argilla-server reads its settings
when first imported) and before anything imports ``argilla_server``: :func:`patch_redis` must come
first. Calling it again does nothing. This module imports only the standard library at import time.
"""

from __future__ import annotations

import functools
import importlib.metadata
import sys
import threading
from typing import Any

from judging.errors import ReviewServerError

#: The one argilla-server version these patches (and the in-memory search engine) are written for.
SUPPORTED_VERSION = "2.8.0"

#: How to build the server's environment, for error messages.
BUILD_HINT = (f"build the server's environment with `make argilla-env`, or with pip: "
              f"`python -m venv ~/.judging-argilla && ~/.judging-argilla/bin/pip install "
              f"argilla-server=={SUPPORTED_VERSION} fakeredis && ~/.judging-argilla/bin/pip install "
              f"--no-deps judging`")

_lock = threading.Lock()
_applied = False


def check_version(installed: str | None = None) -> str:
    """The installed argilla-server version, if it is the supported one; else ReviewServerError.

    `installed` overrides what importlib.metadata reports (for tests)."""
    if installed is None:
        try:
            installed = importlib.metadata.version("argilla-server")
        except importlib.metadata.PackageNotFoundError:
            raise ReviewServerError(
                f"argilla-server is not installed in this environment ({sys.executable}): the local "
                f"review server needs argilla-server {SUPPORTED_VERSION} in an environment of its "
                f"own; {BUILD_HINT}") from None
    if installed != SUPPORTED_VERSION:
        raise ReviewServerError(
            f"argilla-server {installed} is installed ({sys.executable}), but the local review "
            f"server supports argilla-server {SUPPORTED_VERSION} only (its patches and search "
            f"engine are written against that version): install argilla-server=="
            f"{SUPPORTED_VERSION} in the server's environment; {BUILD_HINT}")
    return installed


def apply_patches() -> None:
    """Check argilla-server's version, then apply every patch below once (idempotent)."""
    global _applied
    with _lock:
        if _applied:
            return
        check_version()
        patch_redis()  # first: argilla_server.jobs.queues connects when first imported
        cache_type_adapters()
        light_compression()
        skip_unheard_record_events()
        keep_logging_through_migrations()
        _applied = True


def patch_redis() -> None:
    """argilla_server.jobs.queues connects to Redis at import: give it an in-process fakeredis."""
    import fakeredis
    import redis

    server = fakeredis.FakeServer()

    def from_url(url: str, **kwargs: Any) -> Any:
        return fakeredis.FakeRedis(server=server)

    redis.from_url = from_url  # type: ignore[assignment]


def cache_type_adapters() -> None:
    """argilla-server builds a new pydantic TypeAdapter for each question and metadata property
    of each record it validates (`Question/MetadataProperty.parsed_settings`): two thirds of the
    CPU of a bulk upsert (measured with py-spy). Build each adapter once instead."""
    import argilla_server.models.database as database
    from pydantic import TypeAdapter

    database.TypeAdapter = functools.lru_cache(maxsize=64)(TypeAdapter)


def skip_unheard_record_events() -> None:
    """argilla-server builds a full webhook event for every upserted record (a dataset query with
    five relationship loads and a dump of the record, images included) before it looks for a
    webhook to send it to. With no enabled webhook that is wasted work, 15% of a bulk upsert:
    look for one first."""
    from argilla_server.bulk import records_bulk
    from argilla_server.models import Webhook
    from sqlalchemy import select

    original = records_bulk.UpsertRecordsBulk._notify_upsert_record_events

    async def notify_if_heard(self: Any, records: list[Any]) -> None:
        found = await self._db.execute(select(Webhook.id).where(Webhook.enabled.is_(True)).limit(1))
        if found.first() is not None:
            await original(self, records)

    records_bulk.UpsertRecordsBulk._notify_upsert_record_events = notify_if_heard


def light_compression() -> None:
    """argilla-server brotli-compresses responses at quality 7; a bulk upsert answers with every
    record's fields (the images too), megabytes at a time, which made compression an eighth of
    the server's CPU. Quality 1 is several times faster for much the same size on JSON."""
    import brotli_asgi

    original = brotli_asgi.BrotliMiddleware.__init__

    def light(self: Any, app: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["quality"] = 1
        original(self, app, *args, **kwargs)

    brotli_asgi.BrotliMiddleware.__init__ = light  # type: ignore[method-assign]


def keep_logging_through_migrations() -> None:
    """argilla-server's alembic env.py calls ``logging.config.fileConfig(alembic.ini)`` on every
    migration, which replaces the server process's logging set-up and disables every logger that
    already exists (ours included). While `migrate_db` runs, that call does nothing."""
    import logging.config

    from argilla_server.cli.database import migrate

    original = migrate.migrate_db

    @functools.wraps(original)
    def migrate_db(*args: Any, **kwargs: Any) -> Any:
        file_config = logging.config.fileConfig
        logging.config.fileConfig = lambda *a, **k: None  # type: ignore[assignment]
        try:
            return original(*args, **kwargs)
        finally:
            logging.config.fileConfig = file_config

    migrate.migrate_db = migrate_db


__all__ = ["SUPPORTED_VERSION", "apply_patches", "check_version"]
