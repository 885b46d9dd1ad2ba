"""Sequences and optionals: SequenceConstruct/Empty/At/Insert/Erase/Length/Map, SplitToSequence,
ConcatFromSequence, Optional, OptionalHasElement, OptionalGetElement.

A sequence's type holds one tensor type for all its elements, the relaxation of everything put into it. When
its length is known (SequenceConstruct, SequenceEmpty, SplitToSequence of a known count, inserts and erases at
known positions), `Inferred.items` also holds each element's type in order: SequenceAt at a known position gives
that element's type, SequenceLength its length (a shape value) and ConcatFromSequence the sum of the elements'
dims. SequenceMap infers its body once with the element types of the sequence inputs.
"""

from __future__ import annotations

import numpy as np

from graphlsp.graph.enums import TensorProto
from graphlsp.infer import dims as d
from graphlsp.infer import shapes as sh
from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import OptionalType, SequenceType, TensorType, ValueType, declared_type, elem_name, type_str
from graphlsp.ops.controlflow import relax_type, subgraph, weaken
from graphlsp.ops.registry import shape_fn


def _seq_elem(ctx: InferenceContext, i: int) -> ValueType:
    """The element type of sequence input i (None when unknown or not a sequence)."""
    ty = ctx.input_type(i)
    return ty.elem if isinstance(ty, SequenceType) else None


def _tensor(ty: ValueType) -> TensorType:
    return ty if isinstance(ty, TensorType) else TensorType(None, None)


MAX_ITEMS = 1024  # sequences longer than this are not tracked element by element


def _items(ctx: InferenceContext, i: int) -> tuple[ValueType, ...] | None:
    """The element types of sequence input i, in order, when its length is known."""
    x = ctx.inputs[i] if i < len(ctx.inputs) else None
    return x.items if x is not None and isinstance(x.type, SequenceType) else None


def _set_items(ctx: InferenceContext, items: list[ValueType] | tuple[ValueType, ...], retype: bool = False) -> None:
    """Output 0's elements; with retype, its element type becomes what they all are (when there are any)."""
    x = ctx.outputs[0] if ctx.outputs else None
    if x is None or not isinstance(x.type, SequenceType) or len(items) > MAX_ITEMS:
        return
    if retype and items:
        elem: ValueType = items[0] or TensorType(None, None)
        for ty in items[1:]:
            elem = relax_type(elem, ty or TensorType(None, None))
        ctx.set_output_type(0, SequenceType(elem))
        x = ctx.outputs[0]
        assert x is not None
    x.items = tuple(items)


def _position(ctx: InferenceContext, i: int) -> int | None:
    """A known scalar position input."""
    sv = ctx.input_shape_value(i)
    return sv[0] if sv is not None and len(sv) == 1 and isinstance(sv[0], int) else None


@shape_fn("SequenceEmpty")
def sequence_empty(ctx: InferenceContext) -> None:
    dtype = ctx.attr("dtype")
    ctx.set_output_type(0, SequenceType(TensorType(int(dtype) if dtype is not None else TensorProto.FLOAT, None)))
    _set_items(ctx, ())


@shape_fn("SequenceConstruct")
def sequence_construct(ctx: InferenceContext) -> None:
    present = [i for i in range(ctx.n_inputs) if ctx.has_input(i)]
    if not present:
        return
    elem: ValueType = ctx.input_type(present[0]) or TensorType(None, None)
    for i in present[1:]:
        elem = relax_type(elem, ctx.input_type(i) or TensorType(None, None))
    ctx.set_output_type(0, SequenceType(elem))
    if len(present) == ctx.n_inputs:
        _set_items(ctx, [ctx.input_type(i) for i in present])


@shape_fn("SequenceInsert")
def sequence_insert(ctx: InferenceContext) -> None:
    seq, tensor = _tensor(_seq_elem(ctx, 0)), _tensor(ctx.input_type(1))
    if seq.elem is not None and tensor.elem is not None and seq.elem != tensor.elem:
        raise ctx.fail("GL317", f"cannot insert a {elem_name(tensor.elem)} tensor into a sequence of "
                       f"{elem_name(seq.elem)}", input=1)  # fmt: skip
    if ctx.input_type(0) is None:
        ctx.set_output_type(0, SequenceType(weaken(tensor)))
        return
    ctx.set_output_type(0, SequenceType(relax_type(seq, tensor)))
    items = _items(ctx, 0)
    if items is not None:
        n = len(items)
        at = _position(ctx, 2) if ctx.has_input(2) else n
        if at is not None and -n <= at <= n:
            at = at + n if at < 0 else at
            _set_items(ctx, [*items[:at], ctx.input_type(1), *items[at:]], retype=True)


@shape_fn("SequenceAt")
def sequence_at(ctx: InferenceContext) -> None:
    ctx.set_output_type(0, _tensor(_seq_elem(ctx, 0)))
    items, at = _items(ctx, 0), _position(ctx, 1)
    if items is not None and at is not None:
        n = len(items)
        if not -n <= at < n:
            raise ctx.fail("GL310", f"position {at} is out of range for a sequence of {n} elements", input=1)
        item = items[at]
        if isinstance(item, TensorType):
            ctx.set_output_type(0, item)


@shape_fn("SequenceErase")
def sequence_erase(ctx: InferenceContext) -> None:
    ty = ctx.input_type(0)
    if ty is not None:
        ctx.set_output_type(0, ty)
    items = _items(ctx, 0)
    if items:
        n = len(items)
        at = _position(ctx, 1) if ctx.has_input(1) else n - 1
        if at is not None and -n <= at < n:
            at = at + n if at < 0 else at
            _set_items(ctx, [*items[:at], *items[at + 1 :]], retype=True)


@shape_fn("SequenceLength")
def sequence_length(ctx: InferenceContext) -> None:
    ctx.set_output(0, (), TensorProto.INT64)
    items = _items(ctx, 0)
    if items is not None:
        ctx.set_output_value(0, (len(items),), np.array(len(items), dtype=np.int64))


@shape_fn("SequenceMap")
def sequence_map(ctx: InferenceContext) -> None:
    body = subgraph(ctx, "body")
    if body is None:
        return
    if len(body.inputs) != ctx.n_inputs:
        raise ctx.fail("GL317", f"body takes {len(body.inputs)} inputs, but SequenceMap passes {ctx.n_inputs}")
    if len(body.outputs) != ctx.n_outputs:
        raise ctx.fail("GL317", f"body returns {len(body.outputs)} outputs, but SequenceMap has {ctx.n_outputs}")
    first = ctx.input_type(0)
    if first is not None and not isinstance(first, SequenceType):
        raise ctx.fail("GL317", f"input 0 must be a sequence, got {type_str(first)}", input=0)
    args: list[ValueType] = []
    for i in range(ctx.n_inputs):
        ty = ctx.input_type(i)
        args.append(ty.elem if isinstance(ty, SequenceType) else ty)
    items = _items(ctx, 0)
    for i, out in enumerate(ctx.infer_graph(body, args)):
        ctx.set_output_type(i, SequenceType(out))
        x = ctx.outputs[i] if i < len(ctx.outputs) else None
        if items is not None and x is not None:
            x.items = (out,) * len(items)


# ---- SplitToSequence, ConcatFromSequence
def _split_chunk(ctx: InferenceContext, dim: Dim) -> Dim:
    """The common length of every chunk when it is certain, else None."""
    if not ctx.has_input(1):
        return 1
    const = ctx.input_const(1)
    if const is None:
        return None
    split_rank = np.asarray(const).ndim
    sizes = [int(v) for v in np.asarray(const).reshape(-1)]
    if not sizes:
        raise ctx.fail("GL308", "split is empty", input=1)
    if split_rank == 0:
        if sizes[0] <= 0:
            raise ctx.fail("GL308", f"a scalar split must be positive, got {sizes[0]}", input=1)
        return sizes[0] if isinstance(dim, int) and dim % sizes[0] == 0 else None
    if isinstance(dim, int) and sum(sizes) != dim:
        raise ctx.fail("GL308", f"split sizes {sizes} add up to {sum(sizes)}, but the dimension is {dim}",
                       input=1)  # fmt: skip
    return sizes[0] if len(set(sizes)) == 1 else None


@shape_fn("SplitToSequence")
def split_to_sequence(ctx: InferenceContext) -> None:
    elem = ctx.input_elem(0)
    shape = ctx.input_shape(0)
    if shape is None:
        ctx.set_output_type(0, SequenceType(TensorType(elem, None)))
        return
    axis = ctx.axis(int(ctx.attr("axis", 0)), len(shape))
    assert axis is not None
    out = list(shape)
    squeeze = not ctx.has_input(1) and not ctx.attr("keepdims", 1)
    if squeeze:
        del out[axis]
    else:
        out[axis] = _split_chunk(ctx, shape[axis])
    ctx.set_output_type(0, SequenceType(TensorType(elem, tuple(out))))
    sizes = _split_sizes(ctx, shape[axis])
    if sizes is not None and len(sizes) <= MAX_ITEMS:
        items: list[ValueType] = []
        for size in sizes:
            piece = list(shape)
            if squeeze:
                del piece[axis]
            else:
                piece[axis] = size
            items.append(TensorType(elem, tuple(piece)))
        _set_items(ctx, items)


def _split_sizes(ctx: InferenceContext, dim: Dim) -> list[Dim] | None:
    """The length of each piece along the axis, when their number is known."""
    if not ctx.has_input(1):
        return [1 for _ in range(dim)] if isinstance(dim, int) and dim <= MAX_ITEMS else None
    split_shape = ctx.input_shape(1)
    if split_shape == ():
        const = ctx.input_const(1)
        k = int(const) if const is not None and const.size == 1 else None
        if k is None or k <= 0 or not isinstance(dim, int) or dim > k * MAX_ITEMS:
            return None
        n = -(-dim // k)
        if n == 0:
            return []
        sizes: list[Dim] = [k for _ in range(n - 1)]
        sizes.append(dim - k * (n - 1))
        return sizes
    sv = ctx.input_shape_value(1)
    return list(sv) if sv is not None else None


@shape_fn("ConcatFromSequence")
def concat_from_sequence(ctx: InferenceContext) -> None:
    elem = _tensor(_seq_elem(ctx, 0))
    if elem.shape is None or ctx.attr("axis") is None:
        ctx.set_output(0, None, elem.elem)
        _concat_items(ctx)
        return
    new_axis = int(ctx.attr("new_axis", 0))
    if new_axis not in (0, 1):
        raise ctx.fail("GL317", f"new_axis must be 0 or 1, got {new_axis}", attr="new_axis")
    axis = ctx.axis(int(ctx.attr("axis")), len(elem.shape), allow_end=bool(new_axis))
    assert axis is not None
    out: list[Dim] = list(elem.shape)
    if new_axis:
        out.insert(axis, None)
    else:
        out[axis] = None
    ctx.set_output(0, tuple(out), elem.elem)
    _concat_items(ctx)


def _concat_items(ctx: InferenceContext) -> None:
    """The concatenation of a sequence of known elements: their dims summed along the axis (counted, with
    new_axis), each other dim the same in all of them."""
    items = _items(ctx, 0)
    if not items or ctx.attr("axis") is None or not all(isinstance(t, TensorType) for t in items):
        return
    shapes = [t.shape for t in items if isinstance(t, TensorType)]
    if any(s is None or len(s) != len(shapes[0] or ()) for s in shapes):
        return
    rank = len(shapes[0] or ())
    new_axis = int(ctx.attr("new_axis", 0))
    hi = rank + 1 if new_axis else rank
    axis = int(ctx.attr("axis"))
    if not -hi <= axis < hi:
        return
    axis = axis + hi if axis < 0 else axis
    common: list[Dim] = []
    for j in range(rank):
        if j == axis and not new_axis:
            total: Dim = 0
            for shape in shapes:
                total = d.add(total, shape[j] if shape is not None else None)
            common.append(total)
            continue
        dim: Dim = None
        for shape in shapes:
            try:
                dim = sh.merge_dim(dim, shape[j] if shape is not None else None)
            except sh.MergeError:
                return  # elements that cannot be joined: left to the relaxed result (and to the runtime)
        common.append(dim)
    if new_axis:
        common.insert(axis, len(items))
    ctx.set_output(0, tuple(common), ctx.outputs[0].type.elem if ctx.outputs[0] is not None and
                   isinstance(ctx.outputs[0].type, TensorType) else -1)  # fmt: skip


# ---- optionals
@shape_fn("Optional")
def optional(ctx: InferenceContext) -> None:
    if ctx.has_input(0):
        ctx.set_output_type(0, OptionalType(ctx.input_type(0)))
        return
    tp = ctx.attr("type")
    if tp is not None:
        ctx.set_output_type(0, OptionalType(declared_type(tp)))


@shape_fn("OptionalHasElement")
def optional_has_element(ctx: InferenceContext) -> None:
    ctx.set_output(0, (), TensorProto.BOOL)


@shape_fn("OptionalGetElement")
def optional_get_element(ctx: InferenceContext) -> None:
    ty = ctx.input_type(0)
    x = ctx.inputs[0] if ctx.n_inputs else None
    if isinstance(ty, OptionalType):
        ctx.set_output_type(0, ty.elem)
    elif ty is not None and x is not None:
        ctx.set_output_type(0, ty)
        ctx.set_output_value(0, x.sv, x.const)
