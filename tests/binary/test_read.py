"""The binary front end on real models: no false alarms, lazy weights, external data kept inside the folder,
exporter conventions, and the same IR whether a large file's weights are copied or left in the file."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from graphlsp.analysis import ModelAnalysis
from graphlsp.binary import read as binary_read
from graphlsp.binary.read import ProtoTensor, read_model
from graphlsp.graph.tensor import TensorError
from graphlsp.infer.types import type_str
from tests.binary.models import real_models
from tests.conftest import needs, shared_reason

MODELS = real_models()
ids = [p.name for p in MODELS]


@needs(MODELS, shared_reason("realworld"))
@pytest.mark.parametrize("path", MODELS, ids=ids)
def test_real_models_have_no_errors_and_no_internal_errors(path: Path) -> None:
    model, findings = read_model(path)
    a = ModelAnalysis(model, findings)
    bad = [(f.code, f.message) for f in a.findings() if f.severity == "error" or f.code == "GL399"]
    assert bad == []


def _types(path: Path, strip_above: int) -> dict[str, str]:
    model, findings = read_model(path, strip_above=strip_above)
    a = ModelAnalysis(model, findings)
    assert model.graph is not None
    return {v.name: type_str(a.refiner.type_of(v)) for v in model.graph.values.values()}


@needs(MODELS, shared_reason("realworld"))
def test_weights_left_in_a_large_file_give_the_same_model() -> None:
    left_somewhere = 0
    for path in MODELS[:4]:
        assert _types(path, 0) == _types(path, 1 << 40), path.name
        copied, _ = read_model(path, strip_above=1 << 40)
        left, _ = read_model(path, strip_above=0)
        assert copied.graph is not None and left.graph is not None
        pairs = [(v.tensor, copied.graph.initializers[k].tensor) for k, v in left.graph.initializers.items()]
        for n, m in zip(left.graph.nodes, copied.graph.nodes, strict=True):
            pairs += [(a.value, m.attributes[k].value) for k, a in n.attributes.items() if a.kind == "tensor"]
        inline = [(t, o) for t, o in pairs if isinstance(t, ProtoTensor) and t.inline]
        left_somewhere += len(inline)
        for t, other in inline[:20]:
            assert other is not None and t is not None
            np.testing.assert_array_equal(t.numpy(), other.numpy())
    assert left_somewhere, "models with weights of a few KiB leave some in the file"


def _external_model(folder: Path, location: str, length: int = 16) -> Path:
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(length))):
        w.external_data.add(key=k, value=v)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w],
    )  # fmt: skip
    path = folder / "m.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    return path


@pytest.mark.parametrize(
    ("location", "says"),
    [("../outside.bin", "leaves the model's folder"), ("/etc/passwd", "is absolute"), ("link.bin", "outside"),
     ("missing.bin", "does not exist"), ("short.bin", "too short")],
)  # fmt: skip
def test_external_data_outside_the_folder_missing_or_short_is_a_finding_and_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str, says: str
) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "outside.bin").write_bytes(bytes(16))
    os.symlink(tmp_path / "outside.bin", folder / "link.bin")
    (folder / "short.bin").write_bytes(bytes(8))
    path = _external_model(folder, location)
    opened: list[str] = []
    real_open = binary_read._read_range
    monkeypatch.setattr(binary_read, "_read_range", lambda where, n: opened.append(where.path) or real_open(where, n))
    model, findings = read_model(path)
    a = ModelAnalysis(model, findings)
    got = [f for f in a.findings() if f.code == "GL107"]
    assert len(got) == 1 and says in got[0].message
    assert model.graph is not None
    tensor = model.graph.initializers["w"].tensor
    assert tensor is not None
    with pytest.raises(TensorError):
        tensor.numpy()
    assert opened == []


def test_external_data_inside_the_folder_is_read_only_when_asked(tmp_path: Path) -> None:
    path = _external_model(tmp_path, "w.bin")
    (tmp_path / "w.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    model, findings = read_model(path)
    assert [f.code for f in findings] == []
    assert model.graph is not None
    t = model.graph.initializers["w"].tensor
    assert isinstance(t, ProtoTensor) and t.external
    np.testing.assert_array_equal(t.numpy(), np.arange(4, dtype=np.float32))


def test_a_negative_dim_is_unknown_with_a_warning_naming_the_convention() -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3])],
    )  # fmt: skip
    model, findings = binary_read.model_from_proto(helper.make_model(graph))
    a = ModelAnalysis(model, findings)
    warnings = [f for f in a.findings() if f.code == "GL110"]
    assert warnings and all("paddle2onnx" in f.message for f in warnings)
    assert model.graph is not None
    assert type_str(a.refiner.type_of(model.graph.values["y"])) == "float[?, 3]"


def test_dim_params_exporters_write_are_symbols_or_expressions_never_a_crash() -> None:
    long_expr = "(floor(floor(floor(height/2 - 1/2)/2)/2) + 1)*(floor(floor(floor(width/2 - 1/2)/2)/2) + 1)"
    dims = ["p2o.DynamicDimension.0", "?", "unk__12", long_expr, "s" * 500]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["a/b:c@d"], ["y.0"])], "g",
        [helper.make_tensor_value_info("a/b:c@d", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y.0", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model, findings = binary_read.model_from_proto(helper.make_model(graph))
    a = ModelAnalysis(model, findings)
    assert [f.code for f in a.findings() if f.severity == "error"] == []
    assert model.graph is not None
    ty = type_str(a.refiner.type_of(model.graph.values["y.0"]))
    assert ty.startswith("float[p2o.DynamicDimension.0, ?, unk__12,") or "DynamicDimension" in ty


def test_weights_of_a_model_with_external_data_are_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _external_model(tmp_path, "w.bin", length=16)
    (tmp_path / "w.bin").write_bytes(bytes(16))
    monkeypatch.setattr(binary_read, "_read_range", lambda *a: pytest.fail("a weight was read"))
    model, findings = read_model(path)
    ModelAnalysis(model, findings, fold_size_cap=0).findings()


def test_a_truncated_or_garbled_file_is_an_error_not_a_crash(tmp_path: Path) -> None:
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_binary

    path = _external_model(tmp_path, "w.bin")
    data = path.read_bytes()
    for i, bad in enumerate([data[: len(data) // 2], b"\xff" * 100, data[:7] + b"\x00" * 9 + data[16:]]):
        p = tmp_path / f"bad{i}.onnx"
        p.write_bytes(bad)
        diags = lint_binary(str(p), Settings())
        assert all(d.code != "GL399" for d in diags)
        if i < 2:
            assert [d.code for d in diags] == ["GL106"]



def test_a_sparse_initializer_has_its_dense_shape(tmp_path: Path) -> None:
    """A sparse initializer is the dense tensor of its dims (the values' dims are [NNZ]): no false GL315 on a
    model onnxruntime runs."""
    import onnx
    import onnxruntime as ort

    values = helper.make_tensor("s", TensorProto.FLOAT, [2], [5.0, 7.0])
    indices = helper.make_tensor("s_idx", TensorProto.INT64, [2], [1, 10])
    sparse = helper.make_sparse_tensor(values, indices, [3, 4])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "s"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
    )  # fmt: skip
    graph.sparse_initializer.append(sparse)
    path = tmp_path / "sparse.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    dense = np.zeros(12, dtype=np.float32)
    dense[[1, 10]] = [5.0, 7.0]
    got = ort.InferenceSession(str(path)).run(None, {"x": np.zeros((3, 4), np.float32)})[0]
    np.testing.assert_array_equal(got, dense.reshape(3, 4))  # the oracle: a valid model
    model, findings = read_model(path)
    a = ModelAnalysis(model, findings)
    assert [f.code for f in a.findings() if f.severity in ("error", "warning")] == []
    assert model.graph is not None
    assert type_str(a.refiner.type_of(model.graph.values["s"])) == "float[3, 4]"
    assert type_str(a.refiner.type_of(model.graph.values["y"])) == "float[3, 4]"
