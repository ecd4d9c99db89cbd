# Two commands on a fresh machine:  make demo  ·  make test
# Each creates .venv, installs what it needs (Python packages, and system packages with apt when
# running as root), then runs.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Re-install when pyproject.toml changes.
STAMP := $(VENV)/.installed-$(shell sha256sum pyproject.toml 2>/dev/null | cut -c1-12)
DEMO_OUT ?= runs/demo
# System packages the test suite needs: command -> Debian package.
TEST_SYSTEM_PACKAGES := chromium:chromium

.PHONY: install demo test bench examples sysdeps-test clean help

help:
	@echo "make demo   run the judging pipeline end to end on examples/ and write a report"
	@echo "make test   run the whole test suite"
	@echo "make bench  print the benchmark figures"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

install: $(STAMP)

# Install missing system packages with apt as root; otherwise stop with the exact command to run.
define ensure_system_packages
	@missing=""; for pair in $(1); do cmd=$${pair%%:*}; pkg=$${pair#*:}; \
	  command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
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

demo: install
	rm -rf $(DEMO_OUT)
	$(BIN)/judging run examples/submissions --claims examples/registry/claims.yaml --out $(DEMO_OUT)
	$(BIN)/judging report $(DEMO_OUT)
	@echo
	@echo "report: $(CURDIR)/$(DEMO_OUT)/report.html"

test: install sysdeps-test
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python benchmarks/signals.py

# Rebuild the example submissions from their generator (deterministic).
examples: install
	$(BIN)/python examples/generate.py

clean:
	rm -rf $(VENV) runs .pytest_cache .hypothesis
