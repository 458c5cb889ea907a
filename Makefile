# Every target installs what it needs first, so a fresh clone works with `make run` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: run test install upgrade lint schema bench demo clean

run: $(STAMP)
	$(BIN)/opencode

# One worker more than the machine has cores (three on the development machine): many
# tests wait on a subprocess they started (an agent, a server, a shell), and a third
# worker runs meanwhile. Whole files per worker, so a module's shared fixtures (a fake
# server, an opencode serve) start once.
TEST_WORKERS = $(shell $(PYTHON) -c 'import os; print((os.cpu_count() or 1) + 1)')
test: $(STAMP)
	$(BIN)/python -m pytest --numprocesses=$(TEST_WORKERS) --dist=loadfile

install: $(STAMP)

# The exact versions of requirements.lock (plain pip reads it), then opencode itself.
# Python 3.11's venv brings setuptools, which nothing here imports: it goes, or its .pth
# file would run at every start of every opencode command (an installed wheel has none).
$(STAMP): pyproject.toml requirements.lock
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip uninstall --quiet --yes setuptools
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# Newest versions within pyproject.toml's ranges, for every platform (uv, a dev
# dependency, writes the lock).
upgrade: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 --universal --upgrade --quiet -o requirements.lock
	$(MAKE) install

# ruff, then mypy over app/ (strict on the core rooms: see [tool.mypy] in pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check app tests bench
	$(BIN)/mypy

schema: $(STAMP)
	$(BIN)/opencode schema > opencode-schema.json

demo: $(STAMP)
	$(BIN)/python demo/demo.py

bench: $(STAMP)
	@for script in bench/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
