"""Attention: onnxruntime's Attention, MultiHeadAttention and GroupQueryAttention, and ai.onnx Attention (23).

As torch.utils.flop_counter counts scaled dot-product attention, two batched products: the scores Q.K^T
(2 * B * S * T * D FLOPs, D = heads * head size of the queries) and the context P.V (2 * B * S * T * Dv), where S
is the number of queries and T the number of keys attended to: the past and the new ones (`past_sequence_length +
sequence_length`), or `total_sequence_length` for GroupQueryAttention. Grouped-query attention counts every query
head, as torch broadcasts the key heads. Softmax, scaling, masks and rotary embeddings are not counted (nor does
torch count them). onnxruntime's Attention also holds the Q, K, V projection, a product counted as MatMul is.
"""

from __future__ import annotations

from graphlsp.cost.linalg import contraction
from graphlsp.cost.registry import Call, Work, cost_fn
from graphlsp.infer import dims as d
from graphlsp.infer.dims import Dim


def _attend(b: Dim, s: Dim, t: Dim, dq: Dim, dv: Dim, extra: Work | None = None, note: str = "") -> Work:
    rows = d.product([b, s, t])
    macs = d.add(d.mul(rows, dq), d.mul(rows, dv))
    if extra is not None:
        macs = d.add(macs, extra.macs)
    return Work(d.mul(macs, 2), macs, note)


def _with_past(c: Call, new: Dim, past_slot: int, axis: int) -> Dim:
    """The keys attended to: the new ones and, when a past is given, its length on `axis`."""
    if not c.has(past_slot):
        return new
    past = c.shape(past_slot)
    if past is None or len(past) <= axis:
        return None
    return d.add(new, past[axis])


@cost_fn("Attention", "QAttention", domain="com.microsoft")
def ms_attention(c: Call) -> Work:
    """input [B, S, In] by weights [In, Dq + Dk + Dv] (qkv_hidden_sizes, else three equal parts); past
    [2, B, N, P, h]; output [B, S, Dv]."""
    x, w, y = c.shape(0), c.shape(1), c.out()
    if x is None or w is None or y is None or len(x) != 3 or len(w) != 2:
        return Work(None)
    proj = contraction(d.product([x[0], x[1], w[1]]), w[0])
    sizes = c.attr("qkv_hidden_sizes")
    dq = sizes[0] if sizes else d.floordiv(w[1], 3)
    present = c.out(1)
    t = present[3] if present is not None and len(present) == 5 else _with_past(c, x[1], 4, 3)
    return _attend(x[0], x[1], t, dq, y[-1], proj, "with the Q, K, V projection")


@cost_fn("MultiHeadAttention", domain="com.microsoft")
def multi_head_attention(c: Call) -> Work:
    q, k, y = c.shape(0), c.shape(1), c.out()
    if q is None or y is None or len(y) != 3:
        return Work(None)
    b, s = q[0], q[1]
    if len(q) == 5:  # packed Q, K, V: [B, S, N, 3, h]
        dq, t = d.mul(q[2], q[4]), s
    elif len(q) == 3:
        dq = q[2]
        present = c.out(1)
        if present is not None and len(present) == 4:
            t = present[2]
        elif k is None:
            return Work(None)
        elif len(k) == 3:  # [B, L, D]
            t = _with_past(c, k[1], 6, 2)
        elif len(k) == 4:  # [B, N, L, h]: a cross-attention cache, no past
            t = k[2]
        elif len(k) == 5:  # packed K, V: [B, L, N, 2, h]
            t = k[1]
        else:
            return Work(None)
    else:
        return Work(None)
    return _attend(b, s, t, dq, y[2])


@cost_fn("GroupQueryAttention", domain="com.microsoft")
def group_query_attention(c: Call) -> Work:
    """query [B, S, N*h] (or Q, K, V packed), output [B, S, N*h]; T = total_sequence_length (input 6), else the
    present key's length."""
    q, y = c.shape(0), c.out()
    if q is None or y is None or len(q) != 3 or len(y) != 3:
        return Work(None)
    total = c.value(6)
    t: Dim = total[0] if total is not None and len(total) == 1 else None
    if t is None:
        present = c.out(1)
        t = present[2] if present is not None and len(present) == 4 else None
    return _attend(q[0], q[1], t, y[2], y[2], None, "every query head (keys shared by groups)")


@cost_fn("Attention")
def attention(c: Call) -> Work:
    """ai.onnx Attention (23): Q [B, Hq, S, h] or [B, S, Hq*h]; K [B, Hkv, L, h] or [B, L, Hkv*h]; past_key
    [B, Hkv, P, h]; Y [B, Hq, S, hv] or [B, S, Hq*hv]."""
    q, k, y = c.shape(0), c.shape(1), c.out()
    if q is None or k is None or y is None:
        return Work(None)
    if len(q) == 4 and len(y) == 4:
        b, s, dq, dv = q[0], q[2], d.mul(q[1], q[3]), d.mul(y[1], y[3])
    elif len(q) == 3 and len(y) == 3:
        b, s, dq, dv = q[0], q[1], q[2], y[2]
    else:
        return Work(None)
    present = c.out(1)
    if present is not None and len(present) == 4:
        t = present[2]
    elif len(k) in (3, 4):
        t = _with_past(c, k[-2] if len(k) == 4 else k[1], 4, 2)
    else:
        return Work(None)
    return _attend(b, s, t, dq, dv)
