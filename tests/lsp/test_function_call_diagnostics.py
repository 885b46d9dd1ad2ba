"""In the editor, a shape error inside a model-local function shows at the call, the body's line as related
information (issue 16, item 3), and goes when an edit fixes the call."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.clients import SERVER, VSCODE, start

TEXT = (
    '<ir_version: 10, opset_import: ["" : 21, "local" : 1]>\n'
    "g (float[4, 3] a, float[5, 2] b) => (y) {\n"
    "  y = local.MM (a, b)\n"
    "}\n"
    '<domain: "local", opset_import: ["" : 21]>\n'
    "MM (x, w) => (out) {\n"
    "  out = MatMul (x, w)\n"
    "}\n"
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, VSCODE, root=None)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_call_carries_the_error_and_the_body_line(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "f.onnxtxt").as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(uri, "onnxtxt", 1, TEXT))
    )
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    [d] = [d for d in client.diagnostics[uri] if d.severity == lsp.DiagnosticSeverity.Error]
    assert d.code == "GL302" and d.range.start == lsp.Position(2, 12)
    assert d.related_information and d.related_information[0].location.range.start == lsp.Position(6, 8)
    assert d.related_information[0].location.uri == uri
    col = TEXT.splitlines()[1].index("5, 2] b")
    fix = lsp.Range(start=lsp.Position(1, col), end=lsp.Position(1, col + 1))  # b: [5, 2] -> [3, 2]
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangePartial(range=fix, text="3")],
        )
    )
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d for d in client.diagnostics[uri] if d.severity == lsp.DiagnosticSeverity.Error] == []
