PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WORKSPACE ?= resources/sample-workspace

.PHONY: setup run test test-deep lint bench clean

setup: $(STAMP)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Hook Studio needs Python 3.11 or newer; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the project's metadata changes; the install is editable, so source edits need nothing.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

run: setup
	$(BIN)/hook-studio $(WORKSPACE)

# One test process per core (pytest-xdist); TEST_WORKERS=0 runs every test in one process.
TEST_WORKERS ?= auto
PYTEST = QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal

test: setup
	$(PYTEST)

# Ten times the Hypothesis examples and no deadline (tests/support/hypothesis_profiles.py).
test-deep: setup
	HYPOTHESIS_PROFILE=deep $(PYTEST)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy studio
	$(BIN)/python -m pytest -q tests/test_layering.py

bench: setup
	$(BIN)/python benchmarks/validate_request.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis
