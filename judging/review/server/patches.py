"""Every patch of argilla-server 2.8 that the local server needs, each with its reason."""

from __future__ import annotations

import functools
from typing import Any


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
