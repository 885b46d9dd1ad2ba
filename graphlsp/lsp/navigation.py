"""Navigation: go to definition (to an op's declaration in an op library too), references, document highlight,
the document's outline (graphs, functions, nodes, and the subgraphs of If, Loop and Scan at any depth), workspace
symbols and folding ranges. An op library document is handed on to graphlsp/lsp/opdocs.py."""

from __future__ import annotations

import json
from typing import Any

from lsprotocol import types as lsp

from graphlsp import query
from graphlsp.analysis import Analysis
from graphlsp.graph.core import Node
from graphlsp.lsp import convert, opdocs
from graphlsp.lsp.protocol import RawJSON
from graphlsp.lsp.workspace import DocState, GraphLspServer, analysed_at, cached, guard, or_library
from graphlsp.view import BinaryView


@guard(None)
@or_library(opdocs.definition)
async def definition(ls: GraphLspServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    state, a, enc, at = await analysed_at(ls, params)
    python = _python_definition(ls, state, a, at)
    if python is not None:
        return python
    span = query.definition(a, at)
    if span is None:  # an op an op library declares: its .onnxop file
        return opdocs.declaration_location(ls, a, at)
    return lsp.Location(uri=state.uri, range=convert.span_range(state.lines, *span, enc))


def _python_definition(ls: GraphLspServer, state: DocState, a: Analysis, at: int) -> lsp.Location | None:
    """On the op of a binary model's node: the Python line that made it (graphlsp.provenance), when the file is on
    this machine."""
    view = state.view
    hit = query.hit_at(a, at) if view is not None and view.origins else None
    if view is None or hit is None or hit.kind != "op" or hit.node is None:
        return None
    origin = view.origin_of(hit.node)
    if origin is None:
        return None
    from pathlib import Path

    from graphlsp.provenance.describe import definition as python_definition

    found = python_definition(hit.node, ls.sources_for(state.uri), origin)
    if found is None:
        return None
    line = found[1] - 1
    return lsp.Location(uri=Path(found[0]).as_uri(), range=lsp.Range(start=lsp.Position(line=line, character=0),
                                                                     end=lsp.Position(line=line, character=0)))


@guard([])
async def references(ls: GraphLspServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    state, a, enc, at = await analysed_at(ls, params)
    spans = query.references(a, at, params.context.include_declaration)
    return [lsp.Location(uri=state.uri, range=convert.span_range(state.lines, s, e, enc)) for s, e in spans]


@guard([])
async def highlight(ls: GraphLspServer, params: lsp.DocumentHighlightParams) -> list[lsp.DocumentHighlight]:
    state, a, enc, at = await analysed_at(ls, params)
    return [
        lsp.DocumentHighlight(range=convert.span_range(state.lines, s, e, enc))
        for s, e in query.references(a, at, True)
    ]


_SYMBOL_KIND = {"graph": lsp.SymbolKind.Module, "function": lsp.SymbolKind.Function, "node": lsp.SymbolKind.Event,
                "subgraph": lsp.SymbolKind.Namespace, "module": lsp.SymbolKind.Class}  # fmt: skip


def _node_symbol(n: Node) -> query.Symbol | None:
    """A node as the outline shows it (query.document_symbols' way), its subgraphs and their nodes below it."""
    if n.span is None or n.op_span is None:
        return None
    outs = ", ".join(v.name for v in n.outputs if v is not None)
    sym = query.Symbol(n.label or outs or n.op_type, "node", n.span, n.op_span, n.op_type)
    sym.children = _subgraph_symbols(n)
    return sym


def _subgraph_symbols(n: Node) -> list[query.Symbol]:
    from graphlsp.syntax.lower import text_graph

    out = []
    for attr, graphs in n.subgraphs.items():
        for g in graphs:
            tg = text_graph(g)
            if tg is None:
                continue
            o = tg.piece.origin
            last = g.nodes[-1].span if g.nodes else None
            end = last[1] if last is not None else o + tg.sig.end
            name = (o + tg.sig.name.start, o + tg.sig.name.end)
            sym = query.Symbol(g.name, "subgraph", (o + tg.sig.start, end), name, attr)
            sym.children = [c for c in map(_node_symbol, g.nodes) if c is not None]
            out.append(sym)
    return out


def _by_module(a: Analysis, view: BinaryView, top: list[query.Symbol]) -> None:
    """A binary model's main graph outlined by the module hierarchy its exporter wrote (graphlsp.provenance:
    dynamo's scopes, TorchScript's scoped node names): a symbol per module run, the nodes below."""
    from graphlsp.provenance.modules import ModuleGroup, nest
    from graphlsp.provenance.trace import modules_of

    g = a.model.graph
    main = next((s for s in top if s.kind == "graph"), None)
    if g is None or main is None:
        return
    chains: list[list[tuple[str, str]] | None] = []
    for n in g.nodes:
        chains.append(modules_of(n, view.origin_of(n)) or None)
    if not any(c and len(c) > 1 for c in chains):
        return
    symbols = {s.span: s for s in main.children}
    by_index = [symbols.get(n.span) if n.span is not None else None for n in g.nodes]

    def build(items: list[ModuleGroup | int]) -> list[query.Symbol]:
        out: list[query.Symbol] = []
        for item in items:
            if isinstance(item, int):
                sym = by_index[item]
                if sym is not None:
                    out.append(sym)
                continue
            children = build(item.children)
            if not children:
                continue
            span = (children[0].span[0], children[-1].span[1])
            cls = item.cls.rsplit(".", 1)[-1]
            group = query.Symbol(item.name, "module", span, children[0].selection, cls)
            group.children = children
            out.append(group)
        return out

    kept = {id(s) for s in by_index if s is not None}
    main.children = build(nest(chains)) + [s for s in main.children if id(s) not in kept]


def _outline(a: Analysis, view: BinaryView | None = None) -> list[query.Symbol]:
    """The document's symbols: graphs and functions with their nodes (query.document_symbols), and below a node
    with subgraphs (If, Loop, Scan) each subgraph with its nodes, at any depth; a binary model's nodes inside the
    modules that made them."""
    top = query.document_symbols(a)
    with_subgraphs: dict[tuple[int, int], Node] = {}
    for g in [a.model.graph, *(f.body for f in a.model.functions.values())]:
        for n in g.nodes if g is not None else []:
            if n.subgraphs and n.span is not None:
                with_subgraphs[n.span] = n
    if with_subgraphs:
        for s in top:
            for c in s.children:
                owner = with_subgraphs.get(c.span)
                if owner is not None:
                    c.children = _subgraph_symbols(owner)
    if view is not None:
        _by_module(a, view, top)
    return top


def _symbols_json(state: DocState, enc: str) -> str:
    """The document's symbols as the JSON text of LSP DocumentSymbols (tens of thousands of nodes on a big model:
    built as plain dicts, not as lsprotocol objects pygls would convert again)."""
    a = state.analysis
    assert a is not None
    pos = convert.Positions(state.lines, a.doc.text, enc)

    def one(s: query.Symbol) -> dict[str, Any]:
        d: dict[str, Any] = {"name": s.name, "kind": _SYMBOL_KIND.get(s.kind, lsp.SymbolKind.Object).value,
                             "range": pos.range(*s.span), "selectionRange": pos.range(*s.selection)}  # fmt: skip
        if s.detail:
            d["detail"] = s.detail
        if s.children:
            d["children"] = [one(c) for c in s.children]
        return d

    return json.dumps([one(s) for s in _outline(a, state.view)], ensure_ascii=False)


@guard([])
@or_library(opdocs.document_symbols)
async def document_symbols(ls: GraphLspServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol] | RawJSON:
    state = await ls.current_heavy(params.text_document.uri)
    if state is None or state.analysis is None:
        return []
    enc = ls.encoding
    return RawJSON(cached(state, f"lsp.symbols.{enc}", lambda: _symbols_json(state, enc)))


@guard([])
async def workspace_symbols(ls: GraphLspServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
    out = []
    for uri in list(ls.docs):
        state = await ls.current(uri)
        if state is None or state.analysis is None:
            continue
        a, enc, wanted = state.analysis, ls.encoding, params.query.lower()
        todo: list[tuple[query.Symbol, str | None]] = [(s, None) for s in _outline(a)]
        while todo:
            s, container = todo.pop()
            if wanted in s.name.lower():
                out.append(lsp.SymbolInformation(
                    name=s.name, kind=_SYMBOL_KIND.get(s.kind, lsp.SymbolKind.Object),
                    location=lsp.Location(uri=uri, range=convert.span_range(state.lines, *s.selection, enc)),
                    container_name=container,
                ))  # fmt: skip
            todo.extend((c, s.name) for c in reversed(s.children))
    return out


@guard([])
async def folding(ls: GraphLspServer, params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return []
    ranges = query.folding_ranges(state.analysis)
    if state.own_lines is not None:  # the query's lines end at \n only: the LSP lines of the same text
        ours, lines = state.analysis.doc.lines, state.own_lines
        ranges = [(lines.line_of(ours.line_start(s)), lines.line_of(ours.line_end(e))) for s, e in ranges]
    return [lsp.FoldingRange(start_line=s, end_line=e) for s, e in ranges if e > s]
