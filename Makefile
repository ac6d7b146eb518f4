# Two commands for a newcomer: `make run` and `make test`. Everything installs into ./.venv.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: install run console test lint bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## Run the bot: connects to Discord when DISCORD_TOKEN is set, otherwise opens the offline console.
run: $(STAMP)
	$(PY) -m bot

console: $(STAMP)
	$(PY) -m bot console

## Run the whole test suite.
test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	for b in bench/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) var
