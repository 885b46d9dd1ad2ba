"""One document's analysis kept current across edits: syntax, graph, shape inference, and their findings.

An edit goes through the incremental reparse. When the statements it replaced keep their structure (same op,
same input and output names, no subgraphs), the graph nodes are patched in place and the ShapeRefiner re-infers
only the changed cone; otherwise the graph is rebuilt and inferred again. Findings are anchored to the statement
(piece) they were found in, so statements that merely moved keep correct positions without being re-checked.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING

from graphlsp.graph.core import Model, Node
from graphlsp.graph.findings import Finding
from graphlsp.infer.refiner import ShapeRefiner
from graphlsp.infer.sizes import InputSizes
from graphlsp.lazymodule import lazy_module
from graphlsp.runner import DEFAULT_CAP, Runner
from graphlsp.runner.fold import FoldPlan

if TYPE_CHECKING:
    from graphlsp.syntax import tree as t
    from graphlsp.syntax.document import Piece, ReparseReport, SyntaxDocument
else:
    t = lazy_module("graphlsp.syntax.tree", globals(), "t")  # read when a text is analysed


FindingRow = tuple[int, int, str, str, str, list[tuple[str, int, int]]]  # start, end, code, message, severity, related


class _Anchored:
    """A finding with its ranges relative to the piece of text they are in, so that it moves with that piece."""

    __slots__ = ("finding", "piece", "start", "end", "related")

    finding: Finding
    piece: Piece | None
    start: int  # local to the piece (absolute when piece is None)
    end: int
    related: list[tuple[str, Piece | None, int, int]]

    def __init__(
        self,
        finding: Finding,
        piece: Piece | None,
        start: int,
        end: int,
        related: list[tuple[str, Piece | None, int, int]],
    ) -> None:
        self.finding = finding
        self.piece = piece
        self.start = start
        self.end = end
        self.related = related

    def __repr__(self) -> str:
        return (
            f"_Anchored(finding={self.finding!r}, piece={self.piece!r}, start={self.start!r}, end={self.end!r}, "
            f"related={self.related!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not _Anchored:
            return NotImplemented
        mine = (self.finding, self.piece, self.start, self.end, self.related)
        theirs = (other.finding, other.piece, other.start, other.end, other.related)
        return mine == theirs


class EditReport:
    """What an edit cost: the reparse, whether the graph was patched or rebuilt, and the nodes re-inferred."""

    __slots__ = ("reparse", "graph", "inferred", "nodes")

    reparse: ReparseReport
    graph: str  # "patched" or "rebuilt"
    inferred: int  # nodes re-inferred
    nodes: list[Node]

    def __init__(
        self,
        reparse: ReparseReport,
        graph: str,
        inferred: int,
        nodes: list[Node] | None = None,
    ) -> None:
        self.reparse = reparse
        self.graph = graph
        self.inferred = inferred
        self.nodes = [] if nodes is None else nodes

    def __repr__(self) -> str:
        return (
            f"EditReport(reparse={self.reparse!r}, graph={self.graph!r}, inferred={self.inferred!r}, "
            f"nodes={self.nodes!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not EditReport:
            return NotImplemented
        mine = (self.reparse, self.graph, self.inferred, self.nodes)
        theirs = (other.reparse, other.graph, other.inferred, other.nodes)
        return mine == theirs


def _same_structure(a: t.Node, b: t.Node) -> bool:
    def names(xs: list[t.Name | None]) -> list[str | None]:
        return [x.value if x is not None else None for x in xs]

    def has_graph(n: t.Node) -> bool:
        return any(isinstance(x.value, (t.GraphValue, t.ListValue)) and _graphs_in(x.value) for x in n.attributes)

    return (
        (a.op.domain, a.op.op_type, a.op.overload) == (b.op.domain, b.op.op_type, b.op.overload)
        and names(a.outputs) == names(b.outputs)
        and names(a.inputs) == names(b.inputs)
        and (a.label.value if a.label else None) == (b.label.value if b.label else None)
        and not has_graph(a)
        and not has_graph(b)
    )


def _graphs_in(v: t.AttrValue | None) -> bool:
    if isinstance(v, t.GraphValue):
        return True
    return isinstance(v, t.ListValue) and any(isinstance(x, t.GraphValue) for x in v.items)


class ModelAnalysis:
    """The analysis of a model without text (a binary): its IR, shape inference, values and fold plan."""

    doc: SyntaxDocument | None = None

    def __init__(self, model: Model, findings: list[Finding], fold_size_cap: int = DEFAULT_CAP,
                 sizes: InputSizes | None = None) -> None:  # fmt: skip
        self.model = model
        self.sizes = sizes or InputSizes()
        self.fold_size_cap = fold_size_cap
        self._load_findings = findings
        self.cache: dict[str, object] = {}
        self.runner = Runner(model, fold_size_cap)
        self.refiner = self.runner.refiner = ShapeRefiner(model, self.runner, sizes)
        self._fold: FoldPlan | None = None
        self.refiner.run()

    def findings(self) -> list[Finding]:
        from graphlsp.infer.contracts import condition_findings
        from graphlsp.infer.declared import grouped_annotations

        out = [*self._load_findings, *self.refiner.findings(), *condition_findings(self.refiner),
               *self.fold_plan().findings()]
        out.sort(key=lambda f: (_node_key(f.node), f.code))
        return grouped_annotations(out, self.model)  # a binary's wrong value_info: one finding, with its fix

    def fold_plan(self) -> FoldPlan:
        if self._fold is None:
            self._fold = FoldPlan.of(self)
        return self._fold


def _node_key(node: Node | None) -> tuple[int, ...]:
    """Graph-level findings first, then by node position (outer node first for subgraph nodes)."""
    path: list[int] = []
    while node is not None:
        path.append(node.index)
        node = node.graph.owner
    return (len(path) > 0, *reversed(path))


class Analysis:
    """One text document's analysis, kept current across edits."""

    def __init__(self, text: str | SyntaxDocument, fold_size_cap: int = DEFAULT_CAP,
                 adopt: Callable[[Model], None] | None = None, sizes: InputSizes | None = None) -> None:  # fmt: skip
        """`adopt` runs on each model the text builds, before inference (a view of a binary model gives the
        model the binary's tensors, whose data the view does not print)."""
        from graphlsp.syntax.document import SyntaxDocument

        self._adopt = adopt
        self.sizes = sizes or InputSizes()  # input sizes bound by the user (`--dim`): inference runs at those sizes
        self.doc = text if isinstance(text, SyntaxDocument) else SyntaxDocument(text)
        self.fold_size_cap = fold_size_cap  # bytes: the largest value the runner builds (`fold-size-cap`)
        self.model: Model
        self.refiner: ShapeRefiner
        self.runner: Runner
        self._structural: list[_Anchored] = []
        self._structural_pieces: set[Piece | None] = set()
        self.cache: dict[str, object] = {}  # indexes built by the layers above; emptied by every edit
        self._node_by_piece: dict[Piece, Node] = {}
        self._quiet_clean: set[Node] = set()
        self._fold: FoldPlan | None = None  # kept across edits that keep the graph; see fold_plan
        self._fold_dirty: list[Node] = []
        self._rebuild()

    def _rebuild(self) -> int:
        from graphlsp.syntax.lower import build_model

        self.model, findings = build_model(self.doc)
        if self._adopt is not None:
            self._adopt(self.model)
        self._structural = [self._anchor(f) for f in findings]
        self._structural_pieces = {a.piece for a in self._structural} | {
            p for a in self._structural for _, p, _, _ in a.related
        }
        self._node_by_piece = {}
        # nodes whose statement broke (a syntax error it still parses around, same node) while the node had no
        # structural finding: mended with the same structure, it has none again (no other statement changed shape)
        self._quiet_clean = set()
        if self.model.graph is not None:
            for node in self.model.graph.nodes:
                self._node_by_piece[node.origin.anchor] = node
        self.runner = Runner(self.model, self.fold_size_cap)
        self.refiner = self.runner.refiner = ShapeRefiner(self.model, self.runner, self.sizes)
        self._fold = None
        return self.refiner.run().inferred

    # ---- edits
    def apply_edit(self, start: int, end: int, new: str) -> EditReport:
        self.cache.clear()
        report = self.doc.apply_edit(start, end, new)
        changed = self._patch(report) if report.mode == "incremental" else None
        if changed is None:
            return EditReport(report, "rebuilt", self._rebuild())
        rerun = self.runner.rerun(self.refiner, changed)  # the refiner's rerun, and the values computed from them
        if self.refiner.stale_unions:  # symbol equalities cannot be unlearned: infer afresh (graph kept)
            self.runner.clear()
            self.refiner = self.runner.refiner = ShapeRefiner(self.model, self.runner, self.sizes)
            self._fold = None
            return EditReport(report, "patched", self.refiner.run().inferred)
        self._fold_dirty += [*changed, *rerun.nodes, *self.runner.moved]
        return EditReport(report, "patched", rerun.inferred, rerun.nodes)

    def _patch(self, report: ReparseReport) -> list[Node] | None:
        """Swap the new statements into the graph nodes they replace; None when the structure changed."""
        old, new = report.old_pieces, report.new_pieces
        if len(old) != len(new) or not old:
            return None
        replaced = set(old)
        for piece in old:  # a finding elsewhere that points into them would keep a stale position
            if piece in self._structural_pieces:
                return None
            if any(n.origin.anchor not in replaced for n in self.refiner.anchored.get(piece, ())):
                return None
        from graphlsp.syntax.lower import TextName, TextNode, attributes

        pairs = []
        for o, n in zip(old, new, strict=True):
            node = self._node_by_piece.get(o)
            if node is None or not isinstance(n.value, t.Node) or not _same_structure(o.value, n.value):
                return None
            if o.failed and not n.failed and node not in self._quiet_clean:
                return None  # mended: the statement's structural findings, quiet while it was broken, are not known
            pairs.append((node, n))
        for node, piece in pairs:
            old_piece = node.origin.anchor
            if piece.failed and not old_piece.failed:
                self._quiet_clean.add(node)  # it had no structural finding (none pointed into its statement)
            elif old_piece.failed and not piece.failed:
                self._quiet_clean.discard(node)
            syntax: t.Node = piece.value
            del self._node_by_piece[node.origin.anchor]
            node.origin = TextNode(piece, syntax)
            node.attributes = attributes(syntax)
            node.generation += 1
            self._node_by_piece[piece] = node
            for value, name in zip(node.outputs, syntax.outputs, strict=False):
                if value is not None and value.producer is node and name is not None:
                    value.origin = TextName(piece, name)
        return [node for node, _ in pairs]

    # ---- findings
    def _anchor(self, f: Finding) -> _Anchored:
        piece = self._piece_at(f.start)
        o = piece.origin if piece is not None else 0
        related = []
        for message, s, e in f.related:
            rp = self._piece_at(s)
            ro = rp.origin if rp is not None else 0
            related.append((message, rp, s - ro, e - ro))
        return _Anchored(f, piece, f.start - o, f.end - o, related)

    def _piece_at(self, offset: int) -> Piece | None:
        pieces = self.doc.pieces
        i = bisect_right(pieces, offset, key=lambda p: p.abs_start) - 1
        if 0 <= i < len(pieces) and pieces[i].abs_start <= offset <= pieces[i].abs_end:
            return pieces[i]
        return None

    def findings(self, fold: bool = True) -> list[Finding]:
        """Structural and shape findings with offsets into the current text (`fold`: with the fold plan's)."""
        out = []
        for a in self._structural:
            o = a.piece.origin if a.piece is not None else 0
            f = a.finding
            related = [(m, s + (p.origin if p else 0), e + (p.origin if p else 0)) for m, p, s, e in a.related]
            out.append(Finding(f.code, f.message, a.start + o, a.end + o, f.severity, related, f.kind))
        out.extend(self.refiner.findings())
        from graphlsp.infer.contracts import condition_findings  # (a fold needs no findings: imported here)

        out.extend(condition_findings(self.refiner))
        if fold:
            out.extend(self.fold_plan().findings())
        out.sort(key=lambda f: (f.start, f.code))
        return out

    def finding_rows(self, hints: bool = True) -> list[FindingRow]:
        """`findings` as (start, end, code, message, severity, related) rows, in the same order: what a
        diagnostic shows, without a Finding object per fold hint (the editor reads these at every edit).
        `hints`: with the fold plan's hints (`fold_hints`); its GL403 errors are always in."""
        rows: list[FindingRow] = [(f.start, f.end, f.code, f.message, f.severity, f.related) for f in self.findings(
            fold=False)]  # fmt: skip
        plan = self.fold_plan()
        for node, code, message, severity in plan.hints() if hints else plan.error_hints():
            s, e = node.op_span or (-1, -1)
            rows.append((s, e, code, message, severity, []))
        rows.sort(key=lambda r: (r[0], r[2]))
        return rows

    def fold_plan(self) -> FoldPlan:
        """What folds into constants (GL4xx hints and the fold rewrite), brought up to date with the edits."""
        if self._fold is None:
            self._fold = FoldPlan.of(self)
        elif self._fold_dirty:
            self._fold.update(self, self._fold_dirty)
        self._fold_dirty = []
        return self._fold


# Exporter-shaped: computed Reshape targets, attention and MLP ops, a Constant and a fold.
_WARM_UP_MODEL = """<ir_version: 8, opset_import: ["" : 17]>
warm_up (float[batch, seq, 16] x, float[16, 48] w, float[48] b, int64[batch, seq, 1] ids)
    => (float[batch, seq, 16] y, float[batch, 2, seq, 8] pv) {
    s = Shape (x)
    i0 = Constant <value: tensor = int64 {0}> ()
    i1 = Constant <value: tensor = int64[1] {1}> ()
    z1 = Constant <value: tensor = int64[1] {0}> ()
    d0 = Gather <axis: int = 0> (s, i0)
    u0 = Unsqueeze (d0, z1)
    heads = Constant <value: tensor = int64[2] {2, 8}> ()
    minus = Constant <value: tensor = int64[1] {-1}> ()
    target = Concat <axis: int = 0> (u0, minus, heads)
    qkv = MatMul (x, w)
    qkv_b = Add (qkv, b)
    parts = Constant <value: tensor = int64[3] {16, 16, 16}> ()
    q, k, v = Split <axis: int = -1> (qkv_b, parts)
    q4 = Reshape <allowzero: int = 0> (q, target)
    k4 = Reshape (k, target)
    qt = Transpose <perm: ints = [0, 2, 1, 3]> (q4)
    kt = Transpose <perm: ints = [0, 2, 3, 1]> (k4)
    scores = MatMul (qt, kt)
    scale = Constant <value: tensor = float {0.35}> ()
    scaled = Mul (scores, scale)
    p = Softmax <axis: int = -1> (scaled)
    mask = Cast <to: int = 9> (ids)
    fmask = Cast <to: int = 1> (mask)
    e0 = Where (mask, x, v)
    e = Mul (e0, fmask)
    mean = ReduceMean <axes: ints = [-1], keepdims: int = 1> (e)
    c = Sub (e, mean)
    two = Constant <value: tensor = float {2.0}> ()
    sq = Pow (c, two)
    var = ReduceMean <axes: ints = [-1]> (sq)
    r = Sqrt (var)
    n = Div (c, r)
    g = Erf (n)
    t = Tanh (g)
    z = ConstantOfShape <value: tensor = float[1] {0.0}> (s)
    three = Constant <value: tensor = int64[1] {3}> ()
    st = Slice (s, i1, three)
    zz = Expand (z, st)
    pv = MatMul (p, qt)
    y = Add (t, zz)
}
"""


def warm_up() -> None:
    """Pay once-per-process costs before the first document: the grammar's parse table, the op registry, onnx's
    schemas and the modules the shape rules and the runner import on first use (a language server does this while
    it starts, so that opening a file costs only that file), and lark's own parser, which describes a syntax
    error (a text that parses does not need it: the first half-typed line would pay for it)."""
    from graphlsp.syntax.grammar import get_parser

    analysis = Analysis(_WARM_UP_MODEL)
    analysis.findings()
    get_parser().lark  # noqa: B018  # made when first read
