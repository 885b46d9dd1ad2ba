"""`graphlsp/graph` over stdio with a real LSP client: the document's graph as the CLI's page has it, following
edits (unsaved text included), for text models and for a binary's view (lines those of the view)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import onnx
import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.lsp.test_binary_view import MODELS
from tests.lsp.test_binary_view import _open as open_view

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "examples" / "broken.onnxtxt"
IF_MODEL = "silero_vad_16k_op15.onnx"


def _plain(x: Any) -> Any:
    """pygls hands a custom request's result over as named tuples: back to JSON's dicts and lists."""
    if hasattr(x, "_asdict"):
        return {k: _plain(v) for k, v in x._asdict().items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


async def _graph(client: LanguageClient, uri: str, fmt: str = "json") -> dict[str, Any]:
    result = await client.protocol.send_request_async("graphlsp/graph", {"uri": uri, "format": fmt})
    return _plain(result)


def _cli_json(path: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "graphlsp", "graph", "--format", "json", str(path)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout)


def _open_text(client: LanguageClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=1, text=text)))  # fmt: skip
    return uri


@pytest.mark.asyncio
async def test_text_graph_is_the_cli_page_data_and_follows_edits(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "broken.onnxtxt"
    text = BROKEN.read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    uri = _open_text(client, path, text)
    got = await _graph(client, uri)
    assert got.pop("uri") == uri and got.pop("version") == 1
    # keys are JSON's own (pygls's named tuples rename none of them here): the same data as `graphlsp graph`
    assert got == _cli_json(path)
    assert any(n.get("problems") for n in got["graph"]["nodes"])

    # an unsaved edit: a new node at the end of the graph, on its own line
    lines = text.splitlines(keepends=True)
    at = max(i for i, line in enumerate(lines) if line.strip() == "}")
    new = "    extra = Relu (x)\n"
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=lsp.Position(line=at, character=0), end=lsp.Position(line=at, character=0)),
            text=new)]))  # fmt: skip
    after = await _graph(client, uri)
    assert after["version"] == 2
    assert len(after["graph"]["nodes"]) == len(got["graph"]["nodes"]) + 1
    added = [n for n in after["graph"]["nodes"] if "extra" in n["outputs"]]
    assert len(added) == 1 and added[0]["op"] == "Relu" and added[0]["line"] == at
    assert after["graph"]["types"]["extra"] == after["graph"]["types"]["x"]  # Relu keeps its input's type

    page = await _graph(client, uri, "html")
    assert page["html"].startswith("<!DOCTYPE html>") and '"extra"' in page["html"]


@pytest.mark.asyncio
async def test_binary_view_graph(client: LanguageClient, tmp_path: Path) -> None:
    if IF_MODEL not in MODELS:
        pytest.skip("../shared/realworld is not here")
    uri, text = await open_view(client, MODELS[IF_MODEL])
    got = await _graph(client, uri)
    proto = onnx.load(str(MODELS[IF_MODEL]), load_external_data=False)
    nodes = got["graph"]["nodes"]
    assert [n["op"] for n in nodes] == [n.op_type if not n.domain else f"{n.domain}.{n.op_type}"
                                        for n in proto.graph.node]  # fmt: skip
    view_lines = text.splitlines()
    for n, p in zip(nodes, proto.graph.node, strict=True):
        assert n["line"] is not None and p.op_type in view_lines[n["line"]]  # the view's line of the node
    bodies = [n for n in nodes if n.get("bodies")]
    assert bodies and all(b[1]["nodes"] for n in bodies for b in n["bodies"])  # the If's branches


@pytest.mark.asyncio
async def test_bad_params_are_answered(client: LanguageClient) -> None:
    with pytest.raises(Exception, match="uri"):
        await client.protocol.send_request_async("graphlsp/graph", {"format": "svg"})
    with pytest.raises(Exception, match="not open"):
        await client.protocol.send_request_async("graphlsp/graph", {"uri": "file:///nowhere.onnxtxt"})
