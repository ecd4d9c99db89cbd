"""Pytest plugin: which tests are slow, and the order the suite starts them in (issue 43).

`make test-quick` runs `-m "not slow"`, the unit tests, for the inner loop; `make test` (and CI)
runs everything, spread over processes by pytest-xdist with `--dist loadfile`: a module's tests run in one
process (its module-scoped fixtures are built once), and the modules that start a Ray cluster
share one process (SHARED_PROCESS).

A test is slow when its module drives the product end to end: the CLI as a process, a server (the
local Argilla server, the fake OpenAI server or Hub, the dashboard), Chromium, a Ray cluster, a
sandboxed install with real uv and bubblewrap, or a whole `judging run` of the examples. Those
modules are named in SLOW_MODULES, a test using a fixture of SLOW_FIXTURES is slow wherever it is,
and a single slow test of a quick module is named in SLOW_TESTS (or carries `@pytest.mark.slow`).
A test not marked that takes longer than QUICK_LIMIT_S is named at the end of the run, so the
quick suite stays quick as tests are added.

The slow modules are started first (the longest first, by the figures of a measured run), so that
the processes finish together rather than one waiting on a long module started last.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: A test of a quick (`-m "not slow"`) run that takes longer than this is reported: it belongs in
#: SLOW_MODULES or SLOW_TESTS. Three seconds: a unit test takes well under one on a quiet machine.
QUICK_LIMIT_S = 3.0

#: Fixtures that start a server, a browser, a cluster or a whole run: a test using one is slow.
SLOW_FIXTURES = frozenset({"argilla", "ray_cluster", "offline_run", "consensus_run", "env_cache",
                           "browser", "dashboard"})

#: The modules (paths under tests/) that drive the product end to end, with the seconds each took
#: in the whole suite (`--durations`, call, set-up and tear-down) on this 2-core machine, in one
#: run of 2026-12-07 under a load of 10 to 18 (about 3.8 times a quiet run's): only their order
#: matters, the order they start in (the longest first). The figures of check, calibrate/test_run,
#: merge/test_shards, review/test_plan_push, review/test_push_pull, watch/test_watch and the
#: trackio logbook modules are that run's times the ratio of the module's wall time alone after
#: and before issue 43's second pass (measured interleaved, 2026-12-08, load 16 to 24); the
#: modules that fork their `judging` commands from one server (tests/forked_cli.py) and the pool
#: tests are that figure times their CPU seconds after over before, each module measured alone on
#: 2026-12-08 (issue 43).
SLOW_MODULES: dict[str, float] = {
    "app/test_app.py": 203,
    "app/test_browser.py": 84,
    "app/test_browser_decisions.py": 101,
    "app/test_live.py": 88,
    "calibrate/test_own_verdict_logbooks.py": 25,
    "calibrate/test_retest_run.py": 52,
    "calibrate/test_run.py": 126,
    "calibrate/test_small_numbers.py": 67,
    "check/test_check.py": 64,
    "consensus/test_event.py": 42,
    "consensus/test_rules.py": 2,
    "docs/test_tutorials.py": 386,
    "intake/test_attack_review.py": 38,
    "intake/test_benchmark_freeform.py": 5,
    "intake/test_benchmark_logbooks.py": 5,
    "intake/test_chat_traces.py": 0,
    "intake/test_discover.py": 39,
    "intake/test_hub_download_limits.py": 20,
    "intake/test_hostile_files.py": 32,
    "intake/test_logbook.py": 17,
    "intake/test_logbook_hostile.py": 3,
    "intake/test_logbook_llm.py": 6,
    "intake/test_logbook_problems.py": 1,
    "intake/test_logbook_scale_scripts.py": 21,
    "intake/test_sources.py": 44,
    "intake/test_spaces.py": 3,
    "judges/test_endpoint_check.py": 6,
    "judges/test_llm.py": 81,
    "merge/test_shards.py": 168,
    "publish/test_publish.py": 57,
    "report/test_fit_1400.py": 32,
    "report/test_html.py": 61,
    "report/test_paged.py": 30,
    "report/test_plain_words.py": 2,
    "rerun/test_attack_review.py": 23,
    "rerun/test_declared_inputs.py": 39,
    "rerun/test_engine_rules.py": 57,
    "rerun/test_engines.py": 36,
    "rerun/test_hostile.py": 21,
    "rerun/test_inert_text.py": 4,
    "resolve/test_unjudged.py": 30,
    "rerun/test_install_containment.py": 85,
    "rerun/test_kernel_limits.py": 12,
    "rerun/test_non_root.py": 42,
    "rerun/test_rerun.py": 27,
    "review/test_browser.py": 20,
    "review/test_demo_ports.py": 33,
    "review/test_human_decides.py": 80,
    "review/test_plan_push.py": 129,
    "review/test_push_pull.py": 168,
    "review/test_reading_trace.py": 15,
    "review/test_refresh_and_priority.py": 99,
    "review/test_server.py": 90,
    "review/test_server_env.py": 28,
    "run/test_crash_safety.py": 154,
    "run/test_estimate.py": 2,
    "run/test_demo_logbook.py": 31,
    "run/test_failing_invocations.py": 140,
    "run/test_integrity.py": 40,
    "run/test_interrupt.py": 101,
    "run/test_measure.py": 40,
    "run/test_memory.py": 34,
    "run/test_pool.py": 92,
    "run/test_quietly_wrong_inputs.py": 262,
    "run/test_runner.py": 58,
    "run/test_worker_start.py": 38,
    "signals/chart/test_reading_trace.py": 7,
    "rundir/test_file_modes.py": 122,
    "rundir/test_old_format.py": 2,
    "rundir/test_withdrawn_lines.py": 11,
    "test_benchmarks.py": 51,
    "test_ci.py": 1,
    "test_cli_startup.py": 7,
    "test_falsification_audit.py": 36,
    "test_forked_cli.py": 25,
    "test_hostile_inputs.py": 161,
    "test_secrets.py": 105,
    "testing/test_fake_openai.py": 15,
    "watch/test_no_network.py": 57,
    "watch/test_watch.py": 168,
    "watch/test_watch_fixed_space.py": 6,
}
#: The quick modules that take long enough in the whole suite to matter to its order (the same run;
#: a slow test of theirs in SLOW_TESTS): started by these figures too, not last.
ORDER_SECONDS: dict[str, float] = {
    "test_structure.py": 190,
    "signals/chart/test_real_failure_kinds.py": 172,
    "app/test_browser_intervals.py": 117,
    "calibrate/test_retest.py": 109,
    "test_properties.py": 87,
    "signals/chart/test_issue27_kinds.py": 71,
    "intake/test_logbook_shapes.py": 21,
    "signals/chart/test_trust.py": 50,
    "signals/test_copies.py": 47,
    "signals/test_signals.py": 46,
    "intake/test_space_declared.py": 41,
    "signals/test_chart.py": 35,
    "intake/test_logbook_figure_data.py": 10,
    "resolve/test_ranking.py": 28,
    "rundir/test_store.py": 28,
    "intake/test_registry.py": 22,
    "signals/chart/test_axis_offsets.py": 18,
    "calibrate/test_metrics.py": 16,
}
#: Single slow tests of quick modules (module path :: test function, any parameters): each took
#: over 2 s of CPU (a logbook made with the trackio CLI, a bootstrap, a drawn set of charts).
SLOW_TESTS = frozenset({
    "calibrate/test_retest.py::test_cli_table_retest_writes_the_report",
    "calibrate/test_retest.py::test_the_real_retest_table_gives_the_published_figures",
    "intake/test_logbook_figure_data.py::test_a_trackio_figure_with_raw_data_is_compared_data_to_data",
    "intake/test_logbook_shapes.py::test_a_claims_table_before_pages_and_links_as_page_md",
    "intake/test_logbook_shapes.py::test_trackio_shapes_titles_changes_two_claims_and_a_tagless_metadata",
    "signals/chart/test_issue27_kinds.py::test_the_offline_judge_answers_no_drawn_pair_wrongly",
    "signals/chart/test_issue27_kinds.py::test_the_readers_confidence_is_calibrated_on_a_drawn_set",
    "signals/chart/test_real_failure_kinds.py::test_easy_noisy_reruns_pass",
    "test_properties.py::test_manifest_loader_never_crashes_on_data",
    "test_structure.py::test_an_offline_run_does_not_load_the_llm_sdk",
})
#: The start-order weight of a slow module without a measured figure (a middling one).
SLOW_DEFAULT_S = 20.0


def _module(item: pytest.Item) -> str:
    """The item's module as a path under tests/ ("app/test_app.py")."""
    path = item.nodeid.split("::", 1)[0]
    return path.removeprefix("tests/")


def _is_slow(item: pytest.Item) -> bool:
    function = item.nodeid.split("[", 1)[0].removeprefix("tests/")
    return (_module(item) in SLOW_MODULES or function in SLOW_TESTS
            or bool(SLOW_FIXTURES.intersection(item.fixturenames))
            or item.get_closest_marker("slow") is not None)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # A quick run does not import the slow modules at all: importing them (Gradio, Ray, the
    # Argilla SDK) is a good part of the quick run's time, and every test in them is deselected.
    if config.getoption("markexpr", "").replace(" ", "") != "notslow":
        return None
    try:
        relative = collection_path.relative_to(TESTS).as_posix()
    except ValueError:
        return None
    return True if relative in SLOW_MODULES else None


#: Modules that must run in the same process, one after the other: those starting a Ray cluster
#: (two Ray heads on one machine contend for Ray's fixed ports). Every other module is a unit of
#: its own.
SHARED_PROCESS = {"ray_cluster": ("merge/test_shards.py", "rerun/test_declared_inputs.py",
                                  "rerun/test_engine_rules.py", "rerun/test_engines.py")}


#: Modules whose tests are units of their own (each may run in any process): a module far longer
#: than the others, whose tests share no module fixture that costs, would otherwise set the
#: suite's floor by itself (the tutorials: three pages of a few minutes each, one process).
SPLIT_BY_TEST = frozenset({"docs/test_tutorials.py"})


def _group(module: str) -> str:
    return next((name for name, modules in SHARED_PROCESS.items() if module in modules), module)


def _unit(nodeid: str) -> str:
    """The unit of work of a test: its module's group, or the test itself (SPLIT_BY_TEST)."""
    module = nodeid.split("::", 1)[0].removeprefix("tests/")
    return nodeid if module in SPLIT_BY_TEST else _group(module)


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadfile`, with the SHARED_PROCESS modules in one unit of work, the tests of
    SPLIT_BY_TEST units of their own, and the units started in this plugin's order (the
    longest first) rather than by their number of tests.
    (`--dist loadgroup` would do the grouping, but it stopped grouping on pytest 9.2:
    pytest-dev/pytest-xdist#1386.)"""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    config.option.loadscopereorder = False
    return ModuleGroups(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, modules in SHARED_PROCESS.items():
            if fixture in item.fixturenames and _module(item) not in modules:
                raise pytest.UsageError(
                    f"{item.nodeid} uses {fixture}: add {_module(item)} to SHARED_PROCESS in "
                    "tests/slow.py (its modules run in one process, one after the other)")
    weight: dict[str, float] = {}
    for item in items:
        slow = _is_slow(item)
        if slow and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
        module = _module(item)
        figure = (SLOW_MODULES.get(module) or ORDER_SECONDS.get(module)
                  or (SLOW_DEFAULT_S if slow else 0.0))
        weight[module] = max(weight.get(module, 0.0), figure)
    # Stable: a module's tests keep their order; heavier modules start first (a group starts
    # where its first test is).
    items.sort(key=lambda item: -weight[_module(item)])


_over_limit: list[tuple[str, float]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.duration > QUICK_LIMIT_S and "slow" not in report.keywords:
        _over_limit.append((report.nodeid, report.duration))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not _over_limit:
        return
    terminalreporter.write_sep("-", f"tests not marked slow that took over {QUICK_LIMIT_S:g} s "
                                    "(add the module to tests/slow.py SLOW_MODULES, or mark it)")
    for nodeid, duration in sorted(_over_limit, key=lambda pair: -pair[1]):
        terminalreporter.write_line(f"{duration:6.1f} s  {nodeid}")


#: Set to 80 and 24 in every xdist worker's environment (execnet's workers see no terminal):
#: the CLI's tables would then be cut to 80 columns where a serial run prints them whole.
TERMINAL_VARIABLES = ("COLUMNS", "LINES")


def pytest_configure_node(node) -> None:
    """xdist's controller: hand each worker the terminal variables as the run was started."""
    node.workerinput["terminal_variables"] = {name: os.environ.get(name)
                                              for name in TERMINAL_VARIABLES}


def pytest_configure(config: pytest.Config) -> None:
    # An xdist worker: the terminal variables as the controller had them, so that a test sees
    # the environment a serial run gives it.
    given = getattr(config, "workerinput", {}).get("terminal_variables")
    for name, value in (given or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
