"""Hand-written protobuf wire bytes for tests: a field key, a varint, a length-delimited field."""

from __future__ import annotations


def key(field: int, wire: int) -> bytes:
    return varint((field << 3) | wire)


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return key(number, 2) + varint(len(payload)) + payload
