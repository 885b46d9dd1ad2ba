"""The graph page's data groups a dynamo export's nodes by the modules that made them (`scope`, names relative to
the enclosing module), as the exporter's name_scopes say (read here with onnx)."""

from __future__ import annotations

from pathlib import Path

import onnx

from graphlsp.graphview import file_graph
from graphlsp.lint.config import Settings

MODEL = Path(__file__).resolve().parents[2] / "corpus" / "models" / "dynamo_transformer.onnx"


def test_nodes_carry_their_module_scope() -> None:
    data = file_graph(str(MODEL), Settings())
    proto = onnx.load(str(MODEL), load_external_data=False)
    nodes = {n["name"]: n for n in data["graph"]["nodes"]}
    seen = 0
    for n in proto.graph.node:
        meta = {e.key: e.value for e in n.metadata_props}
        if "pkg.torch.onnx.name_scopes" not in meta:
            assert "scope" not in nodes[n.name]
            continue
        fqns = [s.strip(" '") for s in meta["pkg.torch.onnx.name_scopes"].strip("[]").split(",")][:-1]
        # torch's stand-in for "made outside any module" is no module
        fqns = [f for f in fqns if f and not f.startswith("_empty_nn_module_stack")]
        parts, parent = [], ""
        for f in fqns:
            parts.append(f[len(parent) + 1 :] if parent and f.startswith(parent + ".") else f)
            parent = f
        assert nodes[n.name].get("scope", []) == parts, n.name
        seen += bool(parts)
    assert seen > 20


def test_the_page_draws_the_module_groups(tmp_path: Path) -> None:
    """In headless Chromium: dynamo_llama.onnx's page (node names `node_MatMul_30`, no name scopes) groups its
    nodes by module: the groups of m/model/layers.0 and its attention are there, collapsed or drawn as frames."""
    from graphlsp.cli import main
    from tests.graphview.browser import Page, launch

    model = MODEL.parent / "dynamo_llama.onnx"
    out = tmp_path / "g.html"
    assert main(["graph", str(model), "-o", str(out)]) == 0
    for browser in launch():
        tab = Page(browser)
        try:
            status = tab.open(out)
            assert status["groups"] > 0
            ids = tab.page.evaluate(
                "() => [...document.querySelectorAll('[data-group]')].map((e) => e.dataset.group)")
            assert any(i.startswith("/m/model") for i in ids), ids
            assert tab.errors == []
        finally:
            tab.close()
