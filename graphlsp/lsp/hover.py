"""What the editor shows over the text without changing it: hover (with each deployment target's kernel for a
node's op), signature help, inlay hints (value shapes) and semantic tokens. An op library document's hover is
graphlsp/lsp/opdocs.py's."""

from __future__ import annotations

import logging

from lsprotocol import types as lsp

from graphlsp import query
from graphlsp.analysis import Analysis
from graphlsp.lsp import convert, opdocs
from graphlsp.lsp.protocol import RawJSON
from graphlsp.lsp.workspace import DocState, GraphLspServer, analysed_at, cached, guard, or_library

log = logging.getLogger("graphlsp.lsp")


@guard(None)
@or_library(opdocs.hover)
async def hover(ls: GraphLspServer, params: lsp.HoverParams) -> lsp.Hover | None:
    state, a, enc, offset = await analysed_at(ls, params)
    found = query.hover(a, offset)
    if found is None:
        return None
    cost = query.cost_lines(a, offset)  # graphlsp/cost: a node's FLOPs and bytes, a value's size
    text = found[0] + (f"\n\n{cost}" if cost else "") + _kernel_lines(ls, state.uri, a, offset) \
        + _python_lines(ls, state, a, offset)  # fmt: skip
    return convert.hover(state.lines, text, found[1], enc)


def _python_lines(ls: GraphLspServer, state: DocState, a: Analysis, offset: int) -> str:
    """On a node of a binary model's view: the Python line that made it, its module and stack
    (graphlsp.provenance)."""
    view = state.view
    hit = query.hit_at(a, offset) if view is not None else None
    node = hit.node if hit is not None else None
    if view is None or node is None:
        return ""
    origin = view.origin_of(node)  # None: the module path of a TorchScript node's scoped name, if any
    from graphlsp.provenance.describe import hover as python_hover

    text = python_hover(node, ls.sources_for(state.uri), origin)
    return "\n\n---\n\n" + text if text else ""


def _kernel_lines(ls: GraphLspServer, uri: str, a: Analysis, offset: int) -> str:
    """On a node's op: whether each target (`targets`) has a kernel for the node's types."""
    hit = query.hit_at(a, offset)
    if hit is None or hit.kind != "op" or hit.node is None:
        return ""
    settings = ls.settings_for(uri)
    if not settings.targets:
        return ""
    from graphlsp.lint.deployment import hover_lines

    try:
        lines = hover_lines(a.model, a.refiner, hit.node, settings.targets)
    except Exception:  # the hover stands without them
        log.exception("kernel lines of a hover failed")
        return ""
    return "\n" + "\n".join(lines) if lines else ""


@guard(None)
async def signature_help(ls: GraphLspServer, params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
    _, a, _, at = await analysed_at(ls, params)
    found = query.signature_help(a, at)
    if found is None:
        return None
    info = lsp.SignatureInformation(
        label=found.label,
        documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=found.doc) if found.doc else None,
        parameters=[lsp.ParameterInformation(label=p) for p in found.params],
    )
    return lsp.SignatureHelp(signatures=[info], active_signature=0, active_parameter=found.active)


@guard([])
async def inlay_hints(ls: GraphLspServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None or not ls.settings_for(state.uri).inlay_hints:
        return []
    a, enc = state.analysis, ls.encoding
    lines = state.lines
    start = convert.offset(lines, params.range.start, enc)
    end = convert.offset(lines, params.range.end, enc)
    return [
        lsp.InlayHint(position=convert.position(lines, h.offset, enc), label=h.label, kind=lsp.InlayHintKind.Type)
        for h in query.inlay_hints(a, start, end)
    ]


SEMANTIC_LEGEND = lsp.SemanticTokensLegend(token_types=query.TOKEN_TYPES, token_modifiers=[])


_TOKEN_TYPE = {kind: i for i, kind in enumerate(query.TOKEN_TYPES)}


@guard(lsp.SemanticTokens(data=[]))
async def semantic_tokens(ls: GraphLspServer, params: lsp.SemanticTokensParams) -> lsp.SemanticTokens | RawJSON:
    state = await ls.current_heavy(params.text_document.uri)
    if state is None or state.analysis is None:
        return lsp.SemanticTokens(data=[])
    a, enc = state.analysis, ls.encoding

    def make() -> str:
        data = convert.Positions(state.lines, a.doc.text, enc).tokens(query.semantic_tokens(a), _TOKEN_TYPE)
        return f'{{"data":[{",".join(map(str, data))}]}}'

    return RawJSON(cached(state, f"lsp.tokens.{enc}", make))
