"""A binary model's hints: the command line counts the hidden ones without making their messages (value previews)
or excerpts, shows the same text as before when asked, and the results cache keeps them for a later
`--show-hints`; the deferred diagnostics and findings behave as the plain ones."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import graphlsp.syntax.printer
from graphlsp.analysis import ModelAnalysis
from graphlsp.binary.read import read_model
from graphlsp.cli import main
from graphlsp.graph.findings import Finding
from graphlsp.lint import runner
from graphlsp.lint.config import Settings
from graphlsp.lint.diagnostics import FIELDS, Diagnostic
from graphlsp.runner.fold import FoldPlan


def folding_model() -> onnx.ModelProto:
    """Two nodes computing constants read by a node that stays (two GL401 hints), and a MatMul of mismatched
    inner dims (an error, shown with its excerpt)."""
    c1 = numpy_helper.from_array(np.array([1, 2, 3], dtype=np.float32))
    c2 = numpy_helper.from_array(np.array([4, 5, 6], dtype=np.float32))
    nodes = [
        helper.make_node("Constant", [], ["c1"], value=c1),
        helper.make_node("Constant", [], ["c2"], value=c2),
        helper.make_node("Add", ["c1", "c2"], ["k"], name="sum"),
        helper.make_node("Sub", ["c2", "c1"], ["d"], name="diff"),
        helper.make_node("Mul", ["x", "k"], ["y0"]),
        helper.make_node("Mul", ["y0", "d"], ["y"]),
        helper.make_node("MatMul", ["a", "b"], ["m"], name="mm"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, 5])]  # fmt: skip
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
               helper.make_tensor_value_info("m", TensorProto.FLOAT, None)]  # fmt: skip
    graph = helper.make_graph(nodes, "main", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "m.onnx"
    onnx.save(folding_model(), path)
    return path


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    main(["check", *args])
    return capsys.readouterr().out


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the hint messages and the excerpts made."""
    made = {"messages": 0, "excerpts": 0}
    message, node_line = FoldPlan.hint_message, graphlsp.syntax.printer.node_line

    def counted_message(plan: FoldPlan, fold: object) -> str:
        made["messages"] += 1
        return message(plan, fold)  # type: ignore[arg-type]

    def counted_line(*args: object, **kwargs: object) -> str:
        made["excerpts"] += 1
        return node_line(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(FoldPlan, "hint_message", counted_message)
    monkeypatch.setattr(graphlsp.syntax.printer, "node_line", counted_line)
    return made


def _eager_hints(path: Path) -> list[str]:
    model, found = read_model(str(path))
    return [message for _, _, message in ModelAnalysis(model, found).fold_plan().fold_hints()]


def test_hidden_hints_are_counted_and_not_made(model: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    hints = _eager_hints(model)
    assert len(hints) == 2 and all("computes a constant" in h for h in hints)
    made = _counting(monkeypatch)
    out = _check(capsys, "--no-cache", "m.onnx")
    assert "GL302 MatMul: inner dimensions differ" in out and "[mm] m = MatMul (a, b)" in out
    assert "2 hints not shown: `--show-hints` shows them." in out
    assert made == {"messages": 0, "excerpts": 1}  # the error's excerpt only
    assert not any(h in out for h in hints)
    json_out = json.loads(_check(capsys, "--no-cache", "--format", "json", "m.onnx"))
    assert [d["code"] for d in json_out] and made == {"messages": 0, "excerpts": 1}  # JSON has no excerpts
    shown = _check(capsys, "--no-cache", "--show-hints", "m.onnx")
    assert made["messages"] == 2 and all(h in shown for h in hints) and "not shown" not in shown


@pytest.mark.parametrize("fmt", ["text", "json", "concise", "sarif"])
def test_cached_results_show_the_hints_a_later_run_asks_for(model: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:  # fmt: skip
    fresh = _check(capsys, "--no-cache", "--show-hints", "--format", fmt, "m.onnx")
    hidden = _check(capsys, "--format", fmt, "m.onnx")  # fills the cache without showing the hints
    assert list((model.parent / ".graphlsp_cache").glob("*.json"))

    def no_analysis(*args: object, **kwargs: object) -> None:
        raise AssertionError("analysed again: not read from the cache")

    monkeypatch.setattr(runner, "lint_binary", no_analysis)
    assert _check(capsys, "--show-hints", "--format", fmt, "m.onnx") == fresh
    assert _check(capsys, "--format", fmt, "m.onnx") == hidden


def test_deferred_diagnostics_behave_as_plain_ones(model: Path) -> None:
    diags = runner.lint_binary("m.onnx", Settings())
    plain = [Diagnostic(**{k: getattr(d, k) for k in FIELDS}) for d in diags]
    assert len(diags) == 3 and {d.code for d in diags} >= {"GL401"}
    assert diags == plain and plain == diags and [repr(d) for d in diags] == [repr(d) for d in plain]
    assert [d.to_json() for d in diags] == [d.to_json() for d in plain]
    for d, p in zip(diags, plain, strict=True):
        assert d.excerpt and d.message and d.excerpt == p.excerpt
        for again in (pickle.loads(pickle.dumps(d)), copy.copy(d), copy.deepcopy(d)):
            assert type(again) is Diagnostic and again == p
    changed = runner.lint_binary("m.onnx", Settings())[0]
    changed.message = "set"
    assert changed.message == "set" and changed != plain[0]


def test_fold_findings_are_those_of_the_hints(model: Path) -> None:
    model_ir, found = read_model(str(model))
    plan = ModelAnalysis(model_ir, found).fold_plan()
    deferred = plan.findings()  # before fold_hints: messages made when read
    eager = [Finding(f.code, m, f.start, f.end, "hint", node=n) for f, (n, _, m) in zip(deferred, plan.fold_hints(),
                                                                                       strict=True)]  # fmt: skip
    assert [f.message for f in deferred] == [m for _, _, m in plan.fold_hints()]
    assert deferred == eager and eager == deferred and plan.findings() == eager
    assert [repr(f) for f in deferred] == [repr(f) for f in eager]
    for f, e in zip(deferred, eager, strict=True):
        again = copy.copy(f)  # (pickled as this: a plain Finding)
        assert type(again) is Finding and again == e
