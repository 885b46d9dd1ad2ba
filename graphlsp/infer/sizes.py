"""Input sizes a user binds: `--dim batch=8`, `--input-shape images=1x3x640x640`, `dims = { batch = 8 }`.

Inference then runs with those sizes in place of the symbols (every declared dim_param of that name, in the graph
inputs, outputs and value infos) and of the named inputs' declared shapes, so every shape rule checks the model at
those sizes. An input shape also binds the symbols its input declares (`[batch, 3, height, width]` with
`1x3x640x640` binds batch, height and width).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlsp.frozen import Frozen

if TYPE_CHECKING:
    from graphlsp.graph.core import Model

MAX_SIZE = 1 << 40  # a bound size past this is refused (no input is that large)


class InputSizes(Frozen):
    """Sizes given for the inputs (config `dims` / `input-shapes`, or the command line): per dim symbol and per
    whole input shape."""

    __slots__ = ("dims", "shapes")

    dims: tuple[tuple[str, int], ...]  # (symbol, size)
    shapes: tuple[tuple[str, tuple[int, ...]], ...]  # (graph input, its whole shape)

    def __init__(
        self,
        dims: tuple[tuple[str, int], ...] = (),
        shapes: tuple[tuple[str, tuple[int, ...]], ...] = (),
    ) -> None:
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "shapes", shapes)

    def __repr__(self) -> str:
        return f"InputSizes(dims={self.dims!r}, shapes={self.shapes!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not InputSizes:
            return NotImplemented
        return (self.dims, self.shapes) == (other.dims, other.shapes)

    def __hash__(self) -> int:
        return hash((self.dims, self.shapes))

    def __bool__(self) -> bool:
        return bool(self.dims or self.shapes)

    def dim_map(self) -> dict[str, int]:
        return dict(self.dims)

    def shape_map(self) -> dict[str, tuple[int, ...]]:
        return dict(self.shapes)

    def merged(self, other: InputSizes) -> InputSizes:
        """These sizes with `other`'s over them (the command line over the config file)."""
        return InputSizes(tuple({**self.dim_map(), **other.dim_map()}.items()),
                          tuple({**self.shape_map(), **other.shape_map()}.items()))  # fmt: skip


def _size(text: str, what: str) -> int:
    text = text.strip()
    if not text.isdigit() or len(text) > 13 or not 0 < int(text) <= MAX_SIZE:
        raise ValueError(f"{what}: '{text}' is not a size (a positive integer up to {MAX_SIZE})")
    return int(text)


def parse_dim(text: str) -> tuple[str, int]:
    """`batch=8` -> ("batch", 8)."""
    name, sep, value = text.rpartition("=")
    if not sep or not name:
        raise ValueError(f"--dim takes NAME=SIZE (a dim_param and its size), got '{text}'")
    return name, _size(value, f"--dim {name}")


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`images=1x3x640x640` -> ("images", (1, 3, 640, 640)); `scalar=` is a scalar (rank 0)."""
    name, sep, value = text.rpartition("=")
    if not sep or not name:
        raise ValueError(f"--input-shape takes NAME=D1xD2x... (an input and its sizes), got '{text}'")
    dims = value.replace(",", "x").split("x") if value.strip() else []
    return name, tuple(_size(x, f"--input-shape {name}") for x in dims)


def from_config(dims: object, shapes: object, source: str) -> InputSizes:
    """`dims = { batch = 8 }` and `input-shapes = { images = [1, 3, 640, 640] }`; raises ValueError."""
    if not isinstance(dims, dict) or not all(isinstance(k, str) and type(v) is int and 0 < v <= MAX_SIZE
                                             for k, v in dims.items()):  # fmt: skip
        raise ValueError(f"{source}: dims maps dim_param names to sizes (positive integers)")
    if not isinstance(shapes, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(type(x) is int and 0 < x <= MAX_SIZE for x in v)
        for k, v in shapes.items()
    ):
        raise ValueError(f"{source}: input-shapes maps input names to lists of sizes (positive integers)")
    return InputSizes(tuple(dims.items()), tuple((k, tuple(v)) for k, v in shapes.items()))


class SizeProblem(Frozen):
    """A given size the model contradicts: `kind` "dim" (a `--dim` / `dims` name) or "input" (an `--input-shape` /
    `input-shapes` input), `name` the one given, `unknown` when the model has no such name (a folder's other models
    may have it), `message` why, without the option (the caller names it)."""

    __slots__ = ("kind", "name", "unknown", "message")

    kind: str
    name: str
    unknown: bool
    message: str

    def __init__(self, kind: str, name: str, unknown: bool, message: str) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "unknown", unknown)
        object.__setattr__(self, "message", message)

    def __repr__(self) -> str:
        return f"SizeProblem({self.kind!r}, {self.name!r}, {self.unknown!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not SizeProblem:
            return NotImplemented
        return (self.kind, self.name, self.unknown, self.message) == (other.kind, other.name, other.unknown,
                                                                      other.message)  # fmt: skip

    def __hash__(self) -> int:
        return hash((self.kind, self.name, self.message))

    def to_json(self) -> list[object]:
        return [self.kind, self.name, self.unknown, self.message]


def _nearest(name: str, known: list[str]) -> str:
    """` (did you mean 'x'?)`, or the names there are when few, or nothing."""
    import difflib

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if not close:
        lowered = {k.lower(): k for k in known}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
    if close:
        return f" (did you mean '{close[0]}'?)"
    if not known:
        return ""
    shown = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
    return f"; it has {shown}"


def size_problems(model: Model, sizes: InputSizes) -> list[SizeProblem]:
    """What in `sizes` the model contradicts: a dim name no declared dim has, an input it does not have, a shape
    of another rank than the input's, a size other than a dim the input fixes (onnxruntime refuses the input:
    "Got: 320 Expected: 224"), a symbol given two sizes."""
    graph = model.graph
    if not sizes or graph is None:
        return []
    from graphlsp.infer import dims as d

    declared: dict[str, tuple[int | str | None, ...] | None] = {}
    for value in graph.inputs:
        declared.setdefault(value.name, value.type.dims if value.type is not None else None)
    inputs = [v.name for v in graph.inputs if not v.is_initializer]
    names: dict[str, None] = {}
    infos = [*graph.output_infos, *graph.value_infos.values()]
    for ty in [*(v.type for v in graph.inputs), *(i.type for i in infos)]:
        for dm in (ty.dims or ()) if ty is not None else ():
            if isinstance(dm, str):
                names.update(dict.fromkeys(sorted(d.symbol(dm).symbols())))
    out: list[SizeProblem] = []
    for name, _ in sizes.dims:
        if name not in names:
            why = _nearest(name, list(names)) if names else ": it names none of its dims"
            out.append(SizeProblem("dim", name, True, f"no dim of the model is named '{name}'{why}"))
    bound = sizes.dim_map()
    for name, shape in sizes.shapes:
        if name not in declared:
            out.append(SizeProblem("input", name, True,
                                   f"the model has no input '{name}'{_nearest(name, inputs)}"))  # fmt: skip
            continue
        dims = declared[name]
        if dims is None:
            continue
        given = "x".join(map(str, shape)) or "a scalar"
        if len(dims) != len(shape):
            out.append(SizeProblem("input", name, False, f"'{name}' has {len(dims)} dim{'s' if len(dims) != 1 else ''}"
                                   f" ({_dims_str(dims)}), {given} has {len(shape)}"))  # fmt: skip
            continue
        for i, (dm, size) in enumerate(zip(dims, shape, strict=True)):
            if isinstance(dm, int) and dm > 0 and dm != size:
                why = f"is fixed at {dm}, not {size}: onnxruntime refuses the input at any other size"
                out.append(SizeProblem("input", name, False, f"dim {i} of '{name}' ({_dims_str(dims)}) {why}"))
                break
            if isinstance(dm, str) and dm in bound and bound[dm] != size:  # `--dim batch=2` with batch 1 here
                out.append(SizeProblem("input", name, False, f"dim {i} of '{name}' is {dm}, given as {bound[dm]}, "
                                       f"not {size}"))  # fmt: skip
                break
    return out


def _dims_str(dims: tuple[int | str | None, ...]) -> str:
    return "[" + ", ".join("?" if x is None else str(x) for x in dims) + "]"
