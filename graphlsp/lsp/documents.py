"""Document sync: textDocument/didOpen, didChange, didClose and workspace/didChangeWatchedFiles, for ONNX text, the
read-only views of binary models, and op libraries (handed on to graphlsp/lsp/opdocs.py).

Each change is applied to the document's analysis in order on the worker thread (graphlsp/lsp/workspace.py), and the
latest version's diagnostics are pushed (graphlsp/lsp/diagnostics.py).

A `.onnx` document (its `file:` URI, or the same path under the `graphlsp-view:` scheme) is a view: the server
reads the file and renders it as ONNX text (`graphlsp.view`), whatever text the client sent, once per version of
the file on disk. Edits to a view are refused (window/showMessage), and when the file changes
(workspace/didChangeWatchedFiles, a re-open, a renderView) the view is rendered again and the client told
(`graphlsp/viewChanged`) to fetch it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from graphlsp.lsp import convert, opdocs, views
from graphlsp.lsp.diagnostics import apply_and_publish, publish_if_latest, publish_python_files, refresh_view
from graphlsp.lsp.workspace import DocState, GraphLspServer, guard


@guard(None)
async def did_open(ls: GraphLspServer, params: lsp.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    if opdocs.is_library(doc.uri):
        state = ls.docs[doc.uri] = DocState(doc.uri, doc.version, doc.text)
        return await opdocs.opened(ls, state)
    path = views.view_path(doc.uri)
    state = ls.docs[doc.uri] = DocState(doc.uri, doc.version, doc.text, path=path or "")
    ls._settings.pop(doc.uri, None)  # the project's config may have changed since
    if path is not None:  # a binary model: the server's rendering, not the client's text
        ls._settings.pop(Path(path).as_uri(), None)
        cap = ls.settings_for(doc.uri).fold_size_cap
        await ls.submit(state, lambda: state.show(ls.view_or_error(path, cap)))
        ls.view_shown(state)
        await publish_if_latest(ls, state, doc.version)
    else:
        await apply_and_publish(ls, state, doc.version,
                                lambda: state.open(doc.text, ls.settings_for(doc.uri).fold_size_cap))  # fmt: skip


@guard(None)
async def did_change(ls: GraphLspServer, params: lsp.DidChangeTextDocumentParams) -> None:
    state = ls.docs.get(params.text_document.uri)
    if state is None:
        return
    if opdocs.is_library(state.uri):
        return await opdocs.changed(ls, state, params)
    version = params.text_document.version
    state.version = version
    changes = list(params.content_changes)
    enc = ls.encoding
    if state.view is not None:
        await _view_changed_by_client(ls, state, changes, version)
        return

    def apply() -> None:
        cap = ls.settings_for(state.uri).fold_size_cap
        for change in changes:
            if isinstance(change, lsp.TextDocumentContentChangePartial):
                lines = state.lines
                start = convert.offset(lines, change.range.start, enc)
                end = convert.offset(lines, change.range.end, enc)
                state.edit(start, end, change.text, cap)
            else:
                state.open(change.text, cap)

    await apply_and_publish(ls, state, version, apply)
    if state.dropped:
        state.dropped = False
        ls.collect_soon()


async def _view_changed_by_client(ls: GraphLspServer, state: DocState, changes: list[Any], version: int) -> None:
    """A change to a view's text: the client catching up with a new rendering (its text is the view again), or
    an edit, which is refused: the document stays the view, and the user is told so (once until the client's
    text is the view again). An edit made after the file changed on disk is checked against the new rendering."""
    enc = ls.encoding
    was_refused = state.refused

    def apply() -> bool:
        state.apply_to_client_text(changes, enc)
        view = state.view
        if view is not None and state.text != view.text and not view.current():
            state.show(ls.view_or_error(state.path, view.analysis.fold_size_cap))
            return True
        return False

    if await ls.submit(state, apply):
        ls.view_shown(state)
    if state.view is not None and state.text != state.view.text and not was_refused:
        state.refused = True
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=(
            f"graphlsp: {Path(state.path).name} is a read-only view of a binary ONNX model: edits are not applied. "
            "To edit the model, save it as ONNX text (graphlsp.saveViewAsText) and open that.")))  # fmt: skip
    await publish_if_latest(ls, state, version)


@guard(None)
async def watched_files_changed(ls: GraphLspServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    """A model on disk changed: its open views are rendered again (and their clients told to fetch them)."""
    paths: list[str] = []
    for change in params.changes:
        path = views.fs_path(change.uri)
        if path is None or path in paths:
            continue
        if any(s.path == path for s in list(ls.docs.values())):
            paths.append(path)
        else:  # no open view: forget a rendering kept for one
            await ls.on_worker(functools.partial(ls.views.pop, path, None))
    for path in paths:
        await refresh_view(ls, path)


@guard(None)
def did_close(ls: GraphLspServer, params: lsp.DidCloseTextDocumentParams) -> None:
    state = ls.docs.pop(params.text_document.uri, None)
    if state is not None and opdocs.is_library(state.uri):
        opdocs.closed(ls, state)
    if state is not None and state.view is not None:  # its rendering is kept no longer (unless shown elsewhere)
        ls.on_worker(functools.partial(ls.forget_view, state.path))
    elif state is not None and state.analysis is not None:
        ls.collect_soon()
    if state is not None and not ls.pull_client:
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=state.uri, diagnostics=[]))
    if state is not None and state.path in ls.python_published and all(s.path != state.path for s in ls.docs.values()):
        publish_python_files(ls, set(ls.python_published.pop(state.path)))  # the model's findings leave its Python
