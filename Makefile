# gatekit: two commands set everything up on a fresh machine.
#   make certify   the certification suite against the embedded simulator, with a report
#   make test      every test: lint, types, unit and simulator tests, features, notebooks
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PIP_FLAGS := --disable-pip-version-check --no-input -q

.PHONY: install test lint typecheck unit certify bench clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install $(PIP_FLAGS) -c constraints.txt -e '.[test,notebook]' 2> >(grep -v "is ignored: it is neither" >&2)
	@touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(VENV)/bin/pytest -q

test: lint typecheck unit

NODE_STAMP := node_modules/.installed

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

# The main job: the certification suite against the embedded simulator, Allure + JUnit reports.
certify: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/gatekit certify --profile simulator

bench: $(STAMP)
	$(PY) benchmarks/bench_signing.py

clean:
	rm -rf $(VENV) node_modules allure-results allure-report reports
