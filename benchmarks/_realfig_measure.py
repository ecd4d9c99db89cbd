"""Measuring real figure pairs once: `measure_claim` per pair, in worker processes, with the two
chart readings kept so that the comparison and the judge can be run again on them under other
settings (the leave-one-repository-out choice of benchmarks/_realfig_loro.py) without reading the
charts again.

A pair's measurement can be cached (`--cache DIR`): the key is the two images' bytes, whether the
published data was used, and the source of the code that reads (every file of the signals
package except the comparison's, so that a change to the comparison re-runs only the
comparison). Cached timings are those of the run that measured them: measure speed without a
cache.

Nothing of the pairs file is copied into the repository: files are read where they lie, and the
cache holds readings and signals, not images.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from judging.models import (  # noqa: E402
    Claim,
    ClaimInput,
    ClaimKey,
    ReferenceOrigin,
    Signal,
    SubmissionHeader,
)
from judging.signals.chart import ChartReading  # noqa: E402

#: The comparison's files (the compare folder and the evidence): a change to them keeps the
#: cached readings (they are re-run). (chart/settings.py is not one: it holds the reader's
#: settings too.)
COMPARISON_FILES = ("chart/compare/", "chart/evidence.py")
CACHE_VERSION = "realfig-measure/1"


@dataclass
class RealPair:
    id: str
    label: str
    """faithful | unfaithful | copy"""
    kind: str
    system: str
    figure: str
    """The bootstrap unit: the published image the pair is built on."""
    repo: str
    """The source repository: the unit left out."""
    dataset: str
    """Which pairs file (its folder's name)."""
    ambiguous: bool = False
    """A genuine pair its own write-up leaves in doubt: out of the headline figures."""
    signals: dict[str, Signal] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    measure_s: float = 0.0
    decode_s: float = 0.0
    """Decoding the pair's two images alone, in the same process right after measuring it (a
    fixed reference for the cost of measuring on a shared machine)."""
    error: str | None = None
    readings: tuple[ChartReading, ChartReading] | None = None
    cached: bool = False

    @property
    def labelled(self) -> bool:
        return self.label in ("faithful", "unfaithful") and not self.ambiguous

    @property
    def faithful(self) -> bool:
        return self.label == "faithful"


def read_pairs(path: Path) -> list[dict]:
    lines = []
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{n}: not JSON ({exc})") from exc
        missing = [k for k in ("id", "published", "reproduced", "label") if k not in line]
        if missing:
            raise SystemExit(f"{path}:{n}: missing {', '.join(missing)}")
        lines.append(line)
    return lines


def new_pair(line: dict, dataset: str) -> RealPair:
    return RealPair(id=line["id"], label=line["label"], kind=line.get("kind") or "",
                    system=line.get("published_system") or "?", figure=line["published"],
                    repo=line.get("source_repo") or "?", dataset=dataset,
                    ambiguous=bool(line.get("ambiguous")))


def claim_input(folder: Path, line: dict, *, published_data: bool = False) -> ClaimInput:
    """The pair as a figure claim; with `published_data`, a line's `data` is the registry's
    published data of the figure (as `judging run --claims` gives it)."""
    claim_id = f"fig/{line['id']}"
    claim = Claim(claim_id=claim_id, kind="figure", source="Figure 1",
                  statement="The reproduced chart shows the same data as the published chart.",
                  published_figure=line["published"], reproduced_figure=line["reproduced"],
                  verdict="verified")
    data = folder / line["data"] if published_data and line.get("data") else None
    return ClaimInput(
        key=ClaimKey(submission_id="bench/realfig", claim_id=claim_id),
        submission=SubmissionHeader(submission_id="bench/realfig", paper_id="realfig"),
        claim=claim, root=folder, published_path=folder / line["published"],
        reproduced_path=folder / line["reproduced"], published_data_path=data,
        reference=ReferenceOrigin.registry if data is not None else ReferenceOrigin.participant)


def reader_digest() -> str:
    """sha256 of the code that reads a chart (the signals package but the comparison) and of
    the libraries whose version can change a reading."""
    package = _HERE.parent / "judging"
    digest = hashlib.sha256(CACHE_VERSION.encode())
    for path in sorted((package / "signals").rglob("*.py")):
        relative = path.relative_to(package / "signals").as_posix()
        if any(relative == name or relative.startswith(name) and name.endswith("/")
               for name in COMPARISON_FILES):
            continue
        digest.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    for name in ("numpy", "scipy", "scikit-image", "pillow", "tesserocr"):
        try:
            digest.update(f"{name}=={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} absent\0".encode())
    return digest.hexdigest()


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"


@dataclass
class _Measured:
    signals: dict[str, Signal]
    flags: list[str]
    measure_s: float
    decode_s: float
    error: str | None
    readings: tuple[ChartReading, ChartReading] | None


def _measure(args: tuple[str, dict, bool]) -> _Measured:
    from judging.run.measure import MeasureOptions, figure_data, measure_claim
    from judging.signals import chart_readings, load_image

    folder, line, published_data = args
    logging.getLogger("judging").propagate = False
    claim = claim_input(Path(folder), line, published_data=published_data)
    start = time.perf_counter()
    try:
        measured = measure_claim(claim, options=MeasureOptions())
    except Exception as exc:  # noqa: BLE001 - counted and reported, the other pairs go on
        return _Measured({}, [], time.perf_counter() - start, 0.0,
                         f"{type(exc).__name__}: {str(exc)[:160]}", None)
    seconds = time.perf_counter() - start
    flags = [f.name if f.name != "figure_data_refused" else f"{f.name}: {f.detail}"
             for f in measured.flags]
    if measured.figure_error:
        return _Measured(measured.signals, flags, seconds, 0.0, measured.figure_error, None)
    start = time.perf_counter()
    published = load_image(claim.published_path)
    reproduced = load_image(claim.reproduced_path)
    decode = time.perf_counter() - start
    readings = None
    try:
        # the process's reading cache holds both: nothing is read again
        published_file, _ = figure_data(claim, "published")
        pub, rep, _ = chart_readings(published, reproduced, published_data=published_file)
        readings = (pub, rep)
    except Exception:  # noqa: BLE001 - the measured signals say why (chart reading failed)
        readings = None
    return _Measured(measured.signals, flags, seconds, decode, None, readings)


def measure_pairs(path: Path, *, jobs: int | None, cache: Path | None,
                  published_data: bool = False) -> list[RealPair]:
    """Every pair of a pairs file, measured (or read from the cache)."""
    folder = path.resolve().parent
    lines = read_pairs(path)
    pairs = [new_pair(line, folder.name) for line in lines]
    keys = []
    digest = reader_digest() if cache is not None else ""
    for line in lines:
        key = hashlib.sha256("\0".join([
            digest, _file_digest(folder / line["published"]),
            _file_digest(folder / line["reproduced"]), str(published_data),
            line.get("data") or "" if published_data else ""]).encode()).hexdigest()
        keys.append(key)
    todo = []
    for index, (pair, key) in enumerate(zip(pairs, keys)):
        stored = cache / f"{key}.pickle" if cache is not None else None
        if stored is not None and stored.is_file():
            _fill(pair, pickle.loads(stored.read_bytes()))
            pair.cached = True
        else:
            todo.append(index)
    if todo:
        with ProcessPoolExecutor(max_workers=jobs or 2) as pool:
            work = [(str(folder), lines[i], published_data) for i in todo]
            for n, (index, measured) in enumerate(zip(todo, pool.map(_measure, work)), 1):
                _fill(pairs[index], measured)
                if cache is not None:
                    cache.mkdir(parents=True, exist_ok=True)
                    (cache / f"{keys[index]}.pickle").write_bytes(pickle.dumps(measured))
                if n % 20 == 0 or n == len(todo):
                    print(f"  {folder.name}: measured {n}/{len(todo)} pairs", file=sys.stderr)
    return pairs


def _fill(pair: RealPair, measured: _Measured) -> None:
    pair.signals = {k: v for k, v in measured.signals.items()}
    pair.flags = list(measured.flags)
    pair.measure_s, pair.decode_s = measured.measure_s, measured.decode_s
    pair.error, pair.readings = measured.error, measured.readings
