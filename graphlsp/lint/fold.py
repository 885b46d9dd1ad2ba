"""The fold rewrite, as text edits (seed 004's ConstantFold): `graphlsp fold` and the editor's quick fix.

Each maximal constant subgraph becomes one Constant node per value still used, written where the node that
computed it stood (so the order stays topological) and keeping its label; the folded nodes whose values nothing
else reads go, and so do the nodes that only fed them (Shape -> Gather -> Unsqueeze plumbing, Constants). Every
other byte of the file (comments, layout, order) is left as it was.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from graphlsp.graph.core import Graph, Node, Value
from graphlsp.runner.tensors import constant_node_text
from graphlsp.syntax.positions import line_end_at, line_start_at

if TYPE_CHECKING:
    from onnx import ModelProto, NodeProto

    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.syntax.document import SyntaxDocument

Edit = tuple[int, int, str]


class FoldResult:
    __slots__ = ("edits", "folded", "constants", "removed")

    edits: list[Edit]
    folded: int  # nodes whose values became constants
    constants: int  # Constant nodes written
    removed: int  # nodes that went without a replacement (unused folds and what only fed folds)

    def __init__(self, edits: list[Edit] | None = None, folded: int = 0, constants: int = 0, removed: int = 0) -> None:
        self.edits = [] if edits is None else edits
        self.folded = folded
        self.constants = constants
        self.removed = removed

    def __repr__(self) -> str:
        return (
            f"FoldResult(edits={self.edits!r}, folded={self.folded!r}, constants={self.constants!r}, "
            f"removed={self.removed!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.edits, self.folded, self.constants, self.removed)
        theirs = (other.edits, other.folded, other.constants, other.removed)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


def _layout(a: Analysis | ModelAnalysis, only: set[Node] | None = None,
            ) -> tuple[dict[Node, list[tuple[Value, Any]]], list[Node], int]:  # fmt: skip
    """What the fold does to the main graph: per folded node the values to write as Constants (those read
    elsewhere), the nodes that go without a replacement, and how many nodes fold."""
    plan = a.fold_plan()
    graph = a.model.graph
    if graph is None:
        return {}, [], 0
    folds = {n: f for n, f in plan.folds.items() if only is None or n in only}
    gone: set[Node] = set(folds)
    keep: dict[Node, list[tuple[Value, Any]]] = {}
    for node, f in folds.items():
        keep[node] = [(v, x) for v, x in f.values.items() if v.graph_outputs or _read_outside(graph, v, gone)]
    removed = [n for n in folds if not keep[n]]
    for node in reversed(graph.topological_order()):  # consumers first: what only fed folds goes too
        if node not in gone and _only_feeds(graph, node, gone):
            gone.add(node)
            removed.append(node)
    return keep, removed, len(folds)


def fold_edits(a: Analysis, only: set[Node] | None = None) -> FoldResult:
    """The edits that fold every fold of the analysis (or those in `only`, e.g. one component)."""
    result = FoldResult()
    keep, removed, folded = _layout(a, only)
    text = a.doc.text
    for node, values in keep.items():
        if not values:
            continue
        assert node.span is not None  # a text model's node
        s, e = node.span
        lines = []
        label = node.name
        for i, (v, x) in enumerate(values):
            written = constant_node_text(v.name, x, label if i == 0 else None)
            if written is None:
                return FoldResult()  # the plan only folds writable values; never leave a half-done rewrite
            lines.append(written)
        line_start = line_start_at(text, s)
        indent = text[line_start:s] if not text[line_start:s].strip() else " "
        result.edits.append((s, e, ("\n" + indent).join(lines)))
        result.constants += len(values)
    for node in removed:
        result.edits.append(_deletion(text, node))
    result.folded = folded
    result.removed = len(removed)
    return result


def fold_binary(path: str, cap: int) -> tuple[bytes, FoldResult, bool]:
    """`graphlsp fold` of a binary model file: the folded model's bytes, what folded, and whether it still reads
    external data files (the output must then stay beside them). Raises OSError, and protobuf's
    DecodeError for a file that is not a model."""

    from onnx import ModelProto

    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.external import has_external
    from graphlsp.binary.read import read_model
    from graphlsp.files import read_regular

    model, _ = read_model(path)
    proto = ModelProto()
    proto.ParseFromString(read_regular(path))
    result = fold_proto(ModelAnalysis(model, [], cap), proto)
    # what the output still reads from external data files (in any tensor: initializers, Constant values of
    # torch's convert_attribute=True, subgraphs, functions) ties it to the input's folder
    return proto.SerializeToString(), result, has_external(proto)


def fold_proto(a: ModelAnalysis, proto: ModelProto) -> FoldResult:
    """The same fold on a binary model's ModelProto, in place: each folded node that is read elsewhere becomes
    Constant nodes at its position (keeping its name), the rest go; every other message stays as it was."""
    from onnx import helper, numpy_helper

    result = FoldResult()
    keep, removed, folded = _layout(a)
    graph = a.model.graph
    if graph is None or not folded:
        return result
    gone = {n.index for n in removed}
    writes: dict[int, list[NodeProto]] = {}
    for node, values in keep.items():
        if not values:
            continue
        out = []
        for i, (v, x) in enumerate(values):
            try:
                tensor = numpy_helper.from_array(x if x.flags.c_contiguous else x.copy())
            except Exception:
                return FoldResult()  # never leave a half-done rewrite
            name = node.name if i == 0 and node.name is not None else f"{v.name}_folded"
            out.append(helper.make_node("Constant", [], [v.name], name=name, value=tensor))
        writes[node.index] = out
        result.constants += len(out)
    nodes = list(proto.graph.node)
    kept: list[NodeProto] = []
    for i, n in enumerate(nodes):
        if i in writes:
            kept.extend(writes[i])
        elif i not in gone:
            kept.append(n)
    del proto.graph.node[:]
    proto.graph.node.extend(kept)
    result.folded = folded
    result.removed = len(removed)
    return result


def _read_outside(graph: Graph, v: Value, gone: set[Node]) -> bool:
    return any(graph.top_node(c) not in gone for c, _ in v.consumers)


def _only_feeds(graph: Graph, node: Node, gone: set[Node]) -> bool:
    """Whether every reader of the node's outputs goes (and at least one does): the node only fed the folds."""
    fed = False
    for v in node.outputs:
        if v is None:
            continue
        if v.graph_outputs:
            return False
        for c, _ in v.consumers:
            if graph.top_node(c) not in gone:
                return False
            fed = True
    return fed


def _deletion(text: str, node: Node) -> Edit:
    """The node's statement; its whole line(s) when nothing else is on them (a trailing comment goes with it)."""
    assert node.span is not None  # a text model's node
    s, e = node.span
    line_start = line_start_at(text, s)
    line_end, next_line = line_end_at(text, e)
    after = text[e:line_end].strip()
    if not text[line_start:s].strip() and (not after or after.startswith("#")):
        return line_start, next_line, ""
    return s, e, ""


def apply(text: str, edits: list[Edit]) -> str:
    """The text with the edits made (each a span of the original text and what replaces it; spans do not overlap),
    in one pass: a copy of the whole text per edit was a twentieth of gpt_L24's fold."""
    pieces: list[str] = []
    at = 0
    for s, e, new in sorted(edits, key=lambda x: (x[0], x[1])):
        if s < at:
            raise ValueError(f"edits overlap at offset {s}")
        pieces += (text[at:s], new)
        at = e
    pieces.append(text[at:])
    return "".join(pieces)


class FoldRun:
    __slots__ = ("text", "result", "seconds")

    text: str
    result: FoldResult
    seconds: float  # analysis, plan and rewrite

    def __init__(self, text: str, result: FoldResult, seconds: float) -> None:
        self.text = text
        self.result = result
        self.seconds = seconds

    def __repr__(self) -> str:
        return f"FoldRun(text={self.text!r}, result={self.result!r}, seconds={self.seconds!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = (self.text, self.result, self.seconds)
        theirs = (other.text, other.result, other.seconds)  # type: ignore[attr-defined]
        return mine == theirs

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value


def fold_text(text: str | SyntaxDocument, size_cap: int | None = None) -> FoldRun:
    """Fold a whole file (its text, or its document when the caller has parsed it already): analyse, plan,
    rewrite."""
    from graphlsp.analysis import Analysis
    from graphlsp.runner.runner import DEFAULT_CAP

    t0 = time.perf_counter()
    a = Analysis(text, size_cap if size_cap is not None else DEFAULT_CAP)
    result = fold_edits(a)
    folded = apply(a.doc.text, result.edits)
    return FoldRun(folded, result, time.perf_counter() - t0)


def non_constant_nodes(text: str) -> int:
    """How many nodes of the main graph are not Constants (what onnxruntime's optimizer leaves is counted so)."""
    from graphlsp.syntax.document import SyntaxDocument

    graph = SyntaxDocument(text).model.graph
    return sum(1 for n in graph.nodes if n.op.op_type != "Constant") if graph is not None else 0
