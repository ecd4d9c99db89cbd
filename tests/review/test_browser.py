"""The Argilla review UI in a real headless Chromium: an annotator logs in and sees a figure claim.

The examples' run is pushed to the session's local Argilla server (tests/argilla_server.py) in a
fresh workspace; an annotator of that workspace signs in through the web UI's login form and opens
the annotation page of `figure-match-1.0.0`. The page must show the displayed record's claim text,
its three figures side by side in one row (the very images that were pushed: one custom field,
so that reviewers compare without scrolling), and the AI suggestions marked on their labels.
The screenshot is kept under the test's tmp dir and copied to SCREENSHOT_COPY.

Chromium is driven over the Chrome DevTools Protocol with the `websockets` package (sync client):
no WebDriver, nothing downloaded. Never skipped: without Chromium the test fails with the command
that installs it.
"""

from __future__ import annotations

import base64
import html
import io
import json
import shutil
import urllib.parse
import uuid
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from judging.review.push import PushOptions, connect, push_run
from judging.run.runner import RunRequest, run_judging
from tests.browser import Browser, PageError, chromium, normalize
from tests.conftest import REGISTRY, SUBMISSIONS, module_measure_cache

pytestmark = pytest.mark.usefixtures("shared_measurements")

FIG = "figure-match-1.0.0"
# The record opened: Bob's figure claim, a copy of the published figure, so the AI suggests
# `same_trend` yes (score 1.0), `independent_reproduction` no (0.8) and `overall_verdict` fail.
SHOWN = {"submission_id": "bob/neurips26-4821-check", "claim_id": "neurips26-4821/c1"}
#: The figures of the side-by-side field (judging.review.dataset.FIGURES_TEMPLATE): class names.
FIGURES = ("published", "reproduced", "diff")

# The documents of the page: the page itself and the custom fields' frames (Argilla may render a
# custom field in an iframe of its own).
DOCUMENTS = """[document, ...[...document.querySelectorAll('iframe')].map(f => {
  try { return f.contentDocument; } catch (e) { return null; } }).filter(d => d)]"""
FIGURE_IMAGES = f"""(() => {{ const docs = {DOCUMENTS};
  const find = cls => docs.map(d => d.querySelector('img.jd-' + cls)).find(i => i) || null;
  return {json.dumps(list(("published", "reproduced", "diff")))}.map(cls => [cls, find(cls)]);
}})()"""
SCREENSHOT_COPY = Path("/tmp/judging-review-screenshot.png")


# The state of the annotation page: the record's fields as rendered, and the suggestion marks.
PAGE_STATE = """(() => { const FIGURE_IMAGES = """ + FIGURE_IMAGES + """;
  const fields = [...document.querySelectorAll('.text_field_component')].map(el => ({
    title: (el.querySelector('.text_field_component__title-content') || {}).innerText || '',
    text: (el.querySelector('.content-area') || {}).innerText || ''}));
  const images = FIGURE_IMAGES.map(([name, img]) => {
    const frame = img && img.ownerDocument !== document ?
      [...document.querySelectorAll('iframe')].find(f => f.contentDocument === img.ownerDocument)
      : null;
    const offset = frame ? frame.getBoundingClientRect() : {top: 0, left: 0};
    const box = img ? img.getBoundingClientRect() : null;
    return {name, src: img ? img.currentSrc.slice(0, 30) : null,
            complete: !!img && img.complete, width: img ? img.naturalWidth : 0,
            height: img ? img.naturalHeight : 0, shown: !!box && box.width > 0,
            top: box ? box.top + offset.top : null, left: box ? box.left + offset.left : null,
            right: box ? box.right + offset.left : null};
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

# The AI assessment field as rendered: its table cells (none: a list) and its list items, with
# the narrowest item's width (a word per line would be a few pixels wide).
ASSESSMENT_CELLS = """(() => {
  const field = [...document.querySelectorAll('.text_field_component')].find(el =>
    ((el.querySelector('.text_field_component__title-content') || {}).innerText || '')
      .includes('AI'));
  if (!field) return {cells: -1, items: 0, narrowest: 0};
  const items = [...field.querySelectorAll('li')].map(li => li.getBoundingClientRect().width);
  return {cells: field.querySelectorAll('td, th').length, items: items.length,
          narrowest: items.length ? Math.min(...items) : 0};
})()"""

READY = """(() => {
  const imgs = """ + FIGURE_IMAGES + """.map(([name, img]) => img).filter(i => i);
  return imgs.length >= 3 && imgs.every(i => i.complete && i.naturalWidth > 0)
    && !!document.querySelector('.text_field_component .markdown-render')
    && !!document.querySelector('label .label-text__suggestion');
})()"""

# The bytes of each figure as the page holds them (data: or blob: or http URL alike).
IMAGE_BYTES = """Promise.all(""" + FIGURE_IMAGES + """.map(async ([name, img]) => {
  const blob = await (await fetch(img.currentSrc)).blob();
  const data = await new Promise(done => {
    const reader = new FileReader(); reader.onload = () => done(reader.result);
    reader.readAsDataURL(blob); });
  return [name, data.split(',')[1]];
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
                           rubrics=["figure-match@1.0.0", "verdict-justification@1.0.0"],
                           measure_cache=module_measure_cache()))
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
        cells = browser.evaluate(ASSESSMENT_CELLS)
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

    # The AI assessment reads as one item per criterion, its words whole: it was a table whose
    # headers Argilla's narrow field squeezed to a letter per line.
    assessment = normalize(next((f["text"] for f in state["fields"]
                                 if f["title"] == titles["ai_assessment"]), ""))
    assert "Criteria (criterion: AI answer, confidence" in assessment, assessment + context
    assert cells["cells"] == 0, f"the AI assessment is still a table: {cells}" + context
    assert cells["items"] >= 2 and cells["narrowest"] >= 60, f"{cells}" + context

    # The three figures, loaded, visible, in one row (left to right, tops level), and the very
    # images of the record.
    images = {image["name"]: image for image in state["images"]}
    assert "figures" in record.fields and "published_figure" not in titles, titles
    for name in FIGURES:
        image = images.get(name)
        assert image is not None and image["src"], f"no {name} figure on the page" + context
        assert image["src"].startswith(("data:image/", "blob:")), image
        assert image["complete"] and image["width"] > 0 and image["shown"], image
        shown_image = Image.open(io.BytesIO(base64.b64decode(figures[name])))
        assert shown_image.size == (image["width"], image["height"])
        pushed = Image.open(io.BytesIO(base64.b64decode(
            record.fields["figures"][name].split(",", 1)[1])))
        assert np.array_equal(pixels_of(shown_image), pixels_of(pushed)), \
            f"the page's {name} is not the pushed image" + context
    row = [images[name] for name in FIGURES]
    assert max(i["top"] for i in row) - min(i["top"] for i in row) < 40, row
    assert row[0]["right"] <= row[1]["left"] + 1 and row[1]["right"] <= row[2]["left"] + 1, row

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

    # The screenshot shows the page and the figures: matplotlib's default blue is painted where
    # the row of figures is (small in a row: its thin curves are blended, hence the tolerance).
    shot = np.asarray(Image.open(screenshot).convert("RGB")).astype(int)
    pixels = shot.reshape(-1, 3)
    inked = (pixels.min(axis=1) < 200).mean()
    top, bottom = int(min(i["top"] for i in row)), int(max(i["top"] for i in row)) + 300
    left, right = int(row[0]["left"]), int(row[-1]["right"])
    region = shot[max(0, top):bottom, max(0, left):right].reshape(-1, 3)
    blue = int((np.abs(region - [31, 119, 180]).sum(axis=1) < 90).sum())
    row_inked = (region.min(axis=1) < 200).mean()
    print(f"screenshot: {inked:.1%} inked pixels; the row {row_inked:.1%} inked, {blue} "
          f"figure-blue pixels")
    assert inked > 0.03, f"the screenshot is (nearly) blank: {inked:.1%} inked{context}"
    assert row_inked > 0.02 and blue > 30, \
        f"the row is {row_inked:.1%} inked, {blue} figure-blue pixels: the figures are not " \
        f"painted{context}"
