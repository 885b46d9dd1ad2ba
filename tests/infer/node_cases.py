"""onnx's node test cases as inference checks: each model with its declared output types removed, inferred by
graphlsp, compared with the expected outputs' types and shapes. Shared by the acceptance test and the README table."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
import onnx.printer

from graphlsp.binary.read import type_spec
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.infer.types import OptionalType, SequenceType, TensorType, ValueType, declared_type, type_str
from graphlsp.runner import Runner
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.lower import build_model


@dataclass
class CaseResult:
    name: str
    op: str
    ok: bool
    detail: str


@functools.cache
def cases() -> list[tuple[str, onnx.ModelProto]]:
    return [(name, model) for name, model, _, _ in cases_with_inputs()]


@functools.cache
def cases_with_inputs() -> list[tuple[str, onnx.ModelProto, list[Any], list[Any]]]:
    """Each case with the input values its first data set records, and the outputs expected from them."""
    from onnx.backend.test.case.node import collect_testcases

    out = []
    for c in collect_testcases():
        inputs, outputs = (list(c.data_sets[0][0]), list(c.data_sets[0][1])) if c.data_sets else ([], [])
        out.append((c.name, c.model, inputs, outputs))
    return out


class RecordedRunner(Runner):
    """The CPU runner with the graph inputs' recorded values known: what a runtime fed those inputs computes,
    so value-dependent output shapes (NonZero, NonMaxSuppression, StringSplit, Loop outputs) become exact."""

    def __init__(self, model: Any, onnx_model: onnx.ModelProto, inputs: list[Any]) -> None:
        super().__init__(model)
        names = [vi.name for vi in onnx_model.graph.input if vi.name not in {t.name for t in onnx_model.graph.initializer}]
        self.recorded = {n: _runtime_value(v) for n, v in zip(names, inputs, strict=False)}

    def _direct(self, v: Any) -> Any:
        if v.kind == "input" and v.graph.kind == "model" and v.name in self.recorded:
            return self.recorded[v.name]
        return super()._direct(v)


def _runtime_value(v: Any) -> Any:
    if isinstance(v, onnx.TensorProto):
        return onnx.numpy_helper.to_array(v)
    if isinstance(v, (np.ndarray, np.generic)):
        return np.asarray(v)
    if isinstance(v, (list, tuple)):
        return [_runtime_value(x) for x in v]
    return v


def _expected(vi: onnx.ValueInfoProto) -> ValueType:
    """The expected type, read by the binary front end."""
    return declared_type(type_spec(vi.type)) if vi.HasField("type") else None


def _same(expected: ValueType, got: ValueType, actual: Any = None) -> bool:
    """Whether `got` is the expected type: each dim as declared (a symbol must be ours too), or, when the
    output's actual value is given, the dim that value has."""
    if isinstance(expected, TensorType) and isinstance(got, TensorType):
        if expected.elem != got.elem or expected.sparse != got.sparse:
            return False
        if expected.shape is None:
            return True
        if got.shape is None or len(got.shape) != len(expected.shape):
            return False
        # the real dims: one value's, or each dim over a sequence's elements (None where they differ)
        reals = [np.shape(x) for x in (actual if isinstance(actual, list) else [actual])
                 if isinstance(x, (np.ndarray, np.generic)) and np.ndim(x) == len(got.shape)]  # fmt: skip
        real = [c[0] if len(set(c)) == 1 else None for c in zip(*reals, strict=True)] if reals else None
        return all(
            e is None or e is g or (isinstance(e, int) and e == g) or (real is not None and g == real[i])
            for i, (e, g) in enumerate(zip(expected.shape, got.shape, strict=True))
        )
    if isinstance(expected, (SequenceType, OptionalType)):
        if type(got) is not type(expected):
            return False
        items = actual if isinstance(expected, SequenceType) and isinstance(actual, list) and actual else None
        return _same(expected.elem, got.elem, items)  # type: ignore[union-attr]
    return type_str(expected) == type_str(got) if expected is not None else True


def run_case(name: str, model: onnx.ModelProto, evaluator: Any = None, actual: list[Any] | None = None) -> CaseResult:
    text = onnx.printer.to_text(model)
    op = model.graph.node[0].op_type if len(model.graph.node) == 1 else "+".join(sorted({n.op_type for n in model.graph.node}))
    doc = SyntaxDocument(text)
    for piece in doc.pieces:  # remove the declared output types in the tree (printing `( seq)` would not parse)
        if piece.kind == "graph_sig" and piece.value is not None:
            for vi in piece.value.outputs:
                vi.type = None
    graph_model, _ = build_model(doc)
    if isinstance(evaluator, tuple):  # (onnx model, recorded inputs): the runner, fed those inputs
        evaluator = RecordedRunner(graph_model, *evaluator)
    refiner = ShapeRefiner(graph_model, evaluator)
    if isinstance(evaluator, Runner):
        evaluator.refiner = refiner
    refiner.run()
    errors = [f for f in refiner.findings() if f.severity == "error"]
    g = graph_model.graph
    assert g is not None
    for i, (vi, value) in enumerate(zip(model.graph.output, g.outputs, strict=False)):
        want = _expected(vi)
        got = refiner.type_of(value)
        if not _same(want, got, _runtime_value(actual[i]) if actual and i < len(actual) else None):
            return CaseResult(name, op, False, f"{vi.name}: expected {type_str(want)}, got {type_str(got)}")
    if errors:
        return CaseResult(name, op, False, f"false error: {errors[0].code} {errors[0].message}")
    return CaseResult(name, op, True, "")
