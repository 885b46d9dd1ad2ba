"""The default-domain ops onnx.reference implements only from some opset on (DequantizeLinear from 19, ...).

A node of such an op below that version fails in onnx.reference ("No implementation for operator ..."), so the
runner can say so without importing onnx.reference (about 200 modules, 20-55 ms): quantized models at opset 17
asked for nothing else of it. The table (op -> first version onnx.reference runs) is read from onnx.reference
once per onnx build and kept in the user's cache (`graph.ops.onnx_build_table`).
"""

from __future__ import annotations

from functools import cache

from graphlsp.graph import ops

NO_IMPLEMENTATION = "No implementation for operator"  # load_op's message for a version below its classes'


@cache
def first_versions() -> dict[str, int]:
    """op -> the first opset at which onnx.reference has a kernel for it, for the ops it lacks at opset 1."""
    return ops.onnx_build_table("onnx-reference-first", _read)


def _read() -> dict[str, int]:
    from onnx.defs import onnx_opset_version
    from onnx.reference.ops import load_op

    newest = onnx_opset_version()
    out: dict[str, int] = {}
    for op in ops.op_names(""):
        for version in range(1, newest + 1):
            try:
                load_op("", op, version)
            except Exception as e:
                if str(e).startswith(NO_IMPLEMENTATION):
                    continue
            if version > 1:
                out[op] = version
            break
        else:
            out[op] = newest + 1
    return out


def lacks(op_type: str, version: int) -> int | None:
    """The first version onnx.reference runs the default-domain op at, when `version` is below it; else None."""
    first = first_versions().get(op_type)
    return first if first is not None and version < first else None
