"""The shape contract's semantics on nodes: alternatives chosen by rank, runs, `let`, `require`, `when`, `value()`,
three-valued conditions (nothing unknown is reported), delegation to onnx's rules with their checks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphlsp.infer.types import type_str
from graphlsp.oplib.catalog import CATALOG

LIBRARY = """\
library lab
domain com.lab

op Attn {
  input  q: T[B, S, Hq] | [B, S, num_heads, 3, D]
  input  past?: T[B, num_heads, P, Dp]
  input  total?: int64
  output y: T[B, S, V]
  output present?: T[B, num_heads, P + S if has(past) else S, Dh] when has(past)
  output total_len?: T[value(total) if has(total) else _]
  attr   num_heads: int
  type   T: float
  let    V = num_heads * D if rank(q) == 5 else Hq
  let    Dh = Dp if has(past) else V / num_heads
  require V % num_heads == 0 else GL302 "the hidden size must be a multiple of num_heads"
}

op Pool {
  input  x: T[N, C, *spatial]
  output y: T[N, C, *spatial]
  output flat: T[N, C * 2]
  attr   mode: string = "max"
  type   T: float
  require mode in ("max", "avg") else "mode must be max or avg"
}

op Softer {
  input  x: T
  output y: T
  attr   axis: int = -1
  type   T: float
  shape  Softmax@13(x)
}
"""

H = '<ir_version: 10, opset_import: ["" : 21, "com.lab" : 1]>\n'


@pytest.fixture(autouse=True)
def library(tmp_path: Path) -> Iterator[None]:
    path = tmp_path / "lab.onnxop"
    path.write_text(LIBRARY)
    [lib] = CATALOG.add_files([path])
    assert lib.problems == [], [str(p) for p in lib.problems]
    yield
    CATALOG.clear_project()


def analyse(body: str, inputs: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    from graphlsp.analysis import Analysis

    a = Analysis(H + f"g ({inputs}) => () {{\n{body}}}\n")
    graph = a.model.graph
    assert graph is not None
    types = {name: type_str(a.refiner.type_of(v)) for name, v in graph.values.items()}
    found = [(f.code, f.severity, f.message) for f in a.findings() if f.code not in ("GL207", "GL208")]
    return types, found


def test_alternatives_are_chosen_by_rank_and_lets_follow_them() -> None:
    types, found = analyse(
        "  a = com.lab.Attn <num_heads = 4> (q3)\n  b = com.lab.Attn <num_heads = 4> (q5)\n",
        "float[batch, seq, 64] q3, float[batch, seq, 4, 3, 16] q5",
    )
    assert found == []
    assert types["a"] == "float[batch, seq, 64]" and types["b"] == "float[batch, seq, 64]"


def test_a_rank_no_alternative_fits_is_reported() -> None:
    _, found = analyse("  a = com.lab.Attn <num_heads = 4> (q)\n", "float[8, 64] q")
    assert found == [("GL317", "error", "Attn: input 0 (q) must have rank 3 or rank 5, got rank 2: q is [8, 64] "
                      "(line 2)")]  # fmt: skip


def test_optional_inputs_and_when() -> None:
    types, found = analyse(
        "  a, p = com.lab.Attn <num_heads = 4> (q, past)\n  b, r = com.lab.Attn <num_heads = 4> (q)\n",
        "float[batch, seq, 64] q, float[batch, 4, past_seq, 16] past",
    )
    assert types["p"] == "float[batch, 4, past_seq + seq, 16]"
    assert found == [("GL317", "warning", "Attn: output 1 (present) is produced only when has(past); here it is not, "
                      "and the runtime leaves it empty or fails")]  # fmt: skip
    assert types["r"] == "float[...]"  # its element type, no shape


def test_require_with_a_code_and_unknown_relations_are_not_reported() -> None:
    _, found = analyse("  a = com.lab.Attn <num_heads = 5> (q)\n  b = com.lab.Attn <num_heads = 5> (qs)\n",
                       "float[batch, seq, 64] q, float[batch, seq, hidden] qs")  # fmt: skip
    assert found == [("GL302", "error", "Attn: the hidden size must be a multiple of num_heads (V = 64, "
                      "num_heads = 5)")]  # fmt: skip


def test_value_reads_a_known_scalar_input() -> None:
    types, found = analyse(
        "  t = Constant <value = int64 {12}> ()\n  a, p, n = com.lab.Attn <num_heads = 4> (q, , t)\n"
        "  b, r, m = com.lab.Attn <num_heads = 4> (q, , u)\n",
        "float[batch, seq, 64] q, int64 u",
    )
    assert types["n"] == "float[12]" and types["m"] == "float[?]"


def test_runs_are_bound_and_spliced() -> None:
    types, found = analyse("  y, f = com.lab.Pool (x)\n  z, g = com.lab.Pool <mode = \"sum\"> (x)\n",
                           "float[2, 3, h, w, 5] x")  # fmt: skip
    assert types["y"] == "float[2, 3, h, w, 5]" and types["f"] == "float[2, 6]"
    assert found == [("GL317", "error", "Pool: mode must be max or avg (mode = sum)")]


def test_delegation_runs_onnxs_rule_with_the_nodes_attributes_and_names() -> None:
    types, found = analyse("  y = com.lab.Softer (x)\n  z = com.lab.Softer <axis = 3> (x)\n", "float[2, 3] x")
    assert types["y"] == "float[2, 3]"
    assert found == [("GL309", "error", "Softer: axis 3 is out of range for rank 2 (allowed -2..1)")]
