"""External data: one resolver (`binary.external`) for the reader, the runner and the writers. A model never
makes graphlsp open a file outside its folder (a location relative to the working directory, `..`, absolute, a
symlink out), nor show that file's bytes in what it prints or writes; inside the folder, data is read as asked."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from graphlsp.cli import main
from graphlsp.view import render

SECRET = np.array([123456789, 987654321], dtype=np.int64)  # what the file outside the folder holds
DOUBLED = [str(x) for x in SECRET * 2]  # what folding Add(c, c) would show

_OPENED: list[str] = []
_WATCH = [False]


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _WATCH[0] and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        _OPENED.append(os.fsdecode(args[0]))  # type: ignore[arg-type]


sys.addaudithook(_audit)


def _external(location: str) -> TensorProto:
    t = helper.make_tensor("c", TensorProto.INT64, [2], [0, 0])
    t.ClearField("int64_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", "16")):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def _model(location: str, where: str) -> onnx.ModelProto:
    """y = Add(c, c) with c a Constant whose value is external: at the top, in an If branch, in a function."""
    const = helper.make_node("Constant", [], ["c"], value=_external(location))
    add = helper.make_node("Add", ["c", "c"], ["y"])
    out = helper.make_tensor_value_info("y", TensorProto.INT64, [2])
    functions = []
    if where == "top":
        nodes = [const, add]
    elif where == "if":
        branch = helper.make_graph([const, add], "b", [], [out])
        cond = helper.make_node("Constant", [], ["k"], value=helper.make_tensor("k", TensorProto.BOOL, [], [True]))
        nodes = [cond, helper.make_node("If", ["k"], ["y"], then_branch=branch, else_branch=branch)]
    else:
        fn = helper.make_function("local", "twice", [], ["y"], [const, add], [helper.make_opsetid("", 17)])
        functions = [fn]
        nodes = [helper.make_node("twice", [], ["y"], domain="local")]
    graph = helper.make_graph(nodes, "g", [], [out])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
                             functions=functions)  # fmt: skip


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/secret.bin and tmp/outside/secret.bin hold SECRET; the model's folder is tmp/m, with a link to
    tmp/outside; the working directory is tmp (where onnx's loaders would look)."""
    (tmp_path / "secret.bin").write_bytes(SECRET.tobytes())
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.bin").write_bytes(SECRET.tobytes())
    (tmp_path / "m").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "m" / "link")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    main(list(args))
    out, err = capsys.readouterr()
    return out + err


@pytest.mark.parametrize("cwd", ["parent", "folder"])
@pytest.mark.parametrize("where", ["top", "if", "function"])
@pytest.mark.parametrize("location", ["secret.bin", "../secret.bin", "ABS", "link/secret.bin"])
def test_external_data_outside_the_folder_is_never_opened_nor_shown(
    layout: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, location: str, where: str,
    cwd: str,
) -> None:
    if cwd == "folder":  # as a server started in the model's folder: `link/secret.bin` is there
        monkeypatch.chdir(layout / "m")
    if location == "ABS":
        location = str(layout / "secret.bin")
    path = layout / "m" / "model.onnx"
    onnx.save(_model(location, where), path)
    folded = layout / "m" / "folded.onnx"
    _OPENED.clear()
    _WATCH[0] = True
    try:
        check = _run(capsys, "check", "--no-cache", "-j", "1", "--format", "json", str(path))
        shapes = _run(capsys, "shapes", str(path))
        _run(capsys, "fold", str(path), "-o", str(folded))
        text = _run(capsys, "convert", str(path), "-")
        view = render(str(path))  # what the language server shows: the view, its hints and hovers' values
        shown_in_view = view.text + "".join(f.message for f in view.all_findings())
    finally:
        _WATCH[0] = False
    assert "GL107" in {d["code"] for d in json.loads(check.split("\n\n")[0] or "[]")} or "GL107" in check
    for shown in (check, shapes, text, shown_in_view):
        assert not any(x in shown for x in DOUBLED), shown
    assert not any(x.encode() in folded.read_bytes() for x in DOUBLED)
    assert (SECRET * 2).tobytes() not in folded.read_bytes()
    inside = os.path.realpath(layout / "m")
    outside = [p for p in _OPENED if "secret" in p and not os.path.realpath(p).startswith(inside + os.sep)]
    assert outside == []
    assert not any("secret" in p for p in _OPENED)  # none of the secret files, wherever
    check_fold = onnx.load(folded, load_external_data=False)
    assert not any(n.op_type == "Constant" and n.output[0] == "y" for n in check_fold.graph.node)


@pytest.mark.parametrize("where", ["top", "if", "function"])
def test_external_data_inside_the_folder_is_read_through_the_checked_path(
    layout: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    (layout / "m" / "data.bin").write_bytes(SECRET.tobytes())
    path = layout / "m" / "model.onnx"
    onnx.save(_model("data.bin", where), path)
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model

    model, findings = read_model(path)
    a = ModelAnalysis(model, findings)
    assert [f.code for f in a.findings() if f.code == "GL107"] == []
    assert model.graph is not None
    np.testing.assert_array_equal(a.runner.value_of(model.graph.outputs[0], a.refiner), SECRET * 2)
    if where == "if":
        return  # fold keeps an If (the value is known above)
    folded = layout / "m" / "folded.onnx"
    _run(capsys, "fold", str(path), "-o", str(folded))
    out = onnx.load(folded, load_external_data=False)
    y = next(n for n in out.graph.node if n.output[0] == "y")
    assert y.op_type == "Constant"
    np.testing.assert_array_equal(onnx.numpy_helper.to_array(y.attribute[0].t), SECRET * 2)


def test_a_fifo_or_a_folder_as_external_data_is_a_finding_and_never_opened(
    layout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(layout / "m" / "pipe.bin")
    path = layout / "m" / "model.onnx"
    onnx.save(_model("pipe.bin", "top"), path)
    _OPENED.clear()
    _WATCH[0] = True
    try:
        out = _run(capsys, "check", "--no-cache", "-j", "1", str(path))
    finally:
        _WATCH[0] = False
    assert "GL107" in out and "not a regular file" in out
    assert not any("pipe.bin" in p for p in _OPENED)


def test_onnx_reference_is_never_handed_external_data() -> None:
    from graphlsp.runner.reference import ExternalDataRefused, run_node

    node = helper.make_node("Constant", [], ["c"], value=_external("secret.bin"))
    with pytest.raises(ExternalDataRefused):
        run_node(node, [], 17, {"": 17})


def test_external_data_longer_than_its_tensor_is_not_read(layout: Path) -> None:
    """A length past what the tensor's dims can hold would have the reader copy it all (a 2-element tensor
    naming gigabytes of a file in its folder): refused, the value unknown."""
    from graphlsp.binary.read import read_model

    (layout / "m" / "big.bin").write_bytes(bytes(1 << 20))
    t = _external("big.bin")
    next(e for e in t.external_data if e.key == "length").value = str(1 << 20)
    m = _model("data.bin", "top")
    m.graph.node[0].attribute[0].t.CopyFrom(t)
    path = layout / "m" / "model.onnx"
    onnx.save(m, path)
    model, _ = read_model(path)
    assert model.graph is not None
    value = model.graph.nodes[0].attributes["value"].value
    with pytest.raises(ValueError, match="exceeds"):
        value.numpy()  # type: ignore[union-attr]
