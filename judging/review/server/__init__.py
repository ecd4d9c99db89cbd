"""The local Argilla server (`judging review serve | stop | status`), a service, not a library.

argilla-server 2.8 with SQLite, an in-memory search engine registered with its own search-engine
registry (`search_engine`) and an in-process Redis stand-in, patched once after a version check
(`patches`); started, found and stopped through a pid file in its home folder (`process`). The
server process runs in its own environment (see docs/how-to/review-in-argilla.md), started by `start_background` or
`serve_foreground` with that environment's interpreter (`server_python`).
"""

from __future__ import annotations

from judging.review.server.process import (
                                           DEFAULT_HOST,
                                           DEFAULT_PORT,
                                           DEFAULT_SERVER_PYTHON,
                                           ReviewServerError,
                                           ServerInfo,
                                           credentials,
                                           is_responding,
                                           log_tail,
                                           serve,
                                           serve_foreground,
                                           server_python,
                                           server_url,
                                           start_background,
                                           status,
                                           stop,
)

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_SERVER_PYTHON", "ReviewServerError",
           "ServerInfo", "credentials", "is_responding", "log_tail", "serve", "serve_foreground",
           "server_python", "server_url", "start_background", "status", "stop"]
