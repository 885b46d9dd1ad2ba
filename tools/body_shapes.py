"""Shapes inside If / Loop / Scan bodies judged against execution (a test-time oracle).

    python tools/body_shapes.py [--json OUT] [--show N] [--timeout S] MODEL...
    python tools/body_shapes.py --node-tests [NAME_SUBSTRING ...]

`../shared/tools/runtime_shapes.py` judges the values of a model's main graph; this judges the values computed
inside the bodies of its control-flow nodes (If branches, Loop and Scan bodies, and bodies nested in those), on the
branch actually taken, at every iteration. For each model:

1. Runs. The graph inputs are fed as runtime_shapes.py feeds them (the same candidate assignments of the input
   symbols, tried in order, the same random floats and small ints, masks of ones, position ids as a range) until
   two runs succeed that differ in every symbol, are not degenerate (a Conv or pooling window of the main graph
   larger than its padded input) and agree with onnxruntime (below). That is one scenario; a model with control
   inputs gets two: every bool scalar input True, then False; an `sr` / sample rate input 16000, then 8000. So both
   sides of an If on `use_cache_branch` (optimum's merged decoders) or on the sample rate (silero) are run. With
   --node-tests, each of onnx's node test cases that has a subgraph runs once, on its own inputs.
2. Truth. Each run executes in `onnx.reference.ReferenceEvaluator`, whose subgraph evaluators are subclassed to
   keep every intermediate result of every body run: each node output of each body is recorded with its dtype and
   shape each time the body runs (every Loop / Scan iteration, every taken branch, in nested bodies too). The same
   feeds run in onnxruntime with every main-graph node output exposed; a run whose main-graph values (shape and
   dtype of each, and the values of the conditions and trip counts fed to If and Loop) differ between the two
   engines is not used, so a reference-evaluator bug does not become the truth (a node test is checked against its
   expected outputs instead where onnxruntime cannot load it). Values that are not tensors at run time (sequences,
   absent optionals) are not counted; body inputs are not counted (node outputs only, as runtime_shapes.py does).
3. Judge. graphlsp's types are read in-process (`ModelAnalysis` on `read_model`, or `Analysis` on text): the
   refiner keeps the types of body values after inference (a Loop body's from its last, stable round; a branch a
   known condition rules out is forgotten). Each body value observed at run time is judged over every run in which
   it ran, like runtime_shapes.py:
     EXACT    rank right and every dim evaluates (under the run's assignment of the input symbols) to the runtime
              size, or is unresolved where the runtime size differs between iterations of one run (no fixed dim
              is right there);
     PARTIAL  rank right, no dim contradicted, some dim unresolved (null, or a symbol that is no input symbol)
              where the runtime size is the same at every iteration;
     UNKNOWN  no type, or unknown rank (EXACT when the rank itself differs between iterations);
     WRONG    rank differs, a dim evaluates to another number (or to a number where the size differs between
              iterations), or the dtype differs.
   A value that ran in only one run is still judged (and counted apart: a dim that equals a constant in that one
   run proves less). Values of a branch that never ran are not judged.
4. One line per model: body values judged, E/P/U/W, the runs; then the WRONG values (--show). Exit 1 if any WRONG.

What it does not cover: bodies of function calls (model-local functions and schema function bodies are expanded
by graphlsp, not judged here), ops outside onnx's reference implementation (com.microsoft contrib ops) in a
model with a body, and Scan with axes or directions the reference implementation refuses.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import signal
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import onnx

CLASSES = "EPUW"
GRAPH, GRAPHS = onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS


# ---------------------------------------------------------------- bodies
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


# ---------------------------------------------------------------- dim evaluation (as runtime_shapes.py)
class Unresolved(Exception):
    pass


class Unparsed(Exception):
    pass


def _looks_like_name(text: str) -> bool:
    return not re.search(r"[+*/()]|\s-\s", text)


class Evaluator:
    """Evaluates graphlsp's dim texts (int, symbol, expression) under an assignment of the input symbols."""

    def __init__(self, symbols: list[str]):
        self.odd = sorted((s for s in symbols if not s.isidentifier()), key=len, reverse=True)
        self.parsed: dict[str, Any] = {}

    def _parse(self, text: str) -> Any:
        if text in self.parsed:
            return self.parsed[text]
        ph: dict[str, str] = {}

        def quoted(m: re.Match) -> str:
            key = f"__q{len(ph)}__"
            ph[key] = m.group(1)
            return key

        s = re.sub(r'"([^"]*)"', quoted, text)
        for name in self.odd:
            pat = r"(?<![A-Za-z0-9_.])" + re.escape(name) + r"(?![A-Za-z0-9_.])"
            s2 = re.sub(pat, f"__q{len(ph)}__", s)
            if s2 != s:
                ph[f"__q{len(ph)}__"] = name
                s = s2
        try:
            out: Any = (ast.parse(s.strip(), mode="eval").body, ph)
        except (SyntaxError, ValueError, RecursionError):
            out = None
        self.parsed[text] = out
        return out

    def eval(self, dim: Any, env: dict[str, int]) -> Fraction | None:
        """A number, or None (unresolved)."""
        if dim is None or isinstance(dim, bool):
            return None
        if isinstance(dim, int):
            return Fraction(dim)
        if dim in env:
            return Fraction(env[dim])
        parsed = self._parse(dim)
        if parsed is None:
            return None
        tree, ph = parsed
        try:
            return self._ev(tree, env, ph)
        except (Unresolved, Unparsed, ZeroDivisionError, OverflowError, ValueError, TypeError, RecursionError):
            return None

    def _ev(self, node: ast.AST, env: dict[str, int], ph: dict[str, str]) -> Fraction:
        def ev(n: ast.AST) -> Fraction:
            return self._ev(n, env, ph)

        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return Fraction(str(node.value))
        if isinstance(node, ast.Name):
            name = ph.get(node.id, node.id)
            if name in env:
                return Fraction(env[name])
            raise Unresolved
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            op = node.op
            if isinstance(op, ast.Add):
                return a + b
            if isinstance(op, ast.Sub):
                return a - b
            if isinstance(op, ast.Mult):
                return a * b
            if isinstance(op, ast.Div):
                return a / b
            if isinstance(op, ast.FloorDiv):
                return Fraction(math.floor(a / b))
            if isinstance(op, ast.Mod):
                return a - b * math.floor(a / b)
            if isinstance(op, ast.Pow) and b.denominator == 1 and abs(b) <= 64:
                return a ** int(b)
            raise Unparsed
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            f = node.func.id.lower()
            args = [ev(a) for a in node.args]
            if f == "floor" and len(args) == 1:
                return Fraction(math.floor(args[0]))
            if f in ("ceil", "ceiling") and len(args) == 1:
                return Fraction(math.ceil(args[0]))
            if f == "min" and args:
                return min(args)
            if f == "max" and args:
                return max(args)
            if f == "mod" and len(args) == 2:
                return args[0] - args[1] * math.floor(args[0] / args[1])
            raise Unparsed
        raise Unparsed


# ---------------------------------------------------------------- feeds (as runtime_shapes.py)
_PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89]
_SMALL_B = [3, 4, 6, 8, 9, 10, 12, 14, 15, 16, 18, 20, 21, 22, 24, 25, 26, 27, 28, 30, 32, 33, 34, 35]
CANDIDATES: list[tuple[str, list[int] | None, list[int]]] = [
    ("small-a", None, _PRIMES),
    ("small-b", None, _SMALL_B),
    ("odd-a", _PRIMES, [67 + 18 * k for k in range(24)]),
    ("odd-b", _SMALL_B, [75 + 18 * k for k in range(24)]),
    ("mid-a", _PRIMES, [32 * k for k in _PRIMES]),
    ("mid-b", _SMALL_B, [32 * k for k in _SMALL_B]),
    ("mid-c", [4, 5, 7, 9, 11, 13, 17, 19, 23, 29, 31, 37], [16 * k for k in (3, 5, 7, 9, 11, 13, 15, 17, 19, 21)]),
    ("large-a", _PRIMES, [512 + 64 * k for k in range(24)]),
    ("large-b", _SMALL_B, [576 + 64 * k for k in range(24)]),
]
WINDOW_OPS: dict[str, int | None] = {"Conv": 1, "ConvInteger": 1, "QLinearConv": 3, "MaxPool": None,
                                     "AveragePool": None, "LpPool": None}  # fmt: skip
_SR = ("sr", "sample_rate", "sampling_rate")


def input_symbols(model: onnx.ModelProto) -> tuple[list[tuple[str, int, list]], dict[str, dict[str, bool]]]:
    """(inputs, symbols): inputs [(name, elem_type, dims)], dims entries int | ('sym', name) | ('expr', text)."""
    g = model.graph
    inits = {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    inputs: list[tuple[str, int, list]] = []
    symbols: dict[str, dict[str, bool]] = {}
    for vi in g.input:
        if vi.name in inits:
            continue
        if vi.type.WhichOneof("value") != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
            raise RuntimeError(f"input {vi.name} is not a tensor of known rank")
        tt = vi.type.tensor_type
        dims: list = []
        for i, dm in enumerate(tt.shape.dim):
            if dm.HasField("dim_value") and dm.dim_value >= 0:
                dims.append(int(dm.dim_value))
                continue
            if dm.HasField("dim_param") and dm.dim_param:
                names = _expr_symbols(dm.dim_param)
                if names:
                    for n in names:
                        symbols.setdefault(n, {"batch": False, "fresh": False})
                    dims.append(("expr", dm.dim_param))
                    continue
                name, fresh = dm.dim_param, False
            else:
                name, fresh = f"?{vi.name}:{i}", True
            s = symbols.setdefault(name, {"batch": False, "fresh": fresh})
            s["batch"] = s["batch"] or i == 0
            dims.append(("sym", name))
        inputs.append((vi.name, tt.elem_type, dims))
    return inputs, symbols


def _expr_symbols(text: str) -> list[str] | None:
    if text.isidentifier() or not re.search(r"[0-9*+]", text):
        return None
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return None
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    ok = all(isinstance(n, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop,
                            ast.expr_context)) for n in ast.walk(tree))  # fmt: skip
    return names if ok and names and not isinstance(tree, ast.Name) else None


def assignment(symbols: dict[str, dict[str, bool]], cand: tuple, merge: bool) -> dict[str, int] | None:
    _, batch_vals, other_vals = cand
    if merge and sum(1 for s in symbols.values() if s["fresh"]) < 2:
        return None
    env: dict[str, int] = {}
    ib = io = 0
    merged = None
    for n, info in symbols.items():
        if merge and info["fresh"] and merged is not None:
            env[n] = merged
            continue
        if batch_vals is not None and info["batch"] and not (merge and info["fresh"]):
            v = batch_vals[ib % len(batch_vals)]
            ib += 1
        else:
            v = other_vals[io % len(other_vals)]
            io += 1
        env[n] = v
        if merge and info["fresh"]:
            merged = v
    return env


def control_inputs(inputs: list[tuple[str, int, list]]) -> list[str]:
    """Scalar inputs that select a branch: bools of one element, and a sample rate."""
    out = []
    for name, elem, dims in inputs:
        one = all(x == 1 for x in dims)
        if one and (elem == onnx.TensorProto.BOOL or name.lower() in _SR or name.lower().endswith("sample_rate")):
            out.append(name)
    return out


def make_feeds(inputs: list, env: dict[str, int], rng: np.random.Generator, variant: int,
               scenario: int) -> dict[str, np.ndarray]:  # fmt: skip
    feeds = {}
    ev = Evaluator(list(env))
    for name, elem, dims in inputs:
        shape = []
        for dm in dims:
            if isinstance(dm, int):
                shape.append(dm)
            elif dm[0] == "sym":
                shape.append(env[dm[1]])
            else:
                v = ev.eval(dm[1], env)
                if v is None or v.denominator != 1 or v < 0:
                    raise RuntimeError(f"input {name}: dim {dm[1]} evaluates to {v}")
                shape.append(int(v))
        np_type = onnx.helper.tensor_dtype_to_np_dtype(elem)
        low = name.lower()
        arr: np.ndarray
        if np.issubdtype(np_type, np.floating):
            arr = rng.standard_normal(shape).astype(np_type)
        elif np_type == np.bool_:
            if all(x == 1 for x in shape):
                arr = np.full(shape, scenario == 0, dtype=np.bool_)
            else:
                arr = rng.integers(0, 2, shape).astype(np.bool_)
        elif np.issubdtype(np_type, np.integer):
            if "mask" in low:
                arr = np.ones(shape, dtype=np_type)
            elif "position_ids" in low and shape:
                arr = np.broadcast_to(np.arange(shape[-1]), shape).astype(np_type)
            elif low in _SR or low.endswith("sample_rate"):
                arr = np.full(shape, 8000 if scenario == 1 else 16000, dtype=np_type)
            elif variant == 2:
                arr = np.zeros(shape, dtype=np_type)
            else:
                arr = rng.integers(0, 4, shape).astype(np_type)
        elif elem == onnx.TensorProto.STRING:
            arr = np.full(shape, "a", dtype=object)
        else:
            raise RuntimeError(f"input {name}: unsupported element type {elem}")
        feeds[name] = arr
    return feeds


def degenerate(model: onnx.ModelProto, values: dict[str, list[int]], feeds: dict, init_dims: dict) -> str | None:
    """A Conv or pooling node of the main graph whose window is larger than its padded input."""

    def shape(name: str) -> list[int] | None:
        if name in values:
            return values[name]
        if name in feeds:
            return list(feeds[name].shape)
        return init_dims.get(name)

    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx") or node.op_type not in WINDOW_OPS:
            continue
        xs = shape(node.input[0]) if node.input else None
        if not xs or len(xs) < 3:
            continue
        nsp = len(xs) - 2
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        kernel = attrs.get("kernel_shape")
        widx = WINDOW_OPS[node.op_type]
        if kernel is None and widx is not None and len(node.input) > widx:
            ws = shape(node.input[widx])
            kernel = ws[2:] if ws else None
        if not kernel or len(kernel) != nsp:
            continue
        auto = attrs.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else str(auto)
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            continue
        pads = [0] * (2 * nsp) if auto == "VALID" else list(attrs.get("pads", [0] * (2 * nsp)))
        dil = list(attrs.get("dilations", [1] * nsp))
        for i in range(nsp):
            if xs[2 + i] + pads[i] + pads[i + nsp] < dil[i] * (kernel[i] - 1) + 1:
                return f"{node.op_type} {node.name or node.output[0]}: window larger than its input"
    return None


# ---------------------------------------------------------------- the two engines
def _elem_name(dtype: np.dtype) -> str:
    try:
        return onnx.TensorProto.DataType.Name(onnx.helper.np_dtype_to_tensor_dtype(dtype)).lower()
    except Exception:  # noqa: BLE001
        return str(dtype)


class Recorder:
    """What the body runs computed: (tag, value) -> per run, the set of (dtype, shape) observed."""

    def __init__(self, table: dict[str, Body]) -> None:
        self.table = table
        self.run = -1
        self.seen: dict[tuple[str, str], dict[int, set[tuple[str, tuple[int, ...]]]]] = {}
        self.frames = 0
        self.not_tensor: set[tuple[str, str]] = set()

    def record(self, tag: str, results: dict[str, Any]) -> None:
        self.frames += 1
        for name in self.table[tag].outputs:
            if name not in results:
                continue
            v = results[name]
            if not isinstance(v, np.ndarray):
                if isinstance(v, np.generic):
                    v = np.asarray(v)
                else:
                    self.not_tensor.add((tag, name))
                    continue
            per_run = self.seen.setdefault((tag, name), {})
            per_run.setdefault(self.run, set()).add((_elem_name(v.dtype), tuple(int(x) for x in v.shape)))


def fixed_ops() -> list[type]:
    """onnx.reference's ops where they are wrong about shapes. onnx 1.23's Loop stacks scan outputs with
    `np.vstack`, which concatenates per-iteration tensors of rank >= 2 ([T*B, 8] for T iterations of [B, 8]) and
    turns scalars into [T, 1]; onnxruntime and the spec stack them on a new axis ([T, B, 8], [T])."""
    from onnx.reference.ops.op_loop import Loop as RefLoop

    class Loop(RefLoop):
        def _run(self, M: Any, cond: Any, *args: Any, context: Any = None, body: Any = None, attributes: Any = None,
                 bindings: Any = None) -> Any:  # fmt: skip
            body = self.body  # type: ignore[attr-defined]
            names_in, names_out = body.input_names, body.output_names
            inputs: dict[str, Any] = dict.fromkeys(names_in)
            for name, val in zip(names_in[2:], args, strict=False):
                inputs[name] = val
            if context is not None:
                inputs.update(context)
                for name, val in zip(names_in[2:], args, strict=False):
                    inputs[name] = val
            scans: list[list[Any]] = [[] for _ in range(self.K)]
            it = 0
            outputs: list[Any] = []
            if cond is None:
                cond = np.array(True)  # no condition input: the body sees true (onnxruntime's behaviour)
            while (cond is None or bool(np.asarray(cond).reshape(-1)[0])) and (M is None or it < int(M)):
                if names_in and names_in[0]:
                    inputs[names_in[0]] = np.array(it, dtype=np.int64 if M is None else M.dtype)
                if len(names_in) > 1 and names_in[1]:
                    inputs[names_in[1]] = cond
                outputs = self._run_body(inputs, attributes=attributes, bindings=bindings)  # type: ignore[attr-defined]
                for k in range(self.K):
                    scans[k].append(outputs[-self.K + k])
                cond = outputs[self.output_index[names_out[0]]]
                for i, o in zip(names_in[2:], names_out[1:], strict=False):
                    inputs[i] = outputs[self.output_index[o]]
                it += 1
            final = [inputs[i] for i in names_in[2:]] if it == 0 else list(outputs[1 : 1 + self.N])
            if any(not x for x in scans):
                raise RuntimeError("a Loop with scan outputs ran no iteration (their shape is unknown)")
            final += [np.stack(x) for x in scans]
            return self._check_and_fix_outputs(tuple(final))

    return [Loop]


def recording_evaluator(recorder: Recorder) -> type:
    from onnx.reference import ReferenceEvaluator

    class RecordingEvaluator(ReferenceEvaluator):
        """Subgraph evaluators are built with the class of their parent, so every body runs through this."""

        def run(  # type: ignore[override]
            self, output_names: Any, feed_inputs: Any, attributes: Any = None, intermediate: bool = False, **kw: Any
        ) -> Any:
            proto = self.proto_
            tag = proto.name if isinstance(proto, onnx.GraphProto) else None
            if tag is None or tag not in recorder.table or intermediate:
                return super().run(output_names, feed_inputs, attributes, intermediate, **kw)
            results: Any = super().run(None, feed_inputs, attributes, True, **kw)
            recorder.record(tag, results)
            return [results[n] for n in (output_names or self.output_names)]

    return RecordingEvaluator


def main_node_outputs(model: onnx.ModelProto) -> list[str]:
    return list(dict.fromkeys(o for n in model.graph.node for o in n.output if o))


def control_values(model: onnx.ModelProto) -> set[str]:
    """Main-graph values that steer a body: If conditions, Loop trip counts and conditions."""
    out: set[str] = set()
    for n in model.graph.node:
        if n.domain in ("", "ai.onnx") and n.op_type in ("If", "Loop"):
            out.update(x for x in n.input[: 1 if n.op_type == "If" else 2] if x)
    return out


class Timeout(Exception):
    pass


def _alarm(seconds: float) -> None:
    def fire(*_: Any) -> None:
        raise Timeout(f"timed out after {seconds:.0f}s")

    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, fire)
        signal.setitimer(signal.ITIMER_REAL, seconds)


def _disarm() -> None:
    if hasattr(signal, "SIGALRM"):
        signal.setitimer(signal.ITIMER_REAL, 0)


def _short(e: BaseException, n: int = 160) -> str:
    s = re.sub(r"\[ONNXRuntimeError\] : \d+ : \w+ : ", "", str(e).strip().replace("\n", " "))
    return (type(e).__name__ + ": " + s)[:n]


class Engines:
    """onnxruntime (every main-graph node output exposed) and the recording reference evaluator, on one model."""

    def __init__(self, model: onnx.ModelProto, table: dict[str, Body], tagged: onnx.ModelProto) -> None:
        import onnxruntime as ort

        ort.set_default_logger_severity(4)
        self.model = model
        self.names = main_node_outputs(model)
        self.control = control_values(model)
        self.sess = None
        self.ort_error = ""
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 4
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        m2 = onnx.ModelProto()
        m2.CopyFrom(model)
        have = {o.name for o in m2.graph.output}
        m2.graph.output.extend(onnx.ValueInfoProto(name=n) for n in self.names if n not in have)
        for mm in (m2, model):
            try:
                self.sess = ort.InferenceSession(mm.SerializeToString(), so, providers=["CPUExecutionProvider"])
                break
            except Exception as e:  # noqa: BLE001
                self.ort_error = _short(e)
        self.recorder = Recorder(table)
        self.ref = recording_evaluator(self.recorder)(tagged, new_ops=fixed_ops())

    def ort(self, feeds: dict) -> dict[str, Any]:
        assert self.sess is not None
        outs = [o.name for o in self.sess.get_outputs()]
        return dict(zip(outs, self.sess.run(outs, feeds), strict=True))

    def reference(self, feeds: dict, run: int) -> dict[str, Any]:
        self.recorder.run = run
        return self.ref.run(None, feeds, intermediate=True)

    def disagreement(self, ort_vals: dict[str, Any], ref_vals: dict[str, Any]) -> str | None:
        """Where the reference evaluator and onnxruntime differ on the main graph (None: they agree)."""
        for n, a in ort_vals.items():
            if not isinstance(a, np.ndarray):
                continue
            b = ref_vals.get(n)
            if b is None or not hasattr(b, "shape"):
                return f"{n}: reference gives {type(b).__name__}"
            b = np.asarray(b)
            if tuple(a.shape) != tuple(b.shape) or _elem_name(a.dtype) != _elem_name(b.dtype):
                ours, theirs = f"{_elem_name(a.dtype)}{list(a.shape)}", f"{_elem_name(b.dtype)}{list(b.shape)}"
                return f"{n}: onnxruntime {ours}, reference {theirs}"
            if n in self.control and not np.array_equal(a, b):
                return f"{n}: onnxruntime {a.tolist()}, reference {b.tolist()} (steers a body)"
        return None


# ---------------------------------------------------------------- graphlsp's types
def graphlsp_types(model: onnx.ModelProto, path: str | None, table: dict[str, Body]) -> dict[tuple[str, str], Any]:
    """(tag, value name) -> (dtype, shape JSON) | None for every body node output graphlsp has."""
    from graphlsp.analysis import Analysis, ModelAnalysis
    from graphlsp.infer import dims as d
    from graphlsp.infer.types import TensorType, elem_name

    if path is not None and not path.endswith(".onnx"):
        with open(path, encoding="utf-8") as f:
            a: Any = Analysis(f.read())
    else:
        from graphlsp.binary.read import model_from_proto, read_model

        ir, _ = read_model(path) if path is not None else model_from_proto(model)
        a = ModelAnalysis(ir, [])
    out: dict[tuple[str, str], Any] = {}
    for tag, body in table.items():
        g = a.model.graph
        try:
            for i, attr, k in body.path:
                g = g.nodes[i].subgraphs[attr][k]
        except (IndexError, KeyError, AttributeError):
            continue
        for name in body.outputs:
            v = g.values.get(name)
            ty = a.refiner.type_of(v) if v is not None else None
            if ty is None:
                continue
            if not isinstance(ty, TensorType):
                out[(tag, name)] = ("not a tensor", None)
                continue
            shape = None if ty.shape is None else [d.to_json(x) for x in ty.shape]
            out[(tag, name)] = (elem_name(ty.elem) if ty.elem is not None else None, shape)
    return out


# ---------------------------------------------------------------- peers (--peers)
ORACLE_PY = os.environ.get("ORACLE_PY", os.path.join(os.environ.get("TMPDIR") or "/tmp", "gl-oracle", "venv", "bin",
                                                     "python"))  # fmt: skip
PEERS = ["onnx", "osi", "ortsym"]


def _vi_type(vi: onnx.ValueInfoProto) -> Any:
    t = vi.type
    if t.WhichOneof("value") != "tensor_type":
        return ("not a tensor", None) if t.WhichOneof("value") else None
    tt = t.tensor_type
    dt = onnx.TensorProto.DataType.Name(tt.elem_type).lower() if tt.elem_type else None
    if not tt.HasField("shape"):
        return (dt, None)
    dims: list[Any] = []
    for dm in tt.shape.dim:
        dims.append(int(dm.dim_value) if dm.HasField("dim_value") else (dm.dim_param or None))
    return (dt, dims)


def proto_body_types(model: onnx.ModelProto, table: dict[str, Body]) -> dict[str, dict[str, Any]]:
    """tag -> value -> (dtype, shape) from the value_info / outputs a peer wrote into each body."""
    out: dict[str, dict[str, Any]] = {}
    for tag, body in table.items():
        try:
            g = subgraph_at(model.graph, body.path)
        except (IndexError, StopIteration):
            continue
        outs = set(body.outputs)
        out[tag] = {vi.name: t for vi in [*g.value_info, *g.output] if vi.name in outs and (t := _vi_type(vi))}
    return out


def peer_types(peer: str, model: onnx.ModelProto, table: dict[str, Body]) -> dict[str, dict[str, Any]]:
    """Run in the oracle venv for osi and ortsym (see runtime_shapes.py --peers)."""
    if peer == "onnx":
        import onnx.shape_inference

        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
        return proto_body_types(inferred, table)
    if peer == "ortsym":
        import logging

        logging.disable(logging.WARNING)
        from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

        for auto_merge in (False, True):
            try:
                ssi = SymbolicShapeInference(2**31 - 1, auto_merge, False, 0)
                ssi._preprocess(model)
                while ssi.run_:
                    ssi._infer_impl()
                ssi._update_output_from_vi()
                return proto_body_types(ssi.out_mp_, table)
            except Exception:  # noqa: BLE001
                if auto_merge:
                    raise
        return {}
    import logging

    logging.disable(logging.WARNING)
    import onnx_ir as ir
    import onnx_shape_inference as osi

    irm = ir.from_proto(model)
    osi.infer_symbolic_shapes(irm, warn_on_missing=False)
    out: dict[str, dict[str, Any]] = {}
    for tag, body in table.items():
        g: Any = irm.graph
        try:
            for i, attr, k in body.path:
                a = list(g)[i].attributes[attr].value
                g = a[k] if isinstance(a, (list, tuple)) else a
        except (IndexError, KeyError, AttributeError):
            continue
        vals = {}
        for node in g:
            for v in node.outputs:
                if not v.name:
                    continue
                dt = v.dtype.name.lower() if v.dtype is not None else None
                shape = None if v.shape is None else [int(x) if isinstance(x, int) else x.value for x in v.shape]
                vals[v.name] = (dt, shape)
        out[tag] = vals
    return out


def run_peer(peer: str, path: str | None, model: onnx.ModelProto, table: dict[str, Body],
             timeout: float) -> tuple[dict[str, dict[str, Any]] | None, str]:  # fmt: skip
    """(types, error): onnx in this process, the others in the oracle venv (a subprocess)."""
    import subprocess
    import tempfile

    if peer == "onnx":
        try:
            return peer_types(peer, model, table), ""
        except Exception as e:  # noqa: BLE001
            return None, _short(e)
    if not os.path.exists(ORACLE_PY):
        return None, f"no oracle venv at {ORACLE_PY}"
    with tempfile.TemporaryDirectory(prefix="body_peer.") as tmp:
        src = path
        if src is None or not src.endswith(".onnx"):
            src = os.path.join(tmp, "model.onnx")
            onnx.save(model, src)
        out = os.path.join(tmp, "out.json")
        try:
            r = subprocess.run([ORACLE_PY, os.path.abspath(__file__), "--_peer", peer, os.path.abspath(src), out],
                               capture_output=True, text=True, timeout=timeout)  # fmt: skip
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout:.0f}s"
        if not os.path.exists(out):
            return None, ((r.stderr or r.stdout).strip().splitlines() or ["died"])[-1][:160]
        with open(out) as f:
            got = json.load(f)
    if "error" in got:
        return None, got["error"]
    return {tag: {n: tuple(t) for n, t in vals.items()} for tag, vals in got["types"].items()}, ""


def _peer_helper(peer: str, path: str, out: str) -> None:
    model = load_model(path)
    _, table = tagged_copy(model)
    try:
        res: dict[str, Any] = {"types": peer_types(peer, model, table)}
    except Exception as e:  # noqa: BLE001
        res = {"error": _short(e)}
    with open(out, "w") as f:
        json.dump(res, f)


# ---------------------------------------------------------------- judging
@dataclass
class Verdict:
    cls: str
    why: str = ""
    one_run: bool = False
    varying: bool = False  # some dim differs between iterations of one run


def judge(tool: Any, seen: dict[int, set[tuple[str, tuple[int, ...]]]], envs: list[dict[str, int]],
          ev: Evaluator) -> Verdict:  # fmt: skip
    runs = sorted(seen)
    one = len(runs) < 2
    ranks = {len(s) for r in runs for _, s in seen[r]}
    varying = len(ranks) > 1 or any(len({s[i] for _, s in seen[r]}) > 1 for r in runs for i in range(min(ranks)))
    if tool is None:
        return Verdict("U", one_run=one, varying=varying)
    dtype, shape = tool
    if dtype == "not a tensor":
        return Verdict("W", "kind", one, varying)
    dtypes = {dt for r in runs for dt, _ in seen[r]}
    if dtype is not None and any(dt != dtype for dt in dtypes):
        return Verdict("W", "dtype", one, varying)
    if shape is None:
        return Verdict("E" if len(ranks) > 1 else "U", one_run=one, varying=varying)
    if len(ranks) > 1 or len(shape) not in ranks:
        return Verdict("W", "rank", one, varying)
    cls = "E"
    for r in runs:
        for i, dm in enumerate(shape):
            sizes = {s[i] for _, s in seen[r]}
            v = ev.eval(dm, envs[r])
            if v is not None:
                if sizes != {v}:
                    return Verdict("W", f"dim {i}", one, varying)
            elif len(sizes) == 1:
                cls = "P"
    return Verdict(cls, one_run=one, varying=varying)


def fmt_shape(dtype: Any, shape: Any) -> str:
    if shape is None:
        return f"{dtype or '?'}[?rank]"
    return f"{dtype or '?'}[{', '.join('?' if x is None else str(x) for x in shape)}]"


def fmt_seen(seen: set[tuple[str, tuple[int, ...]]]) -> str:
    shapes = sorted({s for _, s in seen})
    text = " | ".join(str(list(s)) for s in shapes[:4]) + (f" | ... ({len(shapes)} shapes)" if len(shapes) > 4 else "")
    return f"{sorted({dt for dt, _ in seen})[0]} {text}"


@dataclass
class Result:
    model: str
    error: str = ""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    bodies: int = 0
    body_nodes: int = 0
    values: int = 0
    one_run: int = 0
    varying: int = 0
    runs: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # runs not used, and why
    wrong: list[dict[str, Any]] = field(default_factory=list)
    open: list[dict[str, Any]] = field(default_factory=list)  # PARTIAL and UNKNOWN values
    inconsistent: list[str] = field(default_factory=list)
    classes: dict[str, str] = field(default_factory=dict)
    per_body: dict[str, dict[str, int]] = field(default_factory=dict)
    peer_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    peer_errors: dict[str, str] = field(default_factory=dict)
    peer_classes: dict[str, dict[str, str]] = field(default_factory=dict)
    behind: list[str] = field(default_factory=list)  # values a peer resolves further than graphlsp
    time: float = 0.0


# ---------------------------------------------------------------- driver
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


MAX_RUNS = 4  # runs per scenario when a data-dependent branch ran in only one of the first two


def find_runs(model: onnx.ModelProto, eng: Engines, res: Result, timeout: float, deadline: float) -> list[dict]:
    """Two valid runs per scenario (see the module docstring), more (up to MAX_RUNS) while some body value ran in
    only one of them (a branch the data picks); returns [{env, try, scenario}]."""
    inputs, symbols = input_symbols(model)
    out: list[dict] = []
    scenarios = (0, 1) if control_inputs(inputs) else (0,)
    has_int = any(np.issubdtype(onnx.helper.tensor_dtype_to_np_dtype(e), np.integer) for _, e, _ in inputs)
    init_dims = {t.name: list(t.dims) for t in model.graph.initializer}

    def enough(good: list[dict]) -> bool:
        if len(good) < 2:
            return False
        if len(good) >= MAX_RUNS:
            return True
        mine = set(range(len(out), len(out) + len(good)))
        return all(len(mine & set(per_run)) != 1 for per_run in eng.recorder.seen.values())

    for scenario in scenarios:
        good: list[dict] = []
        tried: set = set()
        plan = [(reseed, variant, merge, cand) for reseed in (0, 1) for variant in ((0, 1, 2) if has_int else (0,))
                for merge in (False, True) for cand in CANDIDATES]  # fmt: skip
        for reseed, variant, merge, cand in plan:
            if enough(good) or time.monotonic() > deadline or (reseed and len(good) < 2):
                break  # reseed: the same sizes with other random data, for a branch the data picks
            env = assignment(symbols, cand, merge)
            if env is None:
                continue
            key = (reseed, variant, tuple(sorted(env.items())))
            if key in tried or (good and not all(good[0]["env"][k] != env[k] for k in env)):
                continue
            tried.add(key)
            label = (f"s{scenario}/{cand[0]}" + ("+merge" if merge else "") + (f"/ints{variant}" if variant else "")
                     + ("/reseed" if reseed else ""))  # fmt: skip
            rng = np.random.default_rng(1234 + len(tried))
            try:
                feeds = make_feeds(inputs, env, rng, variant, scenario)
                ort_vals = eng.ort(feeds)
            except Exception as e:  # noqa: BLE001
                res.skipped.append(f"{label}: onnxruntime {_short(e, 100)}")
                continue
            shapes = {n: list(v.shape) for n, v in ort_vals.items() if isinstance(v, np.ndarray)}
            bad = degenerate(model, shapes, feeds, init_dims)
            if bad:
                res.skipped.append(f"{label}: degenerate ({bad})")
                continue
            run = len(out) + len(good)
            _alarm(timeout)
            try:
                ref_vals = eng.reference(feeds, run)
            except Exception as e:  # noqa: BLE001
                _forget(eng.recorder, run)
                res.skipped.append(f"{label}: reference {_short(e, 100)}")
                continue
            finally:
                _disarm()
            why = eng.disagreement(ort_vals, ref_vals)
            if why:
                _forget(eng.recorder, run)
                res.skipped.append(f"{label}: reference and onnxruntime differ at {why}")
                continue
            good.append({"env": env, "try": label, "scenario": scenario})
        out += good
    return out


def _forget(rec: Recorder, run: int) -> None:
    for per_run in rec.seen.values():
        per_run.pop(run, None)


def evaluate(model: onnx.ModelProto, name: str, path: str | None = None, timeout: float = 300,
             feeds: dict[str, np.ndarray] | None = None, expected: list[np.ndarray] | None = None,
             peers: list[str] = ()) -> Result:  # type: ignore[assignment]  # fmt: skip
    """Judge graphlsp's body values of one model (and each of `peers`' on the same runs). `feeds` (with
    `expected` outputs, as onnx's node tests give them) runs once on those inputs instead of searching for two
    assignments."""
    t0 = time.monotonic()
    res = Result(name)
    tagged, table = tagged_copy(model)
    res.bodies = len(table)
    res.body_nodes = sum(len(g.node) for _, g in bodies(model.graph))
    if not table:
        res.error = "no subgraphs"
        return res
    try:
        eng = Engines(model, table, tagged)
    except Exception as e:  # noqa: BLE001
        res.error = f"reference evaluator cannot load it: {_short(e)}"
        return res
    if feeds is not None:
        runs = _fixed_run(eng, feeds, expected, res, timeout)
    else:
        if eng.sess is None:
            res.error = f"onnxruntime cannot load it: {eng.ort_error}"
            return res
        runs = find_runs(model, eng, res, timeout, t0 + timeout)
    res.runs = runs
    if not runs:
        res.error = "not runnable: " + (res.skipped[-1] if res.skipped else "no assignment")
        return res
    symbols = sorted({k for r in runs for k in r["env"]})
    ev = Evaluator(symbols)
    tool = graphlsp_types(model, path, table)
    envs = [r["env"] for r in runs]
    observed = {key: {r: s for r, s in seen.items() if r < len(runs)} for key, seen in eng.recorder.seen.items()}
    observed = {key: seen for key, seen in observed.items() if seen}
    for peer in peers:
        types, err = run_peer(peer, path, model, table, timeout)
        if types is None:
            res.peer_errors[peer] = err
            continue
        counts = res.peer_counts[peer] = dict.fromkeys(CLASSES, 0)
        for (tag, vname), seen in observed.items():
            pv = judge(types.get(tag, {}).get(vname), seen, envs, ev)
            counts[pv.cls] += 1
            res.peer_classes.setdefault(f"{table[tag].label}:{vname}", {})[peer] = pv.cls
    bare: dict[tuple[int, str], set[int]] = {}
    for (tag, vname), seen in observed.items():
        t = tool.get((tag, vname))
        v = judge(t, seen, envs, ev)
        res.counts[v.cls] += 1
        res.values += 1
        res.one_run += v.one_run
        res.varying += v.varying
        label = table[tag].label
        res.classes[f"{label}:{vname}"] = v.cls
        res.per_body.setdefault(label, dict.fromkeys(CLASSES, 0))[v.cls] += 1
        if v.cls in "PU":
            res.open.append({"body": label, "name": vname, "cls": v.cls, "graphlsp": fmt_shape(*(t or (None, None))),
                             "runtime": [fmt_seen(seen[r]) for r in sorted(seen)]})  # fmt: skip
        if v.cls == "W":
            res.wrong.append({"body": label, "name": vname, "why": v.why, "graphlsp": fmt_shape(*(t or (None, None))),
                              "runtime": [fmt_seen(seen[r]) for r in sorted(seen)]})  # fmt: skip
        if t is not None and t[1] is not None:
            for r, obs in seen.items():
                for i, dm in enumerate(t[1]):
                    if isinstance(dm, str) and dm not in envs[r] and _looks_like_name(dm):
                        bare.setdefault((r, dm), set()).update(s[i] for _, s in obs if len(s) > i)
    res.inconsistent = sorted({s for (_, s), sizes in bare.items() if len(sizes) > 1})
    rank = {"E": 2, "P": 1, "U": 0, "W": -1}
    for key, by_peer in res.peer_classes.items():
        mine = res.classes.get(key, "U")
        if mine != "W" and any(rank[c] > rank[mine] for c in by_peer.values()):
            res.behind.append(key)
    res.time = time.monotonic() - t0
    return res


def _fixed_run(eng: Engines, feeds: dict, expected: list | None, res: Result, timeout: float) -> list[dict]:
    _alarm(timeout)
    try:
        ref_vals = eng.reference(feeds, 0)
    except Exception as e:  # noqa: BLE001
        res.skipped.append(f"reference {_short(e)}")
        return []
    finally:
        _disarm()
    why = None
    if eng.sess is not None:
        try:
            why = eng.disagreement(eng.ort(feeds), ref_vals)
        except Exception as e:  # noqa: BLE001
            res.skipped.append(f"onnxruntime {_short(e, 100)} (checked against the expected outputs instead)")
    if expected is not None and why is None:
        for o, want in zip(eng.model.graph.output, expected, strict=False):
            got: Any = ref_vals.get(o.name)
            if isinstance(want, np.ndarray) and (not hasattr(got, "shape") or tuple(got.shape) != want.shape):
                why = f"output {o.name}: expected {list(want.shape)}, reference {getattr(got, 'shape', got)}"
    if why:
        _forget(eng.recorder, 0)
        res.skipped.append(f"reference and onnxruntime / expected outputs differ at {why}")
        return []
    env: dict[str, int] = {}
    clash: set[str] = set()
    for vi in eng.model.graph.input:  # a tensor input's dim_params take the sizes fed
        x = feeds.get(vi.name)
        if not isinstance(x, np.ndarray) or vi.type.WhichOneof("value") != "tensor_type":
            continue
        for dm, size in zip(vi.type.tensor_type.shape.dim, x.shape, strict=False):
            if dm.dim_param and env.setdefault(dm.dim_param, int(size)) != size:
                clash.add(dm.dim_param)
    return [{"env": {k: v for k, v in env.items() if k not in clash}, "try": "test inputs", "scenario": 0}]


def node_test_cases(filters: list[str]) -> Iterator[tuple[str, onnx.ModelProto, dict, list]]:
    """onnx's node test cases that have a subgraph (If, Loop, Scan, SequenceMap ...), with their inputs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases

        cases = collect_testcases()
    for case in cases:
        if filters and not any(f in case.name for f in filters):
            continue
        if case.model is None or not any(True for _ in bodies(case.model.graph)) or not case.data_sets:
            continue
        ins, outs = case.data_sets[0]
        names = [i.name for i in case.model.graph.input]
        yield case.name, case.model, dict(zip(names, ins, strict=False)), list(outs)


def print_result(r: Result, show: int, show_open: int = 0) -> None:
    if r.error:
        print(f"{r.model:<40} {r.bodies:>3} {r.body_nodes:>5} {'-':>6}  {r.error[:150]}", flush=True)
        return
    c = r.counts
    print(f"{r.model:<40} {r.bodies:>3} {r.body_nodes:>5} {r.values:>6}  {c['E']:>5} {c['P']:>5} {c['U']:>5} "
          f"{c['W']:>5}  {r.time:6.1f}s", flush=True)  # fmt: skip
    runs = "; ".join((", ".join(f"{k}={v}" for k, v in x["env"].items()) or "static") + f" ({x['try']})"
                     for x in r.runs)  # fmt: skip
    print(f"    runs: {runs}" + ("" if len(r.runs) >= 2 or r.runs[0]["try"] == "test inputs" else "  [ONE run only]"))
    notes = []
    if r.one_run and len(r.runs) > 1:
        notes.append(f"{r.one_run} values ran in one run only")
    if r.varying:
        notes.append(f"{r.varying} values change shape between iterations")
    if r.inconsistent:
        notes.append(f"inconsistent symbols: {', '.join(r.inconsistent[:4])}")
    if notes:
        print("    " + "; ".join(notes))
    notes = [f"{peer}: E/P/U/W {'/'.join(str(c[k]) for k in CLASSES)}" for peer, c in r.peer_counts.items()]
    notes += [f"{peer} failed: {e[:100]}" for peer, e in r.peer_errors.items()]
    if r.peer_counts or r.peer_errors:
        print("    peers: " + "; ".join(notes))
    if r.behind:
        print(f"    {len(r.behind)} values a peer resolves further: " + ", ".join(r.behind[:4]))
    for w in r.wrong[:show]:
        rt = " / ".join(w["runtime"])
        print(f"    WRONG ({w['why']}) {w['body']}: {w['name']}: graphlsp {w['graphlsp']}  runtime {rt}")
    if len(r.wrong) > show:
        print(f"    ... {len(r.wrong) - show} more WRONG")
    for o in r.open[:show_open]:
        rt = " / ".join(o["runtime"])
        print(f"    {o['cls']} {o['body']}: {o['name']}: graphlsp {o['graphlsp']}  runtime {rt}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_peer"]:
        _peer_helper(argv[1], argv[2], argv[3])
        return 0
    ap = argparse.ArgumentParser(description="Judge graphlsp's shapes inside If/Loop/Scan bodies against execution.")
    ap.add_argument("models", nargs="*", help=".onnx or .onnxtxt files (with --node-tests: name filters)")
    ap.add_argument("--node-tests", action="store_true", help="onnx's node test cases that have subgraphs")
    ap.add_argument("--peers", action="store_true",
                    help="also judge onnx, onnx-shape-inference and onnxruntime's symbolic inference (oracle venv)")
    ap.add_argument("--json", metavar="OUT", help="write all results as JSON")
    ap.add_argument("--show", type=int, default=5, help="WRONG values to print per model (5)")
    ap.add_argument("--show-open", type=int, default=0, metavar="N",
                    help="PARTIAL and UNKNOWN values to print per model (0)")  # fmt: skip
    ap.add_argument("--timeout", type=float, default=300, help="seconds per model (300)")
    args = ap.parse_args(argv)
    print(f"{'model':<40} {'bod':>3} {'nodes':>5} {'values':>6}  {'E':>5} {'P':>5} {'U':>5} {'W':>5}", flush=True)
    results = []
    peers = PEERS if args.peers else []
    if args.node_tests:
        for name, model, feeds, expected in node_test_cases(args.models):
            r = evaluate(model, name, None, args.timeout, feeds, expected, peers)
            results.append(r)
            print_result(r, args.show, args.show_open)
    else:
        for path in args.models:
            name = os.path.basename(path).rsplit(".", 1)[0]
            try:
                r = evaluate(load_model(path), name, path, args.timeout, peers=peers)
            except Exception as e:  # noqa: BLE001
                r = Result(name, error=f"failed: {_short(e)}")
            results.append(r)
            print_result(r, args.show, args.show_open)
    tot = dict.fromkeys(CLASSES, 0)
    for r in results:
        for k in CLASSES:
            tot[k] += r.counts[k]
    judged = sum(tot.values())
    print(f"{'TOTAL':<40} {'':>3} {'':>5} {judged:>6}  {tot['E']:>5} {tot['P']:>5} {tot['U']:>5} {tot['W']:>5}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.__dict__ for r in results], f, indent=1, default=str)
    return 1 if tot["W"] else 0


if __name__ == "__main__":
    sys.exit(main())
