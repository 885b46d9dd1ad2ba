"""If cases (infer/branches.py) and the kernel-within-input conditions, judged by onnxruntime.

torch writes `x.squeeze(2)` on a dynamic dim as `If(Equal(Shape(x)[2], 1), Squeeze, Identity)`; what reads the If's
output runs only in one of the cases. Each model here is run in onnxruntime at the witness graphlsp names (it must
fail on that node) and at a size where the condition holds (it must run).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tests.infer import size_oracle as oracle
from tests.infer import warning_oracle

ort = pytest.importorskip("onnxruntime")


def _squeeze_if(compare: str = "Equal", negate: bool = False) -> onnx.ModelProto:
    """x [1, 4, t] -> squeezed when t == 1 -> Unsqueeze(0) -> LSTM (3-D input only): runs only at t = 1."""
    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["ax"], value=helper.make_tensor("ax", TensorProto.INT64, [1], [2])),
         helper.make_node("Squeeze", ["x", "ax"], ["sq"])],
        "then", [], [helper.make_tensor_value_info("sq", TensorProto.FLOAT, None)])  # fmt: skip
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["same"])], "else", [],
                               [helper.make_tensor_value_info("same", TensorProto.FLOAT, None)])  # fmt: skip
    cond = "eq"
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Constant", [], ["i2"], value=helper.make_tensor("i2", TensorProto.INT64, [], [2])),
        helper.make_node("Gather", ["shape", "i2"], ["t"], axis=0),
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.INT64, [], [1])),
        helper.make_node(compare, ["t", "one"], ["eq"]),
    ]
    if negate:  # the same test written the other way round: Not(t > 1) with the branches as they are
        nodes.append(helper.make_node("Not", ["eq"], ["ne"]))
        cond = "ne"
    rng = np.random.default_rng(0)
    w = helper.make_tensor("W", TensorProto.FLOAT, [1, 32, 4], rng.standard_normal(128).astype(np.float32))
    r = helper.make_tensor("R", TensorProto.FLOAT, [1, 32, 8], rng.standard_normal(256).astype(np.float32))
    nodes += [
        helper.make_node("If", [cond], ["y"], then_branch=then_g, else_branch=else_g, name="squeeze_if"),
        helper.make_node("Constant", [], ["a0"], value=helper.make_tensor("a0", TensorProto.INT64, [1], [0])),
        helper.make_node("Unsqueeze", ["y", "a0"], ["seq"]),
        helper.make_node("LSTM", ["seq", "W", "R"], ["out"], hidden_size=8, name="lstm"),
    ]
    nodes.append(helper.make_node("Relu", ["x"], ["side"], name="side"))  # apart from the If and what follows it
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, "t"])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("side", TensorProto.FLOAT, None)], [w, r])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _conditions(path: Path) -> list[warning_oracle.Judged]:
    return [j for j in warning_oracle.judge(path) if j.code in ("GL320", "GL321")]


@pytest.mark.parametrize(("compare", "negate"), [("Equal", False), ("Greater", True)])
def test_a_node_after_a_squeeze_if_needs_the_squeezed_case(tmp_path: Path, compare: str, negate: bool) -> None:
    path = tmp_path / "squeeze_if.onnx"
    onnx.save(_squeeze_if(compare, negate), str(path))
    (j,) = _conditions(path)
    assert j.node == "lstm" and j.sizes == {"t": 2} and j.confirmed, j
    assert oracle.run(path, {"t": 1}) == "runs"


def test_the_case_split_leaves_the_analysis_as_it_was(tmp_path: Path) -> None:
    """Inferring the cases in a fork changes nothing the editor reads: the findings and every value's type."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model
    from graphlsp.infer.branches import branch_conditions

    path = tmp_path / "squeeze_if.onnx"
    onnx.save(_squeeze_if(), str(path))
    analysis = ModelAnalysis(read_model(str(path))[0], [])
    refiner = analysis.refiner
    types = {v: x.type for v, x in refiner.values.items()}
    findings = refiner.findings()
    (node,) = refiner.splits
    cases = branch_conditions(refiner)
    assert [n.op_type for n in cases] == ["LSTM"]
    assert {v: x.type for v, x in refiner.values.items()} == types
    assert refiner.findings() == findings and node in refiner.splits and not refiner.assumed
    assert branch_conditions(refiner) is cases  # kept while nothing is inferred again
    by_name = {n.name: n for n in refiner.contexts}
    refiner.rerun([by_name["side"]])  # an edit of a node the cases never reached: they stand
    assert branch_conditions(refiner) is cases
    refiner.rerun([by_name["lstm"]])  # one they reached: inferred again, to the same answer
    again = branch_conditions(refiner)
    assert again is not cases and again == cases


def _pool_then_conv(pool_kernel: int, conv_kernel: int) -> onnx.ModelProto:
    """x [1, 1, 1, w] -> AveragePool [1, k] stride k -> Conv [1, c]."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [1, 1, 1, conv_kernel], np.ones(conv_kernel, np.float32))
    graph = helper.make_graph(
        [helper.make_node("AveragePool", ["x"], ["p"], kernel_shape=[1, pool_kernel], strides=[1, pool_kernel]),
         helper.make_node("Conv", ["p", "w"], ["y"], name="conv")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_kernel_past_its_input_is_a_condition(tmp_path: Path) -> None:
    path = tmp_path / "conv.onnx"
    onnx.save(_pool_then_conv(2, 3), str(path))
    (j,) = _conditions(path)
    assert j.node == "conv" and j.confirmed, j
    assert oracle.run(path, {"w": 6}) == "runs"


def test_no_condition_where_onnxruntime_pools_past_the_input(tmp_path: Path) -> None:
    """A kernel of 3 with stride 3 on a width of 1 or 2: the spec counts 0 windows, onnxruntime 1 (it truncates);
    the Conv after it (kernel 1) runs at every width, so nothing is said of it."""
    path = tmp_path / "pool.onnx"
    onnx.save(_pool_then_conv(3, 1), str(path))
    assert not _conditions(path)
    assert {oracle.run(path, {"w": w}) for w in (1, 2, 3, 7)} == {"runs"}
