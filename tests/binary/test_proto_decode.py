"""The pure-Python decoder of onnx.proto (`binary.proto`) against protobuf's own parse (onnx's messages): the same
fields, the same values, presence and oneofs on every corpus model; anything it cannot be sure of is left to
protobuf (`Unusual`), so the reader then gives what it gave with protobuf alone. Its tensors' elements against
onnx.numpy_helper.to_array; its enum tables against onnx's; and a check of a binary model imports neither onnx
nor protobuf."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from google.protobuf.descriptor import FieldDescriptor as FD
from onnx import TensorProto, helper, numpy_helper

from graphlsp.binary import proto as light
from graphlsp.binary.read import _plain_array, model_from_proto, read_model
from graphlsp.graph import enums
from tests.binary.protobytes import field as _field
from tests.binary.protobytes import key as _key
from tests.binary.protobytes import varint as _varint

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted((ROOT / "corpus" / "models").glob("*.onnx")) + sorted((ROOT.parent / "shared" / "realworld").glob(
    "*.onnx"))  # fmt: skip

_KINDS = {
    FD.TYPE_INT64: light.I64, FD.TYPE_UINT64: light.U64, FD.TYPE_INT32: light.I32, FD.TYPE_ENUM: light.ENUM,
    FD.TYPE_FLOAT: light.FLOAT, FD.TYPE_DOUBLE: light.DOUBLE, FD.TYPE_STRING: light.STR, FD.TYPE_BYTES: light.BYTES,
    FD.TYPE_MESSAGE: light.MSG,
}  # fmt: skip


def _same(mine: object, real: object, path: str = "model") -> None:
    for f in real.DESCRIPTOR.fields:  # type: ignore[attr-defined]
        got, want = getattr(mine, f.name), getattr(real, f.name)
        if f.is_repeated:
            assert len(got) == len(want), f"{path}.{f.name}"
            for i, (a, b) in enumerate(zip(got, want, strict=True)):
                if f.type == FD.TYPE_MESSAGE:
                    _same(a, b, f"{path}.{f.name}[{i}]")
                else:
                    assert a == b or (a != a and b != b), f"{path}.{f.name}[{i}]"
            continue
        assert mine.HasField(f.name) == real.HasField(f.name), f"{path}.{f.name}"  # type: ignore[attr-defined]
        if f.type == FD.TYPE_MESSAGE:
            if real.HasField(f.name):  # type: ignore[attr-defined]
                _same(got, want, f"{path}.{f.name}")
            continue
        got = bytes(got) if f.name == "raw_data" else got
        assert got == want or (got != got and want != want), f"{path}.{f.name}"
        assert type(got) is type(want), f"{path}.{f.name}"
    for o in real.DESCRIPTOR.oneofs:  # type: ignore[attr-defined]
        assert mine.WhichOneof(o.name) == real.WhichOneof(o.name), f"{path}: oneof {o.name}"  # type: ignore[attr-defined]


def test_the_tables_are_onnx_protos() -> None:
    """Every message, field number, name, kind, label and oneof of the decoder's table is onnx's."""
    for name, cls in light.CLASSES.items():
        outer, inner = light._NESTED.get(name, (name, ""))
        desc = getattr(onnx, outer).DESCRIPTOR
        if inner:
            desc = desc.nested_types_by_name[inner]
        assert {f.number for f in desc.fields} == set(cls._fields), name
        for f in desc.fields:
            got_name, kind, repeated, sub = cls._fields[f.number]
            assert (got_name, kind, repeated) == (f.name, _KINDS[f.type], f.is_repeated), (name, f.name)
            if f.type == FD.TYPE_MESSAGE:
                assert sub.__name__ in light.CLASSES
                assert light._NESTED.get(sub.__name__, (sub.__name__, ""))[-1] in (f.message_type.name, "") or \
                    sub.__name__ == f.message_type.name, (name, f.name)  # fmt: skip
            if f.type == FD.TYPE_ENUM:
                assert sub == frozenset(v.number for v in f.enum_type.values), (name, f.name)
        assert {o.name: tuple(x.name for x in o.fields) for o in desc.oneofs} == cls._oneofs, name


def test_enums_are_onnx_enums() -> None:
    assert dict(TensorProto.DataType.items()) == dict(enums.TensorProto.DataType.items())
    for k, v in TensorProto.DataType.items():
        assert getattr(enums.TensorProto, k) == v
    for k, v in onnx.AttributeProto.AttributeType.items():
        assert getattr(enums.AttributeProto, k) == v
    assert (enums.TensorProto.DEFAULT, enums.TensorProto.EXTERNAL) == (TensorProto.DEFAULT, TensorProto.EXTERNAL)
    for elem in TensorProto.DataType.values():
        if elem == 0:
            continue
        dt = helper.tensor_dtype_to_np_dtype(elem)
        assert enums.tensor_dtype_to_np_dtype(elem) == dt
        assert enums.np_dtype_to_tensor_dtype(dt) == helper.np_dtype_to_tensor_dtype(dt)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_decodes_what_protobuf_parses(path: Path) -> None:
    data = path.read_bytes()
    _same(light.decode(light.ModelProto, data), onnx.ModelProto.FromString(data))


def _model(graph: bytes, extra: bytes = b"") -> bytes:
    opset = _field(8, _field(1, b"") + _key(2, 0) + _varint(17))
    return _key(1, 0) + _varint(8) + opset + _field(7, graph) + extra


def _node(*parts: bytes) -> bytes:
    return _field(1, _field(1, b"x") + _field(2, b"y") + _field(4, b"Relu") + b"".join(parts))


def _io(name: bytes) -> bytes:
    dim = _field(1, _key(1, 0) + _varint(2))
    tensor_type = _field(1, _key(1, 0) + _varint(1) + _field(2, dim))
    return _field(1, name) + _field(2, tensor_type)


_GRAPH = _field(2, b"g") + _field(11, _io(b"x")) + _field(12, _io(b"y"))

UNUSUAL = {
    "unknown field": _model(_GRAPH + _node(), _field(30, b"?")),
    "wrong wire type": _model(_GRAPH + _node(_key(3, 0) + _varint(1))),  # NodeProto.name as a varint
    "string not UTF-8": _model(_GRAPH + _node(_field(3, b"\xff\xfe"))),
    "graph twice": _model(_GRAPH + _node()) + _field(7, _field(2, b"h")),
    "oneof twice": _model(_field(11, _field(1, b"x") + _field(2, _field(1, _field(2, _field(
        1, _key(1, 0) + _varint(2) + _field(2, b"n"))))))),  # fmt: skip
    "enum out of range": _model(_GRAPH + _node(_field(5, _field(1, b"a") + _key(20, 0) + _varint(99)))),
    "truncated": _model(_GRAPH + _node())[:-3],
    "group": _model(_GRAPH + _node()) + _key(40, 3) + _key(40, 4),
}


@pytest.mark.parametrize("name", sorted(UNUSUAL))
def test_what_is_unusual_is_left_to_protobuf(name: str, tmp_path: Path) -> None:
    """The decoder refuses; the reader then reads the file with protobuf, as it did before it had a decoder:
    the same model and findings, or protobuf's own error."""
    data = UNUSUAL[name]
    with pytest.raises(light.Unusual):
        light.decode(light.ModelProto, data)
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    try:
        want = onnx.ModelProto.FromString(data)
    except Exception as e:
        with pytest.raises(type(e)):
            read_model(path)
        return
    model, findings = read_model(path)
    model2, findings2 = model_from_proto(want, str(tmp_path), str(path))
    assert [(f.code, f.message, f.detail) for f in findings] == [(f.code, f.message, f.detail) for f in findings2]
    assert [(n.op_type, n.name) for n in model.graph.nodes] == [(n.op_type, n.name) for n in model2.graph.nodes]


def test_scalars_written_twice_keep_the_last_and_repeated_fields_join() -> None:
    """protobuf's rules: the last occurrence of a singular scalar, every occurrence of a repeated field
    (packed and not), whatever the order."""
    tensor = (_key(2, 0) + _varint(6) + _key(2, 0) + _varint(7) + _field(1, _varint(2)) + _key(1, 0) + _varint(3)
              + _field(7, _varint(5) + _varint(6)) + _key(7, 0) + _varint(2**64 - 1) + _field(8, b"t"))  # fmt: skip
    mine, real = light.decode(light.TensorProto, tensor), onnx.TensorProto.FromString(tensor)
    _same(mine, real)
    assert list(mine.dims) == [2, 3] and mine.data_type == 7 and list(mine.int64_data) == [5, 6, -1]


def test_int32_fields_keep_the_low_bits_and_enums_only_their_values() -> None:
    """An int32 varint past 32 bits is cut to its low 32 as protobuf does (a negative one is written in 10
    bytes); an enum value onnx.proto does not define is protobuf's to read (it keeps it as an unknown field)."""
    for value in (2**32 + 7, 2**64 - 5, 2**31):
        tensor = _key(2, 0) + _varint(value) + _field(8, b"t")
        mine, real = light.decode(light.TensorProto, tensor), onnx.TensorProto.FromString(tensor)
        _same(mine, real)
    for value in (2**32 + 1, 2**64 - 1, 15):
        with pytest.raises(light.Unusual):
            light.decode(light.AttributeProto, _field(1, b"a") + _key(20, 0) + _varint(value))


def _tensors() -> list[onnx.TensorProto]:
    rng = np.random.default_rng(0)
    out = []
    for elem in (1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13):
        dt = helper.tensor_dtype_to_np_dtype(elem)
        arr = (rng.standard_normal((2, 3)) * 50).astype(dt)
        out.append(numpy_helper.from_array(arr, "raw"))
        out.append(helper.make_tensor("typed", elem, [2, 3], arr.reshape(-1).tolist()))
        out.append(helper.make_tensor("scalar", elem, [], arr.reshape(-1)[:1].tolist()))
        short = numpy_helper.from_array(arr, "short")
        short.raw_data = short.raw_data[:-1]
        out.append(short)
        wrong = numpy_helper.from_array(arr, "wrong")
        wrong.dims[:] = [4, 4]
        out.append(wrong)
    return out


@pytest.mark.parametrize("tensor", _tensors(), ids=lambda t: f"{t.data_type}-{t.name}")
def test_elements_are_numpy_helpers(tensor: onnx.TensorProto) -> None:
    """The same array (values, dtype, shape), or the same error, as onnx.numpy_helper.to_array."""
    mine = light.decode(light.TensorProto, tensor.SerializeToString())
    try:
        want = numpy_helper.to_array(tensor)
    except Exception as e:
        with pytest.raises(type(e)) as got:
            _plain_array(mine, None)
        assert str(got.value) == str(e)
        return
    got = _plain_array(mine, None)
    assert got is not None
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_a_binary_check_imports_neither_onnx_nor_protobuf() -> None:
    model = ROOT / "corpus" / "models" / "optimum_bert.onnx"
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "graphlsp.cli", "check", "--no-cache", str(model)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)  # fmt: skip
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time")}
    assert "graphlsp.binary.read" in imported
    assert "onnx" not in imported and "google.protobuf" not in imported


def test_mutated_binaries_get_the_diagnostics_protobuf_gave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fuzzer's mutations of real binaries (flipped bits, cut and rewritten lengths, protobuf fields set to
    odd values), each checked twice: with the decoder, and with protobuf's parse alone (the reader before it):
    the same diagnostics, or the same error."""
    import random

    from graphlsp.lint.config import Settings
    from graphlsp.lint.runner import lint_binary
    from tests import fuzz_models as fm
    from tests import fuzz_targets as ft

    decode = light.decode

    def refuse(cls: object, data: bytes) -> object:
        raise light.Unusual("protobuf's parse, as before")

    def diagnostics(path: Path, old: bool) -> str:
        monkeypatch.setattr(light, "decode", refuse if old else decode)
        try:
            return repr(lint_binary(str(path), Settings()))
        except Exception as e:
            return f"{type(e).__name__}: {e}"

    c = fm.RandomChooser(random.Random(25))
    decoded = 0
    for i in range(150):
        data = ft.mutate_proto(c) if i % 2 else fm.mutate_binary(c)
        path = tmp_path / f"m{i}.onnx"
        path.write_bytes(data)
        try:
            decode(light.ModelProto, data)
            decoded += 1
        except light.Unusual:
            pass
        assert diagnostics(path, False) == diagnostics(path, True), f"input {i}"
    assert decoded > 20  # the decoder read a good share of them itself
