# gatekit: two commands set everything up on a fresh machine.
#   make certify   the certification suite against the embedded simulator, with a report
#   make test      every test: lint, types, unit and simulator tests, features, notebooks
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PIP_FLAGS := --disable-pip-version-check --no-input -q
# Python keeps compiled modules (__pycache__/, ignored by git) for every command make runs: a machine that sets
# PYTHONDONTWRITEBYTECODE (some CI images and sandboxes do) would otherwise recompile gatekit and pytest's
# rewritten test modules in every process that the tests start (seconds each, minutes over `make test`).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install test lint typecheck unit certify bench fuzz clean lab screenshots report-screenshots notebook-screenshots test-postgres test-reliability test-long wheel test-hosts test-image

# --no-compile: pip would compile every module of every package it installs (17-19 s of a fresh make test's serial
# start on 2 cores, 63-66 s against 47 s); Python compiles the modules a command imports, once, as it imports them.
$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install $(PIP_FLAGS) --no-compile -c constraints.txt -e '.[test,notebook]' 2> >(grep -v "is ignored: it is neither" >&2)
	@touch $(STAMP)

install: $(STAMP)

# The wheel users install (README: Install), in $(DIST)/, built alone in seconds (make test builds and checks its own,
# in a temporary folder): nothing is installed for it, no dependency and no extra.  The venv's setuptools builds it
# when make install has put the one pyproject.toml pins there (offline); else pip builds it in an isolated build
# environment holding only that setuptools (from pip's cache, or downloaded once).  No build/ is kept: setuptools
# keeps there the modules deleted from the tree, and would put them in the next wheel.
DIST ?= dist
SETUPTOOLS := $(shell sed -n 's/^requires = \["setuptools==\([^"]*\)"\]/\1/p' pyproject.toml)
wheel:
	@if [ "$$($(PY) -c 'import setuptools; print(setuptools.__version__)' 2>/dev/null)" = "$(SETUPTOOLS)" ]; \
	then python=$(PY); isolation=--no-build-isolation; how="the venv's setuptools $(SETUPTOOLS)"; \
	else python=$$(test -x $(PY) && echo $(PY) || echo $(PYTHON)); isolation=; \
		how="setuptools $(SETUPTOOLS) in an isolated build environment"; fi; \
	echo "make wheel: building the gatekit wheel alone (pip wheel --no-deps, $$how) in $(DIST)/"; \
	command="$$python -m pip wheel $(PIP_FLAGS) --no-deps $$isolation -w $(DIST) ."; echo "$$command"; \
	rm -rf build; $$command 2> >(grep -v "is ignored: it is neither" >&2); built=$$?; rm -rf build; exit $$built
	@ls $(DIST)/gatekit-*.whl

# Headless Chromium and ChromeDriver from Debian for the real-browser tests (GATEKIT_BROWSER=off skips them).
BROWSER_STAMP := $(VENV)/.chromium
$(BROWSER_STAMP): | $(STAMP)
	@if [ "$$GATEKIT_BROWSER" = off ] || { command -v chromium && command -v chromedriver; } >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing Chromium and ChromeDriver from Debian (apt-get) for the real-browser tests; GATEKIT_BROWSER=off skips them"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	else echo "Chromium is needed: apt-get install chromium chromium-driver (or GATEKIT_BROWSER=off)"; exit 1; fi
	@touch $(BROWSER_STAMP)

# Debian's PostgreSQL server for the team-simulator tests (a throwaway cluster per run; GATEKIT_POSTGRES=off skips them).
POSTGRES_STAMP := $(VENV)/.postgresql
$(POSTGRES_STAMP): | $(STAMP)
	@if [ "$$GATEKIT_POSTGRES" = off ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing PostgreSQL from Debian (apt-get) for the team-simulator tests; GATEKIT_POSTGRES=off skips them"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	else echo "PostgreSQL is needed: apt-get install postgresql (or GATEKIT_POSTGRES=off)"; exit 1; fi
	@touch $(POSTGRES_STAMP)

# Allure 3 (pinned in package.json) for the HTML report: make certify and the report tests.
NODE_STAMP := node_modules/.installed

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Four workers on two cores: the tests wait on servers, subprocesses and browsers for about a quarter of their time
# (a fresh clone's pytest took 413 s with -n 2, 327 s with -n 3, when the suite was smaller; now 464 s with -n 3,
# 401 s with -n 4).  PYTEST_WORKERS=2 for a slower machine.
PYTEST_WORKERS ?= 4
unit: $(STAMP) $(BROWSER_STAMP) $(POSTGRES_STAMP) $(NODE_STAMP)
	@# (with a short pass of the gateway API with its state in PostgreSQL: tests/simulator/conftest.py, BOTH_STORES)
	$(VENV)/bin/pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

# Every simulator test with the simulator's state in a throwaway PostgreSQL cluster (about 90 s on 2 cores).
test-postgres: $(STAMP) $(POSTGRES_STAMP)
	GATEKIT_TEST_STORE=postgres $(VENV)/bin/pytest -q -n 2 tests/simulator

# The reliability checks at length (make test runs a short pass of each): 50 start/SIGTERM cycles of gatekit simulate
# alone and with --workers 2 (each stop within 5 s), 20 sessions of a strict merchant project (filterwarnings = error,
# 300 quick tests while the simulator builds its app), and the concurrent forcing of statuses against the ledger.
test-reliability: $(STAMP) $(POSTGRES_STAMP)
	GATEKIT_STOP_CYCLES=50 GATEKIT_STRICT_RUNS=20 GATEKIT_FORCE_ROUNDS=40 $(VENV)/bin/pytest -q -s -n 0 \
		tests/simulator/test_stop_cycles.py tests/test_strict_warnings.py tests/test_stop_signals.py \
		tests/simulator/rules/test_forced_money.py tests/simulator/test_workers_outage.py

# The tests that run the certification suite whole, each with its short pass in make test (tests/suite_passes.py):
# the lenient simulator, pages in another style, an outside gateway, a team simulator of two workers on PostgreSQL, the
# wheel in an empty directory and in a project scaffolded from it, and drift taught its fitted section from the command
# line, and each injected drift on its own (about 4 minutes on 2 cores). CI runs it after make test.
test-long: $(STAMP) $(BROWSER_STAMP) $(POSTGRES_STAMP) $(NODE_STAMP)
	GATEKIT_FULL_SUITES=1 $(VENV)/bin/pytest -q -n 2 --dist loadgroup \
		tests/certify/test_profiles.py tests/simulator/test_workers.py tests/test_drift_teach.py tests/test_drift.py \
		tests/test_wheel.py tests/certify/test_in_flight.py

# The team simulator across hosts made on this machine (network namespaces joined by veth pairs to a bridge; root
# and iproute2): PostgreSQL, two `gatekit simulate --workers 2`, Locust's master and two workers, each on its own
# address; each host's address and what ran there printed with the figures (make test runs a short pass).
test-hosts: $(STAMP) $(POSTGRES_STAMP)
	GATEKIT_HOSTS_ORDERS=40 GATEKIT_HOSTS_LOAD_SECONDS=20 GATEKIT_HOSTS_LOAD_WORKERS=2 $(VENV)/bin/pytest -q -s -n 0 tests/hosts

# The container image (Dockerfile) built here offline from a Debian base (debootstrap + docker import, cached in
# ~/.cache/gatekit/image) and a wheelhouse made on the host, run with --network host, certified whole with the
# team profile (scripts/test_image.py; root: it installs docker.io and debootstrap, and starts dockerd if none runs).
test-image: $(STAMP) $(POSTGRES_STAMP)
	$(PY) scripts/test_image.py

# $(1) in the background while $(2) runs (its output printed after theirs); either failing fails the recipe.
define beside
@log=$$(mktemp); $(MAKE) --no-print-directory $(1) > $$log 2>&1 & other=$$!; \
$(MAKE) --no-print-directory $(2); mine=$$?; wait $$other; theirs=$$?; cat $$log; rm -f $$log; \
test $$mine = 0 && test $$theirs = 0
endef

# Lint while Allure's npm packages install (npm waits on the network and the disk; pip installs the venv on one
# core); then the tests while the types are checked (mypy takes one core for about 8 s; the tests leave about a
# third of the two cores idle, waiting for outcomes).
test:
	$(call beside,$(NODE_STAMP),lint)
	$(call beside,typecheck,unit)

# The main job: the certification suite against the embedded simulator, Allure + JUnit reports.
certify: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/gatekit certify --profile simulator

# Screenshots (not part of make test): the Allure report (reports/screenshots/*.png: the overview, the trends,
# two 3-D Secure scenarios with their page screenshots, a failing run's tree and categories) and every notebook
# run in a real JupyterLab (reports/screenshots/notebooks/), both in headless Chromium.
screenshots: report-screenshots notebook-screenshots

report-screenshots: certify
	$(PY) scripts/report_screenshots.py --no-run

# JupyterLab on notebooks/ (the `lab` extra is installed on first use); a notebook starts the simulator
# inside its kernel with toolkit.notebook.start_simulator().  Extra options: make lab LAB_FLAGS=--no-browser
lab: $(STAMP)
	@$(PY) -c "import jupyterlab" 2>/dev/null || $(PY) -m pip install $(PIP_FLAGS) -c constraints.txt -e '.[test,notebook,lab]' 2> >(grep -v "is ignored: it is neither" >&2)
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_FLAGS)

notebook-screenshots: $(STAMP) $(BROWSER_STAMP)
	@$(PY) -c "import jupyterlab" 2>/dev/null || $(PY) -m pip install $(PIP_FLAGS) -c constraints.txt -e '.[test,notebook,lab]' 2> >(grep -v "is ignored: it is neither" >&2)
	$(PY) scripts/screenshots.py

# wrk from Debian for the HTTP load benchmark (benchmarks/bench_http.py).
WRK_STAMP := $(VENV)/.wrk
$(WRK_STAMP): | $(STAMP)
	@if command -v wrk >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "Installing wrk from Debian (apt-get) for benchmarks/bench_http.py"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; \
	else echo "wrk is needed: apt-get install wrk"; exit 1; fi
	@touch $(WRK_STAMP)

bench: $(STAMP) $(WRK_STAMP) $(POSTGRES_STAMP) $(BROWSER_STAMP)
	$(PY) benchmarks/bench_signing.py
	$(PY) benchmarks/bench_simulator.py
	$(PY) benchmarks/bench_client.py
	$(PY) benchmarks/bench_server_cpu.py
	$(PY) benchmarks/bench_simulate_cpu.py
	$(PY) benchmarks/bench_http.py
	$(PY) benchmarks/bench_startup_simulate.py
	$(PY) benchmarks/bench_load.py
	$(PY) benchmarks/bench_abuse.py
	$(PY) benchmarks/bench_startup.py
	$(PY) benchmarks/bench_suite.py
	$(PY) benchmarks/bench_sandbox_run.py
	$(PY) benchmarks/bench_team.py
	$(PY) benchmarks/bench_team_postgres.py
	$(PY) benchmarks/bench_load_generator.py
	$(PY) benchmarks/bench_drift.py

# The fuzz suite at length: schemathesis over /paynet/openapi.json, signed; the control API (/_sim/) with
# hypothesis; random sequences of follow-ups against the ledger (make test runs a short pass of each).
FUZZ_EXAMPLES ?= 560
LEDGER_EXAMPLES ?= 1000
fuzz: $(STAMP)
	GATEKIT_FUZZ_COVERAGE=on GATEKIT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) GATEKIT_LEDGER_EXAMPLES=$(LEDGER_EXAMPLES) $(VENV)/bin/pytest -q -s \
		-p no:xdist tests/simulator/web/test_fuzz_openapi.py tests/simulator/web/test_fuzz_control.py tests/simulator/rules/test_ledger.py

clean:
	rm -rf $(VENV) node_modules allure-results allure-report reports dist
