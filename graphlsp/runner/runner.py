"""The CPU runner: computes the values of constant subgraphs when a shape function asks for them.

Seed 000's GraphRunner: a single-threaded CPU evaluator the ShapeRefiner pulls from (`request_value` ->
`value_of`). A value is known when it is a Constant's, an initializer's, a shape value whose elements are all
ints (Shape of a static tensor, Gather of such a shape), or the output of a deterministic node whose inputs are
all known; the runner then evaluates the producers it needs, upstream first, with our kernels or onnx.reference.

Results are cached per value, as TensorFlow's const_tensor_map_: values of at most 1 KiB are kept, larger ones
are recomputed when asked again. Nothing larger than the size cap (1 MiB by default) is ever built: the bytes
of a node's outputs are known from their inferred types before it runs. Random ops are never evaluated. A node
that cannot run on its values (division by zero, index out of range) is recorded in `errors`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from graphlsp.graph.core import Model, Node, Value
from graphlsp.graph.order import Worklist
from graphlsp.graph.tensor import Tensor, TensorError
from graphlsp.infer.attrs import Ref, attribute_values
from graphlsp.infer.types import TensorType
from graphlsp.ops.signature import signature
from graphlsp.runner import kernels, tensors, unimplemented
from graphlsp.runner.budget import Budget, BudgetExceeded
from graphlsp.runner.kernels import KernelError

DEFAULT_CAP = 1 << 20  # bytes: the largest value the runner builds
CACHE_LIMIT = 1024  # bytes: values this small stay cached (TensorFlow's kMaxTensorSize)
LOOP_LIMIT = 4096  # iterations: a Loop with a larger (or no) trip count is not run
CALL_DEPTH = 32  # function calls one inside another (through bodies too) in one evaluation: the refiner's limit
CALLED_FUNCTIONS = 256  # distinct model-local functions one evaluation may reach
MAX_ROUNDS = 8  # re-inference rounds after an edit (each one's values may change what the next reads)
RANDOM_OPS = frozenset({"Multinomial", "Bernoulli"})
# ops whose output may be much larger than their inputs: without a static output type, they are not run
GROWING = frozenset({
    "Resize", "Upsample", "Pad", "OneHot", "ConvTranspose", "MatMul", "Gemm", "Einsum", "MelWeightMatrix",
    "HannWindow", "HammingWindow", "BlackmanWindow", "Col2Im", "DFT", "STFT", "CenterCropPad", "EyeLike",
    "Loop", "Scan", "SequenceMap", "MaxUnpool", "TfIdfVectorizer",
})  # fmt: skip


class _NotConst:
    def __repr__(self) -> str:
        return "NOT_CONST"


NOT_CONST: Any = _NotConst()  # a value the runner cannot (or will not) compute


def is_random(op_type: str) -> bool:
    return op_type.startswith("Random") or op_type in RANDOM_OPS


class RunnerStats:
    """Counts of what the runner evaluated, and how many bytes its cache held."""

    __slots__ = ("evaluations", "own_kernel", "reference", "cache_bytes", "peak_cache_bytes", "largest", "refused_size")

    evaluations: int  # node runs
    own_kernel: int  # ...by our kernels
    reference: int  # ...by onnx.reference
    cache_bytes: int
    peak_cache_bytes: int
    largest: int  # bytes of the largest value built
    refused_size: int  # nodes not run because their outputs would exceed the cap

    def __init__(
        self,
        evaluations: int = 0,
        own_kernel: int = 0,
        reference: int = 0,
        cache_bytes: int = 0,
        peak_cache_bytes: int = 0,
        largest: int = 0,
        refused_size: int = 0,
    ) -> None:
        self.evaluations = evaluations
        self.own_kernel = own_kernel
        self.reference = reference
        self.cache_bytes = cache_bytes
        self.peak_cache_bytes = peak_cache_bytes
        self.largest = largest
        self.refused_size = refused_size

    def __repr__(self) -> str:
        return (
            f"RunnerStats(evaluations={self.evaluations!r}, own_kernel={self.own_kernel!r}, "
            f"reference={self.reference!r}, cache_bytes={self.cache_bytes!r}, "
            f"peak_cache_bytes={self.peak_cache_bytes!r}, largest={self.largest!r}, "
            f"refused_size={self.refused_size!r})"
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not RunnerStats:
            return NotImplemented
        mine = (self.evaluations, self.own_kernel, self.reference, self.cache_bytes, self.peak_cache_bytes,
                self.largest, self.refused_size)
        theirs = (other.evaluations, other.own_kernel, other.reference, other.cache_bytes, other.peak_cache_bytes,
                  other.largest, other.refused_size)
        return mine == theirs


class Runner:
    """Evaluates values of one model; the ShapeRefiner's `evaluator`."""

    def __init__(self, model: Model, size_cap: int = DEFAULT_CAP) -> None:
        self.model = model
        self.size_cap = size_cap
        self.refiner: Any = None
        self.stats = RunnerStats()
        self.errors: dict[Node, str] = {}  # nodes that cannot run on their (constant) inputs
        self.failures: dict[Node, str] = {}  # kernels that failed for reasons of ours (not shown)
        self.refused: dict[Node, str] = {}  # nodes not run on purpose: random, too large, too many iterations
        self.requested: set[Value] = set()  # values shape functions asked for
        # per value of the main graph: the value (<= 1 KiB), a fingerprint of a larger one, or NOT_CONST
        self._answers: dict[Value, Any] = {}
        self._order: dict[Node, int] = {}
        self.moved: list[Node] = []
        self._attrs: dict[Node, tuple[object, dict[str, Any]]] = {}
        self._det: dict[Any, bool] = {}
        self._function_proto: dict[Any, Any] = {}  # FunctionProto by key, built when a call first needs it
        self._calls: dict[Any, tuple[int, frozenset[Any]] | None] = {}  # per function: call depth, reachable keys
        self._displaced: dict[Value, Any] = {}  # answers outputs_of replaced during the refiner's rerun
        # id of the array value_of last gave for a value: the refiner keeps it as that value's const
        # (InferenceContext.input_const), which an edit upstream makes stale (see _propagate)
        self._lent: dict[Value, int] = {}

    # ---- the refiner's protocol
    def value_of(self, value: Value, refiner: Any = None) -> np.ndarray | None:
        """A value for a shape function, or None when it is not a known constant tensor."""
        if refiner is not None:
            self.refiner = refiner
        self.requested.add(value)
        got = self.resolve(value)
        if isinstance(got, np.ndarray):
            self._lent[value] = id(got)
            return got
        return None

    def outputs_of(self, node: Node, refiner: Any = None) -> list[Any] | None:
        """The node's outputs computed from its inputs' values (NOT_CONST where unknown); None when an input is
        not a known constant or the node may not run. The refiner asks this while inferring the node, for outputs
        whose shape depends on input values (NonZero, Unique, a Loop's scan outputs): what inference holds for
        them is not read here, it is being replaced."""
        if refiner is not None:
            self.refiner = refiner
        if not self.evaluable(node):
            return None
        args = []
        for x in node.inputs:
            got = self.resolve(x) if x is not None else None
            if got is NOT_CONST:
                return None
            args.append(got)
        outer = {}
        for x in node.implicit.values():
            got = self.resolve(x)
            if got is NOT_CONST:
                return None
            outer[x.name] = got
        for out in node.outputs:
            if out is not None and out in self._answers:
                self._displaced.setdefault(out, self._pop(out))  # for rerun to tell whether it changed
        outs, error = self._run(node, args, outer)
        self._settle(node, outs, {}, error)
        return outs

    def known(self, value: Value) -> tuple[bool, Any]:
        """(True, value) when the value is computable (tensor, sequence, or None for an empty optional)."""
        got = self.resolve(value)
        return (False, None) if got is NOT_CONST else (True, got)

    # ---- edits
    def rerun(self, refiner: Any, changed: list[Node]) -> Any:
        """`refiner.rerun(changed)` plus what the runner knows: values computed from the edited nodes are
        recomputed in topological order, stopping where they come out the same (early cutoff on values, which
        the refiner cannot see for large ones), and the nodes whose inference used a value that changed are
        inferred again. Returns the refiner's report over every round; `moved` lists the nodes whose values
        changed."""
        from graphlsp.infer.refiner import RefineReport

        self.refiner = refiner
        olds = self._forget(changed)
        self._displaced.clear()
        report = refiner.rerun(changed)
        olds = {**self._displaced, **olds}
        nodes, inferred = list(report.nodes), report.inferred
        start = [*changed, *report.nodes]
        self.moved = []
        for _ in range(MAX_ROUNDS):
            again = self._propagate(start, olds)
            if not again:
                break
            self._displaced.clear()
            report = refiner.rerun(again)
            olds = dict(self._displaced)
            nodes += report.nodes
            inferred += report.inferred
            start = list(report.nodes)
        return RefineReport(inferred, nodes)

    def _forget(self, nodes: list[Node]) -> dict[Value, Any]:
        olds: dict[Value, Any] = {}
        for node in nodes:
            for out in node.outputs:
                if out is not None and out in self._answers:
                    olds[out] = self._pop(out)
        return olds

    def _pop(self, value: Value) -> Any:
        old = self._answers.pop(value)
        if isinstance(old, np.ndarray):
            self.stats.cache_bytes -= tensors.nbytes(old)
        return old

    def _propagate(self, start: list[Node], olds: dict[Value, Any]) -> list[Node]:
        graph = self.model.graph
        if graph is None:
            return []
        work = Worklist(graph, self._order)
        push = work.push
        for n in start:
            push(n)
        again: dict[Node, None] = {}
        while (node := work.pop()) is not None:
            moved = False
            for out in node.outputs:
                if out is None:
                    continue
                if out in olds:
                    old = olds.pop(out)
                elif out in self._answers:
                    old = self._pop(out)
                else:
                    continue  # never computed: nothing was derived from it
                self.errors.pop(node, None)
                x = self.refiner.values.get(out) if self.refiner is not None else None
                if x is not None and x.const is not None and id(x.const) == self._lent.get(out):
                    x.const = None  # our old answer, which the refiner kept: resolve must not read it back
                new = self.resolve(out)
                if _same_answer(old, new):
                    continue
                moved = True
                if out in self.requested:  # inference used the old value: infer its producer and readers again
                    again[node] = None
                    for consumer, _ in out.consumers:
                        again[graph.top_node(consumer) or consumer] = None
            if moved:
                self.moved.append(node)
                for out in node.outputs:
                    for consumer, _ in out.consumers if out is not None else ():
                        push(consumer)
        return list(again)

    def clear(self) -> None:
        self._answers.clear()
        self._displaced.clear()
        self.errors.clear()
        self.failures.clear()
        self.refused.clear()
        self.requested.clear()
        self._lent.clear()
        self.stats.cache_bytes = 0

    # ---- evaluation
    def resolve(self, root: Value) -> Any:
        """The value, or NOT_CONST; evaluates the producers it needs, upstream first (no recursion)."""
        memo: dict[Value, Any] = {}
        stack = [root]
        active: set[Node] = set()
        while stack:
            v = stack[-1]
            if v in memo:
                stack.pop()
                continue
            node = v.producer
            if node is None or node not in active:  # on a revisit (its inputs done), _direct said _PENDING already
                got = self._direct(v)
                if got is not _PENDING:
                    memo[v] = got
                    stack.pop()
                    continue
            assert node is not None
            deps = [*node.inputs, *node.implicit.values()] if node.implicit else node.inputs
            todo = None
            for x in deps:
                if x is None:
                    continue
                got = memo.get(x, _PENDING)
                if got is NOT_CONST:
                    todo = None
                    break
                if got is _PENDING and todo is None:
                    todo = x
            else:
                got = None
            if got is NOT_CONST:
                self._settle(node, [NOT_CONST] * len(node.outputs), memo)
            elif todo is not None:
                if todo.producer is not None and (todo.producer is node or todo.producer in active):
                    self._settle(node, [NOT_CONST] * len(node.outputs), memo)  # a cycle (GL203)
                else:
                    active.add(node)
                    stack.append(todo)
                    continue
            else:
                args = [memo[x] if x is not None else None for x in node.inputs]
                outer = {x.name: memo[x] for x in node.implicit.values()}
                outs, error = self._run(node, args, outer)
                self._settle(node, outs, memo, error)
            active.discard(node)
            stack.pop()
        return memo[root]

    def _settle(self, node: Node, outs: list[Any], memo: dict[Value, Any], error: str | None = None) -> None:
        if error is None:
            self.errors.pop(node, None)
        else:
            self.errors[node] = error
        for i, out in enumerate(node.outputs):
            if out is None:
                continue
            got = outs[i] if i < len(outs) else NOT_CONST
            memo[out] = got
            if out.graph.kind != "model" or out in self._answers:
                continue  # a body's values depend on the call or iteration: never kept
            size = tensors.nbytes(got) if got is not NOT_CONST else 0
            if isinstance(got, np.ndarray) and size <= CACHE_LIMIT:
                self._answers[out] = got
                self.stats.cache_bytes += size
                self.stats.peak_cache_bytes = max(self.stats.peak_cache_bytes, self.stats.cache_bytes)
            else:
                self._answers[out] = NOT_CONST if got is NOT_CONST else _Big(got)

    def _direct(self, v: Value) -> Any:
        """What is known without running the producer: from inference, kept, an initializer; or _PENDING."""
        x = self.refiner.values.get(v) if self.refiner is not None else None
        if x is not None and x.const is not None:
            return x.const
        if x is not None and x.sv is not None:
            arr = _shape_value(x.type, x.sv)
            if arr is not None:
                return arr
        kept = self._answers.get(v)
        if kept is not None and not isinstance(kept, _Big):
            return kept
        if v.is_initializer:
            return self._initializer(v)
        if v.kind != "node" or v.producer is None or v.duplicate_of is not None:
            return NOT_CONST
        if not self.evaluable(v.producer):
            return NOT_CONST
        return _PENDING

    def evaluable(self, node: Node) -> bool:
        """Whether the runner may run the node at all: deterministic, schema-valid, no graph errors."""
        if not self._deterministic(node):
            return False
        if self.refiner is not None:
            ctx = self.refiner.contexts.get(node)
            if ctx is not None and any(p.severity == "error" for p in ctx.problems):
                return False
        return node.version is not None or node.function is not None

    def _deterministic(self, node: Node) -> bool:
        if is_random(node.op_type):
            return False
        if node.function is None and not node.subgraphs:  # nearly every node: nothing inside to look at
            return True
        key = node.function.key if node.function is not None else None
        if key is not None and key in self._det:
            return self._det[key]
        seen: set[Any] = set()  # the functions whose bodies were looked at
        det = self._det
        ok = not any(is_random(n.op_type) or (n.function is not None and det.get(n.function.key) is False)
                     for n in _within(node, seen))  # fmt: skip
        if ok:
            self._det.update(dict.fromkeys(seen, True))
        elif key is not None:
            self._det[key] = False
        return ok

    def _initializer(self, v: Value) -> Any:
        tensor = v.tensor
        if tensor is None:
            return NOT_CONST
        if tensor.nbytes > self.size_cap:
            self.stats.refused_size += 1
            return NOT_CONST
        try:
            arr = tensor.numpy()
        except TensorError:
            return NOT_CONST
        except Exception:  # a malformed literal or protobuf: the checks report it
            return NOT_CONST
        self.stats.largest = max(self.stats.largest, tensors.nbytes(arr))
        if v.graph.kind == "model" and tensors.nbytes(arr) <= CACHE_LIMIT and v not in self._answers:
            self._answers[v] = arr
            self.stats.cache_bytes += tensors.nbytes(arr)
            self.stats.peak_cache_bytes = max(self.stats.peak_cache_bytes, self.stats.cache_bytes)
        return arr

    # ---- running one node
    def _run(self, node: Node, args: list[Any], outer: dict[str, Any]) -> tuple[list[Any], str | None]:
        """The node's outputs (NOT_CONST where it cannot run) and the error that stopped it, if any."""
        n_out = len(node.outputs)
        bound = self._bound(node, [*args, *outer.values()])  # outer values: what a body reads counts too
        if bound is None or bound > self.size_cap:
            self.stats.refused_size += 1
            self.refused[node] = f"outputs of {bound} bytes exceed the cap" if bound else "output size unknown"
            return [NOT_CONST] * n_out, None
        why = self._refusal(node, args)
        if why:
            self.refused[node] = why
            return [NOT_CONST] * n_out, None
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outs = self._kernel(node, args, outer)
        except KernelError as e:
            return [NOT_CONST] * n_out, str(e)
        except BudgetExceeded as e:
            self.refused[node] = str(e)
            return [NOT_CONST] * n_out, None
        except (IndexError, ZeroDivisionError) as e:
            return [NOT_CONST] * n_out, (str(e).splitlines()[0] if str(e) else type(e).__name__)
        except Exception as e:  # a kernel that does not support this case: not a finding on the model
            self.failures[node] = f"{type(e).__name__}: {e}"[:300]
            return [NOT_CONST] * n_out, None
        self.stats.evaluations += 1
        result: list[Any] = []
        for i in range(n_out):
            x = outs[i] if i < len(outs) else NOT_CONST
            x = self._normalize(node, i, x)
            size = tensors.nbytes(x) if x is not NOT_CONST else 0
            if size > self.size_cap:
                x = NOT_CONST
            self.stats.largest = max(self.stats.largest, size)
            result.append(x)
        return result, None

    def _normalize(self, node: Node, i: int, x: Any) -> Any:
        """numpy scalars as 0-d arrays, and the element type inference gave the output (kernels may widen)."""
        if isinstance(x, (np.generic, int, float, bool)):
            x = np.asarray(x)
        if isinstance(x, np.ndarray) and self.refiner is not None and node.outputs[i] is not None:
            ty = self.refiner.type_of(node.outputs[i])
            if isinstance(ty, TensorType) and ty.elem is not None and x.dtype != object:
                try:
                    want = np.dtype(_np_dtype(ty.elem))
                except Exception:
                    return x
                if want != x.dtype and want.kind in "biuf" and x.dtype.kind in "biuf":
                    x = x.astype(want)
        return x

    def _refusal(self, node: Node, args: list[Any]) -> str:
        """Why the node must not run on these values ("" when it may)."""
        op = node.op_type
        if op == "Loop":
            trip = args[0] if args else None
            if not (isinstance(trip, np.ndarray) and trip.size == 1 and 0 <= int(trip.reshape(-1)[0]) <= LOOP_LIMIT):
                return f"a Loop needs a trip count of at most {LOOP_LIMIT}"
        why = self._static_refusal(node)
        if why:
            return why
        if node.subgraphs or node.function is not None:
            why = self._nested_refusal(node) or self._call_refusal(node)
            if why:
                return why
        if op == "Dropout" and len(args) > 2 and isinstance(args[2], np.ndarray) and bool(args[2].reshape(-1)[0]):
            ratio = args[1] if len(args) > 1 and isinstance(args[1], np.ndarray) else None
            if ratio is None or float(ratio.reshape(-1)[0]) != 0.0:
                return "non-deterministic: Dropout in training mode"
        return ""

    def _static_refusal(self, node: Node) -> str:
        """Why the node's attributes alone forbid running it (work they set without bound), or ""."""
        if node.op_type == "TfIdfVectorizer" and node.domain == "":
            return _tfidf_refusal(self.attributes(node))
        return ""

    def _nested_refusal(self, node: Node) -> str:
        """`_static_refusal` of any node in the node's bodies and in the functions it calls, however deep: onnx
        builds a body's kernels when it runs it, out of the runner's sight."""
        return next((why for n in _within(node) if (why := self._static_refusal(n))), "")

    def _bound(self, node: Node, args: list[Any]) -> int | None:
        """The bytes the outputs will take: from their inferred types, else a per-op estimate."""
        total = 0
        for out in node.outputs:
            if out is None:
                continue
            ty = self.refiner.type_of(out) if self.refiner is not None else None
            size = tensors.type_bytes(ty)
            if size is None:
                return _estimate(node, args)
            total += size
        return total

    def _kernel(self, node: Node, args: list[Any], outer: dict[str, Any]) -> list[Any]:
        version = node.version or 1
        if node.function is None and node.domain == "" and node.op_type in kernels.KERNELS and not outer:
            out = kernels.KERNELS[node.op_type](args, self.attributes(node), version)
            if out is not NotImplemented:
                self.stats.own_kernel += 1
                return list(out)
        if not outer and node.function is None and not node.subgraphs and node.domain == "":
            first = unimplemented.lacks(node.op_type, version)
            if first is not None:  # what onnx.reference would raise, without importing it
                raise RuntimeError(f"{unimplemented.NO_IMPLEMENTATION} {node.op_type!r} before version {first}")
        from graphlsp.runner.reference import run_node

        proto = self._proto(node)
        opsets = dict(self.model.opset_imports)
        if node.function is not None:
            opsets.update(node.function.opset_imports)
            opsets.setdefault(node.domain, 1)
        if node.op_type == "Scatter" and node.domain == "":  # deprecated for ScatterElements, which it is
            proto.op_type, version = "ScatterElements", 11
            opsets[""] = max(opsets.get("", 11), 11)
        self.stats.reference += 1
        functions = self._function_protos(node) if node.function is not None or node.subgraphs else []
        outs = run_node(proto, args, version, opsets, outer, functions, Budget(self.size_cap))
        if node.op_type == "Loop":
            outs = [self._loop_scan_shape(node, i, x) for i, x in enumerate(outs)]
        return outs

    def _loop_scan_shape(self, node: Node, i: int, x: Any) -> Any:
        """onnx.reference stacks a Loop's scalar scan outputs as [N, 1]; inference knows they are [N]."""
        out = node.outputs[i] if i < len(node.outputs) else None
        shape = tensors.static_shape(self.refiner.type_of(out)) if out is not None and self.refiner else None
        if isinstance(x, np.ndarray) and shape is not None and x.shape != shape and x.size == math.prod(shape):
            return x.reshape(shape)
        return x

    def attributes(self, node: Node) -> dict[str, Any]:
        """The node's attributes as Python values, with the schema's defaults and bound `@refs`; a tensor
        attribute is decoded when it is within the size cap."""
        cached = self._attrs.get(node)
        if cached is None or cached[0] is not node.attributes:
            attrs = attribute_values(node.attributes)
            for name, x in attrs.items():
                if isinstance(x, Tensor):
                    attrs[name] = self._decode(x)
            sig = signature(node.op_type, node.version, node.domain) if node.version is not None else None
            if sig is not None:
                for name, spec in sig.attrs.items():
                    if attrs.get(name) is None and spec.default is not None:
                        attrs[name] = spec.default
            cached = self._attrs[node] = (node.attributes, attrs)
        attrs = cached[1]
        if any(isinstance(x, Ref) for x in attrs.values()):
            bound = self._binding()
            attrs = {k: (bound.get(x.name) if isinstance(x, Ref) else x) for k, x in attrs.items()}
        return attrs

    def _decode(self, tensor: Tensor) -> Any:
        if tensor.nbytes > self.size_cap:
            return None
        try:
            return tensor.numpy()
        except Exception:
            return None

    def _binding(self) -> dict[str, Any]:
        stack = getattr(self.refiner, "_bindings", None)
        return stack[-1] if stack else {}

    def _proto(self, node: Node) -> Any:
        from graphlsp.binary.write import node_proto

        return node_proto(node, self._binding() if any(isinstance(a.value, Ref) for a in node.attributes.values())
                          else None, embed=True)  # fmt: skip

    def _function_protos(self, node: Node) -> list[Any]:
        """The FunctionProtos of the model-local functions the node can reach (onnx's evaluator builds one
        evaluator per function it is given, and hands each the others: never the whole model's)."""
        from graphlsp.binary.write import WriteError, function_proto

        reached = self._reached(node)
        if reached is None:
            return []
        out = []
        for key in sorted(reached[1]):
            proto = self._function_proto.get(key)
            if proto is None:
                fn = self.model.functions.get(key)
                if fn is None:
                    continue
                try:
                    proto = self._function_proto[key] = function_proto(fn, embed=True)
                except WriteError:
                    continue
            out.append(proto)
        return out

    def _call_refusal(self, node: Node) -> str:
        reached = self._reached(node)
        if reached is None:
            return "a function calls itself"
        depth, keys = reached
        if depth > CALL_DEPTH:
            return f"function calls nested {depth} deep (at most {CALL_DEPTH} are evaluated)"
        if len(keys) > CALLED_FUNCTIONS:
            return f"{len(keys)} functions reached (at most {CALLED_FUNCTIONS} are evaluated)"
        return ""

    def _reached(self, node: Node) -> tuple[int, frozenset[Any]] | None:
        """(how deep function calls nest from the node, through bodies too; the keys of every model-local
        function reached), or None when a function reaches itself. Per function, memoized; no recursion, so a
        chain of thousands of functions costs one walk."""
        calls = _direct_calls([node])
        depth, keys = 0, set[Any]()
        for key in calls:
            got = self._function_calls(key)
            if got is None:
                return None
            depth = max(depth, got[0])
            keys |= got[1]
        return depth, frozenset(keys)

    def _function_calls(self, root: Any) -> tuple[int, frozenset[Any]] | None:
        memo = self._calls
        if root in memo:
            return memo[root]
        functions = self.model.functions
        stack: list[tuple[Any, bool]] = [(root, False)]
        on_path: set[Any] = set()
        while stack:
            key, done = stack.pop()
            if done:
                on_path.discard(key)
                fn = functions.get(key)
                subs = _direct_calls(fn.body.nodes) if fn is not None and fn.body is not None else set()
                result: tuple[int, frozenset[Any]] | None = (1, frozenset({key}))
                for sub in subs:
                    got = memo.get(sub)
                    if got is None:
                        result = None
                        break
                    assert result is not None
                    result = (max(result[0], got[0] + 1), result[1] | got[1])
                memo[key] = result
                continue
            if key in memo:
                continue
            if key in on_path:
                memo[key] = None  # a cycle: the function reaches itself
                continue
            on_path.add(key)
            stack.append((key, True))
            fn = functions.get(key)
            if fn is not None and fn.body is not None:
                stack.extend((sub, False) for sub in _direct_calls(fn.body.nodes) if sub not in memo)
        return memo.get(root)


def _within(node: Node, seen: set[Any] | None = None) -> Iterator[Node]:
    """Every node inside the node: in its subgraphs and in the bodies of the functions called, however deep, each
    function's body once (no recursion); `seen` collects the keys of those functions."""
    seen = set() if seen is None else seen
    stack = [node]
    while stack:
        n = stack.pop()
        if n is not node:
            yield n
        for graphs in n.subgraphs.values():
            for g in graphs:
                stack.extend(g.nodes)
        fn = n.function
        if fn is not None and fn.body is not None and fn.key not in seen:
            seen.add(fn.key)
            stack.extend(fn.body.nodes)


def _direct_calls(nodes: list[Node]) -> set[Any]:
    """Keys of the model-local functions called by the nodes or inside their subgraphs (not inside the functions)."""
    keys: set[Any] = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if n.function is not None and n.function.body is not None:
            keys.add(n.function.key)
        for graphs in n.subgraphs.values():
            for g in graphs:
                stack.extend(g.nodes)
    return keys


class _Pending:
    pass


class _Big:
    """A computed value too large to keep: what it was, to tell whether it changed after an edit."""

    __slots__ = ("key",)

    def __init__(self, value: Any) -> None:
        self.key = _fingerprint(value)


def _fingerprint(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        data = value.tobytes() if value.dtype != object else repr(value.tolist()).encode()
        return (value.dtype.str, value.shape, hash(data))
    if isinstance(value, list):
        return ("seq", tuple(_fingerprint(x) for x in value))
    return ("other", repr(value)[:200])


def _same_answer(old: Any, new: Any) -> bool:
    if old is NOT_CONST or new is NOT_CONST:
        return old is new
    if isinstance(old, _Big):
        return old.key == _fingerprint(new)
    if isinstance(old, np.ndarray) and isinstance(new, np.ndarray):
        if old.dtype != new.dtype or old.shape != new.shape:
            return False
        return bool(np.array_equal(old, new, equal_nan=old.dtype.kind == "f"))
    return _fingerprint(old) == _fingerprint(new)


_PENDING: Any = _Pending()


def _np_dtype(elem: int) -> Any:
    from graphlsp.graph.enums import tensor_dtype_to_np_dtype

    return tensor_dtype_to_np_dtype(elem)


def _shape_value(ty: Any, sv: tuple[Any, ...]) -> np.ndarray | None:
    """A shape value whose elements are all ints, as the tensor it stands for."""
    if not isinstance(ty, TensorType) or ty.elem is None or not all(isinstance(x, int) for x in sv):
        return None
    shape = tensors.static_shape(ty)
    if shape is None or math.prod(shape) != len(sv):
        return None
    try:
        dtype = _np_dtype(ty.elem)
    except Exception:
        return None
    if np.dtype(dtype).kind not in "iu":
        return None
    try:
        return np.array(sv, dtype=dtype).reshape(shape)
    except OverflowError:  # an element the dtype cannot hold: not a value this tensor can have
        return None


DESCRIBED = frozenset({"ConstantOfShape", "Expand", "Tile", "Range"})  # outputs sized by an input's values


def _tfidf_refusal(attrs: dict[str, Any]) -> str:
    """TfIdfVectorizer's pool ranges as onnxruntime checks them when it loads the model: onnx.reference's kernel
    walks each range in Python while it is built, so a count of 2**63 - 1 would never end."""
    pool = attrs.get("pool_int64s")
    if pool is None:
        pool = attrs.get("pool_strings")
    total = len(pool) if pool is not None else 0
    counts = [int(x) for x in attrs.get("ngram_counts") or []]
    for i, start in enumerate(counts):
        end = counts[i + 1] if i + 1 < len(counts) else total
        if not 0 <= start <= end <= total:
            return f"TfIdfVectorizer: ngram_counts out of the pool's bounds for {i + 1}-grams"
    indexes = [int(x) for x in attrs.get("ngram_indexes") or []]
    if any(x < 0 for x in indexes):
        return "TfIdfVectorizer: a negative ngram_indexes entry"
    return ""


def _iterated(node: Node, args: list[Any]) -> int | None:
    """A bound for a Loop, Scan or SequenceMap whose output types are not known: iterations times what each
    iteration can hold, when no body op can build a tensor larger than its inputs (None otherwise)."""
    body = [n for gs in node.subgraphs.values() for g in gs for n in g.all_nodes()]
    if any(n.op_type in GROWING or n.op_type in DESCRIBED or n.subgraphs for n in body):
        return None
    try:
        if node.op_type == "Loop":
            trips = int(np.asarray(args[0]).reshape(-1)[0])
        elif node.op_type == "SequenceMap":
            trips = len(args[0]) if isinstance(args[0], list) else 0
        else:
            trips = max((a.shape[0] for a in args if isinstance(a, np.ndarray) and a.ndim), default=1)
    except Exception:
        return None
    if not 0 <= trips <= LOOP_LIMIT:
        return None
    per_iteration = sum(tensors.nbytes(a) for a in args) + CACHE_LIMIT
    return max(trips, 1) * per_iteration


def _estimate(node: Node, args: list[Any]) -> int | None:
    """The output bytes of a node whose output types are not fully known, or None when they may explode."""
    op = node.op_type
    try:
        if op == "ConstantOfShape":
            return math.prod(int(x) for x in np.asarray(args[0]).reshape(-1)) * 8
        if op == "Expand":
            shape = np.broadcast_shapes(args[0].shape, tuple(int(x) for x in np.asarray(args[1]).reshape(-1)))
            return math.prod(shape) * args[0].dtype.itemsize
        if op == "Tile":
            return tensors.nbytes(args[0]) * math.prod(int(x) for x in np.asarray(args[1]).reshape(-1))
        if op == "Range":
            start, limit, delta = (float(np.asarray(a).reshape(-1)[0]) for a in args[:3])
            return max(math.ceil((limit - start) / delta), 0) * 8 if delta else None
    except Exception:
        return None
    if op in ("Loop", "Scan", "SequenceMap"):
        return _iterated(node, args)
    if op in GROWING:
        return None
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if len(arrays) >= 2 and all(a.dtype != object for a in arrays):
        try:  # element-wise ops broadcast: [N, 1] and [1, N] make N*N
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
            return max(math.prod(shape) * 8, sum(tensors.nbytes(a) for a in args))
        except ValueError:
            pass
    return sum(tensors.nbytes(a) for a in args)
