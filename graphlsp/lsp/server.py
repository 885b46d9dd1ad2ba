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

from lsprotocol import types as lsp

from graphlsp.lsp import commands, diagnostics, documents, edits, graphs, hover, navigation, session, views
from graphlsp.lsp.protocol import ChunkedStdin
from graphlsp.lsp.workspace import DocState, GraphLspServer

server = GraphLspServer()

server.feature(lsp.INITIALIZE)(session.initialize)
server.feature(lsp.INITIALIZED)(session.initialized)
server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)(session.configuration_changed)

server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)(documents.did_open)
server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)(documents.did_change)
server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)(documents.watched_files_changed)
server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)(documents.did_close)
server.feature(
    lsp.TEXT_DOCUMENT_DIAGNOSTIC,
    lsp.DiagnosticOptions(identifier="graphlsp", inter_file_dependencies=False, workspace_diagnostics=False),
)(diagnostics.pull_diagnostics)

server.feature(lsp.TEXT_DOCUMENT_HOVER)(hover.hover)
server.feature(lsp.TEXT_DOCUMENT_DEFINITION)(navigation.definition)
server.feature(lsp.TEXT_DOCUMENT_REFERENCES)(navigation.references)
server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)(navigation.highlight)
server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)(navigation.document_symbols)
server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)(hover.inlay_hints)
server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)(navigation.folding)
server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, hover.SEMANTIC_LEGEND)(hover.semantic_tokens)
server.feature(lsp.TEXT_DOCUMENT_RENAME)(edits.rename)
server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["<", "(", ",", "="]))(
    edits.completion
)
server.feature(lsp.WORKSPACE_SYMBOL)(navigation.workspace_symbols)
server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Source, edits.FOLD_ALL]),
)(edits.code_actions)
server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP, lsp.SignatureHelpOptions(trigger_characters=["(", ","]))(
    hover.signature_help
)
server.feature(lsp.TEXT_DOCUMENT_FORMATTING)(edits.formatting)

server.feature(graphs.GRAPH)(graphs.graph)
server.command(views.RENDER)(commands.render_view)
server.command(views.SAVE_AS_TEXT)(commands.save_view_as_text)
server.command(views.FOLD_BINARY)(commands.fold_binary)


def serve(tcp: str | None = None) -> None:
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io(stdin=ChunkedStdin(sys.stdin.buffer))  # type: ignore[arg-type]


__all__ = ["DocState", "GraphLspServer", "serve", "server"]
