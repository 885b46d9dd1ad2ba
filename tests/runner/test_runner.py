"""The CPU runner: values pulled by shape functions, the 1 KiB cache, the size cap, random ops, evaluation errors,
and edits (values recomputed past the refiner's early cutoff, the state equal to a fresh analysis)."""

from __future__ import annotations

import numpy as np

from graphlsp.analysis import Analysis
from graphlsp.infer.types import type_str
from graphlsp.runner import CACHE_LIMIT
from graphlsp.runner.runner import _Big
from tests.infer.test_refiner_incremental import state

H = '<ir_version: 10, opset_import: ["" : 21]>\n'


def types(a: Analysis) -> dict[str, str]:
    assert a.model.graph is not None
    return {name: type_str(a.refiner.type_of(v)) for name, v in a.model.graph.values.items()}


def codes(a: Analysis) -> list[str]:
    return [f.code for f in a.findings()]


def test_shape_functions_pull_values_the_shape_rules_do_not_compute() -> None:
    # Ceil has no value rule; Cast folds only when its input is known: the runner computes Ceil for it
    text = H + """g (float[24] x) => (float[3, 8] y) {
  f = Constant <value = float[2] {2.2, 7.6}> ()
  c = Ceil (f)
  t = Cast <to = 7> (c)
  y = Reshape (x, t)
}
"""
    a = Analysis(text)
    assert types(a)["y"] == "float[3, 8]"
    assert a.runner.stats.evaluations >= 1
    assert codes(a).count("GL401") == 1  # Ceil and Cast compute constants: one hint, on Cast, where Reshape reads it
    assert set(a.fold_plan().folds) == {n for n in a.model.graph.nodes if n.op_type in ("Ceil", "Cast")}  # type: ignore[union-attr]


def test_small_values_are_cached_large_ones_are_not() -> None:
    text = H + """g (float[N] x) => (float[N] y) {
  a = Constant <value = float[300] {""" + ", ".join(["1"] * 300) + """}> ()
  b = Neg (a)
  s = ReduceSum <keepdims = 0> (b)
  y = Add (x, s)
}
"""
    a = Analysis(text)
    g = a.model.graph
    assert g is not None
    ok, total = a.runner.known(g.values["s"])
    assert ok and float(total) == -300.0
    kept = a.runner._answers
    assert isinstance(kept[g.values["s"]], np.ndarray)  # 4 bytes: kept
    assert isinstance(kept[g.values["b"]], _Big)  # 1200 bytes: only its fingerprint
    assert a.runner.stats.peak_cache_bytes <= CACHE_LIMIT


def test_the_size_cap_means_huge_constants_are_never_built() -> None:
    text = H + """g (float[N] x) => (float[N] y) {
  shape = Constant <value = int64[2] {100000, 100000}> ()
  big = ConstantOfShape (shape)
  total = ReduceSum <keepdims = 0> (big)
  y = Add (x, total)
}
"""
    a = Analysis(text)
    g = a.model.graph
    assert g is not None
    assert a.runner.known(g.values["total"]) == (False, None)
    assert a.runner.stats.largest < 1 << 20
    assert a.runner.stats.refused_size >= 1
    assert "GL401" not in codes(a)


def test_random_ops_are_never_evaluated() -> None:
    text = H + """g (float[2] x) => (float[2] y, int64[1] n) {
  r = RandomNormal <shape = [2]> ()
  one = Constant <value = float {1}> ()
  s = Add (r, one)
  y = Add (x, s)
  n = Shape (r)
}
"""
    a = Analysis(text)
    g = a.model.graph
    assert g is not None
    assert a.runner.known(g.values["r"]) == (False, None)
    assert a.runner.known(g.values["s"]) == (False, None)
    folds = {f.node.op_type for f in a.fold_plan().folds.values()}
    assert folds == {"Shape"}  # the shape of a random tensor is known; its values are not


def test_evaluation_errors_are_findings_on_the_node() -> None:
    text = H + """g (float[N] x) => (float[N] y, int64 q) {
  a = Constant <value = int64 {6}> ()
  b = Constant <value = int64 {0}> ()
  q = Div (a, b)
  y = Relu (x)
}
"""
    a = Analysis(text)
    [f] = [f for f in a.findings() if f.code == "GL403"]
    assert "division by zero" in f.message and a.doc.text[f.start:f.end] == "Div"
    out_of_range = H + """g (float[N] x) => (float[N] y, float[3] z) {
  d = Constant <value = float[3] {1, 2, 3}> ()
  i = Constant <value = int64[1, 1] {7}> ()
  u = Constant <value = float[1] {5}> ()
  z = ScatterND (d, i, u)
  y = Relu (x)
}
"""
    found = [f for f in Analysis(out_of_range).findings() if f.severity == "error"]
    assert [f.code for f in found] == ["GL403"] and "out of bounds" in found[0].message
    checked = out_of_range.replace("z = ScatterND (d, i, u)", "z = GatherElements (d, i)").replace("[1, 1] {7}", "[3] {0, 7, 1}")
    found = [f for f in Analysis(checked).findings() if f.severity == "error"]
    assert [f.code for f in found] == ["GL310"]  # the shape rule saw it first: one finding, not two


def test_an_edit_to_a_large_constant_reaches_what_was_computed_from_it() -> None:
    """The refiner cannot see a value of more than 1,024 elements change (early cutoff on equal types); the runner
    recomputes what it derived from it and the Reshape reading it is inferred again."""
    values = ["0"] * 1100
    values[500] = values[501] = values[502] = "1"
    text = H + """g (float[12] x) => (float[3, 4] y) {
  c = Constant <value = float[1100] {""" + ", ".join(values) + """}> ()
  s = ReduceSum <keepdims = 1> (c)
  n = Cast <to = 7> (s)
  rest = Constant <value = int64[1] {-1}> ()
  t = Concat <axis = 0> (n, rest)
  y = Reshape (x, t)
}
"""
    a = Analysis(text)
    assert types(a)["y"] == "float[3, 4]"
    at = a.doc.text.index("{", a.doc.text.index("float[1100]")) + 1 + 3 * 503  # the 504th value
    assert a.doc.text[at] == "0"
    report = a.apply_edit(at, at + 1, "1")
    assert report.graph == "patched"
    assert types(a)["y"] == "float[4, 3]"
    assert state(a) == state(Analysis(a.doc.text))


def test_constant_edits_keep_fold_hints_equal_to_a_fresh_analysis(gpt_l24_text: str) -> None:
    a = Analysis(gpt_l24_text)
    before = len(a.fold_plan().folds)
    import re

    # a head-count divisor in the second half (the shared model writes `int64 {2}`, the generated one `int64[1] {2}`)
    found = re.compile(r"Constant <value: tensor = int64(\[1\])? \{2\}>").search(a.doc.text, len(a.doc.text) // 2)
    assert found is not None
    j = a.doc.text.index("{", found.start()) + 1
    a.apply_edit(j, j + 1, "4")
    assert state(a) == state(Analysis(a.doc.text))
    a.apply_edit(j, j + 1, "2")
    assert len(a.fold_plan().folds) == before
    assert state(a) == state(Analysis(a.doc.text))


def test_values_downstream_of_a_data_dependent_op_follow_an_edit() -> None:
    # the runner's answer for s, kept by the shape engine as s's value, is stale after the edit: recomputed
    text = H + """g (float[N] x) => (float[N] y) {
  c = Constant <value = float[2, 3] {0, 1, 0, 2, 3, 0}> ()
  nz = NonZero (c)
  s = ReduceSum <keepdims = 0> (nz)
  f = Cast <to = 1> (s)
  y = Add (x, f)
}
"""
    a = Analysis(text)
    g = a.model.graph
    assert g is not None
    assert types(a)["nz"] == "int64[2, 3]"
    at = a.doc.text.index("{0, 1, 0") + 1
    a.apply_edit(at, at + 4, "1, 0")  # same count of non-zeros, other positions
    fresh = Analysis(a.doc.text)
    fg = fresh.model.graph
    assert fg is not None
    got, want = a.runner.known(g.values["s"]), fresh.runner.known(fg.values["s"])
    assert got[0] and want[0] and int(got[1]) == int(want[1])
    assert [f.message for f in a.findings()] == [f.message for f in fresh.findings()]


def test_a_value_that_cannot_be_a_shape_value_is_not_computed_for_one() -> None:
    # Concat asks each input for its elements as dims (a shape value): a float activation can give none, so its
    # producer is not run for it (the fold of the Concat stops at the first input that is not a constant, x)
    text = H + """g (float[1, 8] x) => (float[1, 16] y) {
  a = Relu (x)
  y = Concat <axis = 1> (x, a)
}
"""
    a = Analysis(text)
    assert types(a)["y"] == "float[1, 16]"
    assert {v.name for v in a.runner.requested} == {"x"}
