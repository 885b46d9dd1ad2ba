"""Our inferred types against onnx's C++ shape inference (`infer_shapes(strict_mode=True, data_prop=True)`).

For every value onnx types, ours must be equal or more precise and never contradict it: the same element type;
the same rank when onnx knows it; the same size for every dim onnx knows as an int; the same symbol for every dim
that is a graph input's dim_param. A dim onnx names with a symbol of its own (`unk__3`) is unknown to it.

Both engines see the model with the shapes of its declared outputs and value_info removed: onnx keeps a declared
shape as it is, graphlsp takes a declaration as a claim to check, not a proof (exporters declare shapes their
graphs do not compute), so each is judged on what it infers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import onnx
import onnx.printer
import onnx.shape_inference

from graphlsp.analysis import Analysis
from graphlsp.infer import dims as d
from graphlsp.infer.types import TensorType, ValueType, type_str


@dataclass
class Comparison:
    values: int = 0
    equal: int = 0
    more_precise: int = 0
    less_precise: list[str] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)
    false_errors: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # our values with unknown rank or an unknown dim
    onnx_failed: str = ""


def _without_declared_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    for vi in [*g.output, *g.value_info]:
        if vi.type.HasField("tensor_type"):
            vi.type.tensor_type.ClearField("shape")
    return out


def _onnx_types(model: onnx.ModelProto) -> tuple[dict[str, onnx.TypeProto], str]:
    model = _without_declared_shapes(model)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        failed = ""
    except Exception as e:  # onnx's strict mode gives up on some models; compare with what it can do
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
        failed = str(e).splitlines()[0][:200]
    g = inferred.graph
    return {vi.name: vi.type for vi in [*g.value_info, *g.output] if vi.HasField("type")}, failed


def _input_symbols(model: onnx.ModelProto) -> set[str]:
    out = set()
    for vi in model.graph.input:
        if vi.type.HasField("tensor_type"):
            for dim in vi.type.tensor_type.shape.dim:
                if dim.HasField("dim_param"):
                    out.add(dim.dim_param)
    return out


def _compare_tensor(theirs: onnx.TypeProto.Tensor, ours: TensorType, symbols: set[str]) -> tuple[str, str]:
    """("equal" | "more" | "less" | "contradiction", detail)."""
    if theirs.elem_type and ours.elem is not None and theirs.elem_type != ours.elem:
        return "contradiction", "element type"
    verdict = "equal"
    if theirs.elem_type and ours.elem is None:
        return "less", "element type unknown"
    if not theirs.HasField("shape"):
        return ("more" if ours.shape is not None else "equal"), ""
    if ours.shape is None:
        return "less", "rank unknown"
    if len(ours.shape) != len(theirs.shape.dim):
        return "contradiction", "rank"
    for i, (t, o) in enumerate(zip(theirs.shape.dim, ours.shape, strict=True)):
        if t.HasField("dim_value"):
            if o is None:
                return "less", f"dim {i} unknown"
            if o != t.dim_value:
                return "contradiction", f"dim {i}: {d.to_str(o)} != {t.dim_value}"
        elif t.HasField("dim_param") and t.dim_param in symbols:
            if o is None:
                return "less", f"dim {i} unknown"
            if isinstance(o, int) or o.key != t.dim_param:
                if isinstance(o, d.Expr) and d.equal(o, d.symbol(t.dim_param)) is None:
                    return "contradiction", f"dim {i}: {d.to_str(o)} != {t.dim_param}"
                if isinstance(o, int):
                    return "contradiction", f"dim {i}: {o} != {t.dim_param}"
        elif o is not None:
            verdict = "more"
    return verdict, ""


def compare(model: onnx.ModelProto) -> Comparison:
    result = Comparison()
    theirs, result.onnx_failed = _onnx_types(model)
    as_is = Analysis(onnx.printer.to_text(model))  # no false error with the declarations checked
    result.false_errors = [f"{f.code} {f.message}" for f in as_is.findings() if f.severity == "error"]
    result.false_errors += [f"{p.code} {p.message}" for p in as_is.doc.problems]
    a = Analysis(onnx.printer.to_text(_without_declared_shapes(model)))
    graph = a.model.graph
    if graph is None:
        result.false_errors.append("no graph")
        return result
    symbols = _input_symbols(model)
    for value in graph.values.values():
        ours: ValueType = a.refiner.type_of(value)
        if isinstance(ours, TensorType) and (ours.shape is None or any(x is None for x in ours.shape)):
            result.unresolved.append(f"{value.name}: {type_str(ours)}")
        elif ours is None:
            result.unresolved.append(f"{value.name}: ?")
        t = theirs.get(value.name)
        if t is None or not t.HasField("tensor_type"):
            continue
        result.values += 1
        if not isinstance(ours, TensorType):
            result.less_precise.append(f"{value.name}: ours {type_str(ours)}")
            continue
        verdict, detail = _compare_tensor(t.tensor_type, ours, symbols)
        if verdict == "equal":
            result.equal += 1
        elif verdict == "more":
            result.more_precise += 1
        elif verdict == "less":
            result.less_precise.append(f"{value.name}: {detail} (ours {type_str(ours)})")
        else:
            result.contradictions.append(f"{value.name}: {detail} (ours {type_str(ours)})")
    return result
