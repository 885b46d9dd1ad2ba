"""No edit is ever lost, over stdio with a real LSP client (pytest-lsp): a cancelled request never cancels the
edit it waits for; a crash of the analysis keeps the document's text (and says so on line 1); lone `\\r` line ends
count as LSP counts them. After each step the server's diagnostics equal `graphlsp check` on the text the client
holds (tests/lsp/reference.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp import reference
from tests.lsp.clients import NEOVIM, SERVER, start
from tests.lsp.reference import CRASH_MARKER, check, lsp_position

ROOT = Path(__file__).resolve().parents[2]
BROKEN = (ROOT / "examples" / "broken.onnxtxt").read_text()
ENV = {**os.environ, "GRAPHLSP_TEST_CRASH_MARKER": CRASH_MARKER}
ENC = "utf-8"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, NEOVIM)  # UTF-8 positions, pulled diagnostics
    yield lsp_client
    await lsp_client.shutdown_session()


class Doc:
    """The client's copy of one open document."""

    def __init__(self, client: LanguageClient, name: str, text: str) -> None:
        self.client, self.uri, self.text, self.version = client, f"file:///edits/{name}", text, 1
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=self.uri, language_id="onnxtxt", version=1, text=text)))  # fmt: skip

    @property
    def id(self) -> lsp.TextDocumentIdentifier:
        return lsp.TextDocumentIdentifier(uri=self.uri)

    def pos(self, offset: int) -> lsp.Position:
        line, character = lsp_position(self.text, offset, ENC)
        return lsp.Position(line=line, character=character)

    def edit(self, start: int, end: int, new: str) -> None:
        rng = lsp.Range(start=self.pos(start), end=self.pos(end))
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=new)]))  # fmt: skip

    def replace(self, old: str, new: str) -> None:
        at = self.text.index(old)
        self.edit(at, at + len(old), new)

    def insert(self, after: str, new: str) -> None:
        at = self.text.index(after) + len(after)
        self.edit(at, at, new)

    async def diagnostics(self) -> list[tuple[str, int, int]]:
        report = await self.client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=self.id))
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
        return sorted((str(d.code), d.range.start.line, d.range.start.character) for d in report.items)

    async def hover(self, offset: int) -> lsp.Hover | None:
        return await self.client.text_document_hover_async(
            lsp.HoverParams(text_document=self.id, position=self.pos(offset))
        )

    async def in_step(self) -> None:
        assert await self.diagnostics() == check(self.text, self.uri, ENC)


@pytest.mark.asyncio
async def test_a_cancelled_hover_never_cancels_the_edit_it_waits_for(client: LanguageClient) -> None:
    from bench.models import generate_gpt

    doc = Doc(client, "broken.onnxtxt", BROKEN)
    await doc.in_step()
    big = generate_gpt(48)  # its analysis keeps the one worker thread busy while the edit below waits in line
    edits = [("Mul (act, gate", ""), ("Swishy", "Swish"), ("hidden_state", "act"), ("spare", "spare2")]
    landed = 0
    for k, (old, new) in enumerate(edits):
        Doc(client, f"big{k}.onnxtxt", big)
        if new:
            doc.replace(old, new)
        else:
            doc.insert(old, ")")  # close `Mul (act, gate`
        msg_id = f"cancelled-hover-{k}"
        at = doc.pos(doc.text.index("act = Relu"))
        pending = client.protocol.send_request(
            lsp.TEXT_DOCUMENT_HOVER, lsp.HoverParams(text_document=doc.id, position=at), msg_id=msg_id)  # fmt: skip
        client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
        try:
            await asyncio.wait_for(asyncio.wrap_future(pending), 60)
        except JsonRpcRequestCancelled:
            landed += 1  # the cancel reached the hover while it waited for the edit
        await doc.in_step()  # the edit was applied all the same, and so were the ones before it
        hover = await doc.hover(doc.text.index("act = Relu"))
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        assert hover.contents.value.startswith("**act**")
    assert landed, "no cancel arrived while its hover waited: the test did not test anything"


@pytest.mark.asyncio
async def test_a_crash_on_open_keeps_the_text_and_is_reported_on_line_1(client: LanguageClient) -> None:
    doc = Doc(client, "crash.onnxtxt", CRASH_MARKER + "\n" + BROKEN)
    assert await doc.diagnostics() == [(reference.INTERNAL_ERROR, 0, 0)]
    report = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=doc.id))
    assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport)
    [crash] = report.items
    assert crash.severity == lsp.DiagnosticSeverity.Error and "internal error" in crash.message
    # incremental edits go to the text the client holds, not to the edit's text alone
    doc.replace("  spare = Neg", " ")  # one typed space
    assert await doc.diagnostics() == [(reference.INTERNAL_ERROR, 0, 0)]
    doc.replace(CRASH_MARKER + "\n", "")  # the marker goes: the analysis is back, of the whole text
    await doc.in_step()
    hover = await doc.hover(doc.text.index("act = Relu"))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert hover.contents.value.startswith("**act**")
    # a crash inside an incremental edit of a healthy document keeps its text too
    at = doc.text.index("  [dense1]")
    doc.edit(at, at, CRASH_MARKER + "\n")
    assert await doc.diagnostics() == [(reference.INTERNAL_ERROR, 0, 0)]
    doc.insert("Mul (act, gate", ")")
    doc.replace(CRASH_MARKER + "\n", "")
    await doc.in_step()


@pytest.mark.asyncio
async def test_lone_cr_line_ends_put_diagnostics_and_hovers_on_the_right_lines(client: LanguageClient) -> None:
    text = reference.cr_line_ends(BROKEN)
    assert (
        "\r\n" in text
        and "\rx" not in text
        and any(text[i] == "\r" and text[i + 1] != "\n" for i in range(len(text) - 1))
    )
    doc = Doc(client, "cr.onnxtxt", text)
    await doc.in_step()

    async def hover_on(name: str) -> None:
        at = doc.text.index(f"  {name} = ") + 2
        hover = await doc.hover(at + 1)
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        assert hover.contents.value.startswith(f"**{name}**")
        assert hover.range == lsp.Range(start=doc.pos(at), end=doc.pos(at + len(name)))

    await hover_on("ghost")
    await hover_on("w_total")
    doc.insert("Mul (act, gate", ")")
    await doc.in_step()
    # edits that add and remove line ends: a lone \r becomes \r\n, a \r\n loses its \n, a new lone \r
    at = doc.text.index("\r  [bias1]")
    doc.edit(at + 1, at + 1, "\n")
    doc.replace("\r\n  [relu1] act", "\r  [relu1] act")  # no LSP position lies between \r and \n
    at = doc.text.index("  w_total")
    doc.edit(at, at, "\r")
    await doc.in_step()
    await hover_on("ghost")
    await hover_on("w_total")
    await hover_on("act")
