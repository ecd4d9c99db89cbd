"""The shape issue 28 gave the package, kept: a runner that only wires its parts, small
functions in the run stage, a top level of shared vocabulary, one LLM send loop. A merge that
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
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
