"""Reading a large model file without copying its weights: the protobuf wire format, walked over an mmap.

protobuf's parser copies every byte of a message into its own memory, so a model with 0.6 GB of inline weights
costs the file plus its copy. For a large file the walk here copies everything except the `raw_data` of the
main graph's initializers, which it records as (offset, length) ranges of the file instead; the stripped message
is small and protobuf parses it as usual. Nothing under the ranges is touched until a value is asked for.

Field numbers are onnx.proto's: ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto.raw_data = 9.
A file this walk cannot follow (malformed, truncated) is handed whole to protobuf, whose error is the finding.
"""

from __future__ import annotations

MODEL_GRAPH, GRAPH_INITIALIZER, TENSOR_RAW_DATA = 7, 5, 9
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


def strip_weights(buf: memoryview) -> tuple[bytes, dict[int, tuple[int, int]]]:
    """The model's bytes without the main graph's large initializer data, and for each stripped initializer
    (by its index among the graph's initializers) the (offset, length) of its raw data in `buf`."""
    out = bytearray()
    ranges: dict[int, tuple[int, int]] = {}
    end = len(buf)
    for field, wire, key_start, payload, stop in _fields(buf, 0, end):
        if field != MODEL_GRAPH or wire != 2:
            out += buf[key_start:stop]
            continue
        graph = bytearray()
        index = 0
        for gf, gw, gk, gp, gs in _fields(buf, payload, stop):
            if gf != GRAPH_INITIALIZER or gw != 2:
                graph += buf[gk:gs]
                continue
            tensor = bytearray()
            for tf, tw, tk, tp, ts in _fields(buf, gp, gs):
                if tf == TENSOR_RAW_DATA and tw == 2 and ts - tp >= KEEP_BELOW:
                    ranges[index] = (tp, ts - tp)
                else:
                    tensor += buf[tk:ts]
            graph += _encode_varint((GRAPH_INITIALIZER << 3) | 2) + _encode_varint(len(tensor)) + tensor
            index += 1
        out += _encode_varint((MODEL_GRAPH << 3) | 2) + _encode_varint(len(graph)) + graph
    return bytes(out), ranges
