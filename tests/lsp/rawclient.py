"""A bare JSON-RPC client over stdio: Content-Length framed messages written to `graphlsp serve`, replies read on a
thread as plain JSON (no lsprotocol types, so that a test sees exactly what the server sent, when it sent it)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30


def read_messages(out: IO[bytes], put: Callable[[dict[str, Any]], object]) -> None:
    """Each JSON-RPC message on a server's standard output (Content-Length framing) to `put`, until it ends."""
    while True:
        length = 0
        while (line := out.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if not line:
            return
        put(json.loads(out.read(length)))


class RawClient:
    """The server as a subprocess; messages are dicts or JSON text, replies are read on a thread."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "graphlsp.cli", "serve"], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()
        self._errors = threading.Thread(target=lambda f: self.stderr.extend(line.decode() for line in f),
                                        args=(self.proc.stderr,), daemon=True)  # fmt: skip
        self._errors.start()

    def _read(self, out: IO[bytes]) -> None:
        read_messages(out, self.messages.put)

    def send(self, *messages: dict[str, Any] | str) -> None:
        """Write the messages in one go."""
        data = b""
        for message in messages:
            body = (message if isinstance(message, str) else json.dumps(message)).encode()
            data += b"Content-Length: %d\r\n\r\n" % len(body) + body
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, msg_id: int, method: str, params: Any) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.reply(msg_id)

    def reply(self, msg_id: int) -> dict[str, Any]:
        while True:
            try:
                message = self.messages.get(timeout=TIMEOUT)
            except queue.Empty:
                raise AssertionError(f"no answer to request {msg_id} in {TIMEOUT} s") from None
            if message.get("id") == msg_id and "method" not in message:
                return message

    def close(self) -> None:
        if self.proc.poll() is None:
            self.request(10**6, "shutdown", None)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            self.proc.wait(TIMEOUT)
        self._errors.join(TIMEOUT)
