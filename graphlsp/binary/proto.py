"""onnx.proto's messages decoded in pure Python, so that a check imports neither onnx nor protobuf (about 100 ms
of start-up, more than a small model's whole analysis).

`decode(ModelProto, data)` makes objects with the attribute API the binary reader uses of onnx's messages: the
fields by name (proto2 defaults when absent; repeated fields as lists; an absent message field as an empty
message), `HasField` and `WhichOneof`. Every message keeps its bytes (`SerializeToString`), so whoever needs
onnx's own message (onnx.reference, numpy_helper, the writers) gets one with `to_onnx()`, which parses just them.

The decoder accepts only what it is sure protobuf reads the same way: every field of every message is walked,
and anything unusual (an unknown field, a wire type that is not the field's, an enum value onnx.proto does not
define, a string that is not UTF-8, a singular message field or oneof written twice, which protobuf merges,
nesting deeper than `MAX_DEPTH`, a truncated or malformed message) raises `Unusual`: the caller then parses with
protobuf, which reads the file as it always did, errors included.

Every message is read by one generic loop over its tag table (`_fields`), except the few that make nearly all of a
model (graph, node, attribute, tensor, value info and its type, string entries), which have loops of their own for
the fields they usually hold and hand the rest of the message to the generic loop (tests/binary/test_proto_hot.py
checks them against it). Those readers set a node's input, output and attribute lists and a tensor's dims even when
empty (the reader reads them all), so HasField of those repeated fields, which protobuf does not allow, says True.
"""

from __future__ import annotations

import struct
from functools import partial
from typing import TYPE_CHECKING, Any

MAX_DEPTH = 40  # protobuf's own limit is 100: a deeper file is left to it
BIG_VARINTS = 1 << 20  # bytes: a packed varint field this long is left to protobuf's C decoder


class Unusual(Exception):
    """Something the decoder leaves to protobuf."""


# field kinds
I64, U64, I32, ENUM, FLOAT, DOUBLE, STR, BYTES, MSG = range(9)
_PACKABLE = {I64, U64, I32, ENUM, FLOAT, DOUBLE}


class Message:
    """One decoded message: its fields are instance attributes once decoded, class attributes (the proto2
    defaults) when absent; repeated and message fields absent from the bytes are made on first access."""

    _fields: dict[int, tuple[str, int, bool, Any]] = {}  # number -> (name, kind, repeated, message class or enum)
    _by_name: dict[str, tuple[str, int, bool, Any]] = {}
    _oneofs: dict[str, tuple[str, ...]] = {}
    _oneof_of: dict[str, str] = {}
    _tags: dict[int, tuple[str, int, bool, Any]] = {}  # tag (number << 3 | wire type) -> what to read

    _built = False  # made by the reader (`Message(**fields)`), not decoded: no bytes of its own

    def __init__(self, **fields: Any) -> None:
        self._src: tuple[bytes | memoryview, int, int] = (b"", 0, 0)
        self._built = bool(fields)
        for k, v in fields.items():
            setattr(self, k, v)

    if TYPE_CHECKING:  # the fields, by name (class attributes: the defaults, and `_Absent`)

        def __getattr__(self, name: str) -> Any: ...

    # A field is present (HasField) when it was decoded (or given): it is then an instance attribute, not one made
    # on access (`_made`).

    def HasField(self, name: str) -> bool:  # noqa: N802 (protobuf's spelling)
        d = self.__dict__
        made = d.get("_made", ())
        group = self._oneofs.get(name)
        if group is None:
            return name in d and name not in made
        return any(n in d and n not in made for n in group)

    def WhichOneof(self, group: str) -> str | None:  # noqa: N802 (protobuf's spelling)
        d = self.__dict__
        made = d.get("_made", ())
        for name in self._oneofs[group]:
            if name in d and name not in made:
                return name
        return None

    def SerializeToString(self) -> bytes:  # noqa: N802 (protobuf's spelling)
        if self._built:
            raise ValueError("a message made by the reader has no bytes")
        buf, start, end = self._src
        return bytes(buf[start:end])

    def __reduce__(self) -> tuple[Any, ...]:  # pickle, copy: decoded again from its bytes
        return _from_bytes, (type(self).__name__, self.SerializeToString())

    def to_onnx(self) -> Any:
        """onnx's own message of these bytes."""
        import onnx

        name = type(self).__name__
        outer, inner = _NESTED.get(name, (name, ""))
        cls = getattr(onnx, outer)
        return (getattr(cls, inner) if inner else cls).FromString(self.SerializeToString())


class _Absent:
    """A repeated or message field as a class attribute: absent from the bytes, so made (an empty list or message)
    on first access and kept in the instance, which HasField then does not count as present."""

    __slots__ = ("name", "make")

    def __init__(self, name: str, make: Any) -> None:
        self.name = name
        self.make = make

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = self.make()
        d = obj.__dict__
        d[self.name] = value
        made = d.get("_made")
        if made is None:
            d["_made"] = {self.name}
        else:
            made.add(self.name)
        return value


def _varint(buf: Any, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise Unusual("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            if result >> 64:
                raise Unusual("varint past 64 bits")
            return result, pos
        shift += 7


def _scalar(kind: int, v: int, enum: Any) -> int:
    if kind == I64:
        return v - (1 << 64) if v >> 63 else v
    if kind == ENUM:
        if v not in enum:  # onnx's enums are small and positive: anything else is left to protobuf
            raise Unusual("enum value outside onnx.proto's")
        return v
    if kind == I32:
        v &= 0xFFFFFFFF  # protobuf keeps the low 32 bits
        return v - (1 << 32) if v >> 31 else v
    return v  # U64


_F32, _F64 = struct.Struct("<f"), struct.Struct("<d")


def _packed(kind: int, enum: Any, buf: Any, pos: int, stop: int) -> list[Any]:
    n = stop - pos
    if kind == FLOAT:
        if n % 4:
            raise Unusual("packed floats of a length not a multiple of 4")
        return list(struct.unpack_from(f"<{n // 4}f", buf, pos))
    if kind == DOUBLE:
        if n % 8:
            raise Unusual("packed doubles of a length not a multiple of 8")
        return list(struct.unpack_from(f"<{n // 8}d", buf, pos))
    if n > BIG_VARINTS:
        raise Unusual("a long packed varint field")
    out = []
    while pos < stop:
        v, pos = _varint(buf, pos, stop)
        out.append(_scalar(kind, v, enum))
    return out


# what a field's tag (number and wire type, `_tags`) asks of the decoder
_MSG, _STR, _BYTES, _RAW, _PACKED, _VARINT, _F32_OP, _F64_OP = range(8)


_new = object.__new__


def _generic(cls: Any, buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    """A message of any class, read by its tag table (`_tags`)."""
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(cls)
    m._src = (buf, start, end)
    return _fields(cls, m, m.__dict__, buf, view, start, end, depth)


def _fields(cls: Any, m: Any, d: dict[str, Any], buf: bytes, view: memoryview, pos: int, end: int, depth: int
            ) -> Any:  # fmt: skip
    """The fields of `m` from `pos` to `end` into its dict `d`: the whole message for `_generic`, the rest of it
    for a hot message's reader that met a field it does not read itself."""
    tags = cls._tags
    oneof_of = cls._oneof_of
    while pos < end:
        key = buf[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = _varint(buf, pos, end)
        spec = tags.get(key)
        if spec is None:  # a field onnx.proto does not have, or a wire type that is not the field's
            raise Unusual(f"tag {key} is not one of onnx.proto's {cls.__name__}")
        name, op, repeated, sub = spec
        if op <= _PACKED:  # length-delimited
            n = buf[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = _varint(buf, pos, end)
            stop = pos + n
            if stop > end:
                raise Unusual("field runs past the end of its message")
            if op == _MSG:
                value: Any = _READERS[sub](buf, view, pos, stop, depth + 1)
            elif op == _STR:
                try:
                    value = buf[pos:stop].decode("utf-8")
                except UnicodeDecodeError:
                    raise Unusual("a string that is not UTF-8") from None
            elif op == _BYTES:
                value = buf[pos:stop]
            elif op == _RAW:
                value = view[pos:stop]
            else:
                d.setdefault(name, []).extend(_packed(sub[0], sub[1], buf, pos, stop))
                pos = stop
                continue
            pos = stop
        elif op == _VARINT:
            v = buf[pos]
            if v < 0x80 and sub[0] != ENUM:  # one byte, not negative: the value itself (most ints are)
                pos += 1
                value = v
            else:
                v, pos = _varint(buf, pos, end)
                value = _scalar(sub[0], v, sub[1])
        elif op == _F32_OP:
            if pos + 4 > end:
                raise Unusual("a truncated fixed32")
            value = _F32.unpack_from(buf, pos)[0]
            pos += 4
        else:
            if pos + 8 > end:
                raise Unusual("a truncated fixed64")
            value = _F64.unpack_from(buf, pos)[0]
            pos += 8
        if repeated:
            lst = d.get(name)
            if lst is None:
                d[name] = [value]
            else:
                lst.append(value)
            continue
        if name in d:
            if op == _MSG:
                raise Unusual("a message field written twice (protobuf merges them)")
        elif name in oneof_of and any(other in d for other in cls._oneofs[oneof_of[name]]):
            raise Unusual("two members of a oneof")
        d[name] = value
    if pos != end:
        raise Unusual("field runs past the end of its message")
    return m


def _tags(fields: dict[int, tuple[str, int, bool, Any]]) -> dict[int, tuple[str, int, bool, Any]]:
    """Each field's tags (number << 3 | wire type) as the decoder reads them: a repeated number field packed
    (wire type 2) or not."""
    out: dict[int, tuple[str, int, bool, Any]] = {}
    for number, (name, kind, repeated, sub) in fields.items():
        tag = number << 3
        if kind == MSG:
            out[tag | 2] = (name, _MSG, repeated, sub)
        elif kind == STR:
            out[tag | 2] = (name, _STR, repeated, None)
        elif kind == BYTES:
            out[tag | 2] = (name, _RAW if name == "raw_data" else _BYTES, repeated, None)
        else:
            if repeated:
                out[tag | 2] = (name, _PACKED, True, (kind, sub))
            if kind == FLOAT:
                out[tag | 5] = (name, _F32_OP, repeated, None)
            elif kind == DOUBLE:
                out[tag | 1] = (name, _F64_OP, repeated, None)
            else:
                out[tag] = (name, _VARINT, repeated, (kind, sub))
    return out


def decode(cls: Any, data: bytes) -> Any:
    """The message of `data`; raises Unusual for anything to leave to protobuf. `raw_data` fields are views of
    `data` (never copied)."""
    try:
        return _READERS[cls](data, memoryview(data), 0, len(data), 0)
    except (IndexError, struct.error, RecursionError):
        raise Unusual("malformed") from None


def _from_bytes(name: str, data: bytes) -> Any:
    return decode(CLASSES[name], data)


def function_proto(data: bytes) -> Any:
    """A FunctionProto (an onnx schema's body): decoded here, else (anything unusual) onnx's, whose parse error is
    raised."""
    try:
        return decode(FunctionProto, data)
    except Unusual:
        import onnx

        return onnx.FunctionProto.FromString(data)


# ---- onnx.proto's messages (field numbers, kinds; tests/binary/test_proto_decode.py checks them against onnx's)

_DEFAULTS = {I64: 0, U64: 0, I32: 0, ENUM: 0, FLOAT: 0.0, DOUBLE: 0.0, STR: "", BYTES: b""}


def _message(name: str, fields: dict[int, tuple[str, int, bool, Any]], oneofs: dict[str, tuple[str, ...]] | None = None
             ) -> Any:  # fmt: skip
    attrs: dict[str, Any] = {"_fields": fields, "_by_name": {f[0]: f for f in fields.values()}}
    attrs["_oneofs"] = oneofs or {}
    attrs["_oneof_of"] = {member: group for group, members in (oneofs or {}).items() for member in members}
    for spec in fields.values():
        if not spec[2] and spec[1] != MSG:
            attrs[spec[0]] = _DEFAULTS[spec[1]]
    return type(name, (Message,), attrs)


def _o(name: str, kind: int, sub: Any = None) -> tuple[str, int, bool, Any]:
    return (name, kind, False, sub)


def _r(name: str, kind: int, sub: Any = None) -> tuple[str, int, bool, Any]:
    return (name, kind, True, sub)


_ATTRIBUTE_TYPES = frozenset(range(15))
_DATA_LOCATIONS = frozenset((0, 1))

_SPECS: dict[str, tuple[dict[int, tuple[str, int, bool, Any]], dict[str, tuple[str, ...]] | None]] = {
    "StringStringEntryProto": ({1: _o("key", STR), 2: _o("value", STR)}, None),
    "OperatorSetIdProto": ({1: _o("domain", STR), 2: _o("version", I64)}, None),
    "IntIntListEntryProto": ({1: _o("key", I64), 2: _r("value", I64)}, None),
    "SimpleShardedDimProto": ({1: _o("dim_value", I64), 2: _o("dim_param", STR), 3: _o("num_shards", I64)},
                              {"dim": ("dim_value", "dim_param")}),
    "ShardedDimProto": ({1: _o("axis", I64), 2: _r("simple_sharding", MSG, "SimpleShardedDimProto")}, None),
    "ShardingSpecProto": ({1: _o("tensor_name", STR), 2: _r("device", I64),
                           3: _r("index_to_device_group_map", MSG, "IntIntListEntryProto"),
                           4: _r("sharded_dim", MSG, "ShardedDimProto")}, None),
    "NodeDeviceConfigurationProto": ({1: _o("configuration_id", STR), 2: _r("sharding_spec", MSG, "ShardingSpecProto"),
                                      3: _o("pipeline_stage", I32)}, None),
    "DeviceConfigurationProto": ({1: _o("name", STR), 2: _o("num_devices", I32), 3: _r("device", STR)}, None),
    "Segment": ({1: _o("begin", I64), 2: _o("end", I64)}, None),
    "TensorProto": ({
        1: _r("dims", I64), 2: _o("data_type", I32), 3: _o("segment", MSG, "Segment"), 4: _r("float_data", FLOAT),
        5: _r("int32_data", I32), 6: _r("string_data", BYTES), 7: _r("int64_data", I64), 8: _o("name", STR),
        12: _o("doc_string", STR), 9: _o("raw_data", BYTES), 13: _r("external_data", MSG, "StringStringEntryProto"),
        14: _o("data_location", ENUM, _DATA_LOCATIONS), 10: _r("double_data", DOUBLE), 11: _r("uint64_data", U64),
        16: _r("metadata_props", MSG, "StringStringEntryProto"),
    }, None),
    "SparseTensorProto": ({1: _o("values", MSG, "TensorProto"), 2: _o("indices", MSG, "TensorProto"),
                           3: _r("dims", I64)}, None),
    "Dimension": ({1: _o("dim_value", I64), 2: _o("dim_param", STR), 3: _o("denotation", STR)},
                  {"value": ("dim_value", "dim_param")}),
    "TensorShapeProto": ({1: _r("dim", MSG, "Dimension")}, None),
    "TensorTypeProto": ({1: _o("elem_type", I32), 2: _o("shape", MSG, "TensorShapeProto")}, None),
    "SequenceTypeProto": ({1: _o("elem_type", MSG, "TypeProto")}, None),
    "MapTypeProto": ({1: _o("key_type", I32), 2: _o("value_type", MSG, "TypeProto")}, None),
    "OptionalTypeProto": ({1: _o("elem_type", MSG, "TypeProto")}, None),
    "SparseTensorTypeProto": ({1: _o("elem_type", I32), 2: _o("shape", MSG, "TensorShapeProto")}, None),
    "OpaqueTypeProto": ({1: _o("domain", STR), 2: _o("name", STR)}, None),
    "TypeProto": ({
        1: _o("tensor_type", MSG, "TensorTypeProto"), 4: _o("sequence_type", MSG, "SequenceTypeProto"),
        5: _o("map_type", MSG, "MapTypeProto"), 9: _o("optional_type", MSG, "OptionalTypeProto"),
        8: _o("sparse_tensor_type", MSG, "SparseTensorTypeProto"), 7: _o("opaque_type", MSG, "OpaqueTypeProto"),
        6: _o("denotation", STR),
    }, {"value": ("tensor_type", "sequence_type", "map_type", "optional_type", "sparse_tensor_type", "opaque_type")}),
    "ValueInfoProto": ({1: _o("name", STR), 2: _o("type", MSG, "TypeProto"), 3: _o("doc_string", STR),
                        4: _r("metadata_props", MSG, "StringStringEntryProto")}, None),
    "AttributeProto": ({
        1: _o("name", STR), 21: _o("ref_attr_name", STR), 13: _o("doc_string", STR),
        20: _o("type", ENUM, _ATTRIBUTE_TYPES), 2: _o("f", FLOAT), 3: _o("i", I64), 4: _o("s", BYTES),
        5: _o("t", MSG, "TensorProto"), 6: _o("g", MSG, "GraphProto"),
        22: _o("sparse_tensor", MSG, "SparseTensorProto"), 14: _o("tp", MSG, "TypeProto"), 7: _r("floats", FLOAT),
        8: _r("ints", I64), 9: _r("strings", BYTES),
        10: _r("tensors", MSG, "TensorProto"), 11: _r("graphs", MSG, "GraphProto"),
        23: _r("sparse_tensors", MSG, "SparseTensorProto"), 15: _r("type_protos", MSG, "TypeProto"),
    }, None),
    "NodeProto": ({
        1: _r("input", STR), 2: _r("output", STR), 3: _o("name", STR), 4: _o("op_type", STR), 7: _o("domain", STR),
        8: _o("overload", STR), 5: _r("attribute", MSG, "AttributeProto"), 6: _o("doc_string", STR),
        9: _r("metadata_props", MSG, "StringStringEntryProto"),
        10: _r("device_configurations", MSG, "NodeDeviceConfigurationProto"),
    }, None),
    "TensorAnnotation": ({1: _o("tensor_name", STR),
                          2: _r("quant_parameter_tensor_names", MSG, "StringStringEntryProto")}, None),
    "GraphProto": ({
        1: _r("node", MSG, "NodeProto"), 2: _o("name", STR), 5: _r("initializer", MSG, "TensorProto"),
        15: _r("sparse_initializer", MSG, "SparseTensorProto"), 10: _o("doc_string", STR),
        11: _r("input", MSG, "ValueInfoProto"), 12: _r("output", MSG, "ValueInfoProto"),
        13: _r("value_info", MSG, "ValueInfoProto"), 14: _r("quantization_annotation", MSG, "TensorAnnotation"),
        16: _r("metadata_props", MSG, "StringStringEntryProto"),
    }, None),
    "TrainingInfoProto": ({1: _o("initialization", MSG, "GraphProto"), 2: _o("algorithm", MSG, "GraphProto"),
                           3: _r("initialization_binding", MSG, "StringStringEntryProto"),
                           4: _r("update_binding", MSG, "StringStringEntryProto")}, None),
    "FunctionProto": ({
        1: _o("name", STR), 4: _r("input", STR), 5: _r("output", STR), 6: _r("attribute", STR),
        11: _r("attribute_proto", MSG, "AttributeProto"), 7: _r("node", MSG, "NodeProto"), 8: _o("doc_string", STR),
        9: _r("opset_import", MSG, "OperatorSetIdProto"), 10: _o("domain", STR), 13: _o("overload", STR),
        12: _r("value_info", MSG, "ValueInfoProto"), 14: _r("metadata_props", MSG, "StringStringEntryProto"),
    }, None),
    "ModelProto": ({
        1: _o("ir_version", I64), 8: _r("opset_import", MSG, "OperatorSetIdProto"), 2: _o("producer_name", STR),
        3: _o("producer_version", STR), 4: _o("domain", STR), 5: _o("model_version", I64), 6: _o("doc_string", STR),
        7: _o("graph", MSG, "GraphProto"), 14: _r("metadata_props", MSG, "StringStringEntryProto"),
        20: _r("training_info", MSG, "TrainingInfoProto"), 25: _r("functions", MSG, "FunctionProto"),
        26: _r("configuration", MSG, "DeviceConfigurationProto"),
    }, None),
}  # fmt: skip

CLASSES: dict[str, Any] = {name: _message(name, fields, oneofs) for name, (fields, oneofs) in _SPECS.items()}
for _cls in CLASSES.values():
    for _num, (_name, _kind, _rep, _sub) in list(_cls._fields.items()):
        if _kind == MSG:
            _cls._fields[_num] = _cls._by_name[_name] = (_name, _kind, _rep, CLASSES[_sub])
        if _rep or _kind == MSG:
            setattr(_cls, _name, _Absent(_name, list if _rep else CLASSES[_sub]))
# onnx's names of the nested messages, for `to_onnx` (TypeProto.Tensor is onnx.TypeProto.Tensor, ...)
_NESTED = {
    "Segment": ("TensorProto", "Segment"), "Dimension": ("TensorShapeProto", "Dimension"),
    "TensorTypeProto": ("TypeProto", "Tensor"), "SequenceTypeProto": ("TypeProto", "Sequence"),
    "MapTypeProto": ("TypeProto", "Map"), "OptionalTypeProto": ("TypeProto", "Optional"),
    "SparseTensorTypeProto": ("TypeProto", "SparseTensor"), "OpaqueTypeProto": ("TypeProto", "Opaque"),
}  # fmt: skip

ModelProto = CLASSES["ModelProto"]
GraphProto = CLASSES["GraphProto"]
FunctionProto = CLASSES["FunctionProto"]
NodeProto = CLASSES["NodeProto"]
AttributeProto = CLASSES["AttributeProto"]
TensorProto = CLASSES["TensorProto"]
ValueInfoProto = CLASSES["ValueInfoProto"]
SparseTensorProto = CLASSES["SparseTensorProto"]

# ---- the hot messages' readers. Nodes, attributes, tensors, graph and value infos with their types are nearly all of
# a model's messages: each of these reads the fields such a message usually has, as `_fields` reads them, in a loop of
# its own. At the first field it does not read itself (another field, a key or small value in more bytes than
# usual, anything unusual) it hands the rest of the message to `_fields`, which reads it or raises Unusual, as it
# would have alone. Keys are matched as bytes: 0x0A is field 1, wire type 2 (length-delimited).


def _ints(buf: bytes, pos: int, stop: int, kind: int) -> Any:
    """A packed int64 or int32 field's values (not empty)."""
    if stop - pos > BIG_VARINTS:
        raise Unusual("a long packed varint field")
    chunk = buf[pos:stop]
    if chunk.isascii():  # every value in one byte: the bytes themselves
        return chunk
    return _packed(kind, None, buf, pos, stop)


def _graph(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(GraphProto)
    m._src = (buf, start, end)
    nodes: list[Any] = []
    initializers: list[Any] = []
    inputs: list[Any] = []
    outputs: list[Any] = []
    infos: list[Any] = []
    pos = start
    try:
        while pos < end:
            key = buf[pos]
            if key & 0x87 != 2:  # the fields read here are all length-delimited, with one-byte keys
                break
            n = buf[pos + 1]
            if n < 0x80:
                p = pos + 2
            else:
                n, p = _varint(buf, pos + 1, end)
            stop = p + n
            if stop > end:
                break
            if key == 0x0A:
                nodes.append(_node(buf, view, p, stop, depth + 1))
            elif key == 0x2A:
                initializers.append(_tensor(buf, view, p, stop, depth + 1))
            elif key == 0x6A:
                infos.append(_value_info(buf, view, p, stop, depth + 1))
            elif key == 0x5A:
                inputs.append(_value_info(buf, view, p, stop, depth + 1))
            elif key == 0x62:
                outputs.append(_value_info(buf, view, p, stop, depth + 1))
            elif key == 0x12:
                m.name = buf[p:stop].decode()
            elif key == 0x52:
                m.doc_string = buf[p:stop].decode()
            else:
                break
            pos = stop
    except UnicodeDecodeError:
        raise Unusual("a string that is not UTF-8") from None
    if nodes:
        m.node = nodes
    if initializers:
        m.initializer = initializers
    if inputs:
        m.input = inputs
    if outputs:
        m.output = outputs
    if infos:
        m.value_info = infos
    if pos != end:
        return _fields(GraphProto, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _node(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(NodeProto)
    m._src = (buf, start, end)
    inputs: list[str] = []
    outputs: list[str] = []
    attributes: list[Any] = []
    metadata: list[Any] = []
    pos = start
    try:
        while pos < end:
            key = buf[pos]
            if key & 0x87 != 2:  # NodeProto's fields are all length-delimited, with one-byte keys
                break
            n = buf[pos + 1]
            if n < 0x80:
                p = pos + 2
            else:
                n, p = _varint(buf, pos + 1, end)
            stop = p + n
            if stop > end:
                break
            if key == 0x0A:
                inputs.append(buf[p:stop].decode())
            elif key == 0x12:
                outputs.append(buf[p:stop].decode())
            elif key == 0x2A:
                attributes.append(_attribute(buf, view, p, stop, depth + 1))
            elif key == 0x22:
                m.op_type = buf[p:stop].decode()
            elif key == 0x1A:
                m.name = buf[p:stop].decode()
            elif key == 0x3A:
                m.domain = buf[p:stop].decode()
            elif key == 0x4A:
                metadata.append(_entry(buf, view, p, stop, depth + 1))
            elif key == 0x32:
                m.doc_string = buf[p:stop].decode()
            else:
                break
            pos = stop
    except UnicodeDecodeError:
        raise Unusual("a string that is not UTF-8") from None
    m.input = inputs  # set even when empty: the reader reads them all, and making one on access costs more
    m.output = outputs
    m.attribute = attributes
    if metadata:
        m.metadata_props = metadata
    if pos != end:
        return _fields(NodeProto, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _attribute(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(AttributeProto)
    m._src = (buf, start, end)
    ints: list[int] = []
    floats: list[float] = []
    strings: list[bytes] = []
    t = g = None
    pos = start
    try:
        while pos < end:
            key = buf[pos]
            if key & 0x87 == 2:
                n = buf[pos + 1]
                if n < 0x80:
                    p = pos + 2
                else:
                    n, p = _varint(buf, pos + 1, end)
                stop = p + n
                if stop > end or not n:  # past the end, or an empty field (maybe a packed one): `_fields`'
                    break
                if key == 0x0A:
                    m.name = buf[p:stop].decode()
                elif key == 0x2A:
                    if t is not None:  # written twice
                        break
                    t = _tensor(buf, view, p, stop, depth + 1)
                elif key == 0x22:
                    m.s = buf[p:stop]
                elif key == 0x42:
                    ints.extend(_ints(buf, p, stop, I64))
                elif key == 0x3A:
                    if n & 3:
                        break
                    floats.extend(struct.unpack_from(f"<{n >> 2}f", buf, p))
                elif key == 0x4A:
                    strings.append(buf[p:stop])
                elif key == 0x32:
                    if g is not None:  # written twice
                        break
                    g = _graph(buf, view, p, stop, depth + 1)
                else:
                    break
                pos = stop
            elif key == 0xA0:  # type (field 20): the key is 0xA0 0x01
                v = buf[pos + 2]
                if buf[pos + 1] != 1 or v not in _ATTRIBUTE_TYPES:
                    break
                m.type = v
                pos += 3
            elif key == 0x18 or key == 0x40:  # i, or one of ints
                v = buf[pos + 1]
                if v < 0x80:
                    pos += 2
                else:
                    v, pos = _varint(buf, pos + 1, end)
                    if v >> 63:
                        v -= 1 << 64
                if key == 0x18:
                    m.i = v
                else:
                    ints.append(v)
            elif key == 0x15 or key == 0x3D:  # f, or one of floats
                if pos + 5 > end:
                    break
                f = _F32.unpack_from(buf, pos + 1)[0]
                if key == 0x15:
                    m.f = f
                else:
                    floats.append(f)
                pos += 5
            else:
                break
    except UnicodeDecodeError:
        raise Unusual("a string that is not UTF-8") from None
    if t is not None:
        m.t = t
    if g is not None:
        m.g = g
    if ints:
        m.ints = ints
    if floats:
        m.floats = floats
    if strings:
        m.strings = strings
    if pos != end:
        return _fields(AttributeProto, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _tensor(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(TensorProto)
    m._src = (buf, start, end)
    dims: list[int] = []
    external: list[Any] = []
    int64s: list[int] = []
    int32s: list[int] = []
    floats: list[float] = []
    pos = start
    try:
        while pos < end:
            key = buf[pos]
            if key == 0x08:  # one of dims
                v = buf[pos + 1]
                if v < 0x80:
                    pos += 2
                else:
                    v, pos = _varint(buf, pos + 1, end)
                    if v >> 63:
                        v -= 1 << 64
                dims.append(v)
            elif key == 0x10:  # data_type
                v = buf[pos + 1]
                if v >= 0x80:
                    break
                m.data_type = v
                pos += 2
            elif key & 0x87 == 2:
                n = buf[pos + 1]
                if n < 0x80:
                    p = pos + 2
                else:
                    n, p = _varint(buf, pos + 1, end)
                stop = p + n
                if stop > end:
                    break
                if key == 0x4A:
                    m.raw_data = view[p:stop]
                elif key == 0x42:
                    m.name = buf[p:stop].decode()
                elif key == 0x6A:
                    external.append(_entry(buf, view, p, stop, depth + 1))
                elif not n:  # an empty field (maybe a packed one): `_fields`'
                    break
                elif key == 0x0A:
                    dims.extend(_ints(buf, p, stop, I64))
                elif key == 0x3A:
                    int64s.extend(_ints(buf, p, stop, I64))
                elif key == 0x2A:
                    int32s.extend(_ints(buf, p, stop, I32))
                elif key == 0x22:
                    if n & 3:
                        break
                    floats.extend(struct.unpack_from(f"<{n >> 2}f", buf, p))
                else:
                    break
                pos = stop
            elif key == 0x70:  # data_location
                v = buf[pos + 1]
                if v not in _DATA_LOCATIONS:
                    break
                m.data_location = v
                pos += 2
            else:
                break
    except UnicodeDecodeError:
        raise Unusual("a string that is not UTF-8") from None
    m.dims = dims  # set even when empty (a scalar), as the reader reads them all
    if external:
        m.external_data = external
    if int64s:
        m.int64_data = int64s
    if int32s:
        m.int32_data = int32s
    if floats:
        m.float_data = floats
    if pos != end:
        return _fields(TensorProto, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _entry(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    """A StringStringEntryProto (metadata, external data's location)."""
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(_ENTRY)
    m._src = (buf, start, end)
    pos = start
    try:
        while pos < end:
            key = buf[pos]
            if key != 0x0A and key != 0x12:
                break
            n = buf[pos + 1]
            if n < 0x80:
                p = pos + 2
            else:
                n, p = _varint(buf, pos + 1, end)
            stop = p + n
            if stop > end:
                break
            if key == 0x0A:
                m.key = buf[p:stop].decode()
            else:
                m.value = buf[p:stop].decode()
            pos = stop
    except UnicodeDecodeError:
        raise Unusual("a string that is not UTF-8") from None
    if pos != end:
        return _fields(_ENTRY, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _value_info(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(ValueInfoProto)
    m._src = (buf, start, end)
    ty = None
    metadata: list[Any] = []
    pos = start
    try:
        while pos < end:
            key = buf[pos]
            if key & 0x87 != 2:
                break
            n = buf[pos + 1]
            if n < 0x80:
                p = pos + 2
            else:
                n, p = _varint(buf, pos + 1, end)
            stop = p + n
            if stop > end:
                break
            if key == 0x0A:
                m.name = buf[p:stop].decode()
            elif key == 0x12 and ty is None:
                ty = _type(buf, view, p, stop, depth + 1)
            elif key == 0x22:
                metadata.append(_entry(buf, view, p, stop, depth + 1))
            elif key == 0x1A:
                m.doc_string = buf[p:stop].decode()
            else:
                break
            pos = stop
    except UnicodeDecodeError:
        raise Unusual("a string that is not UTF-8") from None
    if ty is not None:
        m.type = ty
    if metadata:
        m.metadata_props = metadata
    if pos != end:
        return _fields(ValueInfoProto, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _type(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    """A TypeProto: a tensor type read here, any other left to `_fields`."""
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(_TYPE)
    m._src = (buf, start, end)
    tensor = None
    pos = start
    try:
        while pos < end:
            key = buf[pos]
            if key != 0x0A and key != 0x32:
                break
            n = buf[pos + 1]
            if n < 0x80:
                p = pos + 2
            else:
                n, p = _varint(buf, pos + 1, end)
            stop = p + n
            if stop > end:
                break
            if key == 0x0A:
                if tensor is not None:  # written twice
                    break
                tensor = _tensor_type(buf, view, p, stop, depth + 1)
            else:
                m.denotation = buf[p:stop].decode()
            pos = stop
    except UnicodeDecodeError:
        raise Unusual("a string that is not UTF-8") from None
    if tensor is not None:
        m.tensor_type = tensor
    if pos != end:
        return _fields(_TYPE, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _tensor_type(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(_TENSOR_TYPE)
    m._src = (buf, start, end)
    shape = None
    pos = start
    while pos < end:
        key = buf[pos]
        if key == 0x08:  # elem_type
            v = buf[pos + 1]
            if v >= 0x80:
                break
            m.elem_type = v
            pos += 2
        elif key == 0x12 and shape is None:
            n = buf[pos + 1]
            if n < 0x80:
                p = pos + 2
            else:
                n, p = _varint(buf, pos + 1, end)
            stop = p + n
            if stop > end:
                break
            shape = _shape(buf, view, p, stop, depth + 1)
            pos = stop
        else:
            break
    if shape is not None:
        m.shape = shape
    if pos != end:
        return _fields(_TENSOR_TYPE, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _shape(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(_SHAPE)
    m._src = (buf, start, end)
    dims: list[Any] = []
    pos = start
    while pos < end:
        if buf[pos] != 0x0A:
            break
        n = buf[pos + 1]
        if n < 0x80:
            p = pos + 2
        else:
            n, p = _varint(buf, pos + 1, end)
        stop = p + n
        if stop > end:
            break
        dims.append(_dim(buf, view, p, stop, depth + 1))
        pos = stop
    if dims:
        m.dim = dims
    if pos != end:
        return _fields(_SHAPE, m, m.__dict__, buf, view, pos, end, depth)
    return m


def _dim(buf: bytes, view: memoryview, start: int, end: int, depth: int) -> Any:
    """A Dimension: dim_value and dim_param are a oneof, so one of them here; both are `_fields`' (it raises)."""
    if depth > MAX_DEPTH:
        raise Unusual("nested too deep")
    m = _new(_DIM)
    m._src = (buf, start, end)
    value = param = False
    pos = start
    try:
        while pos < end:
            key = buf[pos]
            if key == 0x08 and not param:  # dim_value
                v = buf[pos + 1]
                if v < 0x80:
                    pos += 2
                else:
                    v, pos = _varint(buf, pos + 1, end)
                    if v >> 63:
                        v -= 1 << 64
                m.dim_value = v
                value = True
            elif (key == 0x12 and not value) or key == 0x1A:  # dim_param, denotation
                n = buf[pos + 1]
                if n < 0x80:
                    p = pos + 2
                else:
                    n, p = _varint(buf, pos + 1, end)
                stop = p + n
                if stop > end:
                    break
                if key == 0x12:
                    m.dim_param = buf[p:stop].decode()
                    param = True
                else:
                    m.denotation = buf[p:stop].decode()
                pos = stop
            else:
                break
    except UnicodeDecodeError:
        raise Unusual("a string that is not UTF-8") from None
    if pos != end:
        return _fields(_DIM, m, m.__dict__, buf, view, pos, end, depth)
    return m


_ENTRY, _TYPE = CLASSES["StringStringEntryProto"], CLASSES["TypeProto"]
_TENSOR_TYPE, _SHAPE, _DIM = CLASSES["TensorTypeProto"], CLASSES["TensorShapeProto"], CLASSES["Dimension"]

# each class's reader: its own (above), else `_generic` by its tag table (the hot readers call each other directly)
_READERS: dict[Any, Any] = {cls: partial(_generic, cls) for cls in CLASSES.values()}
_READERS.update({
    GraphProto: _graph, NodeProto: _node, AttributeProto: _attribute, TensorProto: _tensor, _ENTRY: _entry,
    ValueInfoProto: _value_info, _TYPE: _type, _TENSOR_TYPE: _tensor_type, _SHAPE: _shape, _DIM: _dim,
})  # fmt: skip
for _cls in CLASSES.values():
    _cls._tags = _tags(_cls._fields)
