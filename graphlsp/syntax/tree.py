"""The positioned syntax tree of an ONNX text file.

Every element carries `start`/`end`: character offsets into the text it was parsed from. Offsets inside a
top-level statement are *local* to that statement's `Piece` (see `document.py`): the absolute offset is
`piece.origin + element.start`. For a freshly parsed file every origin is 0, so local equals absolute; an
incremental reparse moves the statements after an edit by changing only their piece's origin.

The tree is close to the text, not to ModelProto: names keep their quoting, literals keep their spelling,
and lists keep empty entries. `to_proto.py` applies onnx's parser semantics on top of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload


@dataclass(slots=True)
class Name:
    """An identifier or a quoted name (`x`, `"onnx::MatMul_12"`); `value` is unescaped."""

    value: str
    start: int
    end: int
    quoted: bool = False


@dataclass(slots=True)
class Literal:
    """A scalar literal: kind is "int", "float" or "string"; `text` is the source spelling (sign included)."""

    kind: str
    text: str
    value: int | float | str
    start: int
    end: int


HUGE_INT = 2**1024  # the value of an int literal of more than 40 digits: beyond every type's range, double's too


def number_literal(text: str, start: int, end: int) -> Literal:
    """A number as written (`-12`, `1.5e3`): an int, or a float when it has a point or an exponent."""
    if "." in text or "e" in text or "E" in text:
        return Literal("float", text, float(text), start, end)
    if len(text.lstrip("-")) > 40:  # far outside int64 (and maybe past Python's int() digit limit): out of every range
        return Literal("int", text, (-1 if text.startswith("-") else 1) * HUGE_INT, start, end)
    return Literal("int", text, int(text), start, end)


_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")


class Numbers(Sequence[Literal]):
    """The literals of a `{...}` list of plain numbers, kept as the text that writes them (one string for a
    weight of a million numbers) and made one by one when asked for. `text` is the whole `{...}`; `start` is where
    its `{` is. Equal to another Numbers of the same text and place, and to the list of its literals."""

    __slots__ = ("text", "start", "size")

    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.start = start
        self.size = text.count(",") + 1

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[Literal]:
        at = self.start
        for m in _NUMBER.finditer(self.text):
            yield number_literal(m.group(), at + m.start(), at + m.end())

    @overload
    def __getitem__(self, i: int) -> Literal: ...

    @overload
    def __getitem__(self, i: slice) -> list[Literal]: ...

    def __getitem__(self, i: int | slice) -> Literal | list[Literal]:
        return list(self)[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Numbers):
            return self.text == other.text and self.start == other.start
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def parts(self) -> list[str]:
        """The numbers' texts (with the space around them)."""
        return self.text[1:-1].split(",")

    def __repr__(self) -> str:
        return f"Numbers({self.size} numbers at {self.start})"


@dataclass(slots=True)
class Dim:
    """One dimension of a tensor type: kind "value" (int), "param" (symbol or quoted expression) or "unknown"."""

    kind: str
    value: int | str | None
    start: int
    end: int


@dataclass(slots=True)
class TypeRef:
    """A type. kind: tensor, sparse_tensor, seq, map, optional, opaque.

    `elem` is the primitive element type name (tensor, sparse_tensor, map key); `dims` is None for unknown rank
    (`float[]`), [] for a scalar (`float`). `args` holds nested types (seq/optional: [t], map: [value type]);
    `opaque` holds (domain, name) for opaque types.
    """

    kind: str
    start: int
    end: int
    elem: str | None = None
    elem_start: int = 0
    dims: list[Dim] | None = None
    args: list[TypeRef] = field(default_factory=list)
    opaque: tuple[str, str] | None = None
    depth: int = 1  # type constructors nested in it, itself included (`seq(seq(float))`: 3)


@dataclass(slots=True)
class KeyValue:
    key: Literal
    value: Literal
    start: int
    end: int


@dataclass(slots=True)
class TensorData:
    """`{1, 2, 3}` (values) or `["location": "w.bin"]` (external), or neither when the data is omitted."""

    start: int
    end: int
    values: list[Literal] | Numbers | None = None  # Numbers: a long list of plain numbers, read when asked for
    external: list[KeyValue] | None = None


@dataclass(slots=True)
class LiteralValue:
    literal: Literal
    start: int
    end: int


@dataclass(slots=True)
class ListValue:
    items: list[AttrValue]
    start: int
    end: int


@dataclass(slots=True)
class TypeValue:
    type: TypeRef
    start: int
    end: int


@dataclass(slots=True)
class TensorValue:
    type: TypeRef
    name: Name | None
    data: TensorData | None
    start: int
    end: int


@dataclass(slots=True)
class GraphValue:
    graph: Graph
    start: int
    end: int


@dataclass(slots=True)
class RefValue:
    ref: Name
    start: int
    end: int


AttrValue = LiteralValue | ListValue | TypeValue | TensorValue | GraphValue | RefValue


@dataclass(slots=True)
class Attribute:
    """`name: type = value`; `declared` is the optional type annotation (`int`, `floats`, `graph`, ...)."""

    name: Name
    declared: Name | None
    value: AttrValue | None
    start: int
    end: int


@dataclass(slots=True)
class OpRef:
    """`com.microsoft.Foo:ov` -> domain "com.microsoft", op "Foo", overload "ov"."""

    domain: str
    op_type: str
    overload: str
    start: int
    end: int
    op_start: int


@dataclass(slots=True)
class Node:
    """`[label] outputs = op <attrs> (inputs) <attrs>`. Empty input/output slots are None."""

    label: Name | None
    outputs: list[Name | None]
    op: OpRef
    attributes: list[Attribute]
    inputs: list[Name | None]
    start: int
    end: int
    attrs_before: bool = True
    attrs_twice: bool = False
    inputs_start: int = 0
    has_label: bool = False  # `[]` is a label too: onnx sets the node's name to ""


@dataclass(slots=True)
class ValueInfo:
    """A declared value: `type name`, untyped `name`, or `type name = data` (an initializer)."""

    type: TypeRef | None
    name: Name
    start: int
    end: int
    init: TensorData | None = None
    has_init: bool = False


@dataclass(slots=True)
class GraphSig:
    """A graph's name and signature: `name (inputs) => (outputs) <value infos>`."""

    name: Name
    inputs: list[ValueInfo]
    outputs: list[ValueInfo]
    value_infos: list[ValueInfo]
    start: int
    end: int


@dataclass(slots=True)
class Graph:
    sig: GraphSig
    nodes: list[Node]
    start: int
    end: int


@dataclass(slots=True)
class HeaderEntry:
    """`key: value` in a model or function header; value is a Literal or a list of KeyValue."""

    key: Name
    value: Literal | list[KeyValue]
    start: int
    end: int


@dataclass(slots=True)
class FuncAttr:
    """A function attribute: a bare name, or `name: type = default` (`has_default` tells them apart)."""

    name: Name
    declared: Name | None
    default: AttrValue | None
    has_default: bool
    start: int
    end: int


@dataclass(slots=True)
class FunctionSig:
    header: list[HeaderEntry]
    name: Name
    attributes: list[FuncAttr]
    inputs: list[ValueInfo]
    outputs: list[ValueInfo]
    value_infos: list[ValueInfo]
    start: int
    end: int


@dataclass(slots=True)
class Function:
    sig: FunctionSig
    nodes: list[Node]
    start: int
    end: int


@dataclass(slots=True)
class Model:
    header: list[HeaderEntry]
    graph: Graph | None
    functions: list[Function]
    start: int
    end: int
