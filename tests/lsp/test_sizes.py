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


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def misnamed(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, VSCODE, options={"graphlsp": {"dims": {"heigth": 48}, "inputShapes": {"x": [2, 9]}}})
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_sizes_the_model_contradicts_are_a_message(misnamed: LanguageClient, tmp_path: Path) -> None:
    """`check` refuses them (exit 2); the editor says so once, and goes on checking the model."""
    uri = (tmp_path / "traced.onnxtxt").as_uri()
    misnamed.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=1, text=TRACED)))  # fmt: skip
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and len([m for m in misnamed.messages if "editor settings" in m.message]) < 2:
        await asyncio.sleep(0.05)
    said = [m.message for m in misnamed.messages if "editor settings" in m.message]
    assert "graphlsp: editor settings: dims: heigth: no dim of the model is named 'heigth'; it has N" in said, said
    assert "graphlsp: editor settings: inputShapes: x: dim 1 of 'x' ([N, 8]) is fixed at 8, not 9: onnxruntime " \
           "refuses the input at any other size" in said, said  # fmt: skip
    while time.monotonic() < deadline and uri not in misnamed.diagnostics:
        await asyncio.sleep(0.05)
    assert uri in misnamed.diagnostics  # the document is checked all the same
