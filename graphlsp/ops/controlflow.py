"""Control flow: If, Loop and Scan, inferred through their bodies (`ctx.infer_graph`).

If: each output is the relaxation of the two branches' outputs (TensorFlow's rule: equal dims stay, differing
dims become unknown, different ranks give an unknown rank); a known condition picks its branch.
Loop and Scan: loop-carried values start as the initial values' types and are relaxed with the body's outputs
until they stop changing, so the body is inferred with types that hold on every iteration. Scan outputs get the
iteration count as a new dim: the trip count for a Loop whose count is known and whose condition cannot stop it,
the scanned axis' length for a Scan.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from graphlsp.graph.core import Graph, Value
from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.conditions import Condition
from graphlsp.infer.context import InferenceContext, Refiner
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import MapType, OptionalType, SequenceType, TensorType, ValueType, declared_type, type_str
from graphlsp.ops.registry import shape_fn

MAX_ROUNDS = 4  # relaxation rounds before loop-carried shapes are dropped altogether


# ---- type lattice helpers (shared with sequence.py)
def weaken(t: ValueType) -> ValueType:
    """The same kind and element types, without shapes."""
    if isinstance(t, TensorType):
        return TensorType(t.elem, None, t.sparse)
    if isinstance(t, SequenceType):
        return SequenceType(weaken(t.elem))
    if isinstance(t, OptionalType):
        return OptionalType(weaken(t.elem))
    if isinstance(t, MapType):
        return MapType(t.key, weaken(t.value))
    return None


def relax_type(a: ValueType, b: ValueType, unwrap: bool = False) -> ValueType:
    """The most precise type both a and b are instances of. Element types must agree in a valid model, so a
    known one is kept when the other is unknown; an unknown side keeps the other's kind without its shape.
    With `unwrap`, optional(T) against a non-optional T relaxes to T's kind (onnx lets a Loop-carried optional
    come back from the body as its element)."""
    if unwrap and isinstance(a, OptionalType) != isinstance(b, OptionalType):
        a = a.elem if isinstance(a, OptionalType) else a
        b = b.elem if isinstance(b, OptionalType) else b
    if a is None:
        return weaken(b)
    if b is None:
        return weaken(a)
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        elem = a.elem if b.elem is None or a.elem == b.elem else (b.elem if a.elem is None else None)
        return TensorType(elem, sh.relax(a.shape, b.shape), a.sparse and b.sparse)
    if isinstance(a, SequenceType) and isinstance(b, SequenceType):
        return SequenceType(relax_type(a.elem, b.elem))
    if isinstance(a, OptionalType) and isinstance(b, OptionalType):
        return OptionalType(relax_type(a.elem, b.elem))
    if isinstance(a, MapType) and isinstance(b, MapType) and a.key == b.key:
        return MapType(a.key, relax_type(a.value, b.value))
    return None


def type_conflict(a: ValueType, b: ValueType, unwrap: bool = False) -> bool:
    """Whether a and b certainly cannot be the same type (different kinds or known element types); `unwrap`
    accepts optional(T) against T."""
    if unwrap and isinstance(a, OptionalType) != isinstance(b, OptionalType):
        a = a.elem if isinstance(a, OptionalType) else a
        b = b.elem if isinstance(b, OptionalType) else b
    if a is None or b is None:
        return False
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return a.elem is not None and b.elem is not None and a.elem != b.elem
    if type(a) is not type(b):
        return True
    if isinstance(a, SequenceType | OptionalType) and isinstance(b, SequenceType | OptionalType):
        return type_conflict(a.elem, b.elem)
    if isinstance(a, MapType) and isinstance(b, MapType):
        return (a.key is not None and b.key is not None and a.key != b.key) or type_conflict(a.value, b.value)
    return False


def subgraph(ctx: InferenceContext, attr: str) -> Graph | None:
    graphs = ctx.node.subgraphs.get(attr)
    return graphs[0] if graphs else None


def fixed_point(
    ctx: InferenceContext, body: Graph, build: Callable[[list[ValueType]], list[ValueType]], carried: list[ValueType],
    outs_of: Callable[[list[ValueType]], list[ValueType]], what: str,
) -> tuple[list[ValueType], list[ValueType]]:  # fmt: skip
    """Relax the carried types with the body's outputs until stable; returns (carried types, body outputs).

    build(carried) gives the body's input types; outs_of(body outputs) the outputs that feed back, in order. A
    carried value the first iteration returns with another element type is GL317 (`what` names it)."""
    outs: list[ValueType] = []
    for round in range(MAX_ROUNDS):
        outs = ctx.infer_graph(body, build(carried))
        back = outs_of(outs)
        if round == 0:
            _check_carried(ctx, what, carried, back)
        nxt = [_relax_carried(c, o) for c, o in zip(carried, back, strict=False)]
        nxt += carried[len(nxt) :]
        if nxt == carried:
            return carried, outs
        carried = nxt
    carried = [weaken(c) for c in carried]
    return carried, ctx.infer_graph(body, build(carried))


def _relax_carried(c: ValueType, o: ValueType) -> ValueType:
    """A carried value's next body input type: relaxed with the body's output, keeping an optional optional."""
    ty = relax_type(c, o, unwrap=True)
    if isinstance(c, OptionalType) and not isinstance(ty, OptionalType):
        return OptionalType(ty)
    return ty


def carried_output(carried: ValueType, out: ValueType) -> ValueType:
    """The final value's type: the body's output kind when an optional comes back as its element."""
    if isinstance(carried, OptionalType) and out is not None and not isinstance(out, OptionalType):
        return carried.elem
    return carried


def _check_carried(ctx: InferenceContext, what: str, inits: list[ValueType], outs: list[ValueType]) -> None:
    """`what`: "carried" (Loop: slot 0 is the condition) or "state" (Scan)."""
    for j, (a, b) in enumerate(zip(inits, outs, strict=False)):
        if type_conflict(a, b, unwrap=True):
            ctx.error("GL317", f"{_carried_name(what, j)} starts as {type_str(a)} but the body returns {type_str(b)}")


def _carried_name(what: str, j: int) -> str:
    if what == "state":
        return f"state variable {j}"
    return "the condition" if j == 0 else f"loop-carried value {j - 1}"


# ---- If
def _known_cond(ctx: InferenceContext, i: int) -> bool | None:
    const = ctx.input_const(i)
    if const is not None and np.asarray(const).size == 1:
        return bool(np.asarray(const).reshape(-1)[0])
    sv = ctx.input_shape_value(i)
    if sv is not None and len(sv) == 1 and isinstance(sv[0], int):
        return bool(sv[0])
    return None


@shape_fn("If")
def if_op(ctx: InferenceContext) -> None:
    then_g, else_g = subgraph(ctx, "then_branch"), subgraph(ctx, "else_branch")
    if then_g is None or else_g is None:
        return
    # the branches' output counts are the node's contract whichever runs (onnx's inference, which onnxruntime
    # runs on load, refuses a mismatch): checked before a known condition sets one branch aside, whose outputs
    # are never looked up past its end
    if len(then_g.outputs) != len(else_g.outputs):
        raise ctx.fail("GL317", f"then_branch returns {len(then_g.outputs)} outputs but else_branch "
                       f"{len(else_g.outputs)}")  # fmt: skip
    ctx.refiner.splits.pop(ctx.node, None)
    cond = _known_cond(ctx, 0)
    if cond is None:
        cond = ctx.refiner.assumed.get(ctx.node)  # a case inferred apart (infer/branches.py)
    if cond is not None:  # the branch not taken is dead code: no types, no findings from it
        taken, dead = (then_g, else_g) if cond else (else_g, then_g)
        ctx.refiner.forget_graph(dead)
        taken_t = ctx.infer_graph(taken, [])
        if len(taken_t) != ctx.n_outputs:
            raise ctx.fail("GL317", f"has {ctx.n_outputs} outputs but its branches return {len(taken_t)}")
        for i, ty in enumerate(taken_t):
            if ty is not None:
                ctx.set_output_type(i, ty)
                _branch_value(ctx, i, then_g.outputs[i], else_g.outputs[i], cond)
        return
    then_t = ctx.infer_graph(then_g, [])
    else_t = ctx.infer_graph(else_g, [])
    if len(then_t) != len(else_t):
        raise ctx.fail("GL317", f"then_branch returns {len(then_t)} outputs but else_branch {len(else_t)}")
    if len(then_t) != ctx.n_outputs:
        raise ctx.fail("GL317", f"has {ctx.n_outputs} outputs but its branches return {len(then_t)}")
    _one_branch_contradictions(ctx, then_g.outputs, else_g.outputs)
    if any(_ranks_differ(a, b) for a, b in zip(then_t, else_t, strict=True)):
        relation = _relation(ctx.refiner, ctx.node.inputs[0] if ctx.node.inputs else None)
        if relation is not None:
            ctx.refiner.splits[ctx.node] = relation
    for i, (a, b) in enumerate(zip(then_t, else_t, strict=True)):
        if type_conflict(a, b):
            ctx.error("GL317", f"output {i} is {type_str(a)} in then_branch but {type_str(b)} in else_branch")
            continue
        ty = relax_type(a, b) if cond is None else (a if cond else b)
        if ty is not None:
            ctx.set_output_type(i, ty)
            _branch_value(ctx, i, then_g.outputs[i], else_g.outputs[i], cond)


def _ranks_differ(a: ValueType, b: ValueType) -> bool:
    return (isinstance(a, TensorType) and isinstance(b, TensorType) and a.shape is not None and b.shape is not None
            and len(a.shape) != len(b.shape))  # fmt: skip


_PASS_ONE = ("Identity", "Squeeze", "Unsqueeze", "Reshape", "Flatten")  # one element in, the same element out


def _relation(refiner: Refiner, value: Value | None) -> tuple[Condition, Condition] | None:
    """A boolean value as a relation of dims (torch's `Equal(Shape(x)[d], 1)` for `x.squeeze(d)`): the condition
    that holds when it is true, and the one that holds when it is false; None when it is no such relation."""
    negate = False
    for _ in range(8):
        node = value.producer if value is not None else None
        if node is None or node.domain not in ("", "ai.onnx") or not node.inputs:
            return None
        op = node.op_type
        if op == "Not" or op in _PASS_ONE or (op == "Cast" and _elem(refiner, node.inputs[0]) == TensorProto.BOOL):
            negate ^= op == "Not"
            value = node.inputs[0]
            continue
        if op not in _COMPARISONS or len(node.inputs) != 2:
            return None
        a, b = _one_dim(refiner, node.inputs[0]), _one_dim(refiner, node.inputs[1])
        if a is None or b is None or isinstance(a, int) and isinstance(b, int):
            return None
        when_true, when_false = _COMPARISONS[op](a, b)
        return (when_false, when_true) if negate else (when_true, when_false)
    return None


def _elem(refiner: Refiner, value: Value | None) -> int | None:
    x = refiner.values.get(value) if value is not None else None
    return x.type.elem if x is not None and isinstance(x.type, TensorType) else None


def _one_dim(refiner: Refiner, value: Value | None) -> Dim:
    """The one element of an int value, as a dim (a shape value's, or a constant's)."""
    x = refiner.values.get(value) if value is not None else None
    if x is None:
        return None
    if x.sv is not None:
        return x.sv[0] if len(x.sv) == 1 else None
    if x.const is not None and x.const.size == 1 and x.const.dtype.kind in "iu":
        return int(x.const.reshape(-1)[0])
    return None


def _below(a: Dim, b: Dim) -> Condition:
    """a < b"""
    return Condition(d.add(a, 1), b, at_most=True)


def _differ(a: Dim, b: Dim) -> Condition:
    return Condition(d.add(a, 1), b, at_most=True, others=(_below(b, a),))


_COMPARISONS: dict[str, Callable[[Dim, Dim], tuple[Condition, Condition]]] = {
    "Equal": lambda a, b: (Condition(a, b), _differ(a, b)),
    "Greater": lambda a, b: (_below(b, a), Condition(a, b, at_most=True)),
    "Less": lambda a, b: (_below(a, b), Condition(b, a, at_most=True)),
    "GreaterOrEqual": lambda a, b: (Condition(b, a, at_most=True), _below(a, b)),
    "LessOrEqual": lambda a, b: (Condition(a, b, at_most=True), _below(b, a)),
}


def _one_branch_contradictions(ctx: InferenceContext, then_out: list[Value], else_out: list[Value]) -> None:
    """With the condition unknown, a branch output that contradicts its declaration is no finding while the other
    branch's agrees: the model may never take that branch at those sizes (optimum's merged decoders return an empty
    constant from the branch with past for the encoder's key, declared as the other branch computes it)."""
    refiner = ctx.refiner
    for t, e in zip(then_out, else_out, strict=False):
        wrong_t, wrong_e = refiner.contradicts_declaration(t), refiner.contradicts_declaration(e)
        if wrong_t != wrong_e:
            refiner.withdraw_contradiction(t if wrong_t else e)


def _branch_value(ctx: InferenceContext, i: int, then_v: Value, else_v: Value, cond: bool | None) -> None:
    """Output i's contents: the taken branch's when the condition is known, else what both branches agree on."""
    a, b = ctx.refiner.values.get(then_v), ctx.refiner.values.get(else_v)
    if cond is not None:
        x = a if cond else b
        if x is not None:
            ctx.set_output_value(i, x.sv, x.const)
    elif a is not None and b is not None and a.sv is not None and a.sv == b.sv:
        ctx.set_output_value(i, a.sv)


# ---- Loop
def _is_passthrough(out: Value, inp: Value) -> bool:
    """Whether a body output is the body input itself, directly or through Identity nodes."""
    seen = 0
    while out is not inp and seen < 8:
        node = out.producer
        if node is None or node.op_type != "Identity" or node.domain or not node.inputs or node.inputs[0] is None:
            return False
        out = node.inputs[0]
        seen += 1
    return out is inp


def _trip_count(ctx: InferenceContext, body: Graph) -> Dim:
    """The number of iterations when it is certain: M known, and no condition that could end the loop early."""
    if not ctx.has_input(0):
        return None
    if ctx.has_input(1):
        stays = _known_cond(ctx, 1) is True and len(body.inputs) > 1 and len(body.outputs) > 0
        if not stays or not _is_passthrough(body.outputs[0], body.inputs[1]):
            return None
    sv = ctx.input_shape_value(0)
    if sv is None or len(sv) != 1:
        return None
    m = sv[0]
    return max(m, 0) if isinstance(m, int) else m


def _counter_type(body: Graph, i: int, elem: int) -> TensorType:
    """The iteration number and condition are scalars, unless the body declares another shape (onnxruntime
    then passes that shape, so the declaration stands)."""
    declared = declared_type(body.inputs[i].type) if i < len(body.inputs) else None
    if isinstance(declared, TensorType) and declared.shape is not None and declared.shape != ():
        return TensorType(elem, None)
    return TensorType(elem, ())


@shape_fn("Loop")
def loop(ctx: InferenceContext) -> None:
    body = subgraph(ctx, "body")
    n = max(len(ctx.node.inputs) - 2, 0)
    inits = [ctx.input_type(2 + j) for j in range(n)]
    for j in range(min(n, ctx.n_outputs)):
        if inits[j] is not None:
            ctx.set_output_type(j, weaken(inits[j]))
    if body is None:
        return
    if len(body.inputs) != n + 2:
        raise ctx.fail("GL317", f"body takes {len(body.inputs)} inputs, but Loop passes {n + 2} "
                       f"(iteration number, condition and {n} loop-carried values)")  # fmt: skip
    if len(body.outputs) != ctx.n_outputs + 1:
        raise ctx.fail("GL317", f"body returns {len(body.outputs)} outputs, but Loop has {ctx.n_outputs} "
                       f"(the body returns the condition first, then one per Loop output)")  # fmt: skip
    if n > ctx.n_outputs:
        raise ctx.fail("GL317", f"has {n} loop-carried inputs but only {ctx.n_outputs} outputs")
    iter_t, cond = _counter_type(body, 0, TensorProto.INT64), _counter_type(body, 1, TensorProto.BOOL)
    carried, outs = fixed_point(ctx, body, lambda c: [iter_t, *c], [cond, *inits], lambda o: o[: n + 1], "carried")
    for j in range(n):
        ctx.set_output_type(j, carried_output(carried[1 + j], outs[1 + j]))
    lead = _trip_count(ctx, body)
    for k, ty in enumerate(outs[n + 1 :]):
        _set_scan_output(ctx, n + k, ty, lead, 0)


def _set_scan_output(ctx: InferenceContext, i: int, ty: ValueType, lead: Dim, axis: int) -> None:
    """Output i stacks the body's per-iteration tensor `ty` along `axis` (already checked against the rank)."""
    if ty is None:
        return
    if not isinstance(ty, TensorType):
        ctx.error("GL317", f"scan output {i} must be a tensor, but the body returns {type_str(ty)}")
        return
    if ty.shape is None:
        ctx.set_output(i, None, ty.elem)
        return
    shape = list(ty.shape)
    shape.insert(axis, lead)
    ctx.set_output(i, tuple(shape), ty.elem)


# ---- Scan
def _remove_dims(ty: ValueType, axes: list[int]) -> ValueType:
    if not isinstance(ty, TensorType) or ty.shape is None:
        return ty
    return TensorType(ty.elem, tuple(x for i, x in enumerate(ty.shape) if i not in axes), ty.sparse)


def _merge_len(ctx: InferenceContext, acc: Dim, x: Dim, i: int, what: str) -> Dim:
    if ctx.dim_eq(acc, x) is False:
        raise ctx.fail("GL317", f"scan input {i} has {what} {d.to_str(x)}, but an earlier one has {d.to_str(acc)}",
                       input=i)  # fmt: skip
    return sh.merge_dim(acc, x)


def _scan_axes(ctx: InferenceContext, name: str, count: int) -> list[int]:
    axes = ctx.attr(name)
    if axes is None:
        return [0] * count
    axes = [int(a) for a in axes]
    if len(axes) != count:
        raise ctx.fail("GL317", f"{name} has {len(axes)} entries for {count} scan {name.split('_')[1]}s", attr=name)
    return axes


@shape_fn("Scan", since=9)
def scan(ctx: InferenceContext) -> None:
    body = subgraph(ctx, "body")
    m = int(ctx.attr("num_scan_inputs", 0))
    n = len(ctx.node.inputs) - m
    if m < 1 or n < 0 or n > ctx.n_outputs:
        raise ctx.fail("GL317", f"num_scan_inputs {m} does not fit {len(ctx.node.inputs)} inputs and "
                       f"{ctx.n_outputs} outputs", attr="num_scan_inputs")  # fmt: skip
    in_axes = _scan_axes(ctx, "scan_input_axes", m)
    out_axes = _scan_axes(ctx, "scan_output_axes", ctx.n_outputs - n)
    inits = [ctx.input_type(j) for j in range(n)]
    for j in range(n):
        if inits[j] is not None:
            ctx.set_output_type(j, inits[j])
    seq_len: Dim = None
    slices: list[ValueType] = []
    for k in range(m):
        i = n + k
        shape = ctx.input_shape(i)
        if shape is None:
            slices.append(ctx.input_type(i))
            continue
        axis = ctx.axis(in_axes[k], len(shape), "scan_input_axes")
        assert axis is not None
        seq_len = _merge_len(ctx, seq_len, shape[axis], i, "sequence length")
        slices.append(_remove_dims(ctx.input_type(i), [axis]))
    if body is None:
        return
    _check_body_arity(ctx, body, n + m)
    carried, outs = fixed_point(ctx, body, lambda c: [*c, *slices], inits, lambda o: o[:n], "state")
    for j in range(n):
        ctx.set_output_type(j, carried[j])
    for k, ty in enumerate(outs[n:]):
        shape = ty.shape if isinstance(ty, TensorType) else None
        axis = out_axes[k]
        if shape is not None:
            axis = ctx.axis(axis, len(shape) + 1, "scan_output_axes") or 0
        _set_scan_output(ctx, n + k, ty, seq_len, axis)


def _check_body_arity(ctx: InferenceContext, body: Graph, n_in: int) -> None:
    if len(body.inputs) != n_in:
        raise ctx.fail("GL317", f"body takes {len(body.inputs)} inputs, but Scan passes {n_in}")
    if len(body.outputs) != ctx.n_outputs:
        raise ctx.fail("GL317", f"body returns {len(body.outputs)} outputs, but Scan has {ctx.n_outputs}")


@shape_fn("Scan", since=8)
def scan8(ctx: InferenceContext) -> None:
    """Opset 8: input 0 is sequence_lens; every other input has a leading batch dim, scan inputs then a sequence
    dim; the body sees them without those dims."""
    body = subgraph(ctx, "body")
    m = int(ctx.attr("num_scan_inputs", 0))
    n = len(ctx.node.inputs) - 1 - m
    if m < 1 or n < 0 or n > ctx.n_outputs:
        raise ctx.fail("GL317", f"num_scan_inputs {m} does not fit {len(ctx.node.inputs)} inputs and "
                       f"{ctx.n_outputs} outputs", attr="num_scan_inputs")  # fmt: skip
    batch: Dim = None
    seq_len: Dim = None
    for i in range(1, 1 + n + m):
        shape = ctx.input_shape(i)
        if shape is None:
            continue
        need = 1 if i <= n else 2
        if len(shape) < need:
            raise ctx.fail("GL317", f"input {i} has rank {len(shape)}, but Scan needs at least {need} "
                           f"(batch{', sequence' if need == 2 else ''})", input=i)  # fmt: skip
        batch = _merge_len(ctx, batch, shape[0], i, "batch size")
        if i > n:
            seq_len = _merge_len(ctx, seq_len, shape[1], i, "sequence length")
    inits = [_remove_dims(ctx.input_type(1 + j), [0]) for j in range(n)]
    slices = [_remove_dims(ctx.input_type(1 + n + k), [0, 1]) for k in range(m)]
    for j in range(n):
        ty = ctx.input_type(1 + j)
        if ty is not None:
            ctx.set_output_type(j, ty)
    if body is None:
        return
    _check_body_arity(ctx, body, n + m)
    carried, outs = fixed_point(ctx, body, lambda c: [*c, *slices], inits, lambda o: o[:n], "state")
    for j in range(n):
        _set_scan_output(ctx, j, carried[j], batch, 0)
    for k, ty in enumerate(outs[n:]):
        if isinstance(ty, TensorType) and ty.shape is not None:
            ty = TensorType(ty.elem, (seq_len, *ty.shape))
        _set_scan_output(ctx, n + k, ty, batch, 0)
