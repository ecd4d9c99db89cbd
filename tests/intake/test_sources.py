"""Hub sources (hf://spaces/..., hf://datasets/...) against a fake Hub on 127.0.0.1.

In-process tests point the already-imported huggingface_hub at the fake hub with
`FakeHub.patch(monkeypatch, ...)`; the CLI test of a Space runs `judging run` in a subprocess with
HF_ENDPOINT and HF_HOME in its environment, as a user would, and the CLI's source errors run it in
this process. Nothing leaves the loopback interface and nothing is written outside pytest's temp
dirs.
"""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from PIL import Image, ImageDraw

from judging.cli import main
from judging.errors import SourceError
from judging.intake.manifest import load_submission
from judging.intake.sources import (
    HubSource,
    expand_source,
    fetch_hub_source,
    parse_hub_source,
)
from tests.conftest import JUDGING_CLI
from tests.fakehub import GOOD_TOKEN, FakeHub, hub_environ, patch_hub

UNREACHABLE = "http://127.0.0.1:1"


# --- a small valid submission ----------------------------------------------------------------


def _figure(path: Path, *, shift: int = 0) -> None:
    """A small line plot: a falling curve on a white background."""
    image = Image.new("RGB", (160, 120), "white")
    draw = ImageDraw.Draw(image)
    draw.line([(10, 110), (10, 10)], fill="black")
    draw.line([(10, 110), (150, 110)], fill="black")
    points = [(10 + 14 * i, 20 + shift + int(80 * (1 - 0.8 ** i))) for i in range(11)]
    draw.line(points, fill=(31, 119, 180), width=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")


def make_submission(folder: Path, submission_id: str = "alice/repro") -> Path:
    """A submission with one number claim and one figure claim (two PNGs)."""
    folder.mkdir(parents=True, exist_ok=True)
    _figure(folder / "figures" / "paper_fig3.png")
    _figure(folder / "figures" / "repro_fig3.png", shift=2)
    (folder / "logs").mkdir(exist_ok=True)
    (folder / "logs" / "train.txt").write_text(
        "step 10000 val_loss 0.229\nstep 20000 val_loss 0.185\nfinal top1 93.80\n")
    (folder / "run.py").write_text("print('training...')\n")
    manifest = {
        "submission_id": submission_id,
        "paper_id": "neurips26-4821",
        "paper_title": "Sparse Warmup Schedules for Transformers",
        "agent": {"name": "ml-intern", "model": "test-model"},
        "human_help": "none",
        "claims": [
            {
                "claim_id": "neurips26-4821/c1",
                "kind": "number",
                "source": "Table 2",
                "statement": "ViT-S/4 with sparse warmup reaches 94.1% top-1 accuracy on CIFAR-10.",
                "reported_value": 94.1,
                "reproduced_value": 93.8,
                "tolerance": {"absolute": 0.5},
                "verdict": "verified",
                "justification": "logs/train.txt reports `final top1 93.80`, 0.3 points below "
                                 "the reported 94.1 and inside the 0.5-point tolerance.",
                "evidence": {"script": "run.py", "logs": ["logs/train.txt"]},
            },
            {
                "claim_id": "neurips26-4821/c2",
                "kind": "figure",
                "source": "Figure 3",
                "statement": "Validation loss falls below 0.25 by step 10k.",
                "published_figure": "figures/paper_fig3.png",
                "reproduced_figure": "figures/repro_fig3.png",
                "verdict": "verified",
                "justification": "logs/train.txt shows val_loss 0.229 at step 10000; the "
                                 "reproduced curve in figures/repro_fig3.png has the published "
                                 "shape.",
                "evidence": {"script": "run.py", "logs": ["logs/train.txt"]},
            },
        ],
    }
    (folder / "submission.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return folder


CLAIM_IDS = {"neurips26-4821/c1", "neurips26-4821/c2"}


@pytest.fixture(scope="module")
def space_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_submission(tmp_path_factory.mktemp("space") / "repro")


@pytest.fixture(scope="module")
def hub(space_folder: Path, tmp_path_factory: pytest.TempPathFactory):
    dataset = tmp_path_factory.mktemp("dataset")
    make_submission(dataset / "alice", submission_id="alice/repro-in-dataset")
    make_submission(dataset / "bob", submission_id="bob/repro-in-dataset")
    (dataset / "README.md").write_text("# submissions\n")
    with FakeHub({
        ("space", "alice/repro"): space_folder,
        ("space", "alice/repro", "v1"): {"submission.yaml": "not: [a, submission\n"},
        ("space", "alice/private"): space_folder,
        ("space", "alice/gated"): space_folder,
        ("dataset", "org/subs"): dataset,
    }, private=[("space", "alice/private")], gated=[("space", "alice/gated")]) as fake:
        yield fake


@pytest.fixture
def fake(hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The module's fake hub, with this process's huggingface_hub pointed at it."""
    hub.clear()
    hub.faults.clear()
    hub.patch(monkeypatch, tmp_path / "hf-home")
    yield hub
    hub.faults.clear()


def _real_files(root: Path) -> set[str]:
    """Files under root, outside huggingface_hub's .cache bookkeeping; asserts none is a link."""
    out = set()
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] == ".cache":
            continue
        assert not path.is_symlink(), f"{rel} is a symlink"
        if path.is_file():
            out.add(rel.as_posix())
    return out


# --- parse_hub_source ------------------------------------------------------------------------


@pytest.mark.parametrize("spec, expected", [
    ("hf://spaces/alice/repro", HubSource("space", "alice/repro", None, None)),
    ("hf://datasets/org/subs", HubSource("dataset", "org/subs", None, None)),
    ("hf://spaces/alice/repro@v2", HubSource("space", "alice/repro", "v2", None)),
    ("hf://spaces/alice/repro@0123456789abcdef0123456789abcdef01234567",
     HubSource("space", "alice/repro", "0123456789abcdef0123456789abcdef01234567", None)),
    ("hf://datasets/org/subs/alice", HubSource("dataset", "org/subs", None, "alice")),
    ("hf://datasets/org/subs@main/teams/alice",
     HubSource("dataset", "org/subs", "main", "teams/alice")),
    ("hf://spaces/Org-1/my_repo.v2", HubSource("space", "Org-1/my_repo.v2", None, None)),
])
def test_parse_good_specs(spec: str, expected: HubSource) -> None:
    source = parse_hub_source(spec)
    assert source == expected
    assert source.spec == spec
    assert parse_hub_source(source.spec) == source


@pytest.mark.parametrize("spec, message", [
    ("hf://models/x/y", "is not a Hub source: use hf://spaces/OWNER/NAME"),
    ("hf://spaces/onlyname", "is not a Hub source"),
    ("hf://spaces/", "is not a Hub source"),
    ("hf://buckets/a/b", "is not a Hub source"),
    ("hf://datasets/org/subs/../../etc", "must not contain '..'"),
    ("hf://datasets/org/subs/a/../b", "must not contain '..'"),
    ("hf://spaces/alice/repro@", "is not a Hub source"),
])
def test_parse_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(SourceError, match=message.replace(".", r"\.").replace("(", r"\(")) as info:
        parse_hub_source(spec)
    assert spec in str(info.value)


# --- downloads (in-process) ------------------------------------------------------------------


def test_space_downloads_to_real_files_and_loads(fake: FakeHub, tmp_path: Path,
                                                 space_folder: Path) -> None:
    root = tmp_path / "downloads"
    folders = expand_source("hf://spaces/alice/repro", download_root=root)
    assert folders == [root / "spaces" / "alice" / "repro" / "@main"]
    folder = folders[0]
    expected = {p.relative_to(space_folder).as_posix()
                for p in space_folder.rglob("*") if p.is_file()}
    assert _real_files(folder) == expected
    for name in expected:
        assert (folder / name).read_bytes() == (space_folder / name).read_bytes()

    loaded = load_submission(folder)
    assert loaded.problems == []
    assert loaded.header.submission_id == "alice/repro"
    assert {c.key.claim_id for c in loaded.claims} == CLAIM_IDS
    figure = next(c for c in loaded.claims if c.claim.kind.value == "figure")
    assert figure.published_path == (folder / "figures" / "paper_fig3.png").resolve()
    assert figure.reproduced_path.is_file()

    # what snapshot_download asked for: info, recursive tree, then HEAD + GET per file, no xet
    sha = fake.sha("space", "alice/repro")
    assert fake.requests[:2] == [("GET", "/api/spaces/alice/repro/revision/main"),
                                 ("GET", f"/api/spaces/alice/repro/tree/{sha}")]
    assert "recursive=true" in fake.details[1].query.lower()
    assert fake.downloaded("space", "alice/repro") == expected
    for name in expected:
        assert ("HEAD", f"/spaces/alice/repro/resolve/{sha}/{name}") in fake.requests
    assert fake.unexpected == []
    assert all(r.authorization is None for r in fake.details), "no token may be sent"
    # the download is pinned to the commit listed (its limits checked on that listing): no
    # branch ref is kept in huggingface_hub's own cache (the test's HF home, never the user's)
    assert not list((tmp_path / "hf-home").rglob("refs/*"))


def test_second_fetch_only_checks_the_revision(fake: FakeHub, tmp_path: Path) -> None:
    root = tmp_path / "downloads"
    source = parse_hub_source("hf://spaces/alice/repro")
    first = fetch_hub_source(source, download_root=root)
    fake.clear()
    assert fetch_hub_source(source, download_root=root) == first
    # the revision, and its listing (the host's download limits are checked on it): no file
    sha = fake.sha("space", "alice/repro")
    assert fake.requests == [("GET", "/api/spaces/alice/repro/revision/main"),
                             ("GET", f"/api/spaces/alice/repro/tree/{sha}")]


def test_dataset_subfolder_downloads_only_that_subfolder(fake: FakeHub, tmp_path: Path) -> None:
    root = tmp_path / "downloads"
    folders = expand_source("hf://datasets/org/subs/alice", download_root=root)
    repo_dir = root / "datasets" / "org" / "subs" / "@main"
    assert folders == [repo_dir / "alice"]
    assert {f.split("/")[0] for f in _real_files(repo_dir)} == {"alice"}
    assert {f.split("/")[0] for f in fake.downloaded("dataset", "org/subs")} == {"alice"}
    loaded = load_submission(folders[0])
    assert loaded.header.submission_id == "alice/repro-in-dataset"
    assert {c.key.claim_id for c in loaded.claims} == CLAIM_IDS


def test_dataset_root_expands_to_its_submission_subfolders(fake: FakeHub, tmp_path: Path) -> None:
    root = tmp_path / "downloads"
    folders = expand_source("hf://datasets/org/subs", download_root=root)
    repo_dir = root / "datasets" / "org" / "subs" / "@main"
    assert folders == [repo_dir / "alice", repo_dir / "bob"]
    assert "README.md" in _real_files(repo_dir)


def test_revision_by_branch_and_by_commit(fake: FakeHub, tmp_path: Path) -> None:
    v1 = fetch_hub_source(parse_hub_source("hf://spaces/alice/repro@v1"),
                          download_root=tmp_path / "a")
    assert _real_files(v1) == {"submission.yaml"}
    assert ("GET", "/api/spaces/alice/repro/revision/v1") in fake.requests

    sha = fake.sha("space", "alice/repro")
    fake.clear()
    folder = fetch_hub_source(parse_hub_source(f"hf://spaces/alice/repro@{sha}"),
                              download_root=tmp_path / "b")
    assert "submission.yaml" in _real_files(folder)
    # a commit hash needs no revision lookup
    assert not any(path.startswith("/api/spaces/alice/repro/revision") for _, path in
                   fake.requests)


def test_private_repo_with_token(fake: FakeHub, monkeypatch: pytest.MonkeyPatch,
                                 tmp_path: Path) -> None:
    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    folder = fetch_hub_source(parse_hub_source("hf://spaces/alice/private"),
                              download_root=tmp_path)
    assert "submission.yaml" in _real_files(folder)
    assert {r.authorization for r in fake.details} == {f"Bearer {GOOD_TOKEN}"}


# --- errors (in-process) ---------------------------------------------------------------------


@pytest.mark.parametrize("spec, token", [
    ("hf://spaces/alice/nope", None),
    ("hf://datasets/alice/nope", GOOD_TOKEN),
    ("hf://spaces/alice/private", None),
    ("hf://spaces/alice/private", "hf_wrong_token"),
])
def test_missing_or_private_repo(fake: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                 spec: str, token: str | None) -> None:
    if token:
        monkeypatch.setenv("HF_TOKEN", token)
    with pytest.raises(SourceError) as info:
        expand_source(spec, download_root=tmp_path)
    message = str(info.value)
    assert message.startswith(spec + ": ")
    assert "not found" in message and "HF_TOKEN" in message
    assert not any(method == "GET" and "/resolve/" in path for method, path in fake.requests)


def test_gated_repo(fake: FakeHub, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="gated.*HF_TOKEN"):
        expand_source("hf://spaces/alice/gated", download_root=tmp_path)


def test_missing_revision(fake: FakeHub, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="revision 'nope' not found"):
        expand_source("hf://spaces/alice/repro@nope", download_root=tmp_path)


def test_missing_subfolder(fake: FakeHub, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="subfolder 'carol' is not in the repo"):
        expand_source("hf://datasets/org/subs/carol", download_root=tmp_path)


def test_unreachable_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    patch_hub(monkeypatch, UNREACHABLE, tmp_path / "hf-home")
    with pytest.raises(SourceError, match="cannot reach the Hugging Face Hub") as info:
        expand_source("hf://spaces/alice/repro", download_root=tmp_path / "downloads")
    assert str(info.value).startswith("hf://spaces/alice/repro: ")


# --- rough edges of fetch_hub_source, fixed: hostile repo ids, paths, faults, revisions -------


@pytest.mark.parametrize("spec", ["hf://spaces/alice/x--y", "hf://spaces/alice/..",
                                  "hf://spaces/alice/.hidden"])
def test_repo_id_the_hub_refuses_is_a_source_error(fake: FakeHub, tmp_path: Path,
                                                   spec: str) -> None:
    with pytest.raises(SourceError):
        expand_source(spec, download_root=tmp_path)


def test_subfolder_cannot_name_a_local_folder(fake: FakeHub, tmp_path: Path) -> None:
    outside = make_submission(tmp_path / "outside" / "victim", submission_id="x/victim")
    spec = f"hf://datasets/org/subs/{outside}"  # .../subs//tmp/.../victim
    try:
        folders = expand_source(spec, download_root=tmp_path / "downloads")
    except SourceError:
        return
    assert all(f.resolve().is_relative_to((tmp_path / "downloads").resolve()) for f in folders)


class _TimeWithoutSleep:
    """huggingface_hub's `time` module minus the 1 s sleeps between download retries."""

    def __getattr__(self, name: str):
        import time
        return getattr(time, name)

    @staticmethod
    def sleep(seconds: float) -> None:
        pass


def test_connection_lost_during_download_is_a_source_error(
        fake: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import huggingface_hub.file_download as file_download
    monkeypatch.setattr(file_download, "time", _TimeWithoutSleep())
    fake.faults.append(("GET", r"/resolve/.*/submission\.yaml$", 0))
    with pytest.raises(SourceError):
        expand_source("hf://spaces/alice/repro", download_root=tmp_path)


def test_hub_http_error_is_one_line(fake: FakeHub, tmp_path: Path) -> None:
    fake.faults.append(("GET", r"/resolve/.*/submission\.yaml$", 503))
    with pytest.raises(SourceError) as info:
        expand_source("hf://spaces/alice/repro", download_root=tmp_path)
    assert "\n" not in str(info.value)


def test_revisions_do_not_share_a_folder(fake: FakeHub, tmp_path: Path) -> None:
    main = expand_source("hf://spaces/alice/repro", download_root=tmp_path)[0]
    v1 = expand_source("hf://spaces/alice/repro@v1", download_root=tmp_path)[0]
    assert main != v1
    assert "figures/paper_fig3.png" not in _real_files(v1)


# --- the CLI, as a user runs it --------------------------------------------------------------


def _judging(args: list[str], env: dict[str, str], cwd: Path, *, timeout: float = 60
             ) -> subprocess.CompletedProcess:
    env = {**env, "JUDGING_JUDGE": "offline", "NO_COLOR": "1", "COLUMNS": "400"}
    env.pop("JUDGING_RUBRICS_DIR", None)
    return subprocess.run([*JUDGING_CLI, *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def test_cli_run_on_a_space(hub: FakeHub, tmp_path: Path) -> None:
    hub.clear()
    out = tmp_path / "run"
    env = hub_environ(hub.url, tmp_path / "hf-home")
    result = _judging(["run", "hf://spaces/alice/repro", "--out", str(out)], env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in
             (out / "judgments.jsonl").read_text().splitlines() if line.strip()]
    assert {line["claim"]["claim_id"] for line in lines} == CLAIM_IDS
    assert {line["claim"]["submission_id"] for line in lines} == {"alice/repro"}
    # rubrics were found in the checkout: the figure claim got the figure rubric too
    assert {"verdict-justification", "figure-match"} <= {line["rubric"]["id"] for line in lines}
    assert all(line["status"] != "error" for line in lines), [line["reason"] for line in lines]
    downloaded = out / "sources" / "spaces" / "alice" / "repro" / "@main"
    assert "submission.yaml" in _real_files(downloaded)
    assert hub.downloaded("space", "alice/repro") >= {"submission.yaml",
                                                      "figures/paper_fig3.png",
                                                      "figures/repro_fig3.png"}
    assert hub.unexpected == []


@pytest.mark.parametrize("spec, endpoint, needle", [
    ("hf://spaces/alice/nope", None, "not found"),
    ("hf://spaces/alice/private", None, "HF_TOKEN"),
    ("hf://spaces/alice/repro", UNREACHABLE, "cannot reach the Hugging Face Hub"),
])
def test_cli_source_errors(hub: FakeHub, tmp_path: Path, spec: str, endpoint: str | None,
                           needle: str, monkeypatch: pytest.MonkeyPatch,
                           caplog: pytest.LogCaptureFixture) -> None:
    # In this process (the Hub patched in; test_cli_run_on_a_space runs the CLI as a process,
    # with HF_ENDPOINT): what the process would print on stderr is the CLI's own lines and the
    # warnings and errors it logs (its log handler writes them there).
    patch_hub(monkeypatch, endpoint or hub.url, tmp_path / "hf-home")
    monkeypatch.setenv("JUDGING_JUDGE", "offline")
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.delenv("JUDGING_RUBRICS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["run", spec, "--out", str(tmp_path / "run")])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # handled, no traceback
    logged = [f"{r.levelname} {r.getMessage()}" for r in caplog.records
              if r.levelno >= logging.WARNING]
    errors = [line for line in [*result.stderr.splitlines(), *logged] if "error" in line.lower()]
    assert len(errors) == 1, (result.stderr, logged)
    assert spec in errors[0] and needle in errors[0], result.stderr

