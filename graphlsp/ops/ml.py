"""Ops outside ai.onnx: ai.onnx.ml (Binarizer, ArrayFeatureExtractor, LabelEncoder, TreeEnsemble, and what
sklearn exports write: Scaler, Normalizer, Imputer, LinearClassifier, LinearRegressor, TreeEnsembleClassifier,
TreeEnsembleRegressor, ZipMap), ai.onnx.preview.training (Adagrad, Adam, Momentum) and ai.onnx.preview
(FlexAttention)."""

from __future__ import annotations

from graphlsp.graph import enums
from graphlsp.graph.enums import TensorProto
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import MapType, SequenceType, TensorType
from graphlsp.ops.controlflow import subgraph
from graphlsp.ops.registry import shape_fn

ML = "ai.onnx.ml"
TRAINING = "ai.onnx.preview.training"


@shape_fn("Binarizer", domain=ML)
def binarizer(ctx: InferenceContext) -> None:
    ctx.copy_input(0)


@shape_fn("ArrayFeatureExtractor", domain=ML)
def array_feature_extractor(ctx: InferenceContext) -> None:
    x, idx = ctx.input_shape(0), ctx.input_shape(1)
    if x is None or idx is None:
        ctx.set_output(0, None, ctx.input_elem(0))
        return
    count = 1
    for d in idx:
        count = count * d if isinstance(count, int) and isinstance(d, int) else None  # type: ignore[assignment]
    lead = x[:-1] if len(x) > 1 else (1,)
    ctx.set_output(0, (*lead, count), ctx.input_elem(0))


_LABEL_TYPES: dict[str, int | None] = {
    "values_strings": TensorProto.STRING, "values_int64s": TensorProto.INT64, "values_floats": TensorProto.FLOAT,
    "values_tensor": None, "default_string": TensorProto.STRING, "default_int64": TensorProto.INT64,
    "default_float": TensorProto.FLOAT,
}  # fmt: skip


def _tensor_elem(value: object) -> int | None:
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    if dtype.kind in "OUS":
        return TensorProto.STRING
    try:
        return enums.np_dtype_to_tensor_dtype(dtype)
    except (KeyError, TypeError, ValueError):
        return None


@shape_fn("LabelEncoder", domain=ML)
def label_encoder(ctx: InferenceContext) -> None:
    elem: int | None = None
    for name in ("values_strings", "values_int64s", "values_floats", "values_tensor"):
        value = ctx.attrs.get(name)
        if value is not None:
            elem = _LABEL_TYPES[name]
            if elem is None:  # a tensor of values: its element type
                elem = _tensor_elem(value)
            break
    ctx.set_output(0, ctx.input_shape(0), elem)


@shape_fn("TreeEnsemble", domain=ML, since=5)
def tree_ensemble(ctx: InferenceContext) -> None:
    x = ctx.input_shape(0)
    n_targets = ctx.attr("n_targets")
    ctx.set_output(0, (x[0] if x else None, n_targets if isinstance(n_targets, int) else None), ctx.input_elem(0))


@shape_fn("Scaler", "Normalizer", "Imputer", domain=ML)
def same_shape_float(ctx: InferenceContext) -> None:
    """Element-wise over the features: X's shape; Scaler and Normalizer give floats, Imputer keeps X's type."""
    ctx.set_output(0, ctx.input_shape(0), ctx.input_elem(0) if ctx.op == "Imputer" else TensorProto.FLOAT)


def _rows(ctx: InferenceContext) -> Dim:
    """N of an [N, C] input (a [C] input is one row)."""
    x = ctx.input_shape(0)
    if x is None:
        return None
    return 1 if len(x) == 1 else x[0] if len(x) == 2 else None


def _classes(ctx: InferenceContext, ints: str, strings: str) -> tuple[int | None, int | None]:
    """(label element type, number of classes) from the class label attributes."""
    for name, elem in ((ints, TensorProto.INT64), (strings, TensorProto.STRING)):
        labels = ctx.attr(name)
        if labels is not None and len(labels):
            return elem, len(labels)
    return None, None


@shape_fn("LinearClassifier", "TreeEnsembleClassifier", domain=ML)
def classifier(ctx: InferenceContext) -> None:
    """Label [N] and one score per class label [N, E] (onnxruntime's binary case too: two labels, two scores)."""
    n = _rows(ctx)
    suffix = "_int64s" if ctx.op == "TreeEnsembleClassifier" else "_ints"
    elem, count = _classes(ctx, "classlabels" + suffix, "classlabels_strings")
    ctx.set_output(0, (n,), elem)
    ctx.set_output(1, (n, count), TensorProto.FLOAT)


@shape_fn("LinearRegressor", "TreeEnsembleRegressor", domain=ML)
def regressor(ctx: InferenceContext) -> None:
    targets = ctx.attr("targets" if ctx.op == "LinearRegressor" else "n_targets", 1)
    ctx.set_output(0, (_rows(ctx), targets if isinstance(targets, int) else None), TensorProto.FLOAT)


@shape_fn("ZipMap", domain=ML)
def zip_map(ctx: InferenceContext) -> None:
    """A sequence of maps from class label to score, one per row."""
    elem, _ = _classes(ctx, "classlabels_int64s", "classlabels_strings")
    ctx.set_output_type(0, SequenceType(MapType(elem, TensorType(TensorProto.FLOAT, ()))))


def _optimizer(ctx: InferenceContext, groups: int, sources: list[int]) -> None:
    """Inputs R, T, then `groups` groups of n tensors; output group k has the shapes of input group sources[k]."""
    n = (ctx.n_inputs - 2) // groups
    for k, src in enumerate(sources):
        for i in range(n):
            j = 2 + src * n + i
            ctx.set_output(k * n + i, ctx.input_shape(j), ctx.input_elem(j))


@shape_fn("Adagrad", domain=TRAINING)
def adagrad(ctx: InferenceContext) -> None:
    _optimizer(ctx, 3, [0, 2])  # X, G, H -> X_new, H_new


@shape_fn("Momentum", domain=TRAINING)
def momentum(ctx: InferenceContext) -> None:
    _optimizer(ctx, 3, [0, 2])  # X, G, V -> X_new, V_new


@shape_fn("Adam", domain=TRAINING)
def adam(ctx: InferenceContext) -> None:
    _optimizer(ctx, 4, [0, 2, 3])  # X, G, V, H -> X_new, V_new, H_new


@shape_fn("FlexAttention", domain="ai.onnx.preview")
def flex_attention(ctx: InferenceContext) -> None:
    """Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] -> Y [B, Hq, L, Ev]. The modifier subgraphs (score_mod,
    prob_mod) each take the scores / probabilities, [B, Hq, L, S] of the softmax precision (the attribute, else
    double for double inputs and float for the others), as the schema says."""
    q, k, v = ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2)
    elem = ctx.input_elem(0)
    precision = ctx.attr("softmax_precision")
    if precision is None and elem is not None:
        precision = TensorProto.DOUBLE if elem == TensorProto.DOUBLE else TensorProto.FLOAT
    q4 = q if q is not None and len(q) == 4 else (None,) * 4
    kv_len = k[2] if k is not None and len(k) == 4 else v[2] if v is not None and len(v) == 4 else None
    scores = TensorType(int(precision) if precision is not None else None, (q4[0], q4[1], q4[2], kv_len))
    for name in ("score_mod", "prob_mod"):
        body = subgraph(ctx, name)
        if body is not None:
            ctx.infer_graph(body, [scores])
    if q is None or v is None or len(q) != 4 or len(v) != 4:
        ctx.set_output(0, None, elem)
        return
    ctx.set_output(0, (q[0], q[1], q[2], v[3]), elem)
