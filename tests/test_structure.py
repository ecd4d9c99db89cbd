"""The shape issue 28 gave the package, kept: a runner that only wires its parts, small
functions in the run stage, a top level of shared vocabulary, one OpenAI call path; and issue
43's one chooser of the AI's line. A merge that grows them past the bounds fails here, not in
the next review."""

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
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rankings += [f"{relative}:{line}" for line in _judge_rankings(tree)]
        defined += [f"{relative}:{node.lineno} {node.name}" for node in ast.walk(tree)
                    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and node.name in SPEAKING_NAMES]
    assert not rankings, f"a second chooser of the AI's line: {rankings}"
    assert not defined, f"a second chooser of the AI's line: {defined}"
    owner = ast.parse((PACKAGE / SPEAKING_OWNER).read_text(encoding="utf-8"))
    assert _judge_rankings(owner), "the owner's rule is no longer what this test looks for"
    for reader in SPEAKING_READERS:
        tree = ast.parse((PACKAGE / reader).read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module in ("judging.rundir", "judging.rundir.speaking")
                    for alias in node.names}
        assert imported & SPEAKING_NAMES, f"{reader} does not read the AI's line from the owner"
