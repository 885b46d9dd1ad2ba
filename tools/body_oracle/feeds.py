"""Feeds as runtime_shapes.py makes them: the input symbols of a model, the candidate assignments tried in order,
random inputs of those sizes (masks of ones, position ids as a range, control inputs per scenario), and the runs
to throw away because a window op of the main graph is larger than its padded input."""

from __future__ import annotations

import ast
import re

import numpy as np
import onnx

from .dims import Evaluator

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
