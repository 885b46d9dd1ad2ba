"""`graphlsp/graph`: the graph picture's data for an open document (the same JSON `graphlsp graph` writes into
its page: graphlsp/graphview), for VS Code's webview and Neovim's `:GraphlspGraph`.

Request params: `{"uri": ..., "format": "json" | "html"}`. `json` (the default) answers the graph with the
document's `uri` and `version`; `html` answers `{"uri", "version", "html"}`, the whole self-contained page. The
document is taken as the editor has it (unsaved edits included); a binary model's view shows the binary's graph,
its lines those of the view.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from graphlsp.graphview import empty, graph_json
from graphlsp.graphview.page import page
from graphlsp.lint.diagnostics import Diagnostic, collect_analysis
from graphlsp.lint.runner import finalize
from graphlsp.lsp import convert, views
from graphlsp.lsp.protocol import ErrorReply, RawJSON
from graphlsp.lsp.workspace import DocState, GraphLspServer

log = logging.getLogger("graphlsp.lsp")
GRAPH = "graphlsp/graph"


def _param(params: Any, name: str) -> Any:
    if isinstance(params, dict):
        return params.get(name)
    return getattr(params, name, None)


def _diagnostics(ls: GraphLspServer, state: DocState) -> list[Diagnostic]:
    """What the document's diagnostics say, before their conversion to LSP (each keeps its node)."""
    settings = ls.settings_for(state.uri)
    if state.view is not None:
        return finalize(views.diagnostics(state.view, state.path), "", state.path, settings)
    a = state.analysis
    assert a is not None
    path = views.fs_path(state.uri) or state.uri
    return finalize(collect_analysis(a, path), a.doc.text, path, settings)


def document_graph(ls: GraphLspServer, state: DocState) -> dict[str, Any]:
    """The document's graph (on the analysis thread, after the document's queued edits)."""
    name = Path(views.fs_path(state.uri) or state.uri).name
    a = state.analysis
    if a is None:  # an op library, or text whose analysis failed (the diagnostics say so)
        if state.crash:
            why = Diagnostic(name, None, None, None, None, "error", convert.INTERNAL_ERROR, "internal-error",
                             f"graphlsp could not analyse this file: {state.crash}")  # fmt: skip
        else:
            why = Diagnostic(name, None, None, None, None, "info", "", "", "this file holds no model")
        return empty(name, [why])
    view = state.view
    origin_of = view.origin_of if view is not None and view.origins else None
    return graph_json(a.model, a.refiner, a.fold_plan(), _diagnostics(ls, state), name, origin_of)


async def graph(ls: GraphLspServer, params: Any) -> RawJSON | ErrorReply:
    """`graphlsp/graph` {uri, format?}: the document's graph for the picture; a failure is an error answer."""
    try:
        return await _graph(ls, params)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        log.exception("%s failed", GRAPH)
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, f"the graph failed: {type(e).__name__}: {e}")


async def _graph(ls: GraphLspServer, params: Any) -> RawJSON | ErrorReply:
    uri = _param(params, "uri")
    fmt = _param(params, "format") or "json"
    if not isinstance(uri, str) or fmt not in ("json", "html"):
        return ErrorReply(lsp.ErrorCodes.InvalidParams, f'{GRAPH} takes {{"uri": ..., "format": "json" | "html"}}')
    state = await ls.current_heavy(uri)
    if state is None:
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, f"{uri} is not open")
    version = state.version
    data = await ls.submit(state, lambda: document_graph(ls, state))
    data["uri"], data["version"] = uri, version
    if fmt == "html":
        return RawJSON(json.dumps({"uri": uri, "version": version, "html": page(data)}, ensure_ascii=False))
    return RawJSON(json.dumps(data, ensure_ascii=False))
