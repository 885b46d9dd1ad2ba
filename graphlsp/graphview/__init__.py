"""The graph picture's data: one model as JSON for the page (`graphlsp graph`) and the editors (`graphlsp/graph`).

Pure analysis: nodes with their op, name, line, attributes, problems, whether they fold to a constant, the hover
text the editor shows on their op, their subgraph bodies and the local function they call; every value's inferred
type, which labels the edges. Layout and grouping are the page's (graphlsp/graphview/assets), done by elkjs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from graphlsp.graph.core import Attr, Graph, Model, Node, NodeOrigin, TypeSpec
from graphlsp.graph.tensor import Tensor
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.infer.types import elem_name, type_str
from graphlsp.lint.config import Settings
from graphlsp.lint.diagnostics import Diagnostic
from graphlsp.query import op_hover
from graphlsp.runner.fold import FoldPlan

FORMAT = "graphlsp-graph/1"
LIST_SHOWN = 16  # attribute list elements written out; the rest are counted
TEXT_SHOWN = 120  # characters of an attribute's text


def function_key(domain: str, name: str, overload: str = "") -> str:
    return f"{domain}:{name}" + (f":{overload}" if overload else "")


def _attr_text(a: Attr) -> str:
    v = a.value
    if isinstance(v, Tensor):
        return f"tensor {elem_name(v.dtype)}[{', '.join(map(str, v.shape))}]"
    if isinstance(v, Graph):
        return f"graph {v.name} ({len(v.nodes)} nodes)"
    if isinstance(v, TypeSpec):
        return f"type {v.kind}"
    if isinstance(v, list):
        if v and isinstance(v[0], Graph):
            return f"{len(v)} graphs"
        shown = ", ".join(_scalar(x) for x in v[:LIST_SHOWN])
        more = f", ... ({len(v)} in all)" if len(v) > LIST_SHOWN else ""
        return f"[{shown}{more}]"
    return _scalar(v)[:TEXT_SHOWN]


def _scalar(x: Any) -> str:
    if isinstance(x, bytes):
        x = x.decode("utf-8", errors="replace")
    if isinstance(x, str):
        return '"' + (x if len(x) <= TEXT_SHOWN else x[:TEXT_SHOWN] + "...") + '"'
    if isinstance(x, Tensor):
        return f"tensor {elem_name(x.dtype)}[{', '.join(map(str, x.shape))}]"
    if x is None:
        return "?"
    return str(x)


class _Builder:
    def __init__(self, model: Model, refiner: ShapeRefiner, fold: FoldPlan | None,
                 diagnostics: Iterable[Diagnostic], origin_of: Callable[[Node], NodeOrigin | None] | None = None
                 ) -> None:  # fmt: skip
        self.model = model
        self.origin_of = origin_of
        self.refiner = refiner
        self.folds = fold.folds if fold is not None else {}
        self.hovers: list[str] = []
        self._hover_index: dict[tuple[str, str, int | None, bool], int] = {}
        self.loose: list[dict[str, Any]] = []  # problems on no node
        self.on_node: dict[tuple[str, int], list[list[str]]] = {}
        by_line: dict[int, Node] | None = None
        for d in diagnostics:
            item = [d.severity, d.code, d.message]
            key = (d.graph, d.node_index) if d.graph is not None and d.node_index is not None else None
            if key is None and d.line is not None and model.source.text:  # a text's finding on a node's line
                if by_line is None:
                    by_line = _nodes_by_line(model)
                node = by_line.get(d.line - 1)
                key = (node.graph.path, node.index) if node is not None else None
            if key is not None:
                self.on_node.setdefault(key, []).append(item)  # type: ignore[arg-type]
            else:
                self.loose.append({"severity": d.severity, "code": d.code, "message": d.message,
                                   "line": d.line - 1 if d.line is not None else None})  # fmt: skip
        self.line_of: Callable[[int], int | None] = model.source.line_of
        self.flops_share, self.cost = _flops_shares(model, refiner)

    def hover(self, node: Node) -> int:
        key = (node.domain, node.op_type, node.version, node.function is not None)
        i = self._hover_index.get(key)
        if i is None:
            try:
                text = op_hover(node)
            except Exception as e:  # a schema we cannot describe: say so, keep the picture
                text = f"**{node.op_type}**: no description ({type(e).__name__})"
            i = self._hover_index[key] = len(self.hovers)
            self.hovers.append(text)
        return i

    def graph(self, g: Graph) -> dict[str, Any]:
        types: dict[str, str] = {}
        type_of = self.refiner.type_of

        def typed(v: Any) -> str:
            if v is None:
                return ""
            name: str = v.name
            if name not in types:
                t = type_of(v)
                if t is None and v.type is not None:  # declared but not inferred (a function body's input)
                    types[name] = _declared(v.type)
                else:
                    types[name] = type_str(t)
            return name

        path = g.path
        nodes = []
        for n in g.nodes:
            span = n.span
            item: dict[str, Any] = {
                "op": n.op_type if not n.domain else f"{n.domain}.{n.op_type}",
                "name": n.name or "",
                "line": self.line_of(span[0]) if span is not None else None,
                "inputs": [typed(v) for v in n.inputs],
                "outputs": [typed(v) for v in n.outputs],
                "hover": self.hover(n),
            }
            implicit = [typed(v) for v in n.implicit.values()]
            if implicit:
                item["implicit"] = implicit
            if n.attributes:
                item["attrs"] = [[a.name, _attr_text(a)] for a in n.attributes.values() if a.kind != "graph"
                                 and a.kind != "graphs"]  # fmt: skip
            problems = self.on_node.get((path, n.index))
            if problems:
                item["problems"] = problems
            fold = self.folds.get(n)
            if fold is not None:  # "constant", or "reshape-target" (a shape only Reshape reads: 0 and -1 in it)
                item["fold"] = fold.kind
            if n.subgraphs:
                item["bodies"] = [[f"{attr}[{i}]" if len(gs) > 1 else attr, self.graph(sub)]
                                  for attr, gs in n.subgraphs.items() for i, sub in enumerate(gs)]  # fmt: skip
            if n.function is not None:
                f = n.function
                item["call"] = function_key(f.domain, f.name, f.overload)
            origin = n.origin if n.origin.metadata or self.origin_of is None else self.origin_of(n)
            if origin is not None and origin.metadata:  # the page groups by the modules that made the node
                scope = _scope(n, origin)
                if scope is not None:
                    item["scope"] = scope
            share = self.flops_share.get(n)
            if share:
                item["flops"] = share  # the node's share of the model's FLOPs (graphlsp/cost)
            nodes.append(item)
        return {
            "name": g.name,
            "path": path,
            "inputs": [typed(v) for v in g.inputs if not v.is_initializer],
            "outputs": [typed(v) for v in g.outputs],
            "initializers": [typed(v) for v in g.initializers.values()],
            "nodes": nodes,
            "types": types,
        }


def _scope(node: Node, origin: NodeOrigin) -> list[str] | None:
    from graphlsp.provenance.modules import scope_parts
    from graphlsp.provenance.trace import modules_of

    modules = modules_of(node, origin)
    return scope_parts(modules) if modules else None


def _nodes_by_line(model: Model) -> dict[int, Node]:
    """The node written on each line (the first of a line that holds several)."""
    out: dict[int, Node] = {}
    for g in model.graphs():
        for n in g.nodes:
            span = n.span
            if span is not None:
                line = model.source.line_of(span[0])
                if line is not None:
                    out.setdefault(line, n)
    return out


def _declared(t: TypeSpec) -> str:
    if t.kind == "tensor":
        dims = "" if t.dims is None else "[" + ", ".join("?" if d is None else str(d) for d in t.dims) + "]"
        return elem_name(t.elem) + dims
    return t.kind


def graph_json(model: Model, refiner: ShapeRefiner, fold: FoldPlan | None, diagnostics: Iterable[Diagnostic],
               title: str = "", origin_of: Callable[[Node], NodeOrigin | None] | None = None
               ) -> dict[str, Any]:  # fmt: skip
    """The model's graph for the picture. `diagnostics` are the file's, as `graphlsp check` reports them (each is
    placed on its node by graph path and node index; the others are listed for the whole model). `origin_of`: a
    view's node -> the binary node's origin (graph.core.ExportedNode), whose modules group the nodes."""
    b = _Builder(model, refiner, fold, diagnostics, origin_of)
    main = b.graph(model.graph) if model.graph is not None else None
    functions = {}
    for f in model.functions.values():
        if f.body is not None:
            functions[function_key(f.domain, f.name, f.overload)] = b.graph(f.body)
    return {
        "format": FORMAT,
        "title": title,
        "graph": main,
        "functions": functions,
        "hovers": b.hovers,
        "problems": b.loose,
        "lineBased": bool(model.source.text),
        **({"cost": b.cost} if b.cost else {}),
    }


def _flops_shares(model: Model, refiner: ShapeRefiner) -> tuple[dict[Node, float], dict[str, Any]]:
    """Each main-graph node's share of the model's FLOPs, at the sizes inference ran with and every dim left
    symbolic taken as report.SORT_SIZE (what the legend says); and the totals the legend shows."""
    from graphlsp.cost.formula import evaluate
    from graphlsp.cost.model import model_cost
    from graphlsp.cost.report import SORT_SIZE

    try:
        cost = model_cost(model, refiner)
    except Exception:  # the picture stands without its colours
        return {}, {}
    env = {s: SORT_SIZE for s in cost.symbols}
    total = cost.flops.value(env)
    if not total:
        return {}, {}
    shares = {}
    for n in cost.nodes:
        v = evaluate(n.flops, env)
        if v:
            shares[n.node] = v / total
    unbound = ", ".join(cost.symbols)
    return shares, {"flops": str(cost.flops), "at": f"{unbound} = {SORT_SIZE}" if unbound else ""}


def file_graph(path: str, settings: Settings) -> dict[str, Any]:
    """A model file's graph with the problems `graphlsp check` reports on it. Raises OSError."""
    from pathlib import Path

    from graphlsp.lint.runner import lint_text, load_failure
    from graphlsp.source import is_binary, read_source

    title = Path(path).name
    if is_binary(path):
        from graphlsp.analysis import ModelAnalysis
        from graphlsp.binary.read import read_model
        from graphlsp.lint.diagnostics import collect_binary
        from graphlsp.lint.rules import rule
        from graphlsp.lint.runner import finalize

        try:
            model, found = read_model(path)
        except OSError:
            raise
        except Exception as e:  # protobuf's DecodeError, a malformed message
            r = rule("GL106")
            d = Diagnostic(path, None, None, None, None, r.severity, r.code, r.name, load_failure(e))
            return empty(title, [d])
        analysis = ModelAnalysis(model, found, settings.fold_size_cap)
        diags = finalize(collect_binary(analysis, path), "", path, settings)
        return graph_json(model, analysis.refiner, analysis.fold_plan(), diags, title)
    source = read_source(path)
    a, diags = lint_text(source.text, path, settings, source.error)
    return graph_json(a.model, a.refiner, a.fold_plan(), diags, title)


def empty(title: str, diagnostics: Iterable[Diagnostic]) -> dict[str, Any]:
    """The graph of a model that could not be read: none, and why."""
    loose = [{"severity": d.severity, "code": d.code, "message": d.message,
              "line": d.line - 1 if d.line is not None else None} for d in diagnostics]  # fmt: skip
    return {"format": FORMAT, "title": title, "graph": None, "functions": {}, "hovers": [], "problems": loose,
            "lineBased": False}
