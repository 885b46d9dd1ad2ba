"""Edits: completion (an op library's is graphlsp/lsp/opdocs.py's), rename, formatting, and code actions (the
quick fixes of the findings under the cursor, and "fold all constants" for the whole file). A view of a binary
model is never edited: its source actions run the commands that write new files beside the model
(graphlsp/lsp/commands.py)."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types as lsp
from pygls.protocol import default_converter

from graphlsp import query
from graphlsp.lsp import convert, opdocs, views
from graphlsp.lsp.protocol import ErrorReply, RawJSON
from graphlsp.lsp.workspace import GraphLspServer, cached, guard, or_library

_CONVERTER = default_converter()


_COMPLETION_KIND = {
    "op": lsp.CompletionItemKind.Function,
    "attribute": lsp.CompletionItemKind.Property,
    "value": lsp.CompletionItemKind.Variable,
    "type": lsp.CompletionItemKind.TypeParameter,
}


@guard(None)
@or_library(opdocs.completion)
async def completion(ls: GraphLspServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None or state.view is not None:  # nothing is typed into a view
        return None
    a, enc = state.analysis, ls.encoding
    items = query.completions(a, convert.offset(state.lines, params.position, enc))
    return lsp.CompletionList(
        is_incomplete=False,
        items=[lsp.CompletionItem(label=c.label, kind=_COMPLETION_KIND.get(c.kind), detail=c.detail) for c in items],
    )


@guard(None)
async def rename(ls: GraphLspServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | ErrorReply | None:
    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None:
        return None
    if state.view is not None:
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, _READ_ONLY.format(name=Path(state.path).name))
    a, enc = state.analysis, ls.encoding
    result = query.rename(a, convert.offset(state.lines, params.position, enc), params.new_name)
    if isinstance(result, str):  # LSP: a rename that cannot be done is an error with the reason, which editors show
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, result)
    edits = [lsp.TextEdit(range=convert.span_range(state.lines, s, e, enc), new_text=txt) for s, e, txt in result]
    return lsp.WorkspaceEdit(changes={state.uri: edits})


@guard(None)
async def formatting(ls: GraphLspServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
    from graphlsp.syntax.format import format_text

    state = await ls.current(params.text_document.uri)
    if state is None or state.analysis is None or state.view is not None:  # a view is never edited
        return None
    a, enc = state.analysis, ls.encoding
    new = await ls.submit(state, lambda: format_text(a.doc.text))
    if new is None or new == a.doc.text:
        return [] if new is not None else None
    return [lsp.TextEdit(range=convert.span_range(state.lines, 0, len(a.doc.text), enc), new_text=new)]


FOLD_ALL = lsp.CodeActionKind.Source + ".foldConstants"  # "fold all constants" for the whole file
_READ_ONLY = (
    "{name} is a read-only view of a binary ONNX model: save it as ONNX text (graphlsp.saveViewAsText) to edit it"
)


@guard([])
async def code_actions(ls: GraphLspServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | RawJSON:
    from graphlsp.lint.fixes import fixes_for, fold_all

    state = await ls.current_heavy(params.text_document.uri)
    if state is None or state.analysis is None:
        return []
    a, enc = state.analysis, ls.encoding
    lines = state.lines
    only = params.context.only

    def wanted(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(k + ".") for k in only)

    if state.view is not None:  # no edits to a view: its source actions write new files beside the model
        return [x for x in _view_actions(state.path) if x.kind is not None and wanted(x.kind)]

    def workspace_edit(edits: list[tuple[int, int, str]]) -> lsp.WorkspaceEdit:
        text_edits = [lsp.TextEdit(range=convert.span_range(lines, s, e, enc), new_text=t) for s, e, t in edits]
        return lsp.WorkspaceEdit(changes={state.uri: text_edits})

    lo = convert.offset(lines, params.range.start, enc)
    hi = convert.offset(lines, params.range.end, enc)
    actions = []
    titles = set()
    if wanted(lsp.CodeActionKind.QuickFix):
        from graphlsp.lint.diagnostics import deployment_findings

        settings = ls.settings_for(state.uri)
        path = views.fs_path(state.uri) or state.uri
        deployment = deployment_findings(a, path, settings, incremental=True) if a.doc.model.graph is not None else []
        for f in [*a.findings(), *deployment]:
            if f.end < lo or f.start > hi:
                continue
            diag = next((d for d in params.context.diagnostics if d.code == f.code), None)
            for fix in fixes_for(a, f, settings.targets):
                if fix.title in titles:
                    continue
                titles.add(fix.title)
                actions.append(lsp.CodeAction(
                    title=fix.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag] if diag else None,
                    edit=workspace_edit(fix.edits), is_preferred=fix.safe,
                ))  # fmt: skip
    payload = [json.dumps(_CONVERTER.unstructure(x), ensure_ascii=False) for x in actions]
    if wanted(FOLD_ALL):

        def make() -> tuple[str, str] | None:  # (title, the action's JSON): thousands of edits on a big model
            every = fold_all(a)
            if every is None:
                return None
            pos = convert.Positions(lines, a.doc.text, enc)
            edits = [{"range": pos.range(s, e), "newText": t} for s, e, t in every.edits]
            action = {"title": every.title, "kind": FOLD_ALL, "edit": {"changes": {state.uri: edits}}}
            return every.title, json.dumps(action, ensure_ascii=False)

        found = cached(state, f"lsp.fold_all.{enc}", make)  # editors ask at every move of the cursor
        if found is not None and found[0] not in titles:
            payload.append(found[1])
    return RawJSON(f"[{','.join(payload)}]")


def _view_actions(path: str) -> list[lsp.CodeAction]:
    text, folded = Path(views.beside(path, ".onnxtxt")).name, Path(views.beside(path, ".folded.onnx")).name
    save = f"Save the model as ONNX text ({text}, with its data)"
    fold = f"Fold constants into a new model ({folded})"
    return [
        lsp.CodeAction(title=save, kind=lsp.CodeActionKind.Source,
                       command=lsp.Command(title=save, command=views.SAVE_AS_TEXT, arguments=[{"path": path}])),
        lsp.CodeAction(title=fold, kind=FOLD_ALL,
                       command=lsp.Command(title=fold, command=views.FOLD_BINARY, arguments=[{"path": path}])),
    ]  # fmt: skip
