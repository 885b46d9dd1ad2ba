"""The op DSL: parsing with positions, recovery (a broken declaration costs only itself), the messages of syntax and
declaration errors, each at its line and column."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from graphlsp.oplib import model as m
from graphlsp.oplib.catalog import builtin_paths, load
from graphlsp.oplib.checker import check_library, normalize_type
from graphlsp.oplib.parser import parse_library


def parse(text: str) -> m.Library:
    return check_library(parse_library(text, "lib.onnxop"))


def problems(text: str) -> list[str]:
    return [f"{p.loc.line}:{p.loc.col}: {p.severity}: {p.message}" for p in parse(text).problems]


GOOD = """\
# a project's custom ops
library acme "2.1"
domain com.acme

op ScaledMatMul since 1 {
  doc "Y = scale * (A @ B), batched over A's leading dims."
  input  A: T[*batch, M, K]   "the activations"
  input  B: T[K, N]
  input  bias?: T[N]
  output Y: T[*batch, M, N]
  attr   scale: float = 1.0 "multiplies the product"
  attr   mode?: string
  attr   heads: int
  type   T: float, float16, bfloat16
  dim    K "the inner dimension" GL302
  require N % heads == 0 else "N must be a multiple of heads"
}

op com.acme.v2.Gate since 3 until 7 {
  input  xs...: T
  output y: T = broadcast(xs)
  type   T: int64, tensor(int32), seq(float)
}
"""


def test_a_library_parses_into_declarations_with_positions() -> None:
    lib = parse(GOOD)
    assert lib.problems == []
    assert (lib.name, lib.version) == ("acme", "2.1")
    mm, gate = lib.ops
    assert (mm.domain, mm.name, mm.since, mm.until, mm.library) == ("com.acme", "ScaledMatMul", 1, None, "acme")
    assert (mm.loc.line, mm.loc.col) == (5, 4)
    assert [(p.name, p.option, p.type_str) for p in mm.inputs] == [("A", "single", "T"), ("B", "single", "T"),
                                                                   ("bias", "optional", "T")]  # fmt: skip
    assert mm.inputs[0].doc == "the activations"
    a = mm.inputs[0].patterns[0]
    assert isinstance(a.dims[0], m.Run) and a.dims[0].name == "batch" and a.fits(2) and a.fits(5) and not a.fits(1)
    assert (a.dims[1].loc.line, a.dims[1].loc.col) == (7, 23)
    attrs = mm.attrs
    assert (attrs["scale"].type_name, attrs["scale"].required, attrs["scale"].default, attrs["scale"].doc) == \
        ("float", False, 1.0, "multiplies the product")  # fmt: skip
    assert (attrs["mode"].required, attrs["mode"].default) == (False, None)
    assert attrs["heads"].required
    assert mm.types["T"].allowed == ["tensor(float)", "tensor(float16)", "tensor(bfloat16)"]
    assert mm.symbols["K"].code == "GL302" and mm.requires[0].message == "N must be a multiple of heads"
    assert (gate.domain, gate.name, gate.since, gate.until) == ("com.acme.v2", "Gate", 3, 7)
    assert gate.inputs[0].option == "variadic" and gate.inputs[0].min_arity == 1
    assert gate.types["T"].allowed == ["tensor(int64)", "tensor(int32)", "seq(tensor(float))"]
    assert gate.covers(3) and gate.covers(7) and not gate.covers(8) and not gate.covers(2)


def test_expressions_keep_python_precedence() -> None:
    lib = parse("""op X {
  input a: T[B, S, H]
  output y: T[B, S + 1 * 2, H // 2 if H > 4 and not has(a) else -H % 3]
  attr k?: ints
  type T: float
}""")
    assert lib.problems == []
    out = lib.ops[0].outputs[0].patterns[0].dims
    plus = out[1]
    assert isinstance(plus, m.BinOp) and plus.op == "+" and isinstance(plus.right, m.BinOp) and plus.right.op == "*"
    cond = out[2]
    assert isinstance(cond, m.Cond) and isinstance(cond.test, m.BoolOp) and cond.test.op == "and"
    assert isinstance(cond.then, m.BinOp) and cond.then.op == "//"
    assert isinstance(cond.other, m.BinOp) and cond.other.op == "%" and isinstance(cond.other.left, m.Neg)


def test_a_broken_declaration_costs_only_itself() -> None:
    text = """library acme
domain com.acme

op First {
  input x: T[N, C
  output y: T[N, C]
  attr alpha float = 1.0
  type T: float
}

op Second {
  input x: T
  output y: T = x
  type T: float
}

op Unclosed {
  input x: T

op Third sinse 2 {
  input x: T
}

op Fourth {
  input x: T[N]
  output y: T[N]
  type T: float
}
stray words
"""
    lib = parse(text)
    assert [op.name for op in lib.ops] == ["Second", "Fourth"]
    assert problems(text) == [
        "5:18: error: expected ',' or ']', found the end of the statement",
        "7:14: error: expected ':' or '?', found 'float'",
        "18:13: error: expected '}' to close the op declared at 17:13",
        "20:10: error: expected '.', 'since', 'until' or '{', found 'sinse'",
        "29:1: error: expected 'op', 'library' or 'domain', found 'stray'",
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("input x: T[N,, C]\n  output y: T\n  type T: float",
         "2:16: error: expected an expression ('*N' or '...' for a run of dims), found ','"),
        ("input x: T\n  require x ==\n  type T: float", "3:15: error: expected an expression, found the end of the "
         "statement"),
        ('input x: T\n  doc "abc\n  type T: float', "3:7: error: unterminated string: no closing '\"' on its line"),
        ("input x: T $ 2\n  type T: float", "2:14: error: unexpected character '$'"),
    ],
)  # fmt: skip
def test_syntax_errors_say_what_was_expected_where(body: str, message: str) -> None:
    assert problems(f"op X {{\n  {body}\n}}\n") == [message]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("input x: U\n  output y: T\n  type T: float",
         "2:12: error: 'U' is neither a type constraint of X (declare it: `type U: float, float16`) nor a type"),
        ("input x: T\n  output y: T\n  type T: float, floot", "4:18: error: 'floot' is not a type: use an element "
         "type (float, int64, ...) or tensor(...), seq(...), optional(...), sparse_tensor(...), map(...)"),
        ("input x: T[N]\n  output y: T[M]\n  type T: float", "3:15: error: 'M' is neither an attribute nor a dim of "
         "an input's shape"),
        ("input x: T[N, 2 * M]\n  output y: T\n  type T: float", "2:21: error: 'M' is neither an attribute nor a "
         "dim of an input's shape: inside an expression a dim must also appear alone in some input's shape"),
        ("input x: T[*N]\n  output y: T[...]\n  type T: float", "3:15: error: an output's shape cannot have '...': "
         "name the run in an input ('*N') and write '*N' here"),
        ("input xs...: T\n  input y: T\n  output z: T\n  type T: float",
         "2:9: error: only the last input can be variadic ('...')"),
        ("input x: T\n  output y: T\n  attr k: int = 1.5\n  type T: float",
         "4:8: error: the default of 'k' must be int, got 1.5"),
        ("input x: T\n  output y: T\n  attr k: integer\n  type T: float", "4:8: error: 'integer' is not an "
         "attribute type (one of float, floats, graph, graphs, int, ints, sparse_tensor, sparse_tensors, string, "
         "strings, tensor, tensors, type_proto, type_protos)"),
        ("input x: T[N]\n  output y: T[frob(N)]\n  type T: float", "3:15: error: unknown function 'frob'; the "
         "functions are cdiv, dim, has, len, max, min, rank, value"),
        ("input x: T\n  output y: T = z\n  type T: float", "3:17: error: '= z': X has no input 'z'"),
        ("input x: T\n  output y: T\n  shape Frobnicate(x)\n  type T: float",
         "4:9: error: 'shape Frobnicate(...)': onnx has no op 'Frobnicate'"),
        ("input x: T\n  output y: T\n  type T: float\n  require has(q)",
         "5:15: error: has() takes the name of an input, output or attribute of X"),
    ],
)  # fmt: skip
def test_declaration_errors_are_located_and_explained(body: str, message: str) -> None:
    lib = parse(f"op X {{\n  {body}\n}}\n")
    assert [f"{p.loc.line}:{p.loc.col}: {p.severity}: {p.message}" for p in lib.problems] == [message]
    assert lib.ops == []  # an op with an error is left out


def test_warnings_keep_the_declaration() -> None:
    lib = parse("op Relu {\n  input X: T\n  output Y: T\n  type T: float\n  type U: int64\n}\n")
    assert [(p.severity, p.message) for p in lib.problems] == [
        ("warning", "ai.onnx already defines 'Relu': onnx's schema is used, this declaration never is"),
        ("warning", "type constraint 'U' is used by no input or output"),
    ]
    assert [op.name for op in lib.ops] == ["Relu"]


def test_a_second_declaration_at_the_same_version_is_an_error() -> None:
    lib = parse("op A {\n  input x: T\n  type T: float\n}\nop A since 1 {\n  input y: T\n  type T: float\n}\n")
    assert [p.message for p in lib.problems] == ["A since 1 is already declared at 1:4"]
    assert len(lib.ops) == 1


def test_types_normalize_to_onnx_type_strings() -> None:
    assert normalize_type("float8e4m3fn") == "tensor(float8e4m3fn)"
    assert normalize_type("seq(int64)") == "seq(tensor(int64))"
    assert normalize_type("optional(seq(tensor(float)))") == "optional(seq(tensor(float)))"
    assert normalize_type("map(int64, float)") == "map(int64, tensor(float))"
    assert normalize_type("sparse_tensor(float)") == "sparse_tensor(float)"
    assert normalize_type("T") is None and normalize_type("tensor(floot)") is None


def test_the_shipped_libraries_have_no_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for path in builtin_paths():
        lib = load(path)
        assert lib.problems == [], [str(p) for p in lib.problems]
        again = load(path)  # from the cache now: the same declarations
        assert [op.qualified for op in again.ops] == [op.qualified for op in lib.ops]
    assert list(tmp_path.glob("graphlsp/oplib-*.pickle"))


def test_the_command_line_checks_and_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphlsp.oplib.__main__ import main

    bad = tmp_path / "bad.onnxop"
    bad.write_text("op X {\n  input x: U\n  type T: float\n}\n")
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2:12: error: 'U' is neither a type constraint of X" in out
    assert main(["check"]) == 0
    assert main(["list", "--domain", "com.microsoft.nchwc"]) == 0
    assert "com.microsoft.nchwc.ReorderInput" in capsys.readouterr().out


def _op_with(shape: str, default: str = "1.0") -> str:
    return f"op X {{\n  input x: T[N, H]\n  output y: T[N, {shape}]\n  attr eps: float = {default}\n  type T: float\n}}\n"


@pytest.mark.parametrize("terms", [330, 5000])
def test_an_expression_nested_too_deeply_is_a_located_syntax_error(terms: int) -> None:
    """A sum is as deep as it is long (left-associative): past MAX_DEPTH levels it is a problem at its statement,
    not a RecursionError in the builder, nor one in pickling the library for the cache (every model of the project
    then failed)."""
    lib = parse(_op_with(" + ".join(["H"] * terms)))
    assert [(str(p.loc), p.code, p.message) for p in lib.problems] == [
        ("3:3", "GL601", "nested too deeply (more than 100 levels): split it, e.g. with `let` for parts of an "
         "expression")]  # fmt: skip
    assert lib.ops == []
    lib = parse_library(_op_with(" + ".join(["H"] * 60)), "lib.onnxop")
    assert not lib.problems and len(pickle.dumps(check_library(lib))) > 0
    every: list[m.OpDecl] = []  # the editor's partial declarations skip the statement too
    parse_library(_op_with(" + ".join(["H"] * terms)).replace("type T", "type T:: "), "lib.onnxop", every=every)
    assert [p.name for p in every[0].outputs] == []


@pytest.mark.parametrize("literal", ["1" + "0" * 400, "1" * 5000, "9223372036854775808", "-9223372036854775809"])
def test_an_integer_beyond_int64_is_a_located_syntax_error(literal: str) -> None:
    for text, where in ((_op_with("H", literal), "4:"), (_op_with(f"H + {literal.lstrip('-')}"), "3:"),
                        (_op_with("H").replace("op X", f"op X since {literal.lstrip('-')}"), "1:")):  # fmt: skip
        lib = parse(text)
        assert [p.message for p in lib.problems] == ["integer out of range (ONNX integers are int64)"]
        assert str(lib.problems[0].loc).startswith(where) and lib.ops == []
    assert parse(_op_with("H", "-9223372036854775808")).ops[0].attrs["eps"].default == -9.223372036854776e18
