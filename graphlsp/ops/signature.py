"""Op signatures read from onnx.defs schemas: formal inputs/outputs, attributes with defaults, type constraints.

Resolved per (domain, op, opset version) and cached: `signature("Softmax", 13)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

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


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type_str: str  # a constraint name ("T") or a concrete type ("tensor(int64)")
    option: str  # single, optional, variadic
    homogeneous: bool
    min_arity: int


@dataclass(frozen=True, slots=True)
class AttrSpec:
    name: str
    type_name: str  # int, float, ints, graph, ...
    required: bool
    default: Any  # Python value, or None when there is no default
    doc: str


@dataclass(frozen=True, slots=True)
class OpSignature:
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
