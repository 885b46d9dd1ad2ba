"""JSON-RPC errors over raw stdio (Content-Length framed messages written to `graphlsp serve`): every request gets an
answer. Malformed params get InvalidParams (-32602); a rename that cannot be done gets RequestFailed (-32803) with
the reason, not a null and a traceback in the log."""

from __future__ import annotations

import queue
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lsp.rawclient import RawClient

ROOT = Path(__file__).resolve().parents[2]
BROKEN = (ROOT / "examples" / "broken.onnxtxt").read_text()


@pytest.fixture
def raw() -> Iterator[RawClient]:
    c = RawClient()
    caps = {"general": {"positionEncodings": ["utf-16"]}, "textDocument": {"diagnostic": {}}}
    assert "result" in c.request(0, "initialize", {"capabilities": caps, "processId": None, "rootUri": None})
    c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///raw/broken.onnxtxt", "languageId": "onnxtxt", "version": 1, "text": BROKEN}}})  # fmt: skip
    yield c
    c.close()


DOC = {"uri": "file:///raw/broken.onnxtxt"}


def _position(needle: str, delta: int = 0) -> dict[str, int]:
    i = BROKEN.index(needle) + delta
    return {"line": BROKEN.count("\n", 0, i), "character": i - (BROKEN.rfind("\n", 0, i) + 1)}


def test_malformed_params_are_answered_with_invalid_params(raw: RawClient) -> None:
    for k, params in enumerate([[], {"textDocument": 5, "position": {"line": 0, "character": 0}}, "x", 3]):
        error = raw.request(k + 1, "textDocument/hover", params).get("error")
        assert error is not None and error["code"] == -32602, error
    assert raw.request(20, "textDocument/diagnostic", []).get("error", {}).get("code") == -32602
    assert raw.request(21, "textDocument/rename", {"textDocument": DOC}).get("error", {}).get("code") == -32602
    # a malformed notification has nobody to answer: it is dropped and the server goes on
    raw.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": []})
    hover = raw.request(30, "textDocument/hover", {"textDocument": DOC, "position": _position("act = Relu")})
    assert hover["result"]["contents"]["value"].startswith("**act**")


def test_a_rename_that_cannot_be_done_is_an_error_with_the_reason(raw: RawClient) -> None:
    on_op = {"textDocument": DOC, "position": _position("MatMul (x, w1)", 2), "newName": "z"}
    reply = raw.request(1, "textDocument/rename", on_op)
    assert "result" not in reply and reply["error"]["code"] == -32803
    assert reply["error"]["message"] == "there is no value here to rename"
    taken = {"textDocument": DOC, "position": _position("act = Relu"), "newName": "gate"}
    reply = raw.request(2, "textDocument/rename", taken)
    assert reply["error"]["code"] == -32803 and reply["error"]["message"] == "'gate' is already a value in this graph"
    ok = {"textDocument": DOC, "position": _position("act = Relu"), "newName": "act2"}
    assert raw.request(3, "textDocument/rename", ok)["result"]["changes"]
    raw.close()
    assert not [line for line in raw.stderr if "Traceback" in line], "".join(raw.stderr)


@pytest.mark.parametrize("length", [10**20, 10**15])
def test_a_content_length_beyond_an_index_or_memory_does_not_end_the_server(length: int) -> None:
    """The body is read as it arrives: a length no client can send (beyond Py_ssize_t, or beyond memory) keeps the
    server reading, not dead of OverflowError or MemoryError; the end of the input ends it normally."""
    c = RawClient()
    assert "result" in c.request(0, "initialize", {"capabilities": {}, "processId": None, "rootUri": None})
    assert c.proc.stdin is not None
    c.proc.stdin.write(b"Content-Length: %d\r\n\r\n{\"jsonrpc\": \"2.0\"" % length)
    c.proc.stdin.flush()
    with pytest.raises(subprocess.TimeoutExpired):
        c.proc.wait(3)
    c.proc.stdin.close()
    assert c.proc.wait(30) == 0
    c._errors.join(30)
    assert not [line for line in c.stderr if "OverflowError" in line or "MemoryError" in line], "".join(c.stderr)


def _notification(c: RawClient, method: str, uri: str | None = None) -> dict[str, Any]:
    while True:
        try:
            message = c.messages.get(timeout=30)
        except queue.Empty:
            raise AssertionError(f"no {method} in 30 s") from None
        if message.get("method") == method and (uri is None or message["params"].get("uri") == uri):
            return message["params"]


@pytest.mark.parametrize("config", [b"tool = 5\n", "[tool.graphlsp]\nselect = []\n".encode("utf-16"),
                                    b'[tool.graphlsp]\nper-file-ignores = { "*" = [301] }\n'])  # fmt: skip
def test_a_broken_config_is_shown_and_the_folder_is_checked_with_the_defaults(tmp_path: Path, config: bytes) -> None:
    (tmp_path / "pyproject.toml").write_bytes(config)
    model = tmp_path / "broken.onnxtxt"
    model.write_text(BROKEN)
    c = RawClient()
    assert "result" in c.request(0, "initialize", {"capabilities": {}, "processId": None, "rootUri": None})
    c.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    c.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": model.as_uri(), "languageId": "onnxtxt", "version": 1, "text": BROKEN}}})  # fmt: skip
    shown = _notification(c, "window/showMessage")
    assert shown["type"] == 1 and f"configuration error, default settings in use: {tmp_path / 'pyproject.toml'}" \
        in shown["message"], shown  # fmt: skip
    diagnostics = _notification(c, "textDocument/publishDiagnostics", model.as_uri())["diagnostics"]
    assert {d["code"] for d in diagnostics} >= {"GL301"}, diagnostics
    c.close()


def test_a_view_of_a_path_with_a_nul_says_it_cannot_be_read(raw: RawClient) -> None:
    """Was -32603 (ValueError: embedded null byte): a path no file can have is a view that says so."""
    for k, uri in enumerate(["file:///tmp/a%00b.onnx", "graphlsp-view:/tmp/a%00b.onnx"]):
        reply = raw.request(50 + k, "workspace/executeCommand", {"command": "graphlsp.renderView",
                                                                 "arguments": [{"uri": uri}]})  # fmt: skip
        assert "error" not in reply, reply
        assert "no such file" in reply["result"]["text"], reply
