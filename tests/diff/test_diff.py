"""`graphlsp diff`: every planted change reported, nothing between a model and a re-save of it, renames matched,
and the known transformations (onnxruntime's optimizer and quantizer, folding, fp16) reported as what they are."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from graphlsp.cli import main
from tests.conftest import ROOT

CNN = ROOT / "corpus" / "models" / "dynamo_cnn.onnx"
TRANSFORMER = ROOT / "corpus" / "models" / "dynamo_transformer.onnx"


def diff(capsys: pytest.CaptureFixture[str], old: Path, new: Path) -> tuple[int, dict[str, Any]]:
    code = main(["diff", str(old), str(new), "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return code, json.loads(out)


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def ops(nodes: list[dict[str, Any]]) -> Counter[str]:
    return Counter(n["op"] for n in nodes)


def check_op_balance(old: Path, new: Path, data: dict[str, Any]) -> None:
    """An oracle for any pair: what the op counts of the two files say went away or came must be what the report
    lists as removed and added (less what a matched node changed into)."""
    def count(path: Path) -> Counter[str]:
        m = onnx.load(str(path), load_external_data=False)
        return Counter(f"{n.domain}.{n.op_type}" if n.domain not in ("", "ai.onnx") else n.op_type
                       for n in m.graph.node)

    a, b = count(old), count(new)
    nodes = data["nodes"]
    changed_ops = [c for c in nodes["changed"] if c["old"]["op"] != c["new"]["op"]]
    removed = ops([n for n in nodes["removed"] if n["graph"] == data_graph(data)]) + ops([c["old"] for c in changed_ops])
    added = ops([n for n in nodes["added"] if n["graph"] == data_graph(data)]) + ops([c["new"] for c in changed_ops])
    assert removed - added == a - b
    assert added - removed == b - a


def data_graph(data: dict[str, Any]) -> str:
    names = [n["graph"] for n in data["nodes"]["removed"] + data["nodes"]["added"] if "/" not in n["graph"]]
    return names[0] if names else ""


# ---- a model against itself


def test_identical_and_resaved_model_report_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    m = onnx.load(str(TRANSFORMER))
    m.doc_string = "saved again"
    for n in m.graph.node:
        n.doc_string = "re-saved"
    resaved = save(m, tmp_path / "resaved.onnx")
    assert resaved.read_bytes() != TRANSFORMER.read_bytes()
    code, data = diff(capsys, TRANSFORMER, resaved)
    assert (code, data["equal"]) == (0, True)
    # and with its weights moved to an external data file: still the same model
    ext = onnx.load(str(TRANSFORMER))
    onnx.save(ext, str(tmp_path / "ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="ext.onnx.data", size_threshold=64)
    assert (tmp_path / "ext.onnx.data").exists()
    code, data = diff(capsys, TRANSFORMER, tmp_path / "ext.onnx")
    assert (code, data["equal"]) == (0, True), data
    assert data["initializers"]["unchanged"] > 0


def planted(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """The CNN with one change of a kind, and the node, value or initializer it touches."""
    m = onnx.load(str(CNN))
    g = m.graph
    if kind == "attribute":
        node = next(n for n in g.node if n.op_type == "Softmax")
        next(a for a in node.attribute if a.name == "axis").i = 0
        touched = node.name
    elif kind == "weight":
        init = next(i for i in g.initializer if i.name == "features.4.weight")
        arr = numpy_helper.to_array(init).copy()
        arr.reshape(-1)[7] += 0.25
        init.CopyFrom(numpy_helper.from_array(arr, init.name))
        touched = init.name
    elif kind == "input dim":
        g.input[0].type.tensor_type.shape.dim[2].dim_value = 224  # height
        touched = g.input[0].name
    elif kind == "removed node":
        relu = next(n for n in g.node if n.op_type == "Relu")
        for n in g.node:
            for i, name in enumerate(n.input):
                if name == relu.output[0]:
                    n.input[i] = relu.input[0]
        g.node.remove(relu)
        touched = relu.name
    elif kind == "opset bump":
        next(o for o in m.opset_import if o.domain in ("", "ai.onnx")).version = 21
        touched = "opset ai.onnx"
    else:
        raise AssertionError(kind)
    return save(m, tmp_path / f"{kind.replace(' ', '_')}.onnx"), touched


@pytest.mark.parametrize("kind", ["attribute", "weight", "input dim", "removed node", "opset bump"])
def test_each_planted_change_is_reported(capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str) -> None:
    path, touched = planted(tmp_path, kind)
    code, data = diff(capsys, CNN, path)
    assert code == 1 and not data["equal"]
    nodes = data["nodes"]
    if kind == "attribute":
        [c] = nodes["changed"]
        assert c["new"]["name"] == touched and c["changes"] == ["attribute axis: -1 -> 0"]
    elif kind == "weight":
        [c] = data["initializers"]["changed"]
        assert (c["name"], c["change"]) == (touched, "data") and c["max_abs_diff"] == pytest.approx(0.25, rel=1e-6)
        assert data["initializers"]["unchanged"] == len(onnx.load(str(CNN)).graph.initializer) - 1
    elif kind == "input dim":
        [i] = data["inputs"]
        assert (i["name"], i["old"], i["new"]) == (touched, "float[batch_size, 3, height, width]",
                                                   "float[batch_size, 3, 224, width]")
        assert data["values"], "the inferred shapes downstream change with the height"
        assert all("224" not in v["old"] for v in data["values"])
    elif kind == "removed node":
        assert [n["name"] for n in nodes["removed"]] == [touched] and nodes["added"] == []
        [c] = nodes["changed"]  # the MaxPool now reads the Conv
        assert c["changes"][0].startswith("input 0")
    elif kind == "opset bump":
        assert data["header"] == [{"what": "opset ai.onnx", "old": 20, "new": 21}]
    if kind != "removed node":
        assert nodes["removed"] == nodes["added"] == []
    assert nodes["renamed"] == [] and nodes["moved"] == []


def test_text_output_and_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path, _ = planted(tmp_path, "attribute")
    assert main(["diff", str(CNN), str(path)]) == 1
    out = capsys.readouterr().out
    assert "~ node_softmax (Softmax): attribute axis: -1 -> 0" in out
    assert main(["diff", str(CNN), str(CNN)]) == 0
    assert "no differences" in capsys.readouterr().out
    assert main(["diff", str(CNN), str(tmp_path / "missing.onnx")]) == 2
    assert "missing.onnx" in capsys.readouterr().err
    (tmp_path / "bad.onnx").write_bytes(b"\x08\x07garbage\xff")
    assert main(["diff", str(CNN), str(tmp_path / "bad.onnx")]) == 2
    assert main(["diff", str(CNN)]) == 2


# ---- renames


def renamed(tmp_path: Path, source: Path) -> Path:
    """The model with every node, value and initializer renamed and the nodes renumbered (an exporter's new run)."""
    m = onnx.load(str(source))
    g = m.graph
    keep = {v.name for v in [*g.input, *g.output]}
    names: dict[str, str] = {}

    def new(name: str) -> str:
        if not name or name in keep:
            return name
        return names.setdefault(name, f"v{len(names) + 1000}")

    for i in g.initializer:
        i.name = new(i.name)
    for k, n in enumerate(g.node):
        n.name = f"/renamed/{n.op_type}_{len(g.node) - k}"
        n.input[:] = [new(x) for x in n.input]
        n.output[:] = [new(x) for x in n.output]
    for vi in g.value_info:
        vi.name = new(vi.name)
    return save(m, tmp_path / "renamed.onnx")


@pytest.mark.parametrize("source", [CNN, TRANSFORMER, ROOT / "corpus" / "models" / "optimum_bert.onnx"])
def test_renamed_nodes_are_matched(capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path) -> None:
    path = renamed(tmp_path, source)
    code, data = diff(capsys, source, path)
    nodes = data["nodes"]
    total = len(onnx.load(str(source), load_external_data=False).graph.node)
    assert code == 1
    assert len(nodes["removed"]) <= 0.05 * total and len(nodes["added"]) <= 0.05 * total
    assert len(nodes["renamed"]) >= 0.95 * total
    assert nodes["changed"] == [] and data["values"] == []
    changes = {c["change"] for c in data["initializers"]["changed"]}
    assert changes <= {"renamed"}


# ---- known transformations


def test_fp16_conversion(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    m = onnx.load(str(CNN))
    worst = 0.0
    for init in m.graph.initializer:
        arr = numpy_helper.to_array(init)
        if arr.dtype == np.float32:
            half = arr.astype(np.float16)
            worst = max(worst, float(np.abs(half.astype(np.float64) - arr).max()) if arr.size else 0.0)
            init.CopyFrom(numpy_helper.from_array(half, init.name))
    for vi in [*m.graph.input, *m.graph.output]:
        vi.type.tensor_type.elem_type = onnx.TensorProto.FLOAT16
    path = save(m, tmp_path / "fp16.onnx")
    code, data = diff(capsys, CNN, path)
    assert code == 1
    types = [c for c in data["initializers"]["changed"] if c["change"] == "type"]
    assert types and all(c["old"].startswith("float[") and c["new"].startswith("float16[") for c in types)
    assert max(c["max_abs_diff"] for c in types) == pytest.approx(worst, rel=1e-6)
    assert {i["new"].split("[")[0] for i in data["inputs"]} == {"float16"}
    assert data["values"] and all(v["new"].startswith("float16") for v in data["values"])
    assert data["nodes"]["removed"] == data["nodes"]["added"] == []
    # the cost: the weights take half the bytes (graphlsp/cost against the files' own tensors)
    def weight_bytes(path: Path) -> int:
        g = onnx.load(str(path)).graph
        consts = [a.t for n in g.node if n.op_type == "Constant" for a in n.attribute if a.name == "value"]
        return sum(numpy_helper.to_array(t).nbytes for t in [*g.initializer, *consts])

    assert data["cost"]["parameters"]["old"][1] == weight_bytes(CNN)
    assert data["cost"]["parameters"]["new"][1] == weight_bytes(path)
    assert data["cost"]["read"]["delta"].startswith("-")
    # onnxruntime's CPU has few float16 kernels: what ran natively now runs in float32 through Casts
    cpu = data["coverage"]["onnxruntime:cpu"]
    assert cpu["old"]["float32_casts"] == 0 < cpu["new"]["float32_casts"] <= len(m.graph.node)
    assert any(f["code"] == "GL701" for f in data["findings"]["appeared"])


def test_ort_optimized_pairs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ort = pytest.importorskip("onnxruntime")
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    out = tmp_path / "optimized.onnx"
    opts.optimized_model_filepath = str(out)
    ort.InferenceSession(str(TRANSFORMER), opts, providers=["CPUExecutionProvider"])
    code, data = diff(capsys, TRANSFORMER, out)
    assert code == 1
    check_op_balance(TRANSFORMER, out, data)
    assert data["nodes"]["matched"] > 0


@pytest.mark.parametrize("mode", ["dynamic", "qdq"])
def test_quantized(capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str) -> None:
    q = pytest.importorskip("onnxruntime.quantization")
    out = tmp_path / f"{mode}.onnx"
    if mode == "dynamic":
        q.quantize_dynamic(str(TRANSFORMER), str(out), weight_type=q.QuantType.QInt8)
        source = TRANSFORMER
        expect = {"DynamicQuantizeLinear", "MatMulInteger"}
    else:
        class Reader(q.CalibrationDataReader):
            def __init__(self) -> None:
                self.left = [{"pixel_values": np.random.default_rng(i).random((1, 3, 32, 32), np.float32)}
                             for i in range(2)]  # fmt: skip

            def get_next(self) -> dict[str, np.ndarray] | None:
                return self.left.pop() if self.left else None

        q.quantize_static(str(CNN), str(out), Reader(), quant_format=q.QuantFormat.QDQ)
        source = CNN
        expect = {"QuantizeLinear", "DequantizeLinear"}
    code, data = diff(capsys, source, out)
    assert code == 1
    assert expect <= set(ops(data["nodes"]["added"]))
    check_op_balance(source, out, data)


def test_folded(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = ROOT / "corpus" / "models" / "optimum_bert.onnx"
    out = tmp_path / "folded.onnx"
    assert main(["fold", str(source), "-o", str(out)]) == 0
    capsys.readouterr()
    code, data = diff(capsys, source, out)
    assert code == 1
    removed = ops(data["nodes"]["removed"])
    assert removed["Shape"] > 0 and not data["nodes"]["changed"] or all(
        c["changes"] for c in data["nodes"]["changed"])
    check_op_balance(source, out, data)
    assert data["values"] == [], "folding keeps every remaining value's type"


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::torch.jit.TracerWarning")
def test_reexported_with_other_module_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same network exported twice by torch, its modules named differently the second time: the node names
    differ throughout (`/encoder/...` and `/trunk/...`), and the nodes are matched, not removed and added."""
    torch = pytest.importorskip("torch")

    def build(name: str) -> Any:
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)

        class Net(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.add_module(name, torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False))
                self.add_module(name + "_head", torch.nn.Linear(16, 4))

            def forward(self, x: Any) -> Any:
                return getattr(self, name + "_head")(getattr(self, name)(x)).softmax(-1)

        return Net().eval()

    paths = []
    for name in ("encoder", "trunk"):
        path = tmp_path / f"{name}.onnx"
        torch.onnx.export(build(name), (torch.randn(2, 5, 16),), str(path), dynamo=False, input_names=["x"],
                          dynamic_axes={"x": {0: "batch", 1: "seq"}})  # fmt: skip
        paths.append(path)
    names = [{n.name for n in onnx.load(str(p)).graph.node} for p in paths]
    assert len(names[0] & names[1]) < 0.25 * len(names[0]), "the exports share few node names"
    code, data = diff(capsys, *paths)
    total = len(names[0])
    nodes = data["nodes"]
    print(f"re-export: {total} nodes, {len(nodes['renamed'])} renamed and matched, {len(nodes['removed'])} removed, "
          f"{len(nodes['added'])} added")
    assert len(nodes["removed"]) + len(nodes["added"]) <= 0.05 * total, (nodes["removed"], nodes["added"])
    assert nodes["changed"] == [] and data["values"] == []
    assert {c["change"] for c in data["initializers"]["changed"]} <= {"renamed"}


def test_a_model_added_or_deleted(capsys: pytest.CaptureFixture[str]) -> None:
    """git names the missing side /dev/null: everything of the other side is added (or removed)."""
    code, data = diff(capsys, Path("/dev/null"), CNN)
    model = onnx.load(str(CNN))
    assert code == 1 and len(data["nodes"]["added"]) == len(model.graph.node)
    assert len(data["initializers"]["added"]) == len(model.graph.initializer)
    code, data = diff(capsys, CNN, Path("/dev/null"))
    assert code == 1 and len(data["nodes"]["removed"]) == len(model.graph.node)
    assert len(data["initializers"]["removed"]) == len(model.graph.initializer)


TEXT = """<ir_version: 8, opset_import: ["" : {opset}, "com.microsoft" : 1]>
g (float[2,3] x) => (float[2,3] y, float[2,3] z) {{
{body}
}}
"""


def text_pair(tmp_path: Path, old: tuple[str, int], new: tuple[str, int]) -> tuple[Path, Path]:
    paths = []
    for name, (body, opset) in (("old", old), ("new", new)):
        p = tmp_path / f"{name}.onnxtxt"
        p.write_text(TEXT.format(opset=opset, body=body))
        paths.append(p)
    return paths[0], paths[1]


BODY = ["   a = Relu (x)", "   b = Neg (x)", "   y = Abs (a)", "   z = Softmax <axis: int = 1> (b)"]


def test_moved_node(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    swapped = [BODY[1], BODY[0], *BODY[2:]]
    code, data = diff(capsys, *text_pair(tmp_path, ("\n".join(BODY), 18), ("\n".join(swapped), 18)))
    nodes = data["nodes"]
    assert code == 1 and len(nodes["moved"]) == 1 and nodes["changed"] == [] and nodes["added"] == []
    assert nodes["moved"][0]["old"]["index"] != nodes["moved"][0]["new"]["index"]


def test_domain_and_op_version_changes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = "\n".join([*BODY[:1], "   b = Gelu (x)", *BODY[2:]])
    new = "\n".join([*BODY[:1], "   b = com.microsoft.Gelu (x)", *BODY[2:]])
    code, data = diff(capsys, *text_pair(tmp_path, (old, 20), (new, 20)))
    [c] = data["nodes"]["changed"]
    assert code == 1 and c["changes"][0] == "domain: ai.onnx -> com.microsoft"
    assert data["nodes"]["added"] == data["nodes"]["removed"] == []
    # an opset bump: each node whose schema onnx changed between the two opsets says so (onnx.defs the oracle)
    code, data = diff(capsys, *text_pair(tmp_path, ("\n".join(BODY), 12), ("\n".join(BODY), 13)))
    assert data["header"] == [{"what": "opset ai.onnx", "old": 12, "new": 13}]
    want = {}
    for op in ("Relu", "Neg", "Abs", "Softmax"):
        a, b = (onnx.defs.get_schema(op, v).since_version for v in (12, 13))
        if a != b:
            want[op] = [f"op version: {op}({a}) -> {op}({b})"]
    assert "Softmax" in want
    assert {c["new"]["op"]: c["changes"] for c in data["nodes"]["changed"]} == want


def test_input_contracts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A BERT whose position table is cut from 128 rows to 64: the input size requirement moves from at most 128 to
    at most 64, and onnxruntime agrees (sequence length 65 runs on the old model, fails on the new one)."""
    ort = pytest.importorskip("onnxruntime")
    source = ROOT / "corpus" / "models" / "ortsess_bert.onnx"
    m = onnx.load(str(source))
    for init in m.graph.initializer:
        if init.name in ("embeddings.position_embeddings.weight", "onnx::Slice_46"):
            arr = numpy_helper.to_array(init)
            init.CopyFrom(numpy_helper.from_array(arr[:64] if arr.shape[0] == 128 else arr[:, :64], init.name))
    cut = save(m, tmp_path / "bert64.onnx")
    code, data = diff(capsys, source, cut)
    c = data["contracts"]
    assert code == 1
    assert c["gone"] == [f"{i} dim 1 (sequence_length): sequence_length must be at most 128"
                         for i in ("attention_mask", "input_ids", "token_type_ids")]  # fmt: skip
    assert c["appeared"] == [x.replace("128", "64") for x in c["gone"]]
    [f] = c["findings_changed"]
    assert f["new"]["code"] == "GL320" and "at most 64" in f["new"]["message"] and "at most 128" in f["old"]["message"]
    feeds = {i.name: np.ones((1, 65), np.int64) for i in m.graph.input}
    ort.InferenceSession(str(source), providers=["CPUExecutionProvider"]).run(None, feeds)
    with pytest.raises(Exception, match="Add"):
        ort.InferenceSession(str(cut), providers=["CPUExecutionProvider"]).run(None, feeds)


def test_a_large_constant_with_other_data(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A Constant node's tensor over the structural key's size: its data is still compared."""
    from onnx import helper

    def model(scale: float) -> Path:
        value = numpy_helper.from_array(np.full((200, 200), scale, np.float32))
        g = helper.make_graph([helper.make_node("Constant", [], ["c"], name="big", value=value),
                               helper.make_node("Add", ["x", "c"], ["y"], name="add")], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [200, 200])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [200, 200])])  # fmt: skip
        return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), tmp_path / f"m{scale}.onnx")

    code, data = diff(capsys, model(1.0), model(1.5))
    [c] = data["nodes"]["changed"]
    assert code == 1 and c["changes"] == ["attribute value: other data (float[200,200], max abs diff 0.5)"]
    assert diff(capsys, model(1.0), model(1.0))[0] == 0
