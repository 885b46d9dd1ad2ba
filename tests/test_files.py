"""Inputs are opened only when they are regular files (`graphlsp.files`): a FIFO named like a model, a link to
`/dev/zero`, never wedge nor exhaust the CLI or the language server; they are reported as not regular files."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from onnx import TensorProto, helper
from pytest_lsp import ClientServerConfig, LanguageClient

from graphlsp.files import NotRegularFile, read_regular
from tests.lsp.clients import SERVER, VSCODE, start

WAIT = 30  # seconds: a wedged command never returns


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name in ("model.onnx", "model.onnxtxt", "lib.onnxop"):
        os.mkfifo(tmp_path / name)
        out[f"fifo {name}"] = tmp_path / name
    os.symlink("/dev/zero", tmp_path / "zero.onnx")
    os.symlink("/dev/zero", tmp_path / "zero.onnxtxt")
    out["zero.onnx"], out["zero.onnxtxt"] = tmp_path / "zero.onnx", tmp_path / "zero.onnxtxt"
    return out


def test_read_regular_refuses_what_is_not_a_regular_file(specials: dict[str, Path], tmp_path: Path) -> None:
    for path in specials.values():
        with pytest.raises(NotRegularFile, match="not a regular file"):
            read_regular(path)
    with pytest.raises(NotRegularFile, match="not a regular file"):
        read_regular(tmp_path)
    (tmp_path / "big.onnx").write_bytes(b"x" * 100)
    with pytest.raises(NotRegularFile, match="too large"):
        read_regular(tmp_path / "big.onnx", limit=99)
    assert read_regular(tmp_path / "big.onnx") == b"x" * 100


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([sys.executable, "-m", "graphlsp", *args], capture_output=True, text=True,
                              timeout=WAIT)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"graphlsp {' '.join(args)} did not return in {WAIT} s")


@pytest.mark.parametrize("command", ["check", "shapes", "convert", "fold"])
def test_cli_reports_special_files_and_returns(specials: dict[str, Path], tmp_path: Path, command: str) -> None:
    for what, path in specials.items():
        if command in ("shapes", "convert", "fold") and path.suffix == ".onnxop":
            continue
        if command == "check":
            args = ["check", "--no-cache", "-j", "1", str(path)]
        elif command == "convert":
            args = ["convert", str(path), "-"]
        elif command == "fold":
            args = ["fold", str(path), "-o", str(tmp_path / f"out{path.suffix}")]
        else:
            args = ["shapes", str(path)]
        done = _cli(*args)
        assert done.returncode == 2, (what, done.stdout, done.stderr)
        assert "not a regular file" in done.stderr, (what, done.stderr)


def _tiny(path: Path) -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client, VSCODE)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_server_renders_a_fifo_or_dev_zero_as_unreadable_and_keeps_answering(
    client: LanguageClient, specials: dict[str, Path], tmp_path: Path
) -> None:
    async def render(path: Path) -> dict[str, str]:
        got = await asyncio.wait_for(client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command="graphlsp.renderView", arguments=[{"path": str(path)}])), WAIT)  # fmt: skip
        assert isinstance(got, dict)
        return got

    for name in ("fifo model.onnx", "zero.onnx"):
        got = await render(specials[name])
        assert "not a regular file" in (got["error"] or ""), got
    _tiny(tmp_path / "ok.onnx")
    got = await render(tmp_path / "ok.onnx")
    assert got["error"] is None and "Relu" in got["text"]


def test_check_of_standard_input_reads_at_most_the_limit(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    import io

    from graphlsp import files
    from graphlsp.cli import main

    class Endless(io.RawIOBase):  # /dev/zero
        def readable(self) -> bool:
            return True

        def readinto(self, b: bytearray) -> int:  # type: ignore[override]
            b[:] = bytes(len(b))
            return len(b)

    monkeypatch.setattr(files, "MAX_BYTES", 1 << 16)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    assert main(["check", "--stdin-filename", "m.onnxtxt", "-"]) == 2
    assert "standard input is larger than 65536 bytes" in capsys.readouterr().err


def test_a_check_runs_under_a_2_gib_address_space_cap(tmp_path: Path) -> None:
    """Reading a model reserved a buffer of the 2 GiB limit up front: under a memory cap (the fuzzer's 2 GiB)
    every check was a MemoryError."""
    model = tmp_path / "m.onnxtxt"
    model.write_text('<ir_version: 8, opset_import: ["" : 17]>\ng (float[N] x) => (float[N] y) {\n  y = Relu (x)\n}\n')
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
            f"from graphlsp.cli import main; sys.exit(main(['check', '--no-cache', {str(model)!r}]))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
