"""Answers about a position in a document: what is there, its hover text, where it is defined and used.

Pure analysis, no LSP types: the language server translates positions and calls these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphlsp.analysis import Analysis
from graphlsp.graph.core import Graph, Node, Value
from graphlsp.infer.types import type_str
from graphlsp.ops.signature import signature
from graphlsp.syntax import tree as t
from graphlsp.syntax.document import Piece

Span = tuple[int, int]


@dataclass(slots=True)
class Hit:
    """What lies at an offset: kind is value, op, attribute or dim."""

    kind: str
    span: Span
    name: str
    value: Value | None = None
    node: Node | None = None
    attribute: t.Attribute | None = None


@dataclass(slots=True)
class Symbol:
    name: str
    kind: str  # graph, function, node
    span: Span
    selection: Span
    detail: str = ""
    children: list[Symbol] = field(default_factory=list)


def _inside(offset: int, start: int, end: int) -> bool:
    return start <= offset <= end


class _Finder:
    def __init__(self, a: Analysis) -> None:
        self.a = a
        self.by_syntax: dict[int, Node] = {}
        for g in a.model.graphs():
            for n in g.nodes:
                self.by_syntax[id(n.syntax)] = n

    def at(self, offset: int) -> Hit | None:
        piece = self.a.doc.piece_at(offset)
        if piece is None or piece.value is None:
            return None
        local = offset - piece.origin
        if isinstance(piece.value, t.Node):
            return self._node(piece, piece.value, local)
        if isinstance(piece.value, (t.GraphSig, t.FunctionSig)):
            return self._sig(piece, piece.value, local)
        return None

    def _span(self, piece: Piece, el: Any) -> Span:
        return piece.origin + el.start, piece.origin + el.end

    def _node(self, piece: Piece, sn: t.Node, local: int) -> Hit | None:
        node = self.by_syntax.get(id(sn))
        for i, name in enumerate(sn.outputs):
            if name is not None and _inside(local, name.start, name.end):
                value = node.outputs[i] if node is not None and i < len(node.outputs) else None
                return Hit("value", self._span(piece, name), name.value, value, node)
        for i, name in enumerate(sn.inputs):
            if name is not None and _inside(local, name.start, name.end):
                value = node.inputs[i] if node is not None and i < len(node.inputs) else None
                return Hit("value", self._span(piece, name), name.value, value, node)
        if _inside(local, sn.op.start, sn.op.end):
            return Hit("op", self._span(piece, sn.op), sn.op.op_type, None, node)
        for attr in sn.attributes:
            if _inside(local, attr.name.start, attr.name.end):
                return Hit("attribute", self._span(piece, attr.name), attr.name.value, None, node, attr)
            v = attr.value
            if isinstance(v, t.GraphValue) and _inside(local, v.start, v.end):
                return self._subgraph(piece, v.graph, local)
            if isinstance(v, t.ListValue):
                for item in v.items:
                    if isinstance(item, t.GraphValue) and _inside(local, item.start, item.end):
                        return self._subgraph(piece, item.graph, local)
        return None

    def _subgraph(self, piece: Piece, g: t.Graph, local: int) -> Hit | None:
        hit = self._sig(piece, g.sig, local)
        if hit is not None:
            return hit
        for sn in g.nodes:
            if _inside(local, sn.start, sn.end):
                return self._node(piece, sn, local)
        return None

    def _graph_of(self, sig: t.GraphSig | t.FunctionSig) -> Graph | None:
        for g in self.a.model.graphs():
            if g.syntax is sig:
                return g
        return None

    def _sig(self, piece: Piece, sig: t.GraphSig | t.FunctionSig, local: int) -> Hit | None:
        graph = self._graph_of(sig)
        vis = list(sig.inputs) + list(sig.outputs) + list(sig.value_infos)
        for vi in vis:
            if _inside(local, vi.name.start, vi.name.end):
                value = graph.lookup(vi.name.value) if graph is not None else None
                return Hit("value", self._span(piece, vi.name), vi.name.value, value)
            if vi.type is not None and vi.type.dims:
                for dm in vi.type.dims:
                    if dm.kind == "param" and _inside(local, dm.start, dm.end):
                        return Hit("dim", self._span(piece, dm), str(dm.value))
        return None


def hit_at(a: Analysis, offset: int) -> Hit | None:
    return _Finder(a).at(offset)


def _line(a: Analysis, span: Span | None) -> str:
    return "" if span is None else f"line {a.doc.lines.line_of(span[0]) + 1}"


def _value_hover(a: Analysis, value: Value) -> str:
    lines = [f"**{value.name}**: `{type_str(a.refiner.type_of(value))}`", ""]
    if value.producer is not None:
        lines.append(f"produced by `{value.producer.op_type}` ({_line(a, value.producer.op_span)})")
    elif value.kind in ("input", "initializer"):
        lines.append(f"graph {'initializer' if value.is_initializer else 'input'} ({_line(a, value.span)})")
    consumers = [n for n, _ in value.consumers]
    if consumers:
        shown = ", ".join(f"`{n.op_type}` ({_line(a, n.op_span)})" for n in consumers[:6])
        more = f" and {len(consumers) - 6} more" if len(consumers) > 6 else ""
        lines.append(f"consumed by {shown}{more}")
    x = a.refiner.values.get(value)
    if x is not None and x.const is not None and x.const.size <= 1024:
        flat = x.const.reshape(-1)[:8].tolist()
        lines.append(f"value: `{flat}{' ...' if x.const.size > 8 else ''}`")
    elif x is not None and x.sv is not None:
        lines.append(f"value: `[{', '.join('?' if v is None else str(v) for v in x.sv)}]`")
    return "\n\n".join(line for line in lines if line != "") if len(lines) > 2 else lines[0]


def _op_hover(node: Node) -> str:
    sig = signature(node.op_type, node.version, node.domain) if node.version is not None else None
    where = node.domain or "ai.onnx"
    if node.function is not None:
        return f"**{node.op_type}**: model-local function ({where})"
    if sig is None:
        return f"**{node.op_type}** ({where}): unknown op"
    out = [f"**{node.op_type}** ({where}, opset {node.version}; since version {sig.since_version})", ""]
    mark = {"optional": "?", "variadic": "..."}
    ins = ", ".join(f"{p.name}: {p.type_str}{mark.get(p.option, '')}" for p in sig.inputs)
    outs = ", ".join(f"{p.name}: {p.type_str}" for p in sig.outputs)
    out.append(f"`({ins}) -> ({outs})`")
    for name, allowed in sorted(sig.constraints.items()):
        out.append(f"- `{name}`: {', '.join(sorted(allowed))}")
    if sig.attrs:
        out.append("")
        for spec in sig.attrs.values():
            default = "required" if spec.required else f"default {spec.default!r}" if spec.default is not None else ""
            out.append(f"- `{spec.name}: {spec.type_name}` {default}".rstrip())
    doc = sig.doc.strip().split("\n\n")[0].strip()
    if doc:
        out += ["", doc]
    return "\n".join(out)


def _attr_hover(node: Node, attr: t.Attribute) -> str:
    sig = signature(node.op_type, node.version, node.domain) if node.version is not None else None
    spec = sig.attrs.get(attr.name.value) if sig is not None else None
    if spec is None:
        return f"**{attr.name.value}**: not an attribute of {node.op_type}"
    default = "required" if spec.required else f"default `{spec.default!r}`" if spec.default is not None else ""
    return f"**{spec.name}**: `{spec.type_name}` {default}\n\n{spec.doc.strip()}".strip()


def _dim_hover(a: Analysis, name: str) -> str:
    users = []
    g = a.model.graph
    if g is not None:
        for v in g.inputs:
            if v.type is not None and v.type.dims:
                for i, dm in enumerate(v.type.dims):
                    if dm.kind == "param" and dm.value == name:
                        users.append(f"`{v.name}` dim {i}")
    where = f"from {', '.join(users)}" if users else "a symbolic dimension"
    return f"**{name}**: {where}"


def hover(a: Analysis, offset: int) -> tuple[str, Span] | None:
    hit = hit_at(a, offset)
    if hit is None:
        return None
    if hit.kind == "value" and hit.value is not None:
        return _value_hover(a, hit.value), hit.span
    if hit.kind == "op" and hit.node is not None:
        return _op_hover(hit.node), hit.span
    if hit.kind == "attribute" and hit.node is not None and hit.attribute is not None:
        return _attr_hover(hit.node, hit.attribute), hit.span
    if hit.kind == "dim":
        return _dim_hover(a, hit.name), hit.span
    return None


def definition(a: Analysis, offset: int) -> Span | None:
    hit = hit_at(a, offset)
    if hit is None:
        return None
    if hit.kind == "value" and hit.value is not None:
        return hit.value.span
    if hit.kind == "op" and hit.node is not None and hit.node.function is not None:
        return hit.node.function.name_span
    return None


def references(a: Analysis, offset: int, include_definition: bool = True) -> list[Span]:
    hit = hit_at(a, offset)
    if hit is None or hit.kind != "value" or hit.value is None:
        return []
    value = hit.value
    spans: list[Span] = []
    if include_definition and value.span is not None:
        spans.append(value.span)
    for node, slot in value.consumers:
        s = node.input_span(slot) if slot >= 0 and slot < len(node.syntax.inputs) else None
        if s is not None:
            spans.append(s)
    return sorted(set(spans))


def document_symbols(a: Analysis) -> list[Symbol]:
    out = []
    for g in [a.model.graph, *[f.body for f in a.model.functions.values()]]:
        if g is None or g.piece is None or g.syntax is None:
            continue
        o = g.piece.origin
        name_el = g.syntax.name
        block_end = g.nodes[-1].span[1] if g.nodes else o + g.syntax.end
        sym = Symbol(g.name, "graph" if g.kind == "model" else "function", (o + g.syntax.start, block_end),
                     (o + name_el.start, o + name_el.end))  # fmt: skip
        for n in g.nodes:
            outs = ", ".join(v.name for v in n.outputs if v is not None)
            sym.children.append(Symbol(n.label or outs or n.op_type, "node", n.span, n.op_span, n.op_type))
        out.append(sym)
    return out
