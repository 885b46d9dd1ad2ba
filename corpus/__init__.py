"""The corpus builder: real exporter-produced binary ONNX models in models/, from tiny configs with random weights.

Run it as `python3 corpus/build.py` (or `python -m corpus`); see build.py for the options. The package:
    driver.py          the command line: each target exported in its venv, validated, kept or skipped
    registry.py        the targets and the exporter families, in build order
    from_*.py          one module per exporter family, its targets (optimum, torchscript, dynamo, torchvision,
                       ort_optimizer, ort_quantization, skl2onnx, tf2onnx, paddle2onnx, genai_builder)
    kit.py             what a target gets (Ctx) and the helpers it runs inside its venv
    tiny_hf.py         tiny transformers configs and models; torch_models.py: small torch modules
    validate.py        checker, onnxruntime load and smoke run of every file written (main venv)
    venvs.py           the venvs of the groups; manifest.py: models/MANIFEST.json and README.md's table
Nothing here imports more than the standard library at import time: the driver runs under any python3, and each
exporter is imported inside its target functions, in the venv of the target's group.
"""
from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
MANIFEST = os.path.join(MODELS, "MANIFEST.json")
README = os.path.join(HERE, "README.md")
SEED = 0
