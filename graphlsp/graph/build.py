"""Build the core graph (`core.py`) from a SyntaxDocument and report structural findings (`findings.py`).

One pass per graph defines every value (inputs, initializers, node outputs in file order), a second binds each
node input by name (this graph first, then the enclosing graphs) and builds the node's subgraphs; then graph
outputs, unused values and order (use before definition, cycles) are checked. Ops resolve to a model-local
function by (domain, name, overload) first, then to onnx's schema at the imported opset version.

Statements with a syntax error still define and read values, but get no structural findings of their own (the
syntax error says what is wrong), and names that appear in statements that did not parse at all are not
reported as undefined or unused.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence

from graphlsp.graph import findings as F
from graphlsp.graph import ops
from graphlsp.graph.core import Function, Graph, Model, Node, Span, Value, span
from graphlsp.graph.findings import Finding
from graphlsp.graph.order import data_path, strongly_connected
from graphlsp.graph.resolve import SUGGESTED_OPSET, resolve_op
from graphlsp.graph.suggest import Suggester
from graphlsp.syntax import tree as t
from graphlsp.syntax.document import Block, Piece, SyntaxDocument

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
    def emit(self, code: str, message: str, piece: Piece | None, where: Span,
             related: list[tuple[str, int, int]] | None = None, kind: str = "") -> None:  # fmt: skip
        if piece is not None and piece.failed:
            return
        self.findings.append(Finding(code, message, where[0], where[1], related=related or [], kind=kind))

    # ---- model
    def build(self) -> None:
        doc = self.doc
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
                sig.attributes, block.sig, sig,
            )  # fmt: skip
            first = self.model.functions.get(fn.key)
            if first is not None:
                self.emit(F.DUPLICATE_DEFINITION, f"function '{_qualified(fn)}' is defined twice", block.sig,
                          fn.name_span, [(f"first definition of '{_qualified(fn)}'", *first.name_span)])  # fmt: skip
                continue
            self.model.functions[fn.key] = fn
            functions.append((fn, block))
        main = next((b for b in blocks if b.is_graph), None)
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
            own_known = _imports(fn.syntax.header) is not None or (not header_failed and bool(model_imports))
            scope = _Scope(fn.opset_imports, own_known, True, hidden.get(block.index, set()), "function")
            fn.body = self.graph(fn.name, "function", fn.piece, fn.syntax, [(p.value, p) for p in block.nodes], scope)

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
        g = Graph(name, kind, piece, sig, parent, owner, attribute)
        self.back[id(g)] = []
        if sig is not None and piece is not None:
            self._declare(g, sig, piece)
        self._define(g, items, scope)
        self._bind(g, scope)
        if sig is not None and piece is not None:
            self._outputs(g, sig, piece, scope)
            for vname, vi in g.value_infos.items():
                v = g.values.get(vname)
                if v is not None and v.type is None:
                    v.type = vi.type
        if self.back[id(g)]:
            self._order_findings(g, self.back[id(g)])
        if scope.complete:
            self._unused(g, scope)
        del self.back[id(g)]
        return g

    def _declare(self, g: Graph, sig: t.GraphSig | t.FunctionSig, piece: Piece) -> None:
        values = g.values
        what = "function input" if g.kind == "function" else "graph input"
        for vi in sig.inputs:
            nm = vi.name.value
            v = Value(nm, g, "input", type=vi.type, piece=piece, name_el=vi.name, is_initializer=vi.has_init)
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
                g.value_infos.setdefault(nm, vi)
                continue
            first = values.get(nm)
            if first is not None and first.kind == "input" and nm not in g.initializers:
                first.is_initializer = True  # an initializer may share its name with an input (a default)
                g.initializers[nm] = first
                if first.type is None:
                    first.type = vi.type
            elif first is not None:
                self.emit(F.DUPLICATE_DEFINITION, f"initializer '{nm}' is defined twice", piece,
                          span(piece, vi.name), _first(first))  # fmt: skip
            else:
                v = Value(nm, g, "initializer", type=vi.type, piece=piece, name_el=vi.name, is_initializer=True)
                values[nm] = g.initializers[nm] = v

    def _define(self, g: Graph, items: list[tuple[t.Node, Piece]], scope: _Scope) -> None:
        values = g.values
        parent = g.parent
        labels: dict[str, Node] = {}
        for i, (sn, piece) in enumerate(items):
            op = sn.op
            node = Node(g, i, sn, piece, ops.normalize_domain(op.domain), op.op_type, op.overload)
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
                              [(f"first node labelled '{sn.label.value}'", *first_span)])  # fmt: skip
            outs = node.outputs
            for j, out in enumerate(sn.outputs):
                if out is None or not out.value:
                    outs.append(None)
                    continue
                nm = out.value
                v = Value(nm, g, "node", node, j, piece, out)
                outs.append(v)
                first = values.get(nm)
                if first is None and parent is not None:
                    first = _visible(g, nm)
                if first is None:
                    values[nm] = v
                    continue
                v.duplicate_of = first
                where = "" if first.graph is g else " in an enclosing graph"
                self.emit(F.DUPLICATE_DEFINITION, f"'{nm}' is already defined{where}: an ONNX graph defines each "
                          "value once (SSA)", piece, span(piece, out), _first(first))  # fmt: skip

    def _resolve(self, node: Node, scope: _Scope) -> None:
        issue = resolve_op(node, scope.imports, self.model.functions, not self.unparsed_function, scope.where)
        if issue is not None and scope.imports_known:
            code, message, where = issue
            self.emit(code, message, node.piece, where)

    def _bind(self, g: Graph, scope: _Scope) -> None:
        values = g.values
        back = self.back[id(g)]
        for node in g.nodes:
            sn = node.syntax
            ins = node.inputs
            piece = node.piece
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
                        v = self._undefined(g, el, piece, scope)
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

    def _undefined(self, g: Graph, el: t.Name, piece: Piece, scope: _Scope) -> Value:
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
            self.emit(F.UNDEFINED_VALUE, msg, piece, span(piece, el))
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
            v = g.values.get(nm)
            if v is None and g.parent is not None:
                v = self._outer(g, nm, piece, vi.name)
            if v is None:
                v = g.undefined.get(nm) or Value(nm, g, "undefined", type=vi.type)
                if scope.complete and nm not in scope.hidden:
                    what = "function output" if g.kind == "function" else "graph output"
                    by = "no node or function input" if g.kind == "function" else "no node, graph input or initializer"
                    self.emit(F.OUTPUT_NEVER_PRODUCED, f"{what} '{nm}' is never produced: {by} defines it",
                              piece, span(piece, vi.name))  # fmt: skip
            elif v.graph is g and v.type is None:
                v.type = vi.type
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
                          node.piece, v.span or node.span)  # fmt: skip

    def _order_findings(self, g: Graph, back: list[_BackUse]) -> None:
        comp = strongly_connected(g)
        for holder, v, piece, el in back:
            producer = v.producer
            assert producer is not None and v.span is not None
            if producer is holder or comp[producer.index] == comp[holder.index]:
                path = data_path(g, holder, producer) or [holder]
                chain = [_link(a, b) for a, b in zip(path, path[1:], strict=False)] + [v.name]
                if producer is holder:
                    msg = f"cycle: '{v.name}' is an output of the node that reads it"
                else:
                    msg = f"cycle: '{v.name}' is computed from this node's own output (" + " -> ".join(chain) + ")"
                related = []
                for n in path:
                    out = next((o for o in n.outputs if o is not None and o.span is not None), None)
                    if out is not None and out.span is not None:
                        related.append((f"'{out.name}' is produced here, on the cycle", *out.span))
                self.emit(F.USE_BEFORE_DEFINITION, msg, piece, span(piece, el), related, kind=F.CYCLE)
            else:
                self.emit(F.USE_BEFORE_DEFINITION, f"'{v.name}' is used before it is defined: ONNX needs nodes in "
                          f"topological order; move the node that reads '{v.name}' after the one that produces it",
                          piece, span(piece, el), [(f"'{v.name}' is defined here", *v.span)])  # fmt: skip


def _qualified(fn: Function) -> str:
    name = f"{fn.domain}.{fn.name}" if fn.domain else fn.name
    return f"{name}:{fn.overload}" if fn.overload else name


def _first(v: Value) -> list[tuple[str, int, int]]:
    s = v.span
    return [(f"first definition of '{v.name}'", *s)] if s is not None else []


def _link(a: Node, b: Node) -> str:
    """The name of a value `a` produces that `b` (or a subgraph of it) reads."""
    for v in a.outputs:
        if v is not None and any(b.graph.top_node(c) is b for c, _ in v.consumers):
            return v.name
    return "?"


def _visible(g: Graph, name: str) -> Value | None:
    """A value of an enclosing graph that is defined before the node holding `g` (as onnx's checker sees it)."""
    while g.parent is not None and g.owner is not None:
        holder = g.owner
        g = g.parent
        v = g.values.get(name)
        if v is not None and (v.producer is None or v.producer.index < holder.index):
            return v
    return None


def _visible_names(g: Graph | None) -> list[str]:
    names: list[str] = []
    while g is not None:
        names.extend(g.values)
        g = g.parent
    return names
