"""Shared fixtures: the bundled examples, tiny submissions written on the fly, rendered charts."""

from __future__ import annotations

pytest_plugins = ["tests.argilla_server", "tests.slow"]

import io
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from judging.rubrics import RubricLibrary

#: This folder (tests/) and the repository root: test modules locate files from these, never
#: from their own `__file__` (they sit at different depths).
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DATA = TESTS / "data"
HOSTILE = TESTS / "hostile"
EXAMPLES = ROOT / "examples"
SUBMISSIONS = EXAMPLES / "submissions"
REGISTRY = EXAMPLES / "registry" / "claims.yaml"
RUBRICS = ROOT / "rubrics"
#: The installed console script, as users run it.
JUDGING_SCRIPT = Path(sys.executable).with_name("judging")
#: The CLI as a command line: the console script, else the module (a venv without the script).
JUDGING_CLI = ([str(JUDGING_SCRIPT)] if JUDGING_SCRIPT.is_file()
               else [sys.executable, "-c", "from judging.cli import main; main()"])


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    # No test may reach the network, a user's judge settings or a user's answer cache.
    for name in ("JUDGING_JUDGE", "JUDGING_RUBRICS_DIR", "JUDGING_PRICES", "OPENAI_BASE_URL",
                 "OPENAI_API_KEY", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUDGING_CACHE_DIR", str(tmp_path_factory.mktemp("answer-cache")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")


def pytest_configure(config: pytest.Config) -> None:
    # A measurement cache of the user's (the CLI's `--measure-cache`) never reaches a test:
    # modules choose the shared one below.
    os.environ.pop("JUDGING_MEASURE_CACHE", None)


@pytest.fixture(scope="session")
def measurement_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One measurement cache for the whole test run, every xdist worker's (they share the parent
    of their temporary folders), for the runs of modules that test something other than
    measuring figures (the LLM judges, the review, the dashboard, the reports): an entry's key
    is the figure files' contents, the measured fields, the options and the measuring code, so a
    hit gives the signals a fresh measurement gives, and the examples' figures are measured once
    a test run rather than once a run (issue 43: about 20 s a run of the examples on a busy
    2-core machine). Entries are written whole (a file renamed into place), so workers may share
    it. A module that tests measuring (tests/run/test_pool.py, the reading trace, the kills and
    interrupts) never uses it: it counts what is measured, or needs measuring to take time."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "measurements"
    shared.mkdir(exist_ok=True)
    return shared


def module_measure_cache() -> Path | None:
    """The measurement cache the module's tests share (`shared_measurements`), for the
    `RunRequest`s it builds (the CLI reads JUDGING_MEASURE_CACHE itself); None elsewhere."""
    found = os.environ.get("JUDGING_MEASURE_CACHE")
    return Path(found) if found else None


@pytest.fixture(scope="module")
def shared_measurements(measurement_cache: Path) -> Iterator[Path]:
    """`measurement_cache` as JUDGING_MEASURE_CACHE (the CLI's `--measure-cache`) for the
    module's tests and the processes they start (`pytestmark = pytest.mark.usefixtures(...)`);
    a `RunRequest` the module builds is given it as `measure_cache`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUDGING_MEASURE_CACHE", str(measurement_cache))
        yield measurement_cache


@pytest.fixture(scope="module")
def verdict_rubric():
    """The shipped verdict-justification@1.0.0 rubric (calibration and resolve tests)."""
    return RubricLibrary(RUBRICS).load("verdict-justification@1.0.0")


@pytest.fixture
def rubrics_copy(tmp_path: Path) -> Path:
    """A private copy of rubrics/ that a test may edit."""
    target = tmp_path / "rubrics"
    shutil.copytree(RUBRICS, target)
    return target


def render_chart(*, series: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
                 dpi: int = 100, size: tuple[float, float] = (8, 6), style: str = "default",
                 log_y: bool = False, font: str = "DejaVu Sans", fmt: str = "png",
                 linewidth: float = 1.8) -> bytes:
    """A matplotlib line chart as image bytes (the test charts of the signal invariants)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if series is None:
        x = np.linspace(0, 10, 200)
        series = {"train": (x, np.exp(-x / 3) + 0.1), "val": (x, np.exp(-x / 4) + 0.15)}
    with plt.style.context(style), plt.rc_context({"font.family": font}):
        fig, ax = plt.subplots(figsize=size, dpi=dpi)
        for name, (x, y) in series.items():
            ax.plot(x, y, label=name, linewidth=linewidth)
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("steps (k)")
        ax.set_ylabel("loss")
        ax.legend()
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata={"Software": None}
                    if fmt == "png" else None)
        plt.close(fig)
    return buffer.getvalue()


@dataclass
class CountingWeb:
    """A local HTTP server's address and the paths it was asked for."""

    url: str
    hits: list[str] = field(default_factory=list)


@contextmanager
def counting_web_server(payload: bytes) -> Iterator[CountingWeb]:
    """A local HTTP server that answers every GET with `payload` (an image) and records its path:
    what a test's hostile input names must never be fetched (`hits` stays empty)."""
    web = CountingWeb(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            web.hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    web.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield web
    finally:
        server.shutdown()
        server.server_close()


def open_png(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data)).convert("RGB")


@pytest.fixture
def chart() -> Callable[..., Image.Image]:
    return lambda **kwargs: open_png(render_chart(**kwargs))


class SubmissionBuilder:
    """Writes a submission folder: a manifest plus the files its claims name."""

    def __init__(self, root: Path, submission_id: str = "tester/sub-1", paper_id: str = "paper-1"):
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.header = {"submission_id": submission_id, "paper_id": paper_id,
                       "agent": {"name": "pytest"}, "human_help": "none"}
        self.claims: list[dict] = []

    def file(self, relative: str, content: bytes | str) -> str:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return relative

    def number_claim(self, claim_id: str = "paper-1/c1", *, reported: float = 94.1,
                     reproduced: float = 93.8, tolerance: dict | None = None,
                     verdict: str = "verified", log: str | None = "final top1 93.80\n",
                     **extra) -> dict:
        claim = {"claim_id": claim_id, "kind": "number", "source": "Table 2",
                 "statement": "Top-1 accuracy is 94.1%", "reported_value": reported,
                 "reproduced_value": reproduced,
                 "tolerance": tolerance if tolerance is not None else {"absolute": 0.5},
                 "verdict": verdict, "justification": "See logs/run.txt.",
                 "evidence": {"script": self.file("run.py", "print('run')\n"),
                              "logs": [self.file("logs/run.txt", log)] if log is not None else []}}
        claim.update(extra)
        self.claims.append(claim)
        return claim

    def figure_claim(self, claim_id: str = "paper-1/f1", *, published: bytes, reproduced: bytes,
                     verdict: str = "verified", **extra) -> dict:
        slug = claim_id.replace("/", "_")
        claim = {"claim_id": claim_id, "kind": "figure", "source": "Figure 1",
                 "statement": "Loss falls below 0.2", "verdict": verdict,
                 "published_figure": self.file(f"figures/{slug}_paper.png", published),
                 "reproduced_figure": self.file(f"figures/{slug}_repro.png", reproduced),
                 "justification": "The curves match.", "evidence": {"logs": []}}
        claim.update(extra)
        self.claims.append(claim)
        return claim

    def write(self, *, raw: str | None = None, name: str = "submission.yaml") -> Path:
        text = raw if raw is not None else yaml.safe_dump(
            {**self.header, "claims": self.claims}, sort_keys=False)
        (self.root / name).write_text(text, encoding="utf-8")
        return self.root


@pytest.fixture
def submission(tmp_path: Path) -> SubmissionBuilder:
    return SubmissionBuilder(tmp_path / "sub")


#: An extra claim of neurips26-4821 in the ICML-shaped registry that no example addresses.
ICML_EXTRA_CLAIM = "Sparse warmup cuts the wall-clock time to a validation loss of 0.3 by 30%."


def write_icml_registry(folder: Path, *, extra_papers: dict[str, list[dict]] | None = None
                        ) -> Path:
    """An ICML-shaped registry (`{paper_id: [{text: ...}]}`) in `folder`: paper neurips26-4821's
    claims c1..c6 are the bundled registry's (so the examples answer them by id), c7 is one no
    submission addresses; the figures are copied beside it. `extra_papers` adds papers."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REGISTRY.parent / "figures", folder / "figures", dirs_exist_ok=True)
    ours = yaml.safe_load(REGISTRY.read_text(encoding="utf-8"))["claims"]
    claims = []
    for entry in ours:
        if entry["paper_id"] != "neurips26-4821":
            continue
        claim = {"text": entry["statement"]}
        claim |= {k: entry[k] for k in ("source", "published_figure", "reported_value",
                                        "tolerance", "values") if entry.get(k) is not None}
        claims.append(claim)
    assert len(claims) == 6
    claims[0]["figure_ref"] = "fig:3"  # a key with no registry field: ignored
    claims.append({"text": ICML_EXTRA_CLAIM, "section": "5.3"})
    path = folder / "icml-claims.yaml"
    path.write_text(yaml.safe_dump({"neurips26-4821": claims, **(extra_papers or {})},
                                   sort_keys=False), encoding="utf-8")
    return path


def trackio_cli() -> str | None:
    """The real trackio CLI, from its own environment (`make trackio-env`, JUDGING_TRACKIO)."""
    found = os.environ.get("JUDGING_TRACKIO") or str(ROOT / ".venv-trackio" / "bin" / "trackio")
    return found if Path(found).is_file() else None


#: Tests that make logbooks with the real trackio CLI. Under `make test` (which builds the
#: environment and sets JUDGING_TRACKIO) they never skip: a missing CLI fails them. Only a bare
#: `pytest` outside the Makefile, with no trackio environment at all, skips them.
needs_trackio = pytest.mark.skipif(trackio_cli() is None and not os.environ.get("JUDGING_TRACKIO"),
                                   reason="no trackio CLI: run `make trackio-env`")
