"""Binary models in the language server: a `.onnx` document is the server's read-only text view of the file
(graphlsp.view), whatever text the client sends; every language feature works on it; its diagnostics are what
`graphlsp check` says of the binary; edits are refused; the view follows the file on disk; two commands write new
files beside the model. Each feature test runs with a push client (VS Code profile, `graphlsp-view:` URIs as the
extension opens them) and a pull client (Neovim profile, the model's own `file:` URI)."""

from __future__ import annotations

import asyncio
import collections
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from graphlsp.view import render
from tests.conftest import needs, shared, shared_reason
from tests.lsp.binary_targets import Targets, realworld, targets
from tests.lsp.rawclient import RawClient

MODELS = {p.name: p for p in realworld()}
IF_MODEL = "silero_vad_16k_op15.onnx"  # If subgraphs, Constants, fold hints, 14 findings
NEGATIVE_DIMS = "ch_ppocr_mobile_v2.0_cls_infer.onnx"  # findings only the binary reader makes (GL110)
CONV_MODEL = "ch_PP-OCRv4_det_infer.onnx"  # Conv with symbolic dims; its only findings are GL320 (sizes)
WAIT = 30  # seconds

pytestmark = needs({IF_MODEL, NEGATIVE_DIMS, CONV_MODEL} <= set(MODELS), shared_reason("realworld"))


def _copy(name: str, folder: Path, as_name: str | None = None) -> Path:
    """A writable copy of a real model."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / (as_name or name)
    shutil.copyfile(MODELS[name], out)
    return out


def _uri(client: LanguageClient, path: Path) -> str:
    """The document a client opens for a model: VS Code's virtual document, Neovim's buffer of the file."""
    if client.profile == "vscode":  # type: ignore[attr-defined]
        return "graphlsp-view:" + path.as_uri()[len("file://") :]
    return path.as_uri()


async def _render(client: LanguageClient, where: dict[str, str]) -> dict[str, Any]:
    result = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="graphlsp.renderView", arguments=[where])
    )
    assert isinstance(result, dict), result
    return result


async def _open(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> tuple[str, str]:
    """Opens the model the way the editors do: the view's text from the server, then didOpen with it."""
    uri = _uri(client, path)
    if text is None:
        text = (await _render(client, {"uri": uri}))["text"]
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=version, text=text)))  # fmt: skip
    return uri, text


async def _diagnostics(client: LanguageClient, uri: str) -> list[lsp.Diagnostic]:
    """The document's current diagnostics: pulled (Neovim), or the last ones pushed (VS Code)."""
    if client.profile == "neovim":  # type: ignore[attr-defined]
        report = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        return report.items
    deadline = time.monotonic() + WAIT
    while uri not in client.diagnostics:
        assert time.monotonic() < deadline, "no diagnostics published"
        await asyncio.sleep(0.01)
    return client.diagnostics[uri]


def _as_check(diags: list[lsp.Diagnostic]) -> collections.Counter[tuple[str, str]]:
    return collections.Counter((str(d.code), d.message) for d in diags)


def _placed_like_check(diags: list[lsp.Diagnostic], t: Targets) -> None:
    """Every diagnostic about a node sits on the view's line of that node (its op is written there)."""
    lines = t.text.splitlines()
    ops = collections.defaultdict(list)
    for d in t.check:
        ops[(d.code, d.message)].append(d.op)
    for d in diags:
        op = ops[(str(d.code), d.message)][0]
        if op is not None:
            assert op.rsplit(".", 1)[-1] in lines[d.range.start.line], (d, lines[d.range.start.line][:200])


def _pos(line: int, col: int) -> lsp.Position:
    return lsp.Position(line=line, character=col)


def _position(text: str, offset: int) -> lsp.Position:
    return _pos(text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1))


@pytest.mark.asyncio
@pytest.mark.parametrize("name", [CONV_MODEL, IF_MODEL, NEGATIVE_DIMS])
async def test_a_binary_model_is_served_as_its_view_with_check_diagnostics(
    client: LanguageClient, name: str, tmp_path: Path
) -> None:
    path = _copy(name, tmp_path)
    before = path.read_bytes()
    t = targets(path)
    by_path = await _render(client, {"path": str(path)})
    assert by_path["text"] == t.text and by_path["path"] == str(path) and by_path["error"] is None
    uri, text = await _open(client, path)
    assert text == t.text
    diags = await _diagnostics(client, uri)
    assert _as_check(diags) == _as_check_of(t)  # `graphlsp check` on the binary
    _placed_like_check(diags, t)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [name]


def _as_check_of(t: Targets) -> collections.Counter[tuple[str, str]]:
    return collections.Counter((d.code, d.message) for d in t.check)


@pytest.mark.asyncio
async def test_the_client_text_is_never_the_view(client: LanguageClient, tmp_path: Path) -> None:
    """A client that sends other text for a .onnx document (its bytes as text, nothing) gets the view all the same,
    and is told to fetch it."""
    path = _copy(CONV_MODEL, tmp_path)
    t = targets(path)
    waiting = client.wait_for_notification("graphlsp/viewChanged")
    uri, _ = await _open(client, path, text="\x08garbage")
    changed = await asyncio.wait_for(waiting, WAIT)
    assert changed.path == str(path) and changed.uri == uri
    line, col, name, ty = t.hover
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=_pos(line, col))
    )
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert hover.contents.value.startswith(f"**{name}**: `{ty}`")


@pytest.mark.asyncio
async def test_every_language_feature_on_a_view(client: LanguageClient, tmp_path: Path) -> None:
    path = _copy(IF_MODEL, tmp_path)
    t = targets(path)
    uri, text = await _open(client, path)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    view = render(str(path)).analysis
    g = view.model.graph
    assert g is not None
    # hover: a node output's shape (as the binary's own analysis infers it), a Constant's value
    line, col, name, ty = t.hover
    hover = await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=_pos(line, col)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert hover.contents.value.startswith(f"**{name}**: `{ty}`")
    const = next(n for n in g.nodes if n.op_type == "Constant" and "{-1}" in text[slice(*n.span)])  # type: ignore[misc]
    out = const.outputs[0]
    assert out is not None and out.span is not None
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=doc, position=_position(text, out.span[0] + 1))
    )
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "value: `int64[1] [-1]`" in hover.contents.value, hover.contents.value
    # inlay hints: types after the names
    whole = lsp.Range(start=_pos(0, 0), end=_pos(len(text.splitlines()), 0))
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=doc, range=whole))
    assert hints and any(str(h.label).startswith(": float[batch") for h in hints)
    # definition: from a use to its producer's output; references and highlight of that value
    uline, ucol, uname, target = t.use
    loc = await client.text_document_definition_async(lsp.DefinitionParams(text_document=doc, position=_pos(uline, ucol)))
    assert isinstance(loc, lsp.Location) and loc.uri == uri and loc.range.start.line == target
    refs = await client.text_document_references_async(lsp.ReferenceParams(
        text_document=doc, position=_pos(uline, ucol), context=lsp.ReferenceContext(include_declaration=True)))  # fmt: skip
    assert refs is not None and len(refs) >= 2 and {r.range.start.line for r in refs} >= {uline, target}
    marks = await client.text_document_document_highlight_async(
        lsp.DocumentHighlightParams(text_document=doc, position=_pos(uline, ucol))
    )
    assert marks is not None and len(marks) == len(refs)
    # symbols: the graph, its nodes, and below an If node its two subgraphs with their nodes
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc))
    assert symbols and isinstance(symbols[0], lsp.DocumentSymbol) and symbols[0].name == g.name
    ifs = [s for s in symbols[0].children or [] if s.detail == "If"]
    assert ifs and all(s.children for s in ifs)
    branches = [c for s in ifs for c in s.children or []]
    assert {c.detail for c in branches} >= {"then_branch", "else_branch"}
    assert all(c.kind == lsp.SymbolKind.Namespace and c.children for c in branches)
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="Squeeze"))
    assert found and any(s.location.uri == uri and s.container_name == "sub_graph" for s in found)  # type: ignore[union-attr]
    # semantic tokens, folding ranges (the graph, the If nodes with their subgraphs)
    tokens = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=doc))
    assert tokens is not None and len(tokens.data) % 5 == 0 and len(tokens.data) > 1000
    folds = await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc))
    assert folds and any(f.end_line - f.start_line > 100 for f in folds)
    # signature help inside a node's inputs
    conv = next(n for n in g.nodes if n.op_type == "Conv")
    second = conv.input_span(1)
    assert second is not None
    sig = await client.text_document_signature_help_async(
        lsp.SignatureHelpParams(text_document=doc, position=_position(text, second[0]))
    )
    assert sig is not None and sig.signatures[0].label.startswith("Conv(") and sig.active_parameter == 1
    # nothing that edits: no rename, completion or formatting; the source actions write new files instead
    with pytest.raises(JsonRpcException, match="read-only view"):
        await client.text_document_rename_async(
            lsp.RenameParams(text_document=doc, position=_pos(uline, ucol), new_name="renamed")
        )
    done = await client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=_pos(line, col)))
    assert done is None
    assert await client.text_document_formatting_async(lsp.DocumentFormattingParams(
        text_document=doc, options=lsp.FormattingOptions(tab_size=2, insert_spaces=True))) is None  # fmt: skip
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc, range=lsp.Range(start=_pos(line, col), end=_pos(line, col)),
        context=lsp.CodeActionContext(diagnostics=[])))  # fmt: skip
    assert actions is not None  # (pygls's client reads them as Commands: the JSON is checked below)
    titles = [a.title.split(" (")[0] for a in actions]
    assert titles == ["Save the model as ONNX text", "Fold constants into a new model"]


def test_a_views_code_actions_run_commands(tmp_path: Path) -> None:
    path = _copy(IF_MODEL, tmp_path)
    c = RawClient()
    try:
        init = c.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        commands = init["result"]["capabilities"]["executeCommandProvider"]["commands"]
        assert sorted(commands) == ["graphlsp.foldBinary", "graphlsp.renderRevision", "graphlsp.renderView",
                                    "graphlsp.saveViewAsText"]
        c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = path.as_uri()
        c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "onnxtxt", "version": 1, "text": ""}}})  # fmt: skip
        at = {"line": 0, "character": 0}
        r = c.request(2, "textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {"start": at, "end": at},
                                                     "context": {"diagnostics": []}})  # fmt: skip
        got = [(a["kind"], a["command"]["command"], a["command"]["arguments"], "edit" in a) for a in r["result"]]
        assert got == [("source", "graphlsp.saveViewAsText", [{"path": str(path)}], False),
                       ("source.foldConstants", "graphlsp.foldBinary", [{"path": str(path)}], False)]  # fmt: skip
    finally:
        c.close()


@pytest.mark.asyncio
async def test_edits_to_a_view_are_refused(client: LanguageClient, tmp_path: Path) -> None:
    path = _copy(NEGATIVE_DIMS, tmp_path)
    t = targets(path)
    uri, text = await _open(client, path)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    first = await _diagnostics(client, uri)

    def change(version: int, start: lsp.Position, end: lsp.Position, new: str) -> None:
        client.diagnostics.pop(uri, None)
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start=start, end=end), text=new)]))  # fmt: skip

    async def told() -> list[str]:
        await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=_pos(0, 0)))  # a round trip
        return [m.message for m in client.messages if "read-only view" in m.message]

    change(2, _pos(0, 0), _pos(0, 0), "x = Relu (y)\n")
    after = await _diagnostics(client, uri)
    assert _as_check(after) == _as_check(first) and [d.range for d in after] == [d.range for d in first]
    assert len(await told()) == 1
    line, col, name, ty = t.hover  # positions are still the view's
    hover = await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=_pos(line, col)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert hover.contents.value.startswith(f"**{name}**: `{ty}`")
    change(3, _pos(0, 0), _pos(0, 1), "")  # one more keystroke of the same edit: told once
    assert len(await told()) == 1
    change(4, _pos(0, 0), _pos(1, 0), "")  # undone: the client's text is the view again
    assert len(await told()) == 1
    change(5, _pos(3, 0), _pos(4, 0), "")  # a new edit: told again
    assert len(await told()) == 2
    assert _as_check(await _diagnostics(client, uri)) == _as_check(first)


@pytest.mark.asyncio
async def test_the_view_follows_the_file_on_disk(client: LanguageClient, tmp_path: Path) -> None:
    path = _copy(CONV_MODEL, tmp_path, "model.onnx")
    a = targets(path)
    uri, _ = await _open(client, path)
    assert _as_check(await _diagnostics(client, uri)) == _as_check_of(a)
    # another model is written over it: the client says so, the server renders it and tells the client
    _copy(NEGATIVE_DIMS, tmp_path, "model.onnx")
    b = targets(path)
    waiting = client.wait_for_notification("graphlsp/viewChanged")
    client.diagnostics.pop(uri, None)
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        changes=[lsp.FileEvent(uri=path.as_uri(), type=lsp.FileChangeType.Changed)]))  # fmt: skip
    changed = await asyncio.wait_for(waiting, WAIT)
    assert changed.uri == uri
    # the diagnostics are the new model's (the client's text catches up next)
    assert _as_check(await _diagnostics(client, uri)) == _as_check_of(b)
    text = (await _render(client, {"uri": uri}))["text"]
    assert text == b.text
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))  # fmt: skip
    assert _as_check(await _diagnostics(client, uri)) == _as_check_of(b)
    assert not [m for m in client.messages if "read-only" in m.message], "catching up is no edit"
    # a re-open after the file changed again: rendered anew, whatever the client held
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
    _copy(CONV_MODEL, tmp_path, "model.onnx")
    os.utime(path, ns=(time.time_ns(), time.time_ns()))
    waiting = client.wait_for_notification("graphlsp/viewChanged")
    client.diagnostics.pop(uri, None)
    await _open(client, path, text=b.text, version=3)
    await asyncio.wait_for(waiting, WAIT)
    # pushed: the stale text's diagnostics may come first, then the new rendering's
    deadline = time.monotonic() + WAIT
    while _as_check(await _diagnostics(client, uri)) != _as_check_of(a) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert _as_check(await _diagnostics(client, uri)) == _as_check_of(a)
    assert (await _render(client, {"path": str(path)}))["text"] == a.text


@pytest.mark.asyncio
async def test_save_as_text_and_fold_write_beside_the_model(client: LanguageClient, tmp_path: Path) -> None:
    path = _copy(IF_MODEL, tmp_path, "vad.onnx")
    before = path.read_bytes()
    uri, _ = await _open(client, path)
    answers: list[str] = []

    @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
    def ask(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem:
        answers.append(params.message)
        return lsp.MessageActionItem(title="Cancel")

    async def run(command: str, **opts: Any) -> dict[str, Any]:
        result = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command=command, arguments=[{"uri": uri, **opts}])
        )
        assert isinstance(result, dict), result
        return result

    saved = await run("graphlsp.saveViewAsText")
    text_path = tmp_path / "vad.onnxtxt"
    assert saved["written"] is True and saved["path"] == str(text_path)
    cli = subprocess.run([sys.executable, "-m", "graphlsp.cli", "convert", str(path), "-", "--weights", "inline"], capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert text_path.read_text() == cli.stdout  # `graphlsp convert`: the model with all its data
    # it exists now: the user is asked, and says Cancel; `overwrite` skips the question
    assert (await run("graphlsp.saveViewAsText"))["written"] is False and len(answers) == 1
    assert (await run("graphlsp.saveViewAsText", overwrite=True))["written"] is True and len(answers) == 1

    folded = await run("graphlsp.foldBinary")
    assert folded["written"] is True and folded["folded"] > 0 and folded["path"] == str(tmp_path / "vad.folded.onnx")
    subprocess.run([sys.executable, "-m", "graphlsp.cli", "fold", str(path), "-o", str(tmp_path / "cli.onnx")],
                   capture_output=True, check=True)  # fmt: skip
    assert (tmp_path / "vad.folded.onnx").read_bytes() == (tmp_path / "cli.onnx").read_bytes()  # `graphlsp fold`
    assert path.read_bytes() == before
    assert any("wrote" in m.message and "vad.folded.onnx" in m.message for m in client.messages)
    with pytest.raises(JsonRpcException, match="takes one argument"):
        await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="graphlsp.foldBinary"))


def _rchar(pid: int) -> int:
    with open(f"/proc/{pid}/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs /proc/<pid>/io")
def test_a_model_with_12_gib_of_external_weights_opens_fast_without_reading_them(tmp_path: Path) -> None:
    """make_big_model.py's LLM: 1,128 nodes, 13.5 GB of float16 weights in a sparse external data file."""
    tool = shared("tools", "make_big_model.py")
    subprocess.run([sys.executable, str(tool), str(tmp_path)], check=True, capture_output=True)
    path = tmp_path / "big_llm.onnx"
    assert (tmp_path / "big_llm.onnx.data").stat().st_size > 12 << 30
    view = render(str(path))
    g = view.analysis.model.graph
    assert g is not None and len(g.nodes) >= 1000
    c = RawClient()
    try:
        c.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        read_before = _rchar(c.proc.pid)
        uri = path.as_uri()
        t0 = time.perf_counter()
        c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "onnxtxt", "version": 1, "text": ""}}})  # fmt: skip
        while True:
            m = c.messages.get(timeout=WAIT)
            if m.get("method") == "textDocument/publishDiagnostics":
                break
        opened = time.perf_counter() - t0
        # graphlsp check finds nothing wrong in it either; its float16 nodes run in float32 on onnxruntime's CPU
        # (the default target): one warning says so (GL701, docs/deployment.md)
        found = m["params"]["diagnostics"]
        assert [(d["code"], d["severity"]) for d in found] == [("GL701", 2)], found
        assert "no float16 kernel for" in found[0]["message"]
        assert opened <= 1.5, f"open to first diagnostics took {opened:.2f} s"
        matmul = next(n for n in g.nodes if n.op_type == "MatMul")
        out = matmul.outputs[0]
        weight = g.initializers["embed"]
        assert out is not None and out.span is not None and weight.span is not None
        for i, (span, want) in enumerate([(out.span, "float16[batch, seq"), (weight.span, "float16[32000, 4096]")]):
            line, col = view.analysis.doc.lines.position(span[0] + 1)
            r = c.request(10 + i, "textDocument/hover", {"textDocument": {"uri": uri},
                                                        "position": {"line": line, "character": col}})  # fmt: skip
            assert want in r["result"]["contents"]["value"], r
        read = _rchar(c.proc.pid) - read_before
        assert read < 16 << 20, f"the server read {read / 2**20:.0f} MB"
    finally:
        c.close()
