"""Op library files (`*.onnxop`) in the language server, and the way from a model's node to its op's declaration.

An `.onnxop` document is analysed by `graphlsp.oplib.query` (parse with recovery, check); the feature modules
dispatch to this one by the document's suffix for hover, definition, completion and document symbols (its
diagnostics, the same as `graphlsp check` on the file, are graphlsp/lsp/diagnostics.py's).

The text in the editor stands for the file (`Catalog.set_overlay`) while it is open, when the file is an op library
in use (a project's `op-libraries`, or a shipped one): each change that alters the declarations in use checks the
open models again whose nodes are in a domain the library declares (before or after the change), and their
diagnostics are sent again (push), or the client is asked to pull them again (workspace/diagnostic/refresh).
Closing the document puts the file on disk back in use.

In a model (text or a binary's view), go to definition on a node whose op a library declares opens the `.onnxop`
file at the declaration (the shipped onnxruntime library too); the hover is `graphlsp.query`'s.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types as lsp

from graphlsp import query
from graphlsp.analysis import Analysis
from graphlsp.files import read_regular_text
from graphlsp.lsp import convert
from graphlsp.lsp.diagnostics import publish_if_latest
from graphlsp.lsp.workspace import AtPosition, DocState, GraphLspServer, NoAnswer, OpState, is_library, refresh_support
from graphlsp.lsp.workspace import library_path as _path
from graphlsp.oplib import model as m
from graphlsp.oplib import query as oq
from graphlsp.oplib.catalog import CATALOG

log = logging.getLogger("graphlsp.lsp")


def _domains(lib: m.Library | None) -> set[str]:
    return {op.domain for op in lib.ops} if lib is not None else set()


def _analyse(ls: GraphLspServer, state: DocState) -> None:
    """On the worker: analyse the document's text; when the file is a library in use, its text stands for it, and
    the domains of the declarations that changed are noted for the models to check again."""
    ops = state.library
    assert ops is not None
    path = _path(state.uri)
    try:
        doc = oq.analyse(state.text, path or state.uri)
    except Exception as e:
        log.exception("the analysis of %s failed", state.uri)
        ops.doc, state.crash = None, f"{type(e).__name__}: {e}"
        return
    ops.doc, state.crash = doc, ""
    if path is None:
        return
    generation = CATALOG.generation
    before = CATALOG.library(path)
    CATALOG.set_overlay(path, state.text, doc.library)
    ls.settings_for(state.uri)  # the file's project: its op libraries in use (this one as typed)
    if CATALOG.generation != generation:
        ls._settings.clear()  # a model's settings failed on this file's errors on disk: read them again
        ops.pending |= _domains(before) | _domains(CATALOG.library(path))


def _uses(state: DocState, domains: set[str]) -> bool:
    a = state.analysis
    if a is None:
        return state.view is None  # a text whose analysis failed: try again
    return any(n.domain in domains for g in a.model.graphs() for n in g.nodes)


async def _run(ls: GraphLspServer, state: DocState, version: int, work: Callable[[], None]) -> None:
    """`work` on the worker, then, in the same queue, the open models checked again that the change concerns;
    the diagnostics of all that changed are sent. The jobs are queued at once, so a request about a model that
    comes after the change waits for the model's new analysis."""
    ops = state.library
    assert ops is not None
    first = ls.submit(state, work)
    jobs = []
    for other in [s for s in list(ls.docs.values()) if s is not state and not is_library(s.uri)]:

        def redo(st: DocState = other) -> bool:
            if state.version != version or not ops.pending or not _uses(st, ops.pending):
                return False  # a newer change of the library checks them (its domains are kept until then)
            cap = ls.settings_for(st.uri).fold_size_cap
            if st.view is not None:
                ls.views.pop(st.path, None)
                st.show(ls.view_or_error(st.path, cap))
            else:
                st.open(st.text, cap)
            return True

        jobs.append((other, ls.submit(other, redo)))

    def done() -> None:
        if state.version == version:
            ops.pending.clear()

    last = ls.on_worker(done)
    await first
    if ls.docs.get(state.uri) is state:
        await publish_if_latest(ls, state, version)
    changed = False
    for other, job in jobs:
        if await job:
            changed = True
            await publish_if_latest(ls, other, other.version)
    await last
    if changed:
        if ls.pull_client and refresh_support(ls, "diagnostics"):
            ls.workspace_diagnostic_refresh(None)
        if refresh_support(ls, "inlayHint"):
            ls.workspace_inlay_hint_refresh(None)


# ---- document sync
async def opened(ls: GraphLspServer, state: DocState) -> None:
    state.library = OpState()
    ls._settings.pop(state.uri, None)  # the project's config may have changed since
    await _run(ls, state, state.version, lambda: _analyse(ls, state))


async def changed(ls: GraphLspServer, state: DocState, params: lsp.DidChangeTextDocumentParams) -> None:
    version = params.text_document.version
    state.version = version
    changes = list(params.content_changes)
    enc = ls.encoding

    def apply() -> None:
        state.apply_to_client_text(changes, enc)
        state.own_lines = None
        _analyse(ls, state)

    await _run(ls, state, version, apply)


def closed(ls: GraphLspServer, state: DocState) -> None:
    """The document was closed: the file on disk stands for itself again."""
    path, ops = _path(state.uri), state.library
    if path is None or not isinstance(ops, OpState):
        return

    def drop() -> None:
        generation = CATALOG.generation
        before = CATALOG.library(path)
        CATALOG.drop_overlay(path)
        if CATALOG.generation != generation:
            ls._settings.clear()
            ops.pending |= _domains(before) | _domains(CATALOG.library(path))

    task = asyncio.ensure_future(_run(ls, state, state.version, drop))
    _TASKS.add(task)  # the loop keeps weak references only
    task.add_done_callback(_finished)


_TASKS: set[asyncio.Future[None]] = set()


def _finished(task: asyncio.Future[None]) -> None:
    _TASKS.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("closing an op library document failed", exc_info=task.exception())


# ---- features (each raises NoAnswer, which the calling handler's guard answers with its default, when the document
# has no analysis of its current text)
async def _document(ls: GraphLspServer, uri: str) -> tuple[DocState, oq.OpDocument]:
    state = await ls.current(uri)
    ops = state.library if state is not None else None
    if state is None or not isinstance(ops, OpState) or ops.doc is None or ops.doc.text != state.text:
        raise NoAnswer
    return state, ops.doc


async def _document_at(ls: GraphLspServer, params: AtPosition) -> tuple[DocState, oq.OpDocument, str, int]:
    """The document, its analysis, the position encoding and the offset the request's position names."""
    state, doc = await _document(ls, params.text_document.uri)
    enc = ls.encoding
    return state, doc, enc, convert.offset(state.lines, params.position, enc)


async def hover(ls: GraphLspServer, params: lsp.HoverParams) -> lsp.Hover | None:
    state, doc, enc, at = await _document_at(ls, params)
    answer = oq.hover(doc, at)
    return convert.hover(state.lines, *answer, enc) if answer is not None else None


async def definition(ls: GraphLspServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    state, doc, enc, at = await _document_at(ls, params)
    span = oq.definition(doc, at)
    return lsp.Location(uri=state.uri, range=convert.span_range(state.lines, *span, enc)) if span is not None else None


_COMPLETION_KIND = {
    "keyword": lsp.CompletionItemKind.Keyword,
    "type": lsp.CompletionItemKind.TypeParameter,
    "dtype": lsp.CompletionItemKind.Struct,
    "dim": lsp.CompletionItemKind.Variable,
    "run": lsp.CompletionItemKind.Variable,
    "attr": lsp.CompletionItemKind.Property,
    "input": lsp.CompletionItemKind.Field,
    "output": lsp.CompletionItemKind.Field,
    "let": lsp.CompletionItemKind.Variable,
    "function": lsp.CompletionItemKind.Function,
}


async def completion(ls: GraphLspServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    _, doc, _, at = await _document_at(ls, params)
    items = oq.completions(doc, at)
    return lsp.CompletionList(is_incomplete=False, items=[
        lsp.CompletionItem(label=c.label, kind=_COMPLETION_KIND.get(c.kind), detail=c.detail or None) for c in items
    ])  # fmt: skip


_SYMBOL_KIND = {
    "library": lsp.SymbolKind.Package,
    "op": lsp.SymbolKind.Function,
    "input": lsp.SymbolKind.Variable,
    "output": lsp.SymbolKind.Variable,
    "attr": lsp.SymbolKind.Property,
    "type": lsp.SymbolKind.TypeParameter,
}


async def document_symbols(ls: GraphLspServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    state, doc = await _document(ls, params.text_document.uri)
    enc = ls.encoding

    def one(s: oq.OpSymbol) -> lsp.DocumentSymbol:
        return lsp.DocumentSymbol(
            name=s.name, kind=_SYMBOL_KIND.get(s.kind, lsp.SymbolKind.Object), detail=s.detail or None,
            range=convert.span_range(state.lines, *s.span, enc),
            selection_range=convert.span_range(state.lines, *s.selection, enc),
            children=[one(c) for c in s.children] or None,
        )  # fmt: skip

    return [one(s) for s in oq.symbols(doc)]


# ---- models: a declared op's declaration
def declaration_location(ls: GraphLspServer, a: Analysis, offset: int) -> lsp.Location | None:
    """The `.onnxop` file and place that declare the op at an offset of a model (None: not a declared op)."""
    decl = query.op_declaration(a, offset)
    if decl is None or not decl.path or not os.path.isabs(decl.path):
        return None
    path = os.path.normpath(decl.path)
    state = next((s for s in list(ls.docs.values()) if is_library(s.uri) and _path(s.uri) == path), None)
    if state is not None:
        text, lines = state.text, state.lines
    else:
        try:
            text = read_regular_text(path)
        except (OSError, UnicodeDecodeError):
            return None
        lines = convert.LspLines(text)
    loc, enc = decl.loc, ls.encoding
    uri = state.uri if state is not None else Path(path).as_uri()
    if "".join(text[loc.start : loc.end].split()).endswith(decl.name):
        return lsp.Location(uri=uri, range=convert.span_range(lines, loc.start, loc.end, enc))
    at = lsp.Position(line=max(0, loc.line - 1), character=max(0, loc.col - 1))  # the file changed since it was read
    return lsp.Location(uri=uri, range=lsp.Range(start=at, end=at))


__all__ = ["OpState", "closed", "completion", "declaration_location", "definition", "document_symbols", "hover",
           "is_library", "opened", "changed"]  # fmt: skip
