"""Value types: tensors (element type + shape), sparse tensors, sequences, maps, optionals.

A shape is None (unknown rank) or a tuple of dims (`dims.Dim`: int, Expr or None). Element types are onnx's
TensorProto enum values; None is unknown. Types are immutable and compare by value (dims by identity, which is
equality for interned expressions), so the refiner can tell "same as before" cheaply.
"""

from __future__ import annotations

from typing import Any

from graphlsp.frozen import Frozen
from graphlsp.graph.core import TypeSpec
from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer.dims import Dim

Shape = tuple[Dim, ...] | None

ELEM_BY_NAME: dict[str, int] = {
    name.lower(): value for name, value in TensorProto.DataType.items() if name != "UNDEFINED"
}
NAME_BY_ELEM: dict[int, str] = {v: k for k, v in ELEM_BY_NAME.items()}


class TensorType(Frozen):
    """A tensor (or sparse tensor) type: onnx's element type number (None: unknown) and a shape."""

    __slots__ = ("elem", "shape", "sparse")

    elem: int | None
    shape: Shape
    sparse: bool

    def __init__(
        self,
        elem: int | None,
        shape: Shape,
        sparse: bool = False,
    ) -> None:
        object.__setattr__(self, "elem", elem)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "sparse", sparse)

    def __repr__(self) -> str:
        return f"TensorType(elem={self.elem!r}, shape={self.shape!r}, sparse={self.sparse!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not TensorType:
            return NotImplemented
        return (self.elem, self.shape, self.sparse) == (other.elem, other.shape, other.sparse)

    def __hash__(self) -> int:
        return hash((self.elem, self.shape, self.sparse))


class _OfOne(Frozen):
    """A type holding values of one type (`elem`): a sequence's or an optional's; each is equal only to its kind."""

    __slots__ = ("elem",)

    elem: ValueType

    def __init__(self, elem: ValueType) -> None:
        object.__setattr__(self, "elem", elem)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(elem={self.elem!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return (self.elem,) == (other.elem,)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.elem,))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.elem,)


class SequenceType(_OfOne):
    """A sequence of values of one type."""

    __slots__ = ()


class MapType(Frozen):
    """A map from a key element type to values of one type."""

    __slots__ = ("key", "value")

    key: int | None
    value: ValueType

    def __init__(
        self,
        key: int | None,
        value: ValueType,
    ) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "value", value)

    def __repr__(self) -> str:
        return f"MapType(key={self.key!r}, value={self.value!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not MapType:
            return NotImplemented
        return (self.key, self.value) == (other.key, other.value)

    def __hash__(self) -> int:
        return hash((self.key, self.value))


class OptionalType(_OfOne):
    """An optional value of one type."""

    __slots__ = ()


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


def fully_static(t: ValueType) -> bool:
    """Whether every dim of the type is a known int (a sequence's or optional's element type included)."""
    if type(t) is TensorType:
        shape = t.shape
        if shape is None:
            return False
        for x in shape:  # noqa: SIM110 (not all() over a generator: this runs for most values of every check)
            if not isinstance(x, int):
                return False
        return True
    if isinstance(t, (SequenceType, OptionalType)):
        return fully_static(t.elem)
    return False


def _elem_of_array(value: object) -> int | None:
    import numpy as np

    from graphlsp.graph.enums import np_dtype_to_tensor_dtype

    if not isinstance(value, np.ndarray):
        return None
    if value.dtype == object or value.dtype.kind in "US":
        return TensorProto.STRING
    try:
        return np_dtype_to_tensor_dtype(value.dtype)
    except Exception:
        return None


def type_of_value(value: object, inferred: ValueType) -> ValueType:
    """The type a computed value has, keeping what inference knew that the value cannot say (the element type
    of an empty sequence, the declared element type); None when the value tells nothing new."""
    import numpy as np

    if isinstance(value, np.ndarray):
        elem = inferred.elem if isinstance(inferred, TensorType) and inferred.elem is not None else None
        return TensorType(elem if elem is not None else _elem_of_array(value), tuple(int(x) for x in value.shape))
    if isinstance(value, list) and value and all(isinstance(x, np.ndarray) for x in value):
        inner = inferred.elem if isinstance(inferred, SequenceType) else None
        shapes = {x.shape for x in value}
        ranks = {len(s) for s in shapes}
        shape: Shape = None
        if len(shapes) == 1:
            shape = tuple(int(x) for x in next(iter(shapes)))
        elif len(ranks) == 1:  # elements of one rank: the dims they agree on; inference's symbols elsewhere
            cols = list(zip(*shapes, strict=True))
            before = inner.shape if isinstance(inner, TensorType) and inner.shape is not None else None
            if before is not None and len(before) != len(cols):
                before = None
            shape = tuple(int(c[0]) if len(set(c)) == 1 else (before[i] if before else None)
                          for i, c in enumerate(cols))  # fmt: skip
        elif isinstance(inner, TensorType):
            shape = inner.shape
        elem = inner.elem if isinstance(inner, TensorType) and inner.elem is not None else _elem_of_array(value[0])
        return SequenceType(TensorType(elem, shape))
    return None


def declared_type(ty: TypeSpec | None) -> ValueType:
    """A declared type as a ValueType (dim_params become symbols; a negative dim is unknown)."""
    if ty is None:
        return None
    if ty.kind in ("tensor", "sparse_tensor"):
        shape = None
        if ty.dims is not None:
            shape = tuple(
                (dm if dm >= 0 else None) if isinstance(dm, int) else (d.symbol(dm) if dm is not None else None)
                for dm in ty.dims
            )
        return TensorType(ty.elem or None, shape, ty.kind == "sparse_tensor")
    if ty.kind == "seq":
        return SequenceType(declared_type(ty.arg))
    if ty.kind == "optional":
        return OptionalType(declared_type(ty.arg))
    if ty.kind == "map":
        return MapType(ty.elem or None, declared_type(ty.arg))
    return None
