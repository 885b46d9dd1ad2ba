"""Reading a large model file without copying its weights: the protobuf wire format, walked over an mmap.

protobuf's parser copies every byte of a message into its own memory, so a model with 0.6 GB of inline weights
costs the file plus its copy. For a large file the walk here copies everything except the `raw_data` of the
main graph's initializers, which it records as (offset, length) ranges of the file instead; the stripped message
is small and protobuf parses it as usual. Nothing under the ranges is touched until a value is asked for.
The same goes for the tensors of the main graph's nodes' attributes (exporters such as paddle2onnx and spox keep
every weight in a Constant node), and for packed `float_data`/`double_data`, whose bytes are laid out as
raw data is.

Field numbers are onnx.proto's: ModelProto.graph = 7; GraphProto.node = 1, .initializer = 5; NodeProto.attribute
= 5; AttributeProto.t = 5; TensorProto.float_data = 4, .raw_data = 9, .double_data = 10.
A file this walk cannot follow (malformed, truncated) is handed whole to protobuf, whose error is the finding.

The stripped message must parse to what protobuf makes of the file, field repeats included: protobuf merges the
occurrences of a singular message field (ModelProto.graph twice: one graph whose nodes and initializers are
both occurrences' in order; AttributeProto.t twice: one tensor), keeps the last of a singular bytes field
(raw_data twice) and concatenates a repeated one (float_data packed in several pieces, or not packed). So the
graph's counters run on across its occurrences, and a tensor is stripped only when exactly one field holds its
elements and its attribute holds no other `t`; otherwise its bytes stay in the message for protobuf to read.
"""

from __future__ import annotations

MODEL_GRAPH, GRAPH_NODE, GRAPH_INITIALIZER, NODE_ATTRIBUTE, ATTRIBUTE_T = 7, 1, 5, 5, 5
TENSOR_RAW = {9: "raw", 4: "float", 10: "double"}  # fields whose bytes are the elements, little-endian
Key = tuple[int, ...]  # (initializer index,) or (node index, attribute index)
KEEP_BELOW = 4096  # bytes: raw data this small stays in the message


class WireError(ValueError):
    pass


def _varint(buf: memoryview, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise WireError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _skip(buf: memoryview, pos: int, end: int, wire: int) -> int:
    if wire == 0:
        return _varint(buf, pos, end)[1]
    if wire == 1:
        pos += 8
    elif wire == 2:
        n, pos = _varint(buf, pos, end)
        pos += n
    elif wire == 5:
        pos += 4
    else:
        raise WireError(f"unsupported wire type {wire}")
    if pos > end:
        raise WireError("field runs past the end of its message")
    return pos


def _fields(buf: memoryview, pos: int, end: int):  # type: ignore[no-untyped-def]
    """(field number, wire type, start of the field's key, start of its payload, end of the field)."""
    while pos < end:
        key_start = pos
        key, pos = _varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if wire == 2:
            n, payload = _varint(buf, pos, end)
            stop = payload + n
            if stop > end:
                raise WireError("field runs past the end of its message")
            yield field, wire, key_start, payload, stop
            pos = stop
        else:
            stop = _skip(buf, pos, end, wire)
            yield field, wire, key_start, pos, stop
            pos = stop


# ModelProto's fields (onnx.proto) and their wire types: 0 varint, 2 length-delimited
MODEL_FIELDS = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2, 20: 2, 25: 2}


def looks_like_model(data: bytes) -> bool:
    """Is this a binary ONNX model: top-level protobuf fields that are all ModelProto's, a graph among them,
    ending exactly at the end? (ONNX text never passes: `<` and letters are not valid ModelProto keys.)"""
    seen = set()
    try:
        for field, wire, _, _, _ in _fields(memoryview(data), 0, len(data)):
            if MODEL_FIELDS.get(field) != wire:
                return False
            seen.add(field)
    except WireError:
        return False
    return MODEL_GRAPH in seen


def _tensor(buf: memoryview, start: int, stop: int, key: Key, ranges: dict[Key, tuple[int, int]]) -> bytes:
    """A TensorProto's bytes without its large element field, whose range goes to `ranges`; unchanged when more
    than one field holds elements (protobuf keeps the last raw_data and joins float_data pieces)."""
    fields = list(_fields(buf, start, stop))
    if sum(1 for f in fields if f[0] in TENSOR_RAW) != 1:
        return bytes(buf[start:stop])
    out = bytearray()
    for tf, tw, tk, tp, ts in fields:
        if tf in TENSOR_RAW and tw == 2 and ts - tp >= KEEP_BELOW and key not in ranges:
            ranges[key] = (tp, ts - tp)
        else:
            out += buf[tk:ts]
    return bytes(out)


def _message(field: int, body: bytes | bytearray) -> bytes:
    return _encode_varint((field << 3) | 2) + _encode_varint(len(body)) + bytes(body)


def _node(buf: memoryview, start: int, stop: int, index: int, ranges: dict[Key, tuple[int, int]]) -> bytes:
    out = bytearray()
    attr = 0
    for nf, nw, nk, np_, ns in _fields(buf, start, stop):
        if nf == NODE_ATTRIBUTE and nw == 2:
            body = bytearray()
            fields = list(_fields(buf, np_, ns))
            merged = sum(1 for f in fields if f[0] == ATTRIBUTE_T) > 1  # protobuf merges them: left as they are
            for af, aw, ak, ap, as_ in fields:
                if af == ATTRIBUTE_T and aw == 2 and not merged:
                    body += _message(ATTRIBUTE_T, _tensor(buf, ap, as_, (index, attr), ranges))
                else:
                    body += buf[ak:as_]
            out += _message(NODE_ATTRIBUTE, body)
            attr += 1
        else:
            out += buf[nk:ns]
    return bytes(out)


def strip_weights(buf: memoryview) -> tuple[bytes, dict[Key, tuple[int, int]]]:
    """The model's bytes without the main graph's large tensor data, and for each stripped tensor the
    (offset, length) of its elements in `buf`: key (i,) for initializer i, (n, a) for attribute a of node n."""
    out = bytearray()
    ranges: dict[Key, tuple[int, int]] = {}
    end = len(buf)
    inits = nodes = 0  # across the graph field's occurrences: protobuf merges them into one graph
    for field, wire, key_start, payload, stop in _fields(buf, 0, end):
        if field != MODEL_GRAPH or wire != 2:
            out += buf[key_start:stop]
            continue
        graph = bytearray()
        for gf, gw, gk, gp, gs in _fields(buf, payload, stop):
            if gf == GRAPH_INITIALIZER and gw == 2:
                graph += _message(GRAPH_INITIALIZER, _tensor(buf, gp, gs, (inits,), ranges))
                inits += 1
            elif gf == GRAPH_NODE and gw == 2:
                graph += _message(GRAPH_NODE, _node(buf, gp, gs, nodes, ranges))
                nodes += 1
            else:
                graph += buf[gk:gs]
        out += _message(MODEL_GRAPH, graph)
    return bytes(out), ranges
