"""The graph's JSON (graphlsp/graphview), what the page and the editors draw: edge types against onnx's shape
inference, problems as `graphlsp check` reports them, the editor's hover, lines, subgraph bodies and functions as
onnx reads them; and `graphlsp graph` on the command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import onnx
import onnx.parser
import onnx.shape_inference
import pytest

from graphlsp import query
from graphlsp.analysis import Analysis
from graphlsp.graphview import file_graph
from graphlsp.infer.types import elem_name
from graphlsp.lint.config import Settings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.onnxtxt"))
REALWORLD = sorted((ROOT.parent / "shared" / "realworld").glob("*.onnx"))
CORPUS = sorted((ROOT / "corpus" / "models").glob("*.onnx"))
STATIC = re.compile(r"^[a-z0-9]+(\[(\d+(, \d+)*)?\])?$")


def graph_of(path: Path) -> dict[str, Any]:
    return file_graph(str(path), Settings())


def _onnx_static(t: onnx.TypeProto) -> str | None:
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = t.tensor_type.shape.dim
    if not all(d.HasField("dim_value") for d in dims):
        return None
    name = elem_name(t.tensor_type.elem_type)
    return name + ("" if not dims else "[" + ", ".join(str(d.dim_value) for d in dims) + "]")


@pytest.mark.parametrize("model", REALWORLD + CORPUS, ids=lambda p: p.name)
def test_static_edge_types_agree_with_onnx_shape_inference(model: Path) -> None:
    data = graph_of(model)
    if data["graph"] is None:
        pytest.skip("no graph")
    proto = onnx.load(str(model), load_external_data=False)
    try:
        inferred = onnx.shape_inference.infer_shapes(proto, strict_mode=False)
    except Exception as e:  # onnx's own inference gives up on some exporters' models
        pytest.skip(f"onnx.shape_inference fails: {e}")
    # what onnx inferred, not what the file declares (an exporter's value_info can be wrong: onnx keeps it)
    declared = {vi.name for vi in [*proto.graph.value_info, *proto.graph.output, *proto.graph.input]}
    theirs = {}
    for vi in inferred.graph.value_info:
        s = _onnx_static(vi.type)
        if s is not None and vi.name not in declared:
            theirs[vi.name] = s
    compared = 0
    for name, ours in data["graph"]["types"].items():
        if STATIC.match(ours) and name in theirs:
            assert ours == theirs[name], (name, ours, theirs[name])
            compared += 1
    assert compared > 0 or not theirs


def test_problems_are_those_of_check_on_their_nodes() -> None:
    broken = ROOT / "examples" / "broken.onnxtxt"
    data = graph_of(broken)
    out = subprocess.run([sys.executable, "-m", "graphlsp", "check", "--format", "json", "--no-cache", str(broken)],
                         capture_output=True, text=True)  # fmt: skip
    reported = sorted((d["code"], d["message"], d["line"] - 1) for d in json.loads(out.stdout))
    lines = (broken.read_text(encoding="utf-8")).splitlines()
    shown = []
    for n in data["graph"]["nodes"]:
        for _severity, code, message in n.get("problems", []):
            shown.append((code, message, n["line"]))
    shown += [(p["code"], p["message"], p["line"]) for p in data["problems"]]
    # every problem once, and one on a node is on that node's line
    assert sorted(shown) == reported
    for code, _, line in shown:
        assert 0 <= line < len(lines), code
    assert any(n.get("problems") for n in data["graph"]["nodes"])


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_lines_and_hovers_of_text_models(example: Path) -> None:
    data = graph_of(example)
    text = example.read_text(encoding="utf-8")
    lines = text.splitlines()
    a = Analysis(text)
    g = a.model.graph
    assert g is not None
    for n, node in zip(data["graph"]["nodes"], g.nodes, strict=True):
        assert node.op_type in lines[n["line"]]
        span = node.op_span
        assert span is not None
        editor = query.hover(a, span[0])  # what the editor shows on the op
        assert editor is not None and data["hovers"][n["hover"]] == editor[0]


def test_fold_hints_of_check_sit_on_marked_nodes() -> None:
    """Each GL401 hint `graphlsp check` gives is on a node marked as folding to a constant, each GL402 on one
    marked as a foldable Reshape target (the page draws both dashed, tagged `const` or `shape`)."""
    kinds = {"GL401": "constant", "GL402": "reshape-target"}
    seen = 0
    for model in [*EXAMPLES, *REALWORLD, *CORPUS]:
        data = graph_of(model)
        if data["graph"] is None:
            continue
        nodes = data["graph"]["nodes"]
        assert {n["fold"] for n in nodes if "fold" in n} <= set(kinds.values())
        for n in nodes:
            for _, code, _ in n.get("problems", []):
                if code in kinds:
                    assert n.get("fold") == kinds[code], (model.name, n["name"], code)
                    seen += 1
    assert seen > 0


def test_if_bodies_as_onnx_reads_them() -> None:
    model = ROOT.parent / "shared" / "realworld" / "silero_vad_16k_op15.onnx"
    if not model.exists():
        pytest.skip("../shared/realworld is not here")
    data = graph_of(model)
    proto = onnx.load(str(model), load_external_data=False)
    found = 0
    for n, p in zip(data["graph"]["nodes"], proto.graph.node, strict=True):
        graphs = [a.g for a in p.attribute if a.type == onnx.AttributeProto.GRAPH]
        bodies = n.get("bodies", [])
        assert [b[0] for b in bodies] == [a.name for a in p.attribute if a.type == onnx.AttributeProto.GRAPH]
        for (_, body), sub in zip(bodies, graphs, strict=True):
            assert [x["op"] for x in body["nodes"]] == [x.op_type for x in sub.node]
            found += 1
    assert found >= 2


def test_function_calls_open_the_function() -> None:
    example = ROOT / "examples" / "local_function.onnxtxt"
    data = graph_of(example)
    proto = onnx.parser.parse_model(example.read_text(encoding="utf-8"))
    funcs = {f"{f.domain}:{f.name}": [n.op_type for n in f.node] for f in proto.functions}
    calls = [n["call"] for n in data["graph"]["nodes"] if "call" in n]
    assert sorted(set(calls)) == sorted(funcs)
    for key, ops in funcs.items():
        assert [n["op"] for n in data["functions"][key]["nodes"]] == ops


def test_cli(tmp_path: Path) -> None:
    mlp = ROOT / "examples" / "mlp.onnxtxt"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "graphlsp", "graph", *args], capture_output=True, text=True,
                              cwd=tmp_path)  # fmt: skip

    r = run(str(mlp))  # default: MODEL.graph.html in the current folder
    assert r.returncode == 0 and "wrote mlp.graph.html" in r.stderr
    html = (tmp_path / "mlp.graph.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=""", html)  # nothing fetched: all inlined
    r = run(str(mlp), "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout) == graph_of(mlp)
    r = run(str(mlp), "-o", "-")
    assert r.returncode == 0 and r.stdout == html  # the CSP's nonce is a hash of the page: the same page again
    r = run(str(tmp_path / "missing.onnx"))
    assert r.returncode == 2 and "missing.onnx" in r.stderr
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07\xff\xff not a model")
    r = run(str(garbage), "--format", "json")
    data = json.loads(r.stdout)
    assert r.returncode == 0 and data["graph"] is None and data["problems"][0]["code"] == "GL106"
