#!/usr/bin/env python3
"""Build corpus/models/: real exporter-produced binary ONNX models, tiny configs, random weights.

    python3 corpus/build.py                 # create the venvs if needed, build every target
    python3 corpus/build.py --list          # what it builds (no venv needed)
    python3 corpus/build.py --only optimum-bert,skl-trees
    python3 corpus/build.py --table         # rewrite README.md's table from models/MANIFEST.json

Runs with any python3 (stdlib only here). It creates its own virtual environments and runs every
target in a subprocess of the right one:
    main    $GL_CORPUS_VENV (default $TMPDIR/gl-corpus/venv)   requirements.txt
    tf      $GL_CORPUS_VENV-tf                                 requirements-tf.txt      (optional)
    paddle  $GL_CORPUS_VENV-paddle                             requirements-paddle.txt  (optional)
A venv is (re)installed when its requirements file changed (a stamp file in the venv). Extra pip
arguments come from $GL_CORPUS_PIP_ARGS (e.g. an extra index for CPU torch wheels). A group whose
install fails, and a target whose export or validation fails, is skipped with its reason printed;
the build goes on.

Every model written is validated in the main venv: onnx.checker.check_model (full_check, i.e. strict
shape inference too, for files under 64 MB), an onnxruntime CPU InferenceSession loads it, and it runs
under at least one assignment of its symbolic input dims (the same kind of feeds the shared oracle
tools/runtime_shapes.py makes). Files that fail are not kept. What was kept is listed in
models/MANIFEST.json (exporter versions, features, size, sha256) and README.md's table.

Weights are random from fixed seeds (torch.manual_seed, numpy, random, tf, paddle); exports are
deterministic as far as the exporters allow.

This file is only the entry point: the targets (one module per exporter family) and the driver are the
`corpus` package around it (see __init__.py).
"""
from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # run as a script, sys.path[0] is corpus/ itself: import the package from the repository's root instead
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path.insert(0, os.path.dirname(here))
    from corpus.driver import main

    sys.exit(main())
