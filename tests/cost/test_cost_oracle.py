"""The cost formulas against execution (tools/cost_oracle.py, whose full sweep covers corpus/ and
../shared/realworld): on a few real exporter models, every node's FLOPs, MACs and bytes formula evaluated at three
input sizes equals the count from the shapes onnxruntime produces at those sizes, the peak formula equals a replay
of the node order over those shapes, and the parameters equal the initializer bytes onnx stores."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT, SHARED, load_tool, needs

pytest.importorskip("onnxruntime")


def _tool() -> ModuleType:
    return load_tool("cost_oracle")


MODELS = [
    "corpus/models/dynamo_cnn.onnx",  # torch dynamo: Conv, pooling, Gemm
    "corpus/models/genai_llama_int4.onnx",  # GroupQueryAttention with a past, MatMulNBits, external data
    "corpus/models/ortq_static_qop_cnn.onnx",  # QLinearConv and friends
    "corpus/models/ortopt_bert.onnx",  # onnxruntime's fused Attention, SkipLayerNormalization
    "corpus/models/torchscript_rnn.onnx",  # LSTM
    "corpus/sizes/tiny_yolo.onnx",  # strided convolutions: floors of the image size
]


@needs((SHARED / "tools" / "runtime_shapes.py").exists(), "../shared/tools/runtime_shapes.py feeds the runs")
@pytest.mark.parametrize("model", MODELS)
def test_formulas_equal_the_counts_of_a_run(model: str) -> None:
    oracle = _tool()
    r = oracle.judge(Path(ROOT / model), 3)
    assert "error" not in r, r.get("error")
    assert len(r["runs"]) >= 2
    assert r["bad"] == []
    assert r["judged"] > 0 and r["equal"] == r["judged"]
    assert r["params"]["graphlsp"] == r["params"]["onnx"] > 0
    assert r["peak"] and all(p["graphlsp"] == p["replay"] is not None for p in r["peak"])


@needs((SHARED / "tools" / "runtime_shapes.py").exists(), "../shared/tools/runtime_shapes.py feeds the runs")
def test_the_oracle_sees_a_wrong_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    """A formula off by one where a dim is symbolic differs from the run's count: the oracle says where (the
    formula comes from inferred symbolic shapes, the count from the run's concrete ones)."""
    from graphlsp.cost import conv, registry
    from graphlsp.infer import dims as d

    oracle = _tool()
    registry.lookup("", "Conv")

    def off_by_one(c: registry.Call) -> registry.Work:
        w = conv.conv(c)
        symbolic = any(isinstance(x, d.Expr) for s in c.inputs if s is not None for x in s)
        return registry.Work(d.add(w.flops, 1) if symbolic else w.flops, w.macs)

    monkeypatch.setitem(registry._RULES, ("", "Conv"), off_by_one)
    r = oracle.judge(ROOT / "corpus/models/dynamo_cnn.onnx", 2)
    assert len(r["bad"]) == 3 * 2 and all(": flops " in line for line in r["bad"])  # 3 Conv nodes, 2 sizes
