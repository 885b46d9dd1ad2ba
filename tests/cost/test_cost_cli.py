"""`graphlsp cost`: totals and rows as formulas, numbers at the sizes given, text, JSON and CSV, checked options."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from graphlsp.cli import main
from tests.conftest import ROOT

MODEL = """<ir_version: 10, opset_import: ["" : 21]>
g (float[batch, seq, 64] x, float[64, 256] w1, float[256, 64] w2) => (float[batch, seq, 64] y) {
    h = MatMul (x, w1)
    a = Relu (h)
    y = MatMul (a, w2)
}
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["cost", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "m.onnxtxt"
    path.write_text(MODEL, encoding="utf-8")
    return path


def test_text_totals_are_formulas_and_numbers_at_bound_sizes(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(model))
    assert code == 0
    assert "FLOPs            65792*batch*seq\n" in out  # 2*64*256 twice + 256 (Relu) per row
    code, out, _ = run(capsys, str(model), "--dim", "batch=2", "--dim", "seq=10")
    assert "65792*batch*seq  = 1,315,840" in out
    assert "(bound: batch=2, seq=10)" in out


def test_input_shape_binds_the_symbols_of_its_input(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, str(model), "--input-shape", "x=2x10x64", "--format", "json")
    data = json.loads(out)
    assert data["totals"]["flops"] == {"formula": "65792*batch*seq", "value": 1315840, "unknown_parts": 0}
    # peak: at the first MatMul x and h (256 + 1024 bytes a row), and w1 and w2, graph inputs here (not weights)
    assert data["peak_activations"]["value"] == 20 * (256 + 1024) + 2 * 64 * 256 * 4
    assert data["peak_activations"]["node"] == "MatMul_0"


def test_rows_by_op_and_node_largest_first(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, str(model), "--by", "op", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["op"], r["flops"], r["nodes"]) for r in rows] == [("MatMul", "65536*batch*seq", "2"),
                                                                 ("Relu", "256*batch*seq", "1")]
    _, out, _ = run(capsys, str(model), "--by", "node", "--format", "json", "--dim", "batch=1", "--dim", "seq=1")
    rows = json.loads(out)["rows"]
    assert [r["name"] for r in rows][-1] == "Relu_1" and rows[-1]["flops_value"] == 256


def test_scopes_of_an_exporter(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, str(ROOT / "corpus/models/genai_llama_int4.onnx"), "--format", "json")
    names = [r["name"] for r in json.loads(out)["rows"]]
    assert names[0] in ("/model/layers.0", "/model/layers.1") and "/model/layers.1" in names


def test_a_dim_the_model_lacks_is_refused_with_a_suggestion(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, str(model), "--dim", "bacth=2")
    assert code == 2 and "did you mean 'batch'?" in err
    code, _, err = run(capsys, str(model), "--input-shape", "xx=1x2x64")
    assert code == 2 and "the model has no input 'xx' (did you mean 'x'?)" in err
    code, _, err = run(capsys, str(model), "--input-shape", "x=1x2")
    assert code == 2 and "'x' has 3 dims ([batch, seq, 64]), 1x2 has 2" in err
    with pytest.raises(SystemExit):
        main(["cost", str(model), "--by", "layer"])


_COST_LINES = [
    ["a.onnx"], ["a.onnx", "--by", "op"], ["--format", "json", "a"], ["a", "--dim", "batch=2", "--dim", "seq=3"],
    ["--input-shape", "x=1x2", "a"], ["a", "b"], [], ["--by", "layer", "a"], ["a", "--depth", "3"], ["a", "--dim"],
    ["--format=csv", "a"], ["a", "--dim", "-1"], ["-", "--by", "node"], ["a", "--by", "node", "--format", "csv"],
]  # fmt: skip


@pytest.mark.parametrize("line", _COST_LINES, ids=lambda line: " ".join(line) or "(none)")
def test_the_cost_line_read_without_argparse_is_argparse_s(line: list[str]) -> None:
    from graphlsp import cli
    from graphlsp.cli_parser import build_parser

    fast = cli._plain_cost(["cost", *line])
    try:
        full = vars(build_parser(cli._FUNCS).parse_args(["cost", *line]))
    except SystemExit:
        full = None
    if fast is None:
        return  # argparse parses it, and explains a mistake
    assert full is not None and vars(fast) == full
    assert cli._plain_cost(["cost", "a.onnx", "--dim", "b=1"]) is not None


def test_scopes_of_torch_export_from_its_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    """torch.export names nodes `node_MatMul_12`: the modules come from the node's metadata instead."""
    _, out, _ = run(capsys, str(ROOT / "corpus/models/dynamo_llama.onnx"), "--format", "json", "--depth", "3")
    rows = json.loads(out)["rows"]
    assert rows[0]["name"].startswith("/m/model/layers.") and rows[0]["name"] != "(top)"


def test_input_shape_gives_numbers_where_a_dim_has_no_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An input dim without a dim_param makes no formula (`?`); `--input-shape` still gives the numbers, from an
    analysis at that shape."""
    import onnx
    from onnx import TensorProto, helper

    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 4], [0.5] * 32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])], [w])  # fmt: skip
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), str(path))
    _, out, _ = run(capsys, str(path), "--format", "json")
    assert json.loads(out)["totals"]["flops"]["value"] is None
    _, out, _ = run(capsys, str(path), "--format", "json", "--input-shape", "x=5x8")
    data = json.loads(out)
    assert data["totals"]["flops"]["value"] == 2 * 5 * 8 * 4
    assert data["rows"][0]["flops_value"] == 2 * 5 * 8 * 4
