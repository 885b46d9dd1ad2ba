"""A project's own ops, declared in an .onnxop file listed in `op-libraries`, are checked like built-in ones through
`graphlsp check`: arity, attributes, types, the shape contract's relations, and the output shapes downstream."""

from __future__ import annotations

import json
import pickle
from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from graphlsp.cli import main
from graphlsp.infer.context import InferenceContext
from graphlsp.lint.config import ConfigError, load_settings
from graphlsp.oplib.catalog import CATALOG
from graphlsp.ops import registry

LIBRARY = """\
library acme
domain com.acme

op ScaledMatMul since 1 {
  doc "Y = scale * (A @ B), batched over A's leading dims."
  input  A: T[*batch, M, K]
  input  B: T[K, N]
  input  bias?: T[N]
  output Y: T[*batch, M, N]
  attr   scale: float = 1.0
  type   T: float, float16
  dim    K "the inner dimension" GL302
}

op SplitHeads since 1 {
  input  x: T[B, S, H]
  output y: T[B, num_heads, S, H / num_heads]
  attr   num_heads: int
  type   T: float, float16
  require num_heads > 0 else "num_heads must be positive"
}

op ConvRelu since 1 {
  input  X: T[N, C, _, _]
  input  W: T[M, C / group, _, _]
  input  B?: T[M]
  output Y: T
  attr   group: int = 1
  attr   pads?: ints
  attr   strides?: ints
  type   T: float
  shape  Conv(X, W, B)
}

op Pairwise since 1 {
  input  a: T
  input  b: T
  output c: T = broadcast(a, b)
  type   T: float
}

op Window since 2 {
  input  x: T
  output y: T = x
  type   T: float
}

op Rotate since 1 {
  input  x: T
  output y: T
  attr   k: int = 1
  type   T: float
  shape  python
}
"""

MODEL = """\
<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1, "com.other" : 1]>
g (float[batch, 4, 8] x, float[8, 16] w, float[9, 16] w_bad, int64[batch, 4, 8] xi, float[16] b16,
   float[1, 3, 8, 8] img, float[6, 3, 3, 3] k6, float[6, 4, 3, 3] k_bad, float[8] g8)
  => (float[batch, 4, 16] y, float[batch, 2, 4, 4] h2, float[1, 6, 8, 8] c, float[batch, 8, 4] t,
      float[batch, 4, 8] n) {
  y = com.acme.ScaledMatMul <scale = 0.5> (x, w, b16)
  z = com.acme.ScaledMatMul (x, w_bad)
  q = com.acme.ScaledMatMul (xi, w)
  r = com.acme.ScaledMatMul (x)
  s = com.acme.ScaledMatMul <scale = "big"> (x, w)
  h = com.acme.SplitHeads (x)
  h3 = com.acme.SplitHeads <num_heads = 3> (x)
  h2 = com.acme.SplitHeads <num_heads = 2> (x)
  c = com.acme.ConvRelu <pads = [1, 1, 1, 1]> (img, k6)
  cb = com.acme.ConvRelu (img, k_bad)
  p = com.acme.Pairwise (x, w)
  v = com.acme.Window (x)
  u = com.other.Thing (x)
  t = com.acme.Rotate (x)
  n = SimplifiedLayerNormalization (x, g8)
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "acme.onnxop").write_text(LIBRARY)
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = ["ops/*.onnxop"]\n')
    (tmp_path / "model.onnxtxt").write_text(MODEL)

    def rotate(ctx: InferenceContext) -> None:  # a Python shape function behind `shape python`
        x = ctx.input_shape(0)
        if x is not None and len(x) >= 2:
            ctx.set_output(0, (*x[:-2], x[-1], x[-2]))

    registry.shape_fn("Rotate", domain="com.acme")(rotate)
    yield tmp_path
    registry.unregister("Rotate", domain="com.acme")
    CATALOG.clear_project()


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]]]:
    code = main(["check", "--no-cache", "--format", "json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith("[") else []


def test_a_custom_op_is_checked_like_a_builtin(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = check(capsys, str(project / "model.onnxtxt"))
    assert code == 1
    got = sorted((d["line"], d["code"], d["message"]) for d in found if d["code"] != "GL207")
    assert got == [
        (7, "GL302", "ScaledMatMul: K (the inner dimension) differs: dim 2 of x (8) and dim 0 of w_bad (9) must be "
         "equal: x is [batch, 4, 8] (line 2), w_bad is [9, 16] (line 2)"),
        (8, "GL311", "ScaledMatMul: input 0 (A) has type tensor(int64), which T does not allow (allowed: float, "
         "float16)"),
        (9, "GL312", "ScaledMatMul: takes 2 to 3 inputs, got 1"),
        (10, "GL314", "ScaledMatMul: attribute 'scale' must be float, got string"),
        (11, "GL313", "SplitHeads: missing required attribute 'num_heads' (int)"),
        (12, "GL317", "SplitHeads: H / num_heads must divide exactly: 8 is not a multiple of 3 (H = 8, "
         "num_heads = 3)"),
        (15, "GL317", "ConvRelu: dim 1 of k_bad must be C / group = 3 (C = 3, group = 1), got 4: k_bad is "
         "[6, 4, 3, 3] (line 3)"),
        (16, "GL301", "Pairwise: shapes do not broadcast: x is [batch, 4, 8] (line 2), w is [8, 16] (line 2)"),
        (17, "GL209", "'Window' is not in opset 1 of com.acme: the acme library declares it for opset 2+"),
        (18, "GL316", "Thing: no op library declares domain 'com.other': its outputs have unknown shapes; declare it "
         "in an .onnxop file (`op com.other.Thing { input ... output ... }`) listed in `op-libraries` of "
         "[tool.graphlsp]"),
        (20, "GL211", "'SimplifiedLayerNormalization' is not an ONNX op: only onnxruntime defines it in ai.onnx, a "
         "domain the ONNX standard owns; onnx's checker and other runtimes reject the model; the standard "
         "RMSNormalization (ai.onnx opset 23) computes the same"),
    ]  # fmt: skip
    # the inferred outputs agree with every declared graph output: no GL315
    assert "GL315" not in {d["code"] for d in found}


def test_the_outputs_shapes_come_from_the_contract(project: Path) -> None:
    from graphlsp.analysis import Analysis

    load_settings(project)
    a = Analysis((project / "model.onnxtxt").read_text())
    shapes = {v.name: a.refiner.type_of(v) for v in a.model.graph.values.values()}  # type: ignore[union-attr]
    text = {k: str(getattr(t, "shape", None)) for k, t in shapes.items()}
    from graphlsp.infer.types import type_str

    assert type_str(shapes["y"]) == "float[batch, 4, 16]"
    assert type_str(shapes["h2"]) == "float[batch, 2, 4, 4]"
    assert type_str(shapes["c"]) == "float[1, 6, 8, 8]"  # onnx's Conv rule, through `shape Conv(X, W, B)`
    assert type_str(shapes["t"]) == "float[batch, 8, 4]"  # the Python rule
    assert type_str(shapes["n"]) == "float[batch, 4, 8]"  # onnxruntime's library
    assert type_str(shapes["u"]) == "?", text


def test_symbolic_dims_merge_through_the_contract(project: Path) -> None:
    from graphlsp.analysis import Analysis
    from graphlsp.infer import dims as d
    from graphlsp.infer.types import type_str

    load_settings(project)
    a = Analysis('<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1]>\n'
                 "g (float[batch, seq, h] x, float[hidden, 16] w) => (float[batch, seq, 16] y) {\n"
                 "  y = com.acme.ScaledMatMul (x, w)\n}\n")  # fmt: skip
    y = a.model.graph.values["y"]  # type: ignore[union-attr]
    assert type_str(a.refiner.type_of(y)) == "float[batch, seq, 16]"
    # K binds `h` (x) and `hidden` (w): the refiner's unifier learned they are one dim
    find = a.refiner.unifier.find
    assert find(d.symbol("h")) is find(d.symbol("hidden"))
    assert not [f for f in a.findings() if f.severity == "error"], a.findings()


def test_a_binary_model_is_checked_by_node(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graph = helper.make_graph(
        [helper.make_node("ScaledMatMul", ["x", "w"], ["y"], domain="com.acme", name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 8]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [9, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.acme", 1)])
    onnx.save(model, project / "model.onnx")
    code, found = check(capsys, str(project / "model.onnx"))
    assert code == 1
    [d] = found
    assert (d["code"], d["node"], d["op"]) == ("GL302", "mm", "com.acme.ScaledMatMul")


def test_worker_processes_use_the_project_libraries(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = load_settings(project)
    CATALOG.clear_project()
    assert CATALOG.lookup("com.acme", "ScaledMatMul", 1) is None
    copy = pickle.loads(pickle.dumps(settings))  # what a worker receives
    assert copy.op_libraries == settings.op_libraries
    assert CATALOG.lookup("com.acme", "ScaledMatMul", 1) is not None
    (project / "two.onnxtxt").write_text(MODEL)
    code, found = check(capsys, "-j", "2", str(project / "model.onnxtxt"), str(project / "two.onnxtxt"))
    assert sum(d["code"] == "GL302" for d in found) == 2


def test_an_edited_library_is_read_again_and_invalidates_cached_results(project: Path) -> None:
    before = load_settings(project).key()
    lib = project / "ops" / "acme.onnxop"
    lib.write_text(LIBRARY.replace('dim    K "the inner dimension" GL302', 'dim    K "the inner dim" GL317'))
    after = load_settings(project)
    assert before != after.key()
    decl = CATALOG.lookup("com.acme", "ScaledMatMul", 1)
    assert decl is not None and decl.symbols["K"].code == "GL317"


def test_library_problems_are_a_configuration_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = ["ops.onnxop"]\n')
    (tmp_path / "ops.onnxop").write_text("op Good {\n  input x: T\n  output y: T = x\n  type T: float\n}\n"
                                         "op Bad {\n  input x: U\n}\n")  # fmt: skip
    (tmp_path / "m.onnxtxt").write_text(MODEL)
    try:
        with pytest.raises(ConfigError) as e:
            load_settings(tmp_path)
        assert f"{tmp_path / 'ops.onnxop'}:7:12: error: 'U' is neither a type constraint of Bad" in str(e.value)
        assert CATALOG.lookup("", "Good", 1) is not None  # the good declaration is still read
        assert main(["check", "--no-cache", str(tmp_path / "m.onnxtxt")]) == 2
        (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\nop-libraries = ["missing/*.onnxop"]\n')
        with pytest.raises(ConfigError, match="'missing/\\*.onnxop' matches no file"):
            load_settings(tmp_path)
    finally:
        CATALOG.clear_project()


def test_shapes_and_fold_use_the_projects_libraries(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "small.onnxtxt").write_text('<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1]>\n'
                                           "g (float[batch, 4, 8] x) => (h) {\n"
                                           "  h = com.acme.SplitHeads <num_heads = 2> (x)\n}\n")  # fmt: skip
    CATALOG.clear_project()  # as in a fresh process: `shapes` itself must find pyproject's op-libraries
    assert main(["shapes", "--format", "json", str(project / "small.onnxtxt")]) == 0
    values = {v["name"]: v for v in json.loads(capsys.readouterr().out)["values"]}
    assert values["h"]["shape"] == ["batch", 2, 4, 4]
    CATALOG.clear_project()
    code = main(["fold", "--size-cap", "1000", "-o", str(project / "folded.onnxtxt"), str(project / "model.onnxtxt")])
    assert code in (0, 1) and "GL204" not in capsys.readouterr().err
