"""Headless Chromium for the browser tests (the report page, Argilla's annotation page, the
dashboard): the flags, the binary, and `Browser`, one page driven over the Chrome DevTools
Protocol with the `websockets` package (sync client): no WebDriver, nothing downloaded."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

VIEWPORT = (1400, 2400)  # tall enough for a whole annotation page or claim view
WAIT_SECONDS = 30

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


def normalize(text: str) -> str:
    return " ".join(text.split())


class PageError(AssertionError):
    pass


class Browser:
    """Headless Chromium with one page, driven over the DevTools protocol (flattened session)."""

    def __init__(self, workdir: Path, viewport: tuple[int, int] = VIEWPORT):
        self.workdir = workdir
        self.profile = workdir / "profile"
        self.profile.mkdir(parents=True)
        self.log_path = workdir / "chromium.log"
        self.console: list[str] = []
        self._ids = itertools.count(1)
        self._log = self.log_path.open("w")
        width, height = viewport
        self.proc = subprocess.Popen(
            [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}",
             "--remote-debugging-port=0", f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)  # its own process group: close() ends the helpers too
        self.ws = None
        self._stack = contextlib.ExitStack()
        try:
            port, path = self._devtools_endpoint()
            self.ws = self._stack.enter_context(ws_connect(
                f"ws://127.0.0.1:{port}{path}", proxy=None, max_size=None, compression=None,
                ping_interval=None, open_timeout=10))
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget",
                                     {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime"):
                self.send(f"{domain}.enable", page=True)
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1,
                       "mobile": False}, page=True)
        except BaseException:
            self.close()
            raise

    def _devtools_endpoint(self) -> tuple[str, str]:
        port_file = self.profile / "DevToolsActivePort"  # "PORT\n/devtools/browser/ID"
        # A first start on a busy machine (a fresh profile, fonts, the GPU process refused)
        # has taken over 30 s: the port gets twice the page wait.
        deadline = time.monotonic() + 2 * WAIT_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PageError(f"Chromium exited with {self.proc.returncode}:\n{self.log_tail()}")
            lines = port_file.read_text().split() if port_file.is_file() else []
            if len(lines) >= 2:
                return lines[0], lines[1]
            time.sleep(0.05)
        raise PageError(f"Chromium did not open its DevTools port in {2 * WAIT_SECONDS} s:\n"
                        f"{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        self._log.flush()
        kept = [line for line in self.log_path.read_text(errors="replace").splitlines()
                if "dbus" not in line]  # no D-Bus in a container: noise
        return "\n".join(kept[-lines:]) or "(empty)"

    def send(self, method: str, params: dict | None = None, *, page: bool = False,
             timeout: float = WAIT_SECONDS) -> dict:
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if page:
            message["sessionId"] = self.session
        deadline = time.monotonic() + timeout
        try:
            self.ws.send(json.dumps(message))
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PageError(f"no answer from Chromium to {method} in {timeout} s")
                try:
                    reply = json.loads(self.ws.recv(timeout=left))
                except TimeoutError:
                    continue
                if reply.get("id") == message_id:
                    break
                self._event(reply)
        except ConnectionClosed as exc:
            raise PageError(f"Chromium closed the DevTools connection during {method} ({exc}):"
                            f"\n{self.log_tail()}") from None
        if "error" in reply:
            raise PageError(f"{method} failed: {reply['error']}")
        return reply["result"]

    def _event(self, event: dict) -> None:
        params = event.get("params", {})
        if event.get("method") == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.console.append("exception: " + str(details.get("exception", {}).get(
                "description") or details.get("text")))
        elif event.get("method") == "Runtime.consoleAPICalled" and params.get("type") in (
                "error", "warning"):
            self.console.append(f"console.{params['type']}: " + " ".join(
                str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", [])))

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, page=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise PageError(f"script failed: {details.get('exception', {}).get('description')}"
                            f" ({details.get('text')})\n{expression[:300]}")
        return result["result"].get("value")

    def navigate(self, url: str) -> None:
        result = self.send("Page.navigate", {"url": url}, page=True)
        if result.get("errorText"):
            raise PageError(f"cannot open {url}: {result['errorText']}")

    def wait_for(self, expression: str, what: str, timeout: float = WAIT_SECONDS) -> Any:
        """Poll `expression` in the page until it is truthy; fail with what the page shows."""
        deadline = time.monotonic() + timeout
        last_error = None
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except PageError as exc:  # e.g. during a navigation
                last_error, value = exc, None
            if value:
                return value
            time.sleep(0.1)
        raise PageError(f"timed out after {timeout} s waiting for {what}"
                        + (f" (last error: {last_error})" if last_error else ""))

    def type_into(self, selector: str, text: str) -> None:
        # Focus, then type as a keyboard would (Vue's v-model listens to input events).
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.send("Input.insertText", {"text": text}, page=True)

    def click(self, expression: str) -> None:
        """Click the element `expression` evaluates to, as a mouse would: scrolled into view,
        then pressed and released at its centre (frameworks that listen to pointer events
        see a real click)."""
        box = self.evaluate(f"""(() => {{ const el = {expression};
          if (!el) return null; el.scrollIntoView({{block: 'center'}});
          const r = el.getBoundingClientRect();
          return {{x: r.left + r.width / 2, y: r.top + r.height / 2}}; }})()""")
        if not box:
            raise PageError(f"nothing to click: {expression}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box["x"], "y": box["y"],
                                                   "button": "left", "clickCount": 1},
                      page=True)

    def screenshot(self, path: Path) -> Path:
        # Wait for fonts and two frames so what was just inserted is painted.
        self.evaluate("document.fonts.ready.then(() => new Promise(done => "
                      "requestAnimationFrame(() => requestAnimationFrame(done))))")
        data = self.send("Page.captureScreenshot", {"format": "png"}, page=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def describe(self) -> str:
        """What the page shows, for failure messages."""
        parts = []
        try:
            parts.append(f"url: {self.evaluate('location.href')}")
            text = self.evaluate("document.body ? document.body.innerText : ''") or ""
            parts.append(f"page text ({len(text)} chars):\n{text[:4000]}")
        except Exception as exc:  # the page itself may be what is broken
            parts.append(f"(cannot read the page: {exc})")
        if self.console:
            parts.append("console:\n" + "\n".join(self.console[-20:]))
        parts.append(f"chromium log tail:\n{self.log_tail(15)}")
        return "\n".join(parts)

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.send("Browser.close", timeout=5)
            except Exception:
                pass
            try:
                self._stack.close()
            except Exception:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        try:  # helpers left in the browser's own process group
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._log.close()
