"""onnx's own model corpus: the node test cases and the model files shipped in the wheel."""

from __future__ import annotations

import functools
import glob
import os
import warnings

import onnx

DATA_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
DATA_CORPORA = ["light", "real", "simple", "pytorch-converted", "pytorch-operator"]
CORPORA = ["node", *DATA_CORPORA]


@functools.cache
def corpus_models(corpus: str) -> list[tuple[str, onnx.ModelProto]]:
    if corpus == "node":
        from onnx.backend.test.case.node import collect_testcases

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the case generators overflow casts on purpose
            return [(case.name, case.model) for case in collect_testcases()]
    # `<dir>/<test>/model.onnx`; light/ holds `light_<name>.onnx` files; real/ ships only data.json files that
    # point at the light/ models (so it contributes no model of its own).
    root = os.path.join(DATA_DIR, corpus)
    paths = sorted(glob.glob(os.path.join(root, "*", "model.onnx")) + glob.glob(os.path.join(root, "*.onnx")))
    return [(os.path.relpath(p, DATA_DIR), onnx.load(p)) for p in paths]
