"""Attribute values as Python values, from the syntax tree with onnx's typing rules and the schema's defaults.

int -> int, float -> float, string -> str, lists -> list, tensor -> numpy array, graph -> the syntax Graph,
type_proto -> the syntax TypeRef, `@ref` -> Ref (bound by the caller of a function body).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from graphlsp.syntax import tree as t

_NUMPY = {
    "float": np.float32, "double": np.float64, "int64": np.int64, "int32": np.int32, "int16": np.int16,
    "int8": np.int8, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "bool": np.bool_,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Ref:
    name: str


class TensorError(ValueError):
    pass


def tensor_value(tv: t.TensorValue) -> np.ndarray:
    """A tensor literal as a numpy array; exotic element types go through onnx's own conversion."""
    ty = tv.type
    if ty.kind != "tensor" or ty.dims is None or any(dm.kind != "value" for dm in ty.dims):
        raise TensorError("tensor literal needs a tensor type with numeric dims")
    shape = tuple(int(dm.value) for dm in ty.dims)  # type: ignore[arg-type]
    values = tv.data.values if tv.data is not None and tv.data.values is not None else None
    dtype = _NUMPY.get(ty.elem or "")
    if dtype is not None and values is not None:
        arr: np.ndarray = np.array([lit.value for lit in values], dtype=dtype)
        if arr.size != int(np.prod(shape)):
            raise TensorError(f"tensor of shape {list(shape)} has {arr.size} values")
        return arr.reshape(shape)
    from onnx import numpy_helper

    from graphlsp.syntax.to_proto import tensor_to_proto

    return numpy_helper.to_array(tensor_to_proto(tv.type, tv.data))


def value_of(v: t.AttrValue | None, declared: str | None) -> Any:
    if v is None:
        return None
    if isinstance(v, t.LiteralValue):
        lit = v.literal
        if declared in ("float", "floats") and lit.kind == "int":
            return float(lit.value)
        return lit.value
    if isinstance(v, t.ListValue):
        single = declared[:-1] if declared and declared.endswith("s") else None
        items = [value_of(x, single) for x in v.items]
        if single is None and any(isinstance(x, float) for x in items):
            items = [float(x) for x in items]
        return items
    if isinstance(v, t.TensorValue):
        try:
            return tensor_value(v)
        except Exception:
            return None
    if isinstance(v, t.GraphValue):
        return v.graph
    if isinstance(v, t.TypeValue):
        return v.type
    if isinstance(v, t.RefValue):
        return Ref(v.ref.value)
    return None


def attribute_values(attributes: list[t.Attribute]) -> dict[str, Any]:
    return {a.name.value: value_of(a.value, a.declared.value if a.declared else None) for a in attributes}
