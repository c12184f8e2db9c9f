# Two commands do all set-up on a fresh machine:
#   make run    start the demo mission live with its dashboard (creates .venv on first use)
#   make test   the checks, then the test suite on parallel workers, with its 25 slowest
#               tests (same set-up, plus the browser and the Mosquitto the tests use)
# and one for the checks alone, one for the suite's coverage:
#   make check     ruff (lint and format), mypy, the import contracts (the house's layers)
#   make coverage  the suite under coverage, then the figures per package
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test coverage check warm browser broker bench-peers clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/isr run scenarios/demo.json

# Test workers (pytest-xdist). Most tests wait rather than compute (paced missions,
# browsers, brokers, the `isr` processes they start), so more workers than the 2 cores pay
# (docs/development.md). TEST_WORKERS=0 runs the suite in this one process.
TEST_WORKERS ?= 4
# Bytecode is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE=1 on
# this machine): every test worker and every `isr` process a test starts would otherwise
# compile the project's sources and re-write each test module's asserts again (a worker's
# collection took 16 CPU s instead of 9).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --durations=25

# The checks and the numba kernels' first compile side by side. On a fresh clone the checks
# take 32 s of one core, the compiles 57 s in two processes (34 s alone): 47 s side by side,
# where the checks and then the suite's old one-process compile took 82 s.
test: $(STAMP) browser broker
	$(MAKE) --no-print-directory --output-sync=target -j2 check warm
	$(PYTEST)

# The suite once more under coverage (pytest-cov: the test processes and the `isr` processes
# they start), then the figures per package. Tracing every line makes the suite about twice
# as slow, so `make test` does not; CI runs both.
coverage: $(STAMP) browser broker
	rm -f .coverage .coverage.*
	$(PYTEST) --cov --cov-report= || echo "coverage: the run above had failures"
	$(BIN)/python .ci/coverage_by_package.py

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Every numba kernel compiled into its on-disk cache (executive.loop.warm), so the test
# workers and the `isr` processes they start load them instead of each compiling them.
warm: $(STAMP)
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m executive.loop.warm

# The dashboard test drives Debian's Chromium through Playwright (browser downloads are not
# possible here). Installed when missing and we are root; otherwise the test says how.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the dashboard test"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "warning: could not install chromium; the browser test will fail"; \
	  else echo "warning: no chromium: run 'apt-get install chromium' for the browser test"; fi; }

# The MQTT tests start Mosquitto brokers of their own (one per test worker, on free ports:
# tests/conftest.py): installed here when missing and we are root.
broker:
	@command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] \
	  || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	       (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto >/dev/null) && \
	       echo "installed mosquitto"; } \
	  || echo "warning: no mosquitto; the MQTT tests will fail"

# Optional: the OR-Tools and PyVRP peers for bench/top.py.
bench-peers: $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,peers]'

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info .coverage .coverage.*
