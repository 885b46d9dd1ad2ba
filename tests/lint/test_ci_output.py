"""`graphlsp check` in CI: binary data read as text, typos in rule codes, hints, severity words, grouped findings,
and the other commands' edges (a missing file, a bad address, `shapes --format json`, `--fix` on a binary)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from graphlsp.cli import main
from tests.lint.test_output_binary import broken_model

H = '<ir_version: 10, opset_import: ["" : 21]>\n'


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


# ---- binary data read as text
def test_a_binary_model_on_stdin_without_a_name_is_one_finding_with_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _stdin(monkeypatch, broken_model().SerializeToString())
    code, out, _ = run(capsys, "check", "--format", "concise", "-")
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2, out
    assert lines[0].startswith("-:1:1: error: GL105 this is a binary ONNX model (protobuf), not ONNX text")
    assert "--stdin-filename model.onnx" in lines[0]


def test_a_binary_model_named_bin_is_one_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(broken_model().SerializeToString())
    code, out, _ = run(capsys, "check", "--no-cache", str(path))
    assert code == 1
    assert out.count("GL105") == 1 and "binary ONNX model" in out and "GL101" not in out
    assert len(out.splitlines()) < 10 and "Found 1 error in 1 file." in out


def test_other_binary_data_is_one_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import random

    data = bytes(random.Random(7).randrange(256) for _ in range(20_000)) + b"\0"
    (tmp_path / "noise.onnxtxt").write_bytes(data)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(tmp_path / "noise.onnxtxt"))
    assert code == 1 and out.count("GL105") == 1 and "binary data, not ONNX text" in out
    assert len(out.splitlines()) == 2


def test_a_few_bad_bytes_in_text_still_parse_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = H + "# caf\xe9\ng (float[N] x) => (float[N] y) {\n  y = Relu (zz)\n}\n"
    (tmp_path / "latin1.onnxtxt").write_bytes(text.encode("latin-1"))
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(tmp_path / "latin1.onnxtxt"))
    assert code == 1 and "GL105" in out and "GL201" in out  # the text is still checked
