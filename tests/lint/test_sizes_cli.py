"""Input sizes on the command line and in the config: `--dim`, `--input-shape`, `dims`, `input-shapes`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphlsp.cli import main

H = '<ir_version: 10, opset_import: ["" : 21]>\n'
TRACED = H + ("g (float[N, 8] x) => (float[1, 8] y) {\n  shape = Constant <value = int64[2] {1, 8}> ()\n"
              "  y = Reshape (x, shape)\n}\n")  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def model(tmp_path: Path) -> Path:
    p = tmp_path / "traced.onnxtxt"
    p.write_text(TRACED)
    return p


def test_without_sizes_a_pinned_dim_is_one_warning(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    """The Reshape holds only at N = 1: one finding, GL321 on the input (the declaration is wrong), naming the node
    and a size at which it fails (no GL320 twin on the node)."""
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", str(model))
    (found,) = json.loads(out)
    assert code == 0
    assert (found["code"], found["line"], found["severity"]) == ("GL321", 2, "warning")
    assert "Reshape fixes it to 1: N = 1 (it fails at N=2)" in found["message"]
    code, out, _ = run(capsys, "check", "--no-cache", "--strict", str(model))
    assert code == 1


POSITIONS = H + ("g (int64[B, S] ids, float[16, 4] table) => (float[S, 4] y) {\n"
                 "  shape = Shape <start = 1, end = 2> (ids)\n  zero = Constant <value = int64 {0}> ()\n"
                 "  one = Constant <value = int64 {1}> ()\n  n = Squeeze (shape)\n"
                 "  pos = Range (zero, n, one)\n  two = Constant <value = int64 {2}> ()\n"
                 "  off = Add (pos, two)\n  y = Gather (table, off)\n}\n")  # fmt: skip


def test_a_limit_of_the_model_is_information(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """bart's positions `arange(S) + 2` read from a 16-row table: S <= 14 is a fact of the model's contract, info
    (shown, and --strict passes), and an error at a bound size past it."""
    p = tmp_path / "positions.onnxtxt"
    p.write_text(POSITIONS)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--strict", str(p))
    found = [(d["code"], d["severity"], d["message"]) for d in json.loads(out)]
    assert code == 0
    assert found == [("GL320", "info", "Gather needs S + 2 <= 16: S must be at most 14 (it fails at S=15)")]
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--dim", "S=15", str(p))
    assert code == 1 and [(d["code"], d["line"]) for d in json.loads(out)] == [("GL310", 10)]


TWICE = H + ("g (float[N, 8] x) => (float[1, 8] y, float[1, 8] z) {\n  shape = Constant <value = int64[2] {1, 8}> ()\n"
             "  a = Relu (x)\n  y = Reshape (a, shape)\n  z = Reshape (x, shape)\n}\n")  # fmt: skip


def test_a_condition_an_earlier_one_implies_is_not_said_again(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:  # fmt: skip
    p = tmp_path / "twice.onnxtxt"
    p.write_text(TWICE)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", str(p))
    (found,) = json.loads(out)
    assert found["code"] == "GL321" and "it holds for 1 later node(s) too" in found["message"]


def test_dim_binds_the_size(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--dim", "N=2", str(model))
    assert code == 1
    assert [(d["code"], d["line"]) for d in json.loads(out)] == [("GL304", 4)]
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--dim", "N=1", str(model))
    assert code == 0 and json.loads(out) == []


def test_input_shape_binds_the_input(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--input-shape", "x=3x8", str(model))
    assert code == 1 and [d["code"] for d in json.loads(out)] == ["GL304"]
    code, out, _ = run(capsys, "shapes", "--format", "json", "--input-shape", "x=1x8", str(model))
    values = {v["name"]: v["shape"] for v in json.loads(out)["values"]}
    assert values["x"] == [1, 8] and values["y"] == [1, 8]


def test_config_dims(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    (model.parent / "graphlsp.toml").write_text("dims = { N = 4 }\n")
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", str(model))
    assert code == 1 and [d["code"] for d in json.loads(out)] == ["GL304"]
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--dim", "N=1", str(model))
    assert code == 0, "the command line wins over the config"


@pytest.mark.parametrize("arg", [["--dim", "N"], ["--dim", "N=-1"], ["--dim", "N=x"], ["--input-shape", "x=1xA"],
                                 ["--dim", "N=99999999999999999999"]])
def test_bad_sizes_are_usage_errors(capsys: pytest.CaptureFixture[str], model: Path, arg: list[str]) -> None:
    code, _, err = run(capsys, "check", "--no-cache", *arg, str(model))
    assert code == 2 and "error:" in err


@pytest.mark.parametrize("toml", ['dims = { N = "4" }\n', "dims = [4]\n", 'input-shapes = { x = "1x8" }\n'])
def test_bad_config_sizes(capsys: pytest.CaptureFixture[str], model: Path, toml: str) -> None:
    (model.parent / "graphlsp.toml").write_text(toml)
    code, _, err = run(capsys, "check", "--no-cache", str(model))
    assert code == 2 and "graphlsp.toml" in err


def test_hover_on_the_input_shows_its_contract() -> None:
    from graphlsp.analysis import Analysis
    from graphlsp.query import hover

    a = Analysis(TRACED)
    got = hover(a, TRACED.index("x) =>"))
    assert got is not None
    assert "dim 0 (`N`): N must be 1 (`Reshape`, line 4)" in got[0]
    assert "dim 1" not in got[0]  # a fixed dim has no contract


def test_shapes_prints_the_contracts(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    code, out, _ = run(capsys, "shapes", str(model))
    assert code == 0 and "x dim 0 (N): N must be 1 (Reshape)" in out
    code, out, _ = run(capsys, "shapes", "--format", "json", str(model))
    (c,) = json.loads(out)["contracts"]
    assert (c["input"], c["dim"], c["symbol"], c["requires"], c["op"]) == ("x", 0, "N", "N must be 1", "Reshape")


def test_editor_settings_take_sizes() -> None:
    from graphlsp.lint.config import Settings, from_editor

    s = from_editor(Settings(), {"dims": {"N": 2}, "inputShapes": {"x": [2, 8]}})
    assert s.sizes.dim_map() == {"N": 2} and s.sizes.shape_map() == {"x": (2, 8)}
    with pytest.raises(ValueError):
        from_editor(Settings(), {"dims": {"N": "two"}})


IF_BODY = H + ("g (float[N, 8] x, bool c) => (float[1, 8] y) {\n"
               "  y = If (c) <then_branch = t () => (float[1, 8] a) {\n"
               "      shape = Constant <value = int64[2] {1, 8}> ()\n      a = Reshape (x, shape)\n"
               "    }, else_branch = e () => (float[N, 8] b) {\n      b = Identity (x)\n    }>\n}\n")  # fmt: skip
CALL = ('<ir_version: 10, opset_import: ["" : 21, "local" : 1]>\n'
        "g (float[N, 8] x) => (float[1, 8] y) {\n  y = local.Flat (x)\n}\n"
        '<domain: "local", opset_import: ["" : 21]>\nFlat (a) => (b) {\n'
        "  shape = Constant <value = int64[2] {1, 8}> ()\n  b = Reshape (a, shape)\n}\n")  # fmt: skip


@pytest.mark.parametrize(("text", "line"), [(IF_BODY, 5), (CALL, 3)], ids=["if-branch", "function-call"])
def test_conditions_inside_bodies_and_calls(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                            line: int) -> None:  # fmt: skip
    p = tmp_path / "m.onnxtxt"
    p.write_text(text)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", str(p))
    found = {d["code"]: d for d in json.loads(out)}
    assert found["GL321"]["related"][0]["line"] == line and "N = 1" in found["GL321"]["message"]
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--dim", "N=3", str(p))
    assert code == 1 and [d["line"] for d in json.loads(out) if d["severity"] == "error"] == [line]


CACHED = """\
library acme
domain com.acme

op CachedAttention since 1 {
  input  q: T[B, S, H]
  input  past: T[B, P, H]
  output y: T[B, S, H]
  type   T: float
  require B == 1 or P == 0 else "a prompt after a past takes batch 1"
  require P + S <= 4096 else "the cache holds 4096 positions"
  require S == 1 else "one token at a time"
}
"""
CACHED_MODEL = ('<ir_version: 10, opset_import: ["" : 21, "com.acme" : 1]>\n'
                "g (float[batch, seq, 8] q, float[batch, past, 8] kv) => (float[batch, seq, 8] y) {\n"
                "  y = com.acme.CachedAttention (q, kv)\n}\n")  # fmt: skip


def test_op_library_requirements_are_conditions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A `require` on dims that is neither proved nor refuted is a condition on the input dims, a disjunction too
    (GroupQueryAttention's batch 1 after a past)."""
    from graphlsp.oplib.catalog import CATALOG

    (tmp_path / "ops.onnxop").write_text(CACHED)
    (tmp_path / "graphlsp.toml").write_text('op-libraries = ["ops.onnxop"]\n')
    (tmp_path / "m.onnxtxt").write_text(CACHED_MODEL)
    try:
        code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", str(tmp_path / "m.onnxtxt"))
        messages = sorted(d["message"] for d in json.loads(out) if d["code"] in ("GL320", "GL321"))
        assert messages == ["com.acme.CachedAttention needs batch = 1 or past = 0 (it fails at batch=2, past=1)",
                            "com.acme.CachedAttention needs past + seq <= 4096 (it fails at past=1, seq=4096)",
                            "dim 1 of input 'q' is declared dynamic ('seq'), but com.acme.CachedAttention fixes it "
                            "to 1: seq = 1 (it fails at seq=2)"]
        code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", "--dim", "seq=2", "--dim", "past=3",
                           str(tmp_path / "m.onnxtxt"))  # fmt: skip
        assert code == 1 and [d["message"] for d in json.loads(out) if d["severity"] == "error"] == [
            "CachedAttention: one token at a time (S = 2)"]
    finally:
        CATALOG.clear_project()


TABLES = H + ("g (float[N, H] x, float[4] t4, float[3] t3) => (float[N, 4] y, float[N, 3] z) {\n"
              "  y = Add (x, t4)\n  z = Add (x, t3)\n}\n")  # fmt: skip


def test_a_witness_satisfies_the_nodes_before_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The second Add needs H in {1, 3}, the first H in {1, 4}; neither reads the other, so a runtime may run
    either first: each witness is a size where the other holds (H=3 for the first, H=4 for the second), never one
    where both fail (H=5, where a runtime may stop at the other)."""
    p = tmp_path / "tables.onnxtxt"
    p.write_text(TABLES)
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "json", str(p))
    found = [(d["line"], d["message"].rsplit("(it fails at ", 1)[1]) for d in json.loads(out) if d["code"] == "GL320"]
    assert found == [(3, "H=3)"), (4, "H=4)")]
