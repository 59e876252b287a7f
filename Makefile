# The two commands: `make demo` (main job on the embedded default) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
export HYSEM_HOME ?= $(CURDIR)/.hysem

NEO4J_PORT ?= 17687
NEO4J_DIR ?= $(HYSEM_HOME)/neo4j

.PHONY: install ocr postgres shared-up shared-down demo docs test ui validate bench asreview-venv tagger findings-model entities-model clean neo4j-build neo4j-start neo4j-stop

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,sample,docs]'
	touch $@

install: $(VENV)/.installed

ocr:  ## Tesseract, the embedded default's OCR engine for scanned pages (Debian package)
	@command -v tesseract >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng >/dev/null; \
	  else \
	    echo "Tesseract is missing: run 'sudo apt-get install tesseract-ocr tesseract-ocr-eng'" \
	         "(or set assets.parsed_docs.ocr_engine: rapidocr in the profile)"; exit 1; \
	  fi; }

postgres:  ## PostgreSQL, the team server's instance storage (Debian package)
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  else \
	    echo "PostgreSQL is missing: run 'sudo apt-get install postgresql'"; exit 1; \
	  fi; }

shared-up: install ocr postgres  ## a team server: PostgreSQL, code server, webserver (http://127.0.0.1:3000) and daemon
	$(VENV)/bin/hysem shared up

shared-down:  ## stop the team server's processes
	$(VENV)/bin/hysem shared down

demo: install ocr  ## materialize every asset for the sample query, offline
	$(VENV)/bin/hysem demo

# The documentation site, built strictly (a broken link or anchor fails it) outside the tree.
MKDOCS_BUILD = NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir "$(HYSEM_HOME)/site"
docs: install  ## the documentation site (mkdocs.yml, docs/) into $(HYSEM_HOME)/site
	$(MKDOCS_BUILD)

test: install ocr  ## lint, format check, the layer contract, the documentation site and the whole test suite
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(MKDOCS_BUILD)
	$(PY) -m pytest

ui: install  ## Dagster UI on http://127.0.0.1:3000
	$(VENV)/bin/hysem ui

validate: install
	$(VENV)/bin/dagster definitions validate -w workspace.yaml

tagger: install  ## retrain the shipped span tagger from ../shared/realdata/pico_ebmnlp (2 cores: about 45 minutes)
	$(VENV)/bin/hysem train tagger

findings-model: install  ## retrain the shipped findings model from ../shared/realdata/evidence_inference (2 cores: about an hour)
	$(VENV)/bin/hysem train findings

entities-model: install  ## retrain the shipped entity and relation model from ../shared/realdata (scierc_ner, ncbi_disease, scierc_relations; 2 cores: about 30 minutes)
	$(VENV)/bin/hysem train entities

bench: install asreview-venv
	$(PY) -m pip install --quiet -e '.[test,sample,bench]'
	for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

# ASReview, the screening baseline of benchmarks/screening.py, in its own environment: it pins rispy
# differently from hysem.
ASREVIEW_VERSION ?= 3.0.8
asreview-venv: .venv-asreview/.installed
.venv-asreview/.installed:
	$(PYTHON) -m venv .venv-asreview
	.venv-asreview/bin/pip install --quiet asreview==$(ASREVIEW_VERSION)
	touch $@

neo4j-build:  ## build the Neo4j 5 launcher used by the graph tests (Maven, Java 17)
	bash tools/neo4j-launcher/neo4j.sh build

neo4j-start:  ## Neo4j 5 on 127.0.0.1:$(NEO4J_PORT); prints its bolt URI once ready
	bash tools/neo4j-launcher/neo4j.sh start $(NEO4J_PORT) $(NEO4J_DIR)

neo4j-stop:
	bash tools/neo4j-launcher/neo4j.sh stop $(NEO4J_DIR)

clean:
	rm -rf $(HYSEM_HOME)
