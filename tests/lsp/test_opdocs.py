"""Op library files (`*.onnxop`) in the language server, end to end over stdio (pytest-lsp), and a project's own op
in a model: diagnostics as `graphlsp check` reports them, hover, completion, symbols and definition in the library;
hover and definition on a node of a declared op in a model (text and a binary's view); the models checked again
as the library is edited in the editor."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import onnx
import pytest
from lsprotocol import types as lsp
from onnx import TensorProto, helper
from pytest_lsp import LanguageClient

from graphlsp.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "graphlsp" / "oplib" / "libraries" / "onnxruntime.onnxop"
WAIT = 30  # seconds for a notification the server owes

LIBRARY = """\
library acme "1.0"
domain com.acme

op MyOp since 1 {
  doc    "Y = scale * (A @ B), batched over A's leading dims."
  input  A: T[*batch, M, K]
  input  B: T[K, N]
  output Y: T[*batch, M, N]
  attr   scale: float = 1.0 "multiplies the product"
  type   T: float, float16 "the element type"
  dim    K "the inner dimension" GL302
}

op Heads since 1 {
  input  x: T[B, S, H]
  output y: T[B, num_heads, S, H / num_heads]
  attr   num_heads: int
  type   T: float
}
"""

MODEL = """\
<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1, "com.microsoft" : 1]>
g (float[batch, 4, 8] x, float[8, 16] w, float[16] b) => (float[batch, 4, 16] y, float[batch, 4, 16] g) {
  y = com.acme.MyOp <scale = 0.5> (x, w)
  g = com.microsoft.FastGelu (y, b)
}
"""

BROKEN = """\
library broken
domain com.acme

op Typo since 1 {
  input  x: T[N]
  output y: T[M]
  type   T: float, floaty
  attr   k: nt = 3
}

op Bad since 1 {
  input  x: T[N
  output y: T[N]
  attr   k: int = 3
  type   T: float
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "acme.onnxop").write_text(LIBRARY)
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = ["ops/*.onnxop"]\n')
    (tmp_path / "model.onnxtxt").write_text(MODEL)
    return tmp_path


def _open(client: LanguageClient, path: Path, text: str | None = None, language: str = "onnxop") -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id=language, version=1, text=text if text is not None else path.read_text())))  # fmt: skip
    return uri


def _pos(text: str, needle: str, delta: int = 0) -> lsp.Position:
    i = text.index(needle) + delta
    return lsp.Position(line=text.count("\n", 0, i), character=i - (text.rfind("\n", 0, i) + 1))


def _replace_all(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))  # fmt: skip


def _is_push(client: LanguageClient) -> bool:
    caps = client.capabilities
    return caps is None or caps.text_document is None or caps.text_document.diagnostic is None


async def _diagnostics(client: LanguageClient, uri: str) -> list[lsp.Diagnostic]:
    """The document's current diagnostics: pulled (Neovim), or the last ones pushed for it (VS Code)."""
    if _is_push(client):
        return list(client.diagnostics.get(uri, []))
    report = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))  # fmt: skip
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    return list(report.items)


async def _changed(client: LanguageClient, uri: str, refreshes: int, before: object) -> list[lsp.Diagnostic]:
    """A model's diagnostics after a change elsewhere: pushed again (VS Code; `before` is what was pushed last), or
    pulled again after the server asked the client to (workspace/diagnostic/refresh, Neovim)."""
    if _is_push(client):
        return await _pushed(client, uri, before)
    found = await _diagnostics(client, uri)  # the model's new analysis was queued before the pull: it waits for it
    for _ in range(WAIT * 20):
        if client.diagnostic_refresh_count > refreshes:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("the server never asked for the diagnostics again")


async def _pushed(client: LanguageClient, uri: str, before: object = None) -> list[lsp.Diagnostic]:
    """Waits for a push of the document's diagnostics after `before`, the list pushed last (the client keeps the
    last one per document, a new list at each push; None: the first push)."""
    for _ in range(WAIT * 20):
        now = client.diagnostics.get(uri)
        if now is not None and now is not before:
            return list(now)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics pushed for {uri} within {WAIT} s")


def _check_json(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    from graphlsp.oplib.catalog import CATALOG

    try:
        main(["check", "--no-cache", "--format", "json", str(path)])
    finally:
        CATALOG.clear_project()  # this process's catalog: the project's libraries are not for other tests
    result: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return result


@pytest.mark.asyncio
async def test_library_diagnostics_are_located_agree_with_check_and_follow_edits(
    vscode: LanguageClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.onnxop"
    path.write_text(BROKEN)
    uri = _open(vscode, path)
    diags = await _pushed(vscode, uri)
    got = sorted((d.range.start.line + 1, d.range.start.character + 1, d.code, d.message) for d in diags)
    # the same findings, codes and places as `graphlsp check` on the file
    expected = sorted((d["line"], d["col"], d["code"], d["message"]) for d in _check_json(path, capsys))
    assert got == expected
    codes = {(line, code) for line, _, code, _ in got}
    assert (12, "GL601") in codes  # `T[N` never closed: a syntax error at its place
    assert {(6, "GL602"), (7, "GL602"), (8, "GL602")} <= codes  # M bound by no input, `floaty`, `nt`
    assert all(d.severity == lsp.DiagnosticSeverity.Error for d in diags)
    # fix the op: the diagnostics go
    fixed = BROKEN.replace("T[N\n", "T[N]\n").replace("T[M]", "T[N]").replace(", floaty", "").replace(": nt", ": int")
    last = vscode.diagnostics[uri]
    _replace_all(vscode, uri, 2, fixed)
    assert await _pushed(vscode, uri, last) == []
    # an unused type constraint is a warning (GL603), as in `graphlsp check`
    last = vscode.diagnostics[uri]
    _replace_all(vscode, uri, 3, fixed.replace("  type   T: float\n}", "  type   T: float\n  type   U: int64\n}", 1))
    [warning] = await _pushed(vscode, uri, last)
    assert (warning.code, warning.severity) == ("GL603", lsp.DiagnosticSeverity.Warning)
    assert "'U' is used by no input or output" in warning.message


@pytest.mark.asyncio
async def test_hover_completion_symbols_definition_in_a_library(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "acme.onnxop"
    path.write_text(LIBRARY)
    uri = _open(client, path)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    assert await (_pushed(client, uri) if _is_push(client) else _diagnostics(client, uri)) == []

    async def hover(needle: str, delta: int = 0) -> str:
        h = await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=_pos(LIBRARY, needle,
                                                                                                    delta)))  # fmt: skip
        assert h is not None and isinstance(h.contents, lsp.MarkupContent), needle
        return h.contents.value

    # the op's name: its signature and documentation
    text = await hover("MyOp")
    assert text.startswith("**MyOp** (com.acme, since 1; the acme op library)")
    assert "(A: T[*batch, M, K], B: T[K, N])" in text and "-> (Y: T[*batch, M, N])" in text
    assert "Y = scale * (A @ B)" in text and "`scale: float = 1.0`: multiplies the product" in text
    # an attribute, a type constraint, a dim symbol: their declarations
    assert "attr   scale" not in (t := await hover("scale: float")) and "multiplies the product" in t
    text = await hover("T[K, N]")
    assert text.startswith("**T**: type constraint of MyOp") and "type   T: float, float16" in text
    text = await hover("K, N]")
    assert "**K**: dim symbol of MyOp, bound by input `A` (dim -1 of `[*batch, M, K]`)" in text
    assert "the inner dimension; a disagreement is reported as GL302" in text
    text = await hover("num_heads, S")
    assert text.startswith("**num_heads**: attribute of Heads, required")

    # go to definition: a dim symbol of an output's shape to the input shape that binds it
    loc = await client.text_document_definition_async(
        lsp.DefinitionParams(text_document=doc, position=_pos(LIBRARY, "H / num_heads")))  # fmt: skip
    assert isinstance(loc, lsp.Location) and loc.uri == uri
    assert loc.range.start == _pos(LIBRARY, "H]\n  output y")
    loc = await client.text_document_definition_async(
        lsp.DefinitionParams(text_document=doc, position=_pos(LIBRARY, "T[B, S, H]")))  # fmt: skip
    assert isinstance(loc, lsp.Location) and loc.range.start == _pos(LIBRARY, "T: float\n}")

    # completion: keywords where a statement starts, constraints and dtypes after `input x:`, dims in a shape
    async def complete(text: str, at: lsp.Position) -> set[str]:
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=complete.version),  # type: ignore[attr-defined]
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))  # fmt: skip
        complete.version += 1  # type: ignore[attr-defined]
        items = await client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=at))
        assert isinstance(items, lsp.CompletionList)
        return {i.label for i in items.items}

    complete.version = 2  # type: ignore[attr-defined]
    typing = LIBRARY.replace("  dim    K", "  input  C: \n  dim    K")
    labels = await complete(typing, _pos(typing, "input  C: ", len("input  C: ")))
    assert {"T", "float", "int64", "bfloat16", "seq"} <= labels and "input" not in labels
    typing = LIBRARY.replace("  dim    K", "  output Z: T[*batch, ]\n  dim    K")
    labels = await complete(typing, _pos(typing, "T[*batch, ]", len("T[*batch, ")))
    assert {"M", "K", "N", "*batch", "scale", "dim", "rank"} <= labels
    typing = LIBRARY.replace("  dim    K", "  \n  dim    K")
    labels = await complete(typing, _pos(typing, "  \n  dim    K", 2))
    assert {"input", "output", "attr", "type", "require", "dim", "let", "shape", "doc"} <= labels
    labels = await complete(typing, _pos(typing, "op Heads"))
    assert labels == {"op", "library", "domain"}
    typing = LIBRARY.replace("attr   num_heads: int", "attr   num_heads: ")
    labels = await complete(typing, _pos(typing, "num_heads: \n", len("num_heads: ")))
    assert {"int", "ints", "float", "string", "tensor"} <= labels and "T" not in labels

    # document symbols: the library, its ops, and their inputs, outputs, attributes and type constraints
    _replace_all(client, uri, complete.version, LIBRARY)  # type: ignore[attr-defined]
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc))
    assert symbols is not None
    [lib] = symbols
    assert isinstance(lib, lsp.DocumentSymbol) and lib.name == "acme" and lib.kind == lsp.SymbolKind.Package
    assert [(o.name, o.kind) for o in lib.children or []] == [("MyOp", lsp.SymbolKind.Function),
                                                             ("Heads", lsp.SymbolKind.Function)]  # fmt: skip
    my = (lib.children or [])[0]
    assert [(c.name, c.detail) for c in my.children or []] == [
        ("A", "T[*batch, M, K]"), ("B", "T[K, N]"), ("Y", "T[*batch, M, N]"), ("scale", "float = 1.0"),
        ("T", "float, float16"),
    ]  # fmt: skip
    assert my.selection_range.start == _pos(LIBRARY, "MyOp")


@pytest.mark.asyncio
async def test_an_op_typed_halfway_still_has_an_outline_and_hovers(vscode: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "broken.onnxop"
    uri = _open(vscode, path, BROKEN)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    symbols = await vscode.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc))
    assert symbols is not None
    [lib] = symbols
    assert isinstance(lib, lsp.DocumentSymbol)
    bad = [o for o in lib.children or [] if o.name == "Bad"]
    assert bad and [c.name for c in bad[0].children or []] == ["y", "k", "T"]  # `input x: T[N` does not parse
    h = await vscode.text_document_hover_async(lsp.HoverParams(text_document=doc, position=_pos(BROKEN, "k: int")))
    assert h is not None and isinstance(h.contents, lsp.MarkupContent)
    assert h.contents.value.startswith("**k**: attribute of Bad, optional")
    h = await vscode.text_document_hover_async(lsp.HoverParams(text_document=doc, position=_pos(BROKEN, "k: nt")))
    assert h is not None and isinstance(h.contents, lsp.MarkupContent)  # an op with errors: still there
    assert h.contents.value.startswith("**k**: attribute of Typo")


@pytest.mark.asyncio
async def test_a_project_op_in_a_model_hover_definition_and_library_edits(
    client: LanguageClient, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = project / "model.onnxtxt"
    muri = _open(client, model, language="onnxtxt")
    if _is_push(client):
        await _pushed(client, muri)
    before = await _diagnostics(client, muri)
    assert [d for d in before if d.severity == lsp.DiagnosticSeverity.Error] == []
    assert not [d for d in before if d.code in ("GL204", "GL316")]  # declared, and the shipped FastGelu too
    mdoc = lsp.TextDocumentIdentifier(uri=muri)

    # hover on the node's op: the declaration and its documentation
    h = await client.text_document_hover_async(lsp.HoverParams(text_document=mdoc, position=_pos(MODEL, "MyOp")))
    assert h is not None and isinstance(h.contents, lsp.MarkupContent)
    assert h.contents.value.startswith("**MyOp** (com.acme, opset 1; since version 1)")
    assert "declared in the acme op library: `acme.onnxop` line 4" in h.contents.value
    assert "Y = scale * (A @ B), batched over A's leading dims." in h.contents.value
    assert "input  B: T[K, N]" in h.contents.value  # the declaration itself

    # go to definition: the .onnxop file, at the op's name
    loc = await client.text_document_definition_async(
        lsp.DefinitionParams(text_document=mdoc, position=_pos(MODEL, "MyOp", 2)))  # fmt: skip
    assert isinstance(loc, lsp.Location)
    assert Path(loc.uri.removeprefix("file://")).resolve() == (project / "ops" / "acme.onnxop").resolve()
    assert loc.range.start == _pos(LIBRARY, "MyOp")
    # and for an op of the shipped onnxruntime library
    loc = await client.text_document_definition_async(
        lsp.DefinitionParams(text_document=mdoc, position=_pos(MODEL, "FastGelu")))  # fmt: skip
    assert isinstance(loc, lsp.Location) and loc.uri.endswith("graphlsp/oplib/libraries/onnxruntime.onnxop")
    shipped = SHIPPED.read_text()
    assert loc.range.start == _pos(shipped, "FastGelu since")

    # the library opened and edited: B's shape contract now wants [N, K], so w ([8, 16]) no longer fits
    luri = _open(client, project / "ops" / "acme.onnxop")
    assert await (_pushed(client, luri) if _is_push(client) else _diagnostics(client, luri)) == []
    edited = LIBRARY.replace("input  B: T[K, N]", "input  B: T[N, K]")
    refreshes, last = client.diagnostic_refresh_count, client.diagnostics.get(muri)
    _replace_all(client, luri, 2, edited)
    after = await _changed(client, muri, refreshes, last)
    [err] = [d for d in after if d.severity == lsp.DiagnosticSeverity.Error]
    assert err.code == "GL302" and err.range.start.line == 2
    assert "K (the inner dimension) differs: dim 2 of x (8) and dim 1 of w (16)" in err.message
    # the file on disk is untouched: `graphlsp check` still finds nothing wrong
    assert not [d for d in _check_json(model, capsys) if d["severity"] == "error"]

    # a syntax error while typing: the library's diagnostics say so; the op is left out for the model (GL316)
    refreshes, last, last_lib = client.diagnostic_refresh_count, client.diagnostics.get(muri), client.diagnostics.get(luri)
    _replace_all(client, luri, 3, edited.replace("input  B: T[N, K]", "input  B: T[N, K"))
    lib_diags = await _pushed(client, luri, last_lib) if _is_push(client) else await _diagnostics(client, luri)
    after = await _changed(client, muri, refreshes, last)
    assert [d.code for d in lib_diags] == ["GL601"]
    assert {d.code for d in after} & {"GL302", "GL316"} == {"GL316"}

    # closed without saving: the file on disk is the library again, and the model is as before
    refreshes, last = client.diagnostic_refresh_count, client.diagnostics.get(muri)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=luri)))
    after = await _changed(client, muri, refreshes, last)
    assert sorted((d.code, d.message) for d in after) == sorted((d.code, d.message) for d in before)


@pytest.mark.asyncio
async def test_a_binary_models_view_hovers_and_goes_to_the_declaration(vscode: LanguageClient, project: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("MyOp", ["x", "w"], ["y"], domain="com.acme", name="mm")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 8]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.acme", 1)]),
              project / "model.onnx")  # fmt: skip
    uri = _open(vscode, project / "model.onnx", "", language="onnxtxt")
    await _pushed(vscode, uri)
    view = await vscode.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="graphlsp.renderView", arguments=[{"uri": uri}]))  # fmt: skip
    text = view["text"]
    at = _pos(text, "com.acme.MyOp", len("com.acme."))
    doc = lsp.TextDocumentIdentifier(uri=uri)
    h = await vscode.text_document_hover_async(lsp.HoverParams(text_document=doc, position=at))
    assert h is not None and isinstance(h.contents, lsp.MarkupContent)
    assert "declared in the acme op library: `acme.onnxop` line 4" in h.contents.value
    loc = await vscode.text_document_definition_async(lsp.DefinitionParams(text_document=doc, position=at))
    assert isinstance(loc, lsp.Location) and loc.uri.endswith("/ops/acme.onnxop")
    assert loc.range.start == _pos(LIBRARY, "MyOp")
