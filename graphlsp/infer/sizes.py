"""Input sizes a user binds: `--dim batch=8`, `--input-shape images=1x3x640x640`, `dims = { batch = 8 }`.

Inference then runs with those sizes in place of the symbols (every declared dim_param of that name, in the graph
inputs, outputs and value infos) and of the named inputs' declared shapes, so every shape rule checks the model at
those sizes. An input shape also binds the symbols its input declares (`[batch, 3, height, width]` with
`1x3x640x640` binds batch, height and width).
"""

from __future__ import annotations

from graphlsp.frozen import Frozen

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
    if not text.isdigit() or len(text) > 13 or int(text) > MAX_SIZE:
        raise ValueError(f"{what}: '{text}' is not a size (a non-negative integer up to {MAX_SIZE})")
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
    if not isinstance(dims, dict) or not all(isinstance(k, str) and type(v) is int and 0 <= v <= MAX_SIZE
                                             for k, v in dims.items()):  # fmt: skip
        raise ValueError(f"{source}: dims maps dim_param names to sizes (non-negative integers)")
    if not isinstance(shapes, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(type(x) is int and 0 <= x <= MAX_SIZE for x in v)
        for k, v in shapes.items()
    ):
        raise ValueError(f"{source}: input-shapes maps input names to lists of sizes")
    return InputSizes(tuple(dims.items()), tuple((k, tuple(v)) for k, v in shapes.items()))
