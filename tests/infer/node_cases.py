"""onnx's node test cases as inference checks: each model with its declared output types removed, inferred by
graphlsp, compared with the expected outputs' types and shapes. Shared by the acceptance test and the README table."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnx.helper
import onnx.printer

from graphlsp.graph.build import build_model
from graphlsp.infer.refiner import ShapeRefiner, declared_type
from graphlsp.infer.types import OptionalType, SequenceType, TensorType, ValueType, type_str
from graphlsp.syntax.document import SyntaxDocument


@dataclass
class CaseResult:
    name: str
    op: str
    ok: bool
    detail: str


@functools.cache
def cases() -> list[tuple[str, onnx.ModelProto]]:
    return [(name, model) for name, model, _ in cases_with_inputs()]


@functools.cache
def cases_with_inputs() -> list[tuple[str, onnx.ModelProto, list[np.ndarray]]]:
    """Each case with the input values its first data set records."""
    from onnx.backend.test.case.node import collect_testcases

    out = []
    for c in collect_testcases():
        inputs = list(c.data_sets[0][0]) if c.data_sets else []
        out.append((c.name, c.model, inputs))
    return out


class RecordedInputs:
    """An evaluator that knows the graph inputs' recorded values (what a runtime would be fed)."""

    def __init__(self, model: onnx.ModelProto, inputs: list[np.ndarray]) -> None:
        names = [vi.name for vi in model.graph.input if vi.name not in {t.name for t in model.graph.initializer}]
        self.values = {  # scalars come as numpy scalars; sequences (lists) and optionals are not tensors
            n: np.asarray(v) for n, v in zip(names, inputs, strict=False) if isinstance(v, (np.ndarray, np.generic))
        }

    def value_of(self, value: Any, refiner: Any) -> np.ndarray | None:
        if value.kind == "input" and value.graph.kind == "model":
            return self.values.get(value.name)
        return None


def _expected(vi: onnx.ValueInfoProto) -> ValueType:
    """The expected type, read back through our own parser from onnx's printout of a one-output graph."""
    text = onnx.printer.to_text(onnx.helper.make_graph([], "g", [], [vi]))
    doc = SyntaxDocument(text)
    sig = doc.model.graph.sig if doc.model.graph else None
    return declared_type(sig.outputs[0].type) if sig and sig.outputs else None


def _same(expected: ValueType, got: ValueType) -> bool:
    if isinstance(expected, TensorType) and isinstance(got, TensorType):
        if expected.elem != got.elem or expected.sparse != got.sparse:
            return False
        if expected.shape is None:
            return True
        if got.shape is None or len(got.shape) != len(expected.shape):
            return False
        return all(e is None or e is g or (isinstance(e, int) and e == g) for e, g in zip(expected.shape, got.shape, strict=True))
    if isinstance(expected, (SequenceType, OptionalType)):
        return type(got) is type(expected) and _same(expected.elem, got.elem)  # type: ignore[union-attr]
    return type_str(expected) == type_str(got) if expected is not None else True


def run_case(name: str, model: onnx.ModelProto, evaluator: Any = None) -> CaseResult:
    text = onnx.printer.to_text(model)
    op = model.graph.node[0].op_type if len(model.graph.node) == 1 else "+".join(sorted({n.op_type for n in model.graph.node}))
    doc = SyntaxDocument(text)
    for piece in doc.pieces:  # remove the declared output types in the tree (printing `( seq)` would not parse)
        if piece.kind == "graph_sig" and piece.value is not None:
            for vi in piece.value.outputs:
                vi.type = None
    graph_model, _ = build_model(doc)
    refiner = ShapeRefiner(graph_model, doc, evaluator)
    refiner.run()
    errors = [f for f in refiner.findings() if f.severity == "error"]
    g = graph_model.graph
    assert g is not None
    for vi, value in zip(model.graph.output, g.outputs, strict=False):
        want = _expected(vi)
        got = refiner.type_of(value)
        if not _same(want, got):
            return CaseResult(name, op, False, f"{vi.name}: expected {type_str(want)}, got {type_str(got)}")
    if errors:
        return CaseResult(name, op, False, f"false error: {errors[0].code} {errors[0].message}")
    return CaseResult(name, op, True, "")
