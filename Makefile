# Two commands for a newcomer: `make run` and `make test`. Everything installs into ./.venv.
# The steps live in dev.py, so `python3 dev.py run|test` does the same on a machine without make.
PYTHON ?= python3

.PHONY: install run console test lint bench clean

install:
	$(PYTHON) dev.py install

## Run the bot: connects to Discord when DISCORD_TOKEN is set, otherwise opens the offline console.
run:
	$(PYTHON) dev.py run

console:
	$(PYTHON) dev.py console

## Run the whole test suite.
test:
	$(PYTHON) dev.py test

lint:
	$(PYTHON) dev.py lint

bench:
	$(PYTHON) dev.py bench

clean:
	rm -rf .venv var
