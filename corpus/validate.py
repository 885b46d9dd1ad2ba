"""Validation of every file a target wrote (run in the main venv): onnx.checker (full_check, i.e. strict shape
inference too, under FULL_CHECK_LIMIT), an onnxruntime CPU session loads it, and it runs under at least one
assignment of its input symbols, fed the way the shared oracle tools/runtime_shapes.py feeds them; and the
features (ops, opsets, dims, control flow ...) recorded in the manifest."""
from __future__ import annotations

import os
import re

from . import SEED

FULL_CHECK_LIMIT = 64 << 20
QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger",
             "QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool",
             "QLinearAveragePool", "QLinearConcat", "QLinearSigmoid", "QLinearLeakyRelu", "QAttention",
             "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "DynamicQuantizeLSTM", "QLinearSoftmax"}
CONTROL_OPS = {"If", "Loop", "Scan", "SequenceMap"}


def model_features(path: str) -> dict:
    import onnx

    m = onnx.load(path, load_external_data=False)
    ops: dict[str, int] = {}

    def walk(g):
        for n in g.node:
            key = (n.domain or "ai.onnx") + "::" + n.op_type
            ops[key] = ops.get(key, 0) + 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sg in a.graphs:
                        walk(sg)

    walk(m.graph)
    for fn in m.functions:
        walk(fn)
    inits = {i.name for i in m.graph.initializer}

    def sig(vis):
        out = []
        for vi in vis:
            if vi.name in inits:
                continue
            t = vi.type
            kind = t.WhichOneof("value")
            if kind == "tensor_type":
                tt = t.tensor_type
                dims = None
                if tt.HasField("shape"):
                    dims = [d.dim_param if d.HasField("dim_param")
                            else (d.dim_value if d.HasField("dim_value") else "?") for d in tt.shape.dim]
                out.append({"name": vi.name, "dtype": onnx.TensorProto.DataType.Name(tt.elem_type).lower(),
                            "shape": dims})
            else:
                out.append({"name": vi.name, "type": kind})
        return out

    ins, outs = sig(m.graph.input), sig(m.graph.output)
    dim_params: list[str] = []
    for v in ins + outs:
        for d in v.get("shape") or []:
            if isinstance(d, str) and d != "?" and d not in dim_params:
                dim_params.append(d)
    ext = any(t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer)
    return {
        "producer": f"{m.producer_name} {m.producer_version}".strip(),
        "ir_version": m.ir_version,
        "opsets": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "nodes": sum(ops.values()),
        "ops": dict(sorted(ops.items())),
        "functions": len(m.functions),
        "inputs": ins,
        "outputs": outs,
        "dim_params": dim_params,
        "contrib_ops": sorted({k.split("::")[1] for k in ops if not k.startswith(("ai.onnx::", "ai.onnx.ml::"))}),
        "ml_ops": sorted({k.split("::")[1] for k in ops if k.startswith("ai.onnx.ml::")}),
        "control_flow": {k.split("::")[1]: v for k, v in ops.items() if k.split("::")[1] in CONTROL_OPS},
        "quant_ops": sorted({k.split("::")[1] for k in ops if k.split("::")[1] in QUANT_OPS}),
        "external_data": ext,
    }


_PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
_SMALL_B = [3, 4, 6, 8, 9, 10, 12, 14, 15, 16, 18, 20]
SMOKE_CANDIDATES = [
    ("small", None, _PRIMES),
    ("odd", _PRIMES, [67 + 18 * k for k in range(12)]),
    ("mid", _PRIMES, [32 * k for k in _PRIMES]),
    ("mid-b", _SMALL_B, [32 * k for k in _SMALL_B]),
    ("large", _PRIMES, [512 + 64 * k for k in range(12)]),
]


def smoke_run(path: str, sess) -> str:
    """Feed the model under a few assignments of its input symbols, like the shared oracle does.
    Returns 'ok <label> <assignment>' or raises with the last error."""
    import numpy as np

    inputs = sess.get_inputs()
    shapes = []
    symbols: list[str] = []
    batch: set[str] = set()
    fresh = 0
    for i in inputs:
        dims = []
        for k, d in enumerate(i.shape or []):
            if isinstance(d, int) and d >= 0:
                dims.append(d)
                continue
            if not isinstance(d, str) or not d:
                d = f"__fresh{fresh}"
                fresh += 1
            names = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", d) if re.search(r"[-+*/()]", d) else [d]
            for n in names:
                if n not in symbols:
                    symbols.append(n)
            if k == 0 and len(names) == 1:
                batch.add(names[0])
            dims.append(d)
        shapes.append(dims)
    last = None
    for label, bvals, ovals in SMOKE_CANDIDATES:
        env, bi, oi = {}, 0, 0
        for s in symbols:
            if bvals is not None and s in batch:
                env[s] = bvals[bi]
                bi += 1
            else:
                env[s] = ovals[oi]
                oi += 1
        rng = np.random.default_rng(SEED)
        feeds = {}
        try:
            for i, dims in zip(inputs, shapes, strict=True):
                shape = []
                for d in dims:
                    if isinstance(d, int):
                        shape.append(d)
                    elif d in env:
                        shape.append(env[d])
                    else:
                        shape.append(int(eval(d, {"__builtins__": {}}, dict(env))))  # noqa: S307
                feeds[i.name] = make_feed(np, rng, i.name, i.type, shape)
            sess.run(None, feeds)
            return f"ok ({label}: " + ", ".join(f"{k}={v}" for k, v in env.items()) + ")"
        except Exception as e:  # noqa: BLE001
            last = f"{label}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
    raise RuntimeError(f"onnxruntime could not run it under any assignment; last: {last}")


def make_feed(np, rng, name: str, typ: str, shape):
    t = typ[len("tensor("):-1] if typ.startswith("tensor(") else typ
    lname = name.lower()
    if t in ("float", "double", "float16", "bfloat16"):
        dt = {"float": np.float32, "double": np.float64, "float16": np.float16, "bfloat16": np.float32}[t]
        return rng.standard_normal(shape).astype(dt)
    if t == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if t.startswith(("int", "uint")):
        dt = np.dtype(t)
        if "mask" in lname:
            return np.ones(shape, dt)
        if "position_ids" in lname:
            return np.broadcast_to(np.arange(shape[-1] if shape else 1, dtype=dt), shape).copy()
        if lname in ("sr", "sample_rate"):
            return np.full(shape, 16000, dt)
        return rng.integers(0, 4, shape).astype(dt)
    raise TypeError(f"cannot feed {name}: {typ}")


ORT_ONLY_DEFAULT_DOMAIN_OPS = ("SimplifiedLayerNormalization",)


def validate_dir(stage: str) -> dict:
    import onnx
    import onnxruntime as ort

    results = {}
    for f in sorted(os.listdir(stage)):
        if not f.endswith(".onnx"):
            continue
        p = os.path.join(stage, f)
        r: dict = {"ok": False}
        try:
            size = os.path.getsize(p)
            r["size"] = size
            try:
                onnx.checker.check_model(p)
                if size < FULL_CHECK_LIMIT:
                    onnx.checker.check_model(p, full_check=True)
                    r["full_check"] = True
            except onnx.checker.ValidationError as e:
                # the GenAI builder writes onnxruntime's SimplifiedLayerNormalization in ai.onnx, which onnx does
                # not define: onnxruntime's load and run below are the validation then
                if not any(f"No Op registered for {op} " in str(e) for op in ORT_ONLY_DEFAULT_DOMAIN_OPS):
                    raise
                r["checker"] = str(e).splitlines()[0][:200]
            so = ort.SessionOptions()
            so.log_severity_level = 3
            ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])  # loads with the default optimizations
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # and runs as the oracle does
            sess = ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])
            r["smoke_run"] = smoke_run(p, sess)
            r["features"] = model_features(p)
            r["ok"] = True
        except Exception as e:  # noqa: BLE001
            r["reason"] = f"{type(e).__name__}: {str(e)[:1500]}"
        results[f] = r
    return results
