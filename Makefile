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
	$(BIN)/ruff check graphlsp tests bench tools corpus
	$(BIN)/mypy graphlsp
	$(BIN)/lint-imports

test: $(STAMP) lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m bench

# Mutated real models (text, bytes and protobuf fields of binaries) through every command, op libraries, config
# files, command lines, the server's binary view (renderView, then every request), each input in a worker process
# under a memory cap (GRAPHLSP_FUZZ_MEMORY_MB, default 2048) and an audit of the files it opens (none outside the
# model's folder); and the language server's state machine (edits with lone \r, cancels, malformed params, crashing
# analyses) for a quarter of the time. Prints how many inputs ran per target and each failure (failing inputs are
# kept in GRAPHLSP_FUZZ_OUT, default .fuzz-failures/; GRAPHLSP_FUZZ_SEED picks the seed, GRAPHLSP_FUZZ_TARGETS a
# comma-separated subset, GRAPHLSP_FUZZ_INPUT_SECONDS the time an input may take, default 60).
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz_models

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .fuzz-failures
