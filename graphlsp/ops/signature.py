"""Op signatures read from onnx.defs schemas: formal inputs/outputs, attributes with defaults, type constraints.

Resolved per (domain, op, opset version) and cached: `signature("Softmax", 13)`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from graphlsp.frozen import Frozen
from graphlsp.graph import ops
from graphlsp.graph.enums import AttributeProto

_OPTION = {0: "single", 1: "optional", 2: "variadic"}
ATTR_TYPE_NAMES: dict[int, str] = {
    AttributeProto.FLOAT: "float", AttributeProto.INT: "int", AttributeProto.STRING: "string",
    AttributeProto.TENSOR: "tensor", AttributeProto.GRAPH: "graph", AttributeProto.SPARSE_TENSOR: "sparse_tensor",
    AttributeProto.TYPE_PROTO: "type_proto", AttributeProto.FLOATS: "floats", AttributeProto.INTS: "ints",
    AttributeProto.STRINGS: "strings", AttributeProto.TENSORS: "tensors", AttributeProto.GRAPHS: "graphs",
    AttributeProto.SPARSE_TENSORS: "sparse_tensors", AttributeProto.TYPE_PROTOS: "type_protos",
}  # fmt: skip


class Param(Frozen):
    """One input or output of an op's schema: its type constraint and how many values it takes."""

    __slots__ = ("name", "type_str", "option", "homogeneous", "min_arity")

    name: str
    type_str: str  # a constraint name ("T") or a concrete type ("tensor(int64)")
    option: str  # single, optional, variadic
    homogeneous: bool
    min_arity: int

    def __init__(
        self,
        name: str,
        type_str: str,
        option: str,
        homogeneous: bool,
        min_arity: int,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type_str", type_str)
        object.__setattr__(self, "option", option)
        object.__setattr__(self, "homogeneous", homogeneous)
        object.__setattr__(self, "min_arity", min_arity)

    def __repr__(self) -> str:
        return (
            f"Param(name={self.name!r}, type_str={self.type_str!r}, option={self.option!r}, "
            f"homogeneous={self.homogeneous!r}, min_arity={self.min_arity!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not Param:
            return NotImplemented
        mine = (self.name, self.type_str, self.option, self.homogeneous, self.min_arity)
        theirs = (other.name, other.type_str, other.option, other.homogeneous, other.min_arity)
        return mine == theirs

    def __hash__(self) -> int:
        return hash((self.name, self.type_str, self.option, self.homogeneous, self.min_arity))


class AttrSpec(Frozen):
    """One attribute an op's schema declares: its type, whether it is required, and its default."""

    __slots__ = ("name", "type_name", "required", "default", "doc")

    name: str
    type_name: str  # int, float, ints, graph, ...
    required: bool
    default: Any  # Python value, or None when there is no default
    doc: str

    def __init__(
        self,
        name: str,
        type_name: str,
        required: bool,
        default: Any,
        doc: str,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type_name", type_name)
        object.__setattr__(self, "required", required)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "doc", doc)

    def __repr__(self) -> str:
        return (
            f"AttrSpec(name={self.name!r}, type_name={self.type_name!r}, required={self.required!r}, "
            f"default={self.default!r}, doc={self.doc!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not AttrSpec:
            return NotImplemented
        mine = (self.name, self.type_name, self.required, self.default, self.doc)
        theirs = (other.name, other.type_name, other.required, other.default, other.doc)
        return mine == theirs

    def __hash__(self) -> int:
        return hash((self.name, self.type_name, self.required, self.default, self.doc))


class OpSignature(Frozen):
    """What an op's schema (onnx's or an op library's) says about a call: inputs, outputs, attributes, type
    constraints and arity bounds."""

    __slots__ = ("domain", "name", "since_version", "deprecated", "inputs", "outputs", "attrs", "constraints",
                 "min_input", "max_input", "min_output", "max_output", "has_function", "doc", "schema")

    domain: str
    name: str
    since_version: int
    deprecated: bool
    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]
    attrs: dict[str, AttrSpec]
    constraints: dict[str, frozenset[str]]
    min_input: int
    max_input: int
    min_output: int
    max_output: int
    has_function: bool
    doc: str
    schema: Any  # onnx's schema (graph.ops.SchemaRef), or an op library's declaration

    def __init__(
        self,
        domain: str,
        name: str,
        since_version: int,
        deprecated: bool,
        inputs: tuple[Param, ...],
        outputs: tuple[Param, ...],
        attrs: dict[str, AttrSpec],
        constraints: dict[str, frozenset[str]],
        min_input: int,
        max_input: int,
        min_output: int,
        max_output: int,
        has_function: bool,
        doc: str,
        schema: Any,
    ) -> None:
        object.__setattr__(self, "domain", domain)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "since_version", since_version)
        object.__setattr__(self, "deprecated", deprecated)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "attrs", attrs)
        object.__setattr__(self, "constraints", constraints)
        object.__setattr__(self, "min_input", min_input)
        object.__setattr__(self, "max_input", max_input)
        object.__setattr__(self, "min_output", min_output)
        object.__setattr__(self, "max_output", max_output)
        object.__setattr__(self, "has_function", has_function)
        object.__setattr__(self, "doc", doc)
        object.__setattr__(self, "schema", schema)

    def __repr__(self) -> str:
        return (
            f"OpSignature(domain={self.domain!r}, name={self.name!r}, since_version={self.since_version!r}, "
            f"deprecated={self.deprecated!r}, inputs={self.inputs!r}, outputs={self.outputs!r}, "
            f"attrs={self.attrs!r}, constraints={self.constraints!r}, min_input={self.min_input!r}, "
            f"max_input={self.max_input!r}, min_output={self.min_output!r}, max_output={self.max_output!r}, "
            f"has_function={self.has_function!r}, doc={self.doc!r}, schema={self.schema!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not OpSignature:
            return NotImplemented
        mine = (self.domain, self.name, self.since_version, self.deprecated, self.inputs, self.outputs, self.attrs,
                self.constraints, self.min_input, self.max_input, self.min_output, self.max_output, self.has_function,
                self.doc, self.schema)
        theirs = (other.domain, other.name, other.since_version, other.deprecated, other.inputs, other.outputs,
                  other.attrs, other.constraints, other.min_input, other.max_input, other.min_output, other.max_output,
                  other.has_function, other.doc, other.schema)
        return mine == theirs

    def __hash__(self) -> int:
        return hash((self.domain, self.name, self.since_version, self.deprecated, self.inputs, self.outputs, self.attrs,
                     self.constraints, self.min_input, self.max_input, self.min_output, self.max_output,
                     self.has_function, self.doc, self.schema))

    def function_body(self, version: int) -> Any:
        """The schema's function body at an opset version, if the op is defined by one."""
        if not self.has_function:
            return None
        body: Any = None
        try:
            body = self.schema.get_function_with_opset_version(version)
        except Exception:
            body = None
        if not body:
            body = self.schema.function_body
        if isinstance(body, bytes):
            from graphlsp.binary.proto import function_proto

            body = function_proto(body)
        return body if body is not None and len(body.node) else None


# Ops onnx has no schema for, declared in op libraries: `graphlsp.ops.library` installs their signatures here.
library: Callable[[str, int, str], OpSignature | None] | None = None


def signature(op_type: str, version: int, domain: str = "") -> OpSignature | None:
    """The op's signature at an opset version: onnx's schema, else an op library's declaration."""
    sig = schema_signature(op_type, version, domain)
    if sig is None and library is not None:
        return library(op_type, version, domain)
    return sig


@cache
def schema_signature(op_type: str, version: int, domain: str = "") -> OpSignature | None:
    """onnx's schema of the op at an opset version as a signature, from the table of schemas kept per onnx build
    (`graph.ops.schemas`), else from onnx's OpSchema."""
    ref = ops.schema_for(op_type, version, domain)
    if ref is None:
        return None
    row = ref.row()
    if row is None:
        row = ops.schema_row(ref.full())
    ins, outs, attr_rows, constraint_rows, (min_in, max_in, min_out, max_out), has_function, contextual, _, doc, _ = row
    params = [
        tuple(Param(name, type_str, _OPTION.get(option, "single"), homogeneous, min_arity)
              for name, type_str, option, homogeneous, min_arity in formal)
        for formal in (ins, outs)
    ]  # fmt: skip
    attrs = {
        name: AttrSpec(name, ATTR_TYPE_NAMES.get(kind, "?"), required, default, description)
        for name, kind, required, default, description in attr_rows
    }
    constraints = {name: frozenset(allowed) for name, allowed in constraint_rows}
    return OpSignature(
        domain, op_type, ref.since_version, ref.deprecated, params[0], params[1], attrs, constraints, min_in, max_in,
        min_out, max_out, has_function or contextual, doc, ref,
    )  # fmt: skip
