"""Headless Chromium for the browser tests (the report page and Argilla's annotation page)."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--no-proxy-server", "--disable-extensions", "--mute-audio"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("Chromium is missing: run `sudo apt-get install -y chromium` "
                "(`make test` installs it when run as root)", pytrace=False)
