"""Input sizes in the editor: `dims` in the client's settings checks text models and binary views at those sizes,
and a change of the setting checks them again."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import ROOT
from tests.lsp.clients import SERVER, VSCODE, start

YOLO = ROOT / "corpus" / "sizes" / "tiny_yolo.onnx"
TRACED = ('<ir_version: 10, opset_import: ["" : 21]>\ng (float[N, 8] x) => (float[1, 8] y) {\n'
          "  shape = Constant <value = int64[2] {1, 8}> ()\n  y = Reshape (x, shape)\n}\n")  # fmt: skip
WAIT = 30


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, VSCODE, options={"graphlsp": {"dims": {"N": 2, "height": 48}}})
    yield lsp_client
    await lsp_client.shutdown_session()


async def _settled(client: LanguageClient, uri: str, want: set[str]) -> set[str]:
    """The codes of the document's pushed diagnostics once they are `want` (or as they are after WAIT)."""
    deadline = time.monotonic() + WAIT
    while True:
        got = {str(d.code) for d in client.diagnostics.get(uri, [])}
        if got == want or time.monotonic() > deadline:
            return got
        await asyncio.sleep(0.05)


@pytest.mark.asyncio
async def test_dims_from_the_editor(client: LanguageClient, tmp_path: Path) -> None:
    text_uri = (tmp_path / "traced.onnxtxt").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=text_uri, language_id="onnxtxt", version=1, text=TRACED)))  # fmt: skip
    assert await _settled(client, text_uri, {"GL304"}) == {"GL304"}  # N = 2: the Reshape fails
    model = tmp_path / "yolo.onnx"
    shutil.copyfile(YOLO, model)
    view_uri = "graphlsp-view:" + model.as_uri()[len("file://") :]
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="graphlsp.renderView", arguments=[{"uri": view_uri}]))  # fmt: skip
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=view_uri, language_id="onnxtxt", version=1, text=result["text"])))
    assert await _settled(client, view_uri, {"GL303"}) == {"GL303"}  # height 48: the Concat fails
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"graphlsp": {"dims": {}}}))
    assert await _settled(client, text_uri, {"GL321"}) == {"GL321"}  # no sizes: the contracts
    assert await _settled(client, view_uri, {"GL320"}) == {"GL320"}
