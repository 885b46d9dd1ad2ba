"""Checks of the fold rewrite on one model: the folded text parses (onnx's parser and ours), infers to the same
output types, and computes the same outputs under onnxruntime (the oracle; never imported by graphlsp).

    python -m tests.runner.fold_check      # every example and corpus model, with counts
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnx.parser
import onnx.printer

from graphlsp.analysis import Analysis
from graphlsp.infer.types import type_str
from graphlsp.lint.fold import fold_text

SYMBOLIC_DIM = 3  # the size every symbolic or unknown input dim gets at run time


@dataclass
class FoldCheck:
    name: str
    changed: bool
    folded: int = 0
    problem: str = ""  # "" when the folded model passes every check
    compared: bool = False  # onnxruntime ran both models and their outputs were compared


def random_feed(model: onnx.ModelProto, rng: np.random.Generator) -> dict[str, Any] | None:
    """Random values for the graph inputs that are not initializers; None when an input is not a tensor."""
    inits = {t.name for t in model.graph.initializer}
    feeds: dict[str, Any] = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        if vi.type.WhichOneof("value") != "tensor_type":
            return None
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else SYMBOLIC_DIM for d in tt.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if dtype.kind == "f":
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            feeds[vi.name] = rng.integers(0, 3, shape).astype(dtype)  # small: valid as indices and sizes
        elif dtype.kind == "b":
            feeds[vi.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            return None
    return feeds


def _session(model: onnx.ModelProto) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # compare our fold, not theirs
    so.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _output_types(text: str) -> list[str]:
    a = Analysis(text)
    graph = a.model.graph
    return [type_str(a.refiner.type_of(v)) for v in graph.outputs] if graph is not None else []


def check(name: str, text: str, recorded: list[Any] | None = None) -> FoldCheck:
    run = fold_text(text)
    if run.text == text:
        return FoldCheck(name, False)
    result = FoldCheck(name, True, run.result.folded)
    try:
        folded = onnx.parser.parse_model(run.text)
    except Exception as e:
        result.problem = f"onnx cannot parse the folded text: {e}"
        return result
    if Analysis(run.text).doc.problems:
        result.problem = "graphlsp cannot parse the folded text"
        return result
    before, after = _output_types(text), _output_types(run.text)
    if before != after:
        result.problem = f"output types changed: {before} -> {after}"
        return result
    original = onnx.parser.parse_model(text)
    feeds = random_feed(original, np.random.default_rng(0))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = _session(original).run(None, feeds) if feeds is not None else None
            except Exception:
                want = None
            if want is None and recorded is not None:  # random values are not valid inputs: the recorded ones
                names = [vi.name for vi in original.graph.input]
                feeds = dict(zip(names, recorded, strict=False))
                want = _session(original).run(None, feeds)
    except Exception:
        return result  # onnxruntime cannot run the original either: nothing to compare
    if want is None:
        return result
    try:
        got = _session(folded).run(None, feeds)
    except Exception as e:
        result.problem = f"onnxruntime cannot run the folded model: {str(e).splitlines()[0][:200]}"
        return result
    result.compared = True
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        if not _equal(w, g):
            result.problem = f"output {i} differs"
            break
    return result


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":  # a folded value is rounded once, where the runtime may round twice: 1 ulp
        tol = 2e-3 if a.dtype.itemsize <= 2 else 1e-5
        return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol, atol=tol, equal_nan=True))
    return bool(np.array_equal(a, b))


def corpus() -> list[tuple[str, str, list[Any] | None]]:
    """Every example and corpus model as (name, text, recorded input values or None)."""
    from tests.conftest import example_texts
    from tests.corpus import DATA_CORPORA, corpus_models

    out: list[tuple[str, str, list[Any] | None]] = []
    for name, text in example_texts().items():
        if name != "broken.onnxtxt":
            out.append((name, text, None))
    from tests.runner.node_eval import testcases

    for case in testcases():
        out.append((case.name, onnx.printer.to_text(case.model), list(case.data_sets[0][0])))
    for c in DATA_CORPORA:
        for name, model in corpus_models(c):
            out.append((name, onnx.printer.to_text(model), None))
    return out


def main() -> int:
    checks = [check(n, t, r) for n, t, r in corpus()]
    changed = [c for c in checks if c.changed]
    print(f"{len(checks)} models, {len(changed)} changed by fold ({sum(c.folded for c in changed)} nodes folded), "
          f"{sum(c.compared for c in changed)} compared under onnxruntime")  # fmt: skip
    for c in checks:
        if c.problem:
            print(f"{c.name}: {c.problem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
