"""The bodies of a model: every subgraph of every node (If branches, Loop and Scan bodies, nested ones), where it
sits, and a copy of the model whose subgraphs carry unique names (tags) so that each body run can be told apart."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import onnx

GRAPH, GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS


@dataclass
class Body:
    tag: str  # the unique name the evaluated copy gives this GraphProto
    path: tuple[tuple[int, str, int], ...]  # (node index, attribute, index in the attribute's list) from main
    label: str  # main/If_3.then_branch/Loop_0.body
    outputs: list[str]  # the node outputs of this body (no nested bodies' values)


def bodies(graph: onnx.GraphProto, path: tuple = (), label: str = "main") -> Iterator[tuple[Body, onnx.GraphProto]]:
    """Every subgraph of every node, depth first, with where it sits."""
    for i, node in enumerate(graph.node):
        for a in node.attribute:
            gs = [a.g] if a.type == GRAPH else list(a.graphs) if a.type == GRAPHS else []
            for k, g in enumerate(gs):
                p = (*path, (i, a.name, k))
                name = node.name or f"{node.op_type}_{i}"
                lab = f"{label}/{name}.{a.name}" + (f"[{k}]" if a.type == GRAPHS else "")
                outs = list(dict.fromkeys(o for n in g.node for o in n.output if o))
                yield Body(f"__body_{len(p)}_{'_'.join(f'{x}-{y}-{z}' for x, y, z in p)}", p, lab, outs), g
                yield from bodies(g, p, lab)


def subgraph_at(graph: onnx.GraphProto, path: tuple) -> onnx.GraphProto:
    for i, attr, k in path:
        a = next(a for a in graph.node[i].attribute if a.name == attr)
        graph = a.g if a.type == GRAPH else a.graphs[k]
    return graph


def load_model(path: str) -> onnx.ModelProto:
    if path.endswith(".onnx"):
        return onnx.load(path)
    from onnx import parser

    with open(path, encoding="utf-8") as f:
        return parser.parse_model(f.read())


def tagged_copy(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, Body]]:
    tagged = onnx.ModelProto()
    tagged.CopyFrom(model)
    table = {}
    for body, _ in list(bodies(model.graph)):
        subgraph_at(tagged.graph, body.path).name = body.tag
        table[body.tag] = body
    return tagged, table
