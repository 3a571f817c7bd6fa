# Two commands on a fresh machine with only python3 and make:
#   make demo   the whole job end to end against the embedded sandbox
#   make test   lint, format check, types, tests (incl. the notebooks, and the built wheel
#               installed in a fresh venv running `recon demo`: tests/test_distribution.py)
#   make dist   the wheel and the sdist, into dist/
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

CHROMIUM ?= /usr/bin/chromium

.PHONY: venv demo test lint typecheck pytest browser java notebooks bench dist messages clean

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

# the review app's browser test drives Debian's Chromium (never a downloaded browser):
# installed here when missing and we can (root, or sudo without a password); otherwise the
# test fails, in CI and out of it, rather than being skipped
browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null && command -v apt-get >/dev/null; then \
	    sudo -n apt-get update && sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver; \
	  else \
	    echo "make: $(CHROMIUM) is missing and cannot be installed here (needs root and apt-get): apt-get install chromium, or set CHROMIUM=/path and RECON_CHROMIUM" >&2; \
	  fi; \
	fi

# the Spark engine's parity tests run Spark local mode on Debian's Java: installed here when
# missing and we can; otherwise the tests fail (never skip) with what to install
java:
	@if ! command -v java >/dev/null && [ -z "$$JAVA_HOME" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y openjdk-17-jre-headless; \
	  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null && command -v apt-get >/dev/null; then \
	    sudo -n apt-get update && sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y openjdk-17-jre-headless; \
	  else \
	    echo "make: java is missing and cannot be installed here (needs root and apt-get): apt-get install openjdk-17-jre-headless, or set JAVA_HOME" >&2; \
	  fi; \
	fi

pytest: $(STAMP) browser java
	MPLBACKEND=Agg RECON_CHROMIUM=$(CHROMIUM) $(BIN)/pytest -n 2 --timeout=600 -q --durations=25

test: lint typecheck pytest

# offline: the build backend (hatchling) comes from .venv, not a download
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .

notebooks: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python -m recon.analytics.notebooks --out build/notebooks

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	$(BIN)/python bench/extract.py
	$(BIN)/python bench/statements.py
	$(BIN)/python bench/reconcile.py
	$(BIN)/python bench/analytics.py
	$(BIN)/python bench/review.py

# the gettext catalogs (recon/locale): extract every marked string of the code and templates,
# then merge it into each language's .po (new ones empty, vanished ones dropped); translate
# the empty msgstrs, and tests/test_i18n.py passes again
messages: $(STAMP)
	mkdir -p build
	$(BIN)/pybabel extract -F babel.cfg --no-location --sort-output --project pixrecon --copyright-holder "the pixrecon authors" -o build/recon.pot .
	$(BIN)/pybabel update -i build/recon.pot -d recon/locale -D recon --ignore-obsolete --no-fuzzy-matching --width 100

clean:
	rm -rf build dist .pytest_cache .mypy_cache .ruff_cache
