"""Value types: tensors (element type + shape), sparse tensors, sequences, maps, optionals.

A shape is None (unknown rank) or a tuple of dims (`dims.Dim`: int, Expr or None). Element types are onnx's
TensorProto enum values; None is unknown. Types are immutable and compare by value (dims by identity, which is
equality for interned expressions), so the refiner can tell "same as before" cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass

from onnx import TensorProto

from graphlsp.infer import dims as d
from graphlsp.infer.dims import Dim

Shape = tuple[Dim, ...] | None

ELEM_BY_NAME: dict[str, int] = {
    name.lower(): value for name, value in TensorProto.DataType.items() if name != "UNDEFINED"
}
NAME_BY_ELEM: dict[int, str] = {v: k for k, v in ELEM_BY_NAME.items()}


@dataclass(frozen=True, slots=True)
class TensorType:
    elem: int | None
    shape: Shape
    sparse: bool = False


@dataclass(frozen=True, slots=True)
class SequenceType:
    elem: ValueType


@dataclass(frozen=True, slots=True)
class MapType:
    key: int | None
    value: ValueType


@dataclass(frozen=True, slots=True)
class OptionalType:
    elem: ValueType


ValueType = TensorType | SequenceType | MapType | OptionalType | None


def elem_name(elem: int | None) -> str:
    return "?" if elem is None else NAME_BY_ELEM.get(elem, str(elem))


def shape_str(shape: Shape) -> str:
    if shape is None:
        return "[...]"
    return "[" + ", ".join(d.to_str(x) for x in shape) + "]"


def type_str(t: ValueType) -> str:
    """As the file would write it: `float[batch, seq, 16]`, `seq(float[N])`, `?` for unknown."""
    if t is None:
        return "?"
    if isinstance(t, TensorType):
        body = elem_name(t.elem) + ("" if t.shape == () else shape_str(t.shape))
        return f"sparse_tensor({body})" if t.sparse else body
    if isinstance(t, SequenceType):
        return f"seq({type_str(t.elem)})"
    if isinstance(t, MapType):
        return f"map({elem_name(t.key)}, {type_str(t.value)})"
    return f"optional({type_str(t.elem)})"
