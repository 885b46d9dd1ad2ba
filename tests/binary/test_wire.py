"""The wire walk of large files (`binary.wire`) reads what protobuf reads when a field that is not repeated is
written more than once: the last raw_data, every piece of float_data, one merged graph, one merged attribute
tensor. The oracle is onnx.load (protobuf's own parse) on the same bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphlsp.binary.read import STRIP_ABOVE, read_model
from graphlsp.binary.wire import KEEP_BELOW
from tests.binary.protobytes import field as _field
from tests.binary.protobytes import key as _key

N = KEEP_BELOW  # floats: 4 bytes each, so every element field here is large enough to be left in the file


def _floats(seed: int, n: int = N) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def _tensor(name: str, *element_fields: bytes, n: int = N) -> bytes:
    """A float TensorProto of n elements followed by the given element fields (raw_data 9, float_data 4)."""
    head = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[n]).SerializeToString()
    return head + b"".join(element_fields)


def _model_bytes(case: str) -> bytes:
    a, b = _floats(1), _floats(2)
    half1, half2 = _floats(3, N // 2), _floats(4, N // 2)
    if case == "raw-twice":  # protobuf: the last raw_data
        inits = [_tensor("w", _field(9, a.tobytes()), _field(9, b.tobytes()))]
    elif case == "raw-then-small-raw":  # the last one is small (kept in the message): it wins all the same
        small = _floats(5, 4)
        inits = [_tensor("w", _field(9, a.tobytes()), _field(9, small.tobytes()), n=4)]
    elif case == "float-data-in-pieces":  # packed repeated: protobuf joins the pieces
        inits = [_tensor("w", _field(4, half1.tobytes()), _field(4, half2.tobytes()))]
    elif case == "float-data-packed-and-not":  # a packed piece, then one element written unpacked
        one = np.float32(2.5).tobytes()
        inits = [_tensor("w", _field(4, a[:-1].tobytes()), _key(4, 5) + one)]
    else:
        inits = [_tensor("w", _field(9, a.tobytes()))]
    nodes = [helper.make_node("Identity", ["w"], ["y"]).SerializeToString()]
    attr = helper.make_attribute("value", numpy_helper.from_array(b, "c")).SerializeToString()
    if case == "attribute-tensor-twice":  # protobuf merges the two into one tensor: the second's raw_data wins
        attr += _field(5, _field(9, a.tobytes()))
    nodes.append(helper.make_node("Constant", [], ["c"]).SerializeToString() + _field(5, attr))
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None).SerializeToString() for n in ("y", "c")]
    graph_rest = _field(2, b"g") + b"".join(_field(12, o) for o in outputs)
    body = b"".join(_field(1, n) for n in nodes) + b"".join(_field(5, t) for t in inits) + graph_rest
    head = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 17)])
    head.ClearField("graph")
    if case == "graph-twice":  # protobuf merges the graphs: nodes and initializers of both, in order
        k = helper.make_attribute("value", numpy_helper.from_array(_floats(7), "k")).SerializeToString()
        second = _field(1, helper.make_node("Constant", [], ["k"]).SerializeToString() + _field(5, k))
        second += _field(1, helper.make_node("Identity", ["v"], ["z"]).SerializeToString())
        second += _field(5, _tensor("v", _field(9, _floats(6).tobytes())))
        second += b"".join(_field(12, helper.make_tensor_value_info(n, TensorProto.FLOAT, None).SerializeToString())
                           for n in ("z", "k"))  # fmt: skip
        return head.SerializeToString() + _field(7, body) + _field(7, second)
    return head.SerializeToString() + _field(7, body)


CASES = ["raw-twice", "raw-then-small-raw", "float-data-in-pieces", "float-data-packed-and-not",
         "attribute-tensor-twice", "graph-twice"]  # fmt: skip


def _oracle(path: Path) -> dict[str, np.ndarray]:
    proto = onnx.load(path)
    out = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    for n in proto.graph.node:
        for a in n.attribute:
            if a.type == a.TENSOR:
                out[n.output[0]] = numpy_helper.to_array(a.t)
    return out


def _ours(path: Path, strip_above: int) -> dict[str, np.ndarray]:
    model, _ = read_model(path, strip_above=strip_above)
    assert model.graph is not None
    out = {name: v.tensor.numpy() for name, v in model.graph.initializers.items() if v.tensor is not None}
    for node in model.graph.nodes:
        value = node.attributes.get("value")
        if node.op_type == "Constant" and value is not None and node.outputs[0] is not None:
            out[node.outputs[0].name] = value.value.numpy()  # type: ignore[union-attr]
    return out


@pytest.mark.parametrize("case", CASES)
def test_the_wire_walk_reads_repeated_fields_as_protobuf_does(tmp_path: Path, case: str) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(_model_bytes(case))
    want = _oracle(path)
    assert want  # the oracle parsed it
    for strip_above in (0, 1 << 40):  # the wire walk (every file), and protobuf alone
        got = _ours(path, strip_above)
        assert sorted(got) == sorted(want)
        for name, arr in want.items():
            np.testing.assert_array_equal(got[name], arr, err_msg=f"{case}: {name} (strip_above={strip_above})")


def test_a_file_over_the_threshold_reads_the_last_raw_data(tmp_path: Path) -> None:
    """The same at the real size, where `graphlsp` switches to the wire walk by itself."""
    n = STRIP_ABOVE // 4 // 2 + 1024
    a, b = np.zeros(n, np.float32), np.arange(n, dtype=np.float32)
    path = tmp_path / "big.onnx"
    body = _field(1, helper.make_node("Identity", ["w"], ["y"]).SerializeToString())
    body += _field(5, _tensor("w", _field(9, a.tobytes()), _field(9, b.tobytes()), n=n))
    body += _field(12, helper.make_tensor_value_info("y", TensorProto.FLOAT, None).SerializeToString())
    head = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 17)])
    head.ClearField("graph")
    path.write_bytes(head.SerializeToString() + _field(7, body))
    assert path.stat().st_size >= STRIP_ABOVE
    np.testing.assert_array_equal(_ours(path, STRIP_ABOVE)["w"], b)
