"""Shape rules of the reduction, control-flow, sequence, generator and string op families: reduce axes as an
attribute or an input across opsets, keepdims and noop_with_empty_axes, shape values through ReduceProd, If as
the relaxation of its branches, Loop and Scan outputs, sequences and optionals. Where onnx infers a type too,
ours must be the same or more precise."""

from __future__ import annotations

import onnx
import onnx.parser
import onnx.printer
import onnx.shape_inference
import pytest

from graphlsp.binary.read import type_spec
from graphlsp.graph.core import Model
from graphlsp.graph.findings import Finding
from graphlsp.infer.dims import Expr
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.infer.types import OptionalType, SequenceType, TensorType, ValueType, declared_type, type_str
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.lower import build_model
from tests.infer.helpers import infer


def run(text: str) -> tuple[Model, ShapeRefiner]:
    doc = SyntaxDocument(text)
    assert doc.problems == []
    model, _ = build_model(doc)
    refiner = ShapeRefiner(model)
    refiner.run()
    return model, refiner




def model(signature: str, body: str, opset: int = 18, inits: str = "") -> str:
    inits = f"<{inits}>\n" if inits else ""
    return f'<ir_version: 10, opset_import: ["" : {opset}]>\n{signature}\n{inits}{{\n{body}\n}}\n'


def errors(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings if f.severity == "error"]


def onnx_type(text: str, name: str) -> ValueType:
    """onnx's own inferred type of a value (strict mode, data propagation), read back as one of ours."""
    m = onnx.shape_inference.infer_shapes(onnx.parser.parse_model(text), strict_mode=True, data_prop=True)
    for vi in [*m.graph.value_info, *m.graph.output]:
        if vi.name == name and vi.HasField("type"):
            return declared_type(type_spec(vi.type))
    return None


def refines(ours: ValueType, theirs: ValueType) -> bool:
    """ours is theirs or more precise: same kind and element type, and every dim theirs knows."""
    if theirs is None:
        return True
    if isinstance(theirs, SequenceType) and isinstance(ours, SequenceType):
        return refines(ours.elem, theirs.elem)
    if isinstance(theirs, OptionalType) and isinstance(ours, OptionalType):
        return refines(ours.elem, theirs.elem)
    if not isinstance(theirs, TensorType) or not isinstance(ours, TensorType) or ours.elem != theirs.elem:
        return False
    if theirs.shape is None:
        return True
    if ours.shape is None or len(ours.shape) != len(theirs.shape):
        return False
    return all(_unknown_to_onnx(t) or t is o or t == o for t, o in zip(theirs.shape, ours.shape, strict=True))


def _unknown_to_onnx(dim: object) -> bool:
    """None, or a symbol onnx made up for a dim it does not know (`unk__0`)."""
    return dim is None or (isinstance(dim, Expr) and all(s.startswith("unk__") for s in dim.symbols()))


def check_against_onnx(text: str, names: list[str]) -> None:
    m, refiner = run(text)
    assert m.graph is not None
    for name in names:
        ours = refiner.type_of(m.graph.values[name])
        theirs = onnx_type(text, name)
        assert refines(ours, theirs), f"{name}: ours {type_str(ours)}, onnx {type_str(theirs)}"


# ---- reductions
@pytest.mark.parametrize("opset", [11, 13, 17])
def test_reduce_axes_attribute(opset: int) -> None:
    sig = "g (float[2, N, 4] x) => ()"
    body = "  a = ReduceMean <axes = [1]> (x)\n  b = ReduceMax <axes = [-1, 0], keepdims = 0> (x)\n"
    body += "  c = ReduceL2 (x)\n  d = ReduceLogSumExp <keepdims = 0> (x)"
    text = model(sig, body, opset)
    types, findings = infer(text)
    assert errors(findings) == []
    assert (types["a"], types["b"], types["c"], types["d"]) == ("float[2, 1, 4]", "float[N]", "float[1, 1, 1]", "float")
    check_against_onnx(text, ["a", "b", "c", "d"])


@pytest.mark.parametrize("op,opset", [("ReduceSum", 13), ("ReduceMean", 18), ("ReduceProd", 18), ("ReduceMin", 20)])
def test_reduce_axes_input(op: str, opset: int) -> None:
    sig = "g (float[2, N, 4] x, int64[1] rt) => ()"
    body = f"  a = {op} (x, axes)\n  b = {op} <keepdims = 0> (x, axes2)\n  c = {op} (x)\n"
    body += (
        f"  d = {op} <noop_with_empty_axes = 1> (x)\n  e = {op} <noop_with_empty_axes = 1, keepdims = 0> (x, empty)\n"
    )
    body += f"  f = {op} (x, rt)\n  h = {op} <keepdims = 0> (x, rt)"
    text = model(sig, body, opset, "int64[1] axes = {1}, int64[2] axes2 = {0, -1}, int64[0] empty = {}")
    types, findings = infer(text)
    assert errors(findings) == []
    assert types["a"] == "float[2, 1, 4]" and types["b"] == "float[N]" and types["c"] == "float[1, 1, 1]"
    assert types["d"] == "float[2, N, 4]" and types["e"] == "float[2, N, 4]"
    assert types["f"] == "float[?, ?, ?]"  # which axis is reduced is not known; the rank is
    assert types["h"] == "float[?, ?]"  # one axis, removed
    check_against_onnx(text, ["a", "b", "c", "d", "e"])


def test_reduce_axes_input_in_old_opset_is_an_attribute() -> None:
    """ReduceMean at opset 13 takes axes as an attribute; ReduceSum at 13 as an input."""
    text = model("g (float[2, 3] x) => ()", "  a = ReduceMean <axes = [0]> (x)\n  b = ReduceSum (x, ax)", 13,
                 "int64[1] ax = {0}")  # fmt: skip
    types, _ = infer(text)
    assert types["a"] == "float[1, 3]" and types["b"] == "float[1, 3]"


def test_reduce_unknown_axes_keep_ones() -> None:
    types, _ = infer(model("g (float[2, 1, N] x, int64[2] ax) => ()", "  a = ReduceSum (x, ax)"))
    assert types["a"] == "float[?, 1, ?]"
    types, _ = infer(model("g (float[2, 1, N] x, int64[2] ax) => ()", "  a = ReduceSum <keepdims = 0> (x, ax)"))
    assert types["a"] == "float[...]"  # two axes, perhaps the same one twice


def test_reduce_axis_out_of_range() -> None:
    _, findings = infer(model("g (float[2, 3] x) => ()", "  a = ReduceMax <axes = [2]> (x)", 13))
    assert errors(findings) == ["GL309"] and "axes value 2 is out of range for rank 2" in findings[0].message
    _, findings = infer(model("g (float[2, 3] x) => ()", "  a = ReduceSum (x, ax)", 13, "int64[1] ax = {-3}"))
    assert errors(findings) == ["GL309"]


def test_reduce_prod_of_shape_is_the_element_count() -> None:
    text = model("g (float[B, 3, H] x) => ()", "  s = Shape (x)\n  n = ReduceProd <keepdims = 0> (s)\n"
                 "  m = ReduceSum (s)\n  k = ReduceMax <keepdims = 0> (s)")  # fmt: skip
    m, refiner = run(text)
    assert m.graph is not None
    values = refiner.values
    n, s = values[m.graph.values["n"]], values[m.graph.values["m"]]
    assert type_str(n.type) == "int64" and n.sv is not None and str(n.sv[0]) == "3*B*H"
    assert type_str(s.type) == "int64[1]" and s.sv is not None and str(s.sv[0]) == "B + H + 3"
    assert values[m.graph.values["k"]].sv is not None


def test_arg_reduce() -> None:
    sig = "g (float[2, N, 4] x) => ()"
    body = "  a = ArgMax <axis = 1> (x)\n  b = ArgMin <axis = -1, keepdims = 0, select_last_index = 1> (x)"
    text = model(sig, body, 13)
    types, findings = infer(text)
    assert types["a"] == "int64[2, 1, 4]" and types["b"] == "int64[2, N]" and findings == []
    check_against_onnx(text, ["a", "b"])
    _, findings = infer(model(sig, "  a = ArgMax <axis = 3> (x)"))
    assert errors(findings) == ["GL309"]


def test_cumsum_and_cumprod() -> None:
    text = model("g (float[2, N] x) => ()", "  a = CumSum (x, ax)\n  b = CumProd <reverse = 1> (x, ax)", 26,
                 "int64 ax = {1}")  # fmt: skip
    types, findings = infer(text)
    assert types["a"] == types["b"] == "float[2, N]" and findings == []
    _, findings = infer(model("g (float[2, N] x) => ()", "  a = CumSum (x, ax)", 14, "int64 ax = {2}"))
    assert errors(findings) == ["GL309"]


# ---- If
def if_model(then_out: str, else_out: str, then_body: str, else_body: str, known: str = "") -> str:
    """An If on `c`: a graph input, or an initializer with the value `known`."""
    body = (
        f"  r = If (c) <then_branch = tb () => ({then_out}) {{\n{then_body}\n  }}, "
        f"else_branch = eb () => ({else_out}) {{\n{else_body}\n  }}>"
    )
    cond, inits = ("", f"bool c = {{{known}}}") if known else ("bool c, ", "")
    return model(f"g ({cond}float[2, 3] x, float[2, 4] y, float[5] z) => ()", body, 16, inits)


def test_if_relaxes_its_branches() -> None:
    text = if_model("t", "e", "    t = Identity (x)", "    e = Identity (y)")
    types, findings = infer(text)
    assert types["r"] == "float[2, ?]" and findings == []
    check_against_onnx(text, ["r"])
    types, _ = infer(if_model("t", "e", "    t = Identity (x)", "    e = Identity (z)"))
    assert types["r"] == "float[...]"  # different ranks
    types, _ = infer(if_model("t", "e", "    t = Identity (x)", "    e = Relu (x)"))
    assert types["r"] == "float[2, 3]"


def test_if_with_a_known_condition_takes_its_branch() -> None:
    text = if_model("t", "e", "    t = Identity (x)", "    e = Identity (y)", known="0")
    types, _ = infer(text)
    assert types["r"] == "float[2, 4]"


def test_if_branch_element_types_must_agree() -> None:
    types, findings = infer(if_model("t", "e", "    t = Identity (x)", "    e = Shape (y)"))
    assert (
        errors(findings) == ["GL317"] and "output 0 is float[2, 3] in then_branch but int64[2]" in findings[0].message
    )


def test_if_branch_output_counts_must_agree() -> None:
    _, findings = infer(if_model("t", "e, e2", "    t = Identity (x)", "    e = Identity (y)\n    e2 = Identity (y)"))
    assert errors(findings) == ["GL317"] and "then_branch returns 1 outputs but else_branch 2" in findings[0].message


def test_if_of_sequences_and_optionals() -> None:
    text = if_model("t", "e", "    t = SequenceConstruct (x, x)", "    e = SequenceConstruct (y)")
    types, findings = infer(text)
    assert types["r"] == "seq(float[2, ?])" and findings == []
    types, findings = infer(if_model("t", "e", "    t = Optional (x)", "    e = Optional <type = float[2, 3]> ()"))
    assert types["r"] == "optional(float[2, 3])" and findings == []


# ---- Loop
def loop_model(inputs: str, carried_body: str, cond: str = "c", trip: str = "n", opset: int = 16) -> str:
    body = (
        f"  v, s = Loop ({trip}, {cond}, v0) <body = b (int64 i, bool ci, vi) => (co, vo, so) {{\n"
        f"    co = Identity (ci)\n{carried_body}\n  }}>"
    )
    return model(f"g ({inputs}) => ()", body, opset)


def test_loop_scan_output_gets_the_trip_count() -> None:
    body = "    vo = Add (vi, vi)\n    zero = Constant <value = int64[1] {0}> ()\n    so = Unsqueeze (vo, zero)"
    text = loop_model("float[2, K] v0, bool c", body, cond="", trip="n").replace("=> ()", "=> ()\n<int64 n = {5}>")
    types, findings = infer(text)
    assert types["v"] == "float[2, K]" and types["s"] == "float[5, 1, 2, K]" and errors(findings) == []
    assert types["vi"] == "float[2, K]" and types["i"] == "int64"
    check_against_onnx(text, ["v", "s"])


def test_loop_with_a_condition_has_an_unknown_count() -> None:
    body = "    vo = Identity (vi)\n    so = Identity (vi)"
    types, _ = infer(loop_model("float[2] v0, int64 n, bool c", body))
    assert types["s"] == "float[?, 2]" and types["v"] == "float[2]"
    types, _ = infer(loop_model("float[2] v0, int64 n, bool c", body, trip=""))
    assert types["s"] == "float[?, 2]"


def test_loop_true_condition_passed_through_keeps_the_count() -> None:
    body = "    vo = Identity (vi)\n    so = Identity (vi)"
    text = loop_model("float[2] v0", body).replace("=> ()", "=> ()\n<int64 n = {3}, bool c = {1}>")
    types, _ = infer(text)
    assert types["s"] == "float[3, 2]"


def test_loop_carried_value_that_grows_is_relaxed() -> None:
    body = "    vo = Concat <axis = 0> (vi, vi)\n    so = Identity (ci)"
    types, findings = infer(loop_model("float[2, 3] v0, int64 n, bool c", body))
    assert types["v"] == "float[?, 3]" and types["vi"] == "float[?, 3]" and errors(findings) == []
    assert types["s"] == "bool[?]"


def test_loop_carried_element_type_must_stay() -> None:
    body = "    vo = Shape (vi)\n    so = Identity (ci)"
    _, findings = infer(loop_model("float[2, 3] v0, int64 n, bool c", body))
    assert "GL317" in errors(findings)
    assert any(
        "loop-carried value 0 starts as float[2, 3] but the body returns int64[2]" in f.message for f in findings
    )


def test_loop_body_arity() -> None:
    body = (
        "  v = Loop (n, c, v0) <body = b (int64 i, bool ci) => (co, vo) {\n"
        "    co = Identity (ci)\n    vo = Identity (ci)\n  }>"
    )
    _, findings = infer(model("g (float[2] v0, int64 n, bool c) => ()", body, 16))
    assert errors(findings) == ["GL317"] and "body takes 2 inputs, but Loop passes 3" in findings[0].message


def test_loop_carried_sequence() -> None:
    body = "    vo = SequenceInsert (vi, x)\n    so = Identity (x)"
    text = loop_model("float[3] x, int64 n, bool c", body).replace("Loop (n, c, v0)", "Loop (n, c, e)")
    types, findings = infer(text.replace("  v, s", "  e = SequenceConstruct (x)\n  v, s"))
    assert types["v"] == "seq(float[3])" and types["s"] == "float[?, 3]" and errors(findings) == []
    types, findings = infer(text.replace("  v, s", "  e = SequenceEmpty ()\n  v, s"))
    assert types["v"] == "seq(float[...])" and errors(findings) == []  # an empty sequence's elements: any shape


# ---- Scan
def test_scan9_axes_and_state() -> None:
    body = (
        "  st, ys = Scan (s0, xs) <num_scan_inputs = 1, scan_input_axes = [1], scan_output_axes = [-1], "
        "body = b (float[4] si, float[4] xi) => (so, yo) {\n    so = Add (si, xi)\n    yo = Identity (so)\n  }>"
    )
    text = model("g (float[4] s0, float[4, T] xs) => ()", body, 16)
    types, findings = infer(text)
    assert types["xi"] == "float[4]" and types["st"] == "float[4]" and types["ys"] == "float[4, T]"
    assert errors(findings) == []
    check_against_onnx(text, ["st", "ys"])


def test_scan9_sequence_lengths_must_agree() -> None:
    body = (
        "  st, ys = Scan (s0, xs, zs) <num_scan_inputs = 2, "
        "body = b (float[4] si, float[4] xi, float[4] zi) => (so, yo) {\n    so = Add (si, xi)\n    yo = Add (so, zi)\n  }>"
    )
    _, findings = infer(model("g (float[4] s0, float[3, 4] xs, float[5, 4] zs) => ()", body, 16))
    assert errors(findings) == ["GL317"] and "sequence length 5" in findings[0].message


def test_scan8_batch_and_sequence_dims() -> None:
    body = (
        '  st, ys = Scan ("", s0, xs) <num_scan_inputs = 1, '
        "body = b (float[2] si, float[2] xi) => (so, yo) {\n    so = Add (si, xi)\n    yo = Identity (so)\n  }>"
    )
    text = model("g (float[B, 2] s0, float[B, 3, 2] xs) => ()", body, 8)
    types, findings = infer(text)
    assert types["st"] == "float[B, 2]" and types["ys"] == "float[B, 3, 2]" and errors(findings) == []
    check_against_onnx(text, ["st", "ys"])


# ---- sequences and optionals
def test_sequence_ops() -> None:
    sig = "g (float[2, 3] a, float[2, 4] b, int64 p) => ()"
    body = (
        "  s = SequenceConstruct (a, b)\n  t = SequenceAt (s, p)\n  u = SequenceInsert (s, a)\n"
        "  w = SequenceErase (u)\n  n = SequenceLength (w)\n  e = SequenceEmpty <dtype = 7> ()\n"
        "  c = ConcatFromSequence <axis = 1> (s)\n  k = ConcatFromSequence <axis = -1, new_axis = 1> (s)"
    )
    text = model(sig, body)
    types, findings = infer(text)
    assert findings == []
    assert types["s"] == types["u"] == types["w"] == "seq(float[2, ?])"
    assert (types["t"], types["n"], types["e"]) == ("float[2, ?]", "int64", "seq(int64[...])")
    assert (types["c"], types["k"]) == ("float[2, 7]", "float[2, ?, ?]")  # s is known to hold [2, 3] and [2, 4]
    check_against_onnx(text, ["s", "t", "u", "w", "n", "e", "c", "k"])


def test_sequence_insert_element_type_must_match() -> None:
    _, findings = infer(
        model("g (float[2] a, int64[2] b) => ()", "  s = SequenceConstruct (a)\n  u = SequenceInsert (s, b)")
    )
    assert (
        errors(findings) == ["GL317"] and "cannot insert a int64 tensor into a sequence of float" in findings[0].message
    )


def test_split_to_sequence() -> None:
    sig = "g (float[6, N] x, int64 sc) => ()"
    body = (
        "  a = SplitToSequence <axis = 0> (x, two)\n  b = SplitToSequence <axis = 0> (x, parts)\n"
        "  c = SplitToSequence <axis = 1, keepdims = 0> (x)\n  d = SplitToSequence <axis = 0> (x, four)\n"
        "  e = SplitToSequence (x, sc)"
    )
    text = model(sig, body, 18, "int64 two = {2}, int64[2] parts = {1, 5}, int64 four = {4}")
    types, findings = infer(text)
    assert findings == []
    assert (types["a"], types["b"], types["c"], types["d"]) == (
        "seq(float[2, N])", "seq(float[?, N])", "seq(float[6])", "seq(float[?, N])",
    )  # fmt: skip
    assert types["e"] == "seq(float[?, N])"
    _, findings = infer(model(sig, "  a = SplitToSequence (x, bad)", 18, "int64[2] bad = {2, 5}"))
    assert errors(findings) == ["GL308"]


def test_sequence_map() -> None:
    body = (
        "  y, z = SequenceMap (xs, t) <body = b (float[N, 3] xi, float[3] ti) => (yo, zo) {\n"
        "    yo = Add (xi, ti)\n    zo = Shape (xi)\n  }>"
    )
    types, findings = infer(model("g (seq(float[N, 3]) xs, float[3] t) => ()", body, 17))
    assert types["y"] == "seq(float[N, 3])" and types["z"] == "seq(int64[2])" and findings == []


def test_optional_ops() -> None:
    body = (
        "  o = Optional (x)\n  e = Optional <type = seq(float[2])> ()\n  h = OptionalHasElement (o)\n"
        "  g1 = OptionalGetElement (o)\n  g2 = OptionalGetElement (e)"
    )
    text = model("g (float[2, N] x) => ()", body, 18)
    types, findings = infer(text)
    assert findings == []
    assert (types["o"], types["e"], types["h"]) == ("optional(float[2, N])", "optional(seq(float[2]))", "bool")
    assert (types["g1"], types["g2"]) == ("float[2, N]", "seq(float[2])")
    check_against_onnx(text, ["o", "e", "h", "g1", "g2"])


# ---- generators and strings
def test_random_and_window_ops() -> None:
    sig = "g (float[3, N] x, int64 w) => ()"
    body = (
        "  a = RandomNormal <shape = [2, 5]> ()\n  b = RandomUniform <shape = [4], dtype = 11> ()\n"
        "  c = RandomUniformLike <dtype = 10> (x)\n  d = Bernoulli (x)\n  e = Multinomial <sample_size = 7> (x)\n"
        "  f = HannWindow (ten)\n  h = BlackmanWindow <output_datatype = 11> (w)\n"
        "  m = MelWeightMatrix (eight, sixteen, sr, lo, hi)"
    )
    inits = "int64 ten = {10}, int64 eight = {8}, int64 sixteen = {16}, int64 sr = {8000}, float lo = {0}, float hi = {4000}"
    text = model(sig, body, 22, inits)
    types, findings = infer(text)
    assert findings == []
    assert (types["a"], types["b"], types["c"], types["d"]) == (
        "float[2, 5]",
        "double[4]",
        "float16[3, N]",
        "float[3, N]",
    )
    assert (types["e"], types["f"], types["h"], types["m"]) == ("int32[3, 7]", "float[10]", "double[?]", "float[9, 8]")
    check_against_onnx(text, ["a", "b", "c", "d", "e", "f", "h", "m"])


def test_string_ops() -> None:
    sig = "g (string[2, N] s, string[1, 4] w, string[5] v, uint8[K] img) => ()"
    body = (
        '  a, n = StringSplit <delimiter = " "> (s)\n  v2 = StringConcat (s, s)\n  b = StringConcat (s, v2)\n'
        '  c = StringNormalizer <stopwords = ["a"]> (w)\n  d = StringNormalizer <case_change_action = "LOWER"> (v)\n'
        '  e = RegexFullMatch <pattern = "x+"> (s)\n  f = ImageDecoder <pixel_format = "Grayscale"> (img)'
    )
    text = model(sig, body, 20)
    types, findings = infer(text)
    assert findings == []
    assert (types["a"], types["n"], types["b"]) == ("string[2, N, ?]", "int64[2, N]", "string[2, N]")
    assert (types["c"], types["d"], types["e"], types["f"]) == (
        "string[1, ?]",
        "string[5]",
        "bool[2, N]",
        "uint8[?, ?, 1]",
    )
    check_against_onnx(text, ["a", "n", "b", "c", "e", "f"])


def test_loop_counter_declared_with_a_shape() -> None:
    """onnxruntime passes the iteration number with the rank the body declares: int64[1] stands."""
    body = (
        "  v = Loop (n, c, v0) <body = b (int64[1] i, bool ci, int64[1] vi) => (co, vo) {\n"
        "    co = Identity (ci)\n    vo = Concat <axis = 0> (i, vi)\n  }>"
    )
    types, findings = infer(model("g (int64[1] v0, int64 n, bool c) => ()", body, 16))
    assert types["i"] == "int64[1]" and types["v"] == "int64[?]" and errors(findings) == []


def test_loop_count_from_a_shape_value() -> None:
    body = "    vo = Identity (vi)\n    so = Identity (vi)"
    text = loop_model("float[2] v0, float[T, 3] x", body, cond="", trip="n")
    count = "  sh = Shape (x)\n  first = Slice (sh, z, o)\n  n = ReduceMax <keepdims = 0> (first)\n"
    text = text.replace("  v, s", count + "  v, s")
    text = text.replace("=> ()", "=> ()\n<int64[1] z = {0}, int64[1] o = {1}>")
    types, _ = infer(text)
    assert types["s"] == "float[T, 2]"


def test_if_carries_the_shape_value_of_the_taken_branch() -> None:
    body = (
        "  r = If (c) <then_branch = tb () => (t) {\n    t = Shape (x)\n  }, "
        "else_branch = eb () => (e) {\n    e = Shape (y)\n  }>\n  out = ConstantOfShape (r)"
    )
    text = model("g (float[B, 3] x, float[7] y) => ()", body, 16, "bool c = {1}")
    types, findings = infer(text)
    assert types["r"] == "int64[2]" and types["out"] == "float[B, 3]" and findings == []


def test_ops_outside_ai_onnx_that_node_tests_use() -> None:
    text = (
        '<ir_version: 10, opset_import: ["" : 21, "ai.onnx.ml" : 5, "ai.onnx.preview.training" : 1]>\n'
        "g (float[3, 4] x, float[2] w, float[2] g2, float[2] v, float r, int64 t) => (float[3, 4] b) {\n"
        "  b = ai.onnx.ml.Binarizer <threshold = 0.5> (x)\n"
        "  w2, v2 = ai.onnx.preview.training.Momentum <alpha = 0.9, beta = 0.1, mode = \"standard\", norm_coefficient = 0.0> (r, t, w, g2, v)\n"
        "}\n"
    )
    types, findings = infer(text)
    assert types["b"] == "float[3, 4]" and types["w2"] == "float[2]" and types["v2"] == "float[2]"
    assert [f for f in findings if f.severity == "error"] == []


def test_flex_attention_modifier_bodies_see_the_scores() -> None:
    # the schema: score_mod and prob_mod take [B, Hq, L, S] of the softmax precision (float unless the inputs are
    # double or softmax_precision says); onnx's node test test_flexattention_causal_mask builds its mask from it
    text = (
        '<ir_version: 13, opset_import: ["" : 26, "ai.onnx.preview" : 1]>\n'
        "g (float16[B, 8, L, 16] q, float16[B, 2, S, 16] k, float16[B, 2, S, 32] v) => (float16[B, 8, L, 32] y) {\n"
        "  y = ai.onnx.preview.FlexAttention (q, k, v) <score_mod: graph = sm (float[B, H, L, S] scores) => (float[B, H, L, S] out) {\n"
        "      shape = Shape (scores)\n"
        "      three = Constant <value = int64 {3}> ()\n"
        "      s_len = Gather <axis = 0> (shape, three)\n"
        "      zero = Constant <value = int64 {0}> ()\n"
        "      one = Constant <value = int64 {1}> ()\n"
        "      k_range = Range (zero, s_len, one)\n"
        "      out = Relu (scores)\n"
        "  }, prob_mod: graph = pm (float[B, H, L, S] probs) => (float[B, H, L, S] p_out) {\n"
        "      p_out = Identity (probs)\n"
        "  }, softmax_precision = 1>\n"
        "}\n"
    )
    types, findings = infer(text)
    assert types["y"] == "float16[B, 8, L, 32]"
    assert types["out"] == "float[B, 8, L, S]" and types["k_range"] == "int64[S]"
    assert types["p_out"] == "float[B, 8, L, S]"
    assert [f for f in findings if f.severity == "error"] == []
    # without the attribute: float for float16 inputs, double for double inputs
    types, _ = infer(text.replace(", softmax_precision = 1", ""))
    assert types["out"] == "float[B, 8, L, S]"
    types, _ = infer(text.replace(", softmax_precision = 1", "").replace("float", "double").replace("double16", "double"))
    assert types["out"] == "double[B, 8, L, S]" and types["p_out"] == "double[B, 8, L, S]"
