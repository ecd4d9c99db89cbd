"""The shape issue 28 gave the package, kept: a runner that only wires its parts, small
functions in the run stage, a top level of shared vocabulary, one OpenAI call path. A merge that
grows them past the bounds fails here, not in the next review."""

from __future__ import annotations

import ast
import re

from tests.conftest import ROOT

PACKAGE = ROOT / "judging"
MAX_RUNNER_FILE_LINES = 300
MAX_RUNNER_CLASS_LINES = 200
MAX_RUNNER_ATTRIBUTES = 10
MAX_RUN_FUNCTION_LINES = 60
MAX_TOP_LEVEL_FILES = 10


def _runner_class() -> ast.ClassDef:
    tree = ast.parse((PACKAGE / "run" / "runner.py").read_text(encoding="utf-8"))
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
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


def test_one_openai_call_path() -> None:
    """Chat completions are created in one place (the endpoint of `judges/openai/`), used by the
    judge and the extractor alike; issue 28's own check (the phrase "structured output" once)
    is kept beside it."""
    calls = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
             if "completions.create(" in path.read_text(encoding="utf-8")]
    assert calls == ["judges/openai/endpoint.py"]
    said = sum(path.read_text(encoding="utf-8").count('"structured output"')
               for path in PACKAGE.rglob("*.py"))
    assert said == 1


def _modules_that(found) -> list[str]:
    """The package's modules (relative paths) whose syntax tree has a node `found` accepts."""
    return sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                  if any(found(node) for node in ast.walk(ast.parse(
                      path.read_text(encoding="utf-8")))))


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
