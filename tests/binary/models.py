"""Real binary models for the binary front end's tests: `../shared/realworld/` (models shipped in PyPI wheels) and
`corpus/models/` (exports built by `corpus/build.py`), with inputs onnxruntime can run them on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
REALWORLD = ROOT.parent / "shared" / "realworld"
CORPUS = ROOT / "corpus" / "models"


def real_models() -> list[Path]:
    """Every real binary model available here (the realworld folder is beside the repository in CI)."""
    return sorted(REALWORLD.glob("*.onnx")) + sorted(CORPUS.glob("*.onnx"))


def feeds(model: onnx.ModelProto, size: int = 64, seed: int = 0) -> dict[str, Any]:
    """Inputs for every graph input that is not an initializer: symbolic dims take `size`, floats are normal,
    ints 0 (a sample rate input gets 16000, a mask ones), bools random."""
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    out: dict[str, Any] = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else _dim(d.dim_param, size)
                 for d in tt.shape.dim]  # fmt: skip
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if dtype.kind == "f":
            out[vi.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            fill = 16000 if vi.name in ("sr", "sample_rate") else 1 if "mask" in vi.name else 0
            out[vi.name] = np.full(shape, fill, dtype=dtype)
        else:
            out[vi.name] = rng.integers(0, 2, shape).astype(dtype)
    return out


def _dim(param: str, size: int) -> int:
    """A symbolic dim's size: every symbol is `size`, and a sum of symbols (the GenAI builder's attention mask is
    `past_sequence_length + sequence_length` long) the sum."""
    terms = [t.strip() for t in param.split("+")]
    if len(terms) > 1 and all(t.isidentifier() for t in terms):
        return size * len(terms)
    return size


def run(model_bytes: bytes, inputs: dict[str, Any]) -> list[Any]:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # the graph as written
    sess = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)
