# graphlsp: `make run` checks the bundled examples, `make test` runs the whole test suite, `make bench` the benchmarks.
# Both set up .venv on first use from nothing but python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Exit status 1 means "diagnostics found" (examples/broken.onnxtxt has planted mistakes); 2 is a real failure.
run: $(STAMP)
	$(BIN)/graphlsp check examples/; status=$$?; [ $$status -le 1 ]

lint: $(STAMP)
	$(BIN)/ruff check graphlsp tests bench
	$(BIN)/mypy graphlsp
	$(BIN)/lint-imports

test: $(STAMP) lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
