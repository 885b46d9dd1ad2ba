"""The IR back to onnx's protobuf messages: nodes (for onnx.reference), functions, graphs and whole models.

A tensor that came from a protobuf keeps its message (bytes untouched, external data references kept); one
that came from text is converted by its own front end (`to_proto`); any other is written from its elements.
Messages for onnx.reference are built with `embed`: external data is read in through `binary.external`'s
checks, or the message is refused (WriteError); onnx never resolves a location itself.
Attribute references (`@name`) stay references unless the caller binds them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeProto, helper

from graphlsp.binary.external import has_external
from graphlsp.graph.core import Attr, Function, Graph, Model, Node, Ref, TypeSpec, Value
from graphlsp.graph.tensor import Tensor, TensorError

_ATTR_TYPES = {
    "int": AttributeProto.INT, "float": AttributeProto.FLOAT, "string": AttributeProto.STRING,
    "tensor": AttributeProto.TENSOR, "graph": AttributeProto.GRAPH, "type_proto": AttributeProto.TYPE_PROTO,
    "sparse_tensor": AttributeProto.SPARSE_TENSOR, "ints": AttributeProto.INTS, "floats": AttributeProto.FLOATS,
    "strings": AttributeProto.STRINGS, "tensors": AttributeProto.TENSORS, "graphs": AttributeProto.GRAPHS,
    "type_protos": AttributeProto.TYPE_PROTOS, "sparse_tensors": AttributeProto.SPARSE_TENSORS,
}  # fmt: skip


class WriteError(ValueError):
    """The IR holds something protobuf cannot (an int past int64, a value of no attribute type)."""


def tensor_proto(tensor: Tensor, name: str | None = None, embed: bool = False) -> TensorProto:
    """The tensor as protobuf. With `embed` (a message for onnx.reference), external data is read into it through
    the checks of `binary.external`, or WriteError: onnx must never load external data itself."""
    make = getattr(tensor, "to_proto", None)
    if embed and tensor.external:
        resolve = getattr(tensor, "embedded", None)
        if resolve is None:
            raise WriteError(f"the external data of '{tensor.name}' is not resolved")
        try:
            proto = TensorProto()
            proto.CopyFrom(resolve())
        except TensorError as e:
            raise WriteError(str(e)) from None
    elif make is not None:
        proto = make()
    else:
        proto = onnx.numpy_helper.from_array(np.asarray(tensor.numpy()))
        proto.data_type = tensor.dtype or proto.data_type
    proto.name = tensor.name if name is None else name
    return proto


def type_proto(ty: TypeSpec) -> TypeProto:
    proto = TypeProto()
    _fill_type(proto, ty)
    return proto


def _fill_shape(holder: Any, dims: tuple[int | str | None, ...] | None) -> None:
    if dims is None:
        return
    holder.shape.SetInParent()
    for d in dims:
        dim = holder.shape.dim.add()
        if isinstance(d, int):
            dim.dim_value = d
        elif d is not None:
            dim.dim_param = d


def _fill_type(proto: TypeProto, ty: TypeSpec) -> None:
    if ty.kind == "tensor":
        proto.tensor_type.elem_type = ty.elem or 0
        _fill_shape(proto.tensor_type, ty.dims)
    elif ty.kind == "sparse_tensor":
        proto.sparse_tensor_type.elem_type = ty.elem or 0
        _fill_shape(proto.sparse_tensor_type, ty.dims)
    elif ty.kind == "seq":
        proto.sequence_type.SetInParent()
        if ty.arg is not None:
            _fill_type(proto.sequence_type.elem_type, ty.arg)
    elif ty.kind == "optional":
        proto.optional_type.SetInParent()
        if ty.arg is not None:
            _fill_type(proto.optional_type.elem_type, ty.arg)
    elif ty.kind == "map":
        proto.map_type.key_type = ty.elem or 0
        if ty.arg is not None:
            _fill_type(proto.map_type.value_type, ty.arg)
    elif ty.kind == "opaque":
        proto.opaque_type.SetInParent()
        if ty.opaque is not None:
            proto.opaque_type.domain, proto.opaque_type.name = ty.opaque


def value_info(name: str, ty: TypeSpec | None) -> onnx.ValueInfoProto:
    proto = onnx.ValueInfoProto(name=name)
    if ty is not None:
        _fill_type(proto.type, ty)
    return proto


def attribute_proto(node: Node, attr: Attr, schema_type: int = 0, embed: bool = False) -> AttributeProto:
    """One attribute as protobuf; subgraphs come from the node (`embed`: see `tensor_proto`)."""
    kind, value = attr.kind, attr.value
    proto = AttributeProto(name=attr.name)
    if isinstance(value, Ref):
        proto.ref_attr_name = value.name
        proto.type = _ATTR_TYPES.get(kind or "", schema_type)  # type: ignore[assignment,arg-type]
        return proto
    code = _ATTR_TYPES.get(kind or "")
    if code is None:
        raise WriteError(f"attribute '{attr.name}' has no valid type")
    proto.type = code  # type: ignore[assignment]
    try:
        if code == AttributeProto.INT:
            proto.i = int(value)
        elif code == AttributeProto.FLOAT:
            proto.f = float(value)
        elif code == AttributeProto.STRING:
            proto.s = _bytes(value)
        elif code == AttributeProto.INTS:
            proto.ints.extend(int(x) for x in value)
        elif code == AttributeProto.FLOATS:
            proto.floats.extend(float(x) for x in value)
        elif code == AttributeProto.STRINGS:
            proto.strings.extend(_bytes(x) for x in value)
        elif code == AttributeProto.TENSOR:
            proto.t.CopyFrom(tensor_proto(value, embed=embed))
        elif code == AttributeProto.TENSORS:
            proto.tensors.extend(tensor_proto(x, embed=embed) for x in value)
        elif code == AttributeProto.SPARSE_TENSOR:
            proto.sparse_tensor.CopyFrom(value.to_proto())
            if embed and has_external(proto.sparse_tensor):
                raise WriteError(f"attribute '{attr.name}': a sparse tensor with external data")
        elif code == AttributeProto.GRAPH:
            graphs = node.subgraphs.get(attr.name) or []
            if not graphs:
                raise WriteError(f"attribute '{attr.name}' has no graph")
            proto.g.CopyFrom(graph_proto(graphs[0], embed))
        elif code == AttributeProto.GRAPHS:
            proto.graphs.extend(graph_proto(g, embed) for g in node.subgraphs.get(attr.name) or [])
        elif code == AttributeProto.TYPE_PROTO:
            proto.tp.CopyFrom(type_proto(value))
        elif code == AttributeProto.TYPE_PROTOS:
            proto.type_protos.extend(type_proto(x) for x in value)
    except WriteError:
        raise
    except Exception as e:  # ValueError (int64 range), TypeError, a tensor that cannot be decoded
        raise WriteError(f"attribute '{attr.name}': {e}") from None
    return proto


def _bytes(x: Any) -> bytes:
    return x if isinstance(x, bytes) else str(x).encode("utf-8", "surrogateescape")


def node_proto(node: Node, bound: dict[str, Any] | None = None, embed: bool = False) -> NodeProto:
    """The node as protobuf; with `bound`, attribute references take the call's values (absent: the default);
    `embed`: see `tensor_proto`."""
    proto = NodeProto(op_type=node.op_type, domain=node.domain, overload=node.overload)
    if node.name is not None:
        proto.name = node.name
    proto.input.extend(v.name if v is not None else "" for v in node.inputs)
    proto.output.extend(v.name if v is not None else "" for v in node.outputs)
    for attr in node.attributes.values():
        if bound is not None and isinstance(attr.value, Ref):
            x = bound.get(attr.value.name)
            if x is None:
                continue
            if isinstance(x, Tensor):
                x = tensor_proto(x, embed=embed) if embed and x.external else x.numpy()
            if isinstance(x, np.ndarray):
                x = onnx.numpy_helper.from_array(x)
            proto.attribute.append(helper.make_attribute(attr.name, x))
            continue
        proto.attribute.append(attribute_proto(node, attr, _schema_type(node, attr.name), embed))
    return proto


def _schema_type(node: Node, name: str) -> int:
    schema = node.schema
    if schema is None:
        return 0
    a = schema.attributes.get(name)
    return int(a.type) if a is not None else 0  # type: ignore[call-overload]


def _declared(v: Value) -> TypeSpec | None:
    return v.type


def graph_proto(graph: Graph, embed: bool = False) -> GraphProto:
    proto = GraphProto(name=graph.name)
    for v in graph.inputs:
        proto.input.append(value_info(v.name, v.type))
    for v in graph.initializers.values():
        if v.tensor is not None:
            if getattr(v.tensor, "sparse", False):
                sparse = v.tensor.to_proto()  # type: ignore[attr-defined]
                if embed and has_external(sparse):
                    raise WriteError(f"sparse initializer '{v.name}' has external data")
                proto.sparse_initializer.append(sparse)
                continue
            proto.initializer.append(tensor_proto(v.tensor, v.name, embed))
    for v, info in zip(graph.outputs, graph.output_infos, strict=False):
        proto.output.append(value_info(v.name, info.type))
    for info in graph.value_infos.values():
        proto.value_info.append(value_info(info.name, info.type))
    for node in graph.nodes:
        proto.node.append(node_proto(node, embed=embed))
    return proto


def function_proto(fn: Function, embed: bool = False) -> FunctionProto:
    proto = FunctionProto(name=fn.name, domain=fn.domain, overload=fn.overload)
    for k, version in fn.opset_imports.items():
        proto.opset_import.append(helper.make_opsetid(k, version))
    for fa in fn.attributes:
        if fa.has_default:
            proto.attribute_proto.append(_default_attr(fa.name, fa.kind, fa.default))
        else:
            proto.attribute.append(fa.name)
    body = fn.body
    if body is not None:
        proto.input.extend(v.name for v in body.inputs)
        proto.output.extend(v.name for v in body.outputs)
        for v in body.inputs:
            if v.type is not None:
                proto.value_info.append(value_info(v.name, v.type))
        for info in body.output_infos:
            if info.type is not None:
                proto.value_info.append(value_info(info.name, info.type))
        for info in body.value_infos.values():
            proto.value_info.append(value_info(info.name, info.type))
        for node in body.nodes:
            proto.node.append(node_proto(node, embed=embed))
    return proto


def _default_attr(name: str, kind: str | None, value: Any) -> AttributeProto:
    if isinstance(value, Tensor):
        value = tensor_proto(value)
    if kind in _ATTR_TYPES and not isinstance(value, TensorProto):
        return helper.make_attribute(name, value, attr_type=_ATTR_TYPES[kind])
    return helper.make_attribute(name, value)


def model_proto(model: Model) -> ModelProto:
    proto = ModelProto()
    proto.ir_version = model.ir_version if model.ir_version is not None else onnx.IR_VERSION
    if model.producer:
        proto.producer_name = model.producer
    for k, version in model.opset_imports.items():
        proto.opset_import.append(helper.make_opsetid(k, version))
    if model.graph is not None:
        proto.graph.CopyFrom(graph_proto(model.graph))
    for fn in model.functions.values():
        proto.functions.append(function_proto(fn))
    return proto
