"""The binary front end: a ModelProto straight to the IR, nothing printed, no weight read.

The file is decoded by `binary.proto` (pure Python: a check imports neither onnx nor protobuf), or by protobuf
when that decoder leaves it (anything unusual, a malformed file: protobuf's error is then the finding); the
reader takes either's messages. Tensors stay messages until someone asks for their elements (`ProtoTensor`;
the common element types are read with numpy, the others by onnx's numpy_helper); external data is only
located (and its file size checked) here by `binary.external`, and read through mmap when a value is asked for.
A reference that leaves the model's folder (an absolute path, `..`, a symlink pointing out), or names anything
but a regular file, is a finding and is never opened.

Structural findings are those of the text front end that a binary can have (undefined, duplicate and unordered
values, unknown ops and domains, outputs never produced) plus what only binaries have: external data that is
missing, short or outside the folder, dims written as negative numbers, unused initializers. A finding here is
located by its node (`Finding.node`) and a short description of the part (`detail`).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlsp.binary import proto as light
from graphlsp.binary.external import Checked, ExternalData, is_external, locate, read_range
from graphlsp.files import open_regular
from graphlsp.graph import findings as F
from graphlsp.graph import ops
from graphlsp.graph.core import (
    NO_NODE_ORIGIN,
    Attr,
    ExportedNode,
    FuncAttr,
    Function,
    Graph,
    Model,
    Node,
    Ref,
    TypeSpec,
    Value,
    ValueInfo,
)
from graphlsp.graph.enums import AttributeProto, TensorProto
from graphlsp.graph.findings import Finding
from graphlsp.graph.order import order_problem
from graphlsp.graph.resolve import resolve_op
from graphlsp.graph.tensor import Tensor, TensorError

if TYPE_CHECKING:
    from pathlib import Path

NEGATIVE_DIM, EXTERNAL_DATA, UNUSED_INITIALIZER = F.NEGATIVE_DIM, F.EXTERNAL_DATA, F.UNUSED_INITIALIZER
_EXTERNAL = TensorProto.EXTERNAL
_Light = light.Message
_INT, _FLOAT, _STRING, _TENSOR, _GRAPH = (AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING,
                                          AttributeProto.TENSOR, AttributeProto.GRAPH)  # fmt: skip
_INTS, _FLOATS, _STRINGS, _TENSORS, _GRAPHS = (AttributeProto.INTS, AttributeProto.FLOATS, AttributeProto.STRINGS,
                                               AttributeProto.TENSORS, AttributeProto.GRAPHS)  # fmt: skip

_KIND = {
    AttributeProto.INT: "int", AttributeProto.FLOAT: "float", AttributeProto.STRING: "string",
    AttributeProto.TENSOR: "tensor", AttributeProto.GRAPH: "graph", AttributeProto.TYPE_PROTO: "type_proto",
    AttributeProto.SPARSE_TENSOR: "sparse_tensor", AttributeProto.INTS: "ints", AttributeProto.FLOATS: "floats",
    AttributeProto.STRINGS: "strings", AttributeProto.TENSORS: "tensors", AttributeProto.GRAPHS: "graphs",
    AttributeProto.TYPE_PROTOS: "type_protos", AttributeProto.SPARSE_TENSORS: "sparse_tensors",
}  # fmt: skip


# element types whose elements numpy reads as onnx's numpy_helper.to_array does (frombuffer of raw data, or the
# typed field as an array), by type: (numpy dtype, the typed field); others go to numpy_helper
_PLAIN = {
    TensorProto.FLOAT: ("float32", "float_data"), TensorProto.DOUBLE: ("float64", "double_data"),
    TensorProto.INT32: ("int32", "int32_data"), TensorProto.INT64: ("int64", "int64_data"),
    TensorProto.UINT64: ("uint64", "uint64_data"), TensorProto.UINT32: ("uint32", "uint64_data"),
    TensorProto.UINT8: ("uint8", None), TensorProto.INT8: ("int8", None), TensorProto.INT16: ("int16", None),
    TensorProto.UINT16: ("uint16", None), TensorProto.FLOAT16: ("float16", None), TensorProto.BOOL: ("bool", None),
}  # fmt: skip


def _plain_array(msg: Any, raw: Any) -> np.ndarray | None:
    """numpy_helper.to_array of a decoded message (`raw`: its raw data, or None to read the message's own), the
    same numpy calls on the same values; None when it is not a plain case (left to numpy_helper)."""
    plain = _PLAIN.get(msg.data_type)
    if plain is None or sys.byteorder != "little" or msg.HasField("segment"):
        return None
    dtype, field = plain
    if raw is None and msg.HasField("raw_data"):
        raw = msg.raw_data
    if raw is not None:
        return np.frombuffer(raw, dtype=dtype).reshape(msg.dims)
    if field is None:  # int32_data holds them, as numpy_helper.to_array reads it
        ints = np.array(msg.int32_data, dtype=np.int32).view(np.uint32)
        if dtype in ("float16", "int16", "uint16"):
            return ints.astype(np.uint16).reshape(msg.dims).view(dtype)
        if dtype == "bool":
            return ints.astype(np.uint8).view(dtype).reshape(msg.dims)
        field = "int32_data"  # int8, uint8
    storage = {"uint64_data": "uint64", "int32_data": "int32"}.get(field, dtype)
    return np.asarray(getattr(msg, field), dtype=storage).astype(dtype).reshape(msg.dims)


class ProtoTensor(Tensor):
    """A TensorProto kept as it is; decoded (raw bytes, typed fields or external data) only by `numpy()`.
    `msg` is the reader's message (`binary.proto`'s, or onnx's when protobuf read the file); `proto` is onnx's.

    `where` locates bytes outside the message: external data, or the raw data of a large model file that the
    reader left in the file (`inline`)."""

    __slots__ = ("msg", "_proto", "where", "problem", "inline")

    def __init__(self, msg: Any, where: ExternalData | None = None, problem: str = "",
                 inline: bool = False) -> None:  # fmt: skip
        super().__init__(msg.data_type, tuple(msg.dims), msg.name)
        self.msg = msg
        self._proto: Any = None if isinstance(msg, _Light) else msg
        self.where = where
        self.problem = problem  # why the data cannot be had (external data missing, outside the folder)
        self.inline = inline

    @property
    def proto(self) -> Any:
        """onnx's TensorProto of the message (parsed from its bytes on first use)."""
        if self._proto is None:
            self._proto = self.msg.to_onnx()
        return self._proto

    @property
    def external(self) -> bool:
        return self.msg.data_location == TensorProto.EXTERNAL

    def numpy(self) -> np.ndarray:
        if self.problem:
            raise TensorError(self.problem)
        outside = self.external or self.inline
        if outside and self.where is None:
            raise TensorError("external data without a location")
        if isinstance(self.msg, light.Message) and self.msg.data_type in _PLAIN:
            raw = _read_range(self.where, self.nbytes) if outside and self.where is not None else None
            try:
                got = _plain_array(self.msg, raw)
            except Exception as e:  # malformed data: wrong size
                raise TensorError(str(e)) from None
            if got is not None:
                return got
        import onnx.numpy_helper

        proto = self._with_data(self.where) if outside and self.where is not None else self.proto
        try:
            return onnx.numpy_helper.to_array(proto)
        except Exception as e:  # malformed data: wrong size, unknown type
            raise TensorError(str(e)) from None

    def _with_data(self, where: ExternalData) -> Any:
        from onnx import TensorProto

        proto = TensorProto()
        proto.CopyFrom(self.proto)
        del proto.external_data[:]
        proto.data_location = TensorProto.DEFAULT
        proto.raw_data = _read_range(where, self.nbytes)
        return proto

    def embedded(self) -> Any:
        """The message with its data in it (external data read through the checks of `binary.external`);
        raises TensorError when the data may not or cannot be had."""
        if self.problem:
            raise TensorError(self.problem)
        if self.external or self.inline:
            if self.where is None:
                raise TensorError("external data without a location")
            return self._with_data(self.where)
        return self.proto

    def to_proto(self) -> Any:
        """onnx's message as the file has it (external data stays a reference; inline data is read back)."""
        if self.inline and self.where is not None:
            return self._with_data(self.where)
        return self.proto


def _read_range(where: ExternalData, nbytes: int) -> bytes:
    return read_range(where, nbytes)


def type_spec(proto: Any) -> TypeSpec | None:
    which = proto.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        tt = proto.tensor_type if which == "tensor_type" else proto.sparse_tensor_type
        dims = None
        if tt.HasField("shape"):
            read: list[int | str | None] = []
            for d in tt.shape.dim:  # a value or param that is not the default is there: HasField only for those
                value = d.dim_value
                if value or d.HasField("dim_value"):
                    read.append(value)
                else:
                    param = d.dim_param
                    read.append(param if param or d.HasField("dim_param") else None)
            dims = tuple(read)
        return TypeSpec("tensor" if which == "tensor_type" else "sparse_tensor", tt.elem_type, dims)
    if which == "sequence_type":
        st = proto.sequence_type
        return TypeSpec("seq", arg=type_spec(st.elem_type) if st.HasField("elem_type") else None)
    if which == "optional_type":
        ot = proto.optional_type
        return TypeSpec("optional", arg=type_spec(ot.elem_type) if ot.HasField("elem_type") else None)
    if which == "map_type":
        mt = proto.map_type
        return TypeSpec("map", mt.key_type, arg=type_spec(mt.value_type) if mt.HasField("value_type") else None)
    if which == "opaque_type":
        return TypeSpec("opaque", opaque=(proto.opaque_type.domain, proto.opaque_type.name))
    return None


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _valid_strings(proto: Any) -> None:
    if isinstance(proto, light.Message):
        return  # binary.proto decodes only valid UTF-8
    """Every string field made a str. protobuf hands a `string` field that is not UTF-8 (a corrupt or hostile
    file) back as bytes, and a name must be text everywhere after: such a string is decoded with U+FFFD for each
    bad byte (~10 ms on a 10 MB model; nothing changes in a valid one)."""
    from google.protobuf.descriptor import FieldDescriptor

    string, message = FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_MESSAGE
    stack = [proto]
    while stack:
        m = stack.pop()
        for f, v in m.ListFields():
            if f.type == message:
                if f.is_repeated:
                    stack.extend(v)
                else:
                    stack.append(v)
            elif f.type == string:
                if f.is_repeated:
                    if any(type(x) is bytes for x in v):
                        v[:] = [x.decode("utf-8", "replace") if type(x) is bytes else x for x in v]
                elif type(v) is bytes:
                    setattr(m, f.name, v.decode("utf-8", "replace"))


# why a name is undefined, in the text front end's words (a view shows a fact the reader and its text both find once)
_UNDEFINED = {"function": "a function body sees only its inputs",
              "subgraph": "no node, graph input or initializer of this graph or an enclosing graph produces it"}


class _Reader:
    def __init__(self, base: str | None, path: str | None = None,
                 left_in_file: dict[tuple[int, ...], tuple[int, int]] | None = None) -> None:  # fmt: skip
        self.base = os.path.realpath(base) if base is not None else None
        self.path = path  # the model file, for raw data left in it
        self.left_in_file = left_in_file or {}
        self.findings: list[Finding] = []
        self.functions: dict[tuple[str, str, str], Function] = {}
        self.checked_files = Checked()
        self.back: dict[int, list[tuple[Node, Value, str]]] = {}  # id(graph) -> reads before the producer
        self.holders: set[Node] = set()  # the nodes with a graph attribute

    def emit(self, code: str, message: str, node: Node | None = None, detail: str = "", severity: str = "",
             kind: str = "") -> None:  # fmt: skip
        self.findings.append(Finding(code, message, severity=severity, kind=kind, node=node, detail=detail))

    # ---- tensors
    def tensor(self, proto: Any, where: str, node: Node | None = None) -> ProtoTensor:
        if proto.data_location != _EXTERNAL:
            return ProtoTensor(proto)
        ext, problem = locate(proto, self.base, self.checked_files)
        t = ProtoTensor(proto, ext, problem)
        if problem:
            self.emit(EXTERNAL_DATA, problem, node, where)
        return t

    # ---- types
    def declared(self, vi: Any, where: str, node: Node | None = None) -> TypeSpec | None:
        if not vi.HasField("type"):
            return None
        ty = type_spec(vi.type)
        if ty is not None and ty.dims is not None and any(isinstance(d, int) and d < 0 for d in ty.dims):
            self.emit(NEGATIVE_DIM, f"'{vi.name}' has a dim of -1, which some exporters (paddle2onnx) write for a "
                      "dynamic dim: it is read as unknown", node, where)  # fmt: skip
            ty = _unknown_negative(ty)
        return ty

    # ---- attributes
    def attribute(self, node: Node | None, a: Any, index: int = -1) -> Attr:
        t = a.type
        kind = _KIND.get(t)
        if a.ref_attr_name:
            return Attr(a.name, kind, Ref(a.ref_attr_name))
        value: Any = None
        if t == _INT:
            value = a.i
        elif t == _INTS:
            value = list(a.ints)
        elif t == _TENSOR:
            tp = a.t
            left = None
            if self.left_in_file and node is not None and node.graph.kind == "model":
                left = self.left_in_file.get((node.index, index))
            if left is not None and self.path is not None:
                value = ProtoTensor(tp, ExternalData(self.path, *left), inline=True)
            elif tp.data_location != _EXTERNAL:
                value = ProtoTensor(tp)
            else:
                value = self.tensor(tp, f"attribute {a.name}", node)
        elif t == _FLOAT:
            value = a.f
        elif t == _STRING:
            value = _text(a.s)
        elif t == _FLOATS:
            value = list(a.floats)
        elif t == _STRINGS:
            value = [_text(x) for x in a.strings]
        elif t == _TENSORS:
            value = [self.tensor(x, f"attribute {a.name}", node) for x in a.tensors]
        elif t == AttributeProto.SPARSE_TENSOR:
            value = _Sparse(a.sparse_tensor)
        elif t == AttributeProto.TYPE_PROTO:
            value = type_spec(a.tp)
        elif t == AttributeProto.TYPE_PROTOS:
            value = [type_spec(x) for x in a.type_protos]
        elif t in (_GRAPH, _GRAPHS):
            value = a.name
            if node is not None:
                self.holders.add(node)
        return Attr(a.name, kind, value)

    # ---- graphs
    def graph(self, gp: Any, kind: str, scope: _Scope, parent: Graph | None = None,
              owner: Node | None = None, attribute: str | None = None) -> Graph:  # fmt: skip
        g = Graph(gp.name, kind, None, parent, owner, attribute)
        self.back[id(g)] = []
        where = f"graph '{g.path}'"
        values = g.values
        is_fn = kind == "function"  # a FunctionProto: its inputs and outputs are names
        infos: dict[str, Any] = {vi.name: vi for vi in gp.value_info}
        inputs = [infos.get(n) or light.ValueInfoProto(name=n) for n in gp.input] if is_fn else list(gp.input)
        for vi in inputs:
            v = Value(vi.name, g, "input", type=self.declared(vi, f"{where} input '{vi.name}'", owner))
            g.inputs.append(v)
            if vi.name in values:
                v.duplicate_of = values[vi.name]
                self.emit(F.DUPLICATE_DEFINITION, f"graph input '{vi.name}' is declared twice", owner, where)
                continue
            values[vi.name] = v
        if not is_fn:
            for i, tp in enumerate(gp.initializer):
                left = self.left_in_file.get((i,)) if kind == "model" else None
                if left is not None:
                    assert self.path is not None
                    tensor: Tensor = ProtoTensor(tp, ExternalData(self.path, *left), inline=True)
                else:
                    tensor = self.tensor(tp, f"{where} initializer '{tp.name}'", owner)
                self._initializer(g, tp, tensor, owner)
            for sp in gp.sparse_initializer:  # its type is the dense tensor's (the values' dims are [NNZ])
                self._initializer(g, sp.values, _Sparse(sp), owner)
        self._define(g, gp.node, scope)
        self._bind(g, gp, scope)
        outputs = [infos.get(n) or light.ValueInfoProto(name=n) for n in gp.output] if is_fn else list(gp.output)
        for vi in outputs:
            ty = self.declared(vi, f"{where} output '{vi.name}'", owner)
            g.output_infos.append(ValueInfo(vi.name, ty))
            found = g.lookup(vi.name)
            if found is None:
                v = Value(vi.name, g, "undefined", type=ty)
                self.emit(F.OUTPUT_NEVER_PRODUCED, f"graph output '{vi.name}' is never produced: no node, graph "
                          "input or initializer defines it", owner, f"{where} output '{vi.name}'")  # fmt: skip
            else:
                v = found
                if v.graph is g and v.type is None:
                    v.type = ty
                elif v.graph is not g:
                    self._implicit(g, v)
                    self._outer_order(g, v)
            v.graph_outputs.append(g)
            g.outputs.append(v)
        self._order_findings(g, self.back.pop(id(g)))
        taken = set(gp.input) | set(gp.output) if is_fn else {vi.name for vi in [*gp.input, *gp.output]}
        for vi in gp.value_info:
            if vi.name not in taken and vi.name not in g.value_infos:  # the first of duplicates (onnxslim writes 5)
                g.value_infos[vi.name] = ValueInfo(vi.name, self.declared(vi, f"{where} value_info", owner))
        for name, info in g.value_infos.items():
            known = values.get(name)
            if known is not None and known.type is None:
                known.type = info.type
        if kind == "model":
            for v in g.initializers.values():
                if not v.consumers and not v.graph_outputs and v.kind == "initializer":
                    self.findings.append(Finding(
                        UNUSED_INITIALIZER, f"initializer '{v.name}' is never used: onnxruntime removes it when it "
                        "loads the model", detail=f"{where} initializer '{v.name}'", value=v.name,
                    ))  # fmt: skip
        return g

    def _initializer(self, g: Graph, tp: Any, tensor: Tensor, owner: Node | None) -> None:
        name = tp.name
        first = g.values.get(name)
        ty = TypeSpec("tensor", tensor.dtype, tuple(tensor.shape))
        if first is not None and first.kind == "input" and name not in g.initializers:
            first.is_initializer = True
            first.tensor = tensor
            first.type = first.type or ty
            g.initializers[name] = first
        elif first is not None:
            self.emit(F.DUPLICATE_DEFINITION, f"initializer '{name}' is defined twice", owner, f"initializer '{name}'")
        else:
            v = Value(name, g, "initializer", type=ty, is_initializer=True, tensor=tensor)
            g.values[name] = g.initializers[name] = v

    def _define(self, g: Graph, nps: Any, scope: _Scope) -> None:
        """The graph's nodes, their attributes and the values they define."""
        values, nodes, outer = g.values, g.nodes, g.parent is not None
        imports, functions, importer = scope.imports, self.functions, scope.where
        attribute, normalize = self.attribute, ops.normalize_domain
        for index, np_ in enumerate(nps):
            name = np_.name  # a name that is not empty is there; HasField tells an empty one from none
            domain = np_.domain
            # where the exporter says the node comes from (metadata_props, doc_string): read as they are, parsed
            # by graphlsp.provenance when asked (a decoded message's absent list is not made here)
            meta = np_.__dict__.get("metadata_props") if type(np_) is _LightNode else np_.metadata_props
            doc = np_.doc_string
            origin = NO_NODE_ORIGIN if not meta and not doc else _exported(meta, doc)
            node = Node(g, index, origin, normalize(domain) if domain else domain, np_.op_type,
                        np_.overload, name if name or np_.HasField("name") else None)  # fmt: skip
            nodes.append(node)
            attrs = np_.attribute
            if attrs:
                named = node.attributes
                for j, a in enumerate(attrs):
                    named[a.name] = attribute(node, a, j)
            issue = resolve_op(node, imports, functions, True, importer)
            if issue is not None:
                self.emit(issue[0], issue[1], node)
            outputs = node.outputs
            for j, name in enumerate(np_.output):
                if not name:
                    outputs.append(None)
                    continue
                v = Value(name, g, "node", node, j)
                outputs.append(v)
                first = values.get(name)
                if first is None and outer:
                    first = g.outer_defined(name)
                if first is None:
                    values[name] = v
                    continue
                v.duplicate_of = first
                where = "" if first.graph is g else " in an enclosing graph"  # as the text front end says it
                self.emit(F.DUPLICATE_DEFINITION, f"'{name}' is already defined{where}: an ONNX graph defines each "
                          "value once (SSA)", node, f"output {j} ({name})")  # fmt: skip

    def _bind(self, g: Graph, gp: Any, scope: _Scope) -> None:
        """The nodes' inputs, in order, each node's subgraphs built after its own inputs."""
        values, parent, undefined, back, holders = g.values, g.parent, g.undefined, self.back[id(g)], self.holders
        for node, np_ in zip(g.nodes, gp.node, strict=True):
            inputs, index = node.inputs, node.index
            for j, name in enumerate(np_.input):
                if not name:
                    inputs.append(None)
                    continue
                found = values.get(name)
                if found is None and parent is not None:
                    found = parent.lookup(name)
                    if found is not None:
                        self._implicit(g, found)
                        self._outer_order(g, found)
                if found is None:
                    found = undefined.get(name)
                    if found is None:
                        found = undefined[name] = Value(name, g, "undefined")
                        what = _UNDEFINED.get(g.kind, "no node, graph input or initializer produces it")
                        self.emit(F.UNDEFINED_VALUE, f"'{name}' is not defined: {what}", node, f"input {j} ({name})")
                else:
                    producer = found.producer
                    if producer is not None and found.graph is g and producer.index >= index:
                        back.append((node, found, f"input {j} ({name})"))
                found.consumers.append((node, j))
                inputs.append(found)
            if node not in holders:  # no graph attribute
                continue
            for a in np_.attribute:
                t = a.type
                if (t != _GRAPH and t != _GRAPHS) or a.ref_attr_name:
                    continue
                for gp_sub in [a.g] if t == _GRAPH else list(a.graphs):
                    sub = self.graph(gp_sub, "subgraph", scope, g, node, a.name)
                    node.subgraphs.setdefault(a.name, []).append(sub)

    def _outer_order(self, g: Graph, v: Value) -> None:
        """A subgraph's read of an outer value produced at or after the node holding it (in `v`'s graph): judged
        with that graph's other reads before their producer once its nodes are bound (`_order_findings`)."""
        c = g
        while c.parent is not None and c.parent is not v.graph:
            c = c.parent
        holder = c.owner
        if holder is not None and v.producer is not None and v.producer.index >= holder.index:
            self.back[id(v.graph)].append((holder, v, f"its subgraph {c.attribute} reads '{v.name}'"))

    def _order_findings(self, g: Graph, back: list[tuple[Node, Value, str]]) -> None:
        """Reads before the producer: cycles (errors), else nodes out of order (a warning in the main graph, which
        onnxruntime sorts), in the text front end's words; one finding per node, part and value."""
        if not back:
            return
        comp = g.components()
        said: set[tuple[int, str]] = set()
        for holder, v, detail in back:
            if (holder.index, detail) in said:
                continue
            said.add((holder.index, detail))
            problem = order_problem(g, holder, v, comp)
            self.emit(F.USE_BEFORE_DEFINITION, problem.message, holder, detail, problem.severity,
                      F.CYCLE if problem.cycle else "")  # fmt: skip

    @staticmethod
    def _implicit(g: Graph, v: Value) -> None:
        """Record an outer-scope read on every node that holds `g`, up to the graph defining `v`."""
        c: Graph | None = g
        while c is not None and c is not v.graph and c.owner is not None:
            c.owner.implicit.setdefault(v.name, v)
            c = c.parent

    # ---- functions
    def function(self, fp: Any, imports: dict[str, int]) -> Function:
        own = {ops.normalize_domain(o.domain): o.version for o in fp.opset_import} or dict(imports)
        attrs = [FuncAttr(name) for name in fp.attribute]
        for ap in fp.attribute_proto:
            a = self.attribute(None, ap)
            attrs.append(FuncAttr(ap.name, a.kind, a.value, True))
        return Function(ops.normalize_domain(fp.domain), fp.name, fp.overload, own, attrs)


_LightNode = light.NodeProto


def _exported(meta: Any, doc: str) -> ExportedNode:
    pairs = tuple((e.key, e.value) for e in meta) if meta else ()
    return ExportedNode(pairs + (("doc_string", doc),) if doc else pairs)


class _Scope:
    __slots__ = ("imports", "where")

    def __init__(self, imports: dict[str, int], where: str) -> None:
        self.imports = imports
        self.where = where


class _Sparse(Tensor):
    """A sparse tensor kept as its message (converted to dense when asked for); `proto` is onnx's."""

    __slots__ = ("msg", "_proto")
    sparse = True  # graph_proto writes it as a sparse initializer

    def __init__(self, msg: Any) -> None:
        super().__init__(msg.values.data_type, tuple(msg.dims), msg.values.name)
        self.msg = msg
        self._proto: Any = None if isinstance(msg, light.Message) else msg

    @property
    def proto(self) -> Any:
        if self._proto is None:
            self._proto = self.msg.to_onnx()
        return self._proto

    def numpy(self) -> np.ndarray:
        if is_external(self.msg.values) or is_external(self.msg.indices):
            raise TensorError("a sparse tensor's external data is not read")
        import onnx.numpy_helper

        try:
            values = onnx.numpy_helper.to_array(self.proto.values)
            indices = onnx.numpy_helper.to_array(self.proto.indices).astype(np.int64)
            dense = np.zeros(self.shape, dtype=values.dtype)
            if indices.ndim == 1:
                dense.reshape(-1)[indices] = values
            else:
                dense[tuple(indices.T)] = values
            return dense
        except Exception as e:  # malformed indices or values
            raise TensorError(str(e)) from None

    def to_proto(self) -> Any:
        return self.proto


def _unknown_negative(ty: TypeSpec) -> TypeSpec:
    assert ty.dims is not None
    dims = tuple(None if isinstance(d, int) and d < 0 else d for d in ty.dims)
    return TypeSpec(ty.kind, ty.elem, dims, ty.arg, ty.opaque)


def model_from_proto(
    proto: Any, base: str | None = None, path: str | None = None,
    left_in_file: dict[tuple[int, ...], tuple[int, int]] | None = None,
) -> tuple[Model, list[Finding]]:  # fmt: skip
    """The IR of a ModelProto (onnx's or `binary.proto`'s); `base` is the folder external data is read from
    (None: no external data).
    `left_in_file` maps main-graph initializers (by index) to the range of `path` that holds their raw data."""
    _valid_strings(proto)
    r = _Reader(base, path, left_in_file)
    imports: dict[str, int] = {}
    for o in proto.opset_import:
        imports.setdefault(ops.normalize_domain(o.domain), o.version)
    model = Model(imports, proto.ir_version if proto.HasField("ir_version") else None, producer=proto.producer_name)
    for fp in proto.functions:
        fn = r.function(fp, imports)
        if fn.key in r.functions:
            r.emit(F.DUPLICATE_DEFINITION, f"function '{fn.name}' is defined twice", None, f"function '{fn.name}'")
            continue
        r.functions[fn.key] = fn
    model.functions = r.functions
    if not imports:
        r.emit(F.MISSING_OPSET_IMPORT, "the model imports no opset", None, "model")
    model.graph = r.graph(proto.graph, "model", _Scope(imports, "model"))
    for fp in proto.functions:
        local = r.functions.get((ops.normalize_domain(fp.domain), fp.name, fp.overload))
        if local is not None and local.body is None:
            local.body = r.graph(fp, "function", _Scope(local.opset_imports, "function"))
    return model, r.findings


def function_from_proto(proto: Any, imports: dict[str, int]) -> Function:
    """One FunctionProto (an onnx schema's body) as a Function with its body."""
    r = _Reader(None)
    fn = r.function(proto, {ops.normalize_domain(k): v for k, v in imports.items()})
    r.functions[fn.key] = fn
    fn.body = r.graph(proto, "function", _Scope(fn.opset_imports, "function"))
    return fn


STRIP_ABOVE = 32 << 20  # bytes: a model file this large is read without copying its initializers' raw data


class EmptyModel(ValueError):
    """A model file of no bytes: no model at all."""


def read_model(path: str | Path, strip_above: int = STRIP_ABOVE) -> tuple[Model, list[Finding]]:
    """Load a binary model file (external data located, not read). Raises protobuf's error when it cannot load."""
    from graphlsp.binary.wire import WireError, strip_weights

    proto: Any = None
    left: dict[tuple[int, ...], tuple[int, int]] = {}
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:  # protobuf reads no bytes as a model with nothing in it ("imports no opset")
            raise EmptyModel("the file is empty (0 bytes)")
        if size >= strip_above and size > 0:
            import mmap  # a large model only

            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                view = memoryview(m)
                try:
                    stripped, left = strip_weights(view)
                    proto = _decoded(stripped)
                except WireError:
                    left = {}
                    proto = _parsed(view)
                finally:
                    view.release()
        else:
            proto = _decoded(f.read())
    real = os.path.realpath(path)  # as Path.resolve, without importing pathlib (4 ms of a check's start)
    return model_from_proto(proto, os.path.dirname(real), real, left)


def _decoded(data: bytes) -> Any:
    """The model of `data`: `binary.proto`'s, else (anything unusual) protobuf's."""
    try:
        return light.decode(light.ModelProto, data)
    except light.Unusual:
        return _parsed(data)


def _parsed(data: bytes | memoryview) -> Any:
    from onnx import ModelProto

    proto = ModelProto()
    proto.ParseFromString(data)
    return proto
