"""Output details of `check`, `shapes`, `rule` and the command line, as a user meets them on real models: each place
of a group named once, initializers called initializers, conditions on one dim stated as their intersection (judged
by onnxruntime), a folder without models, `.ONNX`, an empty `.onnx`, the command's own usage, the nearest names."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from graphlsp.cli import main
from graphlsp.infer.conditions import Solution
from graphlsp.lint.diagnostics import Diagnostic
from graphlsp.lint.output import format_text, summary
from tests.conftest import ROOT, shared

CNN = ROOT / "corpus" / "models" / "ortsess_cnn.onnx"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([*args])
    out, err = capsys.readouterr()
    return code, out, err


def _finding(node: int, name: str, output: str, dim: str) -> Diagnostic:
    message = f"'{output}' is declared with dim {dim} = a, but Split gives b: at a=2 that is 2, not 1"
    return Diagnostic("m.onnx", None, None, None, None, "warning", "GL315", "declared-shape-mismatch", message,
                      node=name, node_index=node, op="Split", detail=f"output {output}")  # fmt: skip


def test_a_group_names_each_place_once() -> None:
    """Five findings alike on three nodes (two outputs of node 136, one more of the headline's node 12): the note
    names node 136 once with the outputs that differ, and the headline's node only as `here`."""
    found = [_finding(12, "s0", "a0", "1"), _finding(12, "s0", "a1", "1"), _finding(136, "s1", "b0", "1"),
             _finding(136, "s1", "b1", "1"), _finding(140, "s2", "c0", "1")]  # fmt: skip
    (line,) = format_text(found).splitlines()
    note = line[line.index("(and 4 more like it: ") :]
    assert note == ('(and 4 more like it: output a1 here; node 136 "s1" (Split): output b0, output b1; '
                    'node 140 "s2" (Split))'), note  # fmt: skip
    assert summary(found, 1) == "Found 5 warnings in 1 file."


def test_a_group_on_a_real_model_names_each_place_once(capsys: pytest.CaptureFixture[str]) -> None:
    """PP-OCRv4's detector: GL320 on three Adds, each on both spatial dims."""
    det = shared("realworld", "ch_PP-OCRv4_det_infer.onnx")
    code, out, _ = run(capsys, "check", "--no-cache", "--format", "concise", str(det))
    grouped = [x for x in out.splitlines() if "more like it" in x]
    assert grouped, out
    for line in grouped:
        places = re.findall(r'node \d+ "[^"]*"', line)
        assert len(places) == len(set(places)), line  # the headline's node and each other once


def test_shapes_calls_initializers_initializers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "shapes", str(CNN))
    rows = {line.split("\t")[1].split()[0]: line.split("\t")[0] for line in out.splitlines() if "\t" in line}
    assert rows["pixel_values"] == "input"
    assert rows["fc.weight"] == "initializer" and rows["features.7.bias"] == "initializer"
    code, out, _ = run(capsys, "shapes", "--format", "json", str(CNN))
    kinds = {v["name"]: v["kind"] for v in json.loads(out)["values"]}
    assert kinds["fc.weight"] == "initializer" and kinds["pixel_values"] == "input"


def test_conditions_on_one_dim_are_stated_as_their_intersection(capsys: pytest.CaptureFixture[str]) -> None:
    """Three Adds require `% 32 in 0, 17-31`, `0, 25-31`, `0, 29-31` (or small sizes) of one dim: `shapes` states
    the one condition they make together, and onnxruntime runs exactly the heights it allows."""
    ort = pytest.importorskip("onnxruntime")
    det = shared("realworld", "ch_PP-OCRv4_det_infer.onnx")
    code, out, _ = run(capsys, "shapes", str(det))
    stated = [x for x in out.splitlines() if x.startswith("  x dim 2 ")]
    assert stated == ["  x dim 2 (p2o.DynamicDimension.1): p2o.DynamicDimension.1 % 32 must be 0 or 29-31, or "
                      "p2o.DynamicDimension.1 must be at most 4 (Add 'p2o.Add.248', Add 'p2o.Add.250', "
                      "Add 'p2o.Add.252')"], out  # fmt: skip
    allowed = Solution(32, frozenset({0, 29, 30, 31}), frozenset({1, 2, 3, 4}))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(str(det), options, providers=["CPUExecutionProvider"])
    for height in [*range(1, 9), *range(24, 34), 56, 60, 61, 64]:
        try:
            session.run(None, {"x": np.zeros((1, 3, height, 32), np.float32)})
            ran = True
        except Exception:
            ran = False
        assert ran == allowed.contains(height), height


@pytest.mark.parametrize(("a", "b"), [
    (Solution(32, frozenset({0, *range(17, 32)}), frozenset(range(1, 17))),
     Solution(32, frozenset({0, *range(25, 32)}), frozenset(range(1, 9)))),
    (Solution(6, frozenset({0, 3}), frozenset({1}), start=5), Solution(4, frozenset({0}), frozenset({2, 7}))),
    (Solution(0, frozenset(), frozenset({1, 2, 8})), Solution(4, frozenset({0}), frozenset())),
    (Solution(0, frozenset(), frozenset({1, 2})), Solution(0, frozenset(), frozenset({2, 3}))),
])  # fmt: skip
def test_intersection_is_the_sizes_both_allow(a: Solution, b: Solution) -> None:
    both = a.intersection(b)
    assert both is not None
    assert [s for s in range(1, 400) if both.contains(s)] == [s for s in range(1, 400) if a.contains(s)
                                                              and b.contains(s)]  # fmt: skip


def test_a_folder_without_models(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("no models here\n")
    code, out, err = run(capsys, "check", "--no-cache", str(tmp_path))
    assert code == 0 and "All checks passed" not in out
    assert f"graphlsp: warning: no model file found in {tmp_path}" in err
    code, out, err = run(capsys, "check", "--no-cache", "--format", "json", str(tmp_path))
    assert json.loads(out) == [] and "no model file found" in err


def test_upper_case_onnx_is_a_binary_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copyfile(CNN, tmp_path / "CNN.ONNX")
    code, out, err = run(capsys, "check", "--no-cache", str(tmp_path))
    assert code == 0 and "All checks passed (1 file)." in out, out + err
    code, out, _ = run(capsys, "shapes", str(tmp_path / "CNN.ONNX"))
    assert code == 0 and out.startswith("input\tpixel_values")
    code, out, _ = run(capsys, "cost", str(tmp_path / "CNN.ONNX"))
    assert code == 0 and "FLOPs" in out


def test_an_empty_onnx_file_says_it_is_empty(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "empty.onnx").write_bytes(b"")
    code, out, _ = run(capsys, "check", "--no-cache", str(tmp_path / "empty.onnx"))
    assert code == 1 and "GL106 cannot load binary ONNX model: the file is empty (0 bytes)" in out
    assert "opset" not in out
    code, _, err = run(capsys, "shapes", str(tmp_path / "empty.onnx"))
    assert "the file is empty" in err


def test_a_commands_mistake_shows_that_commands_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["check", "--formt", "json"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith("usage: graphlsp check ")
    assert "{check,rules" not in err and "unrecognized arguments: --formt (did you mean --format?)" in err


def test_rule_and_config_keys_suggest_the_nearest(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "rule", "GL7001")
    assert code == 2 and "unknown rule code or name 'GL7001' (did you mean GL701" in err
    (tmp_path / "graphlsp.toml").write_text("dim = { batch = 2 }\ninput_shapes = {}\n")
    shutil.copyfile(CNN, tmp_path / "cnn.onnx")
    code, _, err = run(capsys, "check", "--no-cache", str(tmp_path))
    assert code == 2 and "unknown settings 'dim' (did you mean 'dims'?), 'input_shapes' (did you mean " \
                         "'input-shapes'?)" in err, err  # fmt: skip


def test_the_inputs_hover_states_the_intersection_once() -> None:
    """The editor's hover on the detector's input (its binary view): one line per dim, every node named."""
    from graphlsp.query import hover
    from graphlsp.view import render

    view = render(str(shared("realworld", "ch_PP-OCRv4_det_infer.onnx")))
    at = re.search(r"\] x[,)]", view.text)
    assert at is not None
    found = hover(view.analysis, at.start() + 2)
    assert found is not None
    lines = [x for x in found[0].splitlines() if x.startswith("- dim 2 ")]
    assert len(lines) == 1 and "must be 0 or 29-31, or p2o.DynamicDimension.1 must be at most 4 (`Add`, line" in lines[0]
    assert lines[0].count("`Add`, line") == 3, lines
