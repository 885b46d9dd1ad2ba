"""The language clients of the end-to-end tests (pytest-lsp over stdio): the server command, the profiles of the two
editors graphlsp is used from, and the start of a session. The fixtures made of them are tests/lsp/conftest.py's."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-m", "graphlsp.cli", "serve"]

# VS Code's profile: UTF-16 positions, pushed diagnostics (textDocument/publishDiagnostics)
VSCODE = lsp.ClientCapabilities(
    general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
    text_document=lsp.TextDocumentClientCapabilities(
        publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(related_information=True),
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
    ),
)
# Neovim 0.11's profile: UTF-8 positions, pulled diagnostics (textDocument/diagnostic), pulled again on the server's
# workspace/diagnostic/refresh
NEOVIM = lsp.ClientCapabilities(
    general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf8]),
    text_document=lsp.TextDocumentClientCapabilities(
        diagnostic=lsp.DiagnosticClientCapabilities(dynamic_registration=False),
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
    ),
    workspace=lsp.WorkspaceClientCapabilities(
        diagnostics=lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
    ),
)


async def start(client: LanguageClient, caps: lsp.ClientCapabilities, root: Path | None = ROOT,
                options: dict[str, Any] | None = None) -> None:  # fmt: skip
    """initialize and initialized: the workspace at `root`, the editor's settings `options`
    (initializationOptions)."""
    params = lsp.InitializeParams(capabilities=caps, root_uri=root.as_uri() if root is not None else None,
                                  initialization_options=options)  # fmt: skip
    await client.initialize_session(params)
