"""Constant evaluation under a budget (`runner.budget`): work an attribute sets without bound, and Loops nested in
an If branch or in another Loop, never hang; what is over the budget stays unknown and is not a finding."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

from graphlsp.analysis import ModelAnalysis
from graphlsp.binary.read import read_model
from graphlsp.infer.types import type_str

WAIT = 60  # seconds: far over what a budgeted evaluation takes (~1 s), far under "never returns"


def _const(name: str, arr: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(arr, name))


def _loop(trips: str, out: str) -> onnx.NodeProto:
    """out = sum of the iteration numbers over `trips` iterations (a condition that stays true)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), helper.make_node("Add", ["acc", "i"], ["acc_out"])],
        "body",
        [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond", T.BOOL, []),
         helper.make_tensor_value_info("acc", T.INT64, [])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("acc_out", T.INT64, [])],
    )  # fmt: skip
    return helper.make_node("Loop", [trips, "yes", "zero"], [out], body=body)


def _tfidf(out: str) -> list[onnx.NodeProto]:
    return [
        _const("tokens", np.array([[1, 2, 3, 4]], dtype=np.int64)),
        helper.make_node("TfIdfVectorizer", ["tokens"], [out], mode="TF", min_gram_length=1, max_gram_length=1,
                         max_skip_count=0, ngram_counts=[0, 2**63 - 1], ngram_indexes=[0, 1], pool_int64s=[1, 2]),
    ]  # fmt: skip


def _model(case: str) -> onnx.ModelProto:
    """A value computed from constants that a shape function asks for (ConstantOfShape's shape)."""
    common = [
        _const("zero", np.array(0, dtype=np.int64)), _const("yes", np.array(True)),
        _const("big", np.array(10**9, dtype=np.int64)), _const("ten", np.array(10, dtype=np.int64)),
    ]  # fmt: skip
    if case == "loop-in-if":
        branch = helper.make_graph([_loop("big", "r")], "then", [], [helper.make_tensor_value_info("r", T.INT64, [])])
        nodes = [helper.make_node("If", ["yes"], ["y"], then_branch=branch, else_branch=branch)]
    elif case == "loop-in-loop":
        body = helper.make_graph(
            [helper.make_node("Identity", ["c2"], ["c2o"]), _loop("big", "r"),
             helper.make_node("Add", ["acc2", "r"], ["acc2o"])], "outer",
            [helper.make_tensor_value_info("j", T.INT64, []), helper.make_tensor_value_info("c2", T.BOOL, []),
             helper.make_tensor_value_info("acc2", T.INT64, [])],
            [helper.make_tensor_value_info("c2o", T.BOOL, []), helper.make_tensor_value_info("acc2o", T.INT64, [])],
        )  # fmt: skip
        nodes = [helper.make_node("Loop", ["ten", "yes", "zero"], ["y"], body=body)]
    elif case == "tfidf":
        nodes = [*_tfidf("f"), helper.make_node("ReduceSum", ["f"], ["fs"], keepdims=0),
                 helper.make_node("Cast", ["fs"], ["y"], to=T.INT64)]  # fmt: skip
    else:  # a TfIdfVectorizer in an If branch: onnx builds its kernel only when it runs the branch
        branch = helper.make_graph(
            [*_tfidf("f"), helper.make_node("ReduceSum", ["f"], ["fs"], keepdims=0),
             helper.make_node("Cast", ["fs"], ["r"], to=T.INT64)], "then", [],
            [helper.make_tensor_value_info("r", T.INT64, [])],
        )  # fmt: skip
        nodes = [helper.make_node("If", ["yes"], ["y"], then_branch=branch, else_branch=branch)]
    tail = [_const("ax", np.array([0], dtype=np.int64)), helper.make_node("Unsqueeze", ["y", "ax"], ["s"]),
            helper.make_node("ConstantOfShape", ["s"], ["z"])]  # fmt: skip
    graph = helper.make_graph([*common, *nodes, *tail], "g", [], [helper.make_tensor_value_info("z", T.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


CASES = ["loop-in-if", "loop-in-loop", "tfidf", "tfidf-in-if"]


@pytest.mark.parametrize("case", CASES)
def test_check_returns_on_unbounded_constant_work(tmp_path: Path, case: str) -> None:
    path = tmp_path / "model.onnx"
    onnx.save(_model(case), path)
    t0 = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "graphlsp", "check", "--no-cache", "-j", "1", str(path)],
                              capture_output=True, text=True, timeout=WAIT)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"check did not return in {WAIT} s")
    assert done.returncode in (0, 1), done.stderr
    assert time.monotonic() - t0 < WAIT


@pytest.mark.parametrize("case", CASES)
def test_over_budget_values_stay_unknown_and_are_not_findings(tmp_path: Path, case: str) -> None:
    path = tmp_path / "model.onnx"
    onnx.save(_model(case), path)
    got: dict[str, object] = {}

    def analyse() -> None:
        model, findings = read_model(path)
        a = ModelAnalysis(model, findings)
        got["a"], got["codes"] = a, [f.code for f in a.findings()]

    worker = threading.Thread(target=analyse, daemon=True)
    worker.start()
    worker.join(WAIT)
    assert not worker.is_alive(), "the analysis did not return"
    a = got["a"]
    assert isinstance(a, ModelAnalysis) and a.model.graph is not None
    z = a.model.graph.values["z"]
    assert a.refiner.type_of(z).shape is None or any(not isinstance(d, int) for d in a.refiner.type_of(z).shape)  # type: ignore[union-attr]
    assert a.runner.refused, "the runner records why it stopped"
    assert not a.runner.errors
    assert [c for c in got["codes"] if c.startswith("GL4")] == []  # type: ignore[attr-defined]


def test_a_loop_within_the_budget_still_runs(tmp_path: Path) -> None:
    m = _model("loop-in-loop")
    m.graph.node[2].attribute[0].t.CopyFrom(onnx.numpy_helper.from_array(np.array(50, dtype=np.int64), "big"))
    path = tmp_path / "model.onnx"
    onnx.save(m, path)
    model, findings = read_model(path)
    a = ModelAnalysis(model, findings)
    assert model.graph is not None
    y = a.runner.value_of(model.graph.values["y"], a.refiner)
    assert y is not None and int(y) == 10 * sum(range(50))


def _chain(n: int) -> onnx.ModelProto:
    """f{n-1} calls f{n-2} ... calls f0, called on a constant whose value ConstantOfShape needs."""
    ops = [helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    ceil = [helper.make_node("Cast", ["x"], ["xf"], to=T.FLOAT), helper.make_node("Ceil", ["xf"], ["cf"]),
            helper.make_node("Cast", ["cf"], ["y"], to=T.INT64)]  # Ceil: a value only the runner computes
    fns = [helper.make_function("local", "f0", ["x"], ["y"], ceil, ops)]
    for i in range(1, n):
        body = [helper.make_node(f"f{i - 1}", ["x"], ["t"], domain="local"), helper.make_node("Identity", ["t"], ["y"])]
        fns.append(helper.make_function("local", f"f{i}", ["x"], ["y"], body, ops))
    nodes = [_const("c", np.array([2, 3], dtype=np.int64)), helper.make_node(f"f{n - 1}", ["c"], ["s"], domain="local"),
             helper.make_node("ConstantOfShape", ["s"], ["z"])]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("z", T.FLOAT, None)])
    return helper.make_model(graph, opset_imports=ops, functions=fns)


def test_a_long_chain_of_functions_on_a_constant_stays_small(tmp_path: Path) -> None:
    """Each evaluation of a call built an evaluator per model-local function and nested one per call level:
    400 functions took 850 MB and ended in RecursionError (800: 3 GB). Calls nested deeper than the refiner's
    limit are not evaluated; only the functions a call reaches are handed to onnx."""
    path = tmp_path / "chain.onnx"
    onnx.save(_chain(400), path)
    code = (
        "import re, sys; from graphlsp.cli import main; code = main(['check', '--no-cache', '-j', '1', "
        f"{str(path)!r}]); print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1], file=sys.stderr)"
    )
    # the peak of the child's own memory (VmHWM: ru_maxrss keeps the parent's peak across exec, so a pytest grown
    # large by the tests before made this fail); the kernel tables from the shipped files (reading the installed
    # onnxruntime's registry the first time imports it, a few hundred MB of its own)
    env = {**os.environ, "GRAPHLSP_ORT_TABLES": "shipped"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT, env=env)
    peak_kib = int(done.stderr.strip().splitlines()[-1])
    assert peak_kib < 300 * 1024, f"{peak_kib >> 10} MiB"


def test_a_short_chain_of_functions_is_evaluated(tmp_path: Path) -> None:
    path = tmp_path / "chain.onnx"
    onnx.save(_chain(12), path)
    model, findings = read_model(path)
    a = ModelAnalysis(model, findings)
    assert model.graph is not None
    assert type_str(a.refiner.type_of(model.graph.values["z"])) == "float[2, 3]"
    assert a.runner.stats.evaluations >= 1
