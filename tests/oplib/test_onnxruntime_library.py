"""The shipped onnxruntime library against onnxruntime itself: every signature equals its registered schema (inputs,
outputs, attributes with their defaults, type constraints), every op onnxruntime registers outside ONNX is declared,
and the shapes the contracts give are the shapes onnxruntime computes, on single-node models and on the corpus models
its optimizer and quantizers wrote (no GL204 or GL316 there, every value exact)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from graphlsp.infer import dims as d
from graphlsp.infer.types import TensorType
from graphlsp.oplib.catalog import builtin_paths, load
from graphlsp.oplib.checker import normalize_type

ort_state = pytest.importorskip("onnxruntime.capi.onnxruntime_pybind11_state")
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus" / "models"
INTERNAL = {"com.ms.internal.nhwc"}  # onnxruntime's layout transformer's own domain: never in a saved model


def _library() -> Any:
    [path] = [p for p in builtin_paths() if p.stem == "onnxruntime"]
    return load(path)


def _ort_schemas() -> dict[tuple[str, str, int], Any]:
    onnx_ops = {("" if s.domain == "ai.onnx" else s.domain, s.name) for s in onnx.defs.get_all_schemas_with_history()}
    out = {}
    for s in ort_state.get_all_operator_schema():
        if s.domain in INTERNAL or (s.domain, s.name) in onnx_ops:
            continue
        out[(s.domain, s.name, s.since_version)] = s
    return out


_ATTR = {1: "float", 2: "int", 3: "string", 4: "tensor", 5: "graph", 6: "floats", 7: "ints", 8: "strings"}


def _default(a: Any) -> Any:
    raw = a._default_value
    if not raw:
        return None
    proto = onnx.AttributeProto.FromString(raw)
    if not proto.type:
        return None
    v = helper.get_attribute_value(proto)
    return v.decode() if isinstance(v, bytes) else v


def test_every_op_onnxruntime_registers_outside_onnx_is_declared() -> None:
    declared = {(op.domain, op.name, op.since) for op in _library().ops}
    assert set(_ort_schemas()) <= declared, sorted(set(_ort_schemas()) - declared)
    assert declared <= set(_ort_schemas()), sorted(declared - set(_ort_schemas()))


def test_every_signature_equals_onnxruntimes_schema() -> None:
    schemas = _ort_schemas()
    problems = []
    for op in _library().ops:
        s = schemas[(op.domain, op.name, op.since)]
        where = f"{op.qualified} since {op.since}"
        for kind, ours, theirs in (("input", op.inputs, s.inputs), ("output", op.outputs, s.outputs)):
            got = [(p.name, p.type_str, p.option, p.homogeneous) for p in ours]
            want = [(p.name, normalize_type(p.typeStr) or p.typeStr, {0: "single", 1: "optional", 2: "variadic"}[
                int(p.option)], p.isHomogeneous) for p in theirs]  # fmt: skip
            if got != want:
                problems.append(f"{where}: {kind}s {got} != {want}")
        if (s.min_input, s.max_input, s.min_output, s.max_output) != _arity(op):
            problems.append(f"{where}: arity {_arity(op)} != {(s.min_input, s.max_input, s.min_output, s.max_output)}")
        attrs = {a.name: (a.type_name, a.required, a.default) for a in op.attrs.values()}
        want_attrs = {a.name: (_ATTR.get(int(a.type), str(a.type)), a.required, _default(a))
                      for a in s.attributes.values()}  # fmt: skip
        for name in set(attrs) | set(want_attrs):
            x, y = attrs.get(name), want_attrs.get(name)
            if x is None or y is None or x[:2] != y[:2] or not _same_default(x[2], y[2]):
                problems.append(f"{where}: attribute {name}: {x} != {y}")
        types = {t.name: set(t.allowed) for t in op.types.values()}
        want_types = {t.type_param_str: {normalize_type(x) or x for x in t.allowed_type_strs}
                      for t in s.type_constraints}  # fmt: skip
        if types != want_types:
            problems.append(f"{where}: type constraints {types} != {want_types}")
    assert not problems, "\n".join(problems)


def _arity(op: Any) -> tuple[int, int, int, int]:
    from graphlsp.ops.library import decl_signature

    sig = decl_signature(op)
    return sig.min_input, sig.max_input, sig.min_output, sig.max_output


def _same_default(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and np.float32(a) == np.float32(b)
    return a == b


# ---- shapes: single-node models onnxruntime runs
def _value(name: str, elem: int, shape: list[int], rng: np.random.Generator, data: Any = None) -> Any:
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    if data is not None:
        return np.asarray(data, dtype=dtype).reshape(shape)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 3, shape).astype(dtype)


F, I8, U8, I32, I64 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32, TensorProto.INT64
# (op, domain, inputs [(name, elem, shape, as_initializer, data)], number of outputs, attributes)
CASES: list[tuple[str, str, list[tuple[str, int, list[int], bool, Any]], int, dict[str, Any]]] = [
    ("SkipLayerNormalization", "com.microsoft",
     [("x", F, [2, 3, 8], False, None), ("skip", F, [2, 3, 8], False, None), ("gamma", F, [8], True, None),
      ("beta", F, [8], True, None)], 1, {}),
    ("SkipSimplifiedLayerNormalization", "com.microsoft",
     [("x", F, [2, 3, 8], False, None), ("skip", F, [2, 3, 8], False, None), ("gamma", F, [8], True, None)], 1, {}),
    ("SimplifiedLayerNormalization", "", [("x", F, [2, 3, 8], False, None), ("scale", F, [8], True, None)], 1, {}),
    ("FastGelu", "com.microsoft", [("x", F, [2, 3, 8], False, None), ("bias", F, [8], True, None)], 1, {}),
    ("BiasGelu", "com.microsoft", [("x", F, [2, 3, 8], False, None), ("bias", F, [8], True, None)], 1, {}),
    ("QuickGelu", "com.microsoft", [("x", F, [2, 3, 8], False, None)], 1, {"alpha": 1.702}),
    ("Attention", "com.microsoft",
     [("x", F, [2, 3, 16], False, None), ("w", F, [16, 48], True, None), ("b", F, [48], True, None)], 1,
     {"num_heads": 2}),
    ("Attention", "com.microsoft",
     [("x", F, [2, 3, 16], False, None), ("w", F, [16, 48], True, None), ("b", F, [48], True, None),
      ("", 0, [], False, None), ("past", F, [2, 2, 2, 5, 8], False, None)], 2, {"num_heads": 2}),
    ("MultiHeadAttention", "com.microsoft",
     [("q", F, [2, 3, 16], False, None), ("k", F, [2, 4, 16], False, None), ("v", F, [2, 4, 16], False, None)], 1,
     {"num_heads": 2}),
    ("MultiHeadAttention", "com.microsoft",
     [("q", F, [2, 3, 16], False, None), ("k", F, [2, 3, 16], False, None), ("v", F, [2, 3, 16], False, None),
      ("", 0, [], False, None), ("", 0, [], False, None), ("", 0, [], False, None),
      ("pk", F, [2, 2, 5, 8], False, None), ("pv", F, [2, 2, 5, 8], False, None)], 3, {"num_heads": 2}),
    ("GroupQueryAttention", "com.microsoft",
     [("q", F, [1, 3, 64], False, None), ("k", F, [1, 3, 32], False, None), ("v", F, [1, 3, 32], False, None),
      ("pk", F, [1, 2, 5, 16], False, None), ("pv", F, [1, 2, 5, 16], False, None),
      ("seqlens_k", I32, [1], True, [7]), ("total", I32, [], True, 8)], 3, {"num_heads": 4, "kv_num_heads": 2}),
    ("RotaryEmbedding", "com.microsoft",
     [("x", F, [2, 2, 3, 8], False, None), ("pos", I64, [2, 3], True, [0, 1, 2, 0, 1, 2]),
      ("cos", F, [8, 4], True, None), ("sin", F, [8, 4], True, None)], 1, {}),
    ("MatMulNBits", "com.microsoft",
     [("a", F, [2, 3, 32], False, None), ("b", U8, [16, 2, 8], True, None), ("scales", F, [32], True, None)], 1,
     {"K": 32, "N": 16, "block_size": 16, "bits": 4}),
    ("DynamicQuantizeMatMul", "com.microsoft",
     [("a", F, [2, 3, 8], False, None), ("b", I8, [8, 4], True, None), ("s", F, [1], True, None)], 1, {}),
    ("MatMulIntegerToFloat", "com.microsoft",
     [("a", U8, [2, 3, 8], False, None), ("b", I8, [8, 4], True, None), ("sa", F, [1], True, None),
      ("sb", F, [1], True, None)], 1, {}),
    ("QLinearAdd", "com.microsoft",
     [("a", U8, [2, 3, 4], False, None), ("sa", F, [], True, 0.1), ("za", U8, [], True, 1),
      ("b", U8, [4], True, None), ("sb", F, [], True, 0.1), ("zb", U8, [], True, 1),
      ("sc", F, [], True, 0.2), ("zc", U8, [], True, 1)], 1, {}),
    ("QGemm", "com.microsoft",
     [("a", U8, [3, 8], False, None), ("sa", F, [], True, 0.1), ("za", U8, [], True, 1),
      ("b", U8, [4, 8], True, None), ("sb", F, [], True, 0.1), ("zb", U8, [], True, 1)], 1, {"transB": 1}),
    ("FusedMatMul", "com.microsoft", [("a", F, [2, 3, 4], False, None), ("b", F, [2, 5, 4], False, None)], 1,
     {"transB": 1}),
    ("FusedMatMul", "com.microsoft", [("a", F, [2, 4, 3], False, None), ("b", F, [4, 5], False, None)], 1,
     {"transA": 1, "alpha": 0.5}),
    ("FusedConv", "com.microsoft",
     [("x", F, [1, 3, 8, 8], False, None), ("w", F, [6, 3, 3, 3], True, None), ("b", F, [6], True, None)], 1,
     {"activation": "Relu", "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ("FusedGemm", "com.microsoft",
     [("a", F, [3, 8], False, None), ("b", F, [4, 8], True, None), ("c", F, [4], True, None)], 1,
     {"transB": 1, "activation": "Tanh"}),
    ("QLinearGlobalAveragePool", "com.microsoft",
     [("x", U8, [1, 5, 5, 3], False, None), ("sx", F, [], True, 0.1), ("zx", U8, [], True, 1),
      ("sy", F, [], True, 0.1), ("zy", U8, [], True, 1)], 1, {"channels_last": 1}),
    ("QLinearSoftmax", "com.microsoft",
     [("x", U8, [2, 5], False, None), ("sx", F, [], True, 0.1), ("zx", U8, [], True, 1),
      ("sy", F, [], True, 1 / 256), ("zy", U8, [], True, 0)], 1, {"opset": 13}),
    ("Inverse", "com.microsoft", [("x", F, [2, 3, 3], False, None)], 1, {}),
    ("CDist", "com.microsoft", [("a", F, [3, 4], False, None), ("b", F, [5, 4], False, None)], 1, {}),
    ("ReorderOutput", "com.microsoft.nchwc", [("x", F, [1, 16, 5, 5], False, None)], 1, {"channels": 15}),
]  # fmt: skip


def _single_node(case: tuple[Any, ...]) -> tuple[onnx.ModelProto, dict[str, Any]]:
    op, domain, inputs, n_out, attrs = case
    rng = np.random.default_rng(0)
    feeds: dict[str, Any] = {}
    graph_inputs, inits = [], []
    for name, elem, shape, init, data in inputs:
        if not name:
            continue
        value = _value(name, elem, shape, rng, data)
        if init:
            inits.append(onnx.numpy_helper.from_array(value, name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(name, elem, shape))
            feeds[name] = value
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, [x[0] for x in inputs], outs, domain=domain, **attrs)
    graph = helper.make_graph([node], "g", graph_inputs, [helper.make_value_info(o, onnx.TypeProto()) for o in outs],
                              initializer=inits)  # fmt: skip
    imports = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=imports, ir_version=8), feeds


def _ours(model: onnx.ModelProto) -> tuple[list[Any], list[Any]]:
    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import model_from_proto

    ir, findings = model_from_proto(model)
    a = ModelAnalysis(ir, findings)
    graph = ir.graph
    assert graph is not None
    types = [a.refiner.type_of(graph.values[o.name]) for o in model.graph.output]
    return types, [*findings, *a.refiner.findings()]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_contract_shapes_are_what_onnxruntime_computes(case: tuple[Any, ...]) -> None:
    import onnxruntime as ort

    model, feeds = _single_node(case)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    got = sess.run(None, feeds)
    types, findings = _ours(model)
    unexpected = [f for f in findings if (f.severity in ("error", "warning") or f.code == "GL316") and f.code != "GL211"]
    assert not unexpected, findings
    for value, ty in zip(got, types, strict=True):
        assert isinstance(ty, TensorType) and ty.shape is not None, (case[0], ty)
        # an output whose type constraint no input binds (QGemm's TY: float, or y_zero_point's type) stays unknown
        assert ty.elem in (None, helper.np_dtype_to_tensor_dtype(value.dtype))
        assert ty.shape == value.shape, (case[0], ty.shape, value.shape)


# ---- the corpus: models onnxruntime's optimizer, quantizers and sessions wrote
CORPUS_MODELS = sorted(p for p in CORPUS.glob("ort*.onnx"))


def _every_output(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    known = {o.name for o in m.graph.output}
    for node in m.graph.node:
        for out in node.output:
            if out and out not in known:
                m.graph.output.append(helper.make_value_info(out, onnx.TypeProto()))
                known.add(out)
    return m


def _symbols(model: onnx.ModelProto) -> list[str]:
    """The graph inputs' dim symbols, in the order they first appear (`batch_size`, `sequence_length`, ...)."""
    out: dict[str, None] = {}
    for vi in model.graph.input:
        for dm in vi.type.tensor_type.shape.dim:
            if dm.dim_param:
                x = d.symbol(dm.dim_param)
                for s in sorted(x.symbols()) if isinstance(x, d.Expr) else ():
                    out.setdefault(s)
    return list(out)


def _feeds(model: onnx.ModelProto, sizes: dict[str, int]) -> dict[str, Any]:
    """Floats are random; masks are ones, position ids count along the sequence, other ints are 0."""
    rng = np.random.default_rng(0)
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = [dm.dim_value if dm.HasField("dim_value") else _evaluate(d.symbol(dm.dim_param), sizes)
                 for dm in tt.shape.dim]  # fmt: skip
        dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
        if dtype.kind == "f":
            out[vi.name] = rng.standard_normal(shape).astype(dtype)
        elif "mask" in vi.name:
            out[vi.name] = np.ones(shape, dtype=dtype)
        elif "position" in vi.name and shape:
            out[vi.name] = np.broadcast_to(np.arange(shape[-1]), shape).astype(dtype)
        else:
            out[vi.name] = np.zeros(shape, dtype=dtype)
    return out


def _evaluate(dim: Any, sizes: dict[str, int]) -> int | None:
    for name, value in sizes.items():
        dim = d.replace(dim, d.symbol(name), value)
    return dim if isinstance(dim, int) else None


@pytest.mark.parametrize("path", CORPUS_MODELS, ids=[p.stem for p in CORPUS_MODELS])
def test_corpus_models_resolve_every_op_and_every_value_is_exact(path: Path) -> None:
    import onnxruntime as ort

    from graphlsp.analysis import ModelAnalysis
    from graphlsp.binary.read import read_model

    model = onnx.load(str(path))
    ir, findings = read_model(str(path))
    a = ModelAnalysis(ir, findings)
    codes = {f.code for f in [*findings, *a.refiner.findings()]}
    assert not codes & {"GL204", "GL316", "GL399"}, codes
    sizes = dict(zip(_symbols(model), (2, 3, 5, 7, 11, 13), strict=False))
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    every = _every_output(model)
    sess = ort.InferenceSession(every.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    values = dict(zip([o.name for o in every.graph.output], sess.run(None, _feeds(model, sizes)), strict=True))
    graph = ir.graph
    assert graph is not None
    contrib = {o for n in model.graph.node if n.domain not in ("", "ai.onnx") for o in n.output if o}
    assert contrib or not any(n.domain not in ("", "ai.onnx") for n in model.graph.node)
    inexact = []
    for name, value in values.items():
        ty = a.refiner.type_of(graph.values[name])
        shape = ty.shape if isinstance(ty, TensorType) else None
        ours = [_evaluate(x, sizes) for x in shape] if shape is not None else None
        if ours != list(value.shape):
            assert ours is None or len(ours) != len(value.shape) or all(
                x is None or x == y for x, y in zip(ours, value.shape, strict=True)), (name, ours, value.shape)
            inexact.append((name, ours, value.shape))
    assert not [x for x in inexact if x[0] in contrib], inexact
