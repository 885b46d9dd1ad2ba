"""Issue 38 in the editor, through a real client (pytest-lsp, VS Code's profile): a binary model's view shows the
Python line that made a node in its hover, goes to it from the op, carries it as related information on the
findings, and with `serve --source-diagnostics` publishes the findings on the Python file too."""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from exports import MODULES, makes_lines
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.clients import NEOVIM, SERVER, VSCODE, start

ROOT = Path(__file__).resolve().parents[2]
LINES = makes_lines()
WAIT = 60


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[*SERVER, "--source-diagnostics"]))
async def vscode(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, VSCODE, ROOT)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[*SERVER, "--source-diagnostics"]))
async def neovim(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, NEOVIM, ROOT)
    yield lsp_client
    await lsp_client.shutdown_session()


async def _published(client: LanguageClient, uri: str) -> list[lsp.Diagnostic]:
    deadline = time.monotonic() + WAIT
    while uri not in client.diagnostics:
        assert time.monotonic() < deadline, f"no diagnostics published on {uri}"
        await asyncio.sleep(0.01)
    return client.diagnostics[uri]


async def _open_view(client: LanguageClient, path: Path) -> tuple[str, str]:
    uri = "graphlsp-view:" + path.as_uri()[len("file://") :]
    result: Any = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="graphlsp.renderView", arguments=[{"uri": uri}]))  # fmt: skip
    text = result["text"]
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=1, text=text)))  # fmt: skip
    return uri, text


def _at(text: str, needle: str) -> lsp.Position:
    i = text.index(needle)
    return lsp.Position(line=text.count("\n", 0, i), character=i - (text.rfind("\n", 0, i) + 1))


@pytest.mark.asyncio
@pytest.mark.parametrize("exporter", ["dynamo", "torchscript"])
async def test_view_hover_definition_related_and_source_diagnostics(
    vscode: LanguageClient, exported: dict, exporter: str, tmp_path: Path
) -> None:  # fmt: skip
    line, op = LINES["StridedConcat"]
    model = tmp_path / f"{exporter}.onnx"  # outside the workspace: the Python file is inside it
    shutil.copyfile(exported[(exporter, "StridedConcat")], model)
    uri, text = await _open_view(vscode, model)
    diags = await _published(vscode, uri)
    (gl320,) = [d for d in diags if d.code == "GL320"]
    related = [r for r in gl320.related_information or [] if r.location.uri == MODULES.as_uri()]
    assert len(related) == 1 and related[0].location.range.start.line == line - 1
    assert related[0].message.startswith(f"made by `torch_modules.py:{line}`")
    at = _at(text, f"= {op} ")
    at = lsp.Position(line=at.line, character=at.character + 2)
    hover = await vscode.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=at))  # fmt: skip
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    value = hover.contents.value
    assert f"made by `torch_modules.py:{line}` `return torch.cat([even, odd], dim=-1)" in value, value
    assert "Python stack (innermost first)" in value
    loc = await vscode.text_document_definition_async(lsp.DefinitionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=at))  # fmt: skip
    assert isinstance(loc, lsp.Location) and loc.uri == MODULES.as_uri() and loc.range.start.line == line - 1
    on_python = await _published(vscode, MODULES.as_uri())
    assert [(d.code, d.range.start.line) for d in on_python] == [("GL320", line - 1)]
    assert f"{model.name}: node" in on_python[0].message
    # closing the model takes its findings off the Python file
    vscode.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    deadline = time.monotonic() + WAIT
    while vscode.diagnostics[MODULES.as_uri()]:
        assert time.monotonic() < deadline, "the Python file keeps the closed model's findings"
        await asyncio.sleep(0.01)


def test_serve_has_the_flag() -> None:
    import subprocess

    out = subprocess.run([sys.executable, "-m", "graphlsp.cli", "serve", "--help"], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout  # fmt: skip
    assert "--source-diagnostics" in out


def _symbols_tree(symbols: list[Any]) -> list[Any]:
    return [(s.name, s.kind, _symbols_tree(s.children or [])) for s in symbols]


@pytest.mark.asyncio
async def test_outline_follows_the_module_hierarchy(vscode: LanguageClient) -> None:
    """dynamo_cnn.onnx: SmallCNN's `features` (a Sequential) holds features.0 ... features.8; the outline nests
    each node under the modules its name_scopes say, as onnx reads them."""
    import onnx

    model = ROOT / "corpus" / "models" / "dynamo_cnn.onnx"
    uri, _ = await _open_view(vscode, model)
    symbols = await vscode.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))  # fmt: skip
    assert symbols
    main = next(s for s in symbols if isinstance(s, lsp.DocumentSymbol) and s.kind == lsp.SymbolKind.Module)

    def paths(items: list[Any], prefix: str) -> dict[str, str]:
        """node symbol name -> the module path it sits under"""
        out: dict[str, str] = {}
        for s in items:
            if s.kind == lsp.SymbolKind.Class:
                out.update(paths(s.children or [], f"{prefix}.{s.name}" if prefix else s.name))
            else:
                out[s.name] = prefix
        return out

    placed = paths(main.children or [], "")
    proto = onnx.load(str(model), load_external_data=False)
    expected = {}
    for n in proto.graph.node:
        scopes = next(e.value for e in n.metadata_props if e.key == "pkg.torch.onnx.name_scopes")
        names = [s.strip(" '") for s in scopes.strip("[]").split(",")]
        expected[n.name] = names[-2] if len(names) > 1 else ""
    assert placed == expected
    assert any(s.kind == lsp.SymbolKind.Class and s.name == "features" for s in main.children or [])


@pytest.mark.asyncio
async def test_pull_client_gets_related_information_and_the_python_file(neovim: LanguageClient, exported: dict,
                                                                        tmp_path: Path) -> None:  # fmt: skip
    line, _ = LINES["PositionTable"]
    model = tmp_path / "m.onnx"
    shutil.copyfile(exported[("dynamo", "PositionTable")], model)
    uri = model.as_uri()  # Neovim's buffer of the file itself
    text = (await neovim.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="graphlsp.renderView", arguments=[{"uri": uri}])))["text"]  # fmt: skip
    neovim.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=1, text=text)))  # fmt: skip
    report = await neovim.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))  # fmt: skip
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    (gl320,) = [d for d in report.items if d.code == "GL320"]
    (rel,) = [r for r in gl320.related_information or [] if r.location.uri == MODULES.as_uri()]
    assert rel.location.range.start.line == line - 1
    on_python = await _published(neovim, MODULES.as_uri())
    assert [(d.code, d.range.start.line) for d in on_python] == [("GL320", line - 1)]


@pytest.mark.asyncio
async def test_outline_of_a_torchscript_export_follows_its_scoped_names(vscode: LanguageClient) -> None:
    """torchscript_cnn.onnx: `/features/features.0/Conv` sits under features > 0, `/fc/Gemm` under fc,
    `/Flatten` at the graph's top."""
    uri, _ = await _open_view(vscode, ROOT / "corpus" / "models" / "torchscript_cnn.onnx")
    symbols = await vscode.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))  # fmt: skip
    main = next(s for s in symbols or [] if isinstance(s, lsp.DocumentSymbol) and s.kind == lsp.SymbolKind.Module)
    top = {s.name: s for s in main.children or []}
    assert top["features"].kind == lsp.SymbolKind.Class and top["fc"].kind == lsp.SymbolKind.Class
    assert "/Flatten" in top and top["/Flatten"].kind != lsp.SymbolKind.Class
    first = {s.name: s for s in top["features"].children or []}
    assert [c.name for c in first["0"].children or []] == ["/features/features.0/Conv"]
    assert [c.name for c in top["fc"].children or []] == ["/fc/Gemm"]


@pytest.mark.asyncio
async def test_hover_of_a_torchscript_node_names_its_module(vscode: LanguageClient) -> None:
    """torchscript_bert.onnx has no frames (exported without verbose): its nodes' hover still says the module its
    scoped name walks through."""
    uri, text = await _open_view(vscode, ROOT / "corpus" / "models" / "torchscript_bert.onnx")
    at = _at(text, '["/encoder/layer.0/attention/self/query/MatMul"]')
    at = lsp.Position(line=at.line, character=at.character + text.splitlines()[at.line][at.character:].index("MatMul ("))
    hover = await vscode.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=at))  # fmt: skip
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "module `encoder.layer.0.attention.self.query`" in hover.contents.value, hover.contents.value
