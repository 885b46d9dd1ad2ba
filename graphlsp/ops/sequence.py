"""Sequences and optionals: SequenceConstruct/Empty/At/Insert/Erase/Length/Map, SplitToSequence,
ConcatFromSequence, Optional, OptionalHasElement, OptionalGetElement.

A sequence's type holds one tensor type for all its elements, the relaxation of everything put into it (its
length is not tracked). SequenceMap infers its body once with the element types of the sequence inputs.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from graphlsp.infer.context import InferenceContext
from graphlsp.infer.dims import Dim
from graphlsp.infer.types import OptionalType, SequenceType, TensorType, ValueType, elem_name, type_str
from graphlsp.ops.controlflow import relax_type, subgraph, weaken
from graphlsp.ops.registry import shape_fn


def _seq_elem(ctx: InferenceContext, i: int) -> ValueType:
    """The element type of sequence input i (None when unknown or not a sequence)."""
    ty = ctx.input_type(i)
    return ty.elem if isinstance(ty, SequenceType) else None


def _tensor(ty: ValueType) -> TensorType:
    return ty if isinstance(ty, TensorType) else TensorType(None, None)


@shape_fn("SequenceEmpty")
def sequence_empty(ctx: InferenceContext) -> None:
    dtype = ctx.attr("dtype")
    ctx.set_output_type(0, SequenceType(TensorType(int(dtype) if dtype is not None else TensorProto.FLOAT, None)))


@shape_fn("SequenceConstruct")
def sequence_construct(ctx: InferenceContext) -> None:
    present = [i for i in range(ctx.n_inputs) if ctx.has_input(i)]
    if not present:
        return
    elem: ValueType = ctx.input_type(present[0]) or TensorType(None, None)
    for i in present[1:]:
        elem = relax_type(elem, ctx.input_type(i) or TensorType(None, None))
    ctx.set_output_type(0, SequenceType(elem))


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


@shape_fn("SequenceAt")
def sequence_at(ctx: InferenceContext) -> None:
    ctx.set_output_type(0, _tensor(_seq_elem(ctx, 0)))


@shape_fn("SequenceErase")
def sequence_erase(ctx: InferenceContext) -> None:
    ty = ctx.input_type(0)
    if ty is not None:
        ctx.set_output_type(0, ty)


@shape_fn("SequenceLength")
def sequence_length(ctx: InferenceContext) -> None:
    ctx.set_output(0, (), TensorProto.INT64)


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
    for i, out in enumerate(ctx.infer_graph(body, args)):
        ctx.set_output_type(i, SequenceType(out))


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
    if not ctx.has_input(1) and not ctx.attr("keepdims", 1):
        del out[axis]
    else:
        out[axis] = _split_chunk(ctx, shape[axis])
    ctx.set_output_type(0, SequenceType(TensorType(elem, tuple(out))))


@shape_fn("ConcatFromSequence")
def concat_from_sequence(ctx: InferenceContext) -> None:
    elem = _tensor(_seq_elem(ctx, 0))
    if elem.shape is None or ctx.attr("axis") is None:
        ctx.set_output(0, None, elem.elem)
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


# ---- optionals
@shape_fn("Optional")
def optional(ctx: InferenceContext) -> None:
    if ctx.has_input(0):
        ctx.set_output_type(0, OptionalType(ctx.input_type(0)))
        return
    tp = ctx.attr("type")
    if tp is not None:
        from graphlsp.infer.refiner import declared_type

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
