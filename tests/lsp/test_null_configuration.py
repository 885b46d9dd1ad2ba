"""A `null` reply to workspace/configuration (VS Code sends one when no `graphlsp` settings are set) is no settings:
no traceback, and the document is checked with the project's settings."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import attrs
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.clients import SERVER, VSCODE, start

BROKEN = ('<ir_version: 10, opset_import: ["" : 21]>\ng (float[2, 3] a, float[4, 5] b) => (float[2, 3] c) {\n'
          "  c = Add (a, b)\n}\n")  # fmt: skip
CONFIGURING = attrs.evolve(VSCODE, workspace=lsp.WorkspaceClientCapabilities(configuration=True))


def _replying(client: LanguageClient, reply: Any) -> None:
    """The client answers workspace/configuration with `reply` (pytest-lsp's own handler answers per item)."""
    asked: list[Any] = []

    def configuration(params: lsp.ConfigurationParams) -> Any:
        asked.append(params)
        return reply

    client.protocol.fm._features[lsp.WORKSPACE_CONFIGURATION] = configuration
    client.asked = asked  # type: ignore[attr-defined]


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    _replying(lsp_client, None)
    await start(lsp_client, CONFIGURING)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_null_configuration_is_no_settings(client: LanguageClient, tmp_path: Any,
                                                    capfd: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    uri = (tmp_path / "broken.onnxtxt").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=1, text=BROKEN)))  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not client.diagnostics.get(uri):
        await asyncio.sleep(0.05)
    assert client.asked, "the server asked for its settings"  # type: ignore[attr-defined]
    assert {str(d.code) for d in client.diagnostics.get(uri, [])} == {"GL301"}
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=2, character=7)))  # fmt: skip
    assert hover is not None  # the server goes on answering
    err = capfd.readouterr().err
    assert "Traceback" not in err and "workspace/configuration failed" not in err, err
