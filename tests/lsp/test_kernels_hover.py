"""The editor's side of the deployment rules: `targets` from the editor's settings, GL7xx diagnostics, and the
kernels listed on a hover over a node's op (real LSP client over stdio)."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.clients import ROOT, SERVER, VSCODE, start

TEXT = ('<ir_version: 10, opset_import: ["" : 21]>\n'
        "g (int8[N] x, bfloat16[N] b) => (int8[N] y, bfloat16[N] z) {\n  y = Max (x, x)\n  z = Abs (b)\n}\n")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def gpu(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, VSCODE, options={"graphlsp": {"targets": ["onnxruntime:cpu", "onnxruntime:cuda"]}})
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_targets_from_the_editor_diagnostics_and_hover(gpu: LanguageClient) -> None:
    uri = (ROOT / "kernels.onnxtxt").as_uri()
    gpu.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=1, text=TEXT)))  # fmt: skip
    await gpu.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    got = sorted((d.range.start.line, d.code) for d in gpu.diagnostics[uri] if str(d.code).startswith("GL7"))
    assert got == [(2, "GL702"), (3, "GL701")]  # Max int8: CPU only; Abs bfloat16: no CPU kernel (CUDA has one)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    hover = await gpu.text_document_hover_async(lsp.HoverParams(text_document=doc,
                                                                 position=lsp.Position(line=2, character=7)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    text = hover.contents.value
    assert "**Kernels**" in text
    assert "onnxruntime 1.32 CPU: kernel Max(13) for int8" in text
    assert "CUDA: **ep-fallback**" in text and "not int8" in text
    hover = await gpu.text_document_hover_async(lsp.HoverParams(text_document=doc,
                                                                 position=lsp.Position(line=3, character=7)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "CPU: **no-kernel** (error)" in hover.contents.value and "CUDA: kernel Abs(13) for bfloat16" in \
        hover.contents.value
    actions = await gpu.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc, range=lsp.Range(start=lsp.Position(line=3, character=6), end=lsp.Position(line=3, character=9)),
        context=lsp.CodeActionContext(diagnostics=[])))  # fmt: skip
    titles = [x.title for x in actions or [] if isinstance(x, lsp.CodeAction)]
    assert "Cast Abs to float and back to bfloat16" in titles
    gpu.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"graphlsp": {"targets": ["onnxruntime:cuda"]}}))
    await gpu.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    got = sorted((d.range.start.line, d.code) for d in gpu.diagnostics[uri] if str(d.code).startswith("GL7"))
    assert got == [(2, "GL702")]
