"""Wrong exporter annotations (issue 35): `value_info` entries that inference contradicts are one GL315 per model,
naming how many and the first few, and `check --fix` removes them (every copy; nodes, weights and the rest of the
file as they were), after which onnxruntime computes the same outputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from graphlsp.cli import main
from tests.conftest import ROOT

YOLO = ROOT / "corpus" / "ultralytics" / "yolo11n.onnx"


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", "--no-cache", "-j", "1", *args])
    out, err = capsys.readouterr()
    return code, out + err


def test_contradicted_value_info_is_one_finding(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = _check(capsys, "--format", "concise", str(YOLO))
    lines = [x for x in out.splitlines() if "GL315" in x]
    assert len(lines) == 1, lines
    (line,) = lines
    assert "10 value_info entries contradict inference" in line and "and 7 more" in line
    assert "'/model.10/m/m.0/attn/Reshape_output_0' is declared with dim 3" in line
    assert "`check --fix` removes them" in line


def test_fix_removes_the_contradicted_entries_and_nothing_else(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    ort = pytest.importorskip("onnxruntime")
    path = tmp_path / "yolo11n.onnx"
    shutil.copyfile(YOLO, path)
    before = onnx.load(str(path))
    _, out = _check(capsys, "--fix", str(path))
    assert "fixed 10 issues" in out
    after = onnx.load(str(path))
    _, out = _check(capsys, str(path))
    assert "GL315" not in out
    gone = {vi.name for vi in before.graph.value_info} - {vi.name for vi in after.graph.value_info}
    assert len(gone) == 10 and all(n.startswith("/model.10/m/m.0/attn/") for n in gone)
    assert [vi for vi in before.graph.value_info if vi.name not in gone] == list(after.graph.value_info)
    assert before.graph.node == after.graph.node and before.graph.initializer == after.graph.initializer
    assert before.graph.input == after.graph.input and before.graph.output == after.graph.output
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 96)).astype(np.float32)
    outs = [ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(None, {"images": x})
            for p in (YOLO, path)]  # fmt: skip
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(a, b)
