"""The shape issue 28 gave the package, kept: a runner that only wires its parts, small
functions in the run stage, a top level of shared vocabulary, one LLM send loop; and issue 43's
one chooser of the AI's line. A merge that grows them past the bounds fails here, not in the
next review."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "judging"
MAX_RUNNER_FILE_LINES = 300
MAX_RUNNER_CLASS_LINES = 200
MAX_RUNNER_ATTRIBUTES = 10
MAX_RUN_FUNCTION_LINES = 60
MAX_TOP_LEVEL_FILES = 10


# A source's syntax tree and its nodes, made once per text: the tests below walk every module of
# the package, a dozen times over without this (issue 43: a minute of the suite on this machine).
# The trees are only read.
@functools.cache
def _parsed(source: str) -> ast.Module:
    return ast.parse(source)


@functools.cache
def _walked(source: str) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(_parsed(source)))


@pytest.fixture(scope="module", autouse=True)
def _trees_for_this_module_only() -> Iterator[None]:
    yield  # the package's trees are held while this module runs, not for the rest of the suite
    _walked.cache_clear()
    _parsed.cache_clear()


def _runner_class() -> ast.ClassDef:
    tree = _parsed((PACKAGE / "run" / "runner.py").read_text(encoding="utf-8"))
    (runner,) = [node for node in tree.body if isinstance(node, ast.ClassDef)
                 and node.name == "Runner"]
    return runner


def _self_attributes(node: ast.ClassDef) -> set[str]:
    names = set()
    for child in ast.walk(node):
        target = child.target if isinstance(child, ast.AnnAssign) else child
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and target.value.id == "self" and isinstance(target.ctx, ast.Store):
            names.add(target.attr)
    return names


def test_the_runner_only_wires() -> None:
    lines = (PACKAGE / "run" / "runner.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_RUNNER_FILE_LINES
    runner = _runner_class()
    assert runner.end_lineno is not None
    assert runner.end_lineno - runner.lineno + 1 <= MAX_RUNNER_CLASS_LINES
    attributes = _self_attributes(runner)
    assert "request" in attributes  # the count below reads what it should
    assert len(attributes) <= MAX_RUNNER_ATTRIBUTES, sorted(attributes)


def test_run_functions_are_short() -> None:
    long = []
    for path in sorted((PACKAGE / "run").glob("*.py")):
        for node in _walked(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                if node.end_lineno - node.lineno + 1 > MAX_RUN_FUNCTION_LINES:
                    long.append(f"{path.name}:{node.name}")
    assert not long


def test_the_run_stage_reaches_judges_through_their_interface() -> None:
    pattern = re.compile(r"OpenAIJudge|\.price\[|judge\.cache|judge\.options|latest_line\(")
    found = [f"{path.name}:{number}" for path in sorted((PACKAGE / "run").glob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert not found


def test_the_top_level_is_vocabulary() -> None:
    assert len(list(PACKAGE.glob("*.py"))) <= MAX_TOP_LEVEL_FILES


#: The `openai` client's methods that send a request to the model: the typed ones, old and new,
#: and the raw `post(..., cast_to=...)` the transport uses.
SENDING_METHODS = (("chat", "completions", "create"), ("chat", "completions", "parse"),
                   ("chat", "completions", "stream"), ("completions", "create"),
                   ("responses", "create"), ("responses", "parse"), ("responses", "stream"))


def _attribute_chain(node: ast.expr) -> tuple[str, ...]:
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return tuple(reversed(names))


def llm_send_sites(root=PACKAGE) -> list[str]:
    """Every call in the package that sends a request to a model through the `openai` client:
    `x.chat.completions.create(...)`, `x.beta.chat.completions.parse(...)`,
    `x.responses.create(...)` and the like, and the raw `x.post(..., cast_to=...)`."""
    sites = []
    for path in sorted(root.rglob("*.py")):
        for node in _walked(path.read_text(encoding="utf-8")):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            chain = _attribute_chain(node.func)
            typed = any(chain[-len(method):] == method for method in SENDING_METHODS)
            raw = chain[-1:] == ("post",) and any(k.arg == "cast_to" for k in node.keywords)
            if typed or raw:
                sites.append((str(path.relative_to(root)), node.lineno))
    return [f"{name}:{line}" for name, line in sorted(sites)]


def test_one_llm_send_loop() -> None:
    """Requests leave for the model from one place (`post_chat` in `judges/openai/transport.py`),
    which the one call loop (`Transport.ask`), the judge, the extractor and the endpoint check's
    one-token probe all go through; a second loop that sends on its own fails here. Issue 28's
    own check (the phrase "structured output" once) is kept beside it."""
    sites = llm_send_sites()
    assert len(sites) == 1, sites
    assert sites[0].startswith("judges/openai/transport.py:"), sites
    said = sum(path.read_text(encoding="utf-8").count('"structured output"')
               for path in PACKAGE.rglob("*.py"))
    assert said == 1


def test_long_option_lists_are_grouped_in_help() -> None:
    """A command with more than ten options shows them in titled sections of --help, no more
    than ten left under the plain "Options" (issue 43: calibrate, rerun and watch had 16 to 23
    in one list)."""
    import click

    from judging.cli import main
    from judging.cli.options import MAX_UNGROUPED_OPTIONS, SectionedCommand

    def commands(command: click.Command, path: str):
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from commands(sub, f"{path} {name}".strip())
        else:
            yield path, command

    crowded = []
    for path, command in commands(main, ""):
        options = [param for param in command.params if isinstance(param, click.Option)]
        if len(options) <= MAX_UNGROUPED_OPTIONS:
            continue
        plain = [param for param in options if not hasattr(param, "help_section")]
        if not isinstance(command, SectionedCommand) or len(plain) > MAX_UNGROUPED_OPTIONS:
            crowded.append(f"{path}: {len(plain)} of {len(options)} ungrouped")
    assert not crowded


def test_text_limits_are_named() -> None:
    """A cut of text to fit a limit of the models names the limit (`models.MAX_*_CHARS`): a
    number spelled in its place (`[:4000]`, `max_length=4000`) drifts when the limit changes
    (issue 43: `[:4000]` stood 20 times in 7 files)."""
    from judging import models

    limits = {value for name, value in vars(models).items()
              if name.startswith("MAX_") and name.endswith("_CHARS")}
    assert limits  # the check reads the constants it guards
    spelled = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in _walked(path.read_text(encoding="utf-8")):
            number = None
            if isinstance(node, ast.Slice) and node.lower is None and node.step is None:
                number = node.upper
            elif isinstance(node, ast.keyword) and node.arg == "max_length":
                number = node.value
            if isinstance(number, ast.Constant) and number.value in limits:
                spelled.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not spelled


def _face_imports(package: Path) -> list[str]:
    """The places inside `package` (its modules and subpackages, its own __init__ aside) that
    import from the package's face: `from judging.x import y` or `import judging.x`."""
    face = ".".join(package.relative_to(ROOT).parts)
    found = []
    for path in sorted(package.rglob("*.py")):
        if path == package / "__init__.py":
            continue
        for node in _walked(path.read_text(encoding="utf-8")):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == face or \
                    isinstance(node, ast.Import) and any(a.name == face for a in node.names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_package_faces_are_not_imported_from_inside() -> None:
    """A package's `__init__` is its face for the other stages; its own modules import each other
    by their module paths (`judging.judges.prompt`, not `from judging.judges import prompt`), so
    that the face can re-export anything without a module inside waiting on it (issue 43)."""
    packages = [path.parent for path in PACKAGE.rglob("__init__.py")]
    assert PACKAGE / "judges" in packages and PACKAGE / "calibrate" in packages
    assert not [place for package in packages for place in _face_imports(package)]


def test_run_directory_files_are_named_by_the_layout() -> None:
    """A stage takes a run-directory file's name from `judging/rundir/layout.py` (issue 43:
    merge spelled run.json, rerun its log files). The commands' messages (judging/cli/) say
    where a file went in words the organizer reads, and are left to them."""
    from judging.rundir import layout

    names = {name for key, value in vars(layout).items() if key.isupper()
             for name in (value.values() if isinstance(value, dict) else [value])
             if isinstance(name, str) and "." in name}
    assert "run.json" in names and "stdout.txt" in names
    spelled = [f"{path.relative_to(PACKAGE)}:{node.lineno}"
               for path in sorted(PACKAGE.rglob("*.py"))
               if path != PACKAGE / "rundir" / "layout.py" and "cli" not in path.parts
               for node in _walked(path.read_text(encoding="utf-8"))
               if isinstance(node, ast.Constant) and node.value in names]
    assert not spelled


def test_the_send_site_finder_sees_every_way_to_send(tmp_path) -> None:
    """The finder above is not blind: each way of sending is found, nothing else is."""
    (tmp_path / "a.py").write_text(
        "client.chat.completions.create(model=m)\n"
        "await self.client.beta.chat.completions.parse(model=m)\n"
        "client.responses.create(model=m)\n"
        "client.post(url, content=b, cast_to=httpx.Response)\n"
        "requests.post(url, data=b)\n"
        "client.models.retrieve(m)\n", encoding="utf-8")
    assert llm_send_sites(tmp_path) == ["a.py:1", "a.py:2", "a.py:3", "a.py:4"]


def test_judges_are_made_through_the_registry() -> None:
    """Outside `judges/`, no stage names a backend's judge or its endpoint: a new backend is an
    entry in `judges/registry.py`, not an edit of the run, the retest or the CLI."""
    pattern = re.compile(r"openai_judge|OpenAIJudge|structured_caller|StructuredCaller\(|"
                         r"check_endpoint\b|EndpointClient|startswith\(\"openai:\"\)")
    found = [f"{path.relative_to(PACKAGE)}:{number}"
             for path in sorted(PACKAGE.rglob("*.py"))
             if path.relative_to(PACKAGE).parts[0] not in ("judges", "testing")
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert not found


# --- one reader of a judged run (issue 43) ---------------------------------------------------

#: The one module that says which line speaks for the AI on a (claim, rubric version).
SPEAKING_OWNER = "rundir/speaking.py"
#: The readers of "the AI's line for a claim": each takes it from the owner. The report and the
#: leaderboard read resolve's decisions, which name the judge of the line that spoke.
SPEAKING_READERS = ("resolve/decide.py", "resolve/intervals.py", "review/push.py",
                    "consensus/build.py", "calibrate/reference.py", "app/data.py")
SPEAKING_NAMES = {"choose_judgment", "speaking_lines", "judged_claims"}


def _ranks_judges(node: ast.AST) -> bool:
    """Whether an expression ranks judgment lines by who judged: it names a panel (the "panel("
    prefix, `PANEL_PREFIX`, `is_panel`), the offline judge by name, or a line's model."""
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str) and \
                (child.value.startswith("panel") or child.value == "offline"):
            return True
        name = child.id if isinstance(child, ast.Name) else \
            child.attr if isinstance(child, ast.Attribute) else None
        if name in ("PANEL_PREFIX", "is_panel", "model"):
            return True
    return False


def _judge_rankings(tree: ast.AST) -> list[int]:
    """The lines of `max`/`min`/`sorted`/`.sort` calls whose key ranks lines by who judged (a
    lambda, or a function of the module named as the key)."""
    functions = {node.name: node for node in ast.walk(tree)
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    found = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        name = call.func.id if isinstance(call.func, ast.Name) else \
            call.func.attr if isinstance(call.func, ast.Attribute) else None
        key = next((k.value for k in call.keywords if k.arg == "key"), None)
        if name not in ("max", "min", "sorted", "sort") or key is None:
            continue
        if isinstance(key, ast.Name) and key.id in functions:
            key = functions[key.id]
        if _ranks_judges(key):
            found.append(call.lineno)
    return found


def test_one_chooser_of_the_line_that_speaks() -> None:
    """No module but the owner ranks a claim's lines by judge or model to pick the AI's line,
    or defines a chooser of its own; every reader imports the owner's."""
    rankings, defined = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE))
        if relative == SPEAKING_OWNER:
            continue
        tree = _parsed(path.read_text(encoding="utf-8"))
        rankings += [f"{relative}:{line}" for line in _judge_rankings(tree)]
        defined += [f"{relative}:{node.lineno} {node.name}" for node in ast.walk(tree)
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and node.name in SPEAKING_NAMES]
    assert not rankings, f"a second chooser of the AI's line: {rankings}"
    assert not defined, f"a second chooser of the AI's line: {defined}"
    owner = _parsed((PACKAGE / SPEAKING_OWNER).read_text(encoding="utf-8"))
    assert _judge_rankings(owner), "the owner's rule is no longer what this test looks for"
    for reader in SPEAKING_READERS:
        tree = _parsed((PACKAGE / reader).read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module in ("judging.rundir", "judging.rundir.speaking")
                    for alias in node.names}
        assert imported & SPEAKING_NAMES, f"{reader} does not read the AI's line from the owner"


def _modules_that(found) -> list[str]:
    """The package's modules (relative paths) whose syntax tree has a node `found` accepts."""
    return sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                  if any(found(node) for node in _walked(
                      path.read_text(encoding="utf-8"))))


def _imports(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name == name or a.name.startswith(name + ".") for a in node.names)
    return isinstance(node, ast.ImportFrom) and node.module is not None and (
        node.module == name or node.module.startswith(name + "."))


def _calls(node: ast.AST, owner: str, attributes: set[str]) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in attributes and isinstance(node.func.value, ast.Name)
            and node.func.value.id == owner)


def test_one_ray_lifecycle() -> None:
    """Ray is started or connected, given tasks and shut down in one module (`engines/ray.py`),
    which also holds the one tar helper that ships folders to nodes and back: `run --engine
    ray` (merge) and `rerun --engine ray` both run on it. A second lifecycle fails here."""
    here = ["engines/ray.py"]
    assert _modules_that(lambda node: _imports(node, "ray")) == here
    assert _modules_that(lambda node: _calls(node, "ray", {"init", "shutdown", "remote", "get",
                                                          "wait", "put"})) == here
    assert _modules_that(lambda node: _imports(node, "tarfile")) == here
    assert _modules_that(lambda node: _calls(node, "tarfile", {"open"})) == here


def test_engines_come_from_one_table() -> None:
    """`--engine` of `run` and of `rerun` offers the engines of `judging.engines.ENGINES`, and
    `rerun` has a runner for each of its engines and for no other; one budget driver."""
    import typing

    import click

    from judging.cli import main
    from judging.engines import ENGINES, engine_names
    from judging.rerun.engines import RUNNERS
    from judging.rerun.stage import Engine

    def choices(command: str) -> list[str]:
        option = next(p for p in main.commands[command].params if p.name == "engine")
        assert isinstance(option.type, click.Choice)
        return list(option.type.choices)

    assert choices("run") == engine_names("run") and choices("rerun") == engine_names("rerun")
    assert list(RUNNERS) == engine_names("rerun") == list(typing.get_args(Engine))
    assert set(engine_names("run")) | set(engine_names("rerun")) == set(ENGINES)
    drivers = _modules_that(lambda node: isinstance(node, ast.ClassDef)
                            and node.name.endswith("BudgetDriver"))
    assert drivers == ["engines/budget.py"]


#: Each submission shape's detector, by shape: the names that ask "is this folder of that shape?"
SHAPE_DETECTORS = {"manifest": {"find_manifest", "MANIFEST"},
                   "logbook": {"is_logbook", "find_logbook_root", "LOGBOOK"},
                   "space": {"is_space", "SPACE"}}


def _shapes_asked(source: str) -> set[str]:
    """The shapes whose detectors a module's code asks (imports and definitions aside)."""
    used = {node.id if isinstance(node, ast.Name) else node.attr
            for node in _walked(source)
            if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load)}
    return {shape for shape, names in SHAPE_DETECTORS.items() if used & names}


def test_one_precedence_list_of_shapes() -> None:
    """Which shape a folder has is decided by `judging/intake/shapes.py`'s `SHAPES` alone (issue
    40: the order was spelled in loading, in a SOURCE's expansion and in `judging check`): no
    other module asks two shapes' detectors, which is what a second order would do."""
    from judging.intake.shapes import SHAPES

    assert [shape.name for shape in SHAPES] == list(SHAPE_DETECTORS)
    # the check sees a second order where one is written
    assert _shapes_asked("if find_manifest(f) is not None or is_logbook(f):\n    pass\n") == \
        {"manifest", "logbook"}
    assert _shapes_asked("from judging.intake.space import is_space\n") == set()
    shapes = PACKAGE / "intake" / "shapes.py"
    twice = {path.relative_to(PACKAGE).as_posix(): sorted(asked)
             for path in sorted(PACKAGE.rglob("*.py")) if path != shapes
             for asked in [_shapes_asked(path.read_text(encoding="utf-8"))] if len(asked) > 1}
    assert not twice


#: The Space shape reads its files and conducts; the rules it applies live in their rooms.
MAX_SPACE_LINES = 300


def test_the_space_shape_only_conducts() -> None:
    """`intake/space.py` stays a shape (its files by role, and the conductor) under
    `MAX_SPACE_LINES` lines: claims are made by the page engine (`intake/engine.py`), and no
    claim input is built in it (issue 40)."""
    source = (PACKAGE / "intake" / "space.py").read_text(encoding="utf-8")
    assert len(source.splitlines()) < MAX_SPACE_LINES
    built = {node.func.id for node in _walked(source) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name)}
    assert "add_claims" in built and not built & {"make_claim_input", "Claim", "ClaimInput"}


def _imported_modules(source: str) -> set[str]:
    names = set()
    for node in _walked(source):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_intake_packages_are_read_through_their_face() -> None:
    """A package inside intake (the logbook shape) is imported by the other modules through its
    `__init__` only (issue 40: space.py took a private of the logbook package): its modules are
    its own business."""
    intake = PACKAGE / "intake"
    packages = [path.parent for path in intake.glob("*/__init__.py")]
    assert intake / "logbook" in packages
    reaching = [f"{path.relative_to(PACKAGE).as_posix()}: {module}"
                for package in packages
                for path in sorted(PACKAGE.rglob("*.py")) if package not in path.parents
                for module in _imported_modules(path.read_text(encoding="utf-8"))
                if module.startswith(f"judging.intake.{package.name}.")]
    assert not reaching


def test_an_offline_run_does_not_load_the_llm_sdk() -> None:
    """Importing the CLI and the run stage leaves the `openai` SDK unloaded (a second of CPU per
    process, paid by every `judging` command and every test that starts one): the judges'
    modules import it where they call it."""
    import subprocess
    import sys

    probe = ("import sys, judging.cli, judging.run, judging.judges; "
             "print('openai' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, cwd=ROOT)
    assert result.stdout.strip() == "False", result.stderr
