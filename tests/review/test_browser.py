"""The Argilla review UI in a real headless Chromium: an annotator logs in and sees a figure claim.

The examples' run is pushed to the session's local Argilla server (tests/argilla_server.py) in a
fresh workspace; an annotator of that workspace signs in through the web UI's login form and opens
the annotation page of `figure-match-1.0.0`. The page must show the displayed record's claim text,
its three figures (the very images that were pushed), and the AI suggestions marked on their
labels. The screenshot is kept under the test's tmp dir and copied to SCREENSHOT_COPY.

Chromium is driven over the Chrome DevTools Protocol with the `websockets` package (sync client):
no WebDriver, nothing downloaded. Never skipped: without Chromium the test fails with the command
that installs it.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from judging.review.push import PushOptions, connect, push_run
from judging.run.runner import RunRequest, run_judging
from tests.browser import CHROMIUM_FLAGS, chromium
from tests.conftest import REGISTRY, SUBMISSIONS

FIG = "figure-match-1.0.0"
# The record opened: Bob's figure claim, a copy of the published figure, so the AI suggests
# `same_trend` yes (score 1.0), `independent_reproduction` no (0.8) and `overall_verdict` fail.
SHOWN = {"submission_id": "bob/neurips26-4821-check", "claim_id": "neurips26-4821/c1"}
IMAGE_FIELDS = ("published_figure", "reproduced_figure", "diff")
SCREENSHOT_COPY = Path("/tmp/judging-review-screenshot.png")
VIEWPORT = (1400, 2400)  # tall enough for the claim, the three figures and all the questions
WAIT_SECONDS = 30


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
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise PageError(f"Chromium exited with {self.proc.returncode}:\n{self.log_tail()}")
            lines = port_file.read_text().split() if port_file.is_file() else []
            if len(lines) >= 2:
                return lines[0], lines[1]
            time.sleep(0.05)
        raise PageError(f"Chromium did not open its DevTools port in {WAIT_SECONDS} s:\n"
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


# The state of the annotation page: the record's fields as rendered, and the suggestion marks.
PAGE_STATE = """(() => {
  const fields = [...document.querySelectorAll('.text_field_component')].map(el => ({
    title: (el.querySelector('.text_field_component__title-content') || {}).innerText || '',
    text: (el.querySelector('.content-area') || {}).innerText || ''}));
  const images = [...document.querySelectorAll('.image_field')].map(el => {
    const img = el.querySelector('img');
    return {title: (el.querySelector('.image_field_title') || {}).innerText || '',
            src: img ? img.currentSrc.slice(0, 30) : null,
            complete: !!img && img.complete, width: img ? img.naturalWidth : 0,
            height: img ? img.naturalHeight : 0,
            shown: !!img && img.getBoundingClientRect().width > 0};
  });
  const suggested = [...document.querySelectorAll('label .label-text__suggestion')].map(mark => {
    const label = mark.closest('label');
    const input = document.getElementById(label.htmlFor);
    const button = label.closest('.input-button');
    const agent = button && button.querySelector('.tooltip__text');
    const score = mark.querySelector('.label-text__suggestion__score');
    return {id: label.htmlFor, checked: !!input && input.checked,
            active: label.classList.contains('label-active'),
            visible: mark.getClientRects().length > 0 && mark.getBoundingClientRect().width > 0,
            agent: agent ? agent.textContent.trim() : null,
            score: score ? score.textContent.trim() : null};
  });
  return {fields, images, suggested, text: document.body.innerText};
})()"""

READY = """(() => {
  const imgs = [...document.querySelectorAll('.image_field img')];
  return imgs.length >= 3 && imgs.every(i => i.complete && i.naturalWidth > 0)
    && !!document.querySelector('.text_field_component .markdown-render')
    && !!document.querySelector('label .label-text__suggestion');
})()"""

# The bytes of each figure as the page holds them (data: or blob: or http URL alike).
IMAGE_BYTES = """Promise.all([...document.querySelectorAll('.image_field')].map(async el => {
  const blob = await (await fetch(el.querySelector('img').currentSrc)).blob();
  const data = await new Promise(done => {
    const reader = new FileReader(); reader.onload = () => done(reader.result);
    reader.readAsDataURL(blob); });
  return [el.querySelector('.image_field_title').innerText, data.split(',')[1]];
}))"""


def statement(claim_markdown: str) -> str:
    """The claim statement: the blockquote of the `claim` field (judging.review.dataset)."""
    quoted = [line[2:] for line in claim_markdown.splitlines() if line.startswith("> ")]
    assert quoted, f"no statement in the claim field:\n{claim_markdown}"
    return normalize(html.unescape(" ".join(quoted)))


def pixels_of(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("RGB"))


@pytest.fixture
def browser(tmp_path: Path):
    chromium()
    opened = Browser(tmp_path / "chromium")
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.timeout(180)
def test_annotator_sees_claim_figures_and_suggestions(argilla, browser: Browser,
                                                      tmp_path: Path) -> None:
    run = tmp_path / "run"
    # The page layout under test is the 1.0.0 dataset's (the overlay field is covered in
    # test_review_push_pull).
    run_judging(RunRequest(sources=[str(SUBMISSIONS)], out=run, registry=REGISTRY,
                           rubrics=["figure-match@1.0.0", "verdict-justification@1.0.0"]))
    workspace = f"ws-{uuid.uuid4().hex[:8]}"
    client = connect(argilla.url, argilla.api_key)
    push_run(run, client=client, options=PushOptions(workspace=workspace, blind_share=0.0))
    annotator = argilla.create_user(workspaces=[workspace])
    dataset = client.datasets(name=FIG, workspace=workspace)
    records = list(dataset.records(with_suggestions=True, with_responses=False))
    assert records, f"nothing was pushed to {FIG}"
    titles = {field.name: field.title for field in dataset.settings.fields}
    screenshot = tmp_path / "annotation.png"

    try:
        browser.navigate(f"{argilla.url}/sign-in")
        browser.wait_for("!!document.querySelector('input[name=Password]')", "the login form")
        browser.type_into("input[name=Username]", annotator.username)
        browser.type_into("input[name=Password]", annotator.password)
        browser.wait_for("!document.querySelector('form button[type=submit]').disabled",
                         "the enabled Sign in button")
        browser.evaluate("document.querySelector('form button[type=submit]').click()")
        browser.wait_for("!location.pathname.startsWith('/sign-in') || "
                         "document.body.innerText.includes('Wrong username or password')",
                         f"the login of {annotator.username} to finish")
        if browser.evaluate("location.pathname.startsWith('/sign-in')"):
            raise PageError(f"the web UI refused the login of {annotator.username}")
        # The web UI's own filter syntax (`metadata=NAME.VALUE~NAME.VALUE`) opens one record.
        only = "~".join(f"{name}.{value}" for name, value in SHOWN.items())
        browser.navigate(f"{argilla.url}/dataset/{dataset.id}/annotation-mode?page=1"
                         f"&status=pending&metadata={urllib.parse.quote(only, safe='')}")
        browser.wait_for(READY, "a record with its three images and suggestions")
        state = browser.evaluate(PAGE_STATE)
        figures = dict(browser.evaluate(IMAGE_BYTES))
        browser.screenshot(screenshot)
    except PageError as exc:
        error = str(exc)
    else:
        error = None
    if error is not None:
        failed = tmp_path / "failure.png"
        try:
            browser.screenshot(failed)
            shutil.copyfile(failed, SCREENSHOT_COPY)
        except Exception as exc:
            failed = f"(none: {exc})"
        pytest.fail(f"{error}\nscreenshot: {failed}\n{browser.describe()}", pytrace=False)
    shutil.copyfile(screenshot, SCREENSHOT_COPY)
    print("screenshot:", screenshot, "copied to", SCREENSHOT_COPY)
    context = f"\nscreenshot: {screenshot}\n{browser.describe()}"

    # Which record is shown: its claim field starts "CLAIM_ID · submission SUBMISSION_ID".
    assert FIG in state["text"], f"not the {FIG} dataset" + context
    claim_text = normalize(next((f["text"] for f in state["fields"]
                                 if f["title"] == titles["claim"]), ""))
    assert claim_text, "no Claim field on the page" + context
    shown = [r for r in records if normalize(f"{r.metadata['claim_id']} · submission "
                                             f"{r.metadata['submission_id']}") in claim_text]
    assert len(shown) == 1, f"cannot tell which record is shown from {claim_text!r}" + context
    (record,) = shown
    assert {name: record.metadata[name] for name in SHOWN} == SHOWN, context
    assert statement(record.fields["claim"]) in claim_text, context
    assert statement(record.fields["claim"]) in normalize(state["text"]), context

    # The three figures, loaded, visible, and the very images of the record.
    images = {image["title"]: image for image in state["images"]}
    for name in IMAGE_FIELDS:
        image = images.get(titles[name])
        assert image is not None, f"no image for {name} ({titles[name]!r})" + context
        assert image["src"].startswith(("data:image/", "blob:")), image
        assert image["complete"] and image["width"] > 0 and image["shown"], image
        shown_image = Image.open(io.BytesIO(base64.b64decode(figures[titles[name]])))
        assert shown_image.size == (image["width"], image["height"])
        assert np.array_equal(pixels_of(shown_image), pixels_of(record.fields[name])), \
            f"the page's {name} is not the pushed image" + context

    # The AI suggestions: each suggested label carries the suggestion mark (icon, score, agent)
    # and is preselected; no other label is marked.
    suggestions = {f"{s.question_name}_{s.value}": s for s in record.suggestions}
    assert suggestions, f"the shown record {record.id} has no suggestions"
    marked = {mark["id"]: mark for mark in state["suggested"]}
    assert set(marked) == set(suggestions), context
    for label_id, suggestion in suggestions.items():
        mark = marked[label_id]
        assert mark["visible"] and mark["checked"] and mark["active"], mark
        assert mark["agent"] == suggestion.agent == "offline", mark
        if suggestion.score is not None:
            assert mark["score"] is not None and abs(float(mark["score"]) - suggestion.score) \
                <= 0.051, (mark, suggestion.score)

    # The screenshot shows the page and the figures (matplotlib's default blue is in them).
    pixels = np.asarray(Image.open(screenshot).convert("RGB")).reshape(-1, 3).astype(int)
    inked = (pixels.min(axis=1) < 200).mean()
    blue = int((np.abs(pixels - [31, 119, 180]).sum(axis=1) < 40).sum())
    print(f"screenshot: {inked:.1%} inked pixels, {blue} figure-blue pixels")
    assert inked > 0.03, f"the screenshot is (nearly) blank: {inked:.1%} inked{context}"
    assert blue > 500, f"only {blue} figure-blue pixels: the figures are not painted{context}"
