"""Syntax tree -> onnx protos, reproducing exactly what onnx 1.23's text parser (`onnx.parser`) builds.

`model_to_proto(SyntaxDocument(text).model)` equals `onnx.parser.parse_model(text)` (field presence included:
compare with `SerializeToString(deterministic=True)`) for every text that onnx accepts and in which the document
reports no problem. The tree is expected to be free of problems; where onnx would reject the text, the helpers
raise `ConversionError` (a ValueError).

Reference: onnx/defs/parser.cc. The points where onnx's result is not the obvious one:

* `float` is a scalar (a shape with no dims), `float[]` has no shape, `?` is a dim with neither value nor param.
* Graph inputs with `= data` are inputs and initializers; in the `<...>` list after the outputs, entries with `=`
  are initializers only, the others value_info. Tensor data goes to int32_data (8/16-bit ints, bool, 16/8/6/4-bit
  floats, int4/uint4/int2/uint2), int64_data, uint64_data (uint32/uint64), float_data (float, complex64),
  double_data (double, complex128) or string_data; `["k": "v"]` makes external data.
* Attributes: the annotation sets the type; an int literal annotated float(s) becomes a float; in a list only
  int/float/string elements are stored (tensor/graph/type elements are parsed and dropped) and the first stored
  element fixes the list's type; `@name` sets ref_attr_name and keeps the annotated type (if any).
* A `TensorProto` parsed as an attribute value always has its `name` field set (possibly to "").
* Functions: bare attribute names go to `attribute`, annotated or defaulted ones to `attribute_proto`; typed
  inputs/outputs add value_info entries (before the `<...>` list's). A default whose value does not match its
  annotation is kept with the value's own type (onnx ignores that error in a function signature).
* Repeated header keys: scalars are overwritten, `opset_import` / `metadata_props` entries accumulate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import (
    AttributeProto,
    FunctionProto,
    GraphProto,
    ModelProto,
    NodeProto,
    OperatorSetIdProto,
    StringStringEntryProto,
    TensorProto,
    TypeProto,
    ValueInfoProto,
)

from graphlsp.syntax import semantics as sem
from graphlsp.syntax import tree as t

__all__ = [
    "ConversionError",
    "attribute_to_proto",
    "function_to_proto",
    "graph_to_proto",
    "model_to_proto",
    "node_to_proto",
    "tensor_to_proto",
    "type_to_proto",
    "value_info_to_proto",
]


class ConversionError(ValueError):
    """The tree holds something onnx's parser rejects (the document reports it as a problem). `start` is where
    (an offset local to the statement, as the tree's; -1 when unknown), `code` the rule it breaks."""

    def __init__(self, message: str, start: int = -1, code: str = "GL103") -> None:
        super().__init__(message)
        self.start = start
        self.code = code


def _located(e: ConversionError, start: int) -> ConversionError:
    if e.start < 0:
        e.start = start
    return e


# ---- model and function headers

_MODEL_INT_KEYS = {"ir_version", "model_version"}
_MODEL_STR_KEYS = {"producer_name", "producer_version", "domain", "doc_string"}
_FUNCTION_STR_KEYS = {"doc_string", "domain", "overload"}


def _opsets(target: Any, entries: list[t.KeyValue]) -> None:
    """Append to a repeated OperatorSetIdProto field."""
    for kv in entries:
        op: OperatorSetIdProto = target.add()
        op.domain = str(kv.key.value)
        if kv.value.kind != "int":
            raise ConversionError("opset_import versions are integers")
        op.version = sem.int64(kv.value.value, kv.value.text)  # type: ignore[arg-type]


def _string_pairs(target: Any, entries: list[t.KeyValue]) -> None:
    """Append to a repeated StringStringEntryProto field."""
    for kv in entries:
        if kv.value.kind != "string":
            raise ConversionError('expected "key": "value" strings')
        entry: StringStringEntryProto = target.add()
        entry.key = str(kv.key.value)
        entry.value = str(kv.value.value)


def _header_value(entry: t.HeaderEntry, kind: str) -> int | str:
    v = entry.value
    if isinstance(v, list) or v.kind != kind:
        raise ConversionError(f"'{entry.key.value}' takes {'an integer' if kind == 'int' else 'a quoted string'}")
    if kind == "int":
        return sem.int64(v.value, v.text)  # type: ignore[arg-type]
    return v.value  # type: ignore[return-value]


def _list_value(entry: t.HeaderEntry) -> list[t.KeyValue]:
    if not isinstance(entry.value, list):
        raise ConversionError(f"'{entry.key.value}' takes a [...] list")
    return entry.value


def model_to_proto(model: t.Model) -> ModelProto:
    """The ModelProto onnx.parser.parse_model builds from the text this tree was parsed from."""
    proto = ModelProto()
    for entry in model.header:
        key = entry.key.value
        if key in _MODEL_INT_KEYS:
            setattr(proto, key, _header_value(entry, "int"))
        elif key in _MODEL_STR_KEYS:
            setattr(proto, key, _header_value(entry, "string"))
        elif key == "opset_import":
            _opsets(proto.opset_import, _list_value(entry))
        elif key == "metadata_props":
            _string_pairs(proto.metadata_props, _list_value(entry))
        else:
            raise ConversionError(f"unknown model header key '{key}'")
    if model.graph is None:
        raise ConversionError("the model has no graph: expected `name (inputs) => (outputs) { ... }` after the "
                              "header", model.end, "GL101")  # fmt: skip
    _fill_graph(proto.graph, model.graph)
    for fn in model.functions:
        try:
            _fill_function(proto.functions.add(), fn)
        except ConversionError as e:
            raise _located(e, fn.start) from None
    return proto


# ---- graphs and functions


def graph_to_proto(graph: t.Graph) -> GraphProto:
    proto = GraphProto()
    _fill_graph(proto, graph)
    return proto


def _fill_graph(proto: GraphProto, graph: t.Graph) -> None:
    sig = graph.sig
    proto.name = sig.name.value
    vi: t.ValueInfo | None = None
    try:
        for vi in sig.inputs:
            _fill_value_info(proto.input.add(), vi)
            if vi.has_init:
                _fill_tensor(proto.initializer.add(), vi.type, vi.init, vi.name.value)
        for vi in sig.outputs:
            _fill_value_info(proto.output.add(), vi)
        for vi in sig.value_infos:
            if vi.has_init:
                _fill_tensor(proto.initializer.add(), vi.type, vi.init, vi.name.value)
            else:
                _fill_value_info(proto.value_info.add(), vi)
    except ConversionError as e:
        raise _located(e, vi.start if vi is not None else sig.start) from None
    for node in graph.nodes:
        try:
            _fill_node(proto.node.add(), node)
        except ConversionError as e:
            raise _located(e, node.start) from None


def function_to_proto(fn: t.Function) -> FunctionProto:
    proto = FunctionProto()
    _fill_function(proto, fn)
    return proto


def _fill_function(proto: FunctionProto, fn: t.Function) -> None:
    sig = fn.sig
    for entry in sig.header:
        key = entry.key.value
        if key in _FUNCTION_STR_KEYS:
            setattr(proto, key, _header_value(entry, "string"))
        elif key == "opset_import":
            _opsets(proto.opset_import, _list_value(entry))
        else:
            raise ConversionError(f"unknown function header key '{key}'")
    proto.name = sig.name.value
    for fa in sig.attributes:
        if fa.has_default:
            _fill_attribute(proto.attribute_proto.add(), fa.name.value, fa.declared, fa.default, in_function=True)
        else:
            proto.attribute.append(fa.name.value)
    for vi in sig.inputs:
        proto.input.append(vi.name.value)
        if vi.type is not None:
            _fill_value_info(proto.value_info.add(), vi)
    for vi in sig.outputs:
        proto.output.append(vi.name.value)
        if vi.type is not None:
            _fill_value_info(proto.value_info.add(), vi)
    for vi in sig.value_infos:
        _fill_value_info(proto.value_info.add(), vi)
    for node in fn.nodes:
        _fill_node(proto.node.add(), node)


def value_info_to_proto(vi: t.ValueInfo) -> ValueInfoProto:
    proto = ValueInfoProto()
    _fill_value_info(proto, vi)
    return proto


def _fill_value_info(proto: ValueInfoProto, vi: t.ValueInfo) -> None:
    if vi.type is not None:
        _fill_type(proto.type, vi.type)
    proto.name = vi.name.value


# ---- types


def type_to_proto(ty: t.TypeRef) -> TypeProto:
    proto = TypeProto()
    _fill_type(proto, ty)
    return proto


def _elem_type(name: str | None) -> int:
    code = sem.ELEM_TYPES.get(name or "")
    if code is None:
        raise ConversionError(f"unknown element type '{name}'")
    return code


def _fill_shape(holder: TypeProto.Tensor | TypeProto.SparseTensor, dims: list[t.Dim] | None) -> None:
    if dims is None:  # `float[]`: unknown rank, no shape
        return
    shape = holder.shape
    shape.SetInParent()  # `float`: a scalar, a shape with no dims
    for d in dims:
        dim = shape.dim.add()
        if d.kind == "value":
            dim.dim_value = sem.int64(d.value, str(d.value))  # type: ignore[arg-type]
        elif d.kind == "param":
            dim.dim_param = d.value  # type: ignore[assignment]
        # "unknown" (`?`): a dim with neither field


def _fill_type(proto: TypeProto, ty: t.TypeRef) -> None:
    kind = ty.kind
    if kind == "tensor":
        tt = proto.tensor_type
        tt.elem_type = _elem_type(ty.elem)
        _fill_shape(tt, ty.dims)
    elif kind == "seq":
        st = proto.sequence_type
        st.SetInParent()
        if len(ty.args) != 1:
            raise ConversionError("seq(...) takes one type")
        _fill_type(st.elem_type, ty.args[0])
    elif kind == "optional":
        ot = proto.optional_type
        ot.SetInParent()
        if len(ty.args) != 1:
            raise ConversionError("optional(...) takes one type")
        _fill_type(ot.elem_type, ty.args[0])
    elif kind == "map":
        mt = proto.map_type
        mt.key_type = _elem_type(ty.elem)
        if len(ty.args) != 1:
            raise ConversionError("map(...) takes a key type and a value type")
        _fill_type(mt.value_type, ty.args[0])
    elif kind == "sparse_tensor":
        sp = proto.sparse_tensor_type
        sp.elem_type = _elem_type(ty.elem)
        _fill_shape(sp, ty.dims)
    elif kind == "opaque":
        op = proto.opaque_type
        op.SetInParent()
        domain, name = ty.opaque or ("", "")
        if domain:
            op.domain = domain
        if name:
            op.name = name
    else:
        raise ConversionError(f"unknown type kind '{kind}'")


# ---- tensors


def tensor_to_proto(ty: t.TypeRef | None, data: t.TensorData | None, name: str = "") -> TensorProto:
    """A tensor `type name = data`; `name` is always set (onnx sets it, possibly to "")."""
    proto = TensorProto()
    _fill_tensor(proto, ty, data, name)
    return proto


def _fill_tensor(proto: TensorProto, ty: t.TypeRef | None, data: t.TensorData | None, name: str) -> None:
    proto.name = name
    message = sem.tensor_type_problem(ty)
    if message is not None:
        raise ConversionError(message)
    assert ty is not None and ty.dims is not None
    elem = ty.elem or ""
    proto.data_type = _elem_type(elem)
    proto.dims.extend([sem.int64(d.value, str(d.value)) for d in ty.dims])  # type: ignore[arg-type]
    if data is None:
        return
    if data.values is not None:
        if not data.values:
            return
        if isinstance(data.values, t.Numbers):  # a long list of plain numbers: converted at once
            arr = sem.numbers_array(elem, data.values)
            if arr is not None:
                if elem in sem.UINT64_DATA:
                    arr = arr.astype(np.uint64)  # a negative number is taken modulo 2**64, as std::stoull does
                getattr(proto, sem.data_field(elem)).extend(arr.tolist())
                return
        try:
            if elem in sem.FLOAT_DATA:
                proto.float_data.extend(sem.float32_list(data.values))
            elif elem in sem.STRING_DATA:
                proto.string_data.extend([str(sem.tensor_value(elem, lit)).encode("utf-8") for lit in data.values])
            else:
                getattr(proto, sem.data_field(elem)).extend([sem.tensor_value(elem, lit) for lit in data.values])
        except sem.NumberError as e:
            raise ConversionError(str(e)) from None
    elif data.external is not None:
        proto.data_location = TensorProto.EXTERNAL
        if not data.external:
            raise ConversionError('external data needs at least one "key": "value" entry')
        _string_pairs(proto.external_data, data.external)


# ---- nodes and attributes


def node_to_proto(node: t.Node) -> NodeProto:
    proto = NodeProto()
    _fill_node(proto, node)
    return proto


def _fill_node(proto: NodeProto, node: t.Node) -> None:
    if node.has_label or node.label is not None:
        proto.name = node.label.value if node.label is not None else ""
    proto.output.extend(["" if n is None else n.value for n in node.outputs])
    proto.domain = node.op.domain
    proto.op_type = node.op.op_type
    if node.op.overload:
        proto.overload = node.op.overload
    for attr in node.attributes:
        _fill_attribute(proto.attribute.add(), attr.name.value, attr.declared, attr.value)
    proto.input.extend(["" if n is None else n.value for n in node.inputs])


def attribute_to_proto(attr: t.Attribute | t.FuncAttr) -> AttributeProto:
    """A node attribute, or a function's attribute with an annotation or a default (its `attribute_proto`)."""
    proto = AttributeProto()
    if isinstance(attr, t.FuncAttr):
        _fill_attribute(proto, attr.name.value, attr.declared, attr.default, in_function=True)
    else:
        _fill_attribute(proto, attr.name.value, attr.declared, attr.value)
    return proto


def _fill_attribute(
    proto: AttributeProto, name: str, declared: t.Name | None, value: t.AttrValue | None, in_function: bool = False
) -> None:
    proto.name = name
    code = sem.UNDEFINED
    if declared is not None:
        code = sem.ATTR_TYPES.get(declared.value, sem.UNDEFINED)
        if code == sem.UNDEFINED:
            if value is not None or not in_function:
                raise ConversionError(f"unknown attribute type '{declared.value}'")
            return  # onnx: `<a: unknown>` in a function signature keeps just the name
        proto.type = code  # type: ignore[assignment]
    if value is None:
        return  # a function attribute with an annotation and no default
    message = sem.attribute_problem(declared, value, in_function)
    if message is not None:
        raise ConversionError(message)
    if isinstance(value, t.ListValue):
        current = code
        for item in value.items:
            got = sem.single_type(item, sem.to_singleton(current), in_list=True)
            if got == sem.INT:
                proto.ints.append(item.literal.value)  # type: ignore[union-attr]
            elif got == sem.FLOAT:
                proto.floats.append(sem.float32(item.literal.text))  # type: ignore[union-attr]
            elif got == sem.STRING:
                proto.strings.append(item.literal.value.encode("utf-8"))  # type: ignore[union-attr]
            else:
                continue  # onnx parses tensor, graph, type and @ref elements of a list and drops them
            current = sem.LIST_OF[got]
            proto.type = current  # type: ignore[assignment]
        return
    _fill_single(proto, value, code)


def _fill_single(proto: AttributeProto, value: t.AttrValue, expected: int) -> None:
    if isinstance(value, t.RefValue):
        proto.ref_attr_name = value.ref.value
        return
    got = sem.single_type(value, expected, in_list=False)
    proto.type = got  # type: ignore[assignment]
    if isinstance(value, t.LiteralValue):
        lit = value.literal
        if got == sem.INT:
            proto.i = lit.value  # type: ignore[assignment]
        elif got == sem.FLOAT:
            proto.f = sem.float32(lit.text)
        else:
            proto.s = lit.value.encode("utf-8")  # type: ignore[union-attr]
    elif isinstance(value, t.TensorValue):
        _fill_tensor(proto.t, value.type, value.data, value.name.value if value.name is not None else "")
    elif isinstance(value, t.TypeValue):
        _fill_type(proto.tp, value.type)
    elif isinstance(value, t.GraphValue):
        _fill_graph(proto.g, value.graph)
