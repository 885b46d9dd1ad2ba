"""Acceptance 3 of issue 38: a node's Python origin never opens a file outside the workspace and the `path-map`
folders (an audit hook records every open while the findings, their related information and the hovers are made),
not through a link that leaves the workspace either; and the parts of provenance on hand-made models."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from graphlsp.binary.read import read_model
from graphlsp.lint.config import ConfigError, Settings, load_settings
from graphlsp.lint.runner import lint_binary
from graphlsp.provenance.describe import hover
from graphlsp.provenance.describe import related as python_related
from graphlsp.provenance.locate import Sources
from graphlsp.provenance.trace import of_node, parse_stack_trace, parse_torchscript_doc, torchscript_scopes

_OPENED: list[str] | None = None


def _hook(event: str, args: tuple) -> None:
    if event == "open" and _OPENED is not None and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.path.realpath(os.fsdecode(args[0])))


sys.addaudithook(_hook)  # (a hook stays for the process: it records only inside `opened`)


@pytest.fixture
def opened() -> Iterator[list[str]]:
    global _OPENED
    _OPENED = []
    try:
        yield _OPENED
    finally:
        _OPENED = None


def _trace(*frames: tuple[str, int, str]) -> str:
    return "\n".join(f'  File "{f}", line {n}, in forward\n    {code}' for f, n, code in frames)


def _model(path: Path, traces: list[str]) -> Path:
    """A model of Reshape nodes pinning dim N to 1 (GL320 on each), node i with traces[i] as its stack trace."""
    nodes = []
    for i, trace in enumerate(traces):
        n = helper.make_node("Reshape", ["x", "shape"], [f"y{i}"], name=f"r{i}")
        n.metadata_props.add(key="pkg.torch.onnx.stack_trace", value=trace)
        n.metadata_props.add(key="pkg.torch.onnx.name_scopes", value=f"['', 'enc', 'enc.layers.{i}', 'view']")
        n.metadata_props.add(key="pkg.torch.onnx.class_hierarchy", value="['M', 'pkg.Enc', 'pkg.Layer', 'aten.view']")
        nodes.append(n)
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(traces))],
        [helper.make_tensor("shape", TensorProto.INT64, [2], [1, 8])])  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """A workspace with its own modelling file, a mapped folder outside it, a file outside both, and a link in the
    workspace that points outside."""
    ws, outside, mapped = tmp_path / "ws", tmp_path / "outside", tmp_path / "ws" / "src"
    for d in (ws, outside, mapped):
        d.mkdir()
    (ws / "model.py").write_text("import torch\n\ndef f(x):\n    return x.reshape(1, 8)\n")
    (mapped / "net.py").write_text("# net\n\n\ndef g(x):\n    return x.view(1, 8)\n")
    (outside / "secret.py").write_text("x = 1\nSECRET = 'do not print'\n")
    (ws / "link.py").symlink_to(outside / "secret.py")
    return {"ws": ws, "outside": outside, "mapped": mapped}


def test_no_file_outside_the_workspace_and_maps_is_opened(tree: dict[str, Path], opened: list[str]) -> None:
    ws, outside = tree["ws"], tree["outside"]
    model = _model(ws / "m.onnx", [
        _trace((str(ws / "model.py"), 4, "")),  # in the workspace: read for its line (the trace has none)
        _trace(("/build/src/net.py", 5, "")),  # mapped to ws/src
        _trace((str(outside / "secret.py"), 2, "")),  # outside: never opened
        _trace((str(ws / "link.py"), 2, "")),  # a link that leaves the workspace: never opened
    ])  # fmt: skip
    settings = Settings(root=str(ws), path_map={"/build/src": str(tree["mapped"])})
    diags = lint_binary(str(model), settings)
    m, _ = read_model(model)
    sources = Sources([str(ws)], settings.path_map)
    hovers = [hover(n, sources) for n in m.graph.nodes]
    trusted = os.path.realpath(ws) + os.sep
    # every file of the test's folders opened lies inside the workspace (imports open graphlsp's own modules)
    here = [p for p in opened if p.startswith(os.path.realpath(ws.parent) + os.sep)]
    assert here and all(p.startswith(trusted) for p in here), here
    assert os.path.realpath(outside / "secret.py") not in opened
    assert "do not print" not in "".join(hovers) + repr([d.related for d in diags])
    assert "`return x.reshape(1, 8)`" in hovers[0] and "`return x.view(1, 8)`" in hovers[1]
    (gl321,) = [d for d in diags if d.code == "GL321"]  # r0 pins N (and the nodes after it too)
    assert gl321.related[0]["file"] == str(ws / "model.py")
    related = {n.name: python_related(n, sources) for n in m.graph.nodes}
    assert related["r0"][0]["file"] == str(ws / "model.py") and related["r1"][0]["file"] == str(tree["mapped"] / "net.py")
    assert related["r2"][0]["file"] is None and related["r3"][0]["file"] is None  # named, not located


def test_hover_names_module_stack_and_a_stale_file(tree: dict[str, Path]) -> None:
    ws = tree["ws"]
    model = _model(ws / "m.onnx", [_trace(
        ("/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 1773, "return self._call_impl(*args)"),
        (str(ws / "model.py"), 4, "return x.reshape(2, 8)"),  # the file now says reshape(1, 8)
        ("/venv/lib/python3.11/site-packages/torch/_tensor.py", 10, "return f(x)"),
    )])  # fmt: skip
    (node,) = read_model(model)[0].graph.nodes
    text = hover(node, Sources([str(ws)]))
    assert text.startswith("made by `model.py:4` `return x.reshape(2, 8)` (the file has changed since the export)")
    assert "module `enc.layers.0` (`Layer`)" in text
    assert text.index("`_tensor.py:10`") < text.index("`model.py:4` in `forward` ◀") < text.index("`module.py:1773`")


def test_a_relative_frame_path_is_looked_for_in_the_workspace(tree: dict[str, Path]) -> None:
    sources = Sources([str(tree["ws"])])
    place = sources.place("model.py")
    assert place is not None and place.kind == "workspace" and place.path == os.path.realpath(tree["ws"] / "model.py")
    assert sources.place("../outside/secret.py") is None and sources.place("link.py") is None


def test_path_map_setting(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\npath-map = { "/build/src" = "src" }\n')
    assert load_settings(tmp_path).path_map == {"/build/src": os.path.realpath(tmp_path / "src")}
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\npath-map = { "/build/src" = "../elsewhere" }\n')
    with pytest.raises(ConfigError, match="leaves the project's folder"):
        load_settings(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.graphlsp]\npath-map = ["src"]\n')
    with pytest.raises(ConfigError, match="path-map must be a table"):
        load_settings(tmp_path)


def test_path_map_of_the_editor_and_of_a_users_config(tmp_path: Path) -> None:
    """The editor's `pathMap` is the workspace's (VS Code reads it from the repository's .vscode/settings.json): it
    maps into the project only, as the project's config does; a user's own `--config` may map anywhere."""
    from graphlsp.lint.config import from_editor

    elsewhere, project = tmp_path / "elsewhere", tmp_path / "project"
    (project / "src").mkdir(parents=True)
    elsewhere.mkdir()
    base = Settings(root=str(project))
    assert from_editor(base, {"pathMap": {"/build": "src"}}).path_map == {"/build": os.path.realpath(project / "src")}
    with pytest.raises(ConfigError, match="leaves the project's folder"):
        from_editor(base, {"pathMap": {"/build": str(elsewhere)}})
    (project / "graphlsp.toml").write_text(f'path-map = {{ "/build" = "{elsewhere}" }}\n')
    assert load_settings(project, user=True).path_map == {"/build": os.path.realpath(elsewhere)}
    with pytest.raises(ConfigError, match="path-map must be a table"):
        from_editor(base, {"pathMap": ["/build"]})
    with pytest.raises(ConfigError, match="is not a folder"):
        from_editor(base, {"pathMap": {"/build": "missing"}})


def test_parsers() -> None:
    frames = parse_stack_trace('File "/a/m.py", line 3, in forward\n    y = f(x)\n  File "/b/n.py", line 9, in f\n'
                               "    return g(\n")  # fmt: skip
    assert [(f.file, f.line, f.function, f.code) for f in frames] == [("/a/m.py", 3, "forward", "y = f(x)"),
                                                                      ("/b/n.py", 9, "f", "return g(")]  # fmt: skip
    frames = parse_torchscript_doc("/v/site-packages/torch/nn/modules/linear.py(134): forward\n/a/m.py(7): forward\n")
    assert [(f.file, f.line) for f in frames] == [("/a/m.py", 7), ("/v/site-packages/torch/nn/modules/linear.py", 134)]
    assert [p for p, _ in torchscript_scopes("/features/features.0/Conv")] == ["", "features", "features.0"]
    assert [p for p, _ in torchscript_scopes("/encoder/layer.0/attention/MatMul")] == [
        "", "encoder", "encoder.layer.0", "encoder.layer.0.attention"]
    assert torchscript_scopes("/Conv") == [("", "")]  # the root module


def test_a_node_without_metadata_has_no_source(tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])  # fmt: skip
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    (node,) = read_model(path)[0].graph.nodes
    assert of_node(node) is None and node.origin.metadata == ()


def test_an_installed_package_is_located_never_read(tmp_path: Path, opened: list[str]) -> None:
    """A frame in another machine's site-packages maps to the same file of the running Python's environment (here
    numpy's): its location is given (go to definition, related information), its lines are never read (the
    code shown is the trace's)."""
    import numpy

    real = Path(numpy.__file__).resolve()
    rest = real.relative_to(real.parents[1])  # numpy/__init__.py
    frame = f"/build/venv/lib/python3.11/site-packages/{rest.as_posix()}"
    ws = tmp_path / "ws"
    ws.mkdir()
    model = _model(ws / "m.onnx", [_trace((frame, 3, "the trace's own code line"))])
    (node,) = read_model(model)[0].graph.nodes
    sources = Sources([str(ws)])
    place = sources.place(frame)
    assert place is not None and place.kind == "environment" and not place.readable
    assert Path(place.path).resolve() == real
    text = hover(node, sources)
    assert text.startswith("made by `__init__.py:3` `the trace's own code line`")
    (d,) = [d for d in lint_binary(str(model), Settings(root=str(ws))) if d.code in ("GL320", "GL321")]
    assert Path(d.related[0]["file"]).resolve() == real and d.related[0]["line"] == 3
    assert str(real) not in opened and os.path.realpath(place.path) not in opened


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["pkg.torch.onnx.stack_trace", "pkg.torch.onnx.name_scopes",
                                           "pkg.torch.onnx.class_hierarchy", "doc_string", "namespace"]),
                          st.text(max_size=300)), max_size=5), st.text(max_size=60))  # fmt: skip
def test_any_metadata_reads_without_error(meta: list[tuple[str, str]], name: str) -> None:
    """Metadata is a model's bytes: whatever it holds, a node's source is read without an exception, and the
    hover and the module chain are made of it."""
    from graphlsp.graph.core import ExportedNode, Graph, Node
    from graphlsp.provenance.modules import nest, scope_parts

    node = Node(Graph("g", "model"), 0, ExportedNode(tuple(meta)), "", "Relu", name=name)
    src = of_node(node)
    if src is not None:
        assert src.chosen is None or 0 <= src.chosen < len(src.frames)
        scope_parts(src.modules)
        nest([src.modules, None, src.modules])
    hover(node, None)
