"""After a big paste, an editor asks for everything again at once (semantic tokens, symbols twice, folding, code
actions, inlay hints, diagnostics) and the user hovers: all of them wait for the same analysis, and the loop answers
one at a time. The cheap requests are answered first, not after seconds of tokens and symbols of the whole file;
and the heavy answers are right (the same as asked again alone)."""

from __future__ import annotations

from typing import Any

from bench.models import generate_gpt
from tests.lsp.rawclient import RawClient

SMALL = '<ir_version: 8, opset_import: ["" : 17]>\ng (float[N] x) => (float[N] y) {\n  y = Relu (x)\n}\n'


def test_cheap_requests_after_a_big_paste_are_not_kept_behind_heavy_ones() -> None:
    text = generate_gpt(24)  # 0.3 MB
    other = generate_gpt(96)  # 1.1 MB, opened first: its analysis keeps the worker busy while all below arrives
    c = RawClient()
    try:
        caps = {"general": {"positionEncodings": ["utf-16"]}, "textDocument": {"diagnostic": {}}}
        c.request(0, "initialize", {"capabilities": caps, "processId": None, "rootUri": None})
        c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        doc = {"uri": "file:///big/paste.onnxtxt"}
        c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            **doc, "languageId": "onnxtxt", "version": 1, "text": SMALL}}})  # fmt: skip
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}
        paste = {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {**doc, "version": 2}, "contentChanges": [{"range": whole, "text": text}]}}  # fmt: skip
        name = text.index('"/b.3/a/Shape_output_0" = ')
        line = text.count("\n", 0, name)
        at = {"line": line, "character": name - text.rfind("\n", 0, name)}
        near = {"start": {"line": line - 20, "character": 0}, "end": {"line": line + 20, "character": 0}}
        heavy: dict[int, tuple[str, Any]] = {
            10: ("textDocument/semanticTokens/full", {"textDocument": doc}),
            11: ("textDocument/documentSymbol", {"textDocument": doc}),
            12: ("textDocument/codeAction", {"textDocument": doc, "range": near, "context": {"diagnostics": []}}),
            13: ("textDocument/documentSymbol", {"textDocument": doc}),
        }
        cheap: dict[int, tuple[str, Any]] = {
            20: ("textDocument/foldingRange", {"textDocument": doc}),
            21: ("textDocument/inlayHint", {"textDocument": doc, "range": near}),
            22: ("textDocument/diagnostic", {"textDocument": doc}),
            23: ("textDocument/hover", {"textDocument": doc, "position": at}),
        }
        requests = [{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in {**heavy, **cheap}.items()]
        c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": "file:///big/other.onnxtxt", "languageId": "onnxtxt", "version": 1, "text": other}}},
            paste, *requests)  # fmt: skip  # the heavy ones first, as editors do
        order, answers = [], {}
        while len(order) < len(heavy) + len(cheap):
            message = c.messages.get(timeout=120)
            if message.get("id") in heavy or message.get("id") in cheap:
                order.append(message["id"])
                answers[message["id"]] = message
        assert set(order[: len(cheap)]) == set(cheap), order
        assert answers[23]["result"]["contents"]["value"].startswith('**/b.3/a/Shape_output_0**')
        assert answers[22]["result"]["items"]
        for msg_id, (method, params) in heavy.items():  # the same as asked again alone, now that all is done
            assert answers[msg_id]["result"] and c.request(100 + msg_id, method, params)["result"] == answers[msg_id]["result"]
    finally:
        c.close()
