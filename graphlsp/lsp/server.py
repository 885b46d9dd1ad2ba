"""graphlsp's language server (pygls 2): the wiring. It creates the one server (its shared state is
graphlsp/lsp/workspace.py's `GraphLspServer`), registers each request, notification and command with its handler and
options, and runs it over stdio or TCP.

The handlers live in one module per feature family:
- `session`: initialize, the editor's settings;
- `documents`: document sync (ONNX text, binary models' read-only views, op libraries), watched files;
- `diagnostics`: every document's diagnostics, pushed or pulled;
- `navigation`: definition, references, highlight, document and workspace symbols, folding ranges;
- `hover`: hover, signature help, inlay hints, semantic tokens;
- `edits`: completion, rename, formatting, code actions;
- `graphs` and `commands`: the graph picture's data, and the commands on binary models (`views`);
- `opdocs`: op library documents (`*.onnxop`), which the others hand on to.
Below them: `workspace` (documents, worker, settings), `convert` (positions, diagnostics as LSP's), `protocol`
(pygls's protocol, JSON sent as it is), `views` (binary models' views). Each module imports only those below it
(pyproject.toml, [tool.importlinter]).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp

from graphlsp.lsp import commands, diagnostics, documents, edits, graphs, hover, navigation, session, views
from graphlsp.lsp.protocol import ChunkedStdin
from graphlsp.lsp.workspace import DocState, GraphLspServer

server = GraphLspServer()

# (method, its options, its handler): every request and notification the server answers
FEATURES: list[tuple[str, Any, Callable[..., Any]]] = [
    (lsp.INITIALIZE, None, session.initialize),
    (lsp.INITIALIZED, None, session.initialized),
    (lsp.WORKSPACE_DID_CHANGE_CONFIGURATION, None, session.configuration_changed),
    (lsp.TEXT_DOCUMENT_DID_OPEN, None, documents.did_open),
    (lsp.TEXT_DOCUMENT_DID_CHANGE, None, documents.did_change),
    (lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, None, documents.watched_files_changed),
    (lsp.TEXT_DOCUMENT_DID_CLOSE, None, documents.did_close),
    (lsp.TEXT_DOCUMENT_DIAGNOSTIC,
     lsp.DiagnosticOptions(identifier="graphlsp", inter_file_dependencies=False, workspace_diagnostics=False),
     diagnostics.pull_diagnostics),
    (lsp.TEXT_DOCUMENT_HOVER, None, hover.hover),
    (lsp.TEXT_DOCUMENT_DEFINITION, None, navigation.definition),
    (lsp.TEXT_DOCUMENT_REFERENCES, None, navigation.references),
    (lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, None, navigation.highlight),
    (lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, None, navigation.document_symbols),
    (lsp.TEXT_DOCUMENT_INLAY_HINT, None, hover.inlay_hints),
    (lsp.TEXT_DOCUMENT_FOLDING_RANGE, None, navigation.folding),
    (lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, hover.SEMANTIC_LEGEND, hover.semantic_tokens),
    (lsp.TEXT_DOCUMENT_RENAME, None, edits.rename),
    (lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["<", "(", ",", "="]), edits.completion),
    (lsp.WORKSPACE_SYMBOL, None, navigation.workspace_symbols),
    (lsp.TEXT_DOCUMENT_CODE_ACTION,
     lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Source, edits.FOLD_ALL]),
     edits.code_actions),
    (lsp.TEXT_DOCUMENT_SIGNATURE_HELP, lsp.SignatureHelpOptions(trigger_characters=["(", ","]), hover.signature_help),
    (lsp.TEXT_DOCUMENT_FORMATTING, None, edits.formatting),
    (graphs.GRAPH, None, graphs.graph),
]  # fmt: skip
# workspace/executeCommand: (command, the handler), in the order the server's capabilities list them
COMMANDS: list[tuple[str, Callable[..., Any]]] = [
    (views.RENDER, commands.render_view),
    (views.SAVE_AS_TEXT, commands.save_view_as_text),
    (views.FOLD_BINARY, commands.fold_binary),
    (views.RENDER_REVISION, commands.render_revision),
]
for method, options, handler in FEATURES:
    server.feature(method, options)(handler)
for command, handler in COMMANDS:
    server.command(command)(handler)


def serve(tcp: str | None = None, source_diagnostics: bool = False) -> None:
    server.source_diagnostics = source_diagnostics
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io(stdin=ChunkedStdin(sys.stdin.buffer))  # type: ignore[arg-type]


__all__ = ["DocState", "GraphLspServer", "serve", "server"]
