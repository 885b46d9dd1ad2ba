"""What the benches share: the spread of a list of times, a budget's verdict, and a push client started on
`graphlsp serve` that notes when each version's diagnostics arrive."""

from __future__ import annotations

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


async def start_push_client(client: LanguageClient, arrived: dict[int, float],
                            read: dict[int, float] | None = None) -> float:  # fmt: skip
    """Start `graphlsp serve` for a client of published diagnostics (VS Code's profile: UTF-16), initialized;
    `arrived` gets, per document version, when its diagnostics were read and parsed (json.loads' object hook:
    the whole message is parsed by then), and `read` when the last byte of that message was read (the rest is
    the client's parse). Returns the seconds from start to the answer to initialize."""
    structure = client.protocol.structure_message
    body_read = [0.0]  # when the reader loop last read a message's body (it parses each before it reads on)

    def timed(data: dict[str, Any]) -> Any:
        if data.get("method") == lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS and "jsonrpc" in data:
            version = data.get("params", {}).get("version", -1)
            arrived.setdefault(version, time.perf_counter())
            if read is not None:
                read.setdefault(version, body_read[0])
        return structure(data)

    client.protocol.structure_message = timed  # type: ignore[method-assign]
    started = time.perf_counter()
    await client.start_io(sys.executable, "-m", "graphlsp.cli", "serve")
    stdout = client._server.stdout if client._server is not None else None  # type: ignore[attr-defined]
    if read is not None and stdout is not None:
        readexactly = stdout.readexactly

        async def timed_read(n: int) -> bytes:
            body = await readexactly(n)
            body_read[0] = time.perf_counter()
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
