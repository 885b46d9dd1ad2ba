"""The server never dies: a hypothesis state machine sends random didChange edits, hovers and diagnostic pulls at
any position (also out of range) to the real server over stdio; every request gets an answer, and at the end the
server's diagnostics equal a fresh analysis of the text the client holds (incremental sync stayed exact)."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from graphlsp.analysis import Analysis
from graphlsp.lint.config import Settings
from graphlsp.lint.diagnostics import collect_analysis
from graphlsp.lint.runner import finalize
from graphlsp.syntax.positions import LineIndex

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [(ROOT / "examples" / n).read_text() for n in ("attention.onnxtxt", "broken.onnxtxt", "if_branch.onnxtxt")]
SNIPPETS = ["", "x", ")", "(", "<", ">", "{", "}", "\n", "=", ",", '"', "#", "y = Relu (x)\n", "é", "😀", "1.5", "[", "]"]
TIMEOUT = 30


class _Session:
    """A real client and server, on an event loop running in a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.client = LanguageClient("fuzz", "1")
        self.run(self.client.start_io(sys.executable, "-m", "graphlsp.cli", "serve"))
        caps = lsp.ClientCapabilities(
            general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
            text_document=lsp.TextDocumentClientCapabilities(diagnostic=lsp.DiagnosticClientCapabilities()),
        )
        self.run(self.client.initialize_async(lsp.InitializeParams(capabilities=caps)))
        self.client.initialized(lsp.InitializedParams())

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=TIMEOUT)

    def close(self) -> None:
        self.run(self.client.shutdown_async(None))
        self.client.exit(None)
        self.run(self.client.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)


SESSION: _Session | None = None
COUNTER = 0


class ServerMachine(RuleBasedStateMachine):
    text = ""
    version = 0
    uri = ""

    @initialize(seed=st.sampled_from(range(len(SEEDS))))
    def open(self, seed: int) -> None:
        global COUNTER
        COUNTER += 1
        assert SESSION is not None
        self.session = SESSION
        self.text, self.version = SEEDS[seed], 1
        self.uri = f"file:///fuzz/doc{COUNTER}.onnxtxt"
        self.session.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=self.uri, language_id="onnxtxt", version=1, text=self.text)))  # fmt: skip

    @precondition(lambda self: bool(self.uri))
    @rule(data=st.data())
    def edit(self, data: st.DataObject) -> None:
        start = data.draw(st.integers(0, len(self.text)))
        end = data.draw(st.integers(start, min(len(self.text), start + 30)))
        new = data.draw(st.sampled_from(SNIPPETS))
        idx = LineIndex(self.text)
        a, b = idx.position(start, "utf-16"), idx.position(end, "utf-16")
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        self.session.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=lsp.Position(line=a[0], character=a[1]),
                                end=lsp.Position(line=b[0], character=b[1])), text=new)],
        ))  # fmt: skip

    @precondition(lambda self: bool(self.uri))
    @rule(line=st.integers(0, 80), character=st.integers(0, 200))
    def hover(self, line: int, character: int) -> None:
        result = self.session.run(self.session.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=self.uri), position=lsp.Position(line=line, character=character))))  # fmt: skip
        assert result is None or isinstance(result, lsp.Hover)

    @precondition(lambda self: bool(self.uri))
    @rule(line=st.integers(0, 80), character=st.integers(0, 200))
    def other_requests(self, line: int, character: int) -> None:
        doc = lsp.TextDocumentIdentifier(uri=self.uri)
        pos = lsp.Position(line=line, character=character)
        c = self.session.client
        self.session.run(c.text_document_definition_async(lsp.DefinitionParams(text_document=doc, position=pos)))
        self.session.run(c.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=pos)))
        self.session.run(c.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=doc)))

    def teardown(self) -> None:
        if not self.uri:
            return
        report = self.session.run(self.session.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=self.uri))))  # fmt: skip
        a = Analysis(self.text)
        expected = finalize(collect_analysis(a, self.uri), self.text, self.uri, Settings())
        got = sorted((d.code, d.range.start.line, d.range.start.character) for d in report.items)
        lines = a.doc.lines
        want = sorted((d.code, *lines.position(d.start, "utf-16")) for d in expected)
        assert got == want
        self.session.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=self.uri))
        )


@pytest.fixture(scope="module")
def session() -> Any:
    global SESSION
    SESSION = _Session()
    yield SESSION
    SESSION.close()
    SESSION = None


def test_random_edit_sequences_never_kill_the_server(session: _Session) -> None:
    machine = ServerMachine.TestCase
    machine.settings = settings(max_examples=30, stateful_step_count=25, deadline=None,
                                suppress_health_check=list(HealthCheck), database=None)  # fmt: skip
    machine().runTest()
