"""The paged report of a large run in a real headless Chromium (over the DevTools protocol): the
index of 10,000 claims (a synthetic run directory, written without judging) opens from file://,
filters by submission, outcome and flag and by a typed claim id, and a claim's page shows its
figures, loaded lazily from their own files; participant text stays text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from judging.report import write_html_report
from judging.report.html import CLAIMS_PER_PAGE, ROWS_PER_VIEW, anchor, pages_dir
from tests.browser import Browser, chromium
from tests.conftest import RUBRICS
from tests.synthetic_run import COLOURS, write_synthetic_run

N_CLAIMS = 10_000


@pytest.fixture(scope="module")
def paged(tmp_path_factory):
    root = tmp_path_factory.mktemp("paged") / "run"
    made = write_synthetic_run(root, N_CLAIMS, images=3)
    return made, write_html_report(root, rubrics_dir=RUBRICS)


@pytest.fixture
def browser(tmp_path: Path):
    chromium()
    opened = Browser(tmp_path / "chromium", viewport=(1400, 1600))
    try:
        yield opened
    finally:
        opened.close()


ROWS = "[...document.querySelectorAll('#rows tr')].map(tr => tr.dataset.key)"


def test_the_index_filters_and_a_claim_shows_its_figures(paged, browser: Browser,
                                                         tmp_path: Path) -> None:
    made, index = paged
    folder = pages_dir(index)
    assert index.stat().st_size < 100_000, "the index page holds no rows: they are data files"
    assert not list(folder.glob("claims/*.html"))[0].read_text().count("data:image")
    assert len(list(folder.glob("claims/p-*.html"))) == -(-N_CLAIMS // CLAIMS_PER_PAGE)

    browser.navigate(index.as_uri())
    browser.wait_for("document.documentElement.dataset.firstPageMs", "the first page of rows")
    status = browser.evaluate("document.getElementById('status').textContent")
    assert status == f"claims 1–{ROWS_PER_VIEW} of {N_CLAIMS}", browser.describe()
    assert len(browser.evaluate(ROWS)) == ROWS_PER_VIEW
    assert browser.evaluate("window.pwned") is None

    # Filter: one submission (a choice in the select), then its failed claims.
    submission = made.submissions[333]
    expected = sorted(k for k in made.outcomes if k.startswith(submission + "::"))
    browser.evaluate(f"""(() => {{ const s = document.getElementById('submission');
        s.value = {json.dumps(submission)}; s.dispatchEvent(new Event('change')); }})()""")
    assert sorted(browser.evaluate(ROWS)) == expected, browser.describe()
    browser.evaluate("""(() => { const s = document.getElementById('outcome');
        s.value = 'fail'; s.dispatchEvent(new Event('change')); })()""")
    failed = sorted(k for k in expected if "fail" in made.outcomes[k])
    assert 0 < len(failed) < len(expected)
    assert sorted(browser.evaluate(ROWS)) == failed
    assert f"#submission={submission.replace('/', '%2F')}" in browser.evaluate("location.hash")

    # Every flagged claim, over several screens, and back to all.
    browser.evaluate("""(() => { for (const id of ['submission', 'outcome']) {
        const s = document.getElementById(id); s.value = ''; }
        const f = document.getElementById('flag'); f.value = 'duplicate_figure';
        f.dispatchEvent(new Event('change')); })()""")
    flagged = [k for k in made.flagged if "/f" in k.split("::")[1]]
    assert browser.evaluate("document.documentElement.dataset.shown") == str(len(flagged))

    # A claim id typed into the search box (keyboard input), with the flag filter cleared.
    target = made.with_images[1]
    browser.evaluate("""(() => { const f = document.getElementById('flag'); f.value = '';
        f.dispatchEvent(new Event('change')); })()""")
    claim_id = target.split("::")[1]
    browser.type_into("#q", claim_id)
    keys = browser.wait_for(f"(() => {{ const k = {ROWS}; return k.length && "
                            f"k.every(x => x.includes({json.dumps(claim_id)})) && k; }})()",
                            "the rows of the typed claim id")
    assert target in keys

    # Its page: the claim's four images load (lazily, from files) and show.
    browser.evaluate(f"""[...document.querySelectorAll('#rows tr')]
        .find(tr => tr.dataset.key === {json.dumps(target)}).querySelector('a').click()""")
    section = anchor(target)
    browser.wait_for(f"location.hash === '#{section}' && !!document.getElementById('{section}')",
                     "the claim page")
    images = f"[...document.getElementById('{section}').querySelectorAll('img')]"
    assert browser.evaluate(f"{images}.every(i => i.loading === 'lazy' && "
                            f"!i.src.startsWith('data:'))")
    browser.wait_for(f"{images}.length === 4 && {images}.every(i => i.complete && "
                     f"i.naturalWidth === 400)", "the claim's figures to load")
    assert browser.evaluate("window.pwned") is None
    text = browser.evaluate(f"document.getElementById('{section}').innerText")
    assert claim_id in text
    pixels = np.asarray(Image.open(browser.screenshot(tmp_path / "claim.png")).convert("RGB"))
    flat = pixels.reshape(-1, 3).astype(int)
    for name in ("published", "reproduced", "diff"):
        found = int((np.abs(flat - COLOURS[name]).sum(axis=1) < 30).sum())
        assert found > 5_000, f"{name}: only {found} pixels of its colour on screen"


def test_participant_text_is_escaped_in_the_pages(paged) -> None:
    made, index = paged
    flagged = made.flagged[0]
    page = next(p for p in sorted(pages_dir(index).glob("claims/*.html"))
                if anchor(flagged) in p.read_text())
    html = page.read_text()
    assert "<script>window.pwned" not in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    # The data files are JSON in script files, with "<" escaped: no text can close a script.
    data = "".join(p.read_text() for p in pages_dir(index).glob("*.js"))
    assert "<" not in data


def test_a_small_run_stays_one_page_and_replaces_a_paged_report(tmp_path: Path) -> None:
    root = tmp_path / "run"
    write_synthetic_run(root, 40, images=1)
    write_html_report(root, rubrics_dir=RUBRICS, paged=True)
    assert pages_dir(root / "report.html").is_dir()
    index = write_html_report(root, rubrics_dir=RUBRICS)
    assert not pages_dir(index).exists()
    assert index.read_text().count('<div class="claim"') == 40
