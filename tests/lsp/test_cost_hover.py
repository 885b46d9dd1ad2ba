"""The cost in the editor, through a real client: the hover on a node's op gives its FLOPs and bytes, the hover on a
graph output its size and what computing it costs, an inlay hint after the graph's name the model's totals."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "attention.onnxtxt"


def _pos(text: str, needle: str, delta: int = 0) -> lsp.Position:
    i = text.index(needle) + delta
    return lsp.Position(line=text.count("\n", 0, i), character=i - (text.rfind("\n", 0, i) + 1))


@pytest.mark.asyncio
async def test_cost_in_hover_and_header_hint(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = EXAMPLE.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=1, text=text)))  # fmt: skip
    doc = lsp.TextDocumentIdentifier(uri=uri)
    hover = await client.text_document_hover_async(lsp.HoverParams(text_document=doc,
                                                                   position=_pos(text, "= MatMul", 2)))  # fmt: skip
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "**cost**: FLOPs `" in hover.contents.value and "*batch*seq" in hover.contents.value
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=999, character=0))
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=doc, range=whole))
    header = [h for h in hints or [] if str(h.label).startswith(" FLOPs ")]
    assert len(header) == 1 and "params" in str(header[0].label)
