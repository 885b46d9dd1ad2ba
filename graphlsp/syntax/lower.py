"""The text front end's lowering: the core graph IR from a SyntaxDocument, its source map, structural findings.

One pass per graph defines every value (inputs, initializers, node outputs in file order), a second binds each
node input by name (this graph first, then the enclosing graphs) and builds the node's subgraphs; then graph
outputs, unused values and order (use before definition, cycles) are checked. Ops resolve to a model-local
function by (domain, name, overload) first, then to onnx's schema at the imported opset version.

Statements with a syntax error still define and read values, but get no structural findings of their own (the
syntax error says what is wrong), and names that appear in statements that did not parse at all are not
reported as undefined or unused.

Every IR element gets an origin that points back into the syntax (`TextNode`, `TextName`, `TextGraph`): ranges
are the statement's piece origin plus the element's local offsets, so they stay right when an edit moves the
statement. Attribute values become plain typed values; tensor literals stay unparsed until asked for
(`LiteralTensor`).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphlsp.graph import findings as F
from graphlsp.graph import ops
from graphlsp.graph.core import (
    Attr,
    FuncAttr,
    Function,
    Graph,
    Model,
    NameOrigin,
    Node,
    NodeOrigin,
    Ref,
    SourceMap,
    Span,
    TypeSpec,
    Value,
    ValueInfo,
)
from graphlsp.graph.findings import Finding
from graphlsp.graph.order import order_problem
from graphlsp.graph.resolve import SUGGESTED_OPSET, resolve_op
from graphlsp.graph.suggest import Suggester
from graphlsp.graph.tensor import Tensor, TensorError, location_problem
from graphlsp.syntax import semantics as sem
from graphlsp.syntax import tree as t
from graphlsp.syntax.document import Block, Piece, SyntaxDocument


def span(piece: Piece, element: Any) -> Span:
    """The absolute range of a syntax element held by `piece`."""
    return piece.origin + element.start, piece.origin + element.end


class TextNode(NodeOrigin):
    """A node's origin in the text: its statement (piece) and syntax node."""

    __slots__ = ("piece", "syntax")

    def __init__(self, piece: Piece, syntax: t.Node) -> None:
        self.piece = piece
        self.syntax = syntax

    @property
    def anchor(self) -> Piece:  # type: ignore[override]
        return self.piece

    @property
    def quiet(self) -> bool:  # type: ignore[override]
        return self.piece.failed

    def span(self) -> Span:
        return span(self.piece, self.syntax)

    def op_span(self) -> Span:
        start = self.piece.origin + self.syntax.op.op_start
        return start, start + len(self.syntax.op.op_type)

    def domain_span(self) -> Span:
        op = self.syntax.op
        return self.piece.origin + op.start, self.piece.origin + op.op_start - 1

    def label_span(self) -> Span | None:
        return span(self.piece, self.syntax.label) if self.syntax.label is not None else None

    def input_span(self, i: int) -> Span | None:
        ins = self.syntax.inputs
        el = ins[i] if i < len(ins) else None
        return span(self.piece, el) if el is not None else None

    def output_span(self, i: int) -> Span | None:
        outs = self.syntax.outputs
        el = outs[i] if i < len(outs) else None
        return span(self.piece, el) if el is not None else None

    def attr_span(self, name: str) -> Span | None:
        for a in self.syntax.attributes:
            if a.name.value == name:
                return span(self.piece, a)
        return None


class TextName(NameOrigin):
    """Where a value (or function) is defined in the text: its name element in a statement."""

    __slots__ = ("piece", "name")

    def __init__(self, piece: Piece, name: t.Name) -> None:
        self.piece = piece
        self.name = name

    @property
    def anchor(self) -> Piece:  # type: ignore[override]
        return self.piece

    @property
    def quiet(self) -> bool:  # type: ignore[override]
        return self.piece.failed

    def span(self) -> Span:
        return span(self.piece, self.name)


class TextGraph(NameOrigin):
    """A graph's signature in the text (the owner node's piece for a subgraph)."""

    __slots__ = ("piece", "sig")

    def __init__(self, piece: Piece, sig: t.GraphSig | t.FunctionSig) -> None:
        self.piece = piece
        self.sig = sig

    @property
    def anchor(self) -> Piece:  # type: ignore[override]
        return self.piece

    def span(self) -> Span:
        return span(self.piece, self.sig.name)


class TextSource(SourceMap):
    """Positions in a SyntaxDocument's current text."""

    text = True

    def __init__(self, doc: SyntaxDocument) -> None:
        self.doc = doc

    def anchor(self, where: Span) -> tuple[Any, int, int]:
        piece = self.doc.piece_at(where[0])
        o = piece.origin if piece is not None else 0
        return (piece, where[0] - o, where[1] - o)

    def line_of(self, offset: int) -> int | None:
        return self.doc.lines.line_of(offset)


def text_node(node: Node) -> TextNode | None:
    """The node's statement and syntax, when it comes from text."""
    o = node.origin
    return o if isinstance(o, TextNode) else None


def text_graph(graph: Graph) -> TextGraph | None:
    o = graph.origin
    return o if isinstance(o, TextGraph) else None


# ---- syntax to IR values


def type_spec(ty: t.TypeRef | None) -> TypeSpec | None:
    """A type written in the text as the IR's TypeSpec."""
    if ty is None:
        return None
    arg = type_spec(ty.args[0]) if ty.args else None
    elem = sem.ELEM_TYPES.get(ty.elem, 0) if ty.elem is not None else None
    dims = None
    if ty.dims is not None:
        dims = tuple(  # a dim outside int64 is unknown (the text reports it)
            (dm.value if dm.kind == "value" and _int64(dm.value) else str(dm.value) if dm.kind == "param" else None)
            for dm in ty.dims
        )
    return TypeSpec(ty.kind, elem, dims, arg, ty.opaque)


def _int64(v: object) -> bool:
    return isinstance(v, int) and sem.INT64_MIN <= v <= sem.INT64_MAX


_NUMPY = {
    "float": np.float32, "double": np.float64, "int64": np.int64, "int32": np.int32, "int16": np.int16,
    "int8": np.int8, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "bool": np.bool_,
}  # fmt: skip


class LiteralTensor(Tensor):
    """A tensor written in the text (`float[2] {1, 2}`): decoded from its literals when asked for."""

    __slots__ = ("type", "data", "count")

    def __init__(self, ty: t.TypeRef, data: t.TensorData | None, name: str = "") -> None:
        dims = ty.dims or []
        shape = tuple(int(dm.value) if dm.kind == "value" and _int64(dm.value) else -1 for dm in dims)  # type: ignore[arg-type]
        super().__init__(sem.ELEM_TYPES.get(ty.elem or "", 0), shape, name)
        self.type = ty
        self.data = data
        self.count = len(data.values) if data is not None and data.values is not None else -1

    @property
    def external(self) -> bool:
        return self.data is not None and self.data.external is not None

    def numpy(self) -> np.ndarray:
        ty = self.type
        if ty.kind != "tensor" or ty.dims is None or any(dm.kind != "value" for dm in ty.dims):
            raise TensorError("tensor literal needs a tensor type with numeric dims")
        values = self.data.values if self.data is not None and self.data.values is not None else None
        if values is None:
            raise TensorError("the tensor's data is not in the text")
        dtype = _NUMPY.get(ty.elem or "")
        packed = sem.numbers_array(ty.elem or "", values) if isinstance(values, t.Numbers) and dtype is not None \
            else None  # fmt: skip
        if packed is not None:
            cast: np.ndarray = packed.astype(dtype)
            if dtype is not np.bool_ and packed.dtype.kind == "i" and not np.array_equal(cast, packed):  # out of range
                raise TensorError(f"a value out of range for {ty.elem}")
            if cast.size != self.size:
                raise TensorError(f"tensor of shape {list(self.shape)} has {cast.size} values")
            return cast.reshape(self.shape)
        if dtype is not None:
            try:  # floats from their text, as onnx rounds them (`-0` is -0.0; no double rounding to float32)
                items = sem.float32_list(values) if dtype is np.float32 else [sem.float64(lit.text) for lit in values] \
                    if dtype is np.float64 else [lit.value for lit in values]  # fmt: skip
                arr: np.ndarray = np.array(items, dtype=dtype)
            except (OverflowError, ValueError, TypeError) as e:
                raise TensorError(str(e)) from None
            if arr.size != self.size:
                raise TensorError(f"tensor of shape {list(self.shape)} has {arr.size} values")
            return arr.reshape(self.shape)
        from onnx import numpy_helper

        from graphlsp.syntax.to_proto import ConversionError, tensor_to_proto

        try:
            return numpy_helper.to_array(tensor_to_proto(ty, self.data))
        except (ConversionError, ValueError, TypeError) as e:
            raise TensorError(str(e)) from None

    def to_proto(self) -> Any:
        from graphlsp.syntax.to_proto import tensor_to_proto

        return tensor_to_proto(self.type, self.data, self.name)


def attr_kind(a: t.Attribute | t.FuncAttr) -> str | None:
    """The attribute type a value has in the text (declared, or as onnx infers it)."""
    declared = a.declared
    if declared is not None:
        return declared.value
    v = a.value if isinstance(a, t.Attribute) else a.default
    return _value_kind(v)


def _value_kind(v: t.AttrValue | None) -> str | None:
    if isinstance(v, t.LiteralValue):
        return {"int": "int", "float": "float", "string": "string"}[v.literal.kind]
    if isinstance(v, t.ListValue):
        kinds = {_value_kind(x) for x in v.items}
        if not kinds:
            return None
        if kinds <= {"int"}:
            return "ints"
        if kinds <= {"int", "float"}:
            return "floats"
        if kinds <= {"string"}:
            return "strings"
        if kinds <= {"graph"}:
            return "graphs"
        if kinds <= {"tensor"}:
            return "tensors"
        return None
    if isinstance(v, t.TensorValue):
        return "tensor"
    if isinstance(v, t.GraphValue):
        return "graph"
    if isinstance(v, t.TypeValue):
        return "type_proto"
    if isinstance(v, t.RefValue):
        return "ref"
    return None


def attr_value(v: t.AttrValue | None, declared: str | None, name: str = "") -> Any:
    """An attribute value as a plain value, with onnx's typing rules (an int given for a float is a float)."""
    if v is None:
        return None
    if isinstance(v, t.LiteralValue):
        lit = v.literal
        if declared in ("float", "floats") and lit.kind == "int":
            return float(lit.text)  # not float(value): a 400-digit int is inf, not an OverflowError
        return lit.value
    if isinstance(v, t.ListValue):
        single = declared[:-1] if declared and declared.endswith("s") else None
        items = [attr_value(x, single, name) for x in v.items]
        numbers = all(isinstance(x, (int, float)) for x in items)  # a list with strings has no type (reported)
        if single is None and numbers and any(isinstance(x, float) for x in items):
            items = [float(x) for x in items]
        return items
    if isinstance(v, t.TensorValue):
        return LiteralTensor(v.type, v.data, v.name.value if v.name is not None else "")
    if isinstance(v, t.GraphValue):
        return name  # the graphs are the node's subgraphs of this attribute
    if isinstance(v, t.TypeValue):
        return type_spec(v.type)
    if isinstance(v, t.RefValue):
        return Ref(v.ref.value)
    return None


def attributes(sn: t.Node) -> dict[str, Attr]:
    out: dict[str, Attr] = {}
    for a in sn.attributes:
        kind = attr_kind(a)
        out[a.name.value] = Attr(a.name.value, kind, attr_value(a.value, kind, a.name.value), a)
    return out


def func_attrs(sig: t.FunctionSig) -> list[FuncAttr]:
    out = []
    for fa in sig.attributes:
        kind = attr_kind(fa)
        default = attr_value(fa.default, kind) if fa.has_default else None
        out.append(FuncAttr(fa.name.value, kind, default, fa.has_default))
    return out


_NAMES = re.compile(r'[A-Za-z_][A-Za-z0-9_]*|"(?:[^"\\]|\\.)*"')

# a read of a value produced at or after the reader: (node of the producer's graph that depends on it,
# the value, where the read is written)
_BackUse = tuple[Node, Value, Piece, t.Name]


def build_model(doc: SyntaxDocument) -> tuple[Model, list[Finding]]:
    """The model's IR and its structural findings (absolute offsets into `doc.text`, sorted by position)."""
    b = _Builder(doc)
    enabled = gc.isenabled()
    gc.disable()  # ~100k new objects next to the syntax tree's ~1M: the cyclic GC would rescan them all
    try:
        b.build()
        b.findings.sort(key=lambda f: (f.start, f.code))
    finally:
        if enabled:
            gc.enable()
    return b.model, b.findings


def _imports(entries: Sequence[t.HeaderEntry]) -> dict[str, int] | None:
    """opset_import of a header as domain -> version ("" for ai.onnx), or None when the header has none."""
    for e in entries:
        if e.key.value == "opset_import" and isinstance(e.value, list):
            out: dict[str, int] = {}
            for kv in e.value:
                if isinstance(kv.key.value, str) and isinstance(kv.value.value, int):
                    out.setdefault(ops.normalize_domain(kv.key.value), kv.value.value)
            return out
    return None


def _header_str(entries: Sequence[t.HeaderEntry], key: str) -> str:
    for e in entries:
        if e.key.value == key and isinstance(e.value, t.Literal) and isinstance(e.value.value, str):
            return e.value.value
    return ""


def _graph_values(attr: t.Attribute) -> list[t.GraphValue]:
    v = attr.value
    if isinstance(v, t.GraphValue):
        return [v]
    if isinstance(v, t.ListValue):
        return [x for x in v.items if isinstance(x, t.GraphValue)]
    return []


class _Scope:
    """What a graph being built needs from its surroundings."""

    __slots__ = ("imports", "imports_known", "complete", "hidden", "where")

    def __init__(self, imports: dict[str, int], imports_known: bool, complete: bool, hidden: set[str], where: str):
        self.imports = imports
        self.imports_known = imports_known  # False when the header did not parse: no opset findings
        self.complete = complete  # False when the signature did not parse: no undefined/unused findings
        self.hidden = hidden  # names written in statements that did not parse
        self.where = where  # "model" or "function": whose opset_import to name in messages


class _Builder:
    def __init__(self, doc: SyntaxDocument) -> None:
        self.doc = doc
        self.findings: list[Finding] = []
        self.model = Model({})
        self.back: dict[int, list[_BackUse]] = {}  # id(graph) -> its back uses
        self.unparsed_function = False
        self.suggesters: dict[int, Suggester] = {}  # id(graph) -> names visible there
        self.hints: dict[tuple[int, str], str | None] = {}

    # ---- findings
    def emit(self, code: str, message: str, piece: Piece | None, where: Span | None,
             related: list[tuple[str, int, int]] | None = None, kind: str = "", node: Node | None = None,
             severity: str = "") -> None:  # fmt: skip
        if (piece is not None and piece.failed) or where is None:
            return
        self.findings.append(Finding(code, message, where[0], where[1], severity, related or [], kind, node))

    # ---- model
    def build(self) -> None:
        doc = self.doc
        self.model.source = TextSource(doc)
        header = doc.header()
        header_failed = any(p.kind == "header" and (p.failed or p.value is None) for p in doc.pieces)
        entries: list[t.HeaderEntry] = header.value if header is not None else []
        model_imports = _imports(entries)
        self.model.opset_imports = model_imports or {}
        for e in entries:
            if e.key.value == "ir_version" and isinstance(e.value, t.Literal) and isinstance(e.value.value, int):
                self.model.ir_version = e.value.value
        hidden = self._hidden_names()
        blocks = doc.blocks()
        functions: list[tuple[Function, Block]] = []
        # a function whose signature did not parse may be the one a call names: no unknown-op in local domains
        self.unparsed_function = any(not b.is_graph and b.sig is None for b in blocks)
        for block in blocks:
            if block.is_graph or block.sig is None:
                continue
            sig: t.FunctionSig = block.sig.value
            own = _imports(sig.header)
            fn = Function(
                ops.normalize_domain(_header_str(sig.header, "domain")), sig.name.value,
                _header_str(sig.header, "overload"), own if own is not None else dict(self.model.opset_imports),
                func_attrs(sig), TextName(block.sig, sig.name),
            )  # fmt: skip
            first = self.model.functions.get(fn.key)
            if first is not None:
                first_span = first.name_span
                related = [(f"first definition of '{_qualified(fn)}'", *first_span)] if first_span else []
                self.emit(F.DUPLICATE_DEFINITION, f"function '{_qualified(fn)}' is defined twice", block.sig,
                          fn.name_span, related)  # fmt: skip
                continue
            self.model.functions[fn.key] = fn
            functions.append((fn, block))
        main = next((b for b in blocks if b.is_graph), None)
        if main is None and not any(p.problems or p.failed for p in doc.pieces):
            # a header alone (or functions alone) parses, but a model is its main graph: onnx's parser says so too
            head = next((p for p in doc.pieces if p.kind == "header"), None)
            end = head.abs_end if head is not None else len(doc.text.rstrip())
            self.findings.append(Finding("GL101", "expected the model's main graph after the header, e.g. "
                                         "`main (float[N] x) => (float[N] y) { y = Relu(x) }`", end, end))  # fmt: skip
        if main is not None:
            sig_piece = main.sig
            gsig: t.GraphSig | None = sig_piece.value if sig_piece is not None else None
            known = not header_failed
            if not model_imports and known and gsig is not None and sig_piece is not None and not sig_piece.failed:
                self.emit(F.MISSING_OPSET_IMPORT, "the model imports no opset: add a header such as "
                          f"`<ir_version: 10, opset_import: [\"\" : {SUGGESTED_OPSET}]>`",
                          sig_piece, span(sig_piece, gsig.name))  # fmt: skip
            known = known and bool(model_imports)
            scope = _Scope(self.model.opset_imports, known, gsig is not None, hidden.get(main.index, set()), "model")
            self.model.graph = self.graph(
                gsig.name.value if gsig else "", "model", sig_piece, gsig, [(p.value, p) for p in main.nodes], scope
            )
        for fn, block in functions:
            assert block.sig is not None
            fsig: t.FunctionSig = block.sig.value
            own_known = _imports(fsig.header) is not None or (not header_failed and bool(model_imports))
            scope = _Scope(fn.opset_imports, own_known, True, hidden.get(block.index, set()), "function")
            fn.body = self.graph(fn.name, "function", block.sig, fsig, [(p.value, p) for p in block.nodes], scope)

    def _hidden_names(self) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        text = self.doc.text
        for p in self.doc.pieces:
            if p.value is None and p.kind in ("node", "error"):
                names = out.setdefault(p.block, set())
                for m in _NAMES.findall(text, p.abs_start, p.abs_end):
                    names.add(m[1:-1] if m.startswith('"') else m)
        return out

    # ---- one graph
    def graph(self, name: str, kind: str, piece: Piece | None, sig: t.GraphSig | t.FunctionSig | None,
              items: list[tuple[t.Node, Piece]], scope: _Scope, parent: Graph | None = None,
              owner: Node | None = None, attribute: str | None = None) -> Graph:  # fmt: skip
        g = Graph(name, kind, TextGraph(piece, sig) if piece is not None and sig is not None else None, parent,
                  owner, attribute)  # fmt: skip
        self.back[id(g)] = []
        if sig is not None and piece is not None:
            self._declare(g, sig, piece)
        self._define(g, items, scope)
        self._bind(g, scope)
        if sig is not None and piece is not None:
            self._outputs(g, sig, piece, scope)
            for vname, info in g.value_infos.items():
                v = g.values.get(vname)
                if v is not None and v.type is None:
                    v.type = info.type
        if self.back[id(g)]:
            self._order_findings(g, self.back[id(g)])
        if scope.complete:
            self._unused(g, scope)
        if kind == "model" and sig is not None and piece is not None:
            self._initializer_findings(g, sig, piece)
        del self.back[id(g)]
        return g

    def _declare(self, g: Graph, sig: t.GraphSig | t.FunctionSig, piece: Piece) -> None:
        values = g.values
        what = "function input" if g.kind == "function" else "graph input"
        for vi in sig.inputs:
            nm = vi.name.value
            v = Value(nm, g, "input", origin=TextName(piece, vi.name), type=type_spec(vi.type),
                      is_initializer=vi.has_init)  # fmt: skip
            if vi.has_init and vi.type is not None:
                v.tensor = LiteralTensor(vi.type, vi.init, nm)
            g.inputs.append(v)
            first = values.get(nm)
            if first is not None:
                v.duplicate_of = first
                self.emit(F.DUPLICATE_DEFINITION, f"{what} '{nm}' is declared twice", piece, span(piece, vi.name),
                          _first(first))  # fmt: skip
                continue
            values[nm] = v
            if vi.has_init:
                g.initializers[nm] = v
        for vi in sig.value_infos:
            nm = vi.name.value
            if not vi.has_init:
                g.value_infos.setdefault(nm, ValueInfo(nm, type_spec(vi.type), TextName(piece, vi.name)))
                continue
            first = values.get(nm)
            tensor = LiteralTensor(vi.type, vi.init, nm) if vi.type is not None else None
            if first is not None and first.kind == "input" and nm not in g.initializers:
                first.is_initializer = True  # an initializer may share its name with an input (a default)
                g.initializers[nm] = first
                first.tensor = tensor  # IR < 4: the input's value
                if first.type is None:
                    first.type = type_spec(vi.type)
            elif first is not None:
                self.emit(F.DUPLICATE_DEFINITION, f"initializer '{nm}' is defined twice", piece,
                          span(piece, vi.name), _first(first))  # fmt: skip
            else:
                v = Value(nm, g, "initializer", origin=TextName(piece, vi.name), type=type_spec(vi.type),
                          is_initializer=True, tensor=tensor)  # fmt: skip
                values[nm] = g.initializers[nm] = v

    def _define(self, g: Graph, items: list[tuple[t.Node, Piece]], scope: _Scope) -> None:
        values = g.values
        parent = g.parent
        labels: dict[str, Node] = {}
        for i, (sn, piece) in enumerate(items):
            op = sn.op
            label = sn.label.value if sn.label is not None else ("" if sn.has_label else None)
            node = Node(g, i, TextNode(piece, sn), ops.normalize_domain(op.domain), op.op_type, op.overload, label,
                        attributes(sn))  # fmt: skip
            g.nodes.append(node)
            self._resolve(node, scope)
            if sn.label is not None and sn.label.value:
                first_label = labels.get(sn.label.value)
                if first_label is None:
                    labels[sn.label.value] = node
                else:
                    first_span = first_label.label_span
                    assert first_span is not None
                    self.emit(F.DUPLICATE_NODE_LABEL, f"node label '{sn.label.value}' is already used by another "
                              "node of this graph", piece, span(piece, sn.label),
                              [(f"first node labelled '{sn.label.value}'", *first_span)], node=node)  # fmt: skip
            outs = node.outputs
            for j, out in enumerate(sn.outputs):
                if out is None or not out.value:
                    outs.append(None)
                    continue
                nm = out.value
                v = Value(nm, g, "node", node, j, TextName(piece, out))
                outs.append(v)
                first = values.get(nm)
                if first is None and parent is not None:
                    first = g.outer_defined(nm)
                if first is None:
                    values[nm] = v
                    continue
                v.duplicate_of = first
                where = "" if first.graph is g else " in an enclosing graph"
                self.emit(F.DUPLICATE_DEFINITION, f"'{nm}' is already defined{where}: an ONNX graph defines each "
                          "value once (SSA)", piece, span(piece, out), _first(first), node=node)  # fmt: skip

    def _resolve(self, node: Node, scope: _Scope) -> None:
        issue = resolve_op(node, scope.imports, self.model.functions, not self.unparsed_function, scope.where)
        if issue is not None and scope.imports_known:
            code, message, where = issue
            origin = node.origin
            assert isinstance(origin, TextNode)
            self.emit(code, message, origin.piece, where, node=node)

    def _bind(self, g: Graph, scope: _Scope) -> None:
        values = g.values
        back = self.back[id(g)]
        for node in g.nodes:
            origin = node.origin
            assert isinstance(origin, TextNode)
            sn = origin.syntax
            ins = node.inputs
            piece = origin.piece
            for j, el in enumerate(sn.inputs):
                if el is None or not el.value:
                    ins.append(None)
                    continue
                v = values.get(el.value)
                if v is not None:
                    p = v.producer
                    if p is not None and p.index >= node.index:
                        back.append((node, v, piece, el))
                else:
                    v = self._outer(g, el.value, piece, el)
                    if v is None:
                        v = self._undefined(g, el, piece, scope, node)
                v.consumers.append((node, j))
                ins.append(v)
            for attr in sn.attributes:
                for gv in _graph_values(attr):
                    sub = self.graph(gv.graph.sig.name.value, "subgraph", piece, gv.graph.sig,
                                     [(n, piece) for n in gv.graph.nodes], scope, g, node, attr.name.value)  # fmt: skip
                    node.subgraphs.setdefault(attr.name.value, []).append(sub)

    def _outer(self, g: Graph, name: str, piece: Piece, el: t.Name) -> Value | None:
        """Bind a name to an enclosing graph's value; record it on the subgraph owners and check its order."""
        child, anc = g, g.parent
        while anc is not None:
            v = anc.values.get(name)
            if v is not None:
                c = g
                while c is not anc:
                    assert c.owner is not None
                    c.owner.implicit.setdefault(name, v)
                    c = c.parent  # type: ignore[assignment]
                holder = child.owner
                assert holder is not None
                if v.producer is not None and v.producer.index >= holder.index:
                    self.back[id(anc)].append((holder, v, piece, el))
                return v
            child, anc = anc, anc.parent
        return None

    def _undefined(self, g: Graph, el: t.Name, piece: Piece, scope: _Scope, node: Node) -> Value:
        v = g.undefined.get(el.value)
        if v is None:
            v = g.undefined[el.value] = Value(el.value, g, "undefined")
        if scope.complete and el.value not in scope.hidden:
            if g.kind == "function":
                why = "no node or function input produces it (a function body sees only its inputs)"
            elif g.kind == "subgraph":
                why = "no node, graph input or initializer of this graph or an enclosing graph produces it"
            else:
                why = "no node, graph input or initializer produces it"
            hint = self._suggest(g, el.value)
            msg = f"'{el.value}' is not defined: {why}" + (f"; did you mean '{hint}'?" if hint else "")
            self.emit(F.UNDEFINED_VALUE, msg, piece, span(piece, el), node=node)
        return v

    def _suggest(self, g: Graph, name: str) -> str | None:
        """A defined name close to `name` (for "did you mean"), cached per graph and name within this build."""
        key = (id(g), name)
        if key not in self.hints:
            finder = self.suggesters.get(id(g))
            if finder is None:
                finder = self.suggesters[id(g)] = Suggester(_visible_names(g))
            self.hints[key] = finder.closest(name)
        return self.hints[key]

    def _outputs(self, g: Graph, sig: t.GraphSig | t.FunctionSig, piece: Piece, scope: _Scope) -> None:
        for vi in sig.outputs:
            nm = vi.name.value
            g.output_infos.append(ValueInfo(nm, type_spec(vi.type), TextName(piece, vi.name)))
            v = g.values.get(nm)
            if v is None and g.parent is not None:
                v = self._outer(g, nm, piece, vi.name)
            if v is None:
                v = g.undefined.get(nm) or Value(nm, g, "undefined", type=type_spec(vi.type))
                if scope.complete and nm not in scope.hidden:
                    what = "function output" if g.kind == "function" else "graph output"
                    by = "no node or function input" if g.kind == "function" else "no node, graph input or initializer"
                    self.emit(F.OUTPUT_NEVER_PRODUCED, f"{what} '{nm}' is never produced: {by} defines it",
                              piece, span(piece, vi.name))  # fmt: skip
            elif v.graph is g and v.type is None:
                v.type = type_spec(vi.type)
            v.graph_outputs.append(g)
            g.outputs.append(v)

    def _unused(self, g: Graph, scope: _Scope) -> None:
        hidden = scope.hidden
        for node in g.nodes:
            for v in node.outputs:
                if v is None or v.consumers or v.graph_outputs or v.duplicate_of is not None or v.name in hidden:
                    continue
                what = "function output" if g.kind == "function" else "graph output"
                self.emit(F.UNUSED_VALUE, f"'{v.name}' is never used: no node reads it and it is not a {what}",
                          node.origin.anchor, v.span or node.span, node=node)  # fmt: skip

    def _initializer_findings(self, g: Graph, sig: t.GraphSig | t.FunctionSig, piece: Piece) -> None:
        """External data that may not be opened, and initializers nothing reads (GL107, GL210)."""
        if not isinstance(sig, t.GraphSig):
            return
        for vi in [*sig.inputs, *sig.value_infos]:
            if not vi.has_init:
                continue
            ext = vi.init.external if vi.init is not None else None
            if ext is not None:
                location = next((str(kv.value.value) for kv in ext if kv.key.value == "location"), "")
                problem = location_problem(location)
                if problem:
                    self.emit(F.EXTERNAL_DATA, problem, piece, span(piece, vi.init))  # type: ignore[arg-type]
            v = g.values.get(vi.name.value)
            if v is not None and v.kind == "initializer" and not v.is_used and v.duplicate_of is None:
                self.emit(F.UNUSED_INITIALIZER, f"initializer '{v.name}' is never used: onnxruntime removes it when "
                          "it loads the model", piece, span(piece, vi.name))  # fmt: skip

    def _order_findings(self, g: Graph, back: list[_BackUse]) -> None:
        comp = g.components()
        for holder, v, piece, el in back:
            assert v.span is not None
            problem = order_problem(g, holder, v, comp)
            if not problem.cycle:
                defined = [(f"'{v.name}' is defined here", *v.span)]
                self.emit(F.USE_BEFORE_DEFINITION, problem.message, piece, span(piece, el), defined, node=holder,
                          severity=problem.severity)  # fmt: skip
                continue
            related = []
            for n in problem.cycle:
                out = next((o for o in n.outputs if o is not None and o.span is not None), None)
                if out is not None and out.span is not None:
                    related.append((f"'{out.name}' is produced here, on the cycle", *out.span))
            self.emit(F.USE_BEFORE_DEFINITION, problem.message, piece, span(piece, el), related, kind=F.CYCLE,
                      node=holder)  # fmt: skip


def _qualified(fn: Function) -> str:
    name = f"{fn.domain}.{fn.name}" if fn.domain else fn.name
    return f"{name}:{fn.overload}" if fn.overload else name


def _first(v: Value) -> list[tuple[str, int, int]]:
    s = v.span
    return [(f"first definition of '{v.name}'", *s)] if s is not None else []


def _visible_names(g: Graph | None) -> list[str]:
    names: list[str] = []
    while g is not None:
        names.extend(g.values)
        g = g.parent
    return names
