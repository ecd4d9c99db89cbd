"""Hostile inputs end to end, through the real CLI as a user runs it (each command a process of
its own, forked from a server that imported the package once: tests/forked_cli.py).

A folder of submissions is built at test time: each hostile input sits in its own claim next to a
good claim, or (for what spoils a whole manifest or source) in its own submission next to a good
one. `judging run` must record every hostile claim as a judgment line with a clear reason, judge
every good claim, never print a traceback, and add nothing on a second run. The tiny static files
of the corpus are in tests/hostile/ (see its README); big inputs are generated here.

`pytest tests/test_hostile_inputs.py -s` prints the table of the cases tried and their outcomes.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from judging._yaml import MAX_INPUT_FILE_BYTES, read_document
from judging.errors import ManifestError, RubricError
from judging.intake.manifest import load_submission
from judging.rubrics import load_rubric_file

from .conftest import JUDGING_SCRIPT, SubmissionBuilder, render_chart
from .forked_cli import ForkedCli

HOSTILE = Path(__file__).resolve().parent / "hostile"
JUDGING = JUDGING_SCRIPT
#: The number of hostile inputs this file tries (the table printed with -s lists them).
EXPECTED_CASES = 78

VALID_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+@-]{0,199}")
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass
class Case:
    group: str
    name: str
    expect: str
    """'error' (a judgment line with status error), 'scored' (a benign oddity: judged normally),
    'source error' (the manifest as a whole is refused, the run goes on), 'refused run' (a
    source given on the command line is unusable: the invocation is refused before anything is
    written, issue 25) or 'refused' (a command refuses the file)."""
    reason: tuple[str, ...] = ()
    """Substrings the line's reason (or the printed error) must contain, case-insensitively."""
    submission_id: str | None = None
    claim_id: str | None = None
    source: str | None = None
    """Source-level cases: the folder or path the printed source error names."""
    outcome: str = "not run"
    detail: str = ""
    seconds: float | None = None


@dataclass
class Corpus:
    root: Path
    cases: list[Case] = field(default_factory=list)
    good: list[tuple[str, str]] = field(default_factory=list)
    """(submission_id, claim_id) of the good claims: every one must be judged."""


# --- building the corpus ----------------------------------------------------------------------


def _chart_image() -> Image.Image:
    return Image.open(io.BytesIO(render_chart(size=(3, 2.25), dpi=64))).convert("RGB")


def _encode(image: Image.Image, fmt: str, **kwargs) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **kwargs)
    return buffer.getvalue()


def _write(builder: SubmissionBuilder) -> Path:
    # libyaml's emitter: the 5 MB justification takes 40 ms instead of seconds
    text = yaml.dump({**builder.header, "claims": builder.claims}, Dumper=_DUMPER,
                     sort_keys=False, allow_unicode=True)
    (builder.root / "submission.yaml").write_text(text, encoding="utf-8")
    return builder.root


class Group:
    """One submission holding one hostile input per claim, plus one good claim."""

    def __init__(self, corpus: Corpus, folder: Path, name: str):
        self.corpus = corpus
        self.name = name
        self.builder = SubmissionBuilder(folder / name, submission_id=f"hostile/{name}")
        good = self.builder.number_claim("paper-1/good")
        corpus.good.append((self.builder.header["submission_id"], good["claim_id"]))

    def claim(self, name: str, claim: object, expect: str, *reason: str,
              key: str | None = None) -> None:
        """Add a raw claim; `key` is the claim id its lines carry (default: its own id)."""
        index = len(self.builder.claims)
        self.builder.claims.append(claim)
        claim_id = key
        if claim_id is None:
            # an invalid or missing id: the error line's key is the claim's position
            own = claim.get("claim_id") if isinstance(claim, dict) else None
            claim_id = own if isinstance(own, str) and VALID_ID.fullmatch(own) \
                else f"#claim-{index}"
        self.corpus.cases.append(Case(self.name, name, expect, reason,
                                      self.builder.header["submission_id"], claim_id))

    def number(self, claim_id: str, name: str, expect: str, *reason: str, key: str | None = None,
               **fields: object) -> None:
        claim = {"claim_id": claim_id, "kind": "number", "statement": "Top-1 is 94.1%",
                 "reported_value": 94.1, "reproduced_value": 93.8,
                 "tolerance": {"absolute": 0.5}, "verdict": "verified",
                 "justification": "See logs/run.txt.",
                 "evidence": {"script": "run.py", "logs": ["logs/run.txt"]}}
        claim.update(fields)
        self.claim(name, claim, expect, *reason, key=key)

    def figure(self, claim_id: str, name: str, expect: str, *reason: str, filename: str,
               content: bytes | None, published: bytes) -> None:
        self.claim(name, self._figure(claim_id, filename, content, published), expect, *reason)

    def good_figure(self, claim_id: str, *, filename: str, content: bytes, published: bytes
                    ) -> None:
        self.builder.claims.append(self._figure(claim_id, filename, content, published))
        self.corpus.good.append((self.builder.header["submission_id"], claim_id))

    def _figure(self, claim_id: str, filename: str, content: bytes | None, published: bytes
                ) -> dict:
        slug = claim_id.replace("/", "_")
        if content is not None:
            self.builder.file(f"figures/{filename}", content)
        return {
            "claim_id": claim_id, "kind": "figure", "source": "Figure 1",
            "statement": "Loss falls below 0.2", "verdict": "verified",
            "published_figure": self.builder.file(f"figures/{slug}_paper.png", published),
            "reproduced_figure": f"figures/{filename}", "justification": "The curves match.",
            "evidence": {"logs": []}}

    def write(self) -> Path:
        return _write(self.builder)


def build_claim_level(corpus: Corpus, outside: Path) -> Path:
    """Submissions whose hostile inputs each spoil one claim: the run must exit 0."""
    folder = corpus.root / "claims"
    chart = _chart_image()
    chart_png = _encode(chart, "PNG")
    static = {name: (HOSTILE / name).read_bytes() for name in
              ("corrupt.png", "truncated.png", "animated.png", "animated.gif",
               "bomb-30000x30000.png")}

    # images: refused with a reason, or (odd but valid) judged normally
    images = Group(corpus, folder, "images")
    images.good_figure("paper-1/good-figure", filename="plain.png",
                       content=_encode(chart.rotate(2, fillcolor="white"), "PNG"),
                       published=chart_png)
    images.figure("paper-1/corrupt", "corrupt bytes", "error", "not a readable image",
                  filename="corrupt.png", content=static["corrupt.png"], published=chart_png)
    images.figure("paper-1/truncated", "truncated PNG", "error", "corrupt or truncated",
                  filename="truncated.png", content=static["truncated.png"], published=chart_png)
    images.figure("paper-1/empty", "empty file", "error", "empty file",
                  filename="empty.png", content=b"", published=chart_png)
    images.figure("paper-1/missing", "missing file", "error", "file not found",
                  filename="missing.png", content=None, published=chart_png)
    images.figure("paper-1/not-an-image", "text file named .png", "error", "not a readable image",
                  filename="notes.png", content=b"loss went down\n", published=chart_png)
    images.figure("paper-1/animated-png", "animated PNG", "error", "animated image",
                  filename="animated.png", content=static["animated.png"], published=chart_png)
    images.figure("paper-1/animated-gif", "animated GIF", "error", "GIF is not supported",
                  filename="animated.gif", content=static["animated.gif"], published=chart_png)
    images.figure("paper-1/bomb", "decompression bomb (header: 30000x30000, 69 bytes)", "error",
                  "decompression bomb", filename="bomb.png",
                  content=static["bomb-30000x30000.png"], published=chart_png)
    def png_header_only(width: int, height: int) -> bytes:
        def chunk(kind: bytes, data: bytes) -> bytes:
            return (struct.pack(">I", len(data)) + kind + data
                    + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
        return (b"\x89PNG\r\n\x1a\n"
                + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))

    images.figure("paper-1/over-limit", "header claims 8000x8000 (64 MP, under Pillow's limit)",
                  "error", "64,000,000 pixels, over the limit of 40,000,000", filename="huge.png",
                  content=png_header_only(8000, 8000), published=chart_png)
    images.figure("paper-1/bomb-as-published", "decompression bomb as the published figure",
                  "error", "published figure", "decompression bomb", filename="ok.png",
                  content=chart_png, published=static["bomb-30000x30000.png"])
    gray = np.asarray(chart.convert("L"), dtype=np.uint16) * 257
    rgba = np.dstack([np.asarray(chart), np.where(np.asarray(chart.convert("L")) > 250, 0, 255)
                      .astype(np.uint8)])
    images.figure("paper-1/jpeg-as-png", "a JPEG named .png", "scored", filename="jpeg.png",
                  content=_encode(chart, "JPEG", quality=90), published=chart_png)
    images.figure("paper-1/gray16", "16-bit grayscale PNG", "scored", filename="gray16.png",
                  content=_encode(Image.fromarray(gray), "PNG"), published=chart_png)
    images.figure("paper-1/cmyk", "CMYK JPEG", "scored", filename="cmyk.jpg",
                  content=_encode(chart.convert("CMYK"), "JPEG", quality=90),
                  published=chart_png)
    images.figure("paper-1/palette", "palette PNG", "scored", filename="palette.png",
                  content=_encode(chart.convert("P", palette=Image.Palette.ADAPTIVE), "PNG"),
                  published=chart_png)
    images.figure("paper-1/transparent", "transparent PNG (white made transparent)", "scored",
                  filename="transparent.png", content=_encode(Image.fromarray(rgba, "RGBA"), "PNG"),
                  published=chart_png)
    images.write()

    # text: oversized, NUL and control characters
    text = Group(corpus, folder, "text")
    text.number("paper-1/just-over", "justification of 20,001 characters", "error",
                "at most 20000 characters", "justification", justification="x" * 20_001)
    text.number("paper-1/five-mb", "justification of 5,000,000 characters (5 MB manifest, under "
                "the byte limit)", "error", "at most 20000 characters", "justification",
                justification="x" * 5_000_000)
    text.number("paper-1/nul-justification", "NUL byte in the justification", "error",
                "NUL character", "justification", justification="ok\x00then hidden")
    text.number("paper-1/nul-path", "NUL byte in a log path", "error", "NUL character",
                "evidence.logs.0", evidence={"logs": ["logs/run.txt\x00.png"]})
    text.number("paper-1/nul-id\x00", "NUL byte in the claim id", "error", "NUL character",
                "claim_id")
    text.number("paper-1/esc-path", "ANSI escape in a log path", "error",
                "control characters", "evidence.logs", evidence={"logs": ["logs/\x1b[31mred.txt"]})
    text.number("paper-1/newline-path", "newline in a script path", "error", "control characters",
                "evidence.script", evidence={"script": "run\n.py"})
    text.number("paper-1/tab-source", "tab in the one-line 'source' field", "error",
                "one line without control characters", "source", source="Table\t2")
    text.number("paper-1/long-statement", "statement of 4,001 characters", "error",
                "at most 4000 characters", "statement", statement="s" * 4_001)
    text.number("paper-1/inf", "reproduced_value .inf", "error",
                "finite", reproduced_value=float("inf"))
    text.number("paper-1/nan", "reproduced_value .nan", "error", "finite",
                reproduced_value=float("nan"))
    # finite numbers whose difference overflows: once written as null, which made the whole run
    # directory unreadable ("an ok signal needs a value") for the next run and the report
    text.number("paper-1/overflow", "reported 1e308, reproduced -1e308 (difference overflows)",
                "scored", reported_value=1e308, reproduced_value=-1e308)
    # value * 100 overflowed to inf and inf <= inf "found" the value in any log with a number
    text.number("paper-1/near-max", "reproduced 1e307, the log says 93.80", "scored",
                reproduced_value=1e307, verdict="falsified",
                evidence={"script": "run.py", "logs": ["logs/run.txt"], "proof_script": "run.py",
                          "problem_kind": "paper-error"})
    text.write()

    # paths: escaping the folder, symlinks, special files
    paths = Group(corpus, folder, "paths")
    root = paths.builder.root
    (outside / "secret.txt").write_text("token=abc\n")
    (outside / "dir").mkdir()
    (outside / "dir" / "log.txt").write_text("final top1 93.80\n")
    paths.number("paper-1/dotdot", "'..' traversal", "error", "'..'",
                 evidence={"logs": ["logs/../../../etc/passwd"]})
    paths.number("paper-1/absolute", "absolute path", "error", "absolute",
                 evidence={"logs": ["/etc/passwd"]})
    paths.number("paper-1/windows-absolute", "Windows drive path", "error", "absolute",
                 evidence={"script": "C:\\Windows\\win.ini"})
    os.symlink(outside / "secret.txt", root / "logs" / "secret.txt")
    paths.number("paper-1/symlink-out", "symlink to a file outside the folder", "error",
                 "resolves outside", evidence={"logs": ["logs/secret.txt"]})
    os.symlink(outside / "dir", root / "elsewhere")
    paths.number("paper-1/symlinked-dir", "file under a symlinked folder outside", "error",
                 "resolves outside", evidence={"logs": ["elsewhere/log.txt"]})
    os.symlink(Path("/etc/hostname"), root / "figures-link.png")
    paths.claim("symlink to a system file as a figure", {
        "claim_id": "paper-1/symlink-figure", "kind": "figure", "statement": "s",
        "verdict": "verified", "published_figure": "figures-link.png",
        "reproduced_figure": "figures-link.png"}, "error", "resolves outside")
    os.symlink("loop.txt", root / "logs" / "loop.txt")
    paths.number("paper-1/self-loop", "symlink to itself", "error", "symlink loop",
                 evidence={"logs": ["logs/loop.txt"]})
    os.symlink("b.txt", root / "logs" / "a.txt")
    os.symlink("a.txt", root / "logs" / "b.txt")
    paths.number("paper-1/two-loop", "two symlinks pointing at each other", "error",
                 "symlink loop", evidence={"script": "logs/a.txt"})
    os.mkfifo(root / "logs" / "pipe.txt")
    paths.number("paper-1/fifo", "a FIFO named as a log (reading it blocks forever)", "error",
                 "not a regular file", evidence={"logs": ["logs/pipe.txt"]})
    paths.write()

    # ids and structure: duplicates, unknown fields, bad ids, bad shapes
    ids = Group(corpus, folder, "ids")
    first = ids.builder.number_claim("paper-1/dup")  # the first of two: judged
    corpus.good.append((ids.builder.header["submission_id"], first["claim_id"]))
    ids.number("paper-1/dup", "duplicate claim_id", "error", "duplicate claim_id",
               reproduced_value=90.0)
    ids.number("paper-1/unknown", "unknown field (typo)", "error", "unknown field",
               "reproduced_valeu", reproduced_valeu=93.8)
    ids.claim("unknown top-level key in the claim's evidence", {
        "claim_id": "paper-1/unknown-evidence", "kind": "theorem", "statement": "s",
        "verdict": "verified", "evidence": {"logs": [], "shell": "rm -rf /"}},
        "error", "unknown field", "evidence.shell")
    ids.number("paper 1/claim one", "claim id with spaces", "error", "claim_id",
               "should match pattern")
    ids.number("论文/c1", "claim id in Chinese", "error", "claim_id", "should match pattern")
    ids.number("paper-1/é", "claim id with an accent", "error", "claim_id",
               "should match pattern")
    ids.number("paper-1::c1", "claim id with '::' (the key separator)", "error", "claim_id")
    ids.number("paper-1/c1\x1b[2J", "claim id with an ANSI escape", "error", "claim_id")
    ids.number("p" * 201, "claim id of 201 characters", "error", "at most 200 characters")
    ids.claim("claim with no claim_id", {"kind": "theorem", "statement": "s",
                                         "verdict": "verified"},
              "error", "Field required", "claim_id")
    ids.claim("claim that is a number", 42, "error", "valid dictionary")
    ids.claim("claim that is a list", ["paper-1/x", "number"], "error", "valid dictionary")
    ids.number("paper-1/verdict-typo", "unknown verdict", "error", "verdict",
               verdict="verifeid")
    ids.number("paper-1/kind-typo", "unknown kind", "error", "kind", kind="figures")
    ids.write()
    return folder


def build_source_level(corpus: Corpus) -> tuple[Path, list[str]]:
    """Manifests and sources that are unusable as a whole: each is a source error, the run goes
    on with the good submission and exits 1."""
    folder = corpus.root / "sources"
    good = SubmissionBuilder(folder / "good", submission_id="hostile/good-submission")
    claim = good.number_claim("paper-1/good")
    corpus.good.append((good.header["submission_id"], claim["claim_id"]))
    _write(good)

    def manifest(name: str, content: bytes | str, label: str, *reason: str) -> None:
        target = folder / name
        target.mkdir(parents=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        (target / "submission.yaml").write_bytes(data)
        corpus.cases.append(Case("manifests", label, "source error", reason,
                                 source=str(target)))

    header = "submission_id: hostile/{}\npaper_id: paper-1\n"
    manifest("invalid-utf8", (HOSTILE / "invalid-utf8.yaml").read_bytes(),
             "invalid UTF-8 in the manifest", "not valid UTF-8")
    manifest("billion-laughs", (HOSTILE / "billion-laughs.yaml").read_bytes(),
             "YAML alias bomb (billion laughs)", "anchors and aliases")
    manifest("nul-byte", (HOSTILE / "nul-byte.yaml").read_bytes(),
             "raw NUL byte in the manifest", "not valid YAML/JSON",
             "unacceptable character #x0000")
    manifest("esc-byte", header.format("esc-byte") + "paper_title: \x1b[2Jgone\nclaims: []\n",
             "raw ESC byte (terminal escape) in the manifest", "unacceptable character #x001b")
    manifest("bad-date", header.format("bad-date") + "claims: []\nsubmitted: 2026-13-01\n",
             "impossible date 2026-13-01 (PyYAML raises ValueError)", "a value cannot be read",
             "month must be in 1..12")
    manifest("huge-int", header.format("huge-int") + "claims: []\nseed: " + "9" * 5000 + "\n",
             "5,000-digit integer (Python refuses to convert it)", "a value cannot be read",
             "4300 digits")
    manifest("bad-tag", header.format("bad-tag") + "claims: []\nseed: !!int x\n",
             "explicit tag on a wrong value (!!int x)", "a value cannot be read")
    manifest("python-tag", header.format("python-tag")
             + "claims: !!python/object/apply:os.system [echo pwned]\n",
             "!!python/object/apply tag (code execution in an unsafe loader)",
             "could not determine a constructor")
    manifest("too-big", header.format("too-big") + "claims: []\npaper_title: "
             + "x" * (MAX_INPUT_FILE_BYTES + 1) + "\n",
             "manifest over 5 MiB", f"over the {MAX_INPUT_FILE_BYTES}-byte limit")
    manifest("a-list", "- submission_id: a/b\n- claims: []\n", "manifest that is a list",
             "must be a mapping")
    manifest("a-number", "42\n", "manifest that is a number", "must be a mapping")
    manifest("empty", "", "empty manifest", "must be a mapping")
    manifest("comments-only", "# nothing here\n", "manifest of comments only",
             "must be a mapping")
    manifest("deep", header.format("deep") + "claims: " + "[" * 5000 + "]" * 5000 + "\n",
             "5,000-deep nested list", "nesting depth")
    manifest("broken-yaml", header.format("broken") + "claims: [\n", "unterminated YAML",
             "not valid YAML/JSON")
    manifest("claims-mapping", header.format("claims-mapping") + "claims: {a: 1}\n",
             "'claims' is a mapping", "'claims' must be a list")
    manifest("no-claims", header.format("no-claims"), "no 'claims' key",
             "'claims' must be a list")
    manifest("nul-title", header.format("nul-title") + 'paper_title: "a\\0b"\nclaims: []\n',
             "NUL escape in the paper title", "NUL character", "paper_title")
    manifest("bad-submission-id", "submission_id: 'alice bob'\npaper_id: p\nclaims: []\n",
             "submission_id with a space", "submission_id")
    manifest("header-unknown", header.format("header-unknown") + "sponsor: x\nclaims: []\n",
             "unknown field in the header", "unknown field", "sponsor")
    many = [{"claim_id": f"c{i}", "kind": "theorem", "statement": "s", "verdict": "verified"}
            for i in range(501)]
    manifest("too-many-claims", header.format("too-many") + yaml.dump({"claims": many},
                                                                      Dumper=_DUMPER),
             "501 claims", "over the limit of 500")
    manifest("zz-duplicate-submission", (folder / "good" / "submission.yaml").read_text(),
             "second folder reusing another's submission_id", "is also used by")

    # sources given on the command line
    no_manifest = corpus.root / "no-manifest"
    (no_manifest / "figures").mkdir(parents=True)
    (no_manifest / "submision.yaml").write_text(header.format("typo") + "claims: []\n")
    corpus.cases.append(Case("sources", "folder without a manifest", "refused run",
                             ("no submission manifest",), source=str(no_manifest)))
    a_file = corpus.root / "submission.yaml"
    a_file.write_text(header.format("file") + "claims: []\n")
    corpus.cases.append(Case("sources", "a file given as the folder", "refused run",
                             ("not a folder",), source=str(a_file)))
    missing = corpus.root / "does-not-exist"
    corpus.cases.append(Case("sources", "a folder that does not exist", "refused run",
                             ("no such folder",), source=str(missing)))
    return folder, [str(folder), str(no_manifest), str(a_file), str(missing)]


def refused_sources(cli: ForkedCli, corpus: Corpus, good: str
                    ) -> dict[str, tuple[Invocation, Path]]:
    """Each unusable command-line source beside a good one: one invocation each, with the run
    folder it named (which must not be made)."""
    refusals = {}
    for number, case in enumerate(c for c in corpus.cases if c.expect == "refused run"):
        assert case.source is not None
        out = corpus.root / f"run-refused-{number}"
        refusals[case.source] = (_cli(cli, "run", good, case.source, "--out", str(out),
                                      "--judge", "offline", cwd=corpus.root), out)
    return refusals


# --- running the CLI --------------------------------------------------------------------------


@dataclass
class Invocation:
    args: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def _env(cwd: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "JUDGING_", "ARGILLA_")) and k != "HF_TOKEN"}
    env.update(JUDGING_CACHE_DIR=str(cwd / "answer-cache"), HF_HUB_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1", COLUMNS="200", NO_COLOR="1")
    return env


def _cli(cli: ForkedCli, *args: str, cwd: Path) -> Invocation:
    """`judging ARGS` as a process of its own (forked from a server that imported the package
    once: tests/forked_cli.py), as a user runs it: its exit code, its stdout and stderr."""
    start = time.perf_counter()
    done = cli.run(list(args), cwd=cwd, env=_env(cwd), timeout=240)
    return Invocation(list(args), done.returncode, done.stdout, done.stderr,
                      time.perf_counter() - start)


def _lines(run_dir: Path) -> list[dict]:
    path = run_dir / "judgments.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@dataclass
class Runs:
    corpus: Corpus
    claims: Invocation
    claims_again: Invocation
    claims_lines: list[dict]
    claims_lines_again: list[dict]
    sources: Invocation
    sources_again: Invocation
    sources_lines: list[dict]
    sources_lines_again: list[dict]
    max_pixels: Invocation
    max_pixels_lines: list[dict]
    rubric: Invocation
    report: Invocation
    refusals: dict[str, tuple[Invocation, Path]]
    """Per unusable command-line source: the invocation that named it and its run folder."""


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkedCli]:
    if not JUDGING.exists():
        pytest.skip(f"console script not installed: {JUDGING}")
    base = tmp_path_factory.mktemp("cli")
    server = ForkedCli.start(base, env=_env(base), argv0=str(JUDGING))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, cli: ForkedCli) -> Runs:
    root = tmp_path_factory.mktemp("hostile")
    outside = tmp_path_factory.mktemp("outside")
    corpus = Corpus(root=root)
    claims_folder = build_claim_level(corpus, outside)
    sources_folder, sources = build_source_level(corpus)

    out_claims, out_sources = root / "run-claims", root / "run-sources"
    first = _cli(cli, "run", str(claims_folder), "--out", str(out_claims), "--judge", "offline",
                 cwd=root)
    claims_lines = _lines(out_claims)
    again = _cli(cli, "run", str(claims_folder), "--out", str(out_claims), "--judge", "offline",
                 cwd=root)
    refusals = refused_sources(cli, corpus, sources[0])
    src = _cli(cli, "run", sources[0], "--out", str(out_sources), "--judge", "offline", cwd=root)
    sources_lines = _lines(out_sources)
    src_again = _cli(cli, "run", sources[0], "--out", str(out_sources), "--judge", "offline",
                     cwd=root)

    # --max-pixels lowers the limit: a normal 800x600 chart is refused, naming the limit
    limited = SubmissionBuilder(root / "limited" / "sub", submission_id="hostile/max-pixels")
    good = limited.number_claim("paper-1/good")
    corpus.good.append((limited.header["submission_id"], good["claim_id"]))
    chart = render_chart()  # 800x600
    limited.figure_claim("paper-1/800x600", published=chart, reproduced=chart)
    corpus.cases.append(Case("limits", "800x600 chart with --max-pixels 400000", "error",
                             ("800x600 = 480,000 pixels, over the limit of 400,000",
                              "--max-pixels"), "hostile/max-pixels", "paper-1/800x600"))
    _write(limited)
    out_limited = root / "run-max-pixels"
    limited_run = _cli(cli, "run", str(limited.root), "--out", str(out_limited), "--judge",
                       "offline", "--max-pixels", "400000", cwd=root)

    report = _cli(cli, "report", str(out_claims), cwd=root)
    rubric = _cli(cli, "rubric", "validate", str(HOSTILE / "rubric-billion-laughs.yaml"),
                  cwd=root)
    corpus.cases.append(Case("rubrics", "rubric file that is a YAML alias bomb "
                             "(judging rubric validate)", "refused", ("anchors and aliases",)))
    return Runs(corpus, first, again, claims_lines, _lines(out_claims), src, src_again,
                sources_lines, _lines(out_sources), limited_run, _lines(out_limited), rubric,
                report, refusals)


# --- the checks -------------------------------------------------------------------------------


def _contains_all(text: str, needles: tuple[str, ...]) -> bool:
    return all(needle.lower() in text.lower() for needle in needles)


def _by_key(lines: list[dict]) -> dict[tuple[str, str], list[dict]]:
    found: dict[tuple[str, str], list[dict]] = {}
    for line in lines:
        key = (line["claim"]["submission_id"], line["claim"]["claim_id"])
        found.setdefault(key, []).append(line)
    return found


def _check_claim_case(case: Case, lines: list[dict]) -> None:
    if not lines:
        case.outcome, case.detail = "MISSING", "no judgment line"
        return
    if case.expect == "scored":
        # (a duplicate's error line shares the first claim's key: it is the loader's, not ours)
        statuses = {line["status"] for line in lines if line["judge"] != "loader"}
        case.outcome = "scored" if statuses == {"scored"} else "/".join(sorted(statuses))
        case.detail = "judged normally"
        return
    errors = [line for line in lines if line["status"] == "error"
              and _contains_all(line["reason"] or "", case.reason)]
    if not errors:
        case.outcome = "/".join(sorted({line["status"] for line in lines}))
        case.detail = "; ".join(line["reason"] or "" for line in lines)[:300]
        return
    case.outcome = "error"
    case.detail = errors[0]["reason"]
    figure_lines = [line for line in lines if (line.get("rubric") or {}).get("id")
                    == "figure-match"]
    if figure_lines and any(line["status"] != "error" for line in figure_lines):
        case.outcome = "figure rubric not an error"


def _evaluate(runs: Runs) -> list[Case]:
    """Fill in every case's outcome from the runs (idempotent)."""
    by_key = _by_key(runs.claims_lines + runs.max_pixels_lines)
    source_output = runs.sources.stderr
    for case in runs.corpus.cases:
        if case.expect == "source error":
            assert case.source is not None
            matching = [line for line in source_output.splitlines()
                        if line.startswith("source error: ")
                        and line.removeprefix("source error: ").startswith(
                            (case.source + "/", case.source + ":"))]
            case.outcome = ("MISSING" if not matching else "source error"
                            if _contains_all(matching[0], case.reason) else "other reason")
            case.detail = matching[0].removeprefix("source error: ").replace(
                str(runs.corpus.root), "") if matching else ""
        elif case.expect == "refused run":
            assert case.source is not None
            invocation, out = runs.refusals[case.source]
            said = invocation.stderr.strip().splitlines()
            refused = (invocation.code == 1 and len(said) == 1 and not out.exists()
                       and case.source in said[0] and _contains_all(said[0], case.reason))
            case.outcome = "refused run" if refused else f"exit {invocation.code}"
            case.detail = (said[-1] if said else "").replace(str(runs.corpus.root), "")
            case.seconds = invocation.seconds
        elif case.expect == "refused":
            refused = runs.rubric.code == 1 and _contains_all(runs.rubric.stderr, case.reason)
            case.outcome = "refused" if refused else f"exit {runs.rubric.code}"
            case.detail = runs.rubric.stderr.strip().splitlines()[-1] if runs.rubric.stderr \
                else ""
            case.seconds = runs.rubric.seconds
        else:
            assert case.submission_id is not None and case.claim_id is not None
            _check_claim_case(case, by_key.get((case.submission_id, case.claim_id), []))
    return runs.corpus.cases


def _table(cases: list[Case]) -> str:
    rows = [("group", "hostile input", "expected", "outcome", "reason (shortened)")]
    for case in cases:
        detail = re.sub(r" \([^()]*submission\.yaml:\d+\)$", "", case.detail.replace("\n", " "))
        detail = detail.removeprefix("claim could not be loaded: ").removeprefix(
            "figure cannot be judged: ")
        detail = detail if len(detail) <= 110 else detail[:107] + "..."
        rows.append((case.group, case.name[:60], case.expect, case.outcome, detail))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    out = []
    for row in rows:
        out.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[4])
    return "\n".join(out)


def test_no_traceback_and_exit_codes(runs: Runs) -> None:
    for name in ("claims", "claims_again", "sources", "sources_again", "max_pixels", "rubric",
                 "report"):
        invocation: Invocation = getattr(runs, name)
        assert "Traceback" not in invocation.output, (name, invocation.output[-3000:])
    for source, (invocation, _) in runs.refusals.items():
        assert "Traceback" not in invocation.output, (source, invocation.output[-3000:])
    # bad claims are recorded, not fatal
    assert runs.claims.code == 0, runs.claims.output[-3000:]
    assert runs.claims_again.code == 0, runs.claims_again.output[-3000:]
    assert runs.max_pixels.code == 0, runs.max_pixels.output[-3000:]
    # a whole manifest that is unusable fails the run, after judging the rest
    assert runs.sources.code == 1 and runs.sources_again.code == 1
    assert runs.rubric.code == 1
    # the run directory stays readable: the report of the hostile run is written
    assert runs.report.code == 0, runs.report.output[-3000:]


def test_overflowing_numbers_are_stored_readably(runs: Runs) -> None:
    by_key = _by_key(runs.claims_lines)
    (line,) = by_key[("hostile/text", "paper-1/overflow")]
    signals = line["signals"]
    assert signals["numeric.abs_diff"]["status"] == "absent"
    assert "overflows" in signals["numeric.abs_diff"]["reason"]
    assert signals["numeric.within_tolerance"]["value"] is False
    # a falsified claim also gets its falsification-audit line: the verdict rubric's is read
    (line,) = [j for j in by_key[("hostile/text", "paper-1/near-max")]
               if j["rubric"]["id"] != "falsification-audit"]
    answers = {a["criterion_id"]: a for a in line["answers"]}
    assert answers["value_in_logs"]["value"] is False, answers["value_in_logs"]


def test_every_hostile_input_is_recorded_with_its_reason(runs: Runs) -> None:
    cases = _evaluate(runs)
    wrong = [case for case in cases if case.outcome != case.expect]
    assert not wrong, "\n" + _table(wrong)


def test_every_good_claim_is_judged(runs: Runs) -> None:
    by_key = _by_key(runs.claims_lines + runs.sources_lines + runs.max_pixels_lines)
    assert len(runs.corpus.good) == 8
    for key in runs.corpus.good:
        # (the duplicate of paper-1/dup has an error line under the same key: the loader's)
        lines = [line for line in by_key.get(key, []) if line["judge"] != "loader"]
        assert lines, f"good claim {key} was not judged"
        assert {line["status"] for line in lines} == {"scored"}, (key, lines)
    # a source error never leaves lines of its own: only the good submission was judged
    assert {line["claim"]["submission_id"] for line in runs.sources_lines} == \
        {"hostile/good-submission"}


def test_a_second_run_adds_nothing(runs: Runs) -> None:
    assert len(runs.claims_lines_again) == len(runs.claims_lines)
    assert len(runs.sources_lines_again) == len(runs.sources_lines)
    assert "0 new judgment line(s)" in runs.claims_again.stdout
    assert "0 new judgment line(s)" in runs.sources_again.stdout


def test_hostile_claim_keys_are_safe(runs: Runs) -> None:
    """An error line's claim key carries the participant's claim id only when it is a valid id:
    NUL, escapes, spaces or '::' never reach file names, records or terminals."""
    for line in runs.claims_lines:
        claim_id = line["claim"]["claim_id"]
        assert re.fullmatch(r"#claim-\d+", claim_id) or VALID_ID.fullmatch(claim_id), claim_id
    assert "\x1b" not in runs.claims.output and "\x00" not in runs.claims.output


def test_summary_table(runs: Runs) -> None:
    cases = _evaluate(runs)
    print(f"\n\nhostile inputs tried: {len(cases)}\n")
    print(_table(cases))
    timings = [("judging run (claim-level corpus)", runs.claims.seconds),
               ("judging run again (resume, nothing to do)", runs.claims_again.seconds),
               ("judging run (source-level corpus)", runs.sources.seconds),
               ("judging rubric validate (alias bomb)", runs.rubric.seconds)]
    print("\n" + "\n".join(f"{name}: {seconds:.2f} s" for name, seconds in timings))
    assert len(cases) == EXPECTED_CASES
    groups: dict[str, int] = {}
    for case in cases:
        groups[case.group] = groups.get(case.group, 0) + 1
    print("per group: " + ", ".join(f"{g} {n}" for g, n in groups.items()))


# --- refused before anything is constructed: timings, in process -----------------------------


def _timed(func, *args, **kwargs) -> tuple[float, BaseException | None]:
    start = time.perf_counter()
    try:
        func(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - returned to the caller
        return time.perf_counter() - start, exc
    return time.perf_counter() - start, None


#: A refusal takes milliseconds; what it prevents takes minutes (387,420,489 strings expanded,
#: a 64 GiB file read, a quadratic pass over 5,000,000 characters). The bound sits between the
#: two with room for a machine loaded many times over (the suite's workers share two cores): it
#: tells a refusal from the work it refuses, and is not a speed target (benchmarks measure speed).
REFUSED_WITHIN_S = 5.0


def test_bombs_are_refused_fast(tmp_path: Path) -> None:
    """The loader checks the size and refuses anchors/aliases before constructing anything."""
    laughs = tmp_path / "laughs"
    laughs.mkdir()
    shutil.copy(HOSTILE / "billion-laughs.yaml", laughs / "submission.yaml")
    timings: list[tuple[str, float]] = []
    seconds, error = _timed(load_submission, laughs)
    timings.append(("manifest alias bomb (load_submission)", seconds))
    assert isinstance(error, ManifestError) and "anchors and aliases" in str(error)
    assert seconds < REFUSED_WITHIN_S, seconds

    seconds, error = _timed(load_rubric_file, HOSTILE / "rubric-billion-laughs.yaml")
    timings.append(("rubric alias bomb (load_rubric_file)", seconds))
    assert isinstance(error, RubricError) and "anchors and aliases" in str(error)
    assert str(error).startswith(str(HOSTILE / "rubric-billion-laughs.yaml") + ":2:")
    assert seconds < REFUSED_WITHIN_S, seconds

    # just over the byte limit: refused from its size alone (stat), not read
    big = tmp_path / "big"
    big.mkdir()
    (big / "submission.yaml").write_bytes(b"paper_title: " + b"x" * MAX_INPUT_FILE_BYTES)
    seconds, error = _timed(read_document, big / "submission.yaml", error_class=ManifestError)
    timings.append(("manifest of 5 MiB + 14 bytes (size check)", seconds))
    assert isinstance(error, ManifestError) and "over the" in str(error)
    # Refused from its size, never read: a sparse 64 GiB manifest (reading it would take
    # minutes and more memory than the machine has) is refused as fast.
    with (big / "submission.yaml").open("r+b") as huge:
        huge.truncate(64 << 30)
    seconds, error = _timed(read_document, big / "submission.yaml", error_class=ManifestError)
    timings.append(("sparse manifest of 64 GiB (size check)", seconds))
    assert isinstance(error, ManifestError) and "over the" in str(error)
    assert seconds < REFUSED_WITHIN_S, seconds

    # a 5,000,000-character justification, under the byte limit: parsed, the claim refused
    builder = SubmissionBuilder(tmp_path / "five-mb")
    builder.number_claim("paper-1/c1", justification="x" * 5_000_000)
    builder.number_claim("paper-1/c2")
    folder = _write(builder)
    assert 5_000_000 < (folder / "submission.yaml").stat().st_size < MAX_INPUT_FILE_BYTES
    seconds, error = _timed(load_submission, folder)
    timings.append(("5,000,000-character justification (parsed, claim refused)", seconds))
    print("\n" + "\n".join(f"{name}: {1000 * seconds:.1f} ms" for name, seconds in timings))
    assert error is None
    loaded = load_submission(folder)
    assert [c.claim.claim_id for c in loaded.claims] == ["paper-1/c2"]
    assert "at most 20000 characters" in loaded.problems[0].reason
    assert seconds < REFUSED_WITHIN_S, seconds
