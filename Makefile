# The two commands README.md promises: `make demo` and `make test`.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.PHONY: venv sysdeps graphviz demo test test-unit test-integration lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# Pinned first: this CPU build lies on local disk; a bare `torch` pulls CUDA.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[engine,test]'
	touch $(STAMP)

venv: $(STAMP)

# The report's browser tests drive Debian's headless Chromium and Graphviz's `dot`, the
# shared KV tier's tests a redis-server they start on 127.0.0.1; they fail (never skip)
# without them, so the test targets install them when missing.
sysdeps:
	@if ! command -v chromium >/dev/null || ! command -v dot >/dev/null \
		|| ! command -v redis-server >/dev/null; then \
		apt-get update -q && apt-get install -y -q chromium graphviz redis-server; fi

# The demo draws its call paths and routes with Graphviz's `dot` (lists without it), so a
# fresh machine gets it here as the test targets do; nothing else the tests need. Where it
# cannot be installed (no root, no network) the demo still runs, and says it drew nothing.
graphviz:
	@command -v dot >/dev/null || { apt-get update -q && apt-get install -y -q graphviz; } \
		|| echo "note: Graphviz could not be installed (apt-get install graphviz needs root); the walkthrough lists call paths instead of drawing them"

# Fetches the four pinned wheels on first run; ends by printing reports/index.html's location.
demo: $(STAMP) graphviz
	$(BIN)/atlas demo

lint: $(STAMP)
	$(BIN)/ruff check analyzer reference_engine tests benchmarks
	$(BIN)/mypy

test-unit: $(STAMP) sysdeps
	$(BIN)/python -m pytest -q -m "not integration"

test-integration: $(STAMP)
	$(BIN)/python -m pytest -q -m integration

test: $(STAMP) sysdeps
	$(BIN)/ruff check analyzer reference_engine tests benchmarks
	$(BIN)/mypy  # [tool.mypy] in pyproject.toml: analyzer/ and reference_engine/
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
