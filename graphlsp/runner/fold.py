"""What folds: seed 004's IsConstantFoldable / FindConstantFoldableNodes over the main graph.

A node folds when it is deterministic, has no subgraph, and its outputs are compile-time constants: all its
inputs are constants (Constant outputs, initializers, values folded before it), or inference already knows
every output (Shape of a static tensor, Gather of a shape's static dim). Folding must not grow the model: a
node whose outputs exceed both 1 KiB and the bytes of its constant inputs (ConstantOfShape, Expand, Tile, Range
building a weight from a small description) stays a node, and so does everything downstream of it; nothing
larger than the size cap is ever built. Inputs with a default (an initializer sharing a graph input's name) can
be overridden at run time, so they are not constants (IR < 4 excepted, as onnxruntime treats them).

Shape-only folds: a shape value with symbolic dims that only Reshape reads can still become a constant, with 0
for a dim copied from the data input (Reshape's allowzero=0 rule) and at most one -1; this is what onnxruntime's
optimizer writes as `[0, 0, 4, 16]`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from graphlsp.graph.core import Model, Node, Value
from graphlsp.graph.findings import Finding
from graphlsp.graph.order import Worklist
from graphlsp.infer import dims as d
from graphlsp.infer.types import TensorType, shape_str
from graphlsp.runner import tensors
from graphlsp.runner.runner import CACHE_LIMIT, Runner, is_random

if TYPE_CHECKING:
    from graphlsp.infer.refiner import ShapeRefiner

CONSTANT = "constant"  # GL401: the node's outputs are compile-time constants
RESHAPE_TARGET = "reshape-target"  # GL402: a shape value only Reshape reads, constant with 0 and -1
FOLDABLE, RESHAPE_FOLDABLE, EVAL_ERROR = "GL401", "GL402", "GL403"


class Analysed(Protocol):
    """What a fold plan reads of an analysis (`analysis.Analysis`, `analysis.ModelAnalysis`): the model, its
    shape inference and the runner that computes its values."""

    @property
    def model(self) -> Model: ...

    @property
    def refiner(self) -> ShapeRefiner: ...

    @property
    def runner(self) -> Runner: ...


class Fold:
    """A node that folds: its outputs' constant values (a constant) or the constant Reshape target it stands for."""

    __slots__ = ("node", "kind", "values", "detail", "_message", "_nodes")

    node: Node
    kind: str
    values: dict[Value, Any]  # each output the node produces -> its constant value
    detail: str  # GL402: the shape value it stands for
    _message: str
    _nodes: int

    def __init__(
        self,
        node: Node,
        kind: str,
        values: dict[Value, Any],
        detail: str = "",
        _message: str = "",
        _nodes: int = 0,
    ) -> None:
        self.node = node
        self.kind = kind
        self.values = values
        self.detail = detail
        self._message = _message
        self._nodes = _nodes

    def __repr__(self) -> str:
        return (
            f"Fold(node={self.node!r}, kind={self.kind!r}, values={self.values!r}, detail={self.detail!r}, "
            f"_message={self._message!r}, _nodes={self._nodes!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not Fold:
            return NotImplemented
        mine = (self.node, self.kind, self.values, self.detail, self._message, self._nodes)
        theirs = (other.node, other.kind, other.values, other.detail, other._message, other._nodes)
        return mine == theirs

    @property
    def code(self) -> str:
        return FOLDABLE if self.kind == CONSTANT else RESHAPE_FOLDABLE

    def message(self, nodes: int = 1) -> str:
        """The hint's text; `nodes` is the size of the constant subgraph that ends here."""
        if not self._message or self._nodes != nodes:
            op = self.node.op_type
            self._nodes = nodes
            if self.kind == CONSTANT:
                what = "; ".join(tensors.preview(v) for v in self.values.values())
                many = len(self.values) > 1
                also = {1: "", 2: " (with the node feeding it)"}.get(nodes, f" (with the {nodes - 1} nodes feeding it)")
                self._message = (f"{op}{also} computes {'constants' if many else 'a constant'}: {what} "
                                 f"(`graphlsp fold` makes it a Constant)")  # fmt: skip
            else:
                value = next(iter(self.values.values()))
                self._message = (f"{op} computes the Reshape target {self.detail}, which can be the constant "
                                 f"{tensors.preview(value)} (0 copies the input's dim)")  # fmt: skip
        return self._message


class FoldPlan:
    """The folds of one analysis (in topological order) and the nodes that fail on their constant inputs.

    Kept across edits: `update` re-examines the nodes an edit re-inferred and, downstream, those whose inputs
    changed constness or value, so an edit costs its cone rather than the whole graph.
    """

    def __init__(self, a: Analysed) -> None:
        self.folds: dict[Node, Fold] = {}
        self._hints: list[tuple[Node, str, str]] | None = None
        # per fold's node, its hint of the last `fold_hints` (None: no hint, not a frontier), for the nodes no update
        # changed since: an edit that changes a fold makes the list again, but looks again only at the hints it moved
        self._hint_of: dict[Node, tuple[Node, str, str] | None] = {}
        self._finder = _Finder(a, self)

    @classmethod
    def of(cls, a: Analysed) -> FoldPlan:
        plan = cls(a)
        if a.model.graph is not None:
            plan._finder.run()
        return plan

    def update(self, a: Analysed, nodes: list[Node]) -> int:
        """Re-examine after an edit that kept the graph's structure; returns how many nodes were visited."""
        self._finder.rebind(a)
        visited = self._finder.update(nodes)
        if self._finder.changed:
            self._hints = None
            for node in self._moved(self._finder.changed_nodes):
                self._hint_of.pop(node, None)
        return visited

    def _moved(self, changed: list[Node]) -> set[Node]:
        """The folds whose hint may differ after the folds of `changed` did: those nodes, the producers of what they
        read (whether a value is read outside the folds), and the folds downstream of them (their cones' sizes)."""
        out: set[Node] = set(changed)
        work = list(changed)
        for node in changed:
            for v in [*node.inputs, *node.implicit.values()]:
                if v is not None and v.producer is not None:
                    out.add(v.producer)
        while work:
            n = work.pop()
            for v in n.outputs:
                if v is None:
                    continue
                for c, _ in v.consumers:
                    top = v.graph.top_node(c) or c
                    if top not in out:
                        out.add(top)
                        if top in self.folds:
                            work.append(top)
        return out

    @property
    def errors(self) -> dict[Node, str]:
        """Nodes that fail on their constant inputs (GL403), as the runner last found them."""
        return self._finder.runner.errors

    def findings(self) -> list[Finding]:
        """A hint on each node whose constant is read by a node that stays (or is a graph output): where the
        fold writes a Constant. The nodes inside a constant subgraph show their values in hovers and inlay hints;
        a hint on each of them would bury a file like an exporter's (1,536 instead of 480 on gpt_L96).

        A hint's message (the values' previews) is made when first read: the command line shows hints only when
        asked, and counts the others."""
        out: list[Finding] = []
        if self._hints is not None:
            for node, code, message in self._hints:
                s, e = node.op_span or (-1, -1)
                out.append(Finding(code, message, s, e, "hint", node=node))
        else:
            for f in self.folds.values():
                if self.is_frontier(f.node):
                    s, e = f.node.op_span or (-1, -1)
                    out.append(_Hint(self, f, s, e))
        for node, code, message, severity in self.error_hints():
            s, e = node.op_span or (-1, -1)
            out.append(Finding(code, message, s, e, severity, node=node))
        return out

    def fold_hints(self) -> list[tuple[Node, str, str]]:
        """The hints of `findings` as (node, code, message), without their positions: the same list object for as
        long as the folds are the same (the editor reads these at every edit, and keeps what it made of them)."""
        if self._hints is None:  # which folds get a hint changes only when the folds do
            kept, made = self._hint_of, {}
            for f in self.folds.values():
                node = f.node
                if node in kept:
                    hint = kept[node]
                else:
                    hint = (node, f.code, self.hint_message(f)) if self.is_frontier(node) else None
                made[node] = hint
            self._hint_of = made
            self._hints = [h for h in made.values() if h is not None]
        return self._hints

    def hint_message(self, fold: Fold) -> str:
        """The message of a fold's hint."""
        return fold.message(self._cone_size(fold.node))

    def hints(self) -> list[tuple[Node, str, str, str]]:
        """`findings` as (node, code, message, severity), without their positions (the editor reads these at
        every edit, and the positions from the nodes)."""
        return [(node, code, message, "hint") for node, code, message in self.fold_hints()] + self.error_hints()

    def error_hints(self) -> list[tuple[Node, str, str, str]]:
        """The GL403 errors of `findings` as (node, code, message, severity)."""
        return [(node, EVAL_ERROR, f"{node.op_type}: fails on its constant inputs: {message}", "error")
                for node, message in self.errors.items()]  # fmt: skip

    def is_frontier(self, node: Node) -> bool:
        """Whether a value the node computes is read outside the folds, or is a graph output."""
        f = self.folds.get(node)
        if f is None:
            return False
        for v in f.values:
            if v.graph_outputs:
                return True
            graph = v.graph
            if any((graph.top_node(c) or c) not in self.folds for c, _ in v.consumers):
                return True
        return False

    def _cone_size(self, node: Node) -> int:
        """How many folds compute the node's values (itself included)."""
        seen = {node}
        work = [node]
        while work:
            n = work.pop()
            for v in n.inputs:
                m = v.producer if v is not None else None
                if m is not None and m in self.folds and m not in seen:
                    seen.add(m)
                    work.append(m)
        return len(seen)

    def component(self, node: Node) -> set[Node]:
        """The folds connected to `node` through the values they share (one maximal constant subgraph)."""
        seen = {node}
        work = [node]
        while work:
            n = work.pop()
            near = [v.producer for v in n.inputs if v is not None and v.producer is not None]
            for out in n.outputs:
                if out is not None:
                    near += [c for c, _ in out.consumers]
            for m in near:
                if m in self.folds and m not in seen:
                    seen.add(m)
                    work.append(m)
        return seen


class _Hint(Finding):
    """A fold hint as a Finding, its message made when first read (`FoldPlan.findings`)."""

    __slots__ = ("_plan", "_fold")

    def __init__(self, plan: FoldPlan, fold: Fold, start: int, end: int) -> None:
        super().__init__(fold.code, "", start, end, "hint", node=fold.node)
        self._plan: FoldPlan | None = plan
        self._fold = fold

    @property
    def message(self) -> str:
        plan = self._plan
        if plan is not None:
            _MESSAGE.__set__(self, plan.hint_message(self._fold))
            self._plan = None
        text: str = _MESSAGE.__get__(self, Finding)
        return text

    @message.setter
    def message(self, value: str) -> None:
        _MESSAGE.__set__(self, value)
        self._plan = None

    def __eq__(self, other: object) -> bool:  # as a Finding's: by the fields
        if not isinstance(other, Finding):
            return NotImplemented
        return _fields(self) == _fields(other)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # pickled and copied as the Finding it stands for
        return Finding, _fields(self)


_MESSAGE: Any = Finding.__dict__["message"]  # the slot a _Hint's message property reads and writes


def _fields(f: Finding) -> tuple[Any, ...]:
    """A Finding's constructor arguments."""
    return f.code, f.message, f.start, f.end, f.severity, f.related, f.kind, f.node, f.detail, f.value


class _Finder:
    def __init__(self, a: Analysed, plan: FoldPlan) -> None:
        self.plan = plan
        self.rebind(a)
        ir = a.model.ir_version
        self.old_ir = ir is not None and ir < 4
        self.opset = a.model.opset_imports.get("")  # the Constant written must exist at this version
        self.const: dict[Value, int] = {}  # value -> its bytes, for constants
        self.tainted: set[Value] = set()  # values computed from an overridable input's default
        self.changed = False  # whether the last update changed any fold
        self.changed_nodes: list[Node] = []  # the nodes whose fold it changed
        self._order: dict[Node, int] = {}

    def rebind(self, a: Analysed) -> None:
        self.a = a
        self.runner = a.runner
        self.refiner = a.refiner
        self.runner.refiner = a.refiner

    def run(self) -> None:
        graph = self.a.model.graph
        assert graph is not None
        decide = self._decide  # the first pass: nothing decided before, nothing to compare with (see _visit)
        for node in graph.topological_order():
            decide(node)
        values = self.refiner.values
        for node in graph.nodes:  # a Reshape target is a shape value: the others (most nodes) are not looked at
            for v in node.outputs:
                if v is not None and (x := values.get(v)) is not None and x.sv is not None:
                    self._reshape_target(node)
                    break

    def update(self, nodes: list[Node]) -> int:
        graph = self.a.model.graph
        if graph is None:
            return 0
        work = Worklist(graph, self._order)
        push = work.push
        for n in nodes:
            push(n)
        first = set(work.queued)
        targets: set[Node] = set()
        visited = 0
        prev: dict[Node, Fold | None] = {}  # the folds before the update, of the nodes it looked at
        while (node := work.pop()) is not None:
            visited += 1
            prev.setdefault(node, self.plan.folds.get(node))
            if self._visit(node) or node in first:
                for out in node.outputs:
                    for consumer, _ in out.consumers if out is not None else ():
                        push(consumer)
            targets.add(node)
            shape_in = node.inputs[1] if node.op_type == "Reshape" and len(node.inputs) > 1 else None
            if shape_in is not None and shape_in.producer is not None:
                targets.add(shape_in.producer)
        for node in targets:
            prev.setdefault(node, self.plan.folds.get(node))
            self._reshape_target(node)
        self.changed_nodes = [n for n, f in prev.items() if not _same_fold((f, []), (self.plan.folds.get(n), []))
                              or getattr(f, "detail", None) != getattr(self.plan.folds.get(n), "detail", None)]
        self.changed = bool(self.changed_nodes)
        return visited

    def _visit(self, node: Node) -> bool:
        """(Re)compute the node's fold; True when its outputs' constness or values changed."""
        outs = [v for v in node.outputs if v is not None]
        old = self.plan.folds.pop(node, None)  # a Reshape target is decided after the pass: not compared
        before = (old if old is not None and old.kind == CONSTANT else None, [self.const.pop(v, None) for v in outs])
        for v in outs:
            self.tainted.discard(v)
        self._decide(node)
        after = (self.plan.folds.get(node), [self.const.get(v) for v in outs])
        return not _same_fold(before, after)

    def _decide(self, node: Node) -> None:
        """The node's fold and its outputs' constness, from its inputs' (none of it decided yet)."""
        tainted = self.tainted
        hit = False
        for v in node.inputs:  # (a loop, not any() over _tainted: this runs for every node)
            if v is not None and (v in tainted or (v.kind == "input" and self._tainted(v))):
                hit = True
                break
        if hit or (node.implicit and any(self._tainted(v) for v in node.implicit.values())):
            tainted.update(v for v in node.outputs if v is not None)
        elif node.op_type == "Constant" and node.domain == "":
            self._constant(node)
        else:
            self._consider(node)

    def _tainted(self, v: Value) -> bool:
        if v in self.tainted:
            return True
        return v.kind == "input" and v.is_initializer and not self.old_ir and v.graph.kind == "model"

    def _is_const(self, v: Value | None) -> bool:
        if v is None:
            return True
        if v.kind == "initializer" or (v.kind == "input" and v.is_initializer and self.old_ir):
            if v not in self.const:
                ok, val = self.runner.known(v)
                if not ok:
                    return False
                self.const[v] = tensors.nbytes(val)
            return True
        return v in self.const

    def _constant(self, node: Node) -> None:
        for out in node.outputs:
            if out is not None:
                ty = self.refiner.type_of(out)
                size = tensors.type_bytes(ty)
                if size is not None:
                    self.const[out] = size

    def _known_by_inference(self, out: Value) -> bool:
        x = self.refiner.values.get(out)
        if x is None:
            return False
        if x.const is not None:
            return True
        return x.sv is not None and all(isinstance(s, int) for s in x.sv) and tensors.static_shape(x.type) is not None

    def _consider(self, node: Node) -> None:
        outs = [v for v in node.outputs if v is not None]
        if not outs or node.subgraphs:
            return
        inputs = [v for v in node.inputs if v is not None]
        if node.implicit:
            inputs += node.implicit.values()
        const = self.const
        from_inputs = True
        for v in inputs:
            if v not in const and not self._is_const(v):
                from_inputs = False
                break
        if not from_inputs:
            for v in outs:
                if not self._known_by_inference(v):
                    return  # (most nodes: before the costlier questions below)
        if is_random(node.op_type) or not self.runner.evaluable(node):
            return
        in_bytes = 0
        if from_inputs:
            for v in inputs:
                in_bytes += const.get(v, 0)
        type_of = self.refiner.type_of
        out_bytes = 0
        for v in outs:  # the outputs' sizes, when inference knows them all: too large, nothing is computed
            size = tensors.type_bytes(type_of(v))
            if size is None:
                break
            out_bytes += size
        else:
            if not self._fits(out_bytes, in_bytes):
                return
        values: dict[Value, Any] = {}
        for v in outs:
            ok, val = self.runner.known(v)
            if not ok or not writable(val, self.opset):
                return
            values[v] = val
        sizes = {v: tensors.nbytes(val) for v, val in values.items()}
        if not self._fits(sum(sizes.values()), in_bytes):
            return
        const.update(sizes)
        self.plan.folds[node] = Fold(node, CONSTANT, values)

    def _fits(self, out_bytes: int, in_bytes: int) -> bool:
        if out_bytes > self.runner.size_cap:
            return False
        return out_bytes <= CACHE_LIMIT or out_bytes <= in_bytes  # no growing a weight out of a description

    def _reshape_target(self, node: Node) -> None:
        old = self.plan.folds.get(node)
        if old is not None:
            if old.kind != RESHAPE_TARGET:
                return
            del self.plan.folds[node]
        outs = [v for v in node.outputs if v is not None]
        if len(outs) != 1:
            return
        v = outs[0]
        x = self.refiner.values.get(v)
        if x is None or x.sv is None:  # not a shape value (most nodes): nothing to encode
            return
        if node.op_type == "Constant" or is_random(node.op_type) or node.subgraphs:
            return
        if v in self.const or v.graph_outputs or not v.consumers or self._tainted(v):
            return
        ty = x.type
        if not isinstance(ty, TensorType) or ty.elem != 7 or ty.shape != (len(x.sv),):
            return
        unifier = self.refiner.unifier
        encodings = set()
        for consumer, slot in v.consumers:
            if consumer.graph is not v.graph or consumer.op_type != "Reshape" or consumer.domain != "" or slot != 1:
                return
            if (consumer.version or 0) < 5 or (self.runner.attributes(consumer).get("allowzero") or 0) != 0:
                return
            data = self.refiner.type_of(consumer.inputs[0]) if consumer.inputs[0] is not None else None
            shape = data.shape if isinstance(data, TensorType) else None
            if shape is None:
                return
            enc: list[int | None] = []
            for i, dim in enumerate(x.sv):
                if isinstance(dim, int):
                    enc.append(dim)
                elif dim is not None and i < len(shape) and d.equal(unifier.canonical(shape[i]),
                                                                     unifier.canonical(dim)) is True:  # fmt: skip
                    enc.append(0)
                else:
                    enc.append(None)
            free = [i for i, e in enumerate(enc) if e is None]
            if len(free) > 1 or (free and -1 in enc):
                return
            encodings.add(tuple(-1 if e is None else e for e in enc))
        if len(encodings) != 1 or (self.opset or 0) < 9:
            return
        target = np.array(next(iter(encodings)), dtype=np.int64)
        self.plan.folds[node] = Fold(node, RESHAPE_TARGET, {v: target}, shape_str(x.sv))


def writable(value: Any, opset: int | None) -> bool:
    """Whether a value can become a Constant in the text: a tensor of a type the printer writes out and the
    imported Constant accepts (floats from opset 1; other types from 9, bfloat16 from 13, 8-bit floats from 19)."""
    if not isinstance(value, np.ndarray) or opset is None:
        return False
    dtype = value.dtype
    if dtype.kind == "O":
        return opset >= 9 and all(isinstance(x, (str, bytes)) for x in value.reshape(-1))
    key = (dtype, opset)
    known = _WRITABLE.get(key)
    if known is None:
        known = _WRITABLE[key] = _writable_dtype(dtype, opset)
    return known


_WRITABLE: dict[tuple[Any, int], bool] = {}  # (dtype, opset) -> _writable_dtype (dtype.name costs 15 us a call)


def _writable_dtype(dtype: Any, opset: int) -> bool:
    if dtype.kind == "f" and dtype.itemsize in (2, 4, 8) and dtype.name != "bfloat16":
        return True
    if opset < 9:
        return False
    if dtype.kind in "biu":
        return True
    name = dtype.name
    return (name.startswith("float8") and opset >= 19) or (name == "bfloat16" and opset >= 13)


def _same_fold(a: tuple[Fold | None, list[int | None]], b: tuple[Fold | None, list[int | None]]) -> bool:
    if a[1] != b[1]:
        return False
    fa, fb = a[0], b[0]
    if fa is None or fb is None:
        return fa is fb
    if fa.kind != fb.kind or list(fa.values) != list(fb.values):
        return False
    for x, y in zip(fa.values.values(), fb.values.values(), strict=True):
        if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
            return False
        if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            return False
    return True
