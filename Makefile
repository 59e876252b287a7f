# The two commands: `make demo` (main job on the embedded default) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
export HYSEM_HOME ?= $(CURDIR)/.hysem

.PHONY: install demo test ui validate bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,sample]'
	touch $@

install: $(VENV)/.installed

demo: install  ## materialize every asset for the sample query, offline
	$(VENV)/bin/hysem demo

test: install  ## the whole test suite
	$(PY) -m pytest

ui: install  ## Dagster UI on http://127.0.0.1:3000
	$(VENV)/bin/hysem ui

validate: install
	$(VENV)/bin/dagster definitions validate -w workspace.yaml

bench: install
	$(PY) -m pip install --quiet -e '.[test,sample,bench]'
	for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf $(HYSEM_HOME)
