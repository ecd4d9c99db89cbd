"""tests/slow.py names modules and tests by path: a renamed or removed one must not linger there
(a slow module renamed would silently join the quick suite under its new name, and a stale name
hides which are slow)."""

from __future__ import annotations

import re

from tests.conftest import TESTS
from tests.slow import (
    ORDER_SECONDS,
    SHARED_PROCESS,
    SLOW_MODULES,
    SLOW_TESTS,
    SPLIT_BY_TEST,
    _unit,
)


def test_every_named_module_exists() -> None:
    named = set(SLOW_MODULES) | set(ORDER_SECONDS) | set(SPLIT_BY_TEST) | {
        m for modules in SHARED_PROCESS.values() for m in modules}
    # a module is slow or quick: ORDER_SECONDS orders quick ones only
    assert not set(ORDER_SECONDS) & set(SLOW_MODULES), set(ORDER_SECONDS) & set(SLOW_MODULES)
    missing = sorted(m for m in named if not (TESTS / m).is_file())
    assert missing == [], missing


def test_every_named_test_is_defined_in_its_module() -> None:
    missing = []
    for name in SLOW_TESTS:
        module, function = name.split("::")
        path = TESTS / module
        if not path.is_file() or not re.search(rf"^def {function}\(", path.read_text(), re.M):
            missing.append(name)
    assert missing == [], missing


def test_the_shared_process_modules_are_slow() -> None:
    # A module sharing a Ray cluster is an end-to-end one: the quick run does not import it.
    shared = {m for modules in SHARED_PROCESS.values() for m in modules}
    assert shared <= set(SLOW_MODULES), sorted(shared - set(SLOW_MODULES))


def test_units_of_work() -> None:
    # A module is one unit; a shared-process module its group's; a split module's test its own
    # (and a split module is no shared-process one: its tests run in any process).
    assert _unit("tests/app/test_app.py::test_x") == "app/test_app.py"
    assert _unit("tests/merge/test_shards.py::test_x[a]") == "ray_cluster"
    for module in SPLIT_BY_TEST:
        assert _unit(f"tests/{module}::test_x[a]") == f"tests/{module}::test_x[a]"
        assert all(module not in modules for modules in SHARED_PROCESS.values())
