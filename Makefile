# Two entry points: `make demo` (install + start the app) and `make test` (install + all tests).
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: demo test lint install browser bench

$(PY):
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): requirements.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt $(RUN_STAMP)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@

install: $(RUN_STAMP)

demo: $(RUN_STAMP)
	$(PY) app.py

browser:
	bash scripts/install-browser.sh

lint: $(DEV_STAMP)
	$(PY) -m ruff check .

test: $(DEV_STAMP) browser
	$(PY) -m ruff check .
	$(PY) -m pytest $(PYTEST_ARGS)
