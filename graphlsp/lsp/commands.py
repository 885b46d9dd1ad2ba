"""The commands (workspace/executeCommand) on binary models (graphlsp/lsp/views.py): render the read-only view the
server serves for a `.onnx` file, save the model as ONNX text beside it, fold its constants into a new binary
beside it. A file that exists already is overwritten only when the user says so."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from graphlsp.lsp import views
from graphlsp.lsp.diagnostics import refresh_view
from graphlsp.lsp.protocol import ErrorReply, RawJSON
from graphlsp.lsp.workspace import GraphLspServer

log = logging.getLogger("graphlsp.lsp")


def _no_target(command: str) -> ErrorReply:
    return ErrorReply(lsp.ErrorCodes.InvalidParams, f"{command} takes one argument: {{\"uri\": ...}} or "
                      "{\"path\": ...} of a .onnx file")  # fmt: skip


async def render_view(ls: GraphLspServer, *args: Any) -> RawJSON | ErrorReply:
    """{uri} or {path} of a .onnx file -> {path, uri, text, error}: the read-only view the server serves for
    the file (a client opens a document with this text; the server renders it again when the file changed)."""
    path, _ = views.command_target(args)
    if path is None:
        return _no_target(views.RENDER)
    view = await refresh_view(ls, path)
    answer = {"path": path, "uri": Path(path).as_uri(), "text": view.text, "error": view.error or None}
    return RawJSON(json.dumps(answer, ensure_ascii=False))


async def render_revision(ls: GraphLspServer, *args: Any) -> RawJSON | ErrorReply:
    """{uri|path, rev?} -> {path, rev, text, error}: the model as it is at a git revision (`HEAD` by default), as
    its view shows it: what "Compare with HEAD" puts beside the file in a diff view."""
    path, opts = views.command_target(args)
    if path is None:
        return _no_target(views.RENDER_REVISION)
    rev = opts.get("rev") or "HEAD"
    if not isinstance(rev, str):
        return ErrorReply(lsp.ErrorCodes.InvalidParams, f"{views.RENDER_REVISION}: rev must be a string")
    from graphlsp.diff.revision import RevisionError, text_at

    try:
        text, error = await asyncio.get_running_loop().run_in_executor(None, text_at, path, rev), None
    except RevisionError as e:
        text, error = f"# graphlsp: {e}\n", str(e)
    answer = {"path": path, "rev": rev, "text": text, "error": error}
    return RawJSON(json.dumps(answer, ensure_ascii=False))


async def _may_write(ls: GraphLspServer, target: str, opts: dict[str, Any]) -> bool:
    """Whether to write `target`: yes when it does not exist or `overwrite` is true; else the user is asked."""
    if not os.path.exists(target) or opts.get("overwrite") is True:
        return True
    if opts.get("overwrite") is False:
        return False
    answer = await ls.window_show_message_request_async(lsp.ShowMessageRequestParams(
        type=lsp.MessageType.Warning, message=f"graphlsp: {target} exists. Overwrite it?",
        actions=[lsp.MessageActionItem(title="Overwrite"), lsp.MessageActionItem(title="Cancel")]))  # fmt: skip
    return answer is not None and answer.title == "Overwrite"


def _write_text(path: str, text: str) -> None:
    from graphlsp.files import write_file

    write_file(path, text.encode("utf-8"))  # a link planted at `path` (or at a temporary name) is never followed


async def save_view_as_text(ls: GraphLspServer, *args: Any) -> dict[str, Any] | ErrorReply:
    """{uri|path, overwrite?} -> {path, written}: the model as ONNX text with all its data (`graphlsp convert
    model.onnx model.onnxtxt`), written beside it as `<name>.onnxtxt`."""
    path, opts = views.command_target(args)
    if path is None:
        return _no_target(views.SAVE_AS_TEXT)
    target = views.beside(path, ".onnxtxt")
    if not await _may_write(ls, target, opts):
        return {"path": None, "written": False}
    try:
        text = await ls.on_worker(lambda: views.model_text(path))
        await ls.on_worker(lambda: _write_text(target, text))
    except Exception as e:  # OSError, a model that cannot be read
        log.exception("saveViewAsText %s", path)
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, f"cannot save {path} as ONNX text: {type(e).__name__}: {e}")
    ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=f"graphlsp: wrote {target}"))
    return {"path": target, "uri": Path(target).as_uri(), "written": True}


async def fold_binary(ls: GraphLspServer, *args: Any) -> dict[str, Any] | ErrorReply:
    """{uri|path, overwrite?} -> {path, written, folded, constants, removed}: the model with its constant
    subgraphs folded (`graphlsp fold model.onnx -o model.folded.onnx`), written beside it when anything folds."""
    path, opts = views.command_target(args)
    if path is None:
        return _no_target(views.FOLD_BINARY)
    target = views.beside(path, ".folded.onnx")
    if not await _may_write(ls, target, opts):
        return {"path": None, "written": False, "folded": 0, "constants": 0, "removed": 0}
    cap = ls.cap_of(path)
    try:
        folded, constants, removed = await ls.on_worker(lambda: views.fold_binary(path, target, cap))
    except Exception as e:
        log.exception("foldBinary %s", path)
        return ErrorReply(lsp.LSPErrorCodes.RequestFailed, f"cannot fold {path}: {type(e).__name__}: {e}")
    if folded:
        message = (f"graphlsp: folded {folded} node{'s' if folded != 1 else ''} into {constants} Constant"
                   f"{'s' if constants != 1 else ''}, removed {removed} more: wrote {target}")  # fmt: skip
    else:
        message = f"graphlsp: {Path(path).name} has no constant subgraph to fold: nothing written"
    ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=message))
    return {"path": target if folded else None, "written": bool(folded), "folded": folded, "constants": constants,
            "removed": removed}  # fmt: skip
