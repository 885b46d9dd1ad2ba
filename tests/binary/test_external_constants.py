"""Constant values in external data without a name, as torch exports saved with `convert_attribute=True` have
them: the text `convert` writes is read back by graphlsp and by onnx's parser, the editor's view has no false
findings, and `fold -o` writes a model that runs, or refuses a folder where its data would not be found."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.parser
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphlsp.view import render

X = np.arange(8, dtype=np.float32).reshape(2, 4)


def _unnamed(arr: np.ndarray) -> TensorProto:
    t = numpy_helper.from_array(arr)
    t.name = ""
    return t


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """y = MatMul(x, w) + c * c, with w and c unnamed Constant values saved in m.data."""
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    c = np.array([1.5, -2.0, 3.0], dtype=np.float32)
    nodes = [
        helper.make_node("Constant", [], ["w"], value=_unnamed(w)),
        helper.make_node("Constant", [], ["c"], value=_unnamed(c)),
        helper.make_node("Mul", ["c", "c"], ["cc"]),
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "cc"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])  # fmt: skip
    path = tmp_path / "m.onnx"
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path,
                    save_as_external_data=True, all_tensors_to_one_file=True, location="m.data", size_threshold=0,
                    convert_attribute=True)  # fmt: skip
    stored = onnx.load(path, load_external_data=False)
    assert all(n.attribute[0].t.data_location == TensorProto.EXTERNAL for n in stored.graph.node[:2])
    assert all(n.attribute[0].t.name == "" for n in stored.graph.node[:2])
    return path


def _run(path: Path) -> np.ndarray:
    return ort.InferenceSession(str(path)).run(None, {"x": X})[0]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphlsp", *args], capture_output=True, text=True, timeout=120)


def test_convert_writes_text_both_parsers_read(model: Path) -> None:
    text_path = model.with_suffix(".onnxtxt")
    done = _cli("convert", str(model), str(text_path))
    assert done.returncode == 0, done.stderr
    text = text_path.read_text()
    parsed = onnx.parser.parse_model(text)  # onnx's parser
    assert [n.attribute[0].t.data_location for n in parsed.graph.node[:2]] == [TensorProto.EXTERNAL] * 2
    check = _cli("check", "--no-cache", "-j", "1", str(text_path))
    assert check.returncode == 0 and "GL1" not in check.stdout, check.stdout
    back = model.with_name("back.onnx")  # and back to a binary beside the data: it runs as the original
    assert _cli("convert", str(text_path), str(back)).returncode == 0
    np.testing.assert_allclose(_run(back), _run(model))


def test_the_view_has_no_false_findings(model: Path) -> None:
    view = render(str(model))
    found = [*view.analysis.findings(), *view.all_findings()]
    assert sorted({f.code for f in found}) == ["GL401"], [(f.code, f.message) for f in found]


def test_fold_writes_a_model_that_runs_or_refuses_a_folder_without_its_data(model: Path, tmp_path: Path) -> None:
    want = _run(model)
    beside = model.with_name("folded.onnx")
    done = _cli("fold", str(model), "-o", str(beside))
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(_run(beside), want, rtol=1e-6)
    other = tmp_path / "other"
    other.mkdir()
    done = _cli("fold", str(model), "-o", str(other / "folded.onnx"))  # w stays external: its data is not there
    assert done.returncode == 2 and "same folder" in done.stderr, done.stderr
    assert not (other / "folded.onnx").exists()


def test_fold_into_another_folder_when_nothing_external_is_left(tmp_path: Path) -> None:
    c = np.array([1.5, -2.0, 3.0], dtype=np.float32)
    nodes = [helper.make_node("Constant", [], ["c"], value=_unnamed(c)), helper.make_node("Mul", ["c", "c"], ["cc"]),
             helper.make_node("Add", ["x", "cc"], ["y"])]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])  # fmt: skip
    path = tmp_path / "m.onnx"
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path,
                    save_as_external_data=True, location="m.data", size_threshold=0, convert_attribute=True)  # fmt: skip
    (tmp_path / "other").mkdir()
    out = tmp_path / "other" / "folded.onnx"
    done = _cli("fold", str(path), "-o", str(out))
    assert done.returncode == 0, done.stderr
    got = ort.InferenceSession(str(out)).run(None, {"x": np.zeros(3, np.float32)})[0]
    np.testing.assert_array_equal(got, c * c)
