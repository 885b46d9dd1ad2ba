"""Typing on a broken line (issue 33): a half-typed token is a syntax error of its statement alone. The statement is
parsed again around it, its node stays (marked failed: the syntax error speaks for it) and only that node is inferred
again; mending the line gives back the diagnostics of before without a whole pass; a document that opens broken still
reparses only what an edit touches. Through a real JSON-RPC client: the diagnostics after each break and repair are a
fresh analysis's, and a session of edits, rebuilds and binary views keeps the server's memory bounded."""

from __future__ import annotations

import json
import random

import pytest

from bench.models import generate_gpt
from bench.soak import VIEWS, Client, Document, rss_mb
from graphlsp.analysis import Analysis
from graphlsp.lint.config import Settings
from graphlsp.syntax.document import SyntaxDocument
from tests.lsp.test_diagnostics_kept import fresh
from tests.syntax.docdump import dump

ANCHOR = '"/b.1/m/m.1/Div_output_0" = Div ('


def _rows(a: Analysis) -> list[tuple[str, int, int, str]]:
    return [(f.code, f.start, f.end, f.message) for f in a.findings()]


def test_a_half_typed_token_costs_its_statement_only() -> None:
    text = generate_gpt(4)
    at = text.index(ANCHOR) + len(ANCHOR)
    a = Analysis(text)
    before = _rows(a)
    problems_before = a.doc.problems
    for typed in ("@@", "@"):  # `@@`, then one more keystroke on the broken line
        report = a.apply_edit(at, at, typed)
        assert (report.reparse.mode, report.graph) == ("incremental", "patched")
        assert report.inferred <= 2  # the broken node, and no cone behind it: its shape did not change
        assert report.reparse.end - report.reparse.start < 200  # its line
        assert _rows(a) == _rows(Analysis(a.doc.text))
        assert [p.message for p in a.doc.problems] == [p.message for p in Analysis(a.doc.text).doc.problems]
        assert len(a.doc.problems) == 1  # one error, at the token
        assert a.doc.problems[0].start == at
        assert a.model.graph is not None and any(n.origin.quiet for n in a.model.graph.nodes)
    report = a.apply_edit(at, at + 3, "")
    assert (report.reparse.mode, report.graph) == ("incremental", "patched")
    assert report.inferred <= 2
    assert _rows(a) == before
    assert a.doc.problems == problems_before


def test_a_broken_document_reparses_what_an_edit_touches() -> None:
    text = generate_gpt(4)
    at = text.index(ANCHOR) + len(ANCHOR)
    broken = text[:at] + "$x" + text[at:]  # a token the statement breaks at: its node is lost
    doc = SyntaxDocument(broken)
    value = broken.index("{", broken.index("Constant <value: tensor = float {", at)) + 1
    for start, end, new in [(value, value, "1"), (value, value + 1, ""), (at, at, " "), (at, at + 1, "")]:
        report = doc.apply_edit(start, end, new)
        assert report.mode == "incremental"
        assert dump(doc) == dump(SyntaxDocument(doc.text))
    report = doc.apply_edit(at, at + 2, "")  # mended
    assert report.mode == "incremental"
    assert dump(doc) == dump(SyntaxDocument(text))


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Client:
    client = Client(cwd=str(tmp_path_factory.mktemp("typing")))  # no project settings: the defaults
    client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {
        "general": {"positionEncodings": ["utf-16"]}, "textDocument": {"diagnostic": {}}}})  # fmt: skip
    client.notify("initialized", {})
    yield client
    client.close()


def test_a_session_of_breaks_and_repairs_through_a_client(session: Client) -> None:
    """Value edits, half-typed tokens (kept nodes and lost ones) and their repairs, binary views between: after each
    break and repair the server's diagnostics are a fresh analysis's; then memory stays where it was."""
    text = generate_gpt(6)
    doc = Document("file:///typing/gpt6.onnxtxt", text)
    item = {"uri": doc.uri, "languageId": "onnxtxt", "version": 1, "text": text}
    session.notify("textDocument/didOpen", {"textDocument": item})
    ident = {"uri": doc.uri}
    session.request("textDocument/diagnostic", {"textDocument": ident})
    sites = [i + len(" = Div (") for i in range(len(text)) if text.startswith(" = Div (", i)]
    values = [text.index("{", i) + 1 for i in range(len(text)) if text.startswith("Constant <value: tensor = float {", i)]
    rng = random.Random(7)
    settings = Settings()
    checked = 0
    rss: list[float] = []
    for k in range(48):
        at = rng.choice(values)
        old = doc.text[at : doc.text.index("}", at)]
        token = "@@" if k % 3 else "$x"  # every third a token that loses its statement's node (a rebuild)
        inp = rng.choice(sites)
        steps = [("value", at, at + len(old), "0.5"), ("break", inp, inp, token), ("repair", inp, inp + 2, ""),
                 ("value", at, at + 3, old)]  # fmt: skip
        if inp > at:
            steps[1:3] = [(kind, s + 3 - len(old), e + 3 - len(old), n) for kind, s, e, n in steps[1:3]]
        for kind, start, end, new in steps:
            session.notify("textDocument/didChange", doc.change(start, end, new))
            _, report = session.request("textDocument/diagnostic", {"textDocument": ident})
            if kind != "value" and k < 6:
                assert report["items"] == [json.loads(d) for d in fresh(doc.text, "utf-16", settings)], (k, kind)
                checked += 1
        if k % 8 == 4 and VIEWS[k % 2].exists():
            _, answer = session.request("workspace/executeCommand", {"command": "graphlsp.renderView",
                                                                     "arguments": [{"path": str(VIEWS[k % 2])}]})  # fmt: skip
            uri = VIEWS[k % 2].as_uri()
            session.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "onnxtxt",
                                                                     "version": 1, "text": answer["text"]}})  # fmt: skip
            session.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            session.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        if k >= 16:
            rss.append(rss_mb(session.proc.pid))
    assert doc.text == text
    assert checked == 12
    assert max(rss) - rss[0] <= 25, rss  # 130 edits, 16 rebuilds and 3 views after the first 64 edits
