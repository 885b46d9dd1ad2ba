"""Shape rules of the math and nn op families: contraction and channel diagnostics (GL302, GL305, GL306),
sliding windows on known and symbolic dims (checked against onnx's own inference), normalization, recurrent and
attention outputs."""

from __future__ import annotations

import math
from dataclasses import dataclass

import onnx.parser
import onnx.shape_inference
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlsp.graph.findings import Finding
from tests.infer.helpers import infer


def model(signature: str, body: str, opset: int = 18) -> str:
    return f'<ir_version: 10, opset_import: ["" : {opset}]>\n{signature}\n{{\n{body}\n}}\n'


def codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings if f.severity == "error"]


# ---- matrix products
def test_matmul_inner_mismatch_names_both_operands() -> None:
    text = (
        '<ir_version: 10, opset_import: ["" : 18]>\n'
        "g (float[N, 128] x, float[64, 10] W) => (float[N, 10] y) {\n"
        "  h0 = Relu (x)\n"
        "  H = Relu (h0)\n"
        "  y = MatMul (H, W)\n"
        "}\n"
    )
    types, findings = infer(text)
    [f] = findings
    assert f.code == "GL302"
    assert f.message == "MatMul: inner dimensions differ: H is [N, 128] (line 4), W is [64, 10] (line 2)"
    assert [m for m, *_ in f.related] == ["H is defined here", "W is defined here"]
    assert text[f.related[0][1] : f.related[0][2]] == "H"


def test_gemm_transposed_inner_mismatch() -> None:
    sig = "g (float[4, 8] a, float[16, 7] b) => (float[4, 16] y)"
    types, findings = infer(model(sig, "  y = Gemm <transB = 1> (a, b)"))
    assert codes(findings) == ["GL302"]
    assert "inner dimensions differ: a is [4, 8]" in findings[0].message
    types, findings = infer(model(sig.replace("[16, 7]", "[16, 8]"), "  y = Gemm <transB = 1> (a, b)"))
    assert findings == [] and types["y"] == "float[4, 16]"


def test_matmul_promotion_broadcast_and_symbols() -> None:
    sig = "g (float[K] v, float[B, K, M] m, float[B, 1, N, K] a, float[5, K, M] b) => ()"
    body = "  x = MatMul (v, m)\n  y = MatMul (a, b)\n  z = MatMul (m, v)\n  s = MatMul (v, v)"
    types, findings = infer(model(sig, body))
    assert (types["x"], types["y"], types["z"], types["s"]) == ("float[B, M]", "float[B, 5, N, M]", "float[B, K]",
                                                                "float")  # fmt: skip
    assert findings == []


def test_matmul_symbolic_inner_dim_is_not_an_error() -> None:
    types, findings = infer(model("g (float[N, K] a, float[128, 10] b) => (float[N, 10] y)", "  y = MatMul (a, b)"))
    assert findings == [] and types["y"] == "float[N, 10]"


def test_einsum_explicit_implicit_and_ellipsis() -> None:
    sig = "g (float[B, I, J] a, float[B, J, K] b, float[3, 3] t, float[2, 5, I, J] e) => ()"
    body = '  x = Einsum <equation = "bij,bjk->bik"> (a, b)\n  y = Einsum <equation = "ii"> (t)\n'
    body += '  z = Einsum <equation = "ij,jk"> (t, t)\n  w = Einsum <equation = "...ij->...ji"> (e)\n'
    types, findings = infer(model(sig, body))
    assert (types["x"], types["y"], types["z"], types["w"]) == ("float[B, I, K]", "float", "float[3, 3]",
                                                                 "float[2, 5, J, I]")  # fmt: skip
    assert findings == []


# ---- convolutions
def test_conv_channels_and_group() -> None:
    sig = "g (float[1, 8, 32, 32] x, float[16, 4, 3, 3] w, float[1, C, 5, 5] v) => ()"
    types, findings = infer(model(sig, "  y = Conv <group = 2> (x, w)\n  s = Conv <group = 2> (v, w)"))
    assert findings == [] and types["y"] == "float[1, 16, 30, 30]" and types["s"] == "float[1, 16, 3, 3]"
    types, findings = infer(model(sig, "  y = Conv <group = 4> (x, w)"))
    assert codes(findings) == ["GL305"]
    assert findings[0].message.startswith("Conv: input channels 8 != weight channels 4 x group 4: x is [1, 8")
    assert len(findings[0].related) == 2
    _, findings = infer(model(sig.replace("[16, 4", "[15, 4"), "  y = Conv <group = 2> (x, w)"))
    assert codes(findings) == ["GL305"] and "not divisible by group 2" in findings[0].message


def test_conv_bias_length() -> None:
    sig = "g (float[1, 3, 8, 8] x, float[16, 3, 3, 3] w, float[8] b) => ()"
    _, findings = infer(model(sig, "  y = Conv (x, w, b)"))
    assert codes(findings) == ["GL305"] and "bias has 8 values" in findings[0].message


def test_conv_kernel_larger_than_padded_input() -> None:
    sig = "g (float[1, 3, 2, 2] x, float[8, 3, 5, 5] w) => ()"
    _, findings = infer(model(sig, "  y = Conv <pads = [1, 1, 1, 1]> (x, w)"))
    assert codes(findings) == ["GL306"]
    assert "kernel extent 5 is larger than the padded input (2 + pads 1+1)" in findings[0].message
    types, findings = infer(model(sig, "  y = Conv <pads = [2, 2, 2, 2]> (x, w)"))
    assert findings == [] and types["y"] == "float[1, 8, 2, 2]"
    _, findings = infer(model(sig.replace("5, 5]", "2, 2]"), "  y = Conv <dilations = [3, 3]> (x, w)"))
    assert codes(findings) == ["GL306"]


def test_stacked_strided_convs_fold_into_one_floor() -> None:
    sig = "g (float[N, 3, H, W] x, float[8, 3, 3, 3] w1, float[8, 8, 3, 3] w) => ()"
    convs = ["  c1 = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w1)"]
    convs += [f"  c{i} = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (c{i - 1}, w)" for i in range(2, 6)]
    types, findings = infer(model(sig, "\n".join(convs)))
    assert findings == []
    assert types["c5"] == "float[N, 8, floor((H + 31)/32), floor((W + 31)/32)]"


def test_same_padding_on_symbolic_dims() -> None:
    sig = "g (float[N, 3, H, W] x, float[8, 3, 3, 3] w, float[8, 8, 3, 3] w2) => ()"
    body = '  a = Conv <strides = [2, 2], auto_pad = "SAME_UPPER"> (x, w)\n'
    body += '  b = Conv <strides = [2, 2], auto_pad = "SAME_LOWER"> (a, w2)\n'
    body += '  c = Conv <auto_pad = "VALID"> (x, w)\n'
    types, findings = infer(model(sig, body))
    assert types["b"] == "float[N, 8, floor((H + 3)/4), floor((W + 3)/4)]"
    assert types["c"] == "float[N, 8, H - 2, W - 2]"


def test_conv_transpose_output_shape_and_padding() -> None:
    sig = "g (float[1, 1, 3, 3] x, float[1, 2, 3, 3] w, float[N, 1, H, 3] s) => ()"
    body = "  a = ConvTranspose <strides = [3, 2], output_padding = [1, 1]> (x, w)\n"
    body += "  b = ConvTranspose <strides = [3, 2], output_shape = [10, 8]> (x, w)\n"
    body += '  c = ConvTranspose <strides = [2, 2], auto_pad = "SAME_UPPER"> (s, w)\n'
    types, findings = infer(model(sig, body))
    assert types["a"] == "float[1, 2, 10, 8]"
    assert types["b"] == "float[1, 2, 10, 8]"
    assert types["c"] == "float[N, 2, 2*H, 6]"
    assert findings == []


# ---- pooling
def test_pools_with_ceil_mode() -> None:
    sig = "g (float[1, 1, 6, 5] x, float[N, 2, H, 4] s) => ()"
    body = "  a = MaxPool <kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1> (x)\n"
    body += "  b = MaxPool <kernel_shape = [3, 3], strides = [2, 2]> (x)\n"
    body += "  c, i = MaxPool <kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1], ceil_mode = 1> (s)\n"
    body += "  d = AveragePool <kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1> (s)\n"
    body += "  e = GlobalAveragePool (s)\n"
    types, findings = infer(model(sig, body))
    assert (types["a"], types["b"]) == ("float[1, 1, 3, 2]", "float[1, 1, 2, 2]")
    assert types["c"] == "float[N, 2, min(floor((H + 1)/2), floor(H/2) + 1), 2]"
    assert types["i"] == "int64[N, 2, min(floor((H + 1)/2), floor(H/2) + 1), 2]"
    assert types["d"] == "float[N, 2, floor(H/2), 2]"
    assert types["e"] == "float[N, 2, 1, 1]"
    assert findings == []


# ---- normalization
def test_batch_normalization_outputs_by_version() -> None:
    sig = "g (float[N, 3, 8, 8] x, float[3] s, float[3] b, float[3] m, float[3] v) => ()"
    types, findings = infer(model(sig, "  y, a, c, d, e = BatchNormalization (x, s, b, m, v)", opset=9))
    assert findings == [] and types["y"] == "float[N, 3, 8, 8]" and types["e"] == "float[3]"
    types, findings = infer(model(sig, "  y, rm, rv = BatchNormalization <training_mode = 1> (x, s, b, m, v)", 15))
    assert findings == [] and types["rm"] == "float[3]" and types["rv"] == "float[3]"
    _, findings = infer(model(sig, "  y, rm, rv = BatchNormalization (x, s, b, m, v)", 15))
    assert codes(findings) == ["GL317"]
    types, _ = infer(model(sig.replace("N, 3", "N, C"), "  y = BatchNormalization (x, s, b, m, v)", 15))
    assert types["y"] == "float[N, 3, 8, 8]"


def test_layer_normalization_statistics() -> None:
    sig = "g (float16[B, S, 64] x, float16[64] s) => ()"
    types, findings = infer(model(sig, "  y, mean, inv = LayerNormalization <axis = -1> (x, s)", 17))
    assert findings == []
    assert (types["y"], types["mean"], types["inv"]) == ("float16[B, S, 64]", "float[B, S, 1]", "float[B, S, 1]")


# ---- recurrent
def test_lstm_layouts_and_directions() -> None:
    sig = "g (float[T, B, 10] x, float[2, 80, 10] w, float[2, 80, 20] r, float[B, T, 10] xb) => ()"
    body = '  y, h, c = LSTM <hidden_size = 20, direction = "bidirectional"> (x, w, r)\n'
    body += '  yb, hb, cb = LSTM <direction = "bidirectional", layout = 1> (xb, w, r)\n'
    types, findings = infer(model(sig, body, opset=14))
    assert findings == []
    assert (types["y"], types["h"], types["c"]) == ("float[T, 2, B, 20]", "float[2, B, 20]", "float[2, B, 20]")
    assert (types["yb"], types["hb"], types["cb"]) == ("float[B, T, 2, 20]", "float[B, 2, 20]", "float[B, 2, 20]")


# ---- attention
def test_attention_3d_with_past() -> None:
    sig = "g (float[B, S, 64] q, float[B, L, 32] k, float[B, L, 48] v, float[B, 2, P, 16] pk, float[B, 2, P, 24] pv) => ()"
    body = "  y, pk2, pv2, qk = Attention <q_num_heads = 4, kv_num_heads = 2> (q, k, v, , pk, pv)"
    types, findings = infer(model(sig, body, opset=23))
    assert findings == []
    assert types["y"] == "float[B, S, 96]"
    assert (types["pk2"], types["pv2"]) == ("float[B, 2, L + P, 16]", "float[B, 2, L + P, 24]")
    assert types["qk"] == "float[B, 4, S, L + P]"


def test_quantize_types() -> None:
    sig = "g (float[N, 4] x, float s, int8 z) => ()"
    body = "  a = QuantizeLinear (x, s)\n  b = QuantizeLinear (x, s, z)\n  c = DequantizeLinear (b, s, z)\n"
    body += "  d, e, f = DynamicQuantizeLinear (x)"
    types, findings = infer(model(sig, body, opset=21))
    assert findings == []
    assert (types["a"], types["b"], types["c"]) == ("uint8[N, 4]", "int8[N, 4]", "float[N, 4]")
    assert (types["d"], types["e"], types["f"]) == ("uint8[N, 4]", "float", "uint8")


def test_mistyped_attributes_stop_quietly() -> None:
    sig = "g (float[N, 3, 8, 8] x, float[8, 3, 3, 3] w) => ()"
    body = '  a = Softmax <axis = "one"> (x)\n  b = Conv <strides = [1.5, 2.0]> (x, w)\n  c = Einsum <equation = 3> (x)'
    _, findings = infer(model(sig, body))
    assert {f.code for f in findings} == {"GL314"}


# ---- sliding windows against onnx's own inference
@dataclass(frozen=True)
class Window:
    op: str
    size: int
    kernel: int
    stride: int
    dilation: int
    pads: tuple[int, int] | None
    auto_pad: str
    ceil: bool


WINDOWS = st.builds(
    Window, st.sampled_from(["Conv", "MaxPool", "AveragePool", "ConvTranspose"]), st.integers(1, 20),
    st.integers(1, 5), st.integers(1, 4), st.integers(1, 3),
    st.one_of(st.none(), st.tuples(st.integers(0, 3), st.integers(0, 3))),
    st.sampled_from(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]), st.booleans(),
)  # fmt: skip


def _window_model(p: Window, size: str) -> str:
    attrs = [f"strides = [{p.stride}]"]
    if p.pads is not None:
        attrs.append(f"pads = [{p.pads[0]}, {p.pads[1]}]")
    elif p.auto_pad != "NOTSET":
        attrs.append(f'auto_pad = "{p.auto_pad}"')
    if p.op != "AveragePool":
        attrs.append(f"dilations = [{p.dilation}]")
    inputs = "x, w" if p.op in ("Conv", "ConvTranspose") else "x"
    if p.op not in ("Conv", "ConvTranspose"):
        attrs += [f"kernel_shape = [{p.kernel}]", f"ceil_mode = {int(p.ceil)}"]
    sig = f"g (float[1, 2, {size}] x, float[2, 2, {p.kernel}] w) => (float[?, ?, ?] y)"
    return model(sig, f"  y = {p.op} <{', '.join(attrs)}> ({inputs})", opset=19)


def _onnx_dim(text: str) -> int | None:
    inferred = onnx.shape_inference.infer_shapes(onnx.parser.parse_model(text))
    dims = inferred.graph.output[0].type.tensor_type.shape.dim
    return dims[2].dim_value if len(dims) == 3 and dims[2].HasField("dim_value") else None


def _dropped_window(p: Window, count: int) -> int:
    """1 when ceil mode's last window starts in the end padding: onnx 1.23's inference keeps it, the reference
    runtime (and later onnx) drops it."""
    if p.op not in ("MaxPool", "AveragePool") or not p.ceil:
        return 0
    span = (p.kernel - 1) * (p.dilation if p.op == "MaxPool" else 1) + 1
    begin = 0
    if p.pads is not None:
        begin = p.pads[0]
    elif p.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        total = max(span - (p.size % p.stride or p.stride), 0)
        begin = total // 2 if p.auto_pad == "SAME_UPPER" else total - total // 2
    return int((count - 1) * p.stride >= p.size + begin)


def _past_the_input(findings: list[Finding]) -> bool:
    return any(f.code == "GL306" and f.severity == "warning" for f in findings)


def _evaluate(expr: str, h: int) -> int:
    return int(eval(expr, {"floor": math.floor, "min": min, "max": max, "H": h}))  # noqa: S307


def _spatial(types: dict[str, str]) -> str:
    return types["y"][len("float[1, 2, ") : -1]


@settings(max_examples=150, deadline=None)
@given(WINDOWS)
def test_windows_match_onnx_and_symbolic_dims_agree(p: Window) -> None:
    text = _window_model(p, str(p.size))
    types, findings = infer(text)
    if _past_the_input(findings):
        return  # onnxruntime's count, not onnx's (test_pooling_past_the_input_counts_as_onnxruntime)
    if codes(findings):
        assert codes(findings) == ["GL306"], findings
        return
    assert types["y"].startswith("float[1, 2, "), (types["y"], findings)
    ours, theirs = _spatial(types), _onnx_dim(text)
    if ours == "?":
        return
    if theirs is not None:
        assert int(ours) == theirs - _dropped_window(p, theirs), (text, ours, theirs)
    expr = _spatial(infer(_window_model(p, "H"))[0])
    if expr == "?":
        return
    for h in range(max(1, p.size - 3), p.size + 4):
        concrete, errors = infer(_window_model(p, str(h)))
        if not codes(errors) and not _past_the_input(errors) and _spatial(concrete) != "?":
            assert _evaluate(expr, h) == int(_spatial(concrete)), (expr, h, concrete)


@pytest.mark.parametrize("op", ["AveragePool", "MaxPool", "LpPool"])
def test_pooling_past_the_input_counts_as_onnxruntime(op: str) -> None:
    """A pooling kernel larger than its padded input: onnxruntime divides with C++'s truncation ((2 - 3) / 3 + 1 =
    1, paddle2onnx's PP-OCR recognizer on a height of 2) and fails only below 0; graphlsp gives its count with a
    warning, and the error where it fails."""
    ort = pytest.importorskip("onnxruntime")
    import numpy as np

    for size, kernel, stride, ceil in [(2, 3, 3, 0), (2, 3, 1, 0), (1, 3, 3, 0), (2, 4, 3, 1), (2, 5, 1, 0),
                                       (1, 4, 2, 0), (3, 7, 2, 1)]:  # fmt: skip
        attrs = f"kernel_shape = [{kernel}], strides = [{stride}]" + (f", ceil_mode = {ceil}" if op != "LpPool" else "")
        text = model(f"g (float[1, 2, {size}] x) => (float[?, ?, ?] y)", f"  y = {op} <{attrs}> (x)", opset=19)
        types, findings = infer(text)
        try:
            session = ort.InferenceSession(onnx.parser.parse_model(text).SerializeToString(),
                                           providers=["CPUExecutionProvider"])  # fmt: skip
            got = session.run(None, {"x": np.ones((1, 2, size), np.float32)})[0].shape[2]
        except Exception:  # noqa: BLE001 - onnxruntime refuses the count
            assert codes(findings) == ["GL306"], (size, kernel, stride, ceil, findings)
            continue
        assert not codes(findings) and _past_the_input(findings), (size, kernel, stride, ceil, findings)
        assert types["y"] == f"float[1, 2, {got}]", (size, kernel, stride, ceil)
