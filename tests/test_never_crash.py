"""Small inputs that used to end in "internal error" (exit 2): each goes through every command in-process and
comes out as findings, exit code 0 or 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from graphlsp.cli import main

H = '<ir_version: 10, opset_import: ["" : 21]>\n'
COMMANDS = ("check", "shapes", "fold", "convert-binary", "convert-text", "graph")


def run(capsys: pytest.CaptureFixture[str], tmp: Path, command: str, path: Path) -> tuple[int, str, str]:
    if command == "check":
        args = ["check", "--no-cache", "--format", "concise", str(path)]
    elif command == "convert-binary":
        args = ["convert", str(path), str(tmp / "out.onnx")]
    elif command == "convert-text":
        args = ["convert", str(path), "-"]
    elif command == "fold":
        args = ["fold", str(path), "-o", str(tmp / "folded.onnxtxt")]
    elif command == "graph":
        args = ["graph", str(path), "-o", str(tmp / "graph.html")]
    else:
        args = [command, str(path)]
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def never_crash(capsys: pytest.CaptureFixture[str], tmp: Path, text: str, commands: tuple[str, ...] = COMMANDS,
                ) -> dict[str, tuple[int, str, str]]:  # fmt: skip
    path = tmp / "model.onnxtxt"
    path.write_text(text)
    results = {}
    for command in commands:
        code, out, err = run(capsys, tmp, command, path)
        assert code <= 1, (command, err[-2000:])
        assert "internal error" not in err + out and "Traceback" not in err, (command, err[-2000:])
        assert "GL399" not in out + err, (command, out[-2000:])
        results[command] = (code, out, err)
    return results


def nested_ifs(depth: int) -> str:
    """If inside If, `depth` deep, every level with its own names."""
    lines = [H + "g (bool c, float[2] x) => (float[2] y) {"]
    for k in range(depth):
        pad = "  " * (k + 1)
        lines.append(f"{pad}y{k} = If (c) <then_branch = t{k} () => (float[2] y{k + 1}) {{")
    lines.append("  " * (depth + 1) + f"y{depth} = Identity (x)")
    for k in reversed(range(depth)):
        pad = "  " * (k + 1)
        lines.append(f"{pad}}}, else_branch = e{k} () => (float[2] z{k}) {{ z{k} = Identity (x) }}>")
    lines.append("  y = Identity (y0)\n}")
    return "\n".join(lines) + "\n"


def function_chain(n: int, recursive: bool = False) -> str:
    head = '<ir_version: 10, opset_import: ["" : 21, "local" : 1]>\n'
    out = [head + "g (float[2] x) => (y) {\n  c = Constant <value = float[2] {1, 2}> ()\n  y = local.f0 (c)\n}"]
    for i in range(n):
        call = f"local.f{i + 1} (x)" if i < n - 1 else ("local.f0 (x)" if recursive else "Relu (x)")
        out.append(f'<domain: "local", opset_import: ["" : 21, "local" : 1]>\nf{i} (x) => (y) {{\n  y = {call}\n}}')
    return "\n".join(out) + "\n"


def test_dim_params_of_every_shape_through_check(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    params = ["N+", "2*", "floor(" * 100, "M**99999999999999", "1e400", "(" * 5000, "N/0", "a" * 10000, "-",
              "ModularIndexing(N, 0, 0)", "Max()", "9" * 50, "N - N", " ", "\\\\\"", "x" + "+x" * 600]  # fmt: skip
    dims = ", ".join('"' + p.replace("\\", "\\\\").replace('"', '\\"') + '"' for p in params)
    text = H + f"g (float[{dims}] x) => (y) {{\n  s = Shape (x)\n  m = Mul (s, s)\n  y = Reshape (x, m)\n}}\n"
    never_crash(capsys, tmp_path, text)
    # the same dim_params in a binary model
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, params)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Mul", ["s", "s"], ["m"]),
             helper.make_node("Reshape", ["x", "m"], ["y"])]  # fmt: skip
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 21)])
    onnx.save(model, tmp_path / "dims.onnx")
    for command in ("check", "shapes"):
        code, out, err = run(capsys, tmp_path, command, tmp_path / "dims.onnx")
        assert code <= 1 and "internal error" not in err and "GL399" not in out, err


def test_int64_shape_arithmetic_past_int64(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = H + """g (float[4611686018427387904, 4] x) => (y, z, w) {
  s = Shape (x)
  y = Mul (s, s)
  four = Constant <value = int64[1] {4}> ()
  m = Mul (s, four)
  z = Reshape (x, m)
  w = ConstantOfShape (m)
  n = Neg (s)
  a = Abs (n)
  r = ReduceProd (s)
  e = Expand (x, m)
  min = Constant <value = int64 {-9223372036854775808}> ()
  am = Abs (min)
}
"""
    never_crash(capsys, tmp_path, text)


@pytest.mark.parametrize("depth", [30, 31, 500])
def test_if_nested_deep(capsys: pytest.CaptureFixture[str], tmp_path: Path, depth: int) -> None:
    results = never_crash(capsys, tmp_path, nested_ifs(depth))
    code, out, _ = results["check"]
    too_deep = [line for line in out.splitlines() if "nested more than 30 deep" in line]
    if depth <= 30:
        assert code == 0 and not too_deep, out
    else:
        assert code == 1 and len(too_deep) == 2, out  # the then and else branches 31 deep
        assert results["convert-binary"][0] == 1  # onnx's protobuf could not read it back


def test_types_nested_deep(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = H + "g (" + "seq(" * 600 + "float" + ")" * 600 + " x) => (y) {\n  y = Identity (x)\n}\n"
    out = never_crash(capsys, tmp_path, text)["check"][1]
    assert "GL103 types nested more than 30 deep" in out


def test_function_chain_of_2000(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = never_crash(capsys, tmp_path, function_chain(2000))["check"][1]
    assert "GL316" in out and "nested more than 32 deep" in out


def test_runner_looks_through_a_long_chain_of_functions() -> None:
    from graphlsp.runner.runner import Runner
    from graphlsp.syntax.document import SyntaxDocument
    from graphlsp.syntax.lower import build_model

    model, _ = build_model(SyntaxDocument(function_chain(3000)))
    assert model.graph is not None
    assert Runner(model).evaluable(model.graph.nodes[1])  # deterministic all the way down, found without recursion


def test_recursive_function(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = never_crash(capsys, tmp_path, function_chain(3, recursive=True))["check"][1]
    assert "GL317" in out and "calls itself" in out


def test_convert_header_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    results = never_crash(capsys, tmp_path, H, ("convert-binary", "convert-text"))
    for code, _, err in results.values():
        assert code == 1
        assert err.startswith(f"{tmp_path / 'model.onnxtxt'}:2:1: error: GL101 the model has no graph"), err


@pytest.mark.parametrize("literal", ["1" * 400 + ".5", "9" * 400, "-" + "9" * 50, "1e400"])
def test_convert_huge_literal(capsys: pytest.CaptureFixture[str], tmp_path: Path, literal: str) -> None:
    text = H + f"g () => (y, z) {{\n  y = Constant <value = float[2] {{{literal}, 1}}> ()\n" \
        f"  z = Constant <value = double[1] {{{literal}}}> ()\n}}\n"  # fmt: skip
    results = never_crash(capsys, tmp_path, text)
    for command in ("convert-binary", "convert-text", "check"):
        code, out, err = results[command]
        assert code == 1 and ":3:" in out + err and "GL103" in out + err, (command, out, err)


def test_huge_int_in_unsigned_and_double_tensors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A 50-digit int is out of range for uint64 and, written in full, still a valid double."""
    big = "9" * 50
    text = H + f"g () => (y) {{\n  y = Constant <value = uint64[1] {{{big}}}> ()\n}}\n"
    out = never_crash(capsys, tmp_path, text, ("check",))["check"][1]
    assert "GL103" in out
    text = H + f"g () => (y) {{\n  y = Constant <value = double[1] {{{big}}}> ()\n}}\n"
    assert never_crash(capsys, tmp_path, text, ("check", "convert-binary"))["check"][0] == 0
    assert onnx.numpy_helper.to_array(onnx.load(tmp_path / "out.onnx").graph.node[0].attribute[0].t)[0] == 1e50


def test_memory_of_documents_parsed_again_and_again_stays_bounded() -> None:
    """A parse freezes what it made (so that collections skip it); a model left behind is cyclic garbage, and
    frozen garbage is never freed unless the frozen objects are collected from time to time."""
    import gc

    from graphlsp.analysis import Analysis

    text = H + "g (float[N] x0) => (float[N] x3000) {\n" + "".join(f"  x{i + 1} = Relu (x{i})\n" for i in range(3000)) + "}\n"
    assert gc.isenabled()
    Analysis(text)
    once = gc.get_freeze_count()
    for i in range(40):
        Analysis(text + "\n" * i)
    assert gc.get_freeze_count() < max(4 * once, 500_000), (once, gc.get_freeze_count())


def test_no_inputs_under_a_header_that_does_not_parse(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # found by `make fuzz`: with the opset imports unknown no schema checks the arity, and the rules (written for
    # the newest schema) read inputs that are not there
    header = '<\n  ir_version: 7,\n  : opset_import: ["" : 13]\n>\n'
    body = "g (float[2] x) => (y, z, w, v) {\n  y = Identity ()\n  z = Relu ()\n  w = Concat ()\n  v = Gemm (x)\n}\n"
    never_crash(capsys, tmp_path, header + body, ("check", "shapes"))
