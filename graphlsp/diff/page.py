"""The diff as the graph page (graphlsp/graphview): the new model drawn, each node coloured by what happened to it
(added, changed, moved, renamed), the removed nodes of the old model drawn where they were (their inputs joined to
the new model's matching values), a legend, and a list of the changes to step through."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from graphlsp.diff.text import format_text
from graphlsp.graph.core import Graph, Node
from graphlsp.graphview import graph_json
from graphlsp.graphview.page import page
from graphlsp.infer.types import type_str

if TYPE_CHECKING:
    from graphlsp.diff.compare import Report
    from graphlsp.diff.load import Side

REMOVED = "(old) "  # the prefix of a removed node's outputs, which the new model does not have


@cache
def _asset(name: str) -> str:
    text = resources.files("graphlsp.diff").joinpath("assets", name).read_text(encoding="utf-8")
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def _walk(g: Graph, nodes: list[dict[str, Any]], out: dict[int, dict[str, Any]]) -> None:
    """The page's node item of each IR node (by id): the JSON lists a graph's nodes, and bodies, in IR order."""
    for n, item in zip(g.nodes, nodes, strict=False):
        out[id(n)] = item
        bodies = [sub for gs in n.subgraphs.values() for sub in gs]
        for sub, (_, body) in zip(bodies, item.get("bodies", []), strict=False):
            _walk(sub, body["nodes"], out)


def diff_data(report: Report, old: Side, new: Side) -> dict[str, Any]:
    """The graph page's data for the new model, with `diff` marks on its nodes and the removed nodes added."""
    side = new if new.analysis is not None else old
    analysis = side.analysis
    assert analysis is not None and side.model is not None
    data = graph_json(side.model, analysis.refiner, analysis.fold_plan(), side.diagnostics,
                      f"{old.name} → {new.name}")  # fmt: skip
    if data["graph"] is None or side.model.graph is None:
        return data
    items: dict[int, dict[str, Any]] = {}
    _walk(side.model.graph, data["graph"]["nodes"], items)
    main = data["graph"]["nodes"]
    index = {id(item): k for k, item in enumerate(main)}
    steps: list[dict[str, Any]] = []
    lines = format_text(report.data).splitlines()
    nodes = report.data["nodes"]
    by_place = {(r["graph"], r["index"]): r for r in nodes["added"]}
    changed = {(c["new"]["graph"], c["new"]["index"]): c for c in nodes["changed"]}
    moved = {(c["new"]["graph"], c["new"]["index"]): c for c in nodes["moved"]}
    renamed = {(c["new"]["graph"], c["new"]["index"]): c for c in nodes["renamed"]}
    for g in side.model.graphs():
        for n in g.nodes:
            item = items.get(id(n))
            if item is None:
                continue
            key = (g.path, n.index)
            kind, detail = "", ""
            if new.analysis is None:
                kind, detail = "removed", "the file was deleted"
            elif key in by_place:
                kind, detail = "added", ""
            elif key in changed:
                kind, detail = "changed", "; ".join(changed[key]["changes"])
            elif key in moved:
                kind, detail = "moved", f"from #{moved[key]['old']['index']} to #{n.index}"
            elif key in renamed:
                kind, detail = "renamed", f"was {renamed[key]['old']['name']}"
            if kind:
                item["diff"] = kind
                steps.append({"kind": kind, "label": f"{n.name or n.op_type} ({n.qualified_op})", "detail": detail,
                              "node": index.get(id(item)), "graph": g.path})  # fmt: skip
    if new.analysis is not None and old.model is not None and old.model.graph is not None:
        steps += _removed(report, old, side, data)
    order = {"removed": 0, "added": 1, "changed": 2, "moved": 3, "renamed": 4}
    steps.sort(key=lambda s: (order[s["kind"]], s["node"] if s["node"] is not None else 1 << 30))
    data["diff"] = {"old": old.name, "new": new.name, "steps": steps, "text": lines,
                    "equal": report.data["equal"]}  # fmt: skip
    return data


def _removed(report: Report, old: Side, new: Side, data: dict[str, Any]) -> list[dict[str, Any]]:
    """The old main graph's removed nodes, added to the page's main graph: their inputs are the new model's values
    where the producer or initializer was matched, else their own old names."""
    assert old.model is not None and old.model.graph is not None and old.analysis is not None
    g = old.model.graph
    match = report.matches[0] if report.matches else None
    graph = data["graph"]
    removed = [n for n in g.nodes if match is None or n not in match.nodes]
    gone = {id(n) for n in removed}
    data["hovers"].append("**removed**: this node is in the old model only")
    hover = len(data["hovers"]) - 1
    steps = []

    def value_name(v: Any) -> str:
        if v is None:
            return ""
        p = v.producer
        if p is not None and p.graph is g:
            if id(p) in gone:
                name = REMOVED + v.name
                graph["types"].setdefault(name, type_str(old.analysis.refiner.type_of(v)))  # type: ignore[union-attr]
                return name
            q = match.nodes.get(p) if match is not None else None
            out = q.outputs[v.output_index] if q is not None and v.output_index < len(q.outputs) else None
            return out.name if out is not None else REMOVED + v.name
        if match is not None:
            return match.initializers.get(v.name) or match.inputs.get(v.name) or REMOVED + v.name
        return v.name

    for n in removed:
        for v in n.outputs:
            if v is not None:
                graph["types"][REMOVED + v.name] = type_str(old.analysis.refiner.type_of(v))
        item = _ghost(n, hover, value_name)
        graph["nodes"].append(item)
        steps.append({"kind": "removed", "label": f"{n.name or n.op_type} ({n.qualified_op})", "detail": "",
                      "node": len(graph["nodes"]) - 1, "graph": g.path})  # fmt: skip
    return steps


def _ghost(n: Node, hover: int, value_name: Any) -> dict[str, Any]:
    return {"op": n.op_type if not n.domain else f"{n.domain}.{n.op_type}", "name": n.name or "", "line": None,
            "inputs": [value_name(v) for v in n.inputs],
            "outputs": [REMOVED + v.name if v is not None else "" for v in n.outputs],
            "hover": hover, "diff": "removed"}  # fmt: skip


def diff_page(report: Report, old: Side, new: Side) -> str:
    """The page: graphview's, with the diff's legend, list and colours."""
    html = page(diff_data(report, old, new))
    # the page's Content-Security-Policy runs only scripts with its nonce: the diff's script carries the same one
    found = re.search(r'<script nonce="([0-9a-f]+)">', html)
    nonce = f' nonce="{found.group(1)}"' if found else ""
    extra = f"<style>{_asset('diff.css')}</style>\n<script{nonce}>{_asset('diff.js')}</script>\n"
    at = html.rindex("</body>")
    return html[:at] + extra + html[at:]


