"""The body oracle (`tools/body_shapes.py`, code in `tools/body_oracle/`): values inside If / Loop / Scan bodies,
judged against execution on the branch taken and at every iteration. graphlsp must have no WRONG body value on the
models here; the oracle itself must record every iteration and call a fixed dim WRONG where the size changes
between iterations."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import onnx
import onnx.parser
import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus" / "models"


def _tool() -> ModuleType:
    """The package tools/body_oracle/ (tools/ is no package: loaded from its path, as tools/body_shapes.py runs it)."""
    pkg = ROOT / "tools" / "body_oracle"
    spec = importlib.util.spec_from_file_location("body_oracle", pkg / "__init__.py",
                                                  submodule_search_locations=[str(pkg)])
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["body_oracle"] = mod  # its modules import each other, and dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


bs = _tool()

# A Loop whose trip count is a dim (N), a carried value that grows each iteration, and an If inside the body
# that takes its then branch on the first iteration only.
GROW = """<ir_version: 8, opset_import: ["" : 17]>
grow (float[N, 4] x) => (float[?, 4] acc, float[N, N, 4] ys) {
   s = Shape (x)
   zero = Constant <value = int64 {0}> ()
   m = Gather <axis = 0> (s, zero)
   t = Constant <value = bool {1}> ()
   acc, ys = Loop (m, t, x) <body = step (int64 i, bool c, float[?, 4] a) => (bool c2, float[?, 4] a2, float[N, 4] y) {
      c2 = Identity (c)
      a2 = Concat <axis = 0> (a, x)
      one = Constant <value = int64 {1}> ()
      first = Less (i, one)
      y = If (first) <then_branch = th () => (float[N, 4] r) { r = Relu (x) },
                      else_branch = el () => (float[N, 4] r2) { r2 = Add (x, x) }>
   }>
}
"""

SCAN = """<ir_version: 8, opset_import: ["" : 17]>
running (float[T, B, 3] x) => (float[B, 3] last, float[T, B, 6] ys) {
   axes = Constant <value = int64[1] {0}> ()
   init = ReduceSum <keepdims = 0> (x, axes)
   last, ys = Scan <num_scan_inputs = 1, body = step (float[B, 3] s, float[B, 3] xi) => (float[B, 3] s2, float[B, 6] y) {
      s2 = Add (s, xi)
      y = Concat <axis = 1> (s2, xi)
   }> (init, x)
}
"""


def _run(model: onnx.ModelProto, name: str, path: str | None = None) -> Any:
    r = bs.evaluate(model, name, path, timeout=120)
    assert not r.error, r.error
    assert r.counts["W"] == 0, r.wrong[:5]
    return r


def test_loop_iterations_and_nested_if_on_the_branch_taken() -> None:
    r = _run(onnx.parser.parse_model(GROW), "grow")
    assert len(r.runs) == 2 and {x["env"]["N"] for x in r.runs} == {2, 3}
    # every node output of the three bodies ran (the If's else branch from the second iteration on)
    assert r.values == 7 and r.counts["E"] == 7
    assert r.classes["main/Loop_4.body:a2"] == "E"  # [?, 4]: the only right answer for a dim that grows
    assert r.classes["main/Loop_4.body/If_4.then_branch:r"] == "E"
    assert r.classes["main/Loop_4.body/If_4.else_branch:r2"] == "E"
    assert r.varying == 1


def test_scan_body() -> None:
    r = _run(onnx.parser.parse_model(SCAN), "scan")
    assert r.values == 2 and r.counts["E"] == 2


def test_a_fixed_dim_that_changes_between_iterations_is_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    real = bs.graphlsp_types

    def claims_fixed(model: onnx.ModelProto, path: str | None, table: dict) -> dict:
        types = real(model, path, table)
        for key in types:
            if key[1] == "a2":
                types[key] = ("float", ["2*N", 4])  # true on the first iteration only
            if key[1] == "r2":
                types[key] = ("float", ["N", 5])
        return types

    monkeypatch.setattr(bs.oracle, "graphlsp_types", claims_fixed)  # where evaluate looks it up
    r = bs.evaluate(onnx.parser.parse_model(GROW), "grow", None, timeout=120)
    assert r.counts["W"] == 2
    assert {(w["name"], w["why"]) for w in r.wrong} == {("a2", "dim 0"), ("r2", "dim 1")}


def test_judge() -> None:
    ev = bs.Evaluator(["N"])
    envs = [{"N": 2}, {"N": 3}]
    same = {0: {("float", (2, 4))}, 1: {("float", (3, 4))}}
    assert bs.judge(("float", ["N", 4]), same, envs, ev).cls == "E"
    assert bs.judge(("float", [None, 4]), same, envs, ev).cls == "P"
    assert bs.judge(("float", ["unk__1", 4]), same, envs, ev).cls == "P"
    assert bs.judge(("float", None), same, envs, ev).cls == "U"
    assert bs.judge(None, same, envs, ev).cls == "U"
    assert bs.judge(("float", [2, 4]), same, envs, ev).cls == "W"  # 2 at N=2 only: a dim that is N
    assert bs.judge(("float", ["N", 4, 1]), same, envs, ev).why == "rank"
    assert bs.judge(("int64", ["N", 4]), same, envs, ev).why == "dtype"
    grows = {0: {("float", (2, 4)), ("float", (4, 4))}, 1: {("float", (3, 4)), ("float", (6, 4))}}
    v = bs.judge(("float", [None, 4]), grows, envs, ev)
    assert (v.cls, v.varying) == ("E", True)
    assert bs.judge(("float", ["N", 4]), grows, envs, ev).cls == "W"
    ranks = {0: {("float", (2,)), ("float", (2, 2))}}
    assert bs.judge(("float", None), ranks, envs, ev).cls == "E"
    assert bs.judge(("float", [2]), ranks, envs, ev).cls == "W"
    assert bs.judge(("float", ["2*N - N", 4]), same, envs, ev).cls == "E"  # an expression of N


@pytest.mark.parametrize(
    "name,values",
    [
        ("tf2onnx_lstm", 35),  # a Loop with scan outputs (onnx 1.23's reference Loop stacks them wrong: fixed here)
        ("torchscript_scripted_loop", 19),  # Loop with an If
        ("dynamo_cond", 5),  # an If on data: both branches, in different runs
        ("optimum_whisper__decoder_model_merged", 705),  # the If on use_cache_branch: both branches
    ],
)
def test_corpus_bodies(name: str, values: int) -> None:
    path = CORPUS / f"{name}.onnx"
    r = _run(onnx.load(str(path)), name, str(path))
    assert r.values == values
    assert r.counts["E"] == values
    assert r.one_run == 0  # every body value was seen at two sizes


def test_the_command_line(tmp_path: Path) -> None:
    """tools/body_shapes.py runs the package: one line per model, the total, exit 0 without a WRONG value."""
    model = tmp_path / "grow.onnxtxt"
    model.write_text(GROW)
    out = tmp_path / "out.json"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "body_shapes.py"), str(model), "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].split()[:8] == ["grow", "3", "7", "7", "7", "0", "0", "0"]
    assert lines[-1].split() == ["TOTAL", "7", "7", "0", "0", "0"]
    assert json.loads(out.read_text())[0]["classes"]["main/Loop_4.body:a2"] == "E"
