# The verbs a person types. Each sets up .venv first (once), so a fresh clone
# needs nothing but Python 3.10+ and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JB     := $(BIN)/jupyter-book

.PHONY: help setup book test lab bench clean

help:
	@echo "make book   build the HTML book into _build/html (executes every chapter)"
	@echo "make test   run every test, the book build included"
	@echo "make lab    open JupyterLab; chapters open as notebooks, widgets are live"
	@echo "make bench  time every figure's update against a naive rebuild"
	@echo "make clean  remove _build (the execution cache included)"

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	# jupytext's default viewer for .md, inside the environment (not in ~/.jupyter)
	mkdir -p $(VENV)/etc/jupyter/labconfig
	cp tools/default_setting_overrides.json $(VENV)/etc/jupyter/labconfig/default_setting_overrides.json
	touch $(STAMP)

book: $(STAMP)
	$(JB) build . --builder html -W --keep-going

test: $(STAMP)
	$(BIN)/python -m pytest

lab: $(STAMP)
	$(BIN)/jupyter lab book/

bench: $(STAMP)
	$(BIN)/python benchmarks/figures.py

clean:
	rm -rf _build
