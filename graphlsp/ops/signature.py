"""Op signatures read from onnx.defs schemas: formal inputs/outputs, attributes with defaults, type constraints.

Resolved per (domain, op, opset version) and cached: `signature("Softmax", 13)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import onnx
import onnx.defs
from onnx import AttributeProto, helper

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
    schema: Any  # the onnx OpSchema

    def function_body(self, version: int) -> onnx.FunctionProto | None:
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
            body = onnx.FunctionProto.FromString(body)
        return body if body is not None and len(body.node) else None


def _int(enum: Any) -> int:
    """onnx's pybind enums (AttrType, FormalParameterOption) as ints."""
    return int(enum)


def _default(attr: Any) -> Any:
    proto = attr.default_value
    if proto is None or proto.type == AttributeProto.UNDEFINED:
        return None
    try:
        value = helper.get_attribute_value(proto)
    except Exception:
        return None
    if isinstance(value, bytes):  # string attributes come back as bytes; the text holds str
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode("utf-8", errors="replace") for v in value]
    return value


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
    try:
        schema = onnx.defs.get_schema(op_type, version, domain)
    except Exception:
        return None
    params = [
        tuple(
            Param(p.name, p.type_str, _OPTION.get(_int(p.option), "single"), p.is_homogeneous, p.min_arity)
            for p in formal
        )
        for formal in (schema.inputs, schema.outputs)
    ]
    attrs = {
        name: AttrSpec(name, ATTR_TYPE_NAMES.get(_int(a.type), "?"), a.required, _default(a), a.description)
        for name, a in schema.attributes.items()
    }
    constraints = {c.type_param_str: frozenset(c.allowed_type_strs) for c in schema.type_constraints}
    return OpSignature(
        domain, op_type, schema.since_version, schema.deprecated, params[0], params[1], attrs, constraints,
        schema.min_input, schema.max_input, schema.min_output, schema.max_output,
        bool(getattr(schema, "has_function", False) or getattr(schema, "has_context_dependent_function", False)),
        schema.doc or "", schema,
    )  # fmt: skip
