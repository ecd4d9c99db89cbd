# Two commands on a fresh machine:  make demo  ·  make test
# Each creates .venv (the product) and .venv-argilla (the local Argilla review server, a service
# with argilla-server's pins, kept out of the product), installs what they need (Python packages,
# and system packages with apt when running as root), then runs.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Re-install when pyproject.toml changes.
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml 2>/dev/null | cut -c1-12)
# The local Argilla review server's own environment: argilla-server and fakeredis, plus this
# package without its dependencies (the server modules need only the standard library, httpx,
# argilla_server, fakeredis, judging.errors and judging.services).
ARGILLA_VENV ?= .venv-argilla
ARGILLA_BIN := $(ARGILLA_VENV)/bin
ARGILLA_REQUIREMENTS := argilla-server==2.8.0 fakeredis>=2.20
ARGILLA_STAMP := $(ARGILLA_VENV)/.installed-$(shell { cat pyproject.toml; echo '$(ARGILLA_REQUIREMENTS)'; } 2>/dev/null | sha256sum | cut -c1-12)
# Every `judging review serve` of the Makefile (and the tests' server) runs this interpreter.
JUDGING_ARGILLA_PYTHON ?= $(abspath $(ARGILLA_BIN)/python)
export JUDGING_ARGILLA_PYTHON
DEMO_OUT ?= runs/demo
# The event's rules the demo's leaderboard and dashboard apply (docs/explanation/ranking.md).
DEMO_EVENT ?= examples/event-neurips2026.yaml
REVIEW_HOME ?= .judging/argilla
# The ports the demo's services ask for first; when one is taken, the next free one above it is
# used and printed (`--free-port`). Set them to choose: make demo REVIEW_PORT=6910 APP_PORT=7870
REVIEW_PORT ?= 6900
# The organizers' dashboard (`judging app`), started in the background by `make demo`.
APP_HOME ?= .judging/app
APP_PORT ?= 7860
DEMO_REVIEWER ?= reviewer
DEMO_REVIEWER_PASSWORD ?= reviewer-demo-1
# System packages: command (or a file glob) -> Debian package. Tesseract's English model is what
# the chart reader's OCR needs (the tesseract library itself ships in the tesserocr wheel).
TESSDATA := /usr/share/tesseract-ocr/*/tessdata/eng.traineddata
# bubblewrap: the sandbox of `judging rerun` (the demo re-runs the examples' scripts; tests too).
DEMO_SYSTEM_PACKAGES := $(TESSDATA):tesseract-ocr-eng bwrap:bubblewrap
TEST_SYSTEM_PACKAGES := chromium:chromium $(DEMO_SYSTEM_PACKAGES)

# trackio (its CLI makes the tests' logbooks) wants pillow<13: an environment of its own. The
# importer reads the files and never needs trackio.
TRACKIO_VENV ?= .venv-trackio
TRACKIO_STAMP := $(TRACKIO_VENV)/.installed-trackio-0.43.0
JUDGING_TRACKIO ?= $(abspath $(TRACKIO_VENV)/bin/trackio)
export JUDGING_TRACKIO

.PHONY: install argilla-env trackio-env demo test test-quick lint docs bench examples sysdeps-test sysdeps-demo clean help

help:
	@echo "make demo   run the judging pipeline end to end on examples/ (submissions and a logbook) and write a report"
	@echo "            (the review server asks for port REVIEW_PORT=$(REVIEW_PORT), the dashboard APP_PORT=$(APP_PORT);"
	@echo "            a taken port gives way to the next free one, printed)"
	@echo "make test   run the whole test suite (and build the documentation site, docs/)"
	@echo "make test-quick  run the unit tests only (not those marked slow: tests/slow.py)"
	@echo "make docs   build the documentation site strictly (mkdocs; \`$(BIN)/mkdocs serve\` to read it)"
	@echo "make bench  print the benchmark figures"
	@echo "make argilla-env  build $(ARGILLA_VENV), the local Argilla review server's environment"

# The environments are installed by uv (a dependency of the package, `judging rerun` uses it): it
# downloads in parallel and keeps its cache (~/.cache/uv) for the next clone, where pip took
# minutes on a clean clone here. pip installs only uv itself into a new .venv. No bytecode is
# compiled at install (pip compiles all of it): Python compiles a module when it is first
# imported, and lint, the docs build and the tests import a small part of the 16,300 files.
UV := $(BIN)/uv
UV_INSTALL := $(UV) pip install --quiet

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@test -x $(UV) || $(BIN)/python -m pip install --quiet --disable-pip-version-check 'uv>=0.13'
	$(UV_INSTALL) --python $(BIN)/python -e '.[dev,cluster]'
	@rm -f $(VENV)/.installed-*
	@touch $@

install: $(STAMP)

# uv comes from .venv (the stamp is order-only: a new pyproject.toml re-installs this environment
# through its own stamp's name).
$(ARGILLA_STAMP): pyproject.toml | $(STAMP)
	@test -x $(ARGILLA_BIN)/python || $(PYTHON) -m venv --without-pip $(ARGILLA_VENV)
	$(UV_INSTALL) --python $(ARGILLA_BIN)/python $(foreach r,$(ARGILLA_REQUIREMENTS),'$(r)')
	$(UV_INSTALL) --python $(ARGILLA_BIN)/python --no-deps -e .
	@rm -f $(ARGILLA_VENV)/.installed-*
	@touch $@

argilla-env: $(ARGILLA_STAMP)

$(TRACKIO_STAMP): | $(STAMP)
	@test -x $(TRACKIO_VENV)/bin/python || $(PYTHON) -m venv --without-pip $(TRACKIO_VENV)
	$(UV_INSTALL) --python $(TRACKIO_VENV)/bin/python trackio==0.43.0
	@touch $@

trackio-env: $(TRACKIO_STAMP)

# Install missing system packages with apt as root; otherwise stop with the exact command to run.
define ensure_system_packages
	@missing=""; for pair in $(1); do cmd=$${pair%%:*}; pkg=$${pair#*:}; \
	  case $$cmd in /*) ls $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg";; \
	    *) command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg";; esac; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing system packages:$$missing"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q --no-install-recommends $$missing >/dev/null 2>&1 || \
	      { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $$missing >/dev/null; } \
	      || { echo "apt-get could not install:$$missing"; exit 1; }; \
	  else \
	    echo "missing system packages; run:  sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi
endef

sysdeps-test:
	$(call ensure_system_packages,$(TEST_SYSTEM_PACKAGES))

sysdeps-demo:
	$(call ensure_system_packages,$(DEMO_SYSTEM_PACKAGES))

# With an endpoint configured (OPENAI_BASE_URL or OPENAI_API_KEY), the demo asks an LLM judge
# (JUDGING_JUDGE, default openai:gpt-4.1-mini); without one, the offline judge.
DEMO_JUDGE := $(if $(or $(OPENAI_BASE_URL),$(OPENAI_API_KEY)),$(or $(JUDGING_JUDGE),openai:gpt-4.1-mini),offline)

demo: install argilla-env sysdeps-demo
	@# The old run goes, with any labels pulled into it; the reviewers' answers stay in Argilla.
	@if [ -s $(DEMO_OUT)/labels.jsonl ]; then \
	  echo "removing the previous $(DEMO_OUT), with the $$(wc -l < $(DEMO_OUT)/labels.jsonl) label(s) pulled into it;" \
	       "the answers are kept in Argilla ($(REVIEW_HOME)): \`$(BIN)/judging review pull $(DEMO_OUT) --home $(REVIEW_HOME)\` brings them back"; \
	fi
	rm -rf $(DEMO_OUT)
	@echo "judge: $(DEMO_JUDGE)"
	$(BIN)/judging run examples/submissions examples/logbooks --claims examples/registry/claims.yaml \
	  --out $(DEMO_OUT) --judge $(DEMO_JUDGE)
	@# Re-run the number claims' scripts (sandboxed; environments from the registry, cached), then
	@# judge again: only the claims whose re-run result is new are re-judged.
	$(BIN)/judging rerun $(DEMO_OUT) --select all
	$(BIN)/judging run examples/submissions examples/logbooks --claims examples/registry/claims.yaml \
	  --out $(DEMO_OUT) --judge $(DEMO_JUDGE)
	$(BIN)/judging consensus $(DEMO_OUT)
	@# Calibrate first: the review priority (which criteria the judge is trusted on) is computed
	@# once, by the push, from this calibration; the dashboard's queue shows the same one.
	$(BIN)/judging calibrate $(DEMO_OUT) --labels calibration/sets/examples/labels.jsonl \
	  --out $(DEMO_OUT)/calibration
	$(BIN)/judging resolve $(DEMO_OUT) --calibration $(DEMO_OUT)/calibration
	$(BIN)/judging leaderboard $(DEMO_OUT) --event $(DEMO_EVENT) --calibration $(DEMO_OUT)/calibration
	$(BIN)/judging report $(DEMO_OUT)
	@$(BIN)/judging review status --home $(REVIEW_HOME) >/dev/null 2>&1 || \
	  $(BIN)/judging review serve --background --home $(REVIEW_HOME) --port $(REVIEW_PORT) --free-port
	$(BIN)/judging review push $(DEMO_OUT) --home $(REVIEW_HOME) --calibration $(DEMO_OUT)/calibration
	@$(BIN)/judging review users add $(DEMO_REVIEWER) --password $(DEMO_REVIEWER_PASSWORD) \
	  --home $(REVIEW_HOME) >/dev/null
	@# The dashboard follows its run directory as it changes; it is restarted here because the
	@# demo's options (run, calibration, event) may differ from those it was started with.
	@$(BIN)/judging app stop --app-home $(APP_HOME) >/dev/null
	$(BIN)/judging app $(DEMO_OUT) --background --port $(APP_PORT) --free-port --app-home $(APP_HOME) \
	  --home $(REVIEW_HOME) --calibration $(DEMO_OUT)/calibration --event $(DEMO_EVENT)
	@echo
	@echo "report:  $(CURDIR)/$(DEMO_OUT)/report.html"
	@echo "calibration of the judge against the examples' construction labels (not human labels):"
	@echo "         $(CURDIR)/$(DEMO_OUT)/calibration/reports/"
	@echo "review:  $$($(BIN)/judging review status --home $(REVIEW_HOME) | sed -n 's/.*\(http[^ ]*\).*/\1/p' | head -n 1)"
	@echo "         log in as $(DEMO_REVIEWER) / $(DEMO_REVIEWER_PASSWORD) (annotator; the owner is argilla / 12345678)"
	@echo "         after reviewing, one command brings decisions, consensus, leaderboard and report up to date:"
	@echo "         $(BIN)/judging review pull $(DEMO_OUT) --home $(REVIEW_HOME) --calibration $(DEMO_OUT)/calibration --event $(DEMO_EVENT)"
	@echo "         stop the server with: $(BIN)/judging review stop --home $(REVIEW_HOME)"
	@echo "dashboard: $$($(BIN)/judging app status --app-home $(APP_HOME) | sed -n 's/.*\(http[^ ]*\).*/\1/p')"
	@echo "         leaderboard, claims side by side, review queue; MCP tools at /gradio_api/mcp/"
	@echo "         stop it with: $(BIN)/judging app stop --app-home $(APP_HOME)"

# The suite runs in TEST_WORKERS processes (pytest-xdist); `--dist loadfile` keeps a module's
# tests in one process, so that its module-scoped fixtures (a judged run, a server) are built
# once; tests/slow.py keeps the Ray modules in one process too, marks the end-to-end tests slow
# and starts the longest modules first. Three processes on this 2-core machine: the suite's
# workers used 815 s of CPU in a 942 s run with two (tests43c), the rest of the time waiting on
# servers, browsers, sandboxes and subprocesses, so a third keeps the cores busy.
TEST_WORKERS ?= 3
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile

# What the suite needs is made side by side (after .venv, which has uv): the other two
# environments and the system packages mostly wait on the network while lint and the
# documentation build use the cores; each one's output is printed whole when it ends.
TEST_SETUP := install argilla-env trackio-env sysdeps-test lint docs

test:
	@$(MAKE) --no-print-directory -j $(words $(TEST_SETUP)) --output-sync=target $(TEST_SETUP)
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL)

# The inner loop: the unit tests, no server, browser, sandbox or end-to-end run.
test-quick: install
	$(BIN)/python -m pytest -q $(PYTEST_PARALLEL) -m "not slow"

# The documentation site (mkdocs.yml, docs/), built strictly (a broken link, a missing page or a
# reference generated from the code that fails is an error) into a temporary folder, so that the
# tree stays as it was. `$(BIN)/mkdocs serve` to read it. (Not --quiet: it hides the warnings
# that --strict counts, and the build then passes with a broken link.)
docs: install
	@site=$$(mktemp -d) && trap 'rm -rf "$$site"' EXIT && \
	  NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir "$$site"

# Architecture contracts (import-linter, [tool.importlinter]) and lint (ruff, [tool.ruff]).
lint: install
	$(BIN)/lint-imports
	$(BIN)/ruff check judging tests benchmarks examples tools

bench: install argilla-env
	$(BIN)/python benchmarks/signals.py
	$(BIN)/python benchmarks/judging.py
	$(BIN)/python benchmarks/review.py
	$(BIN)/python benchmarks/chart_signals.py
	$(BIN)/python benchmarks/copy_check.py
	$(BIN)/python benchmarks/report.py
	$(BIN)/python benchmarks/scale.py 2000
	# review plan: 500 reps (about 2 CPU minutes); exits 1 while the poor judge's event coverage
	# on its default seed reads 0.932 (< 0.94, see its docstring), so it runs last
	$(BIN)/python benchmarks/review_plan.py

# Rebuild the example submissions and the example logbook from their generators (deterministic).
examples: install
	$(BIN)/python examples/generate.py
	$(BIN)/python examples/make_logbook.py

clean:
	rm -rf $(VENV) $(ARGILLA_VENV) runs .pytest_cache .hypothesis
