"""Shape functions of the tensor ops (graphlsp.ops: casts, reshape, concat, indexing, padding, resize, selection): exact symbolic results, shape values carried through
exporter patterns, the rules of old and new opsets, and the GL3xx problems they report (and do not report)."""

from __future__ import annotations

import onnx.parser
import pytest

from graphlsp.graph.findings import Finding
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.infer.types import type_str
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.lower import build_model
from tests.infer.oracle import compare


def infer(body: str, opset: int = 18) -> tuple[dict[str, str], list[Finding]]:
    """Types of every value (as text) and the findings of a model with the given graph."""
    text = f'<ir_version: 9, opset_import: ["" : {opset}]>\n{body}'
    doc = SyntaxDocument(text)
    assert not doc.problems, doc.problems
    model, _ = build_model(doc)
    refiner = ShapeRefiner(model)
    refiner.run()
    assert model.graph is not None
    types = {name: type_str(refiner.type_of(v)) for name, v in model.graph.values.items()}
    return types, refiner.findings()


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def only_error(findings: list[Finding], code: str) -> Finding:
    errs = errors(findings)
    assert [f.code for f in errs] == [code], [(f.code, f.message) for f in errs]
    return errs[0]


EXPORTER = """
g (float[batch, seq, 16] x) => (y) {
   s = Shape (x)
   i0 = Constant <value = int64 {0}> ()
   i1 = Constant <value = int64 {1}> ()
   ax = Constant <value = int64[1] {0}> ()
   b = Gather (s, i0)
   t = Gather (s, i1)
   bu = Unsqueeze (b, ax)
   tu = Unsqueeze (t, ax)
   heads = Constant <value = int64[2] {2, 8}> ()
   shp = Concat <axis = 0> (bu, tu, heads)
   y = Reshape (x, shp)
}
"""


# ---------------------------------------------------------------- shape values through exporter patterns
def test_exporter_reshape_pattern_is_exact() -> None:
    types, findings = infer(EXPORTER)
    assert types["s"] == "int64[3]"
    assert types["b"] == "int64"
    assert types["shp"] == "int64[4]"
    assert types["y"] == "float[batch, seq, 2, 8]"
    assert errors(findings) == []


def test_exporter_pattern_matches_onnx_data_propagation() -> None:
    model = onnx.parser.parse_model('<ir_version: 9, opset_import: ["" : 18]>\n' + EXPORTER)
    r = compare(model)
    assert r.contradictions == [] and r.false_errors == [] and r.less_precise == []


def test_shape_start_end_and_size() -> None:
    types, _ = infer("""
g (float[batch, seq, 16] x) => (y) {
   a = Shape <start = 1> (x)
   b = Shape <start = -2, end = -1> (x)
   n = Size (x)
   z = Constant <value = int64 {0}> ()
   one = Constant <value = int64 {1}> ()
   y = Range (z, n, one)
   e = Expand (x, a)
}""")
    assert types["a"] == "int64[2]"
    assert types["b"] == "int64[1]"
    assert types["n"] == "int64"
    assert types["y"] == "int64[16*batch*seq]"
    assert types["e"] == "float[batch, seq, 16]"


def test_shape_before_opset_15_ignores_start() -> None:
    types, _ = infer("g (float[2, 3] x) => (y) {\n y = Shape (x)\n}", opset=13)
    assert types["y"] == "int64[2]"


def test_constant_of_shape_and_slice_of_shape() -> None:
    types, _ = infer("""
g (float[batch, seq, 16] x) => (y) {
   s = Shape (x)
   st = Constant <value = int64[1] {1}> ()
   en = Constant <value = int64[1] {3}> ()
   tail = Slice (s, st, en)
   y = ConstantOfShape <value = int64[1] {7}> (tail)
   f = ConstantOfShape (s)
}""")
    assert types["tail"] == "int64[2]"
    assert types["y"] == "int64[seq, 16]"
    assert types["f"] == "float[batch, seq, 16]"


def test_cast_keeps_shape_values_between_int_types() -> None:
    types, _ = infer("""
g (float[batch, 16] x) => (y) {
   s = Shape (x)
   c = Cast <to = 6> (s)
   d = Cast <to = 7> (c)
   y = Reshape (x, d)
   f = Cast <to = 1> (x)
}""")
    assert types["c"] == "int32[2]"
    assert types["y"] == "float[batch, 16]"
    assert types["f"] == "float[batch, 16]"


def test_constant_attributes() -> None:
    types, _ = infer("""
g () => (a) {
   a = Constant <value_ints = [1, 2, 3]> ()
   b = Constant <value_float = 2.0> ()
   c = Constant <value_strings = ["x", "y"]> ()
   d = Constant <value = float[2, 3] {1, 2, 3, 4, 5, 6}> ()
   e = Reshape (d, a)
}""")
    assert types["a"] == "int64[3]"
    assert types["b"] == "float"
    assert types["c"] == "string[2]"
    assert types["d"] == "float[2, 3]"
    assert types["e"] == "float[1, 2, 3]"


# ---------------------------------------------------------------- Reshape
@pytest.mark.parametrize(
    "data,target,allowzero,want",
    [
        ("float[2, 3, 4]", "{0, -1}", 0, "float[2, 12]"),
        ("float[2, 3, 4]", "{4, 0, 2}", 0, "float[4, 3, 2]"),
        ("float[2, 3, 4]", "{-1}", 0, "float[24]"),
        ("float[0, 3, 4]", "{3, 4, 0}", 1, "float[3, 4, 0]"),
        ("float[N, 24]", "{-1, 6}", 0, "float[4*N, 6]"),
        ("float[batch, seq, 16]", "{0, 0, -1, 4}", 0, "float[batch, seq, 4, 4]"),
        ("float[batch, seq, 16]", "{0, -1}", 0, "float[batch, 16*seq]"),
        ("float[N, 24]", "{-1, 5}", 0, "float[?, 5]"),  # 24*N might be a multiple of 5: unknown, no error
    ],
)
def test_reshape(data: str, target: str, allowzero: int, want: str) -> None:
    n = target.count(",") + 1
    types, findings = infer(f"""
g ({data} x) => (y) {{
   s = Constant <value = int64[{n}] {target}> ()
   y = Reshape <allowzero = {allowzero}> (x, s)
}}""")
    assert types["y"] == want
    assert errors(findings) == []


def test_reshape_opset_1_shape_attribute() -> None:
    types, _ = infer("g (float[2, 3, 4] x) => (y) {\n y = Reshape <shape = [4, -1]> (x)\n}", opset=1)
    assert types["y"] == "float[4, 6]"


def test_reshape_symbolic_count_mismatch_is_gl304() -> None:
    _, findings = infer("""
g (float[N, 24] x) => (y) {
   s = Shape (x)
   i0 = Constant <value = int64[1] {0}> ()
   n = Gather (s, i0)
   k = Constant <value = int64[1] {25}> ()
   shp = Concat <axis = 0> (n, k)
   y = Reshape (x, shp)
}""")
    f = only_error(findings, "GL304")
    assert "24*N" in f.message and "25*N" in f.message
    assert "x is [N, 24]" in f.message


def test_reshape_int_count_mismatch_with_minus_one_is_gl304() -> None:
    _, findings = infer("""
g (float[2, 3, 4] x) => (y) {
   s = Constant <value = int64[2] {-1, 5}> ()
   y = Reshape (x, s)
}""")
    assert "not a multiple of 5" in only_error(findings, "GL304").message


def test_reshape_symbolic_target_that_might_match_is_not_an_error() -> None:
    types, findings = infer("""
g (float[N, 24] x, float[M] z) => (y) {
   s = Shape (z)
   k = Constant <value = int64[1] {24}> ()
   shp = Concat <axis = 0> (s, k)
   y = Reshape (x, shp)
}""")
    assert types["y"] == "float[M, 24]"
    assert errors(findings) == []


def test_reshape_fills_a_single_unknown_target_dim() -> None:
    types, _ = infer("""
g (float[batch, 6, 4] x, int64 n) => (y) {
   ax = Constant <value = int64[1] {0}> ()
   nu = Unsqueeze (n, ax)
   k = Constant <value = int64[1] {8}> ()
   shp = Concat <axis = 0> (nu, k)
   y = Reshape (x, shp)
}""")
    assert types["y"] == "float[3*batch, 8]"


# ---------------------------------------------------------------- Slice
def test_slice_negative_steps() -> None:
    types, findings = infer("""
g (float[20, 10, 5] x) => (y) {
   st = Constant <value = int64[3] {20, 10, 4}> ()
   en = Constant <value = int64[3] {0, 0, 1}> ()
   ax = Constant <value = int64[3] {0, 1, 2}> ()
   sp = Constant <value = int64[3] {-1, -3, -2}> ()
   y = Slice (x, st, en, ax, sp)
}""")
    assert types["y"] == "float[19, 3, 2]"
    assert errors(findings) == []


def test_slice_symbolic_dims() -> None:
    types, _ = infer("""
g (float[batch, seq, 16] x) => (y) {
   one = Constant <value = int64[1] {1}> ()
   zero = Constant <value = int64[1] {0}> ()
   m1 = Constant <value = int64[1] {-1}> ()
   end = Constant <value = int64[1] {9223372036854775807}> ()
   low = Constant <value = int64[1] {-9223372036854775807}> ()
   two = Constant <value = int64[1] {2}> ()
   y = Slice (x, one, end, one)
   head = Slice (x, zero, m1, one)
   rev = Slice (x, m1, low, one, m1)
   even = Slice (x, zero, end, one, two)
}""")
    assert types["y"] == "float[batch, seq - 1, 16]"
    assert types["head"] == "float[batch, seq - 1, 16]"
    assert types["rev"] == "float[batch, seq, 16]"
    assert types["even"] == "float[batch, floor((seq + 1)/2), 16]"


def test_slice_opset_1_attributes_and_unknown_bounds_keep_other_dims() -> None:
    types, _ = infer("g (float[8, 6] x) => (y) {\n y = Slice <starts = [1], ends = [-1], axes = [1]> (x)\n}", opset=9)
    assert types["y"] == "float[8, 4]"
    types, _ = infer("""
g (float[8, N] x, int64[1] s) => (y) {
   ax = Constant <value = int64[1] {0}> ()
   y = Slice (x, s, s, ax)
}""")
    assert types["y"] == "float[?, N]"


def test_slice_zero_step_is_an_error() -> None:
    _, findings = infer("""
g (float[8] x) => (y) {
   s = Constant <value = int64[1] {0}> ()
   y = Slice (x, s, s, s, s)
}""")
    only_error(findings, "GL317")


# ---------------------------------------------------------------- Squeeze / Unsqueeze
def test_squeeze_unsqueeze_old_opset_attributes() -> None:
    types, findings = infer("""
g (float[1, N, 1, 4] x) => (y) {
   a = Squeeze <axes = [0, -2]> (x)
   b = Squeeze (x)
   y = Unsqueeze <axes = [0, 3]> (a)
}""", opset=11)  # fmt: skip
    assert types["a"] == "float[N, 4]"
    assert types["b"] == "?[...]" or types["b"] == "float[...]"
    assert types["y"] == "float[1, N, 4, 1]"
    assert errors(findings) == []


def test_squeeze_unsqueeze_new_opset_inputs() -> None:
    types, _ = infer("""
g (float[1, N, 1, 4] x) => (y) {
   ax = Constant <value = int64[2] {0, -2}> ()
   a = Squeeze (x, ax)
   u = Constant <value = int64[2] {-1, 0}> ()
   y = Unsqueeze (a, u)
   c = Squeeze (y)
}""", opset=13)  # fmt: skip
    assert types["a"] == "float[N, 4]"
    assert types["y"] == "float[1, N, 4, 1]"
    assert types["c"] == "float[...]"


def test_squeeze_of_a_dim_that_is_not_one_is_an_error() -> None:
    _, findings = infer("""
g (float[1, 3] x) => (y) {
   ax = Constant <value = int64[1] {1}> ()
   y = Squeeze (x, ax)
}""", opset=13)  # fmt: skip
    assert "dim 1 is 3" in only_error(findings, "GL317").message


def test_unsqueeze_axis_out_of_range_is_gl309() -> None:
    _, findings = infer("g (float[3] x) => (y) {\n y = Unsqueeze <axes = [3]> (x)\n}", opset=11)
    only_error(findings, "GL309")


# ---------------------------------------------------------------- Split
def test_split_old_opsets_attribute_and_equal_parts() -> None:
    types, findings = infer("""
g (float[N, 6] x) => (a, b) {
   a, b = Split <axis = 1, split = [2, 4]> (x)
   c, d, e = Split <axis = 1> (x)
}""", opset=11)  # fmt: skip
    assert (types["a"], types["b"]) == ("float[N, 2]", "float[N, 4]")
    assert types["c"] == types["e"] == "float[N, 2]"
    assert errors(findings) == []


def test_split_input_at_13_and_num_outputs_at_18() -> None:
    types, _ = infer("""
g (float[7, M] x) => (a) {
   s = Constant <value = int64[2] {3, 4}> ()
   a, b = Split (x, s)
}""", opset=13)  # fmt: skip
    assert (types["a"], types["b"]) == ("float[3, M]", "float[4, M]")
    types, _ = infer("""
g (float[7, M] m) => (a) {
   x = Concat <axis = 1> (m, m)
   a, b, c = Split <num_outputs = 3> (x)
   p, q = Split <axis = 1, num_outputs = 2> (x)
}""", opset=18)  # fmt: skip
    assert (types["a"], types["b"], types["c"]) == ("float[3, 2*M]", "float[3, 2*M]", "float[1, 2*M]")
    assert types["p"] == types["q"] == "float[7, M]"
    types, _ = infer("g (float[N] x) => (a) {\n a, b = Split <num_outputs = 2> (x)\n}", opset=18)
    assert (types["a"], types["b"]) == ("float[floor((N + 1)/2)]", "float[N - floor((N + 1)/2)]")


def test_split_sizes_that_do_not_add_up_are_gl308() -> None:
    _, findings = infer("""
g (float[7] x) => (a) {
   s = Constant <value = int64[2] {3, 3}> ()
   a, b = Split (x, s)
}""", opset=13)  # fmt: skip
    assert "adds up to 6" in only_error(findings, "GL308").message
    _, findings = infer("g (float[7] x) => (a) {\n a, b = Split (x)\n}", opset=11)
    only_error(findings, "GL308")


# ---------------------------------------------------------------- Pad
def test_pad_old_and_new_opsets() -> None:
    types, _ = infer("g (float[N, 4] x) => (y) {\n y = Pad <pads = [0, 1, 0, 2]> (x)\n}", opset=2)
    assert types["y"] == "float[N, 7]"
    types, _ = infer("g (float[N, 4] x) => (y) {\n y = Pad <paddings = [1, 1, 1, 1]> (x)\n}", opset=1)
    assert types["y"] == "float[N + 2, 6]"
    types, _ = infer("""
g (float[N, 4] x) => (y) {
   p = Constant <value = int64[4] {1, 0, 1, -1}> ()
   y = Pad (x, p)
}""", opset=13)  # fmt: skip
    assert types["y"] == "float[N + 2, 3]"
    types, _ = infer("""
g (float[N, 4, 5] x) => (y) {
   p = Constant <value = int64[2] {2, 3}> ()
   a = Constant <value = int64[1] {-1}> ()
   y = Pad (x, p, , a)
}""", opset=18)  # fmt: skip
    assert types["y"] == "float[N, 4, 10]"


# ---------------------------------------------------------------- Gather, Transpose, Concat
def test_gather_index_out_of_range_is_gl310() -> None:
    _, findings = infer("""
g (float[5, 3] x) => (y) {
   i = Constant <value = int64[2] {1, 5}> ()
   y = Gather (x, i)
}""")
    f = only_error(findings, "GL310")
    assert "index 5" in f.message and "allowed -5..4" in f.message


def test_gather_shapes_and_negative_indices() -> None:
    types, findings = infer("""
g (float[5, N, 3] x) => (y) {
   i = Constant <value = int64[2, 2] {-1, 0, 1, 2}> ()
   y = Gather <axis = 2> (x, i)
   j = Constant <value = int64 {-5}> ()
   z = Gather (x, j)
}""")
    assert types["y"] == "float[5, N, 2, 2]"
    assert types["z"] == "float[N, 3]"
    assert errors(findings) == []


def test_transpose_bad_perm_is_gl307() -> None:
    _, findings = infer("g (float[2, 3, 4] x) => (y) {\n y = Transpose <perm = [0, 1]> (x)\n}")
    assert "2 entries" in only_error(findings, "GL307").message
    _, findings = infer("g (float[2, 3, 4] x) => (y) {\n y = Transpose <perm = [0, 1, 1]> (x)\n}")
    only_error(findings, "GL307")
    _, findings = infer("g (float[2, 3, 4] x) => (y) {\n y = Transpose <perm = [0, 1, 3]> (x)\n}")
    only_error(findings, "GL307")
    types, _ = infer("g (float[2, N, 4] x) => (y) {\n y = Transpose (x)\n}")
    assert types["y"] == "float[4, N, 2]"


def test_concat_mismatch_is_gl303_and_symbols_merge() -> None:
    _, findings = infer("g (float[2, 3] a, float[2, 4] b) => (y) {\n y = Concat <axis = 0> (a, b)\n}")
    f = only_error(findings, "GL303")
    assert "a is [2, 3]" in f.message and "b is [2, 4]" in f.message
    types, findings = infer(
        "g (float[N, 3] a, float[M, 3] b, float[?, 3] c) => (y) {\n y = Concat <axis = 1> (a, b)\n}"
    )
    assert types["y"] == "float[N, 6]"
    assert errors(findings) == []
    types, _ = infer("g (float[N, 3] a, float[M, 3] b) => (y) {\n y = Concat <axis = 0> (a, b)\n}")
    assert types["y"] == "float[M + N, 3]"


# ---------------------------------------------------------------- other ops
def test_resize_scales_and_sizes() -> None:
    types, _ = infer("""
g (float[N, 3, H, 32] x) => (y) {
   sc = Constant <value = float[4] {1, 1, 2, 0.5}> ()
   y = Resize (x, , sc)
   sz = Constant <value = int64[2] {64, 64}> ()
   z = Resize <axes = [2, 3]> (x, , , sz)
}""")
    assert types["y"] == "float[N, 3, 2*H, 16]"
    assert types["z"] == "float[N, 3, 64, 64]"
    types, _ = infer("""
g (float[1, 3, 4, 6] x) => (y) {
   sc = Constant <value = float[4] {1, 1, 2, 3}> ()
   y = Upsample (x, sc)
}""", opset=9)  # fmt: skip
    assert types["y"] == "float[1, 3, 8, 18]"


def test_resize_needs_exactly_one_of_scales_and_sizes() -> None:
    _, findings = infer("""
g (float[1, 3, 4, 4] x) => (y) {
   sc = Constant <value = float[4] {1, 1, 2, 2}> ()
   sz = Constant <value = int64[4] {1, 3, 8, 8}> ()
   y = Resize (x, , sc, sz)
}""")
    assert "not both" in only_error(findings, "GL317").message
    _, findings = infer("g (float[1, 3, 4, 4] x) => (y) {\n y = Resize (x)\n}")
    only_error(findings, "GL317")


def test_expand_that_does_not_broadcast_is_gl301() -> None:
    _, findings = infer("""
g (float[3, 4] x) => (y) {
   s = Constant <value = int64[2] {2, 4}> ()
   y = Expand (x, s)
}""")
    only_error(findings, "GL301")


def test_cast_opset_1_string_to_and_range_with_a_step() -> None:
    types, _ = infer('g (int64[4] x) => (y) {\n y = Cast <to = "FLOAT"> (x)\n}', opset=1)
    assert types["y"] == "float[4]"
    types, _ = infer("""
g (float[N] x) => (y) {
   s = Shape (x)
   z = Constant <value = int64[1] {0}> ()
   n = Gather (s, z)
   two = Constant <value = int64[1] {2}> ()
   y = Range (z, n, two)
}""")
    assert types["y"] == "int64[floor((N + 1)/2)]"


def test_topk_onehot_tile_flatten_depth_to_space() -> None:
    types, findings = infer("""
g (float[N, 10] x, int64[N] idx, float[2] vals) => (v) {
   k = Constant <value = int64[1] {3}> ()
   v, i = TopK (x, k)
   depth = Constant <value = int64 {7}> ()
   oh = OneHot (idx, depth, vals)
   reps = Constant <value = int64[2] {2, 3}> ()
   t = Tile (x, reps)
   f = Flatten <axis = -1> (x)
   img = Reshape (x, reps)
}""")
    assert types["v"] == "float[N, 3]"
    assert types["i"] == "int64[N, 3]"
    assert types["oh"] == "float[N, 7]"
    assert types["t"] == "float[2*N, 30]"
    assert types["f"] == "float[N, 10]"
    only_error(findings, "GL304")  # [N, 10] into [2, 3]: 10*N elements can never be 6 (N >= 1)


def test_topk_larger_than_the_dim_is_an_error() -> None:
    _, findings = infer("g (float[4, 2] x) => (v) {\n v, i = TopK <k = 3> (x)\n}", opset=9)
    only_error(findings, "GL317")


def test_data_dependent_ops() -> None:
    types, _ = infer("""
g (float[N, 4] x, bool[4] c) => (y) {
   y = NonZero (x)
   u, ui, uinv, uc = Unique (x)
   cp = Compress <axis = 1> (x, c)
   k = Constant <value = bool[4] {1, 0, 1, 1}> ()
   ck = Compress <axis = 1> (x, k)
}""")
    assert types["y"] == "int64[2, ?]"
    assert types["u"] == "float[?]"
    assert types["uinv"] == "int64[4*N]"
    assert types["cp"] == "float[N, ?]"
    assert types["ck"] == "float[N, 3]"


# ---------------------------------------------------------------- against onnx's own inference
ORACLE_MODELS = {
    "reshape_slice_concat": """
g (float[batch, seq, 64] x) => (y) {
   s = Shape (x)
   st = Constant <value = int64[1] {0}> ()
   en = Constant <value = int64[1] {2}> ()
   bs = Slice (s, st, en)
   tail = Constant <value = int64[2] {4, 16}> ()
   shp = Concat <axis = 0> (bs, tail)
   r = Reshape (x, shp)
   t = Transpose <perm = [0, 2, 1, 3]> (r)
   f = Flatten <axis = 2> (t)
   y = Identity (f)
}""",
    "gather_squeeze_range": """
g (float[N, 12] x, int64[N, 5] ids) => (y) {
   s = Shape (x)
   i = Constant <value = int64 {1}> ()
   n = Gather (s, i)
   z = Constant <value = int64 {0}> ()
   o = Constant <value = int64 {1}> ()
   r = Range (z, n, o)
   g = Gather (x, ids)
   ge = GatherElements <axis = 1> (x, ids)
   u = Unsqueeze (r, z)
   y = Squeeze (u, z)
}""",
    "split_pad_tile_expand": """
g (float[2, 8, 6] x) => (y) {
   sp = Constant <value = int64[2] {3, 5}> ()
   a, b = Split <axis = 1> (x, sp)
   p = Constant <value = int64[6] {0, 1, 2, 0, 1, 2}> ()
   pa = Pad (a, p)
   rep = Constant <value = int64[3] {1, 2, 1}> ()
   t = Tile (b, rep)
   es = Constant <value = int64[4] {3, 1, 1, 1}> ()
   y = Expand (t, es)
}""",
    "resize_topk_onehot_depth": """
g (float[1, 8, 4, 4] x, int64[3] idx) => (y) {
   sc = Constant <value = float[4] {1, 1, 2, 2}> ()
   r = Resize (x, , sc)
   d = DepthToSpace <blocksize = 2> (x)
   s2d = SpaceToDepth <blocksize = 2> (x)
   k = Constant <value = int64[1] {2}> ()
   v, i = TopK <axis = 1> (x, k)
   depth = Constant <value = int64 {5}> ()
   vals = Constant <value = float[2] {0, 1}> ()
   y = OneHot (idx, depth, vals)
   nz = NonZero (x)
   c = Cast <to = 7> (x)
   cs = ConstantOfShape (k)
}""",
    "scatter_gathernd_trilu": """
g (float[4, 5, 6] x, int64[2, 2] ind, float[2, 6] upd, int64[4, 5, 6] ei) => (y) {
   snd = ScatterND (x, ind, upd)
   gnd = GatherND (x, ind)
   se = ScatterElements (x, ei, x)
   tr = Trilu (x)
   y = Identity (tr)
}""",
}


@pytest.mark.parametrize("name", sorted(ORACLE_MODELS))
def test_equal_or_more_precise_than_onnx(name: str) -> None:
    model = onnx.parser.parse_model('<ir_version: 9, opset_import: ["" : 18]>\n' + ORACLE_MODELS[name])
    r = compare(model)
    assert r.onnx_failed == ""
    assert r.contradictions == [], r.contradictions
    assert r.false_errors == [], r.false_errors
    assert r.less_precise == [], r.less_precise
    assert r.unresolved == [] or name == "resize_topk_onehot_depth", r.unresolved
