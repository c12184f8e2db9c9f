# Two commands do all set-up on a fresh machine:
#   make run    start the demo mission live with its dashboard (creates .venv on first use)
#   make test   the checks, then the test suite (same set-up, plus the browser and broker
#               the tests use)
# and one for the checks alone:
#   make check  ruff (lint and format), mypy, the import contracts (the house's layers)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check browser broker bench-peers clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/isr run scenarios/demo.json

test: check browser broker
	$(BIN)/python -m pytest -q

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The dashboard test drives Debian's Chromium through Playwright (browser downloads are not
# possible here). Installed when missing and we are root; otherwise the test says how.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the dashboard test"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "warning: could not install chromium; the browser test will fail"; \
	  else echo "warning: no chromium: run 'apt-get install chromium' for the browser test"; fi; }

# The MQTT tests use a real Mosquitto broker on 127.0.0.1:1883: started here if installed
# and not running (apt-get install mosquitto installs it).
broker:
	@$(BIN)/python -c "import socket; socket.create_connection(('127.0.0.1', 1883), 1).close()" 2>/dev/null \
	  || { command -v mosquitto >/dev/null 2>&1 && mosquitto -d && echo "started mosquitto"; } \
	  || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	       (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto >/dev/null) && \
	       mosquitto -d && echo "installed and started mosquitto"; } \
	  || echo "warning: no MQTT broker on 127.0.0.1:1883; the MQTT tests will fail"

# Optional: the OR-Tools and PyVRP peers for bench/top.py.
bench-peers: $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,peers]'

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
