"""The pygls protocol graphlsp's server runs on: pygls's, less its copy of the open documents, plus a way to send
notifications and results that are JSON text already (`RawJSON`).

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
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("graphlsp.lsp")


class RawJSON:
    """A request's result, or a notification's params, as JSON text: sent as it is. For a thousand diagnostics,
    pygls's conversion and json.dumps of the whole message would cost more than the analysis of the edit that
    changed one of them."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


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

    def notify_json(self, method: str, params: RawJSON) -> None:
        self._write_json(f'{{"jsonrpc":"2.0","method":{json.dumps(method)},"params":{params.text}}}')

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and isinstance(result, RawJSON):
            self._result_types.pop(msg_id, None)
            self._write_json(f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"result":{result.text}}}')
            return
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
