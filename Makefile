# graphlsp: `make run` checks the bundled examples, `make test` runs the whole test suite, `make bench` the benchmarks,
# `make fuzz` the fuzzer for GRAPHLSP_FUZZ_SECONDS (default 1800; `make test` runs it on a short budget).
# Both set up .venv on first use from nothing but python3: `make run` installs graphlsp and its run-time
# dependencies only; `make test` (and lint, bench, fuzz) adds the test toolchain (the `test` extra).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: run test lint bench fuzz clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(RUN_STAMP) $(STAMP)

# Exit status 1 means "diagnostics found" (examples/broken.onnxtxt has planted mistakes); 2 is a real failure.
run: $(RUN_STAMP)
	$(BIN)/graphlsp check examples/; status=$$?; [ $$status -le 1 ]

lint: $(STAMP)
	$(BIN)/ruff check graphlsp tests bench tools
	$(BIN)/mypy graphlsp
	$(BIN)/lint-imports

test: $(STAMP) lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m bench

# Mutated real models (text and binary) through every command, and the language server's state machine (edits with
# lone \r, cancels, malformed params, crashing analyses) for a quarter of the time; prints how many inputs ran per
# target and each failure (failing inputs are kept in GRAPHLSP_FUZZ_OUT, default .fuzz-failures/;
# GRAPHLSP_FUZZ_SEED picks the seed).
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz_models

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .fuzz-failures
