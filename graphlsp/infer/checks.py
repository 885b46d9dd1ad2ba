"""What an op's schema alone says about a node: input arity, required and well-typed attributes, type
constraints, and the element types the constraints give the outputs. The verdict depends only on the signature,
the attribute kinds and the input types, so it is computed once per distinct combination."""

from __future__ import annotations

from collections.abc import Callable

from graphlsp.frozen import Frozen
from graphlsp.infer.types import (
    ELEM_BY_NAME,
    MapType,
    OptionalType,
    SequenceType,
    TensorType,
    ValueType,
    elem_name,
)
from graphlsp.ops.signature import OpSignature

# (code, message, input index, attribute name, severity)
Problem = tuple[str, str, "int | None", "str | None", str]


class Verdict(Frozen):
    """What the schema says about one combination of a node's arity, attribute kinds and input types."""

    __slots__ = ("problems", "out_elems", "out_types")

    problems: tuple[Problem, ...]
    out_elems: list[int | None]
    out_types: tuple[ValueType, ...]  # non-tensor output types (seq, optional, map) the constraints fix

    def __init__(
        self,
        problems: tuple[Problem, ...],
        out_elems: list[int | None],
        out_types: tuple[ValueType, ...],
    ) -> None:
        object.__setattr__(self, "problems", problems)
        object.__setattr__(self, "out_elems", out_elems)
        object.__setattr__(self, "out_types", out_types)

    def __repr__(self) -> str:
        return f"Verdict(problems={self.problems!r}, out_elems={self.out_elems!r}, out_types={self.out_types!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not Verdict:
            return NotImplemented
        return (self.problems, self.out_elems, self.out_types) == (other.problems, other.out_elems, other.out_types)

    def __hash__(self) -> int:
        return hash((self.problems, self.out_elems, self.out_types))


_TYPE_STRINGS: dict[ValueType, str | None] = {}


_TENSOR_STRINGS: dict[tuple[int, bool], str | None] = {}


def type_string(ty: ValueType) -> str | None:
    """onnx's type string for constraint checks: tensor(float), seq(tensor(int64)), optional(...)."""
    if type(ty) is TensorType:  # nearly every value: by element type alone, not by hashing the shape
        if ty.elem is None:
            return None
        key = (ty.elem, ty.sparse)
        found = _TENSOR_STRINGS.get(key)
        if found is None:
            found = _TENSOR_STRINGS[key] = _type_string(ty)
        return found
    try:
        return _TYPE_STRINGS[ty]
    except KeyError:
        pass
    except TypeError:  # an unhashable shape value inside: compute without caching
        return _type_string(ty)
    s = _TYPE_STRINGS[ty] = _type_string(ty)
    return s


def _type_string(ty: ValueType) -> str | None:
    if isinstance(ty, TensorType):
        if ty.elem is None:
            return None
        return f"{'sparse_tensor' if ty.sparse else 'tensor'}({elem_name(ty.elem)})"
    if isinstance(ty, SequenceType):
        inner = type_string(ty.elem)
        return f"seq({inner})" if inner else None
    if isinstance(ty, OptionalType):
        inner = type_string(ty.elem)
        return f"optional({inner})" if inner else None
    if isinstance(ty, MapType):
        inner = type_string(ty.value)
        return f"map({elem_name(ty.key)}, {inner})" if inner and ty.key is not None else None
    return None


def type_from_string(s: str) -> ValueType:
    if s.startswith("tensor(") and s.endswith(")"):
        return TensorType(ELEM_BY_NAME.get(s[7:-1]), None)
    if s.startswith("seq(") and s.endswith(")"):
        return SequenceType(type_from_string(s[4:-1]))
    if s.startswith("optional(") and s.endswith(")"):
        return OptionalType(type_from_string(s[9:-1]))
    return None


_VERDICTS: dict[tuple[object, ...], Verdict] = {}


def verdict(
    sig: OpSignature, n_in: int, kinds: tuple[tuple[str, str | None], ...], in_types: tuple[str | None, ...],
    n_out: int,
) -> Verdict:  # fmt: skip
    """in_types holds "" for an empty input slot and None for an input of unknown type."""
    key = (id(sig), n_in, kinds, in_types, n_out)
    found = _VERDICTS.get(key)
    if found is None:
        found = _VERDICTS[key] = _verdict(sig, n_in, kinds, in_types, n_out)
    return found


def _verdict(
    sig: OpSignature, n_in: int, kinds: tuple[tuple[str, str | None], ...], in_types: tuple[str | None, ...],
    n_out: int,
) -> Verdict:  # fmt: skip
    problems: list[Problem] = []
    if not sig.min_input <= n_in <= sig.max_input:
        want = str(sig.min_input) if sig.min_input == sig.max_input else f"{sig.min_input} to {sig.max_input}"
        if sig.max_input > 1000:
            want = f"at least {sig.min_input}"
        problems.append(("GL312", f"takes {want} inputs, got {n_in}", None, None, "error"))
    if n_out < sig.min_output:  # a rule writes the outputs the schema promises
        problems.append(("GL312", f"needs at least {sig.min_output} output{'s' if sig.min_output != 1 else ''}, "
                         f"got {n_out}", None, None, "error"))  # fmt: skip
    present = {name for name, _ in kinds}
    for name, spec in sig.attrs.items():
        if spec.required and name not in present:
            problems.append(("GL313", f"missing required attribute '{name}' ({spec.type_name})", None, None, "error"))
    for name, got in kinds:
        known = sig.attrs.get(name)
        if known is None:
            problems.append(("GL314", f"has no attribute '{name}'", None, name, "warning"))
            continue
        want = known.type_name
        if got is not None and got != want and (got, want) not in (("int", "float"), ("ints", "floats")):
            problems.append(("GL314", f"attribute '{name}' must be {want}, got {got}", None, name, "error"))
    # type constraints: check the inputs, bind each constraint, give the outputs their element types
    bound: dict[str, str] = {}
    params = sig.inputs
    for i, ts in enumerate(in_types):
        if ts == "" or not params:
            continue
        p = params[min(i, len(params) - 1)]
        if i >= len(params) and p.option != "variadic":
            continue
        if ts is None:
            continue
        allowed = sig.constraints.get(p.type_str)
        if allowed is None:  # a concrete type
            if p.type_str != ts and "(" in p.type_str:
                problems.append(("GL311", f"input {i} ({p.name}) must be {p.type_str}, got {ts}", i, None, "error"))
            continue
        if ts not in allowed:
            names = ", ".join(sorted(a.replace("tensor(", "").rstrip(")") for a in allowed))
            problems.append(("GL311", f"input {i} ({p.name}) has type {ts}, which {p.type_str} does not allow "
                             f"(allowed: {names})", i, None, "error"))  # fmt: skip
            continue
        if p.type_str in bound and bound[p.type_str] != ts and (p.option != "variadic" or p.homogeneous):
            problems.append(("GL311", f"input {i} ({p.name}) is {ts} but an earlier input bound {p.type_str} to "
                             f"{bound[p.type_str]}", i, None, "error"))  # fmt: skip
            continue
        bound.setdefault(p.type_str, ts)
    out_elems: list[int | None] = [None] * n_out
    out_types: list[ValueType] = [None] * n_out
    outs = sig.outputs
    for i in range(n_out if outs else 0):
        p = outs[min(i, len(outs) - 1)]
        ts = bound.get(p.type_str)
        if ts is None and p.type_str not in sig.constraints:
            ts = p.type_str
        elif ts is None and len(sig.constraints.get(p.type_str, ())) == 1:
            (ts,) = sig.constraints[p.type_str]
        if ts is not None:
            ty = type_from_string(ts)
            if isinstance(ty, TensorType):
                out_elems[i] = ty.elem
            elif ty is not None:
                out_types[i] = ty
    return Verdict(tuple(problems), out_elems, tuple(out_types))


# Inputs and float attributes whose values set an output's size (a count, a scale): NaN or inf there has no
# meaning, and a shape rule must not compute with it. op -> (version -> input indices, attribute names)
_SIZING: dict[str, Callable[[int], tuple[tuple[int, ...], tuple[str, ...]]]] = {
    "Range": lambda v: ((0, 1, 2), ()),
    "OneHot": lambda v: ((1,), ()),
    "Resize": lambda v: ((1,) if v < 11 else (2,), ()),
    "Upsample": lambda v: ((1,), ("scales", "height_scale", "width_scale")),
}


SIZING_OPS = frozenset(_SIZING)


def sizing(op: str, domain: str, version: int) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The inputs and attributes of an ai.onnx op whose values must be finite numbers."""
    fn = _SIZING.get(op) if domain == "" else None
    return fn(version) if fn is not None else ((), ())
