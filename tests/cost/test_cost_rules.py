"""Cost rules on small models written as text: exact formulas in the input dims, the conventions of docs/cost.md
(torch.utils.flop_counter's for contractions), bodies (If, Loop, Scan, functions), parameters, the peak."""

from __future__ import annotations

from graphlsp.analysis import Analysis
from graphlsp.cost.formula import evaluate
from graphlsp.cost.model import ModelCost, NodeCost, model_cost

HEAD = '<ir_version: 10, opset_import: ["" : 21, "com.microsoft" : 1]>\n'


def cost_of(text: str) -> ModelCost:
    a = Analysis(HEAD + text)
    assert not a.doc.problems, a.doc.problems
    return model_cost(a.model, a.refiner)


def node(cost: ModelCost, op: str) -> NodeCost:
    return next(n for n in cost.nodes if n.node.op_type == op)


def test_matmul_is_two_flops_per_multiply_add() -> None:
    c = cost_of("g (float[B, S, 768] x, float[768, 3072] w) => (float[B, S, 3072] y) { y = MatMul (x, w) }")
    n = node(c, "MatMul")
    assert str(n.flops) == "4718592*B*S"  # 2 * 768 * 3072
    assert str(n.macs) == "2359296*B*S"
    assert str(n.read) == "3072*B*S + 9437184" and str(n.written) == "12288*B*S"
    assert evaluate(n.flops, {"B": 2, "S": 5}) == 2 * 2 * 5 * 768 * 3072


def test_batched_matmul_and_gemm() -> None:
    c = cost_of("g (float[B, H, S, 64] q, float[B, H, 64, T] k, float[M, 16] a, float[32, 16] b) => "
                "(float[B, H, S, T] s, float[M, 32] y) { s = MatMul (q, k)\n y = Gemm <transB: int = 1> (a, b) }")
    assert str(node(c, "MatMul").flops) == "128*B*H*S*T"
    assert str(node(c, "Gemm").flops) == "1024*M"  # 2 * 32 * 16


def test_conv_as_torch_counts_it() -> None:
    """torch's conv_flop_count: 2 * N * prod(W) * prod(output spatial); bias not counted; groups through W."""
    c = cost_of("g (float[N, 32, H, W] x, float[64, 8, 3, 3] w, float[64] b) => (float[N, 64, a, b2] y) "
                "{ y = Conv <group: int = 4, strides: ints = [2, 2], pads: ints = [1, 1, 1, 1]> (x, w, b) }")
    assert str(node(c, "Conv").flops) == "9216*N*floor((H + 1)/2)*floor((W + 1)/2)"  # 2 * 64*8*3*3


def test_conv_transpose_counts_input_positions() -> None:
    c = cost_of("g (float[N, 16, H, W] x, float[16, 8, 2, 2] w) => (float[N, 8, a, b] y) "
                "{ y = ConvTranspose <strides: ints = [2, 2]> (x, w) }")
    assert str(node(c, "ConvTranspose").flops) == "1024*H*N*W"  # 2 * 16*8*2*2 * H * W


def test_einsum_from_its_equation() -> None:
    c = cost_of('g (float[B, I, J] x, float[B, J, K] y) => (float[B, I, K] z) { z = Einsum <equation: string = '
                '"bij,bjk->bik"> (x, y) }')
    assert str(node(c, "Einsum").flops) == "2*B*I*J*K"
    c = cost_of('g (float[B, I, J] x) => (float[B, J, I] z) { z = Einsum <equation: string = "bij->bji"> (x) }')
    assert node(c, "Einsum").flops == 0


def test_group_query_attention_with_past() -> None:
    gqa = """g (float[B, S, 512] q, float[B, S, 128] k, float[B, S, 128] v, float[B, 2, P, 64] pk,
        float[B, 2, P, 64] pv, int32[B] lens, int64[B, T] mask, int32 given) => (float[B, S, 512] y) {
        shape = Shape (mask)
        one = Constant <value: tensor = int64 {1}> ()
        t64 = Gather <axis: int = 0> (shape, one)
        total = Cast <to: int = 6> (t64)
        y, yk, yv = com.microsoft.GroupQueryAttention <num_heads: int = 8, kv_num_heads: int = 2> (q, k, v, pk, pv,
            lens, TOTAL)
    }"""
    # Q.K^T and P.V over every query head: 2 * 2 * B * S * T * 512, T the total length (the mask's, as the GenAI
    # builder writes it)
    n = node(cost_of(gqa.replace("TOTAL", "total")), "GroupQueryAttention")
    assert str(n.flops) == "2048*B*S*T"
    n = node(cost_of(gqa.replace("TOTAL", "given")), "GroupQueryAttention")
    assert n.flops is None  # a total length fed as data: not a formula in the input dims


def test_multi_head_attention_with_past() -> None:
    c = cost_of("""g (float[B, S, 256] q, float[B, S, 256] k, float[B, S, 256] v, float[B, 4, P, 64] pk,
        float[B, 4, P, 64] pv) => (float[B, S, 256] y) {
        y, yk, yv = com.microsoft.MultiHeadAttention <num_heads: int = 4> (q, k, v, , , , pk, pv)
    }""")
    n = node(c, "MultiHeadAttention")
    assert str(n.flops) == "1024*B*P*S + 1024*B*S*S"  # 2 * 2 * B * S * (P + S) * 256


def test_matmul_nbits_uses_k() -> None:
    c = cost_of("""g (float[B, S, 256] x, uint8[1024, 8, 16] w, float[8192] s) => (float[B, S, 1024] y) {
        y = com.microsoft.MatMulNBits <K: int = 256, N: int = 1024, bits: int = 4, block_size: int = 32> (x, w, s)
    }""")
    assert str(node(c, "MatMulNBits").flops) == "524288*B*S"


def test_elementwise_normalisation_and_free_ops() -> None:
    c = cost_of("""g (float[B, S, 64] x, float[64] g1, float[64] b1) => (float[B, 64, S] z) {
        a = Relu (x)
        n = LayerNormalization <axis: int = -1> (a, g1, b1)
        s = Softmax <axis: int = -1> (n)
        r = ReduceSum <keepdims: int = 1> (s)
        z = Transpose <perm: ints = [0, 2, 1]> (s)
    }""")
    assert str(node(c, "Relu").flops) == "64*B*S"
    assert str(node(c, "LayerNormalization").flops) == "448*B*S"  # 7 per element with scale and bias
    assert str(node(c, "Softmax").flops) == "320*B*S"
    assert str(node(c, "ReduceSum").flops) == "64*B*S"
    assert node(c, "Transpose").flops == 0


def test_if_takes_the_larger_branch_and_says_so() -> None:
    c = cost_of("""g (bool c, float[N, 8] x, float[8, 8] w) => (float[N, 8] y) {
        y = If (c) <then_branch: graph = t () => (float[N, 8] a) { a = MatMul (x, w) },
                    else_branch: graph = e () => (float[N, 8] b) { b = Relu (x) }>
    }""")
    n = node(c, "If")
    assert str(n.flops) == "128*N" and "then_branch" in n.note


def test_loop_is_trips_times_body_or_unbounded() -> None:
    body = "body (int64 i, bool cond, float[N, 8] acc) => (bool co, float[N, 8] out) { co = Identity (cond)\n out = Relu (acc) }"
    c = cost_of(f"""g (float[N, 8] x, float[T, 4] t) => (float[N, 8] y) {{
        s = Shape <start: int = 0, end: int = 1> (t)
        m = Squeeze (s)
        y = Loop (m, , x) <body: graph = {body}>
    }}""")
    n = node(c, "Loop")
    assert str(n.flops) == "8*N*T" and "trips" in n.note
    c = cost_of(f"""g (float[N, 8] x, int64 m) => (float[N, 8] y) {{
        y = Loop (m, , x) <body: graph = {body}>
    }}""")
    n = node(c, "Loop")
    assert n.flops is None and n.note.startswith("unbounded: ")


def test_scan_is_length_times_body() -> None:
    c = cost_of("""g (float[4] h, float[L, 4] xs) => (float[4] hN, float[L, 4] ys) {
        hN, ys = Scan <num_scan_inputs: int = 1, body: graph = b (float[4] s, float[4] x) => (float[4] s2, float[4] y) {
            s2 = Add (s, x)
            y = Identity (s2)
        }> (h, xs)
    }""")
    assert str(node(c, "Scan").flops) == "4*L"


def test_function_costs_per_call() -> None:
    c = cost_of("""g (float[N, 16] x, float[16, 16] w) => (float[N, 16] y) {
        h = local.Dense (x, w)
        y = local.Dense (h, w)
    }
    <domain: "local", opset_import: ["" : 21]>
    Dense (a, b) => (c) { m = MatMul (a, b)\n c = Relu (m) }""".replace('["" : 21, "com.microsoft" : 1]', '["" : 21, "local" : 1]'))
    calls = [n for n in c.nodes if n.node.op_type == "Dense"]
    assert [str(n.flops) for n in calls] == ["528*N", "528*N"]  # 2*16*16 + 16 per row, per call
    assert str(c.flops) == "1056*N"


def test_parameters_by_type_and_int4_packed() -> None:
    c = cost_of("""g (float[N, 3] x) => (float[N, 3] y) <float[3, 3] w = {1,2,3,4,5,6,7,8,9}, int4[5] q = {1,2,3,4,5}> {
        k = Constant <value: tensor = float[2] {1.0, 2.0}> ()
        y = MatMul (x, w)
    }""")
    p = c.params
    assert p.of_kind("initializer") == (14, 36 + 3)  # 9 floats, 5 int4 packed in 3 bytes
    assert p.of_kind("constant") == (2, 8)


def test_peak_is_a_formula_or_a_max_with_its_nodes() -> None:
    c = cost_of("""g (float[N, 64] x) => (float[N, 64] y) {
        a = Relu (x)
        b = Relu (a)
        y = Sigmoid (b)
    }""")
    # one formula: the input and a (256*N + 256*N) at the first step; a and b, then b and y, are no more
    assert [(str(x), n.op_type if n else None) for x, n in c.peak.candidates] == [("512*N", "Relu")]
    c = cost_of("""g (float[N, 64] x, float[M] m) => (float[N, 64] y, float[M] z) {
        a = Relu (x)
        y = Sigmoid (a)
        z = Relu (m)
    }""")
    assert len(c.peak.candidates) == 2  # N and M sizes are incomparable: a max of two formulas
    assert c.peak.value({"N": 10, "M": 1})[0] == 4 * (64 * 10 * 2 + 1)


def test_a_peak_step_is_dropped_only_when_provably_smaller() -> None:
    """`floor(E/d) <= E/d` proves a pooled map smaller than its input; nothing is dropped that could be larger."""
    from graphlsp.cost.formula import nonnegative
    from graphlsp.infer import dims as d

    h, w = d.symbol("H"), d.symbol("W")
    pooled = d.mul(d.floordiv(h, 2), d.floordiv(w, 2))

    def ok(x: d.Dim) -> bool:
        assert isinstance(x, d.Expr)
        return nonnegative(dict(x.poly))

    assert ok(d.sub(d.mul(32, d.mul(h, w)), d.mul(32, pooled)))  # 32*H*W >= 32*floor(H/2)*floor(W/2)
    assert ok(d.sub(d.mul(h, w), d.mul(4, pooled)))  # H*W >= 4*floor(H/2)*floor(W/2)
    assert not ok(d.sub(d.mul(h, w), d.mul(5, pooled)))  # false at H = W = 2
    assert not ok(d.sub(d.floordiv(d.add(h, 2), 4), h))  # floor((H + 2)/4) >= H: false at H = 1
    c = cost_of("""g (float[N, 8, H, W] x) => (float[N, 8, a, b] y) {
        r = Relu (x)
        y = MaxPool <kernel_shape: ints = [2, 2], strides: ints = [2, 2]> (r)
    }""")
    # x and r at the Relu; r and y at the pool, provably less: one formula
    assert [str(x) for x, _ in c.peak.candidates] == ["64*H*N*W"]
