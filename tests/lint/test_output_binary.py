"""`graphlsp check` output for binary models (located by node), long source lines, and standard input."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphlsp.cli import main
from tests.conftest import SHARED_BENCH

H = '<ir_version: 10, opset_import: ["" : 21]>\n'
BROKEN_TEXT = H + "g (float[N] x) => (float[N] y) {\n  y = Relu (zz)\n}\n"
MM = "/model.0/mm/MatMul"


def _vi(name: str, shape: list[int] | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def broken_model() -> onnx.ModelProto:
    """A MatMul with inner dims 3 and 4, a Relu reading an undefined value, a broadcast error in an If's
    then-branch, and an initializer nothing reads."""
    then = helper.make_graph([helper.make_node("Add", ["a", "b"], ["t"], name="bad_add")], "then", [], [_vi("t", None)])
    other = helper.make_graph([helper.make_node("Identity", ["a"], ["e"])], "else", [], [_vi("e", None)])
    nodes = [
        helper.make_node("MatMul", ["a", "b"], ["m"], name=MM),
        helper.make_node("Relu", ["nope"], ["r"]),
        helper.make_node("If", ["c"], ["i"], name="If_0", then_branch=then, else_branch=other),
    ]
    inputs = [_vi("a", [2, 3]), _vi("b", [4]), helper.make_tensor_value_info("c", TensorProto.BOOL, [])]
    weights = numpy_helper.from_array(np.arange(1000, dtype=np.float32), "w")
    graph = helper.make_graph(nodes, "main", inputs, [_vi("m", None), _vi("r", None), _vi("i", None)], [weights])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    path = tmp_path / "models" / "m.onnx"
    onnx.save(broken_model(), path)
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def test_concise_lines_name_the_node(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", "models/m.onnx")
    assert code == 1
    lines = out.splitlines()
    assert f'models/m.onnx: node 0 "{MM}" (MatMul): error: GL302 ' in out
    assert "models/m.onnx: node 1 (Relu): error: GL201 " in out  # an unnamed node: index and op
    assert 'models/m.onnx: node 0 "bad_add" (Add) in main/If_0.then_branch: error: GL301 ' in out
    assert "models/m.onnx: graph 'main' initializer 'w': warning: GL210 " in out
    assert lines[-1] == "Found 3 errors, 1 warning in 1 file."
    assert "graphlsp convert" not in out


def test_full_text_shows_the_node_as_one_line_of_onnx_text(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--no-cache", "models/m.onnx")
    assert code == 1 and "graphlsp convert" not in out
    head = f'models/m.onnx: node 0 "{MM}" (MatMul): error: GL302 '
    block = out[out.index(head) :].split("\n\n")[0].splitlines()
    assert block[1] == "  |"
    assert block[2].startswith("  | ") and "MatMul (a, b)" in block[2]
    caret = block[3]  # under the op name
    assert caret.startswith("  | ") and caret.rstrip().endswith(" ^^^^^^") and set(caret[4:].strip()) == {"^"}
    assert block[2][caret.index("^") : caret.index("^") + 6] == "MatMul"
    relu = out[out.index("models/m.onnx: node 1 (Relu): error: GL201 ") :].split("\n\n")[0].splitlines()
    assert any("Relu (nope)" in line for line in relu)
    assert relu[-1] == "  = input 0 (nope)"
    assert "0.0" not in out and "999" not in out  # weights are never printed


def test_weights_are_never_printed_and_lines_stay_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    big = numpy_helper.from_array(np.arange(5000, dtype=np.float32) + 12345.5, "big")
    node = helper.make_node("Add", ["x", "big"], ["y"], name="n" * 3000)
    graph = helper.make_graph(
        [node, helper.make_node("Constant", [], ["k"], value=big)], "main", [_vi("x", [3])], [_vi("y", None)], [big]
    )
    path = tmp_path / "w.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    for fmt in ("text", "concise", "github"):
        _, out, _ = run(capsys, "check", "--no-cache", "--format", fmt, str(path))
        assert "GL301" in out, out
        assert "12345.5" not in out and "12346.5" not in out
        assert max(len(line) - len(str(path)) for line in out.splitlines()) <= 400, fmt


def test_json_has_graph_node_and_index(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "models/m.onnx")
    data = json.loads(out)
    assert data and all({"graph", "node", "node_index", "line", "col"} <= set(d) for d in data)
    assert all(d["line"] is None and d["col"] is None and d["end_line"] is None for d in data)
    by_code = {d["code"]: d for d in data}
    assert (by_code["GL302"]["graph"], by_code["GL302"]["node"], by_code["GL302"]["node_index"]) == ("main", MM, 0)
    assert (by_code["GL201"]["node"], by_code["GL201"]["node_index"], by_code["GL201"]["op"]) == (None, 1, "Relu")
    assert by_code["GL301"]["graph"] == "main/If_0.then_branch" and by_code["GL301"]["node"] == "bad_add"
    assert by_code["GL210"]["node"] is None and by_code["GL210"]["node_index"] is None
    assert by_code["GL210"]["graph"] == "main"


def test_json_of_text_files_has_the_keys_too(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("t.onnxtxt").write_text(BROKEN_TEXT)
    data = json.loads(run(capsys, "check", "--no-cache", "--format", "json", "t.onnxtxt")[1])
    assert [(d["code"], d["line"], d["col"]) for d in data] == [("GL201", 3, 13)]
    assert {"graph", "node", "node_index"} <= set(data[0])


def _sarif_schema() -> dict[str, object] | None:
    path = SHARED_BENCH.parent / "schemas" / "sarif-schema-2.1.0.json"
    return json.loads(path.read_text()) if path.exists() else None


def test_sarif_logical_locations_and_relative_uris(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("models/t.onnxtxt").write_text(BROKEN_TEXT)
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "sarif", str(model), "models/t.onnxtxt")
    log = json.loads(out)
    schema = _sarif_schema()
    if schema is not None:
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.validate(log, schema)
    run_ = log["runs"][0]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == Path.cwd().as_uri() + "/"
    results = run_["results"]
    locations = [r["locations"][0] for r in results]
    assert all(loc["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%" for loc in locations)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for loc in locations}
    assert uris == {"models/m.onnx", "models/t.onnxtxt"}  # relative even when given absolute
    by_code = {r["ruleId"]: r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
               == "models/m.onnx"}  # fmt: skip
    mm = by_code["GL302"]["locations"][0]
    assert "region" not in mm["physicalLocation"]
    [logical] = mm["logicalLocations"]
    assert logical["fullyQualifiedName"] == f"main/{MM}" and logical["name"] == MM
    assert logical["properties"]["nodeIndex"] == 0 and logical["properties"]["op"] == "MatMul"
    assert by_code["GL201"]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "main/Relu_1"
    add = by_code["GL301"]["locations"][0]["logicalLocations"][0]
    assert add["fullyQualifiedName"] == "main/If_0.then_branch/bad_add"
    assert by_code["GL210"]["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "main"
    [text] = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("txt")]
    assert text["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_sarif_uris_are_escaped(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("a b,c.onnxtxt").write_text(BROKEN_TEXT)
    log = json.loads(run(capsys, "check", "--no-cache", "--format", "sarif", "a b,c.onnxtxt")[1])
    [r] = log["runs"][0]["results"]
    assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a%20b%2Cc.onnxtxt"


GITHUB_FILE = re.compile(r"^::(error|warning|notice) file=([^,]+),title=(GL\d{3})([^:]*)::(.*)$")


def test_github_annotations_are_file_level_with_the_node_in_the_title(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, "check", "--no-cache", "--format", "github", "models/m.onnx")
    lines = out.splitlines()
    assert len(lines) == 4
    for line in lines:
        m = GITHUB_FILE.match(line)
        assert m and m.group(2) == "models/m.onnx" and "line=" not in line, line
    assert f'::error file=models/m.onnx,title=GL302 node 0 "{MM}" (MatMul)::MatMul' in out
    assert "::error file=models/m.onnx,title=GL201 node 1 (Relu)::" in out
    assert 'title=GL301 node 0 "bad_add" (Add) in main/If_0.then_branch::' in out
    assert "::warning file=models/m.onnx,title=GL210 graph 'main' initializer 'w'::" in out


def test_long_text_lines_are_cut_around_the_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = ", ".join(["x"] * 3300)  # a 10,000-character line, the undefined value at its end
    long_end = H + f"g (float[N] x) => (float[N] y) {{\n  y = Sum ({inputs}, zz)\n}}\n"
    long_start = H + "g (float[N] x) => (float[N] y) {\n  y = Relu (zz)  # " + "c" * 10_000 + "\n}\n"
    for name, text in (("end.onnxtxt", long_end), ("start.onnxtxt", long_start)):
        p = tmp_path / name
        p.write_text(text)
        code, out, _ = run(capsys, "check", "--no-cache", str(p))
        assert code == 1
        lines = out.splitlines()
        assert max(len(line) for line in lines) < 250 + len(str(p)), max(lines, key=len)[:300]
        head = next(i for i, line in enumerate(lines) if ": error: GL201 " in line)
        src, caret = lines[head + 2], lines[head + 3]
        assert src.startswith("3 | ")
        at = caret.index("^")
        assert src[at : at + 2] == "zz" and caret[at:] == "^^"
        assert ("…" in src) and (src.endswith("…") == (name == "start.onnxtxt"))


def test_a_one_line_file_is_not_echoed_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = " ".join(f"v{i} = Relu (x)" for i in range(15_000))  # ~250 kB on one line
    p = tmp_path / "one.onnxtxt"
    p.write_text(H.rstrip("\n") + " g (float[N] x) => (float[N] y) { " + body + " y = Relu (zz) }")
    assert len(p.read_text()) > 200_000
    _, out, _ = run(capsys, "check", "--no-cache", "--select", "GL201", str(p))
    assert "GL201" in out
    assert max(len(line) for line in out.splitlines()) < 250 + len(str(p))


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_check_reads_text_from_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _stdin(monkeypatch, BROKEN_TEXT.encode())
    code, out, _ = run(capsys, "check", "--format", "concise", "-")
    assert code == 1 and out.startswith("-:3:13: error: GL201 ")
    _stdin(monkeypatch, BROKEN_TEXT.encode())
    code, out, _ = run(capsys, "check", "--stdin-filename", "sub/model.onnxtxt", "-")
    assert code == 1 and "sub/model.onnxtxt:3:13: error: GL201 " in out and "3 |   y = Relu (zz)" in out
    assert not (tmp_path / ".graphlsp_cache").exists()  # standard input is never cached
    # the name is used for settings: per-file-ignores match it
    (tmp_path / "graphlsp.toml").write_text('per-file-ignores = { "sub/*" = ["GL201"] }\n')
    _stdin(monkeypatch, BROKEN_TEXT.encode())
    code, out, _ = run(capsys, "check", "--stdin-filename", "sub/model.onnxtxt", "-")
    assert code == 0 and "All checks passed" in out
    _stdin(monkeypatch, b"\xff\xfe")
    code, out, _ = run(capsys, "check", "--format", "concise", "-")
    assert "GL105" in out


def test_check_reads_a_binary_model_from_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _stdin(monkeypatch, broken_model().SerializeToString())
    code, out, _ = run(capsys, "check", "--format", "concise", "--stdin-filename", "x.onnx", "-")
    assert code == 1
    assert f'x.onnx: node 0 "{MM}" (MatMul): error: GL302 ' in out and "x.onnx: node 1 (Relu): error: GL201 " in out
    _stdin(monkeypatch, b"\x0a\xff\xff\xff")  # not a ModelProto
    code, out, _ = run(capsys, "check", "--format", "concise", "--stdin-filename", "x.onnx", "-")
    assert code == 1 and "x.onnx: error: GL106 cannot load binary ONNX model" in out


def test_external_data_cannot_be_read_from_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = broken_model()
    onnx.external_data_helper.convert_model_to_external_data(model, location="w.bin", size_threshold=0)
    onnx.save(model, tmp_path / "ext.onnx")
    _stdin(monkeypatch, (tmp_path / "ext.onnx").read_bytes())
    _, out, _ = run(capsys, "check", "--format", "json", "--stdin-filename", "ext.onnx", "-")
    assert any(d["code"] == "GL107" and "not read from a file" in d["message"] for d in json.loads(out))


def test_stdin_fix_prints_the_fixed_text_and_reports_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    text = H + "g (float[N] x) => (float[N] y) {\n  y = com.acme.Gelu (x)\n}\n"
    _stdin(monkeypatch, text.encode())
    code, out, err = run(capsys, "check", "--fix", "-")  # adding an import is unsafe: only offered
    assert out == text and code == 1
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in err
    _stdin(monkeypatch, text.encode())
    code, out, err = run(capsys, "check", "--fix", "--unsafe-fixes", "-")
    assert out == text.replace('["" : 21]', '["" : 21, "com.acme" : 1]')
    # fixed: no error left (an undeclared domain stays a GL316 info, which does not fail the check)
    assert "-: fixed 1 issue" in err and "error" not in err.split("fixed 1 issue", 1)[1]
    assert code == 0
    _stdin(monkeypatch, text.encode())
    code, out, _ = run(capsys, "check", "--diff", "--unsafe-fixes", "--stdin-filename", "m.onnxtxt", "-")
    assert code == 1 and out.startswith("--- m.onnxtxt\n+++ m.onnxtxt\n")


def test_stdin_cannot_be_mixed_with_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.onnxtxt").write_text(BROKEN_TEXT)
    code, _, err = run(capsys, "check", "-", "a.onnxtxt")
    assert code == 2 and "standard input" in err


def test_fix_on_a_binary_with_external_data_reads_it_beside_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check --fix` lints the fixed bytes it writes over the model: their external data is the model's, in its
    folder (was: a false GL107 for every external tensor and exit 1, so the fix hook failed every such model)."""
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "w")
    spare = numpy_helper.from_array(np.ones(64, dtype=np.float32), "spare")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [_vi("x", [2, 8])],
                              [_vi("y", [2, 8])], [w, spare])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "m.onnx"
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="m.data",
                    size_threshold=0)  # fmt: skip
    code, out, err = run(capsys, "check", "--no-cache", "-j", "1", "--fix", str(path))
    assert "GL107" not in out + err
    assert code == 0, out + err
    fixed = onnx.load(path)  # the external data still found: every weight but the removed one
    assert [t.name for t in fixed.graph.initializer] == ["w"]
    np.testing.assert_array_equal(numpy_helper.to_array(fixed.graph.initializer[0]), np.arange(64).reshape(8, 8))
