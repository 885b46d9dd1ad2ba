"""onnx.proto's enum values (TensorProto.DataType, AttributeProto.AttributeType, ...) and the element types'
numpy dtypes, without importing onnx or protobuf (about 100 ms of a check's start-up).

The classes are named after onnx's messages so `TensorProto.INT64` reads as it does with onnx; the values are
onnx.proto's, which never change (tests/binary/test_wire_decode.py compares them with onnx's).
"""

from __future__ import annotations

from typing import Any


class _DataType:
    """TensorProto.DataType's `items()`, `Name()` and `Value()` as onnx's enum wrapper has them."""

    VALUES = {
        "UNDEFINED": 0, "FLOAT": 1, "UINT8": 2, "INT8": 3, "UINT16": 4, "INT16": 5, "INT32": 6, "INT64": 7,
        "STRING": 8, "BOOL": 9, "FLOAT16": 10, "DOUBLE": 11, "UINT32": 12, "UINT64": 13, "COMPLEX64": 14,
        "COMPLEX128": 15, "BFLOAT16": 16, "FLOAT8E4M3FN": 17, "FLOAT8E4M3FNUZ": 18, "FLOAT8E5M2": 19,
        "FLOAT8E5M2FNUZ": 20, "UINT4": 21, "INT4": 22, "FLOAT4E2M1": 23, "FLOAT8E8M0": 24, "UINT2": 25, "INT2": 26,
        "FLOAT6E2M3": 27, "FLOAT6E3M2": 28,
    }  # fmt: skip

    def items(self) -> list[tuple[str, int]]:
        return list(self.VALUES.items())

    def keys(self) -> list[str]:
        return list(self.VALUES)

    def values(self) -> list[int]:
        return list(self.VALUES.values())

    def Name(self, number: int) -> str:  # noqa: N802 (protobuf's spelling)
        for k, v in self.VALUES.items():
            if v == number:
                return k
        raise ValueError(f"Enum DataType has no name defined for value {number!r}")

    def Value(self, name: str) -> int:  # noqa: N802 (protobuf's spelling)
        try:
            return self.VALUES[name]
        except KeyError:
            raise ValueError(f"Enum DataType has no value defined for name {name!r}") from None


class TensorProto:
    """TensorProto's enums: the element types and the data locations."""

    UNDEFINED, FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL = range(10)
    FLOAT16, DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = range(10, 17)
    FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, UINT4, INT4, FLOAT4E2M1, FLOAT8E8M0 = range(17, 25)
    UINT2, INT2, FLOAT6E2M3, FLOAT6E3M2 = range(25, 29)
    DataType = _DataType()
    DEFAULT, EXTERNAL = 0, 1


class AttributeProto:
    """AttributeProto.AttributeType."""

    UNDEFINED, FLOAT, INT, STRING, TENSOR, GRAPH, FLOATS, INTS, STRINGS, TENSORS, GRAPHS = range(11)
    SPARSE_TENSOR, SPARSE_TENSORS, TYPE_PROTO, TYPE_PROTOS = 11, 12, 13, 14


# element types numpy has natively; the others (bfloat16, float8, int4, ...) are onnx's ml_dtypes: asked of onnx
_NUMPY = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "object", 9: "bool",
    10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
}  # fmt: skip


def tensor_dtype_to_np_dtype(elem: int) -> Any:
    """onnx.helper.tensor_dtype_to_np_dtype, onnx imported only for the types numpy lacks."""
    name = _NUMPY.get(elem)
    if name is not None:
        import numpy as np

        return np.dtype(name)
    from onnx import helper

    return helper.tensor_dtype_to_np_dtype(elem)


def np_dtype_to_tensor_dtype(dtype: Any) -> int:
    """onnx.helper.np_dtype_to_tensor_dtype, onnx imported only for the types numpy lacks."""
    import numpy as np

    dt = np.dtype(dtype)
    if dt.kind in "biufcO" and dt.isnative:
        for elem, name in _NUMPY.items():
            if dt == np.dtype(name):
                return elem
    from onnx import helper

    return int(helper.np_dtype_to_tensor_dtype(dt))
