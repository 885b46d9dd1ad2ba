"""What the benches share: the spread of a list of times, a budget's verdict, and a push client started on
`graphlsp serve` that notes when each version's diagnostics arrive."""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient


def edit_spread(edit_ms: list[float]) -> dict[str, float]:
    """The median and 95th percentile of a list of edit times, as the benches report them."""
    p95 = sorted(edit_ms)[int(0.95 * (len(edit_ms) - 1))]
    return {"edit_ms_median": statistics.median(edit_ms), "edit_ms_p95": p95}


def edit_line(what: str, r: dict[str, Any], budget_ms: float, extra: str = "") -> str:
    """A report's line of edit times (`edit_spread`'s) against a budget on the median."""
    return (f"{what}: median {r['edit_ms_median']:.2f} ms, p95 {r['edit_ms_p95']:.2f} ms{extra} | budget "
            f"{budget_ms:g} ms: {verdict(r['edit_ms_median'] <= budget_ms)}")  # fmt: skip


def verdict(good: bool) -> str:
    return "ok" if good else "OVER BUDGET"


async def start_push_client(client: LanguageClient, arrived: dict[int, float], read: dict[int, float] | None = None,
                            hooked: dict[int, float] | None = None) -> float:  # fmt: skip
    """Start `graphlsp serve` for a client of published diagnostics (VS Code's profile: UTF-16), initialized.
    Per document version: `arrived` gets when its diagnostics were read and parsed as an editor parses them (the
    message's bytes read, then one `json.loads`, as VS Code's JSON.parse and Neovim's vim.json.decode do), `read`
    when the last byte of them was read, `hooked` when this pygls client had parsed them its own way (a Python
    object hook for each of the message's JSON objects: a cost of this test client, not of a server or an editor).
    Returns the seconds from start to the answer to initialize."""
    structure = client.protocol.structure_message

    def timed(data: dict[str, Any]) -> Any:
        if hooked is not None and data.get("method") == lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS and "jsonrpc" in data:
            hooked.setdefault(data.get("params", {}).get("version", -1), time.perf_counter())
        return structure(data)

    client.protocol.structure_message = timed  # type: ignore[method-assign]
    started = time.perf_counter()
    await client.start_io(sys.executable, "-m", "graphlsp.cli", "serve")
    stdout = client._server.stdout if client._server is not None else None  # type: ignore[attr-defined]
    assert stdout is not None
    readexactly = stdout.readexactly

    async def timed_read(n: int) -> bytes:
        body: bytes = await readexactly(n)
        if b'"textDocument/publishDiagnostics"' in body:
            last_byte = time.perf_counter()
            message = json.loads(body)
            version = message.get("params", {}).get("version", -1)
            arrived.setdefault(version, time.perf_counter())
            if read is not None:
                read.setdefault(version, last_byte)
        return body

    stdout.readexactly = timed_read
    caps = lsp.ClientCapabilities(
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
        text_document=lsp.TextDocumentClientCapabilities(
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities()
        ),
    )
    await client.initialize_async(lsp.InitializeParams(capabilities=caps))
    start_s = time.perf_counter() - started  # process start, imports and the server's warm-up
    client.initialized(lsp.InitializedParams())
    return start_s
