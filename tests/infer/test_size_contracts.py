"""Input sizes judged by onnxruntime: `check --dim` against execution on real torch exports (corpus/sizes), and
every shape-condition on the other real models shown true by running onnxruntime at the size it names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.infer import size_oracle as oracle

pytest.importorskip("onnxruntime")

ENTRIES = oracle.manifest()
CASES = [(name, sizes) for name, e in ENTRIES.items() for sizes in e["assignments"]]


def _model(name: str) -> Path:
    path = oracle.path_of(ENTRIES[name])
    if not path.exists():
        pytest.skip(f"{path} is not here")
    return path
REAL = sorted((ROOT / "corpus" / "models").glob("*.onnx")) + sorted((ROOT / "corpus" / "ultralytics").glob("*.onnx")) \
    + sorted((ROOT.parent / "shared" / "realworld").glob("*.onnx")) + sorted(oracle.SIZES.glob("*.onnx"))


def test_corpus_has_enough_exports() -> None:
    assert len(ENTRIES) >= 15
    assert all(len(e["assignments"]) >= 4 for e in ENTRIES.values())


@pytest.mark.parametrize(("name", "sizes"), CASES,
                         ids=[f"{n}-{'-'.join(map(str, oracle.sizes_of(s).values()))}" for n, s in CASES])
def test_check_at_sizes_agrees_with_onnxruntime(name: str, sizes: dict) -> None:
    path = _model(name)
    v = oracle.judge(path, sizes)
    assert v.agrees, f"onnxruntime: {v.runtime}; graphlsp errors on {v.errors}"


@pytest.mark.parametrize("name", list(ENTRIES))
def test_condition_without_sizes_on_the_failing_node(name: str) -> None:
    """A model that fails at some assignment has GL320 on that node; one that runs at all of them has none."""
    path = _model(name)
    warned = {node for _, code, node in oracle.check(path, None) if code in ("GL320", "GL321")}
    failing = {oracle.run(path, oracle.sizes_of(s), s.get("feeds")) for s in ENTRIES[name]["assignments"]} - {"runs"}
    assert failing <= warned
    if not failing:
        assert not warned


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_every_condition_fails_at_its_witness_on_its_node(path: Path) -> None:
    """Every GL320 and GL321, on the real models and the size corpus: onnxruntime run at the sizes it names fails
    at that very node (the witness satisfies the conditions of the nodes before it)."""
    from tests.infer import warning_oracle

    for j in warning_oracle.judge(path):
        assert j.sizes, j
        assert j.confirmed, f"{j.code} on {j.node} at {j.sizes}: onnxruntime {j.runtime}"


def test_symbolic_declaration_that_contradicts_inference(tmp_path: Path) -> None:
    """The detector's output declared [batch, 6, height, width], as a converter may write it: its height is
    2*floor((height + 31)/32). They differ at the first height where the model runs at all (its Concat holds at
    height % 32 in {0, 17..31}): 17."""
    import onnx

    model = onnx.load(str(oracle.SIZES / "tiny_yolo.onnx"))
    dims = model.graph.output[0].type.tensor_type.shape.dim
    for dim, name in zip(dims, ["batch", None, "height", "width"], strict=True):
        if name:
            dim.dim_param = name
    path = tmp_path / "declared.onnx"
    onnx.save(model, str(path))
    found = [x for x in oracle.check(path, None) if x[1] == "GL315"]
    assert found == [("warning", "GL315", "/head/Conv")]
    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_binary

    (message,) = [x.message for x in lint_binary(str(path), Settings()) if x.code == "GL315"]
    assert "dim 2 = height" in message and "at height=17 that is 17, not 2" in message
    sess = onnxruntime_shape(path, {"batch": 1, "height": 64, "width": 64})
    assert sess[2] == 4 != 64  # onnxruntime computes what inference says, not the declaration


def onnxruntime_shape(path: Path, sizes: dict[str, int]) -> list[int]:
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = np.zeros([sizes.get(d, d) if isinstance(d, str) else d for d in session.get_inputs()[0].shape], np.float32)
    return list(session.run(None, {session.get_inputs()[0].name: x})[0].shape)


def _inferred(path: Path, sizes: dict[str, int]) -> dict[str, list[int | None]]:
    """Every value's shape inferred with symbolic dims (no sizes bound), evaluated at the sizes (None where
    unknown)."""
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model
    from graphlsp.infer import dims as d
    from graphlsp.infer.types import TensorType

    model, found = read_model(path)
    a = ModelAnalysis(model, found)
    out: dict[str, list[int | None]] = {}
    for value, x in a.refiner.values.items():
        if isinstance(x.type, TensorType) and x.type.shape is not None:
            dims = []
            for v in x.type.shape:
                for name, size in sizes.items():
                    v = d.replace(v, d.symbol(name), size)
                dims.append(v if isinstance(v, int) else None)
            out[value.name] = dims
    return out


def _runtime(path: Path, sizes: dict[str, int]) -> dict[str, list[int]]:
    """Every node output's shape as onnxruntime computes it at the sizes."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(path))
    del model.graph.value_info[:]
    known = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for name in node.output:
            if name and name not in known:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
                known.add(name)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = oracle._feeds(session, sizes)
    names = [o.name for o in session.get_outputs()]
    return {n: list(v.shape) for n, v in zip(names, session.run(None, feeds), strict=True)}


@pytest.mark.parametrize(("name", "value"), [
    ("window_pad", "/Pad_output_0"),  # F.pad with pads computed as [4, 2] -> Slice step -1 -> Transpose -> Reshape
    ("window_pad", "y"),
])
def test_computed_pads_keep_every_dim(name: str, value: str) -> None:
    path = oracle.SIZES / ENTRIES[name]["file"]
    for sizes in map(oracle.sizes_of, ENTRIES[name]["assignments"]):
        assert _inferred(path, sizes)[value] == _runtime(path, sizes)[value], sizes


def test_range_over_a_dim_cast_to_float(tmp_path: Path) -> None:
    """YOLO's anchor grid: Range(0.0, Cast(Shape(x)[3], float), 1.0) has the width's length."""
    import onnx.parser

    text = ('<ir_version: 9, opset_import: ["" : 17]>\ng (float[1, 3, height, width] x) => (float[N] y) {\n'
            "  s = Shape <start = 3> (x)\n  w = Squeeze (s)\n  wf = Cast <to = 1> (w)\n"
            "  zero = Constant <value = float {0.0}> ()\n  one = Constant <value = float {1.0}> ()\n"
            "  r = Range (zero, wf, one)\n  half = Constant <value = float {0.5}> ()\n  y = Add (r, half)\n}\n")
    path = tmp_path / "grid.onnx"
    onnx.save(onnx.parser.parse_model(text), str(path))
    for sizes in ({"height": 4, "width": 5}, {"height": 2, "width": 17}):
        assert _inferred(path, sizes)["y"] == _runtime(path, sizes)["y"] == [sizes["width"]]
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model

    model, found = read_model(path)
    a = ModelAnalysis(model, found)
    (y,) = [x for v, x in a.refiner.values.items() if v.name == "y"]
    assert str(y.type.shape[0]) == "width"


def test_dynamic_quantize_lstm_has_shapes(tmp_path: Path) -> None:
    """onnxruntime's dynamic quantizer turns the LSTM of a torch export into com.microsoft.DynamicQuantizeLSTM
    (weights transposed: [num_directions, input_size, 4 * hidden_size]); its outputs are inferred, not declared."""
    import onnx
    from onnxruntime.quantization import quantize_dynamic

    quantized = tmp_path / "q.onnx"
    quantize_dynamic(str(oracle.SIZES / ENTRIES["tiny_lstm"]["file"]), str(quantized))
    model = onnx.load(str(quantized))
    assert any(n.op_type == "DynamicQuantizeLSTM" for n in model.graph.node)
    del model.graph.value_info[:]  # the quantizer's declarations would stand in for inference
    bare = tmp_path / "bare.onnx"
    onnx.save(model, str(bare))
    assert not [x for x in oracle.check(bare, None) if x[1] == "GL316"]
    for sizes in ENTRIES["tiny_lstm"]["assignments"]:
        ours, theirs = _inferred(bare, sizes), _runtime(bare, sizes)
        lstm = [o for n in model.graph.node if n.op_type == "DynamicQuantizeLSTM" for o in n.output]
        assert [ours[o] for o in lstm] == [theirs[o] for o in lstm], sizes


def test_a_witness_keeps_the_total_the_past_plus_the_new_tokens(tmp_path: Path) -> None:
    """The GenAI builder's own declaration: the mask is [batch_size, total_sequence_length], the total a symbol of
    its own, which GroupQueryAttention reads as past + new tokens. The witness of its batch condition says a total
    a caller can feed with the past and the prompt it names, and onnxruntime fails there, on that node."""
    import onnx

    from tests.infer import warning_oracle

    model = onnx.load(str(oracle.SIZES / "genai_gqa.onnx"))
    (mask,) = [i for i in model.graph.input if i.name == "attention_mask"]
    mask.type.tensor_type.shape.dim[1].dim_param = "total_sequence_length"
    path = tmp_path / "gqa_total.onnx"
    onnx.save(model, str(path))
    (j,) = warning_oracle.judge(path)
    sizes = j.sizes
    assert sizes["total_sequence_length"] == sizes["past_sequence_length"] + sizes["sequence_length"], sizes
    assert j.confirmed, j
