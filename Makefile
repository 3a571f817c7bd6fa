# Two commands on a fresh machine with only python3 and make:
#   make demo   the whole job end to end against the embedded sandbox
#   make test   lint, format check, types, tests (incl. the notebooks)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: venv demo test lint typecheck pytest notebooks bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/recon demo

lint: $(STAMP)
	$(BIN)/ruff check recon tests bench
	$(BIN)/ruff format --check recon tests bench
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	MPLBACKEND=Agg $(BIN)/pytest -n 2 --timeout=600 -q

test: lint typecheck pytest

notebooks: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m recon.analytics.notebooks --out build/notebooks

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/extract.py
	$(BIN)/python bench/statements.py
	$(BIN)/python bench/reconcile.py
	$(BIN)/python bench/analytics.py

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache
