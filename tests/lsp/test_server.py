"""End to end over stdio with a real LSP client (pytest-lsp): a push client shaped like VS Code (UTF-16, publish
diagnostics) and a pull client shaped like Neovim 0.11 (UTF-8, textDocument/diagnostic)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.clients import SERVER, VSCODE, start

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "attention.onnxtxt"
BROKEN = ROOT / "examples" / "broken.onnxtxt"

def _open(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="onnxtxt", version=1,
                                               text=text if text is not None else path.read_text())
        )
    )  # fmt: skip
    return uri


def _pos(text: str, needle: str, delta: int = 0) -> lsp.Position:
    i = text.index(needle) + delta
    line = text.count("\n", 0, i)
    return lsp.Position(line=line, character=i - (text.rfind("\n", 0, i) + 1))


@pytest.mark.asyncio
async def test_push_client_gets_diagnostics_and_they_follow_edits(vscode: LanguageClient) -> None:
    text = BROKEN.read_text()
    uri = _open(vscode, BROKEN)
    await vscode.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    diags = vscode.diagnostics[uri]
    by_code = {d.code: d for d in diags}
    assert by_code["GL201"].range.start.line == 18  # 'hidden_state' on line 19
    assert by_code["GL101"].range.start.line == 19
    # fix the syntax error: close the parenthesis of `Mul (act, gate`
    at = _pos(text, "gate                        # expect: syntax-error", 4)
    vscode.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text=")")],
        )
    )
    await vscode.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    codes = {d.code for d in vscode.diagnostics[uri]}
    assert "GL101" not in codes and "GL201" in codes


@pytest.mark.asyncio
async def test_hover_definition_references_symbols_diagnostics(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE)
    report = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    assert [d for d in report.items if d.severity == lsp.DiagnosticSeverity.Error] == []
    pos = _pos(text, "\n  q = MatMul", 3)
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos)
    )
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert hover.contents.value.startswith("**q**: `float[")
    assert "produced by `MatMul`" in hover.contents.value
    # definition of a use goes to the producer's output name
    use = _pos(text, "(q,", 1)
    loc = await client.text_document_definition_async(
        lsp.DefinitionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=use)
    )
    assert isinstance(loc, lsp.Location) and loc.range.start == pos
    refs = await client.text_document_references_async(
        lsp.ReferenceParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=pos,
                            context=lsp.ReferenceContext(include_declaration=True))
    )  # fmt: skip
    assert refs is not None and len(refs) >= 2
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert symbols and symbols[0].name == "attention"  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_out_of_range_positions_and_garbage_get_answers(client: LanguageClient) -> None:
    uri = _open(client, ROOT / "garbage.onnxtxt", "\x00 ]]] {{ (( \"unterminated")
    far = lsp.Position(line=999, character=999)
    hover = await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=far)
    )
    assert hover is None
    report = await client.text_document_diagnostic_async(
        lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport) and report.items


@pytest.mark.asyncio
async def test_inlay_hints_folding_tokens_rename_completion(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=999, character=0))
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=doc, range=whole))
    assert hints and any(str(h.label).startswith(": float[batch, seq") for h in hints)
    folds = await client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc))
    assert folds and any(f.end_line - f.start_line > 10 for f in folds)
    tokens = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=doc))
    assert tokens is not None and len(tokens.data) % 5 == 0 and len(tokens.data) > 50
    pos = _pos(text, "\n  q = MatMul", 3)
    edit = await client.text_document_rename_async(lsp.RenameParams(text_document=doc, position=pos, new_name="q.1"))
    assert edit is not None and edit.changes is not None
    assert {e.new_text for e in edit.changes[uri]} == {'"q.1"'} and len(edit.changes[uri]) == 2
    inside = _pos(text, "MatMul (x, w_q)", len("MatMul ("))
    items = await client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=inside))
    assert items is not None and "x" in {i.label for i in items.items}  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_quick_fixes_edit_only_what_they_fix(client: LanguageClient) -> None:
    from graphlsp.lint.fixes import apply_edits
    from graphlsp.syntax.positions import LineIndex

    text = BROKEN.read_text()
    uri = _open(client, BROKEN)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    at = _pos(text, "Swishy")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc, range=lsp.Range(start=at, end=at), context=lsp.CodeActionContext(diagnostics=[])))  # fmt: skip
    assert actions is not None
    [fix] = [x for x in actions if isinstance(x, lsp.CodeAction) and "Swish'" in x.title]
    assert fix.edit is not None and fix.edit.changes is not None
    lines = LineIndex(text)
    edits = [(lines.offset(e.range.start.line, e.range.start.character, "utf-16"),
              lines.offset(e.range.end.line, e.range.end.character, "utf-16"), e.new_text) for e in fix.edit.changes[uri]]  # fmt: skip
    fixed = apply_edits(text, edits)
    assert fixed == text.replace("Swishy (act)", "Swish (act)", 1)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def configured(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, VSCODE, options={"graphlsp": {"inlayHints": False, "ignore": ["GL207"]}})
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_settings_from_initialization_options_and_configuration_changes(configured: LanguageClient) -> None:
    uri = _open(configured, BROKEN)
    await configured.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert "GL207" not in {d.code for d in configured.diagnostics[uri]}
    doc = lsp.TextDocumentIdentifier(uri=uri)
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=999, character=0))
    assert not await configured.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=doc, range=whole))
    configured.workspace_did_change_configuration(
        lsp.DidChangeConfigurationParams(settings={"graphlsp": {"inlayHints": True, "ignore": []}})
    )
    await configured.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert "GL207" in {d.code for d in configured.diagnostics[uri]}
    assert await configured.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=doc, range=whole))


@pytest.mark.asyncio
async def test_signature_help_inside_the_argument_list(client: LanguageClient) -> None:
    text = EXAMPLE.read_text()
    uri = _open(client, EXAMPLE)
    at = _pos(text, "MatMul (x, w_q)", len("MatMul (x, "))
    help_ = await client.text_document_signature_help_async(
        lsp.SignatureHelpParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=at)
    )
    assert help_ is not None and help_.signatures[0].label.startswith("MatMul(A: T, B: T)")
    assert help_.active_parameter == 1


@pytest.mark.asyncio
async def test_formatting_keeps_comments_and_the_model(client: LanguageClient) -> None:
    text = '<ir_version: 8, opset_import: ["" : 18]>\ng (float[N] x) => (float[N] y) {\n  a=Relu(x)   # keep\n  y = Abs (a)\n}\n'
    uri = _open(client, ROOT / "fmt.onnxtxt", text)
    edits = await client.text_document_formatting_async(lsp.DocumentFormattingParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), options=lsp.FormattingOptions(tab_size=2, insert_spaces=True)))  # fmt: skip
    assert edits and len(edits) == 1
    assert "   a = Relu (x)  # keep\n" in edits[0].new_text


@pytest.mark.asyncio
async def test_pull_client_diagnostics_follow_edits(neovim: LanguageClient) -> None:
    text = BROKEN.read_text()
    uri = _open(neovim, BROKEN)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    report = await neovim.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=doc))
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    assert "GL101" in {d.code for d in report.items}
    assert not neovim.diagnostics.get(uri)  # a pull client is never pushed to
    at = _pos(text, "gate                        # expect: syntax-error", 4)
    neovim.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=at), text=")")]))  # fmt: skip
    report = await neovim.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=doc))
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    codes = {d.code for d in report.items}
    assert "GL101" not in codes and "GL201" in codes


@pytest.mark.asyncio
async def test_pull_result_ids_say_unchanged_only_when_nothing_changed(neovim: LanguageClient) -> None:
    text = BROKEN.read_text()
    uri = _open(neovim, BROKEN)
    doc = lsp.TextDocumentIdentifier(uri=uri)

    async def pull(previous: str | None) -> lsp.DocumentDiagnosticReport:
        params = lsp.DocumentDiagnosticParams(text_document=doc, previous_result_id=previous)
        return await neovim.text_document_diagnostic_async(params)

    def edit(version: int, needle: str, delta: int, old: str, new: str) -> None:
        nonlocal text
        at = text.index(needle) + delta
        assert text[at:at + len(old)] == old
        rng = lsp.Range(start=_pos(text, needle, delta), end=_pos(text, needle, delta + len(old)))
        text = text[:at] + new + text[at + len(old):]
        neovim.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=new)]))  # fmt: skip

    first = await pull(None)
    assert isinstance(first, lsp.RelatedFullDocumentDiagnosticReport) and first.result_id
    again = await pull(first.result_id)
    assert isinstance(again, lsp.RelatedUnchangedDocumentDiagnosticReport) and again.result_id == first.result_id
    # a comment's text changes, the diagnostics do not: still unchanged
    edit(2, "# expect: syntax-error", 2, "expect", "EXPECT")
    same = await pull(first.result_id)
    assert isinstance(same, lsp.RelatedUnchangedDocumentDiagnosticReport)
    # the syntax error is fixed: a full report under a new id, and an old id gets the full report too
    edit(3, "gate                        # EXPECT: syntax-error", 4, "", ")")
    fixed = await pull(first.result_id)
    assert isinstance(fixed, lsp.RelatedFullDocumentDiagnosticReport) and fixed.result_id != first.result_id
    assert "GL101" not in {d.code for d in fixed.items}
    assert isinstance(await pull("not-an-id"), lsp.RelatedFullDocumentDiagnosticReport)


FOLDABLE = """<ir_version: 10, opset_import: ["" : 21]>
g (float[N, 4] x) => (float[N, 4] y) {
  # scale = 1 / (2 * 2)
  two = Constant <value = float {2}> ()
  four = Mul (two, two)
  scale = Reciprocal (four)
  y = Mul (x, scale)
}
"""


def _offsets_edits(text: str, action: lsp.CodeAction, uri: str, enc: str) -> list[tuple[int, int, str]]:
    from graphlsp.syntax.positions import LineIndex

    assert action.edit is not None and action.edit.changes is not None
    lines = LineIndex(text)
    return [(lines.offset(e.range.start.line, e.range.start.character, enc),
             lines.offset(e.range.end.line, e.range.end.character, enc), e.new_text) for e in action.edit.changes[uri]]  # fmt: skip


@pytest.mark.asyncio
async def test_fold_hints_quick_fix_and_fold_all_constants(client: LanguageClient) -> None:
    from graphlsp.lint.fixes import apply_edits
    from graphlsp.lint.fold import fold_text

    enc = "utf-16"  # the text is ASCII: the same columns in either encoding
    text = FOLDABLE
    uri = _open(client, ROOT / "foldable.onnxtxt", text)
    doc = lsp.TextDocumentIdentifier(uri=uri)
    report = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=doc))
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    # one hint, where the constant subgraph's value is read (Reciprocal); Mul inside it shows its value on hover
    hints = [d for d in report.items if d.code == "GL401"]
    assert [(d.range.start.line, d.severity) for d in hints] == [(5, lsp.DiagnosticSeverity.Hint)]
    assert "float 0.25" in hints[0].message and "with the node feeding it" in hints[0].message
    # hover previews the computed constant, the inlay hint shows it after the type
    hover = await client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=_pos(text, "\n  scale =", 3)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "value: `float 0.25`" in hover.contents.value
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=99, character=0))
    inlay = await client.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=doc, range=whole))
    assert inlay is not None and ": float = 0.25" in {str(h.label) for h in inlay}
    # the quick fix on a hint folds its subgraph; the rest of the file (the comment, y's line) stays
    at = _pos(text, "Reciprocal")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc, range=lsp.Range(start=at, end=at), context=lsp.CodeActionContext(diagnostics=hints)))  # fmt: skip
    assert actions is not None
    [fix] = [x for x in actions if isinstance(x, lsp.CodeAction) and x.title.startswith("Fold this constant")]
    assert fix.kind == lsp.CodeActionKind.QuickFix
    folded = apply_edits(text, _offsets_edits(text, fix, uri, enc))
    assert folded == text.replace(
        "  two = Constant <value = float {2}> ()\n  four = Mul (two, two)\n  scale = Reciprocal (four)\n",
        "  scale = Constant <value: tensor = float {0.25}> ()\n",
    )
    # "fold all constants" is a source action, offered wherever the cursor is
    top = lsp.Position(line=0, character=0)
    source = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=doc, range=lsp.Range(start=top, end=top),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.Source])))  # fmt: skip
    assert source is not None
    [every] = [x for x in source if isinstance(x, lsp.CodeAction)]
    assert every.kind == "source.foldConstants"
    assert apply_edits(text, _offsets_edits(text, every, uri, enc)) == fold_text(text).text == folded
