# Two commands do all set-up on a fresh machine:
#   make run    plan the demo mission (creates .venv and installs on first use)
#   make test   run the test suite (same set-up)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench-peers clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/isr plan scenarios/demo.json

test: $(STAMP)
	$(BIN)/python -m pytest -q

# Optional: the OR-Tools and PyVRP peers for bench/top.py.
bench-peers: $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,peers]'

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
