# The two commands README.md promises: `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.PHONY: venv demo test test-unit test-integration lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# Pinned first: this CPU build lies on local disk; a bare `torch` pulls CUDA.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[engine,test]'
	touch $(STAMP)

venv: $(STAMP)

# Fetches the four pinned wheels on first run; ends by printing reports/index.html's location.
demo: $(STAMP)
	$(BIN)/atlas demo

lint: $(STAMP)
	$(BIN)/ruff check analyzer reference_engine tests benchmarks

test-unit: $(STAMP)
	$(BIN)/python -m pytest -q -m "not integration"

test-integration: $(STAMP)
	$(BIN)/python -m pytest -q -m integration

test: $(STAMP)
	$(BIN)/ruff check analyzer reference_engine tests benchmarks
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
