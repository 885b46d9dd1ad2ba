"""The hot messages' own readers in `binary.proto` (graph, node, attribute, tensor, value info and its type, string
entries) against the generic loop they hand the rest of a message to: the same messages (fields, values, presence,
bytes) on every real model, on hand-written encodings each reader leaves to that loop, and on mutated bytes; and
Unusual exactly where the generic loop raises it."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from graphlsp.binary import proto as light
from tests.binary.protobytes import field as _field
from tests.binary.protobytes import key as _key
from tests.binary.protobytes import varint as _varint
from tests.binary.test_proto_decode import MODELS, _same

_GENERIC = {cls: partial(light._generic, cls) for cls in light.CLASSES.values()}


@contextmanager
def _generic_only() -> Iterator[None]:
    saved = light._READERS
    light._READERS = _GENERIC
    try:
        yield
    finally:
        light._READERS = saved


def _decoded(cls: Any, data: bytes, generic: bool) -> Any:
    """The message, or "Unusual" when the decoder leaves the bytes to protobuf."""
    try:
        if generic:
            with _generic_only():
                return light.decode(cls, data)
        return light.decode(cls, data)
    except light.Unusual:
        return "Unusual"


def _equal(a: Any, b: Any, path: str) -> None:
    assert type(a) is type(b), path
    assert a.SerializeToString() == b.SerializeToString(), path
    for name, kind, repeated, _ in type(a)._fields.values():
        got, want = getattr(a, name), getattr(b, name)
        if repeated:
            assert type(got) is list and len(got) == len(want), f"{path}.{name}"
            for i, (x, y) in enumerate(zip(got, want, strict=True)):
                if kind == light.MSG:
                    _equal(x, y, f"{path}.{name}[{i}]")
                else:
                    assert type(x) is type(y) and (x == y or (x != x and y != y)), f"{path}.{name}[{i}]"
            continue
        assert a.HasField(name) == b.HasField(name), f"{path}.{name}"
        if kind == light.MSG:
            if a.HasField(name):
                _equal(got, want, f"{path}.{name}")
        else:
            got, want = (bytes(got), bytes(want)) if name == "raw_data" else (got, want)
            assert type(got) is type(want) and (got == want or (got != got and want != want)), f"{path}.{name}"
    for group in type(a)._oneofs:
        assert a.WhichOneof(group) == b.WhichOneof(group), f"{path}: {group}"


def _same_as_generic(cls: Any, data: bytes) -> Any:
    hot, generic = _decoded(cls, data, False), _decoded(cls, data, True)
    if isinstance(generic, str) or isinstance(hot, str):
        assert hot == generic, f"hot: {hot!r}, generic: {generic!r}"
    else:
        _equal(hot, generic, cls.__name__)
    return hot


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_real_models_read_as_the_generic_loop_reads_them(path: Path) -> None:
    assert not isinstance(_same_as_generic(light.ModelProto, path.read_bytes()), str)


# ---- encodings the hot readers leave to the generic loop (or read themselves, in their rarer forms)

_F = struct.Struct("<f")
_TYPE = _key(20, 0)  # AttributeProto.type, a two-byte key
_LONG = b"v" * 200  # a string whose length takes two bytes

CASES: dict[str, tuple[Any, bytes]] = {
    # NodeProto
    "node: overload among the inputs": (light.NodeProto, _field(1, b"x") + _field(8, b"o") + _field(1, b"y")),
    "node: a key in two bytes": (light.NodeProto, b"\x8a\x00" + _varint(1) + b"x" + _field(4, b"Relu")),
    "node: empty name, doc, metadata": (light.NodeProto, _field(3, b"") + _field(6, b"d") + _field(9, _field(
        1, b"k") + _field(2, _LONG)) + _field(2, b"")),  # fmt: skip
    "node: a long input name": (light.NodeProto, _field(1, _LONG) + _field(7, b"com.x")),
    "node: device configurations": (light.NodeProto, _field(10, _field(1, b"c")) + _field(1, b"x")),
    "node: an unknown field": (light.NodeProto, _field(1, b"x") + _field(30, b"?")),
    "node: a varint field": (light.NodeProto, _field(1, b"x") + _key(4, 0) + _varint(1)),
    "node: an input not UTF-8": (light.NodeProto, _field(1, b"\xff")),
    "node: an attribute past the end": (light.NodeProto, _key(5, 2) + _varint(9) + _field(1, b"a")),
    # AttributeProto
    "attribute: a negative int": (light.AttributeProto, _field(1, b"a") + _TYPE + _varint(2) + _key(3, 0)
                                  + _varint(2**64 - 5)),  # fmt: skip
    "attribute: ints packed and not": (light.AttributeProto, _key(8, 0) + _varint(1) + _field(8, _varint(2)
        + _varint(300) + _varint(2**64 - 1)) + _key(8, 0) + _varint(2**63) + _field(8, b"\x05\x06")),  # fmt: skip
    "attribute: empty packed ints": (light.AttributeProto, _field(8, b"") + _TYPE + _varint(7)),
    "attribute: floats packed and not": (light.AttributeProto, _key(7, 5) + _F.pack(1.5) + _field(7, _F.pack(2.5)
        + _F.pack(float("nan"))) + _key(2, 5) + _F.pack(-0.0)),  # fmt: skip
    "attribute: packed floats of 5 bytes": (light.AttributeProto, _field(7, b"\x00" * 5)),
    "attribute: a truncated float": (light.AttributeProto, _field(1, b"a") + _key(2, 5) + b"\x00\x00"),
    "attribute: the type in three bytes": (light.AttributeProto, b"\xa0\x81\x00" + _varint(1)),
    "attribute: type 15": (light.AttributeProto, _TYPE + _varint(15)),
    "attribute: type in two bytes": (light.AttributeProto, _TYPE + b"\x81\x00"),
    "attribute: a truncated type": (light.AttributeProto, _field(1, b"a") + _TYPE),
    "attribute: t twice": (light.AttributeProto, _field(5, _key(2, 0) + _varint(1)) + _field(5, _field(8, b"t"))),
    "attribute: g twice": (light.AttributeProto, _field(6, _field(2, b"g")) + _field(6, _field(2, b"h"))),
    "attribute: strings, empty s": (light.AttributeProto, _field(9, b"a") + _field(9, b"\xff") + _field(4, b"")),
    "attribute: ref, doc, tensors, graphs": (light.AttributeProto, _field(21, b"r") + _field(13, b"d") + _field(
        10, _key(2, 0) + _varint(7)) + _field(11, _field(2, b"g")) + _field(1, b"a")),  # fmt: skip
    "attribute: sparse tensor, type proto": (light.AttributeProto, _field(22, _field(1, b"")) + _field(14, _field(
        1, _key(1, 0) + _varint(1))) + _TYPE + _varint(13)),  # fmt: skip
    "attribute: i then s": (light.AttributeProto, _key(3, 0) + _varint(200) + _field(4, b"s") + _key(3, 0)
                            + _varint(3)),  # fmt: skip
    "attribute: a truncated i": (light.AttributeProto, _key(3, 0) + b"\x80"),
    # TensorProto
    "tensor: dims packed and not": (light.TensorProto, _key(1, 0) + _varint(2) + _field(1, _varint(3)
        + _varint(2**64 - 1)) + _key(1, 0) + _varint(1000) + _field(1, b"\x04")),  # fmt: skip
    "tensor: empty packed dims": (light.TensorProto, _field(1, b"") + _key(2, 0) + _varint(1)),
    "tensor: a data type in two bytes": (light.TensorProto, _key(2, 0) + b"\x81\x00" + _field(8, b"t")),
    "tensor: a data type past 31 bits": (light.TensorProto, _key(2, 0) + _varint(2**32 + 7)),
    "tensor: typed data": (light.TensorProto, _field(7, _varint(5) + _varint(2**64 - 1)) + _key(7, 0) + _varint(9)
        + _field(5, _varint(2**64 - 2) + _varint(4)) + _key(5, 0) + _varint(2**35 + 1) + _field(4, _F.pack(1.0))
        + _key(4, 5) + _F.pack(2.0) + _field(10, struct.pack("<d", 3.0)) + _field(11, _varint(2**64 - 1))),  # fmt: skip
    "tensor: float data of 3 bytes": (light.TensorProto, _field(4, b"abc")),
    "tensor: empty typed data": (light.TensorProto, _field(7, b"") + _field(5, b"") + _field(4, b"")),
    "tensor: raw, external, location": (light.TensorProto, _field(8, b"w") + _field(9, b"\x00\x01") + _field(
        13, _field(1, b"location") + _field(2, _LONG)) + _key(14, 0) + _varint(1)),  # fmt: skip
    "tensor: location 2": (light.TensorProto, _key(14, 0) + _varint(2)),
    "tensor: location in two bytes": (light.TensorProto, _key(14, 0) + b"\x81\x00"),
    "tensor: segment, doc, strings, metadata": (light.TensorProto, _field(3, _key(1, 0) + _varint(1)) + _field(
        12, b"d") + _field(6, b"\xff") + _field(16, _field(1, b"k")) + _key(1, 0) + _varint(1)),  # fmt: skip
    "tensor: segment twice": (light.TensorProto, _field(3, b"") + _field(3, b"")),
    "tensor: a truncated dim": (light.TensorProto, _key(1, 0)),
    "tensor: a name not UTF-8": (light.TensorProto, _field(8, b"\xc3")),
    # ValueInfoProto, TypeProto and below
    "value info: type twice": (light.ValueInfoProto, _field(2, b"") + _field(2, b"")),
    "value info: doc, metadata": (light.ValueInfoProto, _field(3, b"d") + _field(4, _field(1, b"k")) + _field(
        1, b"x")),  # fmt: skip
    "type: tensor, then a sequence": (light.CLASSES["TypeProto"], _field(1, b"") + _field(4, b"")),
    "type: a sequence, then a tensor": (light.CLASSES["TypeProto"], _field(4, b"") + _field(1, b"")),
    "type: tensor twice": (light.CLASSES["TypeProto"], _field(1, b"") + _field(1, b"")),
    "type: denotation, sparse": (light.CLASSES["TypeProto"], _field(6, b"IMAGE") + _field(8, _key(1, 0)
                                                                                         + _varint(1))),  # fmt: skip
    "tensor type: shape twice": (light.CLASSES["TensorTypeProto"], _field(2, b"") + _field(2, b"")),
    "tensor type: elem type in two bytes": (light.CLASSES["TensorTypeProto"], _key(1, 0) + b"\x81\x00"),
    "shape: a key in two bytes": (light.CLASSES["TensorShapeProto"], b"\x8a\x00" + _varint(0) + _field(1, b"")),
    "dim: a value, then a param": (light.CLASSES["Dimension"], _key(1, 0) + _varint(3) + _field(2, b"n")),
    "dim: a param, then a value": (light.CLASSES["Dimension"], _field(2, b"n") + _key(1, 0) + _varint(3)),
    "dim: a value twice, denotation": (light.CLASSES["Dimension"], _key(1, 0) + _varint(3) + _field(3, b"D")
                                       + _key(1, 0) + _varint(2**64 - 1)),  # fmt: skip
    "dim: a param twice": (light.CLASSES["Dimension"], _field(2, b"n") + _field(2, _LONG)),
    "entry: long, twice": (light.CLASSES["StringStringEntryProto"], _field(1, _LONG) + _field(2, b"a") + _field(
        2, b"b")),  # fmt: skip
    "entry: a value not UTF-8": (light.CLASSES["StringStringEntryProto"], _field(2, b"\xe2\x82")),
    # GraphProto
    "graph: metadata, sparse, annotation": (light.GraphProto, _field(1, _field(4, b"Relu")) + _field(16, _field(
        1, b"k")) + _field(15, _field(3, _varint(2))) + _field(14, _field(1, b"t")) + _field(1, b"")),  # fmt: skip
    "graph: doc, value info, io": (light.GraphProto, _field(10, b"d") + _field(13, _field(1, b"v")) + _field(
        11, _field(1, b"x")) + _field(12, _field(1, b"y")) + _field(2, b"g") + _field(5, _field(8, b"w"))),  # fmt: skip
    "graph: a node past the end": (light.GraphProto, _key(1, 2) + _varint(200) + _field(4, b"Relu")),
}


def _deep(levels: int) -> bytes:
    """A graph whose node holds a graph attribute, `levels` deep."""
    graph = _field(2, b"g")
    for _ in range(levels):
        graph = _field(1, _field(4, b"If") + _field(5, _field(1, b"then_branch") + _TYPE + _varint(5)
                                               + _field(6, graph)))  # fmt: skip
    return graph


CASES["graph: nested as deep as allowed"] = (light.GraphProto, _deep(light.MAX_DEPTH // 3 - 1))
CASES["graph: nested too deep"] = (light.GraphProto, _deep(light.MAX_DEPTH // 3 + 1))

# what the generic loop alone makes of each case: protobuf's reading, or left to it
UNUSUAL = {
    "node: an unknown field", "node: a varint field", "node: an input not UTF-8", "node: an attribute past the end",
    "attribute: packed floats of 5 bytes", "attribute: a truncated float", "attribute: type 15",
    "attribute: a truncated type", "attribute: t twice", "attribute: g twice", "attribute: a truncated i",
    "tensor: float data of 3 bytes", "tensor: location 2", "tensor: segment twice", "tensor: a truncated dim",
    "tensor: a name not UTF-8", "value info: type twice", "type: tensor, then a sequence",
    "type: a sequence, then a tensor", "type: tensor twice", "tensor type: shape twice", "dim: a value, then a param",
    "dim: a param, then a value", "entry: a value not UTF-8", "graph: a node past the end", "graph: nested too deep",
}  # fmt: skip


def _onnx(cls: Any) -> Any:
    outer, inner = light._NESTED.get(cls.__name__, (cls.__name__, ""))
    return getattr(getattr(onnx, outer), inner) if inner else getattr(onnx, outer)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_reads_as_the_generic_loop_and_protobuf_read_it(name: str) -> None:
    cls, data = CASES[name]
    got = _same_as_generic(cls, data)
    assert (got == "Unusual") == (name in UNUSUAL)
    if got != "Unusual":
        _same(got, _onnx(cls).FromString(data), cls.__name__)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_cut_or_flipped_reads_as_the_generic_loop_reads_it(name: str) -> None:
    """Every prefix, and every single bit flipped: the same message, or Unusual from both."""
    cls, data = CASES[name]
    for n in range(len(data)):
        _same_as_generic(cls, data[:n])
    for i in range(min(len(data), 120)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            _same_as_generic(cls, bytes(flipped))


# ---- mutations of whole models


def _rich_model() -> bytes:
    """A small model with every field the hot readers read, and some they leave to the generic loop."""
    const = helper.make_node("Constant", [], ["c"], name="k",
                             value=numpy_helper.from_array(np.arange(6, dtype="float32").reshape(2, 3), "w"))
    inner = helper.make_graph([helper.make_node("Identity", ["c"], ["z"])], "then", [],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])])  # fmt: skip
    node = helper.make_node("Conv", ["x", "w2", ""], ["y"], name="", domain="ai.onnx", doc_string="d",
                            strides=[1, -1], dilations=[300, 2], pads=[0, 0, 0, 0], group=-3, alpha=0.5, mode="m",
                            floats=[1.0, float("inf")], strings=[b"a", b"\xff"], g=inner)  # fmt: skip
    helper.set_metadata_props(node, {"k": "v" * 150})
    typed = helper.make_tensor("w2", TensorProto.INT64, [2, 1], [5, -6])
    ext = helper.make_tensor("e", TensorProto.FLOAT, [1], [0.0])
    for k, v in (("location", "w.bin"), ("offset", "0"), ("length", "4")):
        entry = ext.external_data.add()
        entry.key, entry.value = k, v
    ext.data_location = TensorProto.EXTERNAL
    ext.ClearField("float_data")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, None])
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    seq = helper.make_value_info("s", helper.make_sequence_type_proto(helper.make_tensor_type_proto(1, [1])))
    graph = helper.make_graph([const, node], "main", [x], [y], [typed, ext], value_info=[seq], doc_string="g")
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _seeds() -> list[bytes]:
    small = [p for p in MODELS if p.stat().st_size < 300_000]
    return [_rich_model()] + [p.read_bytes() for p in small[:: max(1, len(small) // 6)]]


SEEDS = _seeds()


@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(SEEDS) - 1), st.lists(st.tuples(st.sampled_from(["flip", "cut", "insert", "delete", "byte"]),
                                                          st.floats(0, 1), st.binary(max_size=8)), min_size=1,
                                                max_size=4))  # fmt: skip
def test_mutated_models_read_as_the_generic_loop_reads_them(seed: int, edits: list[tuple[str, float, bytes]]) -> None:
    data = bytearray(SEEDS[seed])
    for op, where, blob in edits:
        i = int(where * (len(data) - 1)) if data else 0
        if op == "flip" and data:
            data[i] ^= 1 << (blob[0] % 8 if blob else 0)
        elif op == "byte" and data:
            data[i] = blob[0] if blob else 0x80
        elif op == "cut":
            del data[i:]
        elif op == "insert":
            data[i:i] = blob
        elif op == "delete":
            del data[i : i + 1 + len(blob)]
    _same_as_generic(light.ModelProto, bytes(data))


def test_the_fuzzers_mutations_read_as_the_generic_loop_reads_them() -> None:
    """The fuzzer's mutations of real binaries (lengths rewritten, fields set to odd values): the same message, or
    Unusual from both; and a good share of them decoded."""
    from tests import fuzz_models as fm
    from tests import fuzz_targets as ft

    c = fm.RandomChooser(random.Random(7))
    decoded = 0
    for i in range(200):
        data = ft.mutate_proto(c) if i % 2 else fm.mutate_binary(c)
        decoded += not isinstance(_same_as_generic(light.ModelProto, data), str)
    assert decoded > 40
