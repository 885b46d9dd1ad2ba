"""The ops onnx.reference lacks below some opset: the table agrees with onnx.reference, and a node below it is
left unknown, as onnx.reference would leave it, without importing onnx.reference."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from onnx.reference.ops import load_op

from graphlsp.analysis import Analysis
from graphlsp.graph import ops
from graphlsp.runner import unimplemented


@pytest.mark.parametrize("op", sorted(unimplemented.first_versions()))
def test_the_table_is_where_onnx_reference_starts(op: str) -> None:
    first = unimplemented.first_versions()[op]
    with pytest.raises(Exception, match=unimplemented.NO_IMPLEMENTATION):
        load_op("", op, first - 1)
    assert load_op("", op, first) is not None
    assert unimplemented.lacks(op, first - 1) == first and unimplemented.lacks(op, first) is None


def test_every_op_not_in_the_table_has_no_version_gap_at_its_first_schema() -> None:
    for op in ops.op_names(""):
        if op in unimplemented.first_versions():
            continue
        since = ops.op_versions(op, "")[0][0]
        try:
            load_op("", op, since)
        except Exception as e:  # other failures (no kernel at all, a function body) are not the table's
            assert not str(e).startswith(unimplemented.NO_IMPLEMENTATION), op


def dq(opset: int) -> str:
    return f"""<ir_version: 8, opset_import: ["" : {opset}]>
g (float[N] x) => (float[N, 4] y) {{
  q = Constant <value = int8[4] {{1, 2, 3, 4}}> ()
  s = Constant <value = float {{0.5}}> ()
  d = DequantizeLinear (q, s)
  y = Add (x, d)
}}
"""


def test_below_the_table_a_node_stays_unknown_and_from_it_on_it_folds() -> None:
    for opset, want in ((17, None), (19, [0.5, 1.0, 1.5, 2.0])):
        a = Analysis(dq(opset))
        assert a.model.graph is not None
        ok, value = a.runner.known(a.model.graph.values["d"])
        assert (value.tolist() if ok else None) == want, opset


def test_a_node_below_the_table_never_imports_onnx_reference() -> None:
    probe = textwrap.dedent("""
        import sys
        from graphlsp.analysis import Analysis
        a = Analysis(sys.stdin.read())
        print(a.runner.known(a.model.graph.values["d"])[0], "onnx.reference" in sys.modules)
    """)
    for _ in range(2):  # the first run builds the table when this onnx build has none in the cache yet
        out = subprocess.run([sys.executable, "-c", probe], input=dq(17), capture_output=True, text=True, check=False)
    assert out.stdout.split() == ["False", "False"], out.stderr
