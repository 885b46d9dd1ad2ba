"""Deployment rules: will the model load on its targets (`targets` setting, `--target`)?

- GL701 no-kernel: a node the target runtime has no kernel for, at the node's schema version and with its
  inferred types (onnxruntime's matching rule, graphlsp.runtime.kernels). Nodes of If/Loop/Scan bodies are
  checked as they are; a model-local function is checked at each call, through its body with that call's types.
  What onnxruntime does instead of failing is modelled: on CPU a float16 node without a float16 kernel runs in
  float32 between inserted Casts (a warning); an op with a function body (onnx's schema) is inlined, and then
  its body's nodes need kernels.
- GL702 ep-fallback: on a GPU target, a node with no kernel there but one on CPU: it runs on CPU, its data
  copied over and back.
- GL703 runtime-too-old: the model's IR version or an opset import is newer than the target release loads
  (the current release's limits, or those of the release the target names: `onnxruntime@1.16:cpu`). A target
  release without a kernel table of its own gets only this rule: no kernel is looked up in another release's.

Nothing is read until a model is checked (the kernel tables load lazily, once)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from graphlsp.graph import ops as graph_ops
from graphlsp.graph.findings import Finding
from graphlsp.infer.types import NAME_BY_ELEM, MapType, OptionalType, SequenceType, TensorType, ValueType
from graphlsp.runtime.kernels import (
    PROVIDER_LABELS,
    UNKNOWN,
    KernelTable,
    Lookup,
    cpu_table_for,
    describe_kernels,
    table_for,
)

if TYPE_CHECKING:
    from graphlsp.graph.core import Graph, Model, Node
    from graphlsp.infer.refiner import ShapeRefiner

NO_KERNEL = "GL701"
EP_FALLBACK = "GL702"
RUNTIME_TOO_OLD = "GL703"
MAX_DEPTH = 8  # function calls and inlined bodies followed, one inside another
LOAD_TIME_OPS = {"Constant"}  # onnxruntime turns these into initializers when it loads the model: no kernel runs


def ort_type(t: ValueType) -> str:
    """A value's type as onnxruntime writes it in its registry (`float`, `seq(tensor(float))`); `?` unknown."""
    if isinstance(t, TensorType):
        if t.elem is None:
            return UNKNOWN
        name = NAME_BY_ELEM.get(t.elem, UNKNOWN)
        return f"sparse_tensor({name})" if t.sparse else name
    if isinstance(t, SequenceType):
        inner = ort_type(t.elem)
        return UNKNOWN if inner == UNKNOWN else f"seq({_full(inner)})"
    if isinstance(t, OptionalType):
        inner = ort_type(t.elem)
        return UNKNOWN if inner == UNKNOWN else f"optional({_full(inner)})"
    if isinstance(t, MapType):
        value = ort_type(t.value)
        if t.key is None or value == UNKNOWN:
            return UNKNOWN
        return f"map({NAME_BY_ELEM.get(t.key, '?')},{_full(value)})"
    return UNKNOWN


def _elem_type(t: ValueType) -> str:
    """ort_type, quicker for the common case (a dense tensor)."""
    if type(t) is TensorType and not t.sparse:
        return UNKNOWN if t.elem is None else NAME_BY_ELEM.get(t.elem, UNKNOWN)
    return ort_type(t)


def _arg_types(values: dict[Any, Any], args: list[Any]) -> list[str | None]:
    """The ort types of a node's inputs or outputs (None where absent), read from the refiner's `values`: type_of
    and _elem_type inlined, for a dense tensor (this runs for every node of every check)."""
    out: list[str | None] = []
    for v in args:
        if v is None:
            out.append(None)
            continue
        x = values.get(v)
        t = x.type if x is not None else None
        if type(t) is TensorType and not t.sparse:
            elem = t.elem
            out.append(UNKNOWN if elem is None else NAME_BY_ELEM.get(elem, UNKNOWN))
        else:
            out.append(ort_type(t))
    return out


def _full(t: str) -> str:
    return t if "(" in t else f"tensor({t})"


class _Verdict:
    """What one target says of one node: a code, a severity and a message, or nothing (it loads)."""

    __slots__ = ("code", "severity", "message", "related", "rescued")

    def __init__(self, code: str, severity: str, message: str, related: list[tuple[str, Node]] | None = None,
                 rescued: str = ""):  # fmt: skip
        self.code, self.severity, self.message = code, severity, message
        self.related = related or []
        self.rescued = rescued  # the target's label when onnxruntime runs the node in float32 (CPU, float16)


class DeploymentCheck:
    """The kernel check of one model's nodes against its targets, reading types from the analysis's refiner."""

    def __init__(self, model: Model, refiner: ShapeRefiner, targets: list[str], across_edits: bool = False) -> None:
        self.model = model
        self.across_edits = across_edits  # kept by the editor across edits (see deployment_findings)
        self.refiner = refiner
        self.targets = [t for t in targets if _available(t)]
        self.tables = [table_for(t) for t in self.targets]
        self._scratch: ShapeRefiner | None = None
        self._calls: dict[tuple[Any, ...], list[tuple[Node, list[str | None], list[str | None]]]] = {}
        self._memo: dict[tuple[Any, ...], _Verdict | None] = {}
        self._node_specific = False
        self._rescued: dict[tuple[Any, ...], _Verdict | None] = {}
        self._valid: dict[tuple[Any, ...], bool] = {}
        self._worst: dict[tuple[Any, ...], tuple[Node, _Verdict] | None] = {}

    # ---- the rules
    def findings(self) -> list[Finding]:
        if self.model.graph is None:
            return []
        found = [(node, v) for node in self.model.graph.all_nodes() for v in self.verdicts(node)]
        return self.model_findings() + self.report(found)

    def report(self, found: list[tuple[Node, _Verdict]]) -> list[Finding]:
        """Each verdict as a finding, except the float16 nodes CPU runs in float32: one warning per target, on
        the first of them, naming how many there are of which op (each node's hover has the details)."""
        out: list[Finding] = []
        rescued: dict[str, list[tuple[Node, _Verdict]]] = {}
        for node, v in found:
            if v.rescued:
                rescued.setdefault(v.rescued, []).append((node, v))
            else:
                out.append(self._finding(node, v))
        for label, items in rescued.items():
            if len(items) == 1:
                out.append(self._finding(*items[0]))
                continue
            ops: dict[str, int] = {}
            for node, _ in items:
                ops[node.op_type] = ops.get(node.op_type, 0) + 1
            shown = ", ".join(f"{n} {op}" for op, n in sorted(ops.items(), key=lambda x: (-x[1], x[0]))[:6])
            more = ", ..." if len(ops) > 6 else ""
            first, v = items[0]
            message = (f"{label} has no float16 kernel for {len(items)} nodes ({shown}{more}): onnxruntime inserts "
                       "Casts and runs them in float32 (a node's hover says which types its kernel takes)")
            related = [(f"also runs in float32: {node.op_type}", node) for node, _ in items[1:21]]
            out.append(self._finding(first, _Verdict(v.code, v.severity, message, related)))
        return out

    def model_findings(self) -> list[Finding]:
        found = {f.message: f for table in self.tables for f in self._too_old(table)}  # cpu and cuda of a release
        return list(found.values())

    def verdicts(self, node: Node) -> list[_Verdict]:
        """What each target says of one node (nothing where it loads)."""
        out = []
        for table in self.tables:
            if not table.checks_kernels:
                continue
            try:
                verdict = self.node_verdict(node, table)
            except Exception:  # a bug of ours must not stop the check: that node stays unproved
                verdict = None
            if verdict is not None:
                out.append(verdict)
        return out

    def _too_old(self, table: KernelTable) -> list[Finding]:
        """One finding per target release: `onnxruntime 1.16 loads IR version up to 9 and ai.onnx opset up to
        19; this model has IR version 10 and ai.onnx opset 21`."""
        supports: list[str] = []
        has: list[str] = []
        limits = table.limits
        ir = self.model.ir_version
        if isinstance(ir, int) and limits.get("ir_version") is not None and ir > limits["ir_version"]:
            supports.append(f"IR version up to {limits['ir_version']}")
            has.append(f"IR version {ir}")
        opsets = limits.get("opsets", {})
        for domain, version in sorted(self.model.opset_imports.items()):
            name = domain or "ai.onnx"
            top = opsets.get(name)
            if top is not None and isinstance(version, int) and version > top:
                supports.append(f"{name} opset up to {top}")
                has.append(f"{name} opset {version}")
        if not has:
            return []
        message = f"{table.release_label} loads {' and '.join(supports)}; this model has {' and '.join(has)}"
        return [Finding(RUNTIME_TOO_OLD, message, severity="error")]

    def _finding(self, node: Node, v: _Verdict) -> Finding:
        span = node.op_span
        start, end = span if span is not None else (-1, -1)
        related = []
        for message, inner in v.related:
            s = inner.op_span
            if s is not None:
                related.append((message, s[0], s[1]))
        return Finding(v.code, v.message, start, end, severity=v.severity, related=related, node=node)

    # ---- one node
    def node_verdict(self, node: Node, table: KernelTable) -> _Verdict | None:
        values = self.refiner.values
        ins = _arg_types(values, node.inputs)
        outs = _arg_types(values, node.outputs)
        if node.function is not None or node.subgraphs:
            return self._verdict(node, ins, outs, table, 0)
        # a model repeats few kinds of node: the same op, version and types get the same verdict, unless the
        # verdict looked at more of the node (its neighbours, attributes, a body built for it); a Shape's also
        # depends on whether its input's shape is static
        static = node.op_type == "Shape" and bool(node.inputs) and node.inputs[0] is not None \
            and self._static(node.inputs[0])  # fmt: skip
        key = (id(table), node.domain, node.op_type, node.version, tuple(ins), tuple(outs), static)
        if key in self._memo:
            return self._memo[key]
        self._node_specific = False
        verdict = self._verdict(node, ins, outs, table, 0)
        if not self._node_specific:
            self._memo[key] = verdict
        return verdict

    def _verdict(self, node: Node, ins: list[str | None], outs: list[str | None], table: KernelTable,
                 depth: int) -> _Verdict | None:  # fmt: skip
        if node.function is not None:
            return self._through_function(node, ins, table, depth)
        if node.version is None or not table.knows(node.domain):
            return None  # not imported (GL205), or a domain the runtime does not know: a custom op library's
        complex_ = next((t for t in [*ins, *outs] if t is not None and "complex" in t), None)
        if complex_ is not None:
            return _Verdict(NO_KERNEL, "error", f"{table.label} does not support {complex_} tensors")
        since = table.since_version(node.domain, node.op_type, node.version)
        if since is None:
            return None  # no schema there: the op is unknown to it (GL204, GL209, runtime-too-old)
        if node.domain == "" and node.op_type in LOAD_TIME_OPS:
            return None
        if node.domain == "" and node.op_type == "Shape" and node.inputs and node.inputs[0] is not None \
                and self._static(node.inputs[0]):  # fmt: skip
            return None  # onnxruntime's constant folding replaces a Shape of a static shape by its value
        got = table.lookup(node.domain, node.op_type, since, ins, outs)
        if got.status in ("ok", "unknown"):
            return None
        self._node_specific = True  # what follows reads more than the node's op, version and types
        if node.domain == "" and _removed_at_load(node):
            return None
        if table.provider == "cpu" and "float16" in ins and not node.subgraphs:
            # the rest of this verdict reads only the op, version and types again: one per kind of node (an
            # LLM in float16 has hundreds of MatMuls)
            key = (id(table), node.domain, node.op_type, since, tuple(ins), tuple(outs))
            if key not in self._rescued:
                as_float = table.lookup(node.domain, node.op_type, since, _fp32(ins), _fp32(outs))
                self._rescued[key] = None if as_float.status != "ok" else _Verdict(
                    NO_KERNEL, "warning", f"{_has(table, node, got)}; not float16: onnxruntime inserts Casts and "
                    "runs it in float32", rescued=table.label)  # fmt: skip
            rescued = self._rescued[key]
            if rescued is not None:
                return rescued
        inlined = self._through_schema_body(node, since, ins, outs, table, depth)
        if inlined is not False:
            return inlined
        cpu = cpu_table_for(f"{table.runtime}:{table.provider}")
        if cpu is not None:
            fallback = self._verdict(node, ins, outs, cpu, depth)
            if fallback is None:
                return _Verdict(EP_FALLBACK, "warning", f"{_has(table, node, got)}{_missing(got)}: it runs on CPU, "
                                "its data copied there and back")  # fmt: skip
        return _Verdict(NO_KERNEL, "error", _has(table, node, got) + _missing(got))

    def _through_schema_body(self, node: Node, since: int, ins: list[str | None], outs: list[str | None],
                             table: KernelTable, depth: int) -> _Verdict | None | Literal[False]:  # fmt: skip
        """An op with a function body in onnx's schema is inlined when no kernel takes it: its body's nodes then
        need kernels. False when there is no body."""
        from graphlsp.infer.refiner import schema_body
        from graphlsp.ops.signature import signature

        if node.domain not in ("", "ai.onnx.ml"):
            return False
        sig = signature(node.op_type, since, node.domain)
        contextual = bool(getattr(sig.schema, "has_context_dependent_function", False)) if sig is not None else False
        if sig is None or not (sig.has_function or contextual):
            return False
        if depth >= MAX_DEPTH:
            return None
        # onnxruntime's Node::TryGetFunctionProto: a body built for the node's types first, at the opset the
        # model imports; else the schema's body for that opset, only if no op it uses changed since the body's
        # own opset (onnx's OpSchema::GetFunction with validation); else the op is not inlined
        requested = node.version if node.domain == "" and node.version is not None else since
        if contextual:
            body = self._context_body(node, sig, requested)
            if body is None:
                return None  # a body onnx builds for the node's types, which graphlsp could not build: not proved
        else:
            opsets = getattr(sig.schema, "function_opset_versions", [sig.since_version])
            below = [f for f in opsets if f <= requested]
            if not below:
                return False
            opset = max(below)
            if node.domain == "":
                key = (node.op_type, since, opset, requested)  # a model calls few ops through their bodies, often
                valid = self._valid.get(key)
                if valid is None:
                    valid = self._valid[key] = _body_still_valid(sig, opset, requested)
                if not valid:
                    return False
            body = schema_body(node.op_type, opset, node.domain)
            if body is None:
                return None
        graph, attrs = body
        inner = self._check_body(node, graph, attrs, table, depth)
        if inner is None:
            return None
        where, v = inner
        label = f" '{where.name}'" if where.name else ""
        return _Verdict(v.code, v.severity, f"{node.op_type}({since}) has no kernel and is inlined: its body's "
                        f"{where.op_type}{label}: {v.message}", [(v.message, where), *v.related],
                        v.rescued)  # fmt: skip

    def _context_body(self, node: Node, sig: Any, since: int) -> tuple[Graph, list[Any]] | None:
        """The function body onnx builds for this node's input types (CastLike, Attention, the losses)."""
        from onnx import FunctionProto, TypeProto

        from graphlsp.binary.read import function_from_proto
        from graphlsp.binary.write import node_proto

        types = []
        for v in node.inputs:
            tp = TypeProto()
            t = self.refiner.type_of(v) if v is not None else None
            if v is not None:
                if not isinstance(t, TensorType) or t.elem is None or t.sparse:
                    return None
                tp.tensor_type.elem_type = t.elem
                if t.shape is not None:
                    tp.tensor_type.shape.SetInParent()
                    for d in t.shape:
                        dim = tp.tensor_type.shape.dim.add()
                        if isinstance(d, int):
                            dim.dim_value = d
            types.append(tp.SerializeToString())
        try:
            build = sig.schema.get_context_dependent_function_with_opset_version
            raw = build(since, node_proto(node).SerializeToString(), types)
            proto = FunctionProto.FromString(raw)
            if not len(proto.node):
                return None
            imports = {o.domain: o.version for o in proto.opset_import} or {node.domain: since}
            fn = function_from_proto(proto, imports)
        except Exception:  # onnx cannot build it for these types: not proved either way
            return None
        return (fn.body, fn.attributes) if fn.body is not None else None

    def _static(self, value: Any) -> bool:
        t = self.refiner.type_of(value)
        return isinstance(t, TensorType) and t.shape is not None and all(isinstance(d, int) for d in t.shape)

    def _through_function(self, node: Node, ins: list[str | None], table: KernelTable,
                          depth: int) -> _Verdict | None:  # fmt: skip
        fn = node.function
        if fn is None or fn.body is None or depth >= MAX_DEPTH:
            return None
        inner = self._check_body(node, fn.body, fn.attributes, table, depth)
        if inner is None:
            return None
        where, v = inner
        label = f" '{where.name}'" if where.name else ""
        return _Verdict(v.code, v.severity, f"in {fn.name}, {where.op_type}{label}: {v.message}",
                        [(v.message, where), *v.related], v.rescued)  # fmt: skip

    def _check_body(self, call: Node, body: Graph, attrs: list[Any], table: KernelTable,
                    depth: int) -> tuple[Node, _Verdict] | None:  # fmt: skip
        """The worst verdict among a body's nodes (every node of it, subgraphs too), inferred with the call's types."""
        from graphlsp.infer.attrs import attribute_values

        call_types = [self.refiner.type_of(v) if v is not None else None for v in call.inputs]
        # the body's types depend on the call's types and attributes only: calls without attributes share them
        # (an edit replaces a node's attributes: those of a call with attributes are its own), and so does the
        # worst verdict of its nodes, on one table at one depth
        site = (call, id(call.attributes)) if call.attributes else ()
        key = (body, site, tuple(map(repr, call_types)))
        worst_key = (*key, id(table), depth)
        if worst_key in self._worst:  # (never across edits: an edit may change a body's nodes but not its types)
            return self._worst[worst_key]
        typed = self._calls.get(key)
        if typed is None:
            scratch = self._scratch_refiner()
            scratch.infer_call(body, attrs, attribute_values(call.attributes), call_types)
            typed = []
            for n in body.all_nodes():
                typed.append((n, [ort_type(scratch.type_of(v)) if v is not None else None for v in n.inputs],
                              [ort_type(scratch.type_of(v)) if v is not None else None for v in n.outputs]))
            self._calls[key] = typed
        worst: tuple[Node, _Verdict] | None = None
        for n, ins, outs in typed:
            v = self._verdict(n, ins, outs, table, depth + 1)
            if v is not None and (worst is None or (v.severity == "error" and worst[1].severity != "error")):
                worst = (n, v)
        if not self.across_edits:
            self._worst[worst_key] = worst
        return worst

    def _scratch_refiner(self) -> ShapeRefiner:
        if self._scratch is None:
            from graphlsp.infer.refiner import ShapeRefiner

            self._scratch = ShapeRefiner(self.model, self.refiner.evaluator)
        return self._scratch


_NOOP_TYPES = {1, 10, 11, 6, 7}  # float, float16, double, int32, int64: the constants NoopElimination reads


def _removed_at_load(node: Node) -> bool:
    """Whether one of the rewrites onnxruntime applies to every model before it looks kernels up (its level-1
    graph optimizations, on by default) may remove the node: a Dropout whose mask nothing reads and that
    produces no graph output (EliminateDropout), x+0, x-0, x*1, x/1 with a one-element constant
    (NoopElimination), an Expand to a constant shape (ExpandElimination, when it changes nothing). Such a node
    is not reported: that it needs a kernel is not proved."""
    op = node.op_type
    if op == "Dropout":
        outs = node.outputs
        mask_used = len(outs) > 1 and outs[1] is not None and (bool(outs[1].consumers) or bool(outs[1].graph_outputs))
        return not mask_used and not (outs and outs[0] is not None and outs[0].graph_outputs)
    if op in ("Add", "Sub", "Mul", "Div"):
        for v in node.inputs[:2]:
            t = v.tensor if v is not None and v.is_initializer else None
            if t is not None and t.size <= 1 and t.dtype in _NOOP_TYPES:
                return True
        return False
    if op == "Expand":
        shape = node.inputs[1] if len(node.inputs) > 1 else None
        return shape is not None and shape.is_initializer
    return False


def _body_still_valid(sig: Any, opset: int, requested: int) -> bool:
    """onnx's OpSchema::ValidateReferencedOpsInFuncton: no default-domain op of the body registered at `opset`
    has a newer schema at the `requested` opset."""
    from graphlsp.binary.proto import function_proto

    if opset == requested:
        return True
    try:
        raw = sig.schema.get_function_with_opset_version(opset)
        proto = function_proto(raw) if isinstance(raw, bytes) else raw
    except Exception:
        return False
    for n in proto.node:
        if n.domain in ("", "ai.onnx"):
            newer, older = graph_ops.schema_for(n.op_type, requested, ""), graph_ops.schema_for(n.op_type, opset, "")
            if newer is None or older is None:
                return False
            a, b = newer.since_version, older.since_version
            if a != b:
                return False
    return True


def _available(spec: str) -> bool:
    """Whether a table describes the target (one the settings accepted may not be registered by the installed
    onnxruntime after all): the others are left out, not the whole check."""
    from graphlsp.runtime.kernels import TargetError

    try:
        table_for(spec)
    except TargetError:
        return False
    return True


def _fp32(types: list[str | None]) -> list[str | None]:
    return ["float" if t == "float16" else t for t in types]


def _has(table: KernelTable, node: Node, got: Lookup) -> str:
    op = node.op_type
    if got.status == "no-op":
        return f"{table.label} has no {op} kernel"
    if not got.kernels:
        older = sorted({e[0] for e in table.kernels.get(node.domain, {}).get(op, [])})
        shown = ", ".join(f"{op}({v})" for v in older)
        return f"{table.label} has no kernel for {op}({got.since}), only {shown}"
    name = got.failed[0] if got.failed else None
    single = name is not None and all(set(k[2]) == {name} for k in got.kernels)
    if single or name is None:
        return f"{table.label} has {op}({got.since}) for {describe_kernels(got.kernels, name)}"
    return f"{table.label} has {op}({got.since}) for {name} in {describe_kernels(got.kernels, name)}"


def _missing(got: Lookup) -> str:
    if got.status == "missing" and got.failed is not None and got.kernels:
        return f"; not {got.failed[1]}"
    return ""


def deployment_findings(model: Model, refiner: ShapeRefiner, targets: list[str],
                        incremental: bool = False) -> list[Finding]:  # fmt: skip
    """The GL7xx findings of a model. `incremental` (the editor, one analysis kept across edits): only the nodes
    the refiner inferred again since the last call are looked up again."""
    if not incremental or model.graph is None:
        return DeploymentCheck(model, refiner, targets).findings()
    state = refiner.kept.get(__name__)
    if state is None or state.model is not model or state.targets != targets or refiner.touched is None:
        check = DeploymentCheck(model, refiner, targets, across_edits=True)
        refiner.touched = set()
        nodes = list(model.graph.all_nodes())
        state = _State(model, list(targets), check, set(nodes), {})
        for node in nodes:
            found = check.verdicts(node)
            if found:
                state.verdicts[node] = found
        refiner.kept[__name__] = state
    else:
        touched, refiner.touched = refiner.touched, set()
        for node in touched:
            if node in state.nodes:
                found = state.check.verdicts(node)
                if found:
                    state.verdicts[node] = found
                else:
                    state.verdicts.pop(node, None)
    pairs = [(node, v) for node, vs in state.verdicts.items() for v in vs]
    pairs.sort(key=lambda x: _order(x[0]))
    return state.check.model_findings() + state.check.report(pairs)


def _order(node: Node) -> tuple[int, ...]:
    """Nodes in file order, a subgraph's after its owner: the verdicts of an edited model come in any order."""
    path: list[int] = []
    n: Node | None = node
    while n is not None:
        path.append(n.index)
        n = n.graph.owner
    return tuple(reversed(path))


class _State:
    """One editor analysis's verdicts, kept across edits (the refiner says which nodes changed)."""

    __slots__ = ("model", "targets", "check", "nodes", "verdicts")

    def __init__(self, model: Model, targets: list[str], check: DeploymentCheck, nodes: set[Node],
                 verdicts: dict[Node, list[_Verdict]]) -> None:  # fmt: skip
        self.model, self.targets, self.check, self.nodes, self.verdicts = model, targets, check, nodes, verdicts



def hover_lines(model: Model, refiner: ShapeRefiner, node: Node, targets: list[str]) -> list[str]:
    """For a hover on a node's op: per target, whether it has a kernel for the node's types (markdown lines)."""
    from graphlsp.runtime.kernels import TargetError

    out: list[str] = []
    check = DeploymentCheck(model, refiner, targets)
    for spec in targets:
        try:
            table = table_for(spec)
        except TargetError:
            continue
        if not table.checks_kernels:
            out.append(f"- {table.release_label} {PROVIDER_LABELS.get(table.provider, table.provider)}: no kernel "
                       f"table of this release (only its IR version and opsets are checked)")  # fmt: skip
            continue
        verdict = check.node_verdict(node, table)
        if verdict is not None:
            mark = "error" if verdict.severity == "error" else verdict.severity
            out.append(f"- {table.label}: **{RULE_NAMES[verdict.code]}** ({mark}): {verdict.message}")
            continue
        if node.function is not None:
            out.append(f"- {table.label}: every node of its body has a kernel for this call's types")
            continue
        if node.version is None or not table.knows(node.domain):
            out.append(f"- {table.label}: not in its registry (domain {node.domain or 'ai.onnx'})")
            continue
        since = table.since_version(node.domain, node.op_type, node.version)
        if since is None:
            out.append(f"- {table.label}: no {node.op_type} schema at this opset")
            continue
        ins = [_elem_type(refiner.type_of(v)) if v is not None else None for v in node.inputs]
        outs = [_elem_type(refiner.type_of(v)) if v is not None else None for v in node.outputs]
        got = table.lookup(node.domain, node.op_type, since, ins, outs)
        types = ", ".join(dict.fromkeys(t for t in [*ins, *outs] if t is not None))
        if got.status == "ok":
            out.append(f"- {table.label}: kernel {node.op_type}({since}) for {types}")
        elif got.status == "unknown":
            out.append(f"- {table.label}: not known (a type the match needs is not inferred)")
        else:
            out.append(f"- {table.label}: runs without a kernel of its own ({node.op_type}({since}) is folded, "
                       "inlined or turned into an initializer when the model loads)")  # fmt: skip
    return (["", "**Kernels**", *out]) if out else []


RULE_NAMES = {NO_KERNEL: "no-kernel", EP_FALLBACK: "ep-fallback", RUNTIME_TOO_OLD: "runtime-too-old"}
