"""`graphlsp convert` of a binary to text: large weights elided by default (the text says where they are), every
element with `--weights inline`, a data file beside the text with `--weights external`, and `--textconv`'s stable
text for git (a digest per elided weight)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from graphlsp.cli import main


def model(path: Path, scale: float = 1.0) -> Path:
    w = numpy_helper.from_array((np.arange(4096, dtype=np.float32).reshape(64, 64) * scale + 0.123456), "w")
    b = numpy_helper.from_array(np.array([1.5, 2.5], np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
         helper.make_node("Add", ["y", "c"], ["z"], name="add"),
         helper.make_node("Gather", ["b", "i"], ["c"], name="g")],
        "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 64]),
              helper.make_tensor_value_info("i", onnx.TensorProto.INT64, [])],
        [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, ["n", 64])], [w, b])  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    return path


def test_elided_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = model(tmp_path / "m.onnx")
    assert main(["convert", str(src), "-"]) == 0
    out = capsys.readouterr().out
    assert "4096 values (16.0 KiB) not shown" in out and f"the weights are in {src}" in out
    assert "0.123456" not in out and len(out) < 2000
    assert "{1.5,2.5}" in out.replace(" ", "")  # small tensors stay whole
    assert main(["convert", str(src), "-", "--weights", "inline"]) == 0
    assert "0.123456" in capsys.readouterr().out


def test_external_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = model(tmp_path / "m.onnx")
    out = tmp_path / "t" / "m.onnxtxt"
    out.parent.mkdir()
    assert main(["convert", str(src), str(out), "--weights", "external"]) == 0
    data = (out.parent / "m.onnxtxt.data").read_bytes()
    assert len(data) >= 4096 * 4 and '"location": "m.onnxtxt.data"' in out.read_text()
    back = tmp_path / "t" / "back.onnx"
    assert main(["convert", str(out), str(back)]) == 0
    original, again = onnx.load(str(src)), onnx.load(str(back))
    for a, b in zip(original.graph.initializer, again.graph.initializer, strict=True):
        assert np.array_equal(numpy_helper.to_array(a), numpy_helper.to_array(b))
    assert main(["diff", str(src), str(back)]) == 0
    assert main(["convert", str(src), "-", "--weights", "external"]) == 2


def test_textconv_is_stable_and_shows_a_weight_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = model(tmp_path / "a.onnx")
    b = model(tmp_path / "b.onnx")
    c = model(tmp_path / "c.onnx", scale=2.0)
    texts = []
    for path in (a, b, c):
        assert main(["convert", "--textconv", str(path)]) == 0
        texts.append(capsys.readouterr().out)
    assert texts[0] == texts[1] and str(a) not in texts[0]
    changed = [line for line, other in zip(texts[0].splitlines(), texts[2].splitlines(), strict=True) if line != other]
    assert len(changed) == 1 and "sha256" in changed[0] and changed[0].lstrip().startswith("float[64,64] w")


def test_a_binary_and_its_text_are_the_same_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = model(tmp_path / "m.onnx")
    text = tmp_path / "m.onnxtxt"
    assert main(["convert", str(src), str(text), "--weights", "inline"]) == 0
    assert main(["diff", str(src), str(text)]) == 0
    assert "no differences" in capsys.readouterr().out
    elided = tmp_path / "e.onnxtxt"
    assert main(["convert", str(src), str(elided)]) == 0
    capsys.readouterr()
    assert main(["diff", str(src), str(elided)]) == 0  # the elided weight is not compared, and says so
    assert "1 initializers not compared" in capsys.readouterr().out
