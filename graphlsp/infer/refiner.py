"""ShapeRefiner: runs shape functions over a graph in topological order, one InferenceContext per node.

Seed 000's design: the refiner caches a context per node; `rerun` re-infers only the nodes whose inputs changed,
walking consumers through a worklist and stopping where a node's new outputs equal the old ones (early cutoff).
Before a node's shape function runs, the refiner checks what the schema alone says (input arity, required and
typed attributes, type constraints) and derives output element types from the constraints. Ops defined by a
function body (a model-local function or an onnx schema function) are inferred through the body.
"""

from __future__ import annotations

import copy
import gc
from collections.abc import Iterable
from typing import Any

import numpy as np

from graphlsp.graph.core import FuncAttr, Graph, Model, Node, TypeSpec, Value, ValueInfo
from graphlsp.graph.findings import Finding
from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.attrs import Ref, attribute_values, non_finite, plain, value_problem
from graphlsp.infer.checks import SIZING_OPS, sizing, type_string, verdict
from graphlsp.infer.conditions import Condition
from graphlsp.infer.context import InferenceContext, InferenceError, Inferred, ShapeProblem
from graphlsp.infer.sizes import InputSizes
from graphlsp.infer.types import (
    MapType,
    OptionalType,
    SequenceType,
    TensorType,
    ValueType,
    declared_type,
    elem_name,
    fully_static,
    type_of_value,
    type_str,
)
from graphlsp.ops import library as op_library  # op libraries: declared ops' signatures and shape contracts
from graphlsp.ops import registry
from graphlsp.ops.signature import OpSignature, signature

CONST_CAP = 1024  # elements: initializers this small are kept as known values
MAX_CALL_DEPTH = 32  # function calls inferred through their bodies, one inside another
_INVALID = ("GL312", "GL313", "GL314")  # errors after which a node's shape rule is not run


class RefineReport:
    """Which nodes a pass inferred (all of them for a full pass; the changed cone for `rerun`)."""

    __slots__ = ("inferred", "nodes")

    inferred: int
    nodes: list[Node]

    def __init__(
        self,
        inferred: int,
        nodes: list[Node] | None = None,
    ) -> None:
        self.inferred = inferred
        self.nodes = [] if nodes is None else nodes

    def __repr__(self) -> str:
        return f"RefineReport(inferred={self.inferred!r}, nodes={self.nodes!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not RefineReport:
            return NotImplemented
        return (self.inferred, self.nodes) == (other.inferred, other.nodes)


class ShapeRefiner:
    def __init__(self, model: Model, evaluator: Any = None, sizes: InputSizes | None = None) -> None:
        self.model = model
        self.sizes = sizes or InputSizes()
        self._bound_dims, self._bound_shapes = _bindings(model, self.sizes)
        self.source = model.source
        self.evaluator = evaluator  # the runner (issue: CPU runner), asked for values shape functions request
        self.values: dict[Value, Inferred] = {}
        self.contexts: dict[Node, InferenceContext] = {}
        rank: dict[str, int] = {}
        if model.graph is not None:
            for vi in model.graph.inputs:
                ty = declared_type(vi.type)
                for s in _symbols(ty):
                    rank.setdefault(s, len(rank))
        self.unifier = sh.Unifier(rank)
        self._bindings: list[dict[str, Any]] = []  # attribute bindings of function bodies being inferred
        self._calls: list[Graph] = []  # the function bodies being inferred, outermost first
        self._cut: tuple[str, str, str] | None = None  # why a call inside them was not followed
        # declared types of node outputs (graph outputs, value infos): value -> (type, declaration)
        self.declared: dict[Value, tuple[ValueType, ValueInfo]] = {}
        self.anchored: dict[Any, set[Node]] = {}  # piece -> nodes with a problem pointing into it
        self.unifying: set[Node] = set()  # nodes whose inference equated symbols
        self.problem_nodes: dict[Node, None] = {}  # nodes whose context holds problems (ordered set)
        self._attr_cache: dict[Node, tuple[object, dict[str, Any]]] = {}
        self.stale_unions = False  # set when such a node is inferred again
        self._order: dict[Graph, dict[Node, int]] = {}
        # relations on input dims each node's rule assumed without proof (a call's include its body's)
        self.conditions: dict[Node, list[Condition]] = {}
        # relations of input dims within which a node's output dims are exact (not failures: a pooling whose kernel
        # may pass its input, where onnxruntime's count differs from the spec's): witnesses of later nodes keep them
        self.domains: dict[Node, list[Condition]] = {}
        # declared dims (value infos, graph outputs) that inference finds as other expressions: (dim, ours, theirs)
        self.declared_conditions: dict[Value, tuple[ValueInfo, list[tuple[int, d.Dim, d.Dim]]]] = {}
        # branch outputs whose declaration inference contradicts, with the producer's context (an If keeps the
        # finding only when every branch contradicts it: see ops/controlflow.py)
        self.contradicted: dict[Value, InferenceContext] = {}
        self.touched: set[Node] | None = None  # when a layer above sets it: the nodes inferred since it last looked
        self.symbols_memo: tuple[tuple[Value, ...], dict[str, list[tuple[Value, int]]]] | None = None  # contracts'
        # what layers above keep across edits for as long as this refiner lives, by layer (a module-level map keyed by
        # the refiner would keep it alive: the kept state refers to the refiner)
        self.kept: dict[str, Any] = {}
        # If nodes whose condition is a relation of input dims and whose branches return different ranks: the
        # relation when the condition is true, and when it is false (infer/branches.py infers each case)
        self.splits: dict[Node, tuple[Condition, Condition]] = {}
        self.assumed: dict[Node, bool] = {}  # in a fork: the branch such an If is taken to run
        self.generation = 0  # node inferences so far: what layers above key kept results on
        self.stamps: dict[Node, int] = {}  # each node's generation when it was last inferred

    # ---- public
    def run(self) -> RefineReport:
        enabled = gc.isenabled()
        gc.disable()
        try:
            if self.model.graph is None:
                return RefineReport(0)
            return RefineReport(self._infer_graph(self.model.graph))
        finally:
            if enabled:
                gc.enable()

    def type_of(self, value: Value) -> ValueType:
        x = self.values.get(value)
        return x.type if x is not None else None

    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        for node in self.problem_nodes:
            ctx = self.contexts.get(node)
            for p in ctx.problems if ctx is not None else ():
                out.append(self._finding(node, p))
        out.sort(key=lambda f: (f.start, f.code))
        return out

    # ---- graphs
    def _infer_graph(self, graph: Graph) -> int:
        self._init_graph(graph)
        count = 0
        for node in graph.topological_order():
            self.infer_node(node)
            count += 1
        return count

    def rerun(self, changed: Iterable[Node]) -> RefineReport:
        """Re-infer the given nodes and, through a worklist in topological order, every consumer whose inputs
        came out different; stop where a node's outputs equal the old ones (early cutoff)."""
        import heapq

        heap: list[tuple[int, int, Node]] = []
        queued: set[Node] = set()

        def push(node: Node) -> None:
            top = node
            while top.graph.owner is not None and top.graph.kind == "subgraph":
                top = top.graph.owner  # a change read inside a subgraph re-infers the node that owns it
            if top not in queued:
                queued.add(top)
                heapq.heappush(heap, (self._position(top), id(top), top))

        for node in changed:
            push(node)
        done: list[Node] = []
        while heap:
            _, _, node = heapq.heappop(heap)
            queued.discard(node)
            done.append(node)
            if self.infer_node(node):
                for out in node.outputs:
                    if out is not None:
                        for consumer, _ in out.consumers:
                            push(consumer)
        return RefineReport(len(done), done)

    def fork(self) -> ShapeRefiner:
        """A copy to infer a case in (`infer/branches.py`): it starts from everything inferred here and re-infers
        without changing this refiner (the maps a node's inference writes are its own)."""
        other = copy.copy(self)
        other.values = dict(self.values)
        other.contexts = dict(self.contexts)
        other.unifier = self.unifier.copy()
        other.declared = dict(self.declared)
        other.anchored = {k: set(v) for k, v in self.anchored.items()}
        other.unifying = set(self.unifying)
        other.problem_nodes = dict(self.problem_nodes)
        other.conditions = dict(self.conditions)
        other.domains = dict(self.domains)
        other.declared_conditions = dict(self.declared_conditions)
        other.contradicted = dict(self.contradicted)
        other.splits = dict(self.splits)
        other.assumed = dict(self.assumed)
        other.stamps = dict(self.stamps)
        other._bindings, other._calls = [], []
        other.touched, other.symbols_memo, other.kept = None, None, {}
        return other

    def forget_graph(self, graph: Graph) -> None:
        """Drop what was inferred for a subgraph's nodes (a branch found dead): types, contexts, findings."""
        for node in graph.all_nodes():
            self.contexts.pop(node, None)
            self.problem_nodes.pop(node, None)
            self.splits.pop(node, None)
            for out in node.outputs:
                if out is not None:
                    self.values.pop(out, None)
                    self.contradicted.pop(out, None)

    def contradicts_declaration(self, value: Value) -> bool:
        """Whether inference contradicts the declared type of `value` (GL315 on its producer)."""
        return value in self.contradicted

    def withdraw_contradiction(self, value: Value) -> None:
        """Drop the GL315 of `value`'s declaration from its producer's findings (a branch that need not be taken)."""
        ctx = self.contradicted.pop(value, None)
        if ctx is None:
            return
        detail = f"output {value.name}"
        ctx.problems[:] = [p for p in ctx.problems if not (p.code == "GL315" and p.detail == detail)]
        if not ctx.problems:
            self.problem_nodes.pop(ctx.node, None)

    def _position(self, node: Node) -> int:
        order = self._order.get(node.graph)
        if order is None:
            order = self._order[node.graph] = {n: i for i, n in enumerate(node.graph.topological_order())}
        return order.get(node, len(order))

    def _init_graph(self, graph: Graph) -> None:
        """Graph inputs and initializers: their declared types, and the values of small initializers."""
        seen: set[Value] = set()
        for value in [*graph.inputs, *graph.initializers.values()]:
            if value.duplicate_of is not None or value in seen:
                continue  # a later duplicate definition: the first one stands
            seen.add(value)
            const = None
            tensor = value.tensor  # an initializer's, or an input's default (IR < 4 gives the input its value)
            if tensor is not None and tensor.size <= CONST_CAP and not tensor.external:
                got = plain(tensor)
                const = got if isinstance(got, np.ndarray) else None
            if value not in self.values or const is not None or graph.kind != "model":
                ty = self._declared(value.type)
                if graph is self.model.graph and value.name in self._bound_shapes and not value.is_initializer:
                    ty = _with_shape(ty, self._bound_shapes[value.name])
                self.values[value] = Inferred(ty, None, const)
        for info in [*graph.output_infos, *graph.value_infos.values()]:
            if info.type is None:
                continue
            target = graph.lookup(info.name)
            if target is not None and target.producer is not None and target not in self.declared:
                self.declared[target] = (self._declared(info.type), info)

    def _declared(self, ty: TypeSpec | None) -> ValueType:
        """A declared type with the bound sizes (`--dim`) in place of their symbols."""
        got = declared_type(ty)
        if not self._bound_dims or not isinstance(got, TensorType) or got.shape is None:
            return got
        shape = got.shape
        for name, size in self._bound_dims.items():
            sym = d.symbol(name)
            shape = tuple(d.replace(x, sym, size) if isinstance(x, d.Expr) else x for x in shape)
        return TensorType(got.elem, shape, got.sparse)

    def _set_inputs(self, graph: Graph, inputs: list[Inferred | None]) -> None:
        for i, value in enumerate(graph.inputs):
            declared = self._declared(value.type)
            x = inputs[i] if i < len(inputs) else None
            if x is None:
                self.values[value] = Inferred(declared)
                continue
            try:
                ty = _merge_types(declared, x.type, self.unifier)
            except (sh.MergeError, TypeError):
                ty = x.type
            self.values[value] = Inferred(ty, x.sv, x.const, x.items)

    def infer_subgraph(self, graph: Graph, input_types: list[ValueType]) -> list[ValueType]:
        self._init_graph(graph)
        self._set_inputs(graph, [Inferred(ty) for ty in input_types])
        for node in graph.topological_order():
            self.infer_node(node)
        return [self.type_of(v) for v in graph.outputs]

    def infer_call(self, body: Graph, attrs: list[FuncAttr], call_attrs: dict[str, Any],
                   input_types: list[ValueType]) -> None:  # fmt: skip
        """Infer a function body for one call, its values left in `values` (the kernel check reads each body
        node's types there): the call's attributes bound to the body's `@refs`, as a call through the body is."""
        binding: dict[str, Any] = {fa.name: plain(fa.default) for fa in attrs if fa.has_default}
        binding.update({k: v for k, v in call_attrs.items() if v is not None})
        self._bindings.append(binding)
        try:
            self.infer_subgraph(body, input_types)
        finally:
            self._bindings.pop()

    # ---- nodes
    def infer_node(self, node: Node) -> bool:
        """Infer one node from the current input values; True when its outputs changed."""
        if self.touched is not None:
            self.touched.add(node)
        self.generation += 1
        self.stamps[node] = self.generation
        inputs = [self.values.get(v) if v is not None else None for v in node.inputs]
        sig = None
        if node.function is None and node.version is not None:
            sig = signature(node.op_type, node.version, node.domain)
        cached = self._attr_cache.get(node)
        if cached is None or cached[0] is not node.attributes:  # an edit of the node replaces the dict
            cached = self._attr_cache[node] = (node.attributes, attribute_values(node.attributes))
        attrs = cached[1]
        if self._bindings:
            attrs = self._bind(attrs)
        ctx = InferenceContext(node, sig, node.version, inputs, attrs, self)
        old = self.contexts.get(node)
        self.contexts[node] = ctx
        if node in self.unifying:
            self.stale_unions = True  # equalities this node taught may no longer hold: see Analysis
        unions = self.unifier.unions
        mark, marked = len(self.unifier.conditions), len(self.unifier.domains)
        try:
            if sig is not None:
                self._check_signature(ctx, sig)
            invalid = any(p.code in _INVALID and p.severity == "error" for p in ctx.problems)
            if sig is not None and not invalid and (ctx.attrs or node.op_type in SIZING_OPS):
                invalid = not self._check_values(ctx, sig)
            elif sig is None and node.function is None:  # no schema at this opset (a domain not imported, or
                # imports unknown: a header that does not parse): the rule, written for the newest schema, reads
                # the inputs and writes the outputs that one requires; without them it does not run
                newest = signature(node.op_type, 1 << 20, node.domain)
                invalid = len(node.outputs) < (newest.min_output if newest is not None else 1) or (
                    newest is not None and sum(v is not None for v in node.inputs) < newest.min_input)
                if not invalid and newest is not None:  # nor with attribute values that schema would refuse
                    invalid = not self._valid_unreported(ctx, newest)
            fn = registry.lookup(node.domain, node.op_type, node.version)
            if invalid:
                pass  # inputs missing, attributes missing or mistyped: the rule would read garbage; outputs unknown
            elif fn is not None:
                fn(ctx)
            elif node.function is not None and node.function.body is not None:
                self._infer_function(ctx, node.function.body, node.function.attributes)
            elif sig is not None and sig.function_body(ctx.version) is not None:
                self._infer_schema_function(ctx, sig)
            elif sig is not None:
                ctx.error("GL316", "no shape inference for this op yet: its outputs have unknown shapes",
                          severity="info")  # fmt: skip
            else:
                op_library.note_undeclared(ctx)  # a domain no schema or op library knows
        except InferenceError:
            pass
        except Exception as e:  # a bug in a shape function must not stop the rest of the graph
            ctx.error("GL399", f"internal error in shape inference ({type(e).__name__}: {e})", severity="warning")
        self._refine_from_values(ctx, node)
        if not self._calls:  # inside a function body, the conditions go to the call
            _take(self.unifier.conditions, mark, self.conditions, node)
            _take(self.unifier.domains, marked, self.domains, node)
        changed = False
        for i, out in enumerate(node.outputs):
            if out is None:
                continue
            new = ctx.outputs[i] if i < len(ctx.outputs) else None
            if new is None:
                elem = ctx.output_elems[i] if i < len(ctx.output_elems) else None
                new = Inferred(TensorType(elem, None) if elem is not None else None)
                ctx.outputs[i] = new
            if out in self.declared:
                self._merge_declared(ctx, out, new)
            prev = self.values.get(out)
            if prev is None or not new.same(prev):
                changed = True
            self.values[out] = new
        self._index_anchors(node, old, ctx)
        if ctx.problems:
            self.problem_nodes[node] = None
        else:
            self.problem_nodes.pop(node, None)
        if self.unifier.unions != unions:
            self.unifying.add(node)
        return changed or old is None

    def _index_anchors(self, node: Node, old: InferenceContext | None, new: InferenceContext) -> None:
        for ctx, add in ((old, False), (new, True)):
            if ctx is None:
                continue
            for p in ctx.problems:
                for a in ([p.span] if p.span is not None else []) + [a for _, a in p.related]:
                    if add:
                        self.anchored.setdefault(a[0], set()).add(node)
                    else:
                        self.anchored.get(a[0], set()).discard(node)

    def _merge_declared(self, ctx: InferenceContext, value: Value, got: Inferred) -> None:
        """A declared type (graph output, value info) is a claim, checked against the inferred one: a
        contradiction is GL315. It stands in where inference knows nothing (no type, or no rank), but never
        replaces or completes what inference found, nor teaches the unifier: models declare outputs their graphs
        do not always compute (optimum's merged decoders declare [batch_size, ...] for the If branch that returns
        [0, ...]; onnx's Expand tests declare [1, 3, 1] for a shape given at run time)."""
        declared, info = self.declared[value]
        self.declared_conditions.pop(value, None)
        self.contradicted.pop(value, None)
        try:
            got.type = _claimed(got.type, declared)
            pairs = _symbolic_pairs(got.type, declared)
            if pairs and value.graph is self.model.graph:
                self.declared_conditions[value] = (info, pairs)
        except (sh.MergeError, TypeError) as e:
            op = ctx.node.op_type
            where = info.origin.span()
            op_span = ctx.node.op_span
            # a graph output's type is the graph's interface: wrong, it is an error; a value_info entry is an
            # annotation runtimes recompute (onnxruntime runs the GenAI builder's models, whose value_info
            # declares a Constant's int64[1] as a scalar): a warning
            output = any(o is info for o in value.graph.output_infos)
            ctx.problems.append(ShapeProblem(
                "GL315", f"'{value.name}' is declared {type_str(declared)} but {op} gives {type_str(got.type)} ({e})",
                self.anchor(where) if where is not None else None,
                [(f"{op} produces it here", self.anchor(op_span))] if op_span is not None else [],
                "error" if output else "warning", f"output {value.name}",
            ))  # fmt: skip
            if output and value.graph.owner is not None:
                self.contradicted[value] = ctx

    def _bind(self, attrs: dict[str, Any]) -> dict[str, Any]:
        bound = self._bindings[-1]
        return {k: (bound.get(v.name) if isinstance(v, Ref) else v) for k, v in attrs.items()}

    def _check_signature(self, ctx: InferenceContext, sig: OpSignature) -> None:
        """What the schema alone says about the node (memoized per signature, attribute kinds and input types)."""
        node = ctx.node
        n_in = len(node.inputs)
        while n_in and node.inputs[n_in - 1] is None:
            n_in -= 1
        kinds = tuple([(name, a.kind if a.kind != "ref" else None) for name, a in node.attributes.items()])
        inputs = ctx.inputs
        in_types = tuple([(type_string(x.type) if (x := inputs[i]) is not None else None) if v is not None else ""
                          for i, v in enumerate(node.inputs)])  # fmt: skip
        v = verdict(sig, n_in, kinds, in_types, len(node.outputs))
        for code, message, input_index, attr, severity in v.problems:
            ctx.error(code, message, input=input_index, attr=attr, severity=severity)
            if code == "GL311" and input_index is not None and (x := ctx.inputs[input_index]) is not None:
                ctx.inputs[input_index] = Inferred(x.type)  # a value of a type the op does not take is not read
                ctx.withheld += (input_index,)
        ctx.output_elems[:] = v.out_elems
        for i, ty in enumerate(v.out_types):
            if ty is not None:
                ctx.outputs[i] = Inferred(ty)

    def _valid_unreported(self, ctx: InferenceContext, sig: OpSignature) -> bool:
        """The attribute checks of `sig` (kinds, then values), reporting nothing: with the imports unknown, the
        newest schema only decides whether the rule may run (it would read a float `perm`, or a float axis input
        holding inf)."""
        node = ctx.node
        kinds = tuple((name, a.kind if a.kind != "ref" else None) for name, a in node.attributes.items())
        n_in = len(node.inputs)
        while n_in and node.inputs[n_in - 1] is None:
            n_in -= 1
        in_types = tuple(type_string(ctx.input_type(i)) if v is not None else "" for i, v in enumerate(node.inputs))
        found = verdict(sig, n_in, kinds, in_types, len(node.outputs))
        if any(code in (*_INVALID, "GL311") and severity == "error" for code, _, _, _, severity in found.problems):
            return False  # a GL311 input (a float axis) would be read as the rule's
        before = len(ctx.problems)
        try:
            return self._check_values(ctx, sig)
        finally:
            del ctx.problems[before:]

    def _check_values(self, ctx: InferenceContext, sig: OpSignature) -> bool:
        """Attribute values against the schema's attribute types (after a function's bindings), and the inputs and
        attributes that size an output against NaN and inf: a shape rule never computes with a value these checks
        have not accepted. False when a value is not valid (the rule is not run; its outputs stay unknown)."""
        ok = True
        node = ctx.node
        for name, value in ctx.attrs.items():
            spec = sig.attrs.get(name)
            found = value_problem(spec.type_name, value) if spec is not None else None
            if found is None:
                continue
            ok = False
            message, reported = found
            a = node.attributes.get(name)
            if not reported and not (a is not None and a.kind is None):  # else the front end has said so
                ctx.error("GL314", f"attribute '{name}' {message}", attr=name)
        inputs, attr_names = sizing(node.op_type, node.domain, ctx.version)
        for i in inputs:
            x = ctx.inputs[i] if i < len(ctx.inputs) else None
            ty = x.type if x is not None else None
            if not isinstance(ty, TensorType) or ty.elem not in _FLOAT_ELEMS:
                continue
            n = ty.shape[0] if ty.shape is not None and len(ty.shape) == 1 else 1 if ty.shape == () else None
            small = isinstance(n, int) and n <= 64  # a scalar or a short list: worth computing
            bad = non_finite(ctx.input_const(i) if small else x.const)  # type: ignore[union-attr]
            if bad is not None:
                ctx.error("GL317", f"input {i} ({ctx.input_name(i)}) holds {bad}, and it sets the output's size",
                          input=i)  # fmt: skip
                ok = False
        for name in attr_names:
            bad = non_finite(ctx.attrs.get(name))
            if bad is not None:
                ctx.error("GL314", f"attribute '{name}' holds {bad}, and it sets the output's size", attr=name)
                ok = False
        return ok

    # ---- function bodies
    def _infer_function(self, ctx: InferenceContext, body: Graph, attrs: list[FuncAttr], relay: bool = True) -> None:
        """Infer a call through the function's body, with the call's attributes bound to the body's `@refs`.

        The body is inferred once per call, with that call's input types and attributes; with `relay`, an error or
        warning inside it is reported at the call, the body's node as related information (a schema's function
        body is onnx's, not the user's: its problems are not relayed). A recursive call, or one nested more than
        MAX_CALL_DEPTH deep, is not followed (its outputs stay unknown); the outermost call says so."""
        if body in self._calls or len(self._calls) >= MAX_CALL_DEPTH:
            if self._cut is None:
                op = ctx.node.qualified_op
                self._cut = ("GL317", f"{op} calls itself: a function body cannot be expanded", "error") \
                    if body in self._calls else ("GL316", f"function calls nested more than {MAX_CALL_DEPTH} deep "
                                                 f"(down to {op}): outputs not inferred past that", "info")  # fmt: skip
            return
        if not self._calls:
            self._cut = None
        self._calls.append(body)
        try:
            self._infer_body(ctx, body, attrs, relay)
        finally:
            self._calls.pop()
        if not self._calls and self._cut is not None:
            code, message, severity = self._cut
            self._cut = None
            ctx.error(code, message, severity=severity)

    def _infer_body(self, ctx: InferenceContext, body: Graph, attrs: list[FuncAttr], relay: bool) -> None:
        binding: dict[str, Any] = {}
        for fa in attrs:
            if fa.has_default:
                binding[fa.name] = plain(fa.default)
        binding.update({k: v for k, v in ctx.attrs.items() if v is not None})
        saved_values = {v: self.values.get(v) for v in body.values.values()}
        saved_contexts = self.contexts
        self.contexts = {}
        self._bindings.append(binding)
        try:
            self._set_inputs(body, list(ctx.inputs))
            for node in body.topological_order():
                self.infer_node(node)
            for i, value in enumerate(body.outputs):
                x = self.values.get(value)
                if x is not None and i < ctx.n_outputs:
                    ctx.outputs[i] = Inferred(x.type, x.sv, x.const, x.items)
        finally:
            self._bindings.pop()
            body_contexts, self.contexts = self.contexts, saved_contexts
            for node in body_contexts:
                self.problem_nodes.pop(node, None)  # the body's contexts live only for this call
        if relay:
            self._relay(ctx, body, body_contexts)
            for v, x in saved_values.items():
                if x is None:
                    self.values.pop(v, None)
                else:
                    self.values[v] = x

    def _relay(self, ctx: InferenceContext, body: Graph, contexts: dict[Node, InferenceContext]) -> None:
        """The errors and warnings of one call's body, reported at the call: the body's node (or the place its
        rule pointed at) as related information, then that problem's own related places."""
        for node in body.topological_order():
            inner = contexts.get(node)
            for p in inner.problems if inner is not None else ():
                if p.severity not in ("error", "warning"):
                    continue
                where = p.span
                if where is None and (op_span := node.op_span) is not None:
                    where = self.anchor(op_span)
                at = f" at node '{node.name}'" if node.name else ""
                related = [(f"{p.message} (inside {ctx.node.qualified_op})", where)] if where is not None else []
                message = f"with these inputs, its body fails{at}: {p.message}"
                ctx.problems.append(ShapeProblem(p.code, f"{ctx.op}: {message}", None, related + p.related,
                                                 p.severity))  # fmt: skip

    def _infer_schema_function(self, ctx: InferenceContext, sig: OpSignature) -> None:
        body = _schema_body(sig.name, ctx.version, sig.domain)
        if body is None:
            ctx.error("GL316", "no shape inference for this op yet: its outputs have unknown shapes",
                      severity="info")  # fmt: skip
            return
        graph, attrs = body
        self._infer_function(ctx, graph, attrs, relay=False)

    def _refine_from_values(self, ctx: InferenceContext, node: Node) -> None:
        """Outputs whose shape depends on input values (NonZero, Unique, Compress, a Loop's outputs) get the
        shape of the value the evaluator computes, when every input is a constant. A computed constant has a
        static type, so a node with a tensor input of symbolic shape (an activation) is passed over at once; only
        graph inputs (an evaluator may be fed them) and sequences (an empty one has no element shape) are asked."""
        outputs_of = getattr(self.evaluator, "outputs_of", None)
        if outputs_of is None or (ctx.problems and any(p.severity == "error" for p in ctx.problems)):
            return
        deps = [*node.inputs, *node.implicit.values()] if node.implicit else node.inputs
        open_deps = []
        values = self.values
        for v in deps:  # known values whose type is not static: a fed graph input, an empty sequence
            if v is None:
                continue
            ty = x.type if (x := values.get(v)) is not None else None
            if not fully_static(ty):
                if not (v.kind == "input" or isinstance(ty, (SequenceType, OptionalType))):
                    return  # an activation (most nodes): nothing to compute
                open_deps.append(v)
        outs = ctx.outputs
        open_ = []
        for i, out in enumerate(node.outputs):  # a loop, not a comprehension: this runs for most nodes
            if out is not None and not fully_static(x.type if i < len(outs) and (x := outs[i]) else None):
                open_.append(i)
        if not open_:
            return
        known = getattr(self.evaluator, "known", None)
        for v in open_deps:
            if known is None or not known(v)[0]:
                return
        try:
            got = outputs_of(node, self)
        except Exception:
            return
        if got is None:
            return
        for i in open_:
            x = ctx.outputs[i] if i < len(ctx.outputs) else None
            ty = type_of_value(got[i] if i < len(got) else None, x.type if x is not None else None)
            if ty is None:
                continue
            val = got[i]
            const = val if isinstance(val, np.ndarray) and val.dtype != object and val.size <= CONST_CAP else None
            while len(ctx.outputs) <= i:
                ctx.outputs.append(None)
            ctx.outputs[i] = Inferred(ty, x.sv if x is not None else None, const, x.items if x is not None else None)

    # ---- values the shape functions ask for
    def request_value(self, value: Value) -> np.ndarray | None:
        if self.evaluator is None:
            return None
        try:
            result = self.evaluator.value_of(value, self)
        except Exception:
            return None
        return result if isinstance(result, np.ndarray) else None

    # ---- positions
    def line_of_value(self, value: Value) -> int | None:
        span = value.span
        if span is None:
            return None
        line = self.source.line_of(span[0])
        return line + 1 if line is not None else None

    def anchor(self, span: tuple[int, int]) -> tuple[Any, int, int]:
        """An absolute range as (piece, local start, local end): it moves with its statement."""
        return self.source.anchor(span)

    def _finding(self, node: Node, p: ShapeProblem) -> Finding:
        resolve = self.source.resolve
        where = resolve(p.span) if p.span is not None else node.op_span
        start, end = where if where is not None else (-1, -1)
        related = [(m, *resolve(a)) for m, a in p.related]
        return Finding(p.code, p.message, start, end, p.severity, related, node=node, detail=p.detail)


_FLOAT_ELEMS = frozenset({1, 10, 11, 16, 17, 18, 19, 20, 23, 24, 27, 28})  # element types that can hold NaN or inf


def _take(pending: list[Condition], mark: int, into: dict[Node, list[Condition]], node: Node) -> None:
    """The relations a node's inference noted (those after `mark`), moved from the unifier to the node."""
    if len(pending) > mark:
        into[node] = pending[mark:]
        del pending[mark:]
    else:
        into.pop(node, None)


def _claimed(got: ValueType, declared: ValueType) -> ValueType:
    """`got`, or the declaration where inference has nothing; raises on a definite contradiction."""
    if got is None:
        return declared
    if declared is None:
        return got
    if isinstance(got, TensorType) and isinstance(declared, TensorType):
        if got.elem is not None and declared.elem is not None and got.elem != declared.elem:
            raise TypeError(f"element type {elem_name(got.elem)} != {elem_name(declared.elem)}")
        shape = got.shape
        if shape is None:
            shape = declared.shape
        elif declared.shape is not None:
            if len(shape) != len(declared.shape):
                raise sh.MergeError(f"rank {len(shape)} != rank {len(declared.shape)}")
            for i, (x, y) in enumerate(zip(shape, declared.shape, strict=True)):
                if x is not None and y is not None and d.equal(x, y) is False:
                    raise sh.MergeError(f"{d.to_str(x)} != {d.to_str(y)}", i)
        return TensorType(got.elem if got.elem is not None else declared.elem, shape, got.sparse)
    if type(got) is not type(declared):
        raise TypeError(f"{type_str(got)} != {type_str(declared)}")
    if isinstance(got, SequenceType) and isinstance(declared, SequenceType):
        return SequenceType(_claimed(got.elem, declared.elem))
    if isinstance(got, OptionalType) and isinstance(declared, OptionalType):
        return OptionalType(_claimed(got.elem, declared.elem))
    return got


def _bindings(model: Model, sizes: InputSizes) -> tuple[dict[str, int], dict[str, tuple[int, ...]]]:
    """The symbols bound to sizes (given, and those an input's given shape binds) and the inputs' given shapes."""
    dims = sizes.dim_map()
    shapes = sizes.shape_map()
    if shapes and model.graph is not None:
        for value in model.graph.inputs:
            given = shapes.get(value.name)
            declared = value.type.dims if value.type is not None else None
            if given is None or declared is None or len(declared) != len(given):
                continue
            for dm, size in zip(declared, given, strict=True):
                if isinstance(dm, str) and d.symbol(dm).symbols() == {dm}:
                    dims.setdefault(dm, size)
    return dims, shapes


def _with_shape(ty: ValueType, shape: tuple[int, ...]) -> ValueType:
    if isinstance(ty, TensorType) or ty is None:
        return TensorType(ty.elem if ty is not None else None, shape, ty.sparse if ty is not None else False)
    return ty


def _symbolic_pairs(got: ValueType, declared: ValueType) -> list[tuple[int, d.Dim, d.Dim]]:
    """The dims where a declared tensor shape and the inferred one are different expressions, neither a plain size
    (their equality is then a condition on the input dims: see infer/contracts.py)."""
    if not isinstance(got, TensorType) or not isinstance(declared, TensorType):
        return []
    if got.shape is None or declared.shape is None or len(got.shape) != len(declared.shape):
        return []
    return [(i, x, y) for i, (x, y) in enumerate(zip(got.shape, declared.shape, strict=True))
            if isinstance(x, d.Expr) and isinstance(y, d.Expr) and d.equal(x, y) is None]  # fmt: skip


def _merge_types(a: ValueType, b: ValueType, unifier: sh.Unifier) -> ValueType:
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        if a.elem is not None and b.elem is not None and a.elem != b.elem:
            raise TypeError(f"element type {elem_name(a.elem)} != {elem_name(b.elem)}")
        return TensorType(a.elem if a.elem is not None else b.elem, sh.merge(a.shape, b.shape, unifier), a.sparse)
    if type(a) is not type(b):
        raise TypeError(f"{type_str(a)} != {type_str(b)}")
    if isinstance(a, SequenceType) and isinstance(b, SequenceType):
        return SequenceType(_merge_types(a.elem, b.elem, unifier))
    if isinstance(a, OptionalType) and isinstance(b, OptionalType):
        return OptionalType(_merge_types(a.elem, b.elem, unifier))
    return a


def _symbols(ty: ValueType) -> Iterable[str]:
    if isinstance(ty, TensorType) and ty.shape is not None:
        for x in ty.shape:
            if isinstance(x, d.Expr):
                yield from sorted(x.symbols())
    elif isinstance(ty, (SequenceType, OptionalType)):
        yield from _symbols(ty.elem)
    elif isinstance(ty, MapType):
        yield from _symbols(ty.value)


_SCHEMA_BODIES: dict[tuple[str, int, str], tuple[Graph, list[FuncAttr]] | None] = {}


def _schema_body(op: str, version: int, domain: str) -> tuple[Graph, list[FuncAttr]] | None:
    """An onnx schema's function body as one of our Graphs (read by the binary front end; cached)."""
    key = (op, version, domain)
    if key in _SCHEMA_BODIES:
        return _SCHEMA_BODIES[key]
    result = None
    sig = signature(op, version, domain)
    proto = sig.function_body(version) if sig is not None else None
    if proto is not None:
        from graphlsp.binary.read import function_from_proto

        imports = {o.domain: o.version for o in proto.opset_import} or {domain: version}
        fn = function_from_proto(proto, imports)
        if fn.body is not None:
            result = (fn.body, fn.attributes)
    _SCHEMA_BODIES[key] = result
    return result


schema_body = _schema_body  # for the layers above: an onnx schema's function body as a Graph (cached)
bindings = _bindings  # for the layers above: the symbols bound by given sizes, and the inputs' given shapes
