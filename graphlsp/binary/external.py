"""External tensor data: the one place where a tensor's `external_data` is resolved to bytes on disk.

A reference is followed only to a regular file inside the model's folder once every link is resolved: the
location must be relative, without `..`, and its realpath must stay under the folder's realpath; the file's size
must cover offset + length. The same checks run again when the bytes are read (the file is opened by its
realpath, without following a link, and must still be a regular file of that size), so a file swapped after the
model was read is not opened either. Everything that needs the bytes (the binary reader's lazy tensors, the CPU
runner, the writers) goes through `locate` and `read_range`; nothing hands a TensorProto with external data to
onnx, whose loaders read relative to the working directory.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import Any

from graphlsp.graph.enums import TensorProto
from graphlsp.graph.tensor import ITEMSIZE, TensorError, location_problem


class ExternalData:
    """Where an external tensor's bytes are: a checked path inside the model's folder, offset and length;
    `base` is the folder's realpath (checked again at read time)."""

    __slots__ = ("path", "offset", "length", "base")

    def __init__(self, path: str, offset: int, length: int | None, base: str | None = None) -> None:
        self.path = path
        self.offset = offset
        self.length = length
        self.base = base


def regular_size(path: str) -> int | None:
    """The size of `path` when it is a regular file (links followed), else None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def inside(real: str, base: str) -> bool:
    try:
        return os.path.commonpath([real, base]) == base
    except ValueError:  # different drives, mixed absolute and relative
        return False


def tensor_nbytes(proto: Any) -> int:
    n = 1
    for d in proto.dims:
        n *= max(int(d), 0)
    return n * (ITEMSIZE.get(proto.data_type) or 8)


class Checked:
    """What one read of a model learned of its external files, so that a thousand tensors in one data file cost
    one realpath and one stat: folders' and locations' realpaths, and file sizes by realpath."""

    __slots__ = ("reals", "sizes")

    def __init__(self) -> None:
        self.reals: dict[tuple[str, str], str] = {}
        self.sizes: dict[str, int | None] = {}

    def realpath(self, base: str, location: str = "") -> str:
        key = (base, location)
        real = self.reals.get(key)
        if real is None:
            real = self.reals[key] = os.path.realpath(os.path.join(base, location) if location else base)
        return real


def locate(proto: Any, base: str | None, checked: Checked | None = None) -> tuple[ExternalData | None, str]:
    """The checked place of an external tensor's bytes, or (None, why it may not be read). `base` is the
    model's folder (None: the model was not read from a file); `checked` keeps what earlier calls found."""
    entries = {e.key: e.value for e in proto.external_data}
    location = entries.get("location", "")
    name = proto.name
    if base is None:
        return None, f"external data '{location}' cannot be read: the model was not read from a file"
    problem = location_problem(location)
    if problem:
        return None, problem
    checked = checked if checked is not None else Checked()
    try:
        base = checked.realpath(base)
        real = checked.realpath(base, location)
    except (OSError, ValueError):
        return None, f"external data location '{location}' cannot be resolved; it is not opened"
    if not inside(real, base):
        return None, f"external data location '{location}' resolves outside the model's folder; it is not opened"
    try:
        offset = int(entries.get("offset", "0") or 0)
        length = int(entries["length"]) if entries.get("length") else None
    except ValueError:
        return None, f"external data of '{name}' has a malformed offset or length"
    if offset < 0 or (length is not None and length < 0):
        return None, f"external data of '{name}' has a negative offset or length"
    if real in checked.sizes:
        size = checked.sizes[real]
    else:
        size = checked.sizes[real] = regular_size(real)
    if size is None:
        if os.path.lexists(real):
            return None, f"external data file '{location}' is not a regular file; it is not opened"
        return None, f"external data file '{location}' does not exist beside the model"
    need = length if length is not None else tensor_nbytes(proto)
    if offset + need > size:
        return None, (f"external data file '{location}' is too short for '{name}': it needs bytes "
                      f"{offset}..{offset + need}, the file has {size}")  # fmt: skip
    return ExternalData(real, offset, length, base), ""


def read_range(where: ExternalData, nbytes: int) -> bytes:
    """The bytes of `where` (its length, else `nbytes`), after checking the file again: still inside the
    model's folder, a regular file, long enough. Raises TensorError."""
    length = where.length if where.length is not None else nbytes
    if length > nbytes:  # more than the tensor can hold (nbytes bounds every element type from above)
        raise TensorError(f"external data length {length} exceeds the tensor's {nbytes} bytes; it is not read")
    path = where.path
    if where.base is not None and (os.path.realpath(path) != path or not inside(path, where.base)):
        raise TensorError("external data file moved outside the model's folder; it is not opened")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise TensorError(f"cannot read external data: {e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TensorError("external data file is not a regular file; it is not read")
        if where.offset + length > st.st_size:
            raise TensorError(f"external data file '{os.path.basename(path)}' is too short")
        if length == 0:
            return b""
        import mmap  # when a value is asked for

        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as m:
            return bytes(m[where.offset : where.offset + length])
    except OSError as e:
        raise TensorError(f"cannot read external data: {e}") from None
    finally:
        os.close(fd)


def embedded(proto: Any, where: ExternalData) -> Any:
    """A copy of `proto` (onnx's TensorProto) with its data read (through `read_range`) into raw_data."""
    from onnx import TensorProto

    out = TensorProto()
    out.CopyFrom(proto)
    del out.external_data[:]
    out.data_location = TensorProto.DEFAULT
    out.raw_data = read_range(where, tensor_nbytes(proto))
    return out


def is_external(t: Any) -> bool:
    return t.data_location == TensorProto.EXTERNAL


def all_tensors(message: Any) -> Iterator[Any]:
    """Every TensorProto in a model, graph, function, node or attribute (onnx's messages): initializers, sparse
    tensors' parts, attribute tensors, in subgraphs and function bodies however deep (no recursion)."""
    from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto

    stack: list[Any] = [message]
    while stack:
        m = stack.pop()
        if isinstance(m, TensorProto):
            yield m
        elif isinstance(m, ModelProto):
            stack.append(m.graph)
            stack.extend(m.functions)
        elif isinstance(m, GraphProto):
            stack.extend(m.initializer)
            for sp in m.sparse_initializer:
                stack.extend((sp.values, sp.indices))
            stack.extend(m.node)
        elif isinstance(m, NodeProto):
            stack.extend(m.attribute)
        elif isinstance(m, AttributeProto):
            if m.HasField("t"):
                stack.append(m.t)
            stack.extend(m.tensors)
            if m.HasField("sparse_tensor"):
                stack.extend((m.sparse_tensor.values, m.sparse_tensor.indices))
            for sp in m.sparse_tensors:
                stack.extend((sp.values, sp.indices))
            if m.HasField("g"):
                stack.append(m.g)
            stack.extend(m.graphs)
        elif hasattr(m, "node"):  # FunctionProto
            stack.extend(m.node)
            stack.extend(m.attribute_proto)


def has_external(message: Any) -> bool:
    """Whether anything in the message keeps its data in an external file."""
    return any(is_external(t) for t in all_tensors(message))
