"""A long editing session on gpt_L96 through a bare JSON-RPC client (what an editor sends and parses), for
`bench lsp`: value edits, a Transpose's perm changed, half-typed tokens (`@@`) and their repairs, with hovers,
completions and binary models' views opened and closed between them; each edit followed by a pull of the
diagnostics (textDocument/diagnostic with the previous result id, Neovim's profile).

Budgets (issue 33): an edit to its diagnostics received, p50, at most 1/10 of onnx's C++ parse + infer of the same
text for a value and a perm edit, and 1/4 for a breaking or a repairing edit; no kind of edit slower in the last 200
edits than in the first 200; the server's resident memory at most 50 MB above what it was after the first 100 edits.
"""

from __future__ import annotations

import json
import queue
import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from graphlsp.syntax.positions import LineIndex

VALUE_RATIO = 0.10
BROKEN_RATIO = 0.25
GROWTH_MB = 50.0
DRIFT = 1.25  # the last 200 edits' p50 of a kind over the first 200's, above which the kind counts as slower
VIEWS = [Path(__file__).resolve().parents[2] / "shared" / "realworld" / name
         for name in ("silero_vad.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx")]  # fmt: skip


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class Client:
    """`graphlsp serve` as a subprocess; Content-Length framed JSON written, replies parsed with one json.loads each
    (as VS Code's JSON.parse and Neovim's vim.json.decode do) on a reader thread."""

    def __init__(self, cwd: str | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "graphlsp.cli", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)  # fmt: skip
        self.replies: dict[int, queue.Queue[tuple[float, dict[str, Any]]]] = {}
        self.lock = threading.Lock()
        self.next_id = 0
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            message = json.loads(out.read(length))
            at = time.perf_counter()
            if "id" in message and "method" not in message:
                with self.lock:
                    box = self.replies.setdefault(message["id"], queue.Queue())
                box.put((at, message))
            elif "id" in message:  # a request of the server's (configuration, refresh): answered with nothing
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 120) -> tuple[float, Any]:
        """(when the answer had been read and parsed, its result)."""
        with self.lock:
            self.next_id += 1
            msg_id = self.next_id
            box = self.replies.setdefault(msg_id, queue.Queue())
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        at, message = box.get(timeout=timeout)
        with self.lock:
            del self.replies[msg_id]
        return at, message.get("result")

    def close(self) -> None:
        try:
            self.request("shutdown", None, 30)
            self.notify("exit", None)
            self.proc.wait(30)
        except Exception:
            self.proc.kill()
            self.proc.wait()


class Document:
    """The client's copy of the text and its edits as LSP changes (UTF-16: the text is ASCII)."""

    def __init__(self, uri: str, text: str) -> None:
        self.uri, self.text, self.version = uri, text, 1

    def change(self, start: int, end: int, new: str) -> dict[str, Any]:
        lines = LineIndex(self.text)
        (l1, c1), (l2, c2) = lines.position(start, "utf-16"), lines.position(end, "utf-16")
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        rng = {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}
        return {"textDocument": {"uri": self.uri, "version": self.version},
                "contentChanges": [{"range": rng, "text": new}]}  # fmt: skip

    def position(self, offset: int) -> dict[str, int]:
        line, col = LineIndex(self.text).position(offset, "utf-16")
        return {"line": line, "character": col}


def _sites(text: str) -> dict[str, list[int]]:
    """Where each kind of edit is made: a Constant's float value, a Transpose's perm, a node's inputs."""
    values, perms, inputs = [], [], []
    at = 0
    while (at := text.find("Constant <value: tensor = float {", at + 1)) >= 0:
        values.append(text.index("{", at) + 1)
    at = 0
    while (at := text.find("Transpose <perm: ints = [0, 2, 1, 3]>", at + 1)) >= 0:
        perms.append(text.index("[", at))
    at = 0
    while (at := text.find(" = Div (", at + 1)) >= 0:
        inputs.append(at + len(" = Div ("))
    return {"value": values, "perm": perms, "input": inputs}


def run(text: str, edits: int = 2000, seed: int = 0, reference: Callable[[], float] | None = None) -> dict[str, Any]:
    """The session; per edit its kind and the milliseconds from the change sent to its diagnostics parsed.
    `reference` (onnx's parse + infer of the text, in ms) is timed every 250 edits, interleaved with the session, as
    the machine's load changes along it."""
    rng = random.Random(seed)
    client = Client()
    client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {
        "general": {"positionEncodings": ["utf-16"]},
        "textDocument": {"diagnostic": {}, "hover": {}, "completion": {}}}})  # fmt: skip
    client.notify("initialized", {})
    doc = Document("file:///bench/soak/gpt_L96.onnxtxt", text)
    ident = {"uri": doc.uri}
    t0 = time.perf_counter()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": doc.uri, "languageId": "onnxtxt", "version": 1,
                                                            "text": text}})  # fmt: skip
    at, report = client.request("textDocument/diagnostic", {"textDocument": ident})
    open_s = at - t0
    result_id = report.get("resultId")
    rss = {"open": rss_mb(client.proc.pid)}
    sites = _sites(text)
    kinds: list[str] = []
    times: list[float] = []
    counts: list[int] = []
    shown = 0

    def edit(kind: str, start: int, end: int, new: str) -> None:
        nonlocal result_id
        change = doc.change(start, end, new)
        sent = time.perf_counter()
        client.notify("textDocument/didChange", change)
        at, report = client.request("textDocument/diagnostic", {"textDocument": ident,
                                                                "previousResultId": result_id})  # fmt: skip
        times.append((at - sent) * 1000)
        kinds.append(kind)
        result_id = report.get("resultId", result_id)
        counts.append(len(report.get("items", ())) if report.get("kind") == "full" else -1)

    def between(k: int) -> None:
        nonlocal shown
        if k % 5 == 0:
            off = doc.text.find('"/b.', rng.randrange(len(doc.text) // 2))
            client.request("textDocument/hover", {"textDocument": ident, "position": doc.position(off + 3)})
        if k % 7 == 0:
            off = doc.text.find(" (", rng.randrange(len(doc.text) // 2)) + 2
            client.request("textDocument/completion", {"textDocument": ident, "position": doc.position(off)})
        if k % 100 == 50:
            path = VIEWS[(k // 100) % len(VIEWS)]
            if path.exists():
                command = {"command": "graphlsp.renderView", "arguments": [{"path": str(path)}]}
                _, answer = client.request("workspace/executeCommand", command)
                uri = path.as_uri()
                item = {"uri": uri, "languageId": "onnxtxt", "version": 1, "text": answer["text"]}
                client.notify("textDocument/didOpen", {"textDocument": item})
                client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
                client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
                shown += 1

    k = 0
    reference_ms: list[float] = []
    while len(times) < edits:
        if reference is not None and len(times) >= 250 * len(reference_ms):
            reference_ms.append(reference())
        # one site's round: a value edited, its line broken by a half-typed token and mended, the value undone;
        # every fourth round a perm changed and changed back
        at = rng.choice(sites["value"])
        old_end = doc.text.index("}", at)
        old = doc.text[at:old_end]
        value = rng.choice(["0.25", "0.5", "2.0", "1e-3"])
        edit("value", at, old_end, value)
        between(k := k + 1)
        inp = rng.choice(sites["input"])
        inp += len(value) - len(old) if inp > at else 0
        edit("break", inp, inp, "@@")
        between(k := k + 1)
        edit("repair", inp, inp + 2, "")
        between(k := k + 1)
        edit("value", at, doc.text.index("}", at), old)
        between(k := k + 1)
        if k % 16 == 0:
            p = rng.choice(sites["perm"])
            edit("perm", p, p + len("[0, 2, 1, 3]"), "[0, 1, 2, 3]")
            edit("perm", p, p + len("[0, 1, 2, 3]"), "[0, 2, 1, 3]")
        if len(times) >= 100 and "after 100" not in rss:
            rss["after 100"] = rss_mb(client.proc.pid)
    rss["end"] = rss_mb(client.proc.pid)
    client.close()
    if reference is not None:
        reference_ms.append(reference())
    return {"open_s": open_s, "kinds": kinds, "ms": times, "counts": counts, "rss_mb": rss, "views": shown,
            "reference_ms": reference_ms}


def summary(r: dict[str, Any], onnx_ms: float | None = None) -> dict[str, Any]:
    """Per kind of edit: p50 over the session, over its first and its last 200 edits; and the verdicts. onnx's time:
    the median of those timed along the session unless given."""
    if onnx_ms is None:
        onnx_ms = statistics.median(r["reference_ms"])
    out: dict[str, Any] = {}
    n = len(r["ms"])
    for kind in sorted(set(r["kinds"])):
        mine = [(i, ms) for i, (k, ms) in enumerate(zip(r["kinds"], r["ms"], strict=True)) if k == kind]
        first = [ms for i, ms in mine if i < 200]
        last = [ms for i, ms in mine if i >= n - 200]
        out[kind] = {"count": len(mine), "p50": statistics.median(ms for _, ms in mine),
                     "first200": statistics.median(first) if first else float("nan"),
                     "last200": statistics.median(last) if last else float("nan"),
                     "max": max(ms for _, ms in mine)}  # fmt: skip
    broken = [ms for k, ms in zip(r["kinds"], r["ms"], strict=True) if k in ("break", "repair")]
    out["broken_p50"] = statistics.median(broken) if broken else float("nan")
    out["growth_mb"] = r["rss_mb"]["end"] - r["rss_mb"].get("after 100", r["rss_mb"]["end"])
    out["onnx_ms"] = onnx_ms
    return out


def report(r: dict[str, Any], s: dict[str, Any]) -> list[str]:
    from bench.common import verdict

    onnx = s["onnx_ms"]
    lines = [f"soak: {len(r['ms'])} edits through a JSON-RPC client (pull diagnostics), {r['views']} binary views "
             f"opened and closed between; onnx parse + infer_shapes {onnx:.1f} ms"]  # fmt: skip
    for kind in ("value", "perm", "break", "repair"):
        if kind not in s:
            continue
        x = s[kind]
        budget = (VALUE_RATIO if kind in ("value", "perm") else BROKEN_RATIO) * onnx
        slower = x["last200"] > DRIFT * x["first200"]
        lines.append(f"  {kind} edit to its diagnostics ({x['count']}): p50 {x['p50']:.1f} ms (ratio "
                     f"{x['p50'] / onnx:.3f}), max {x['max']:.0f} ms | budget {budget:.1f} ms: "
                     f"{verdict(x['p50'] <= budget)}; first 200 p50 {x['first200']:.1f} ms, last 200 "
                     f"{x['last200']:.1f} ms: {verdict(not slower)}")  # fmt: skip
    rss = r["rss_mb"]
    lines.append(f"  server memory: {rss['open']:.0f} MB after open, {rss.get('after 100', float('nan')):.0f} MB "
                 f"after 100 edits, {rss['end']:.0f} MB after {len(r['ms'])}: growth {s['growth_mb']:.0f} MB | budget "
                 f"{GROWTH_MB:.0f} MB: {verdict(s['growth_mb'] <= GROWTH_MB)}")  # fmt: skip
    return lines
