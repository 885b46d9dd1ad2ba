"""The pygls protocol graphlsp's server runs on: pygls's, less its copy of the open documents, plus a way to send
notifications and results that are JSON text already (`RawJSON`), error answers that are no failure of the server
(`ErrorReply`), and an answer to every request, also one whose params are malformed (pygls drops it).

pygls's own didOpen/didChange/didClose handlers keep a copy of every open document, and on each incremental change
split the whole text into lines and write it out again (about 3 ms a keystroke on a 1 MB file, before graphlsp's
handler runs). graphlsp never reads that copy: a document's text lives in its `Analysis`. The handlers here only
hand the notification on to graphlsp's.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any, BinaryIO

from cattrs import transform_error
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCRequestMessage
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("graphlsp.lsp")


class RawJSON:
    """A request's result, or a notification's params, as JSON text: sent as it is. For a thousand diagnostics,
    pygls's conversion and json.dumps of the whole message would cost more than the analysis of the edit that
    changed one of them."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class ErrorReply:
    """A request's answer that is a JSON-RPC error the client shows to the user (a rename that cannot be done):
    the request was understood and answered, so pygls's traceback in the log and report to the client are not
    wanted."""

    __slots__ = ("code", "message")

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        self.message = message


class _Unreadable:
    """A request whose params could not be read: answered with an error, handled no further."""

    __slots__ = ("id", "method", "error")

    def __init__(self, msg_id: int | str, method: str, error: JsonRpcException) -> None:
        self.id, self.method, self.error = msg_id, method, error


class GraphLspProtocol(LanguageServerProtocol):
    def _to_server(self, method: str, params: Any) -> Iterator[Any]:
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams) -> Iterator[Any]:
        yield from self._to_server(lsp.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Iterator[Any]:
        yield from self._to_server(lsp.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams) -> Iterator[Any]:
        yield from self._to_server(lsp.TEXT_DOCUMENT_DID_CLOSE, params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """json.loads' object_hook: a message as lsprotocol's types. A request whose params do not fit its type
        (`"params": []`) makes pygls raise, and its reader loop then logs and drops the message: the client would
        wait for an answer for ever. JSON-RPC wants an error answer, InvalidParams."""
        method, msg_id = data.get("method"), data.get("id")
        if method is None and isinstance(msg_id, (int, str)) and data.get("result", 0) is None \
                and "error" not in data and self._result_types.get(msg_id) is lsp.ConfigurationResponse:  # fmt: skip
            data = {**data, "result": []}  # VS Code answers workspace/configuration `null` for no settings
        if "jsonrpc" not in data or "error" in data or not isinstance(method, str) or "id" not in data:
            return super().structure_message(data)  # not a request
        try:
            return self._converter.structure(data, self.get_message_type(method) or JsonRPCRequestMessage)
        except Exception as e:
            if not isinstance(msg_id, (int, str)) or isinstance(msg_id, bool):
                raise JsonRpcInvalidRequest() from e  # no id to answer to
            try:
                why = "; ".join(transform_error(e, path="$"))
            except Exception:
                why = f"{type(e).__name__}: {e}"
            return _Unreadable(msg_id, method, JsonRpcInvalidParams(f"invalid params for {method}: {why}"))

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        """pygls runs each notification's handler, and each handler a generator handler yields to (every command
        passes through one), under a fresh id in `_request_futures`, and only a client's request id is ever taken
        out again: each result stayed there for the server's lifetime (a rendered view, half a megabyte a time).
        Those ids are noted here, and the finished ones taken out at the next handler (not from a done-callback:
        shutdown cancels every future while it walks the dict, and a cancelled one calls its callbacks at once)."""
        inner: set[Any] | None = getattr(self, "_inner_ids", None)
        if inner is None:
            inner = set()
            self._inner_ids = inner
        for key in list(inner):
            future = self._request_futures.get(key)
            if future is None or future.done():
                inner.discard(key)
                self._request_futures.pop(key, None)
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if getattr(callback, "func", None) != self._send_handler_result:  # not a client's request: its id is ours
            inner.add(msg_id)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Unreadable):
            log.warning("%s", message.error.message)
            self._send_response(message.id, error=message.error.to_response_error())
            return
        super().handle_message(message)

    def notify_json(self, method: str, params: RawJSON) -> None:
        self._write_json(f'{{"jsonrpc":"2.0","method":{json.dumps(method)},"params":{params.text}}}')

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, RawJSON):
            self._result_types.pop(msg_id, None)
            self._write_json(f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"result":{result.text}}}')
            return
        if error is None and isinstance(result, ErrorReply):
            error = lsp.ResponseError(code=result.code, message=result.message)
        if error is not None:
            self._result_types.pop(msg_id, None)  # pygls keeps it otherwise
        super()._send_response(msg_id, result, error)

    def _write_json(self, text: str) -> None:
        """Frame and write one message, as pygls's _send_data does after its json.dumps."""
        writer = self.writer
        if writer is None:
            log.error("cannot send a message: no transport")
            return
        body = text.encode(self.CHARSET)
        if self._include_headers:
            header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            body = header.encode("ascii") + body
        result = writer.write(body)
        if result is not None:  # an awaitable from an async writer (websockets): let it run
            asyncio.ensure_future(result)


class ChunkedStdin:
    """Standard input for pygls's reader loop, whose body read is `stdin.read(Content-Length)`: a length beyond an
    index (`Content-Length: 10**20`) raised OverflowError there, and one beyond memory MemoryError, and either ended
    the server. Read in chunks instead, so that memory follows the bytes that arrive: a body that never comes in full
    is read up to the end of the input, and the message that does not parse is logged, as any malformed one."""

    CHUNK = 1 << 20

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def readline(self) -> bytes:
        return self._stream.readline()

    def read(self, n: int) -> bytes:
        if n <= self.CHUNK:
            return self._stream.read(n)
        parts: list[bytes] = []
        while n > 0:
            part = self._stream.read(min(n, self.CHUNK))
            if not part:
                break
            parts.append(part)
            n -= len(part)
        return b"".join(parts)
