"""The fuzzer of `tests/fuzz_models.py` on a short budget (the whole file well under a minute): mutated and truncated
real models, text and binary, through check, shapes, convert, fold, the safe fixes and format. `make fuzz` runs
the same checks for GRAPHLSP_FUZZ_SECONDS (30 minutes by default)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzz_models as fm

TEXT_EXAMPLES = int(os.environ.get("GRAPHLSP_FUZZ_TEXT_EXAMPLES", "120"))
BINARY_EXAMPLES = int(os.environ.get("GRAPHLSP_FUZZ_BINARY_EXAMPLES", "120"))
_FOLDER = Path(tempfile.mkdtemp(prefix="gl-fuzz-test-"))


class _Drawn:
    """A Chooser whose choices hypothesis draws (and shrinks)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, items: Any) -> Any:
        return self.draw(st.sampled_from(items))

    def blob(self, max_size: int) -> bytes:
        return self.draw(st.binary(max_size=max_size))


@st.composite
def texts(draw: st.DrawFn) -> str:
    return fm.mutate_text(_Drawn(draw))


@st.composite
def binaries(draw: st.DrawFn) -> bytes:
    return fm.mutate_binary(_Drawn(draw))


_SETTINGS = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}


@settings(max_examples=TEXT_EXAMPLES, **_SETTINGS)
@given(texts())
def test_mutated_texts(text: str) -> None:
    fm.check_text(text, _FOLDER)


@settings(max_examples=BINARY_EXAMPLES, **_SETTINGS)
@given(binaries())
def test_mutated_binaries(data: bytes) -> None:
    fm.check_binary(data, _FOLDER)


def test_the_seeds_themselves() -> None:
    for text in fm.text_seeds()[::3]:
        fm.check_text(text, _FOLDER)


def test_length_fields_are_found_and_rewritten() -> None:
    from onnx import ModelProto

    seed = fm.binary_seeds()[0]
    fields = fm.length_fields(seed)
    assert len(fields) > 5
    at, after, n = fields[0]
    assert fm._varint(seed, at) == (n, after)
    data = bytearray(seed)
    data[at:after] = fm._encode_varint(2**63)
    try:
        ModelProto.FromString(bytes(data))
    except Exception:
        return  # protobuf refuses it, as a fuzzed model should make it
    raise AssertionError("a length past the end parsed")


def test_long_run_reports_inputs_per_target_and_failures(capsys: Any, tmp_path: Path) -> None:
    """`make fuzz` on a few seconds: every target and the language server get their turn, each input in a worker
    process under the memory cap and the audit of opened files."""
    fm.long_run(20.0, tmp_path / "out", seed=1, lsp_share=0.2)
    out = capsys.readouterr().out
    m = re.search(r"inputs in 20 s \(text (\d+), binary (\d+), proto (\d+), oplib (\d+), config (\d+), cli (\d+), "
                  r"view (\d+), repo (\d+) inputs, lsp (\d+) documents \((\d+) steps\)\), (\d+) distinct failures",
                  out)  # fmt: skip
    assert m is not None, out
    assert all(int(n) > 0 for n in m.groups()[:-1]), out
    failures = re.findall(r"^== (.*)$", out, re.M)
    assert len(failures) == int(m[11])
    unexplained = [f for f in failures if not any(re.search(p, f) for p in OPEN_ELSEWHERE)]
    assert not unexplained, out


# Failures known and not yet fixed, tolerated by the short run (`make fuzz` reports them all the same): none now.
OPEN_ELSEWHERE: list[str] = []


def test_a_worker_reports_opens_outside_the_folder_memory_blowups_hangs_and_deaths(tmp_path: Path) -> None:
    """The worker's audit hook and address-space cap: each way an input can go wrong is a failure, and the worker
    goes on (or is restarted) for the next input."""
    from tests.fuzz_targets import Worker

    def outside(data: bytes, folder: Path) -> None:
        (folder / "up" / "secret.bin").read_bytes()  # through a link inside the folder to its parent

    def outside_in_c(data: bytes, folder: Path) -> None:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.fopen.restype = ctypes.c_void_p
        f = libc.fopen(b"secret.bin", b"rb")  # C's fopen, in the working directory: no audit event
        assert f
        libc.fclose(ctypes.c_void_p(f))

    def inside(data: bytes, folder: Path) -> None:
        (folder / "mine.bin").write_bytes(data)
        assert (folder / "mine.bin").read_bytes() == data

    def blowup(data: bytes, folder: Path) -> None:
        assert len(bytearray(8 << 30)) > 0

    def hang(data: bytes, folder: Path) -> None:
        import time

        time.sleep(60)

    def die(data: bytes, folder: Path) -> None:
        os._exit(3)

    extra = {"t-outside": outside, "t-outside-c": outside_in_c, "t-inside": inside, "t-blowup": blowup, "t-hang": hang, "t-die": die}
    for name, fn in extra.items():
        fm.TARGETS[name] = (None, fn)
    worker = Worker(tmp_path, timeout=5, mb=512)
    try:
        status, _ = worker.run("t-outside", b"")
        assert status.startswith("opened outside the model's folder: ") and "secret.bin" in status, status
        status, _ = worker.run("t-outside-c", b"")
        assert status == f"opened outside the model's folder: {tmp_path / 'cwd' / 'secret.bin'}", status
        assert worker.run("t-inside", b"abc") == ("ok", "")
        assert worker.run("t-blowup", b"")[0].startswith("MemoryError"), "no memory cap"
        assert worker.run("t-hang", b"")[0] == "no answer in 5 s (killed)"
        assert worker.run("t-die", b"")[0] == "the worker died (exit 3)"
        assert worker.run("t-inside", b"again") == ("ok", "")
    finally:
        worker.stop()
        for name in extra:
            del fm.TARGETS[name]


def test_the_server_target_reads_the_servers_stderr() -> None:
    """Found by `make fuzz` (a few hundred documents into the server's turn, every request timed out): pygls's
    client pipes the server's stderr and never reads it, so the server blocked writing the traceback of an analysis
    crashing on purpose once the pipe and the client's buffer were full (about 200 KB). The fuzzer's target reads
    it: 1,000 crashing opens (a traceback each, about 600 KB) and the server still answers (without the reading,
    the hover times out)."""
    from lsprotocol import types as lsp

    from tests.lsp.reference import CRASH_MARKER

    target = fm.LspTarget()
    target._start()
    try:
        client = target.session.client
        for i in range(1000):
            client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
                uri=f"file:///stderr/{i}.onnxtxt", language_id="onnxtxt", version=1, text=CRASH_MARKER + "\n")))  # fmt: skip
        hover = target.session.run(client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri="file:///stderr/999.onnxtxt"),
            position=lsp.Position(line=0, character=0))))  # fmt: skip
        assert hover is None or isinstance(hover, lsp.Hover)
        assert any("injected by GRAPHLSP_TEST_CRASH_MARKER" in line for line in target.stderr)
    finally:
        target.close()


def test_the_repo_target_holds_on_random_repositories_and_catches_a_write_through_a_link(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The `repo` target (docs/security.md's rule on random repositories) passes on a few of them, and fails when
    an output is written the naive way, through the link a repository planted at its name."""
    import json
    import random

    import pytest

    from graphlsp import files
    from tests import fuzz_targets as ft

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    chooser = fm.RandomChooser(random.Random(7))
    for _ in range(6):
        ft.check_repo(ft.make_repo(chooser), tmp_path)
    spec = {"folders": ["."], "entries": [{"path": "./m.onnxtxt", "kind": "model", "target": ""}], "config": "",
            "config_name": "graphlsp.toml", "cache": "none", "planted": ["m.graph.html"],
            "commands": [["graph", "./m.onnxtxt"]]}  # fmt: skip
    ft.check_repo(json.dumps(spec).encode(), tmp_path)

    def naive(path: str, data: bytes, keep_mode: bool = False, sync: bool = False, dir_fd: int | None = None) -> None:
        with open(path, "wb") as f:
            f.write(data)

    monkeypatch.setattr(files, "write_file", naive)
    with pytest.raises(AssertionError, match="outside the repository|through the link"):
        ft.check_repo(json.dumps(spec).encode(), tmp_path)
