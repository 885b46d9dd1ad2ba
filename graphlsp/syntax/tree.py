"""The positioned syntax tree of an ONNX text file.

Every element carries `start`/`end`: character offsets into the text it was parsed from. Offsets inside a
top-level statement are *local* to that statement's `Piece` (see `document.py`): the absolute offset is
`piece.origin + element.start`. For a freshly parsed file every origin is 0, so local equals absolute; an
incremental reparse moves the statements after an edit by changing only their piece's origin.

The tree is close to the text, not to ModelProto: names keep their quoting, literals keep their spelling,
and lists keep empty entries. `to_proto.py` applies onnx's parser semantics on top of it.

The elements are plain classes that behave as the `@dataclass(slots=True)` classes they were (constructor, repr,
equality by fields, unhashable); their fields are their `__slots__`, in order. A dataclass compiles its methods
with exec() at each import: this module's 23 cost every start-up that parses text ~8 ms (see graphlsp/frozen.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import overload


class Name:
    """An identifier or a quoted name (`x`, `"onnx::MatMul_12"`); `value` is unescaped."""

    __slots__ = ("value", "start", "end", "quoted")

    value: str
    start: int
    end: int
    quoted: bool

    def __init__(self, value: str, start: int, end: int, quoted: bool = False) -> None:
        self.value = value
        self.start = start
        self.end = end
        self.quoted = quoted

    def __repr__(self) -> str:
        return f"Name(value={self.value!r}, start={self.start!r}, end={self.end!r}, quoted={self.quoted!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.value, self.start, self.end, self.quoted)
        theirs = (other.value, other.start, other.end, other.quoted)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class Literal:
    """A scalar literal: kind is "int", "float" or "string"; `text` is the source spelling (sign included)."""

    __slots__ = ("kind", "text", "value", "start", "end")

    kind: str
    text: str
    value: int | float | str
    start: int
    end: int

    def __init__(self, kind: str, text: str, value: int | float | str, start: int, end: int) -> None:
        self.kind = kind
        self.text = text
        self.value = value
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return (
            f"Literal(kind={self.kind!r}, text={self.text!r}, value={self.value!r}, start={self.start!r}, "
            f"end={self.end!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.kind, self.text, self.value, self.start, self.end)
        theirs = (other.kind, other.text, other.value, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


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


class Dim:
    """One dimension of a tensor type: kind "value" (int), "param" (symbol or quoted expression) or "unknown"."""

    __slots__ = ("kind", "value", "start", "end")

    kind: str
    value: int | str | None
    start: int
    end: int

    def __init__(self, kind: str, value: int | str | None, start: int, end: int) -> None:
        self.kind = kind
        self.value = value
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Dim(kind={self.kind!r}, value={self.value!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.kind, self.value, self.start, self.end)
        theirs = (other.kind, other.value, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class TypeRef:
    """A type. kind: tensor, sparse_tensor, seq, map, optional, opaque.

    `elem` is the primitive element type name (tensor, sparse_tensor, map key); `dims` is None for unknown rank
    (`float[]`), [] for a scalar (`float`). `args` holds nested types (seq/optional: [t], map: [value type]);
    `opaque` holds (domain, name) for opaque types.
    """

    __slots__ = ("kind", "start", "end", "elem", "elem_start", "dims", "args", "opaque", "depth")

    kind: str
    start: int
    end: int
    elem: str | None
    elem_start: int
    dims: list[Dim] | None
    args: list[TypeRef]
    opaque: tuple[str, str] | None
    depth: int  # type constructors nested in it, itself included (`seq(seq(float))`: 3)

    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        elem: str | None = None,
        elem_start: int = 0,
        dims: list[Dim] | None = None,
        args: list[TypeRef] | None = None,
        opaque: tuple[str, str] | None = None,
        depth: int = 1,
    ) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.elem = elem
        self.elem_start = elem_start
        self.dims = dims
        self.args = [] if args is None else args
        self.opaque = opaque
        self.depth = depth

    def __repr__(self) -> str:
        return (
            f"TypeRef(kind={self.kind!r}, start={self.start!r}, end={self.end!r}, elem={self.elem!r}, "
            f"elem_start={self.elem_start!r}, dims={self.dims!r}, args={self.args!r}, opaque={self.opaque!r}, "
            f"depth={self.depth!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (
            self.kind, self.start, self.end, self.elem, self.elem_start, self.dims, self.args, self.opaque,
            self.depth,
        )
        theirs = (
            other.kind, other.start, other.end, other.elem, other.elem_start, other.dims, other.args, other.opaque,
            other.depth,
        )  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class KeyValue:
    __slots__ = ("key", "value", "start", "end")

    key: Literal
    value: Literal
    start: int
    end: int

    def __init__(self, key: Literal, value: Literal, start: int, end: int) -> None:
        self.key = key
        self.value = value
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"KeyValue(key={self.key!r}, value={self.value!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.key, self.value, self.start, self.end)
        theirs = (other.key, other.value, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class TensorData:
    """`{1, 2, 3}` (values) or `["location": "w.bin"]` (external), or neither when the data is omitted."""

    __slots__ = ("start", "end", "values", "external")

    start: int
    end: int
    values: list[Literal] | Numbers | None  # Numbers: a long list of plain numbers, read when asked for
    external: list[KeyValue] | None

    def __init__(
        self,
        start: int,
        end: int,
        values: list[Literal] | Numbers | None = None,
        external: list[KeyValue] | None = None,
    ) -> None:
        self.start = start
        self.end = end
        self.values = values
        self.external = external

    def __repr__(self) -> str:
        return f"TensorData(start={self.start!r}, end={self.end!r}, values={self.values!r}, external={self.external!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.start, self.end, self.values, self.external)
        theirs = (other.start, other.end, other.values, other.external)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class LiteralValue:
    __slots__ = ("literal", "start", "end")

    literal: Literal
    start: int
    end: int

    def __init__(self, literal: Literal, start: int, end: int) -> None:
        self.literal = literal
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"LiteralValue(literal={self.literal!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.literal, self.start, self.end)
        theirs = (other.literal, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class ListValue:
    __slots__ = ("items", "start", "end")

    items: list[AttrValue]
    start: int
    end: int

    def __init__(self, items: list[AttrValue], start: int, end: int) -> None:
        self.items = items
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"ListValue(items={self.items!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.items, self.start, self.end) == (other.items, other.start, other.end)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class TypeValue:
    __slots__ = ("type", "start", "end")

    type: TypeRef
    start: int
    end: int

    def __init__(self, type: TypeRef, start: int, end: int) -> None:
        self.type = type
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"TypeValue(type={self.type!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.type, self.start, self.end) == (other.type, other.start, other.end)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class TensorValue:
    __slots__ = ("type", "name", "data", "start", "end")

    type: TypeRef
    name: Name | None
    data: TensorData | None
    start: int
    end: int

    def __init__(self, type: TypeRef, name: Name | None, data: TensorData | None, start: int, end: int) -> None:
        self.type = type
        self.name = name
        self.data = data
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return (
            f"TensorValue(type={self.type!r}, name={self.name!r}, data={self.data!r}, start={self.start!r}, "
            f"end={self.end!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.type, self.name, self.data, self.start, self.end)
        theirs = (other.type, other.name, other.data, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class GraphValue:
    __slots__ = ("graph", "start", "end")

    graph: Graph
    start: int
    end: int

    def __init__(self, graph: Graph, start: int, end: int) -> None:
        self.graph = graph
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"GraphValue(graph={self.graph!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.graph, self.start, self.end) == (other.graph, other.start, other.end)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class RefValue:
    __slots__ = ("ref", "start", "end")

    ref: Name
    start: int
    end: int

    def __init__(self, ref: Name, start: int, end: int) -> None:
        self.ref = ref
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"RefValue(ref={self.ref!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.ref, self.start, self.end) == (other.ref, other.start, other.end)  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


AttrValue = LiteralValue | ListValue | TypeValue | TensorValue | GraphValue | RefValue


class Attribute:
    """`name: type = value`; `declared` is the optional type annotation (`int`, `floats`, `graph`, ...)."""

    __slots__ = ("name", "declared", "value", "start", "end")

    name: Name
    declared: Name | None
    value: AttrValue | None
    start: int
    end: int

    def __init__(self, name: Name, declared: Name | None, value: AttrValue | None, start: int, end: int) -> None:
        self.name = name
        self.declared = declared
        self.value = value
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return (
            f"Attribute(name={self.name!r}, declared={self.declared!r}, value={self.value!r}, "
            f"start={self.start!r}, end={self.end!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.name, self.declared, self.value, self.start, self.end)
        theirs = (other.name, other.declared, other.value, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class OpRef:
    """`com.microsoft.Foo:ov` -> domain "com.microsoft", op "Foo", overload "ov"."""

    __slots__ = ("domain", "op_type", "overload", "start", "end", "op_start")

    domain: str
    op_type: str
    overload: str
    start: int
    end: int
    op_start: int

    def __init__(self, domain: str, op_type: str, overload: str, start: int, end: int, op_start: int) -> None:
        self.domain = domain
        self.op_type = op_type
        self.overload = overload
        self.start = start
        self.end = end
        self.op_start = op_start

    def __repr__(self) -> str:
        return (
            f"OpRef(domain={self.domain!r}, op_type={self.op_type!r}, overload={self.overload!r}, "
            f"start={self.start!r}, end={self.end!r}, op_start={self.op_start!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.domain, self.op_type, self.overload, self.start, self.end, self.op_start)
        theirs = (
            other.domain, other.op_type, other.overload, other.start, other.end, other.op_start,
        )  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class Node:
    """`[label] outputs = op <attrs> (inputs) <attrs>`. Empty input/output slots are None."""

    __slots__ = (
        "label", "outputs", "op", "attributes", "inputs", "start", "end", "attrs_before", "attrs_twice",
        "inputs_start", "has_label",
    )

    label: Name | None
    outputs: list[Name | None]
    op: OpRef
    attributes: list[Attribute]
    inputs: list[Name | None]
    start: int
    end: int
    attrs_before: bool
    attrs_twice: bool
    inputs_start: int
    has_label: bool  # `[]` is a label too: onnx sets the node's name to ""

    def __init__(
        self,
        label: Name | None,
        outputs: list[Name | None],
        op: OpRef,
        attributes: list[Attribute],
        inputs: list[Name | None],
        start: int,
        end: int,
        attrs_before: bool = True,
        attrs_twice: bool = False,
        inputs_start: int = 0,
        has_label: bool = False,
    ) -> None:
        self.label = label
        self.outputs = outputs
        self.op = op
        self.attributes = attributes
        self.inputs = inputs
        self.start = start
        self.end = end
        self.attrs_before = attrs_before
        self.attrs_twice = attrs_twice
        self.inputs_start = inputs_start
        self.has_label = has_label

    def __repr__(self) -> str:
        return (
            f"Node(label={self.label!r}, outputs={self.outputs!r}, op={self.op!r}, attributes={self.attributes!r}, "
            f"inputs={self.inputs!r}, start={self.start!r}, end={self.end!r}, attrs_before={self.attrs_before!r}, "
            f"attrs_twice={self.attrs_twice!r}, inputs_start={self.inputs_start!r}, has_label={self.has_label!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (
            self.label, self.outputs, self.op, self.attributes, self.inputs, self.start, self.end,
            self.attrs_before, self.attrs_twice, self.inputs_start, self.has_label,
        )
        theirs = (
            other.label, other.outputs, other.op, other.attributes, other.inputs, other.start, other.end,
            other.attrs_before, other.attrs_twice, other.inputs_start, other.has_label,
        )  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class ValueInfo:
    """A declared value: `type name`, untyped `name`, or `type name = data` (an initializer)."""

    __slots__ = ("type", "name", "start", "end", "init", "has_init")

    type: TypeRef | None
    name: Name
    start: int
    end: int
    init: TensorData | None
    has_init: bool

    def __init__(
        self,
        type: TypeRef | None,
        name: Name,
        start: int,
        end: int,
        init: TensorData | None = None,
        has_init: bool = False,
    ) -> None:
        self.type = type
        self.name = name
        self.start = start
        self.end = end
        self.init = init
        self.has_init = has_init

    def __repr__(self) -> str:
        return (
            f"ValueInfo(type={self.type!r}, name={self.name!r}, start={self.start!r}, end={self.end!r}, "
            f"init={self.init!r}, has_init={self.has_init!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.type, self.name, self.start, self.end, self.init, self.has_init)
        theirs = (
            other.type, other.name, other.start, other.end, other.init, other.has_init,
        )  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class GraphSig:
    """A graph's name and signature: `name (inputs) => (outputs) <value infos>`."""

    __slots__ = ("name", "inputs", "outputs", "value_infos", "start", "end")

    name: Name
    inputs: list[ValueInfo]
    outputs: list[ValueInfo]
    value_infos: list[ValueInfo]
    start: int
    end: int

    def __init__(
        self,
        name: Name,
        inputs: list[ValueInfo],
        outputs: list[ValueInfo],
        value_infos: list[ValueInfo],
        start: int,
        end: int,
    ) -> None:
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.value_infos = value_infos
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return (
            f"GraphSig(name={self.name!r}, inputs={self.inputs!r}, outputs={self.outputs!r}, "
            f"value_infos={self.value_infos!r}, start={self.start!r}, end={self.end!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.name, self.inputs, self.outputs, self.value_infos, self.start, self.end)
        theirs = (
            other.name, other.inputs, other.outputs, other.value_infos, other.start, other.end,
        )  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class Graph:
    __slots__ = ("sig", "nodes", "start", "end")

    sig: GraphSig
    nodes: list[Node]
    start: int
    end: int

    def __init__(self, sig: GraphSig, nodes: list[Node], start: int, end: int) -> None:
        self.sig = sig
        self.nodes = nodes
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Graph(sig={self.sig!r}, nodes={self.nodes!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.sig, self.nodes, self.start, self.end)
        theirs = (other.sig, other.nodes, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class HeaderEntry:
    """`key: value` in a model or function header; value is a Literal or a list of KeyValue."""

    __slots__ = ("key", "value", "start", "end")

    key: Name
    value: Literal | list[KeyValue]
    start: int
    end: int

    def __init__(self, key: Name, value: Literal | list[KeyValue], start: int, end: int) -> None:
        self.key = key
        self.value = value
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"HeaderEntry(key={self.key!r}, value={self.value!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.key, self.value, self.start, self.end)
        theirs = (other.key, other.value, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class FuncAttr:
    """A function attribute: a bare name, or `name: type = default` (`has_default` tells them apart)."""

    __slots__ = ("name", "declared", "default", "has_default", "start", "end")

    name: Name
    declared: Name | None
    default: AttrValue | None
    has_default: bool
    start: int
    end: int

    def __init__(
        self,
        name: Name,
        declared: Name | None,
        default: AttrValue | None,
        has_default: bool,
        start: int,
        end: int,
    ) -> None:
        self.name = name
        self.declared = declared
        self.default = default
        self.has_default = has_default
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return (
            f"FuncAttr(name={self.name!r}, declared={self.declared!r}, default={self.default!r}, "
            f"has_default={self.has_default!r}, start={self.start!r}, end={self.end!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.name, self.declared, self.default, self.has_default, self.start, self.end)
        theirs = (
            other.name, other.declared, other.default, other.has_default, other.start, other.end,
        )  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class FunctionSig:
    __slots__ = ("header", "name", "attributes", "inputs", "outputs", "value_infos", "start", "end")

    header: list[HeaderEntry]
    name: Name
    attributes: list[FuncAttr]
    inputs: list[ValueInfo]
    outputs: list[ValueInfo]
    value_infos: list[ValueInfo]
    start: int
    end: int

    def __init__(
        self,
        header: list[HeaderEntry],
        name: Name,
        attributes: list[FuncAttr],
        inputs: list[ValueInfo],
        outputs: list[ValueInfo],
        value_infos: list[ValueInfo],
        start: int,
        end: int,
    ) -> None:
        self.header = header
        self.name = name
        self.attributes = attributes
        self.inputs = inputs
        self.outputs = outputs
        self.value_infos = value_infos
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return (
            f"FunctionSig(header={self.header!r}, name={self.name!r}, attributes={self.attributes!r}, "
            f"inputs={self.inputs!r}, outputs={self.outputs!r}, value_infos={self.value_infos!r}, "
            f"start={self.start!r}, end={self.end!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (
            self.header, self.name, self.attributes, self.inputs, self.outputs, self.value_infos, self.start,
            self.end,
        )
        theirs = (
            other.header, other.name, other.attributes, other.inputs, other.outputs, other.value_infos,
            other.start, other.end,
        )  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class Function:
    __slots__ = ("sig", "nodes", "start", "end")

    sig: FunctionSig
    nodes: list[Node]
    start: int
    end: int

    def __init__(self, sig: FunctionSig, nodes: list[Node], start: int, end: int) -> None:
        self.sig = sig
        self.nodes = nodes
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Function(sig={self.sig!r}, nodes={self.nodes!r}, start={self.start!r}, end={self.end!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.sig, self.nodes, self.start, self.end)
        theirs = (other.sig, other.nodes, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


class Model:
    __slots__ = ("header", "graph", "functions", "start", "end")

    header: list[HeaderEntry]
    graph: Graph | None
    functions: list[Function]
    start: int
    end: int

    def __init__(
        self,
        header: list[HeaderEntry],
        graph: Graph | None,
        functions: list[Function],
        start: int,
        end: int,
    ) -> None:
        self.header = header
        self.graph = graph
        self.functions = functions
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return (
            f"Model(header={self.header!r}, graph={self.graph!r}, functions={self.functions!r}, "
            f"start={self.start!r}, end={self.end!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.header, self.graph, self.functions, self.start, self.end)
        theirs = (other.header, other.graph, other.functions, other.start, other.end)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value
