"""The server's memory follows the documents open, not the documents it has seen: opening, checking and closing
many views of binary models (what a user browsing a folder does for a day) leaves its resident memory where it was
after the first few."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from rawclient import RawClient

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "corpus" / "models" / "optimum_bert.onnx"


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_views_opened_and_closed_leave_no_memory_behind(tmp_path: Path) -> None:
    client = RawClient()
    ids = iter(range(1, 10**6))
    try:
        client.request(next(ids), "initialize", {"processId": None, "rootUri": None, "capabilities": {
            "textDocument": {"diagnostic": {}}}})  # fmt: skip
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

        def browse(i: int) -> None:
            path = tmp_path / f"model{i}.onnx"
            shutil.copyfile(MODEL, path)
            uri = path.as_uri()
            view = client.request(next(ids), "workspace/executeCommand",
                                  {"command": "graphlsp.renderView", "arguments": [{"uri": uri}]})  # fmt: skip
            text = view["result"]["text"]
            client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "onnxtxt", "version": 1, "text": text}}})  # fmt: skip
            reply = client.request(next(ids), "textDocument/diagnostic", {"textDocument": {"uri": uri}})
            assert "result" in reply, reply
            client.request(next(ids), "textDocument/hover", {"textDocument": {"uri": uri},
                                                             "position": {"line": 20, "character": 4}})  # fmt: skip
            client.send({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
            path.unlink()

        for i in range(15):
            browse(i)
        settled = resident_mb(client.proc.pid)
        for i in range(15, 90):
            browse(i)
        grown = resident_mb(client.proc.pid) - settled
        # each view kept cost this model 1.2 MB: 75 views kept would be 90 MB
        assert grown < 30, f"the server grew by {grown:.0f} MB over 75 views opened and closed"
    finally:
        client.close()


def test_finished_handlers_are_not_kept() -> None:
    """pygls files every handler that a generator handler yields to (each notification and command) under an id of
    its own, which nothing took out again: the server kept every command's result for its lifetime."""
    import asyncio
    import json

    from lsprotocol import types as lsp

    from graphlsp.lsp.protocol import RawJSON
    from graphlsp.lsp.workspace import GraphLspServer

    ls = GraphLspServer()
    opened: list[str] = []

    @ls.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params):  # type: ignore[no-untyped-def]  # pygls reads annotations: none to resolve
        opened.append(params.text_document.uri)

    @ls.command("test.answer")
    async def answer(ls, *args):  # type: ignore[no-untyped-def]  # pygls reads annotations: none to resolve
        return RawJSON('{"big": "' + "x" * 100_000 + '"}')

    sent: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            sent.append(data)

        def close(self) -> None:
            pass

    ls.protocol.set_writer(Writer())  # type: ignore[arg-type]

    def receive(message: dict[str, object]) -> None:
        ls.protocol.handle_message(json.loads(json.dumps(message), object_hook=ls.protocol.structure_message))

    async def session() -> None:
        for i in range(20):
            receive({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": f"file:///m{i}.onnxtxt", "languageId": "onnxtxt", "version": 1, "text": ""}}})  # fmt: skip
            receive({"jsonrpc": "2.0", "id": i, "method": "workspace/executeCommand",
                     "params": {"command": "test.answer", "arguments": [{"uri": "x"}]}})  # fmt: skip
            for _ in range(100):  # the answer, before the next message (as a client that waits for it)
                await asyncio.sleep(0.005)
                if sum(b'"big"' in s for s in sent) == i + 1:
                    break

    asyncio.run(session())
    assert len(opened) == 20 and sum(b'"big"' in s for s in sent) == 20
    kept = len(ls.protocol._request_futures)  # the last ones go at the next message
    assert kept <= 2, f"{kept} finished handlers kept: {list(ls.protocol._request_futures.items())[:4]}"
