"""Answers about a position in a document: what is there, its hover text, where it is defined and used.

Pure analysis, no LSP types: the language server translates positions and calls these.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphlsp.analysis import Analysis
from graphlsp.cost import report as cost_report
from graphlsp.graph.core import Graph, Node, Value
from graphlsp.infer.contracts import input_requirements
from graphlsp.infer.types import ELEM_BY_NAME, type_str
from graphlsp.oplib.model import OpDecl
from graphlsp.ops.signature import signature
from graphlsp.runner.fold import CONSTANT
from graphlsp.runner.tensors import preview
from graphlsp.syntax import tree as t
from graphlsp.syntax.document import Piece
from graphlsp.syntax.lower import text_graph, text_node
from graphlsp.syntax.positions import line_start_at

log = logging.getLogger("graphlsp.query")

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
                tn = text_node(n)
                if tn is not None:
                    self.by_syntax[id(tn.syntax)] = n

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
            tg = text_graph(g)
            if tg is not None and tg.sig is sig:
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


def _node_of(a: Analysis, sn: t.Node) -> Node | None:
    for g in a.model.graphs():
        for n in g.nodes:
            tn = text_node(n)
            if tn is not None and tn.syntax is sn:
                return n
    return None


def hit_at(a: Analysis, offset: int) -> Hit | None:
    finder = a.cache.get("finder")
    if not isinstance(finder, _Finder):
        finder = a.cache["finder"] = _Finder(a)
    return finder.at(offset)


def _line(a: Analysis, span: Span | None) -> str:
    return "" if span is None else f"line {a.doc.lines.line_of(span[0]) + 1}"


def _value_hover(a: Analysis, value: Value) -> str:
    lines = [f"**{value.name}**: `{type_str(a.refiner.type_of(value))}`", ""]
    if value.producer is not None:
        lines.append(f"produced by `{value.producer.op_type}` ({_line(a, value.producer.op_span)})")
    elif value.kind in ("input", "initializer"):
        lines.append(f"graph {'initializer' if value.is_initializer else 'input'} ({_line(a, value.span)})")
        if value.kind == "input" and value.graph is a.model.graph:
            lines += _contract_lines(a, value)
    consumers = [n for n, _ in value.consumers]
    if consumers:
        shown = ", ".join(f"`{n.op_type}` ({_line(a, n.op_span)})" for n in consumers[:6])
        more = f" and {len(consumers) - 6} more" if len(consumers) > 6 else ""
        lines.append(f"consumed by {shown}{more}")
    known = constant_of(a, value)
    x = a.refiner.values.get(value)
    if known is not None:
        lines.append(f"value: `{preview(known)}`")
    elif x is not None and x.sv is not None:
        lines.append(f"value: `[{', '.join('?' if v is None else str(v) for v in x.sv)}]`")
    return "\n\n".join(line for line in lines if line != "") if len(lines) > 2 else lines[0]


def _contract_lines(a: Analysis, value: Value) -> list[str]:
    """What the graph requires of the input's dims: `dim 2 (height): height % 32 must be 0 or 17-31 (Concat, line
    40)`; a dim no node constrains is `any`."""
    dims = value.type.dims if value.type is not None else None
    if not dims:
        return []
    found = [r for r in input_requirements(a.refiner) if r.input == value.name]
    out = []
    for i, dm in enumerate(dims):
        if not isinstance(dm, str):
            continue
        mine = [r for r in found if r.dim == i]
        if not mine:
            out.append(f"- dim {i} (`{dm}`): any size")
        for r in mine:
            also = "".join(f"; `{n.op_type}`, {_line(a, n.op_span)}" for n in r.also)
            out.append(f"- dim {i} (`{dm}`): {r.requirement} (`{r.node.op_type}`, {_line(a, r.node.op_span)}{also})")
    return ["sizes the graph takes:\n" + "\n".join(out)] if any("any size" not in x for x in out) else []


def op_hover(node: Node) -> str:
    """The hover on a node's op: its signature, attributes and documentation (also the graph page's)."""
    sig = signature(node.op_type, node.version, node.domain) if node.version is not None else None
    where = node.domain or "ai.onnx"
    if node.function is not None:
        return f"**{node.op_type}**: model-local function ({where})"
    if sig is None:
        return f"**{node.op_type}** ({where}): unknown op"
    if isinstance(sig.schema, OpDecl):  # declared in an op library: its declaration and documentation
        from graphlsp.oplib.query import declaration_markdown

        return declaration_markdown(sig.schema, node.version)
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
                    if dm == name:
                        users.append(f"`{v.name}` dim {i}")
    where = f"from {', '.join(users)}" if users else "a symbolic dimension"
    text = f"**{name}**: {where}"
    from graphlsp.infer.dims import symbol

    sym = symbol(name)
    rep = a.refiner.unifier.find(sym)
    if rep is not sym:
        text += f"\n\nknown to equal `{rep}` (the shapes meeting in this graph say so)"
    return text


def hover(a: Analysis, offset: int) -> tuple[str, Span] | None:
    hit = hit_at(a, offset)
    if hit is None:
        return None
    if hit.kind == "value" and hit.value is not None:
        return _value_hover(a, hit.value), hit.span
    if hit.kind == "op" and hit.node is not None:
        return op_hover(hit.node), hit.span
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


def op_declaration(a: Analysis, offset: int) -> OpDecl | None:
    """The op library declaration of the op at an offset (a node of an op an `.onnxop` file declares), if any:
    `definition` for it is in another file."""
    hit = hit_at(a, offset)
    node = hit.node if hit is not None and hit.kind == "op" else None
    if node is None or node.function is not None or node.version is None:
        return None
    sig = signature(node.op_type, node.version, node.domain)
    return sig.schema if sig is not None and isinstance(sig.schema, OpDecl) else None


def references(a: Analysis, offset: int, include_definition: bool = True) -> list[Span]:
    hit = hit_at(a, offset)
    if hit is None or hit.kind != "value" or hit.value is None:
        return []
    value = hit.value
    spans: list[Span] = []
    if include_definition and value.span is not None:
        spans.append(value.span)
    for node, slot in value.consumers:
        s = node.input_span(slot) if slot >= 0 else None
        if s is not None:
            spans.append(s)
    return sorted(set(spans))


def document_symbols(a: Analysis) -> list[Symbol]:
    out = []
    for g in [a.model.graph, *[f.body for f in a.model.functions.values()]]:
        tg = text_graph(g) if g is not None else None
        if g is None or tg is None:
            continue
        o = tg.piece.origin
        name_el = tg.sig.name
        last = g.nodes[-1].span if g.nodes else None
        block_end = last[1] if last is not None else o + tg.sig.end
        sym = Symbol(g.name, "graph" if g.kind == "model" else "function", (o + tg.sig.start, block_end),
                     (o + name_el.start, o + name_el.end))  # fmt: skip
        for n in g.nodes:
            outs = ", ".join(v.name for v in n.outputs if v is not None)
            if n.span is not None and n.op_span is not None:
                sym.children.append(Symbol(n.label or outs or n.op_type, "node", n.span, n.op_span, n.op_type))
        out.append(sym)
    return out


# ---- inlay hints, folding, semantic tokens, rename, completion
@dataclass(slots=True)
class InlayHint:
    offset: int
    label: str


SHORT_CONSTANT = 8  # elements: constants this small are shown in full in inlay hints


def constant_of(a: Analysis, value: Value) -> np.ndarray | None:
    """The value's compile-time constant when inference or the constant folder knows it."""
    x = a.refiner.values.get(value)
    if x is not None and x.const is not None:
        return x.const
    fold = a.fold_plan().folds.get(value.producer) if value.producer is not None else None
    if fold is not None and fold.kind == CONSTANT:
        got = fold.values.get(value)
        return got if isinstance(got, np.ndarray) else None
    return None


def short_value(arr: np.ndarray) -> str:
    """`[0, 0, 2, 8]` or `0.5`: a small constant as the hint shows it."""
    items = [preview(np.asarray(x)).split(" ", 1)[1] for x in arr.reshape(-1)]
    return items[0] if arr.ndim == 0 else f"[{', '.join(items)}]"


def inlay_hints(a: Analysis, start: int = 0, end: int | None = None) -> list[InlayHint]:
    """The inferred type after each node output in [start, end): `: float[batch, 16]`."""
    end = len(a.doc.text) if end is None else end
    out = []
    for g in a.model.graphs():
        for n in g.nodes:
            for i, v in enumerate(n.outputs):
                span = n.output_span(i)
                if v is None or span is None or not start <= span[1] <= end:
                    continue
                ty = a.refiner.type_of(v)
                if ty is None:
                    continue
                label = f": {type_str(ty)}"
                known = constant_of(a, v) if n.op_type != "Constant" else None  # a Constant shows its value
                if known is not None and known.size <= SHORT_CONSTANT:
                    label += f" = {short_value(known)}"
                out.append(InlayHint(span[1], label))
    header = _graph_name_end(a)
    if header is not None and start <= header <= end:  # the model's totals after the graph's name (graphlsp/cost)
        try:
            out.append(InlayHint(header, cost_report.header_label(a)))
        except Exception:  # the types' hints stand without it
            log.exception("the cost hint failed")
    out.sort(key=lambda h: h.offset)
    return out


def cost_lines(a: Analysis, offset: int) -> str:
    """What the hover adds of the cost (graphlsp/cost): on a node's op its FLOPs and bytes, on a value its size
    and, on a graph output, what computing it costs. Apart from `hover`: the graph page shows that per op."""
    hit = hit_at(a, offset)
    try:
        if hit is not None and hit.kind == "op" and hit.node is not None:
            return cost_report.node_markdown(a, hit.node)
        if hit is not None and hit.kind == "value" and hit.value is not None:
            return cost_report.value_markdown(a, hit.value)
    except Exception:  # a bug of the cost's must not take the hover with it
        log.exception("the cost lines of a hover failed")
    return ""


def _graph_name_end(a: Analysis) -> int | None:
    g = a.model.graph
    tg = text_graph(g) if g is not None else None
    return None if tg is None else tg.piece.origin + tg.sig.name.end


def folding_ranges(a: Analysis) -> list[tuple[int, int]]:
    """Line ranges (0-based, inclusive) that fold: the header, graph and function bodies, multi-line nodes."""
    lines = a.doc.lines
    out = []
    blocks = a.doc.blocks()
    header = a.doc.header()
    if header is not None:
        out.append((lines.line_of(header.abs_start), lines.line_of(header.abs_end)))
    for b in blocks:
        if b.sig is not None:
            last = b.end.abs_end if b.end is not None else len(a.doc.text)
            out.append((lines.line_of(b.sig.abs_start), lines.line_of(last)))
        for p in b.nodes:
            first, last_line = lines.line_of(p.abs_start), lines.line_of(p.abs_end)
            if last_line > first:
                out.append((first, last_line))
    return [(s, e) for s, e in out if e > s]


TOKEN_TYPES = ["function", "variable", "type", "typeParameter", "property", "comment", "number", "string", "keyword"]


def semantic_tokens(a: Analysis) -> list[tuple[int, int, str]]:
    """(start, end, token type) for ops, values, types, dims, attributes and comments, sorted by position."""
    import re

    toks: list[tuple[int, int, str]] = []

    def add(o: int, el: Any, kind: str) -> None:
        toks.append((o + el.start, o + el.end, kind))

    def typeref(o: int, ty: t.TypeRef | None) -> None:
        if ty is None:
            return
        if ty.elem:
            toks.append((o + ty.elem_start, o + ty.elem_start + len(ty.elem), "type"))
        for dm in ty.dims or []:
            add(o, dm, "typeParameter" if dm.kind == "param" else "number")
        for arg in ty.args:
            typeref(o, arg)

    def vis(o: int, items: list[t.ValueInfo]) -> None:
        for vi in items:
            typeref(o, vi.type)
            add(o, vi.name, "variable")

    def node(o: int, n: t.Node) -> None:
        for name in [*n.outputs, *n.inputs]:
            if name is not None:
                add(o, name, "variable")
        toks.append((o + n.op.op_start, o + n.op.op_start + len(n.op.op_type), "function"))
        for attr in n.attributes:
            add(o, attr.name, "property")
            v = attr.value
            items = v.items if isinstance(v, t.ListValue) else [v]
            for item in items:
                if isinstance(item, t.GraphValue):
                    add(o, item.graph.sig.name, "function")
                    vis(o, item.graph.sig.inputs + item.graph.sig.outputs)
                    for sub in item.graph.nodes:
                        node(o, sub)
                elif isinstance(item, (t.TensorValue, t.TypeValue)):
                    typeref(o, item.type)

    for p in a.doc.pieces:
        o = p.origin
        if isinstance(p.value, t.Node):
            node(o, p.value)
        elif isinstance(p.value, (t.GraphSig, t.FunctionSig)):
            add(o, p.value.name, "function")
            vis(o, p.value.inputs + p.value.outputs + p.value.value_infos)
    text = a.doc.text
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|#[^\r\n]*', text):
        if m.group().startswith("#"):
            toks.append((m.start(), m.end(), "comment"))
    toks.sort()
    out: list[tuple[int, int, str]] = []
    for tok in toks:  # drop overlaps (a comment after a name, a name inside a type)
        if not out or tok[0] >= out[-1][1]:
            out.append(tok)
    return out


_PLAIN_NAME = __import__("re").compile(r"[A-Za-z_][A-Za-z0-9_]*")


def quote_name(name: str) -> str:
    if _PLAIN_NAME.fullmatch(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rename(a: Analysis, offset: int, new_name: str) -> list[tuple[int, int, str]] | str:
    """Edits renaming the value at offset everywhere; or a reason it cannot be renamed."""
    hit = hit_at(a, offset)
    if hit is None or hit.kind != "value" or hit.value is None:
        return "there is no value here to rename"
    value = hit.value
    if not new_name:
        return "the new name is empty"
    g: Graph | None = value.graph
    while g is not None:
        if new_name in g.values and g.values[new_name] is not value:
            return f"'{new_name}' is already a value in this graph"
        g = g.parent
    text = quote_name(new_name)
    spans = set(references(a, offset, include_definition=True))
    for graph in a.model.graphs():  # declared outputs and value infos name it too
        tg = text_graph(graph)
        if tg is None:
            continue
        sig = tg.sig
        o = tg.piece.origin
        for vi in [*sig.outputs, *(sig.value_infos if isinstance(sig, t.GraphSig) else [])]:
            if vi.name.value == value.name and graph.lookup(vi.name.value) is value:
                spans.add((o + vi.name.start, o + vi.name.end))
    return sorted((s, e, text) for s, e in spans)


DTYPES = sorted(ELEM_BY_NAME)


@dataclass(slots=True)
class Completion:
    label: str
    kind: str  # op, attribute, value, type
    detail: str = ""


def completions(a: Analysis, offset: int) -> list[Completion]:
    """What can be typed at offset: attribute names inside `<...>` of a node, op names after `=`, value names
    inside `(...)`, element types elsewhere."""
    import onnx.defs

    text = a.doc.text
    before = text[line_start_at(text, offset) : offset]
    piece = a.doc.piece_at(offset)
    node = None
    if piece is not None and isinstance(piece.value, t.Node):
        node = _node_of(a, piece.value)
    if before.count("<") > before.count(">") and node is not None and node.version is not None:
        sig = signature(node.op_type, node.version, node.domain)
        if sig is not None:
            return [Completion(s.name, "attribute", s.type_name) for s in sig.attrs.values()]
    if "=" in before and before.count("(") > before.count(")"):
        names = sorted(a.model.graph.values) if a.model.graph is not None else []
        return [Completion(n, "value", type_str(a.refiner.type_of(a.model.graph.values[n]))) for n in names]  # type: ignore[union-attr]
    if "=" in before and "(" not in before.split("=")[-1]:
        version = a.model.opset_imports.get("", 0)
        ops: dict[str, Completion] = {}
        for s in onnx.defs.get_all_schemas_with_history():
            if s.domain == "" and s.since_version <= version and not s.deprecated:
                ins = ", ".join(p.name for p in s.inputs)
                ops[s.name] = Completion(s.name, "op", f"({ins}) since {s.since_version}")
        return sorted(ops.values(), key=lambda c: c.label)
    return [Completion(d, "type") for d in DTYPES]


@dataclass(slots=True)
class SignatureHelp:
    label: str
    params: list[str]
    active: int
    doc: str


def signature_help(a: Analysis, offset: int) -> SignatureHelp | None:
    """Inside a node's `( ... )`: the op's inputs, with the one being typed active."""
    piece = a.doc.piece_at(offset)
    if piece is None or not isinstance(piece.value, t.Node):
        return None
    sn: t.Node = piece.value
    local = offset - piece.origin
    if not sn.inputs_start < local <= sn.end:
        return None
    node = _node_of(a, sn)
    if node is None or node.version is None:
        return None
    sig = signature(node.op_type, node.version, node.domain)
    if sig is None:
        return None
    mark = {"optional": "?", "variadic": "..."}
    params = [f"{p.name}: {p.type_str}{mark.get(p.option, '')}" for p in sig.inputs]
    outs = ", ".join(f"{p.name}: {p.type_str}" for p in sig.outputs)
    label = f"{node.op_type}({', '.join(params)}) -> ({outs})"
    active = a.doc.text.count(",", piece.origin + sn.inputs_start, offset)
    if params and sig.inputs[-1].option == "variadic":
        active = min(active, len(params) - 1)
    return SignatureHelp(label, params, active, sig.doc.strip().split("\n\n")[0].strip())
