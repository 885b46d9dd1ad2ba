"""`print_model` and `node_line`: the IR as ONNX text that onnx's parser and ours both read back.

Acceptance (data="full"): every model of ../shared/realworld and every node test case of onnx's backend suite
goes binary -> IR -> text; onnx.parser.parse_model and our SyntaxDocument read the text (no problem, and our tree
converts to the same protobuf as onnx's parser builds, for the node cases); every tensor (initializers and tensor
attributes, subgraphs included) comes back bit for bit; and onnxruntime gives bit-identical outputs for the
original and the reparsed model on the same inputs (seeded random inputs for the real models, the case's own
inputs for a sample of the node cases). Our parser reads a large model's text at ~1 MB/s, so the real models'
texts are parsed by our parser in two background processes while the rest of the module runs.

Then data="summary" (valid text for both parsers, no large tensor decoded or written), node_line (never over its
limit, never a large tensor's data), the element types and names that need care, and `graphlsp convert`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
import zlib
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnx.parser
import pytest
from onnx import TensorProto, helper, numpy_helper

from graphlsp.binary.read import ProtoTensor, model_from_proto, read_model
from graphlsp.graph.tensor import Tensor
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.printer import DECODE_CAP, SUMMARY_FULL, PrintError, node_line, print_model
from graphlsp.syntax.to_proto import model_to_proto

ort = pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[2]
REALWORLD_DIR = ROOT.parent / "shared" / "realworld"  # ../shared beside the clone (tests/conftest.py)
REALWORLD = sorted(REALWORLD_DIR.glob("*.onnx"), key=lambda p: -p.stat().st_size)  # largest first

# Input shapes for the real models: their symbolic dims at small sizes the models accept (silero takes 512
# samples at 16 kHz, with 64 of context in the models whose input is 576 wide); an int is a scalar's value.
REALWORLD_INPUTS: dict[str, dict[str, tuple[int, ...] | int]] = {
    "ch_PP-OCRv4_det_infer.onnx": {"x": (1, 3, 64, 64)},
    "ch_PP-OCRv4_rec_infer.onnx": {"x": (1, 3, 48, 64)},
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": {"x": (1, 3, 48, 64)},
    "silero_vad.onnx": {"input": (1, 512), "state": (2, 1, 128), "sr": 16000},
    "silero_vad_16k_op15.onnx": {"input": (1, 512), "state": (2, 1, 128), "sr": 16000},
    "silero_vad_16k_sequence.onnx": {"input": (2, 576), "h": (1, 1, 128), "c": (1, 1, 128)},
    "silero_vad_half.onnx": {"input": (1, 512), "state": (2, 1, 128)},
    "silero_vad_op18_ifless.onnx": {"input": (1, 512), "state": (2, 1, 128), "sr": 16000},
    "silero_vad_openvino_16k.onnx": {"input": (1, 576), "state": (2, 1, 128)},
}

# ---- helpers


def _session(model: onnx.ModelProto | str) -> Any:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1  # one thread: the same kernels in the same order for both models
    so.inter_op_num_threads = 1
    so.log_severity_level = 4
    data = model if isinstance(model, str) else model.SerializeToString()
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _same(a: Any, b: Any) -> bool:
    """Bit-identical values (arrays by their bytes, so NaN payloads and -0.0 count), sequences, maps, None."""
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if a is None or b is None:
        return a is b
    x, y = np.asarray(a), np.asarray(b)
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.dtype == object:
        return bool(x.tolist() == y.tolist())
    return x.tobytes() == y.tobytes()


def _tensor_protos(graph: onnx.GraphProto, path: str = "") -> list[tuple[str, TensorProto]]:
    """Every tensor of a graph, with where it is: initializers, tensor attributes, and those of subgraphs."""
    out = [(f"{path}/{t.name}", t) for t in graph.initializer]
    for i, node in enumerate(graph.node):
        for a in node.attribute:
            where = f"{path}/{i}.{a.name}"
            if a.type == onnx.AttributeProto.TENSOR:
                out.append((where, a.t))
            for g in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                out += _tensor_protos(g, where)
    return out


def _tensors(graph: onnx.GraphProto) -> list[tuple[str, int, tuple[int, ...], bytes]]:
    """Every tensor of a graph as (where, element type, dims, data bytes)."""
    return [(where, t.data_type, tuple(t.dims), _data(t)) for where, t in _tensor_protos(graph)]


def _data(t: TensorProto) -> bytes:
    if t.data_type == TensorProto.STRING:
        return b"\0".join(t.string_data)
    arr = numpy_helper.to_array(t)
    return arr.tobytes() if arr.dtype != object else repr(arr.tolist()).encode()


def _without_notes(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("# graphlsp:"))


def _reads_back(text: str) -> onnx.ModelProto:
    """onnx's parse of the text, after checking that our parser reads it the same way."""
    back = onnx.parser.parse_model(text)
    doc = SyntaxDocument(text)
    assert not doc.problems, [(p.code, p.message, text[p.start : p.end + 20]) for p in doc.problems[:3]]
    ours = model_to_proto(doc.model).SerializeToString(deterministic=True)
    assert ours == back.SerializeToString(deterministic=True), "our parser and onnx's build different protos"
    return back


def _roundtrip(proto: onnx.ModelProto, data: str = "full") -> tuple[str, onnx.ModelProto]:
    text = print_model(model_from_proto(proto)[0], data=data)
    return text, _reads_back(text)


# ---- the real models: our parser in the background

_WORKER = r"""
import json, sys, time
from graphlsp.binary.read import read_model
from graphlsp.syntax.document import SyntaxDocument
from graphlsp.syntax.printer import print_model
start = time.perf_counter()
text = print_model(read_model(sys.argv[1])[0])
doc = SyntaxDocument(text)
problems = [f"{p.code} {p.message}: {text[p.start:p.start + 60]!r}" for p in doc.problems[:5]]
print(json.dumps({"problems": problems, "chars": len(text), "seconds": time.perf_counter() - start}))
"""


_CHILDREN: list[subprocess.Popen[str]] = []


def _our_parse(path: Path) -> dict[str, Any]:
    child = subprocess.Popen([sys.executable, "-c", _WORKER, str(path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip
    _CHILDREN.append(child)
    out, err = child.communicate(timeout=600)
    if child.returncode != 0:
        return {"problems": [f"worker failed ({child.returncode}): {err[-2000:]}"], "chars": -1, "seconds": 0.0}
    result: dict[str, Any] = json.loads(out)
    return result


@pytest.fixture(scope="module", autouse=True)
def our_parses(request: pytest.FixtureRequest) -> Any:
    """Our parser's verdict on each real model's full text, computed by two processes while the tests run (started
    with the module's first test, when the tests that read them are selected)."""
    wanted = {p.name for p in REALWORLD if any(p.name in item.name and "full_text" in item.name
                                               for item in request.session.items)}  # fmt: skip
    pool = ThreadPoolExecutor(max_workers=2)  # each thread waits on a child process
    futures: dict[str, Future[dict[str, Any]]] = {p.name: pool.submit(_our_parse, p) for p in REALWORLD
                                                  if p.name in wanted}  # fmt: skip
    yield futures
    pool.shutdown(wait=False, cancel_futures=True)
    for child in _CHILDREN:  # the module stopped early (-x, a deselected test): stop what still runs
        if child.poll() is None:
            child.kill()
    pool.shutdown(wait=True)


# ---- onnx's node test cases


@cache
def _node_cases() -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators overflow casts on purpose
        from onnx.backend.test.case.node import collect_testcases

        return sorted(collect_testcases(), key=lambda c: c.name)


_INTERESTING = re.compile(
    r"float16|bfloat16|float8|float4|int4|int2|string|sequence|optional|loop|_if|scan|complex|uint64"
)


def _in_ort_sample(name: str) -> bool:
    """A fifth of the cases, and every case whose name says it has a type or construct that needs care."""
    return zlib.crc32(name.encode()) % 5 == 0 or bool(_INTERESTING.search(name))


def _feed(value: Any) -> Any:
    if isinstance(value, TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, list):
        return [_feed(v) for v in value]
    return value


def test_every_node_case_reads_back_and_runs_bit_identical() -> None:
    cases = _node_cases()
    failures: list[str] = []
    skipped: Counter[str] = Counter()
    ran = fixed_points = 0
    for case in cases:
        try:
            model, _ = model_from_proto(case.model)
            text = print_model(model)
            back = _reads_back(text)
        except Exception as e:  # noqa: BLE001 - collected, reported below
            failures.append(f"{case.name}: {type(e).__name__}: {str(e)[:300]}")
            continue
        if _tensors(back.graph) != _tensors(case.model.graph):
            failures.append(f"{case.name}: a tensor changed")
            continue
        # printing what was read back gives the same text: the printer's output is a fixed point
        if _without_notes(print_model(model_from_proto(back)[0])) != _without_notes(text):
            failures.append(f"{case.name}: printing the reparsed model gives another text")
            continue
        fixed_points += 1
        if not _in_ort_sample(case.name):
            continue
        if not case.data_sets:
            skipped["the case has no inputs"] += 1
            continue
        initializers = {t.name for t in case.model.graph.initializer}
        names = [i.name for i in case.model.graph.input if i.name not in initializers]
        feeds = {n: _feed(v) for n, v in zip(names, case.data_sets[0][0], strict=False)}
        try:
            expected = _session(case.model).run(None, feeds)
        except Exception as e:  # noqa: BLE001 - onnxruntime cannot run the original: not ours to test
            why = re.sub(r"\[ONNXRuntimeError\] : \d+ : \w+ : |\d+", "", str(e))[:48]
            skipped[f"onnxruntime cannot run the original: {why}"] += 1
            continue
        try:
            got = _session(back).run(None, feeds)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{case.name}: onnxruntime fails on the reparsed model: {str(e)[:300]}")
            continue
        if not _same(expected, got):
            failures.append(f"{case.name}: onnxruntime's outputs differ")
            continue
        ran += 1
    print(f"\n{len(cases)} node cases read back, {fixed_points} fixed points; onnxruntime bit-identical on {ran}, "
          f"skipped {sum(skipped.values())}:")  # fmt: skip
    for why, count in skipped.most_common():
        print(f"  {count:4d}  {why}")
    assert not failures, "\n".join(failures[:20])
    assert fixed_points == len(cases) and ran > 250


# ---- element types, numbers and strings


def _initializer_model(tensors: list[TensorProto]) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], tensors,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _f32_bits(*bits: int) -> np.ndarray:
    return np.array(bits, dtype=np.uint32).view(np.float32)


SPECIAL_F32 = np.concatenate([
    np.array([0.0, -0.0, 0.1, 1 / 3, 1.0, -2.5, 1e-45, 1.17e-38, 3.4028235e38, -3.4028235e38, 16777217.0, 1e-4],
             dtype=np.float32),
    np.array([np.inf, -np.inf, np.nan, -np.nan], dtype=np.float32), _f32_bits(0xFFC00000, 0x00000001, 0x807FFFFF),
])  # fmt: skip
SPECIAL_F64 = np.array([0.0, -0.0, 0.1, 1 / 3, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, np.inf,
                        -np.inf, np.nan, 1e100, -1e-100])  # fmt: skip
STRINGS = ['a"b', "c\\d", "e\nf", "ü€😀", "", "# not a comment", "{1, 2}", "tab\there", "\\"]


def _every_dtype() -> list[TensorProto]:
    rng = np.random.default_rng(7)
    f = rng.standard_normal(37).astype(np.float32)
    arrays: dict[str, np.ndarray] = {
        "f32": np.concatenate([SPECIAL_F32, f]), "f64": SPECIAL_F64,
        "f16": np.concatenate([SPECIAL_F32[:8].astype(np.float16), np.array([6e-8, 65504, np.inf, np.nan], np.float16)]),
        "bf16": np.concatenate([f, SPECIAL_F32[:12]]).astype(ml_dtypes.bfloat16),
        "i8": np.array([-128, 127, 0, -1], np.int8), "u8": np.array([0, 255, 7], np.uint8),
        "i16": np.array([-32768, 32767, -1], np.int16), "u16": np.array([0, 65535, 12345], np.uint16),
        "i32": np.array([-(2**31), 2**31 - 1, 0], np.int32), "u32": np.array([0, 2**32 - 1], np.uint32),
        "i64": np.array([-(2**63), 2**63 - 1, 0, -1], np.int64), "u64": np.array([0, 2**64 - 1], np.uint64),
        "bool": np.array([[True, False], [False, True]]),
        "c64": np.array([1 + 2j, -0.5 - 0.25j, complex(np.inf, np.nan)], np.complex64),
        "c128": np.array([1 / 3 + 1e-300j, -0.0 + 0j], np.complex128),
        "f8e4m3fn": f[:9].astype(ml_dtypes.float8_e4m3fn), "f8e4m3fnuz": f[:9].astype(ml_dtypes.float8_e4m3fnuz),
        "f8e5m2": f[:9].astype(ml_dtypes.float8_e5m2), "f8e5m2fnuz": f[:9].astype(ml_dtypes.float8_e5m2fnuz),
        "f8e8m0": np.abs(f[:9]).astype(ml_dtypes.float8_e8m0fnu),
        "i4": np.array([-8, 7, 0, -1, 3], ml_dtypes.int4), "u4": np.array([0, 15, 9], ml_dtypes.uint4),
        "f4": f[:7].astype(ml_dtypes.float4_e2m1fn), "i2": np.array([-2, 1, 0, -1, 1], ml_dtypes.int2),
        "u2": np.array([0, 3, 2, 1, 3, 3], ml_dtypes.uint2), "f6e2m3": f[:5].astype(ml_dtypes.float6_e2m3fn),
        "f6e3m2": f[:6].astype(ml_dtypes.float6_e3m2fn), "scalar": np.array(1.5, np.float32),
        "empty": np.zeros((0, 3), np.float32), "str": np.array(STRINGS, dtype=object),
    }  # fmt: skip
    raw = [numpy_helper.from_array(a, f"raw_{k}") for k, a in arrays.items()]
    typed = []  # the same data in the typed fields (int32_data, float_data, ...) rather than raw_data
    for p in raw:
        if p.data_type != TensorProto.STRING:
            vals = numpy_helper.to_array(p).reshape(-1)
            if p.data_type == TensorProto.BFLOAT16:
                vals = vals.astype(np.float32)
            typed.append(helper.make_tensor(p.name.replace("raw_", "typed_"), p.data_type, list(p.dims), vals))
    return raw + typed


def test_every_element_type_comes_back_bit_for_bit() -> None:
    proto = _initializer_model(_every_dtype())
    text, back = _roundtrip(proto)
    want = {t[0]: t[1:] for t in _tensors(proto.graph)}
    got = {t[0]: t[1:] for t in _tensors(back.graph)}
    assert want.keys() == got.keys()
    changed = [k for k in want if want[k] != got[k]]
    assert not changed, changed
    # a second trip gives the same text
    assert _without_notes(print_model(model_from_proto(back)[0])) == _without_notes(text)


def test_the_stored_field_is_kept() -> None:
    """Typed data is read back into the same field (int32_data of float16, float_data of complex64, ...)."""
    proto = _initializer_model([t for t in _every_dtype() if t.name.startswith("typed_")])
    _, back = _roundtrip(proto)
    kinds = {"float_data": np.float32, "double_data": np.float64, "int32_data": np.int32, "int64_data": np.int64,
             "uint64_data": np.uint64}  # fmt: skip
    for a, b in zip(proto.graph.initializer, back.graph.initializer, strict=True):
        assert not b.HasField("raw_data")
        for field, dtype in kinds.items():
            want, got = np.array(getattr(a, field), dtype), np.array(getattr(b, field), dtype)
            assert want.tobytes() == got.tobytes(), (a.name, field)


def test_nan_payloads_are_said_to_be_lost() -> None:
    proto = _initializer_model([numpy_helper.from_array(_f32_bits(0x7FC00001, 0x7FC00000), "w")])
    text, back = _roundtrip(proto)
    assert "# graphlsp: a NaN with a payload" in text
    assert numpy_helper.to_array(back.graph.initializer[0]).view(np.uint32).tolist() == [0x7FC00000, 0x7FC00000]


def test_strings_that_are_not_utf8_are_said_to_be_replaced() -> None:
    t = helper.make_tensor("s", TensorProto.STRING, [2], [b"ok", b"\xff\xfe"])
    text, back = _roundtrip(_initializer_model([t]))
    assert "not UTF-8" in text
    assert list(back.graph.initializer[0].string_data) == [b"ok", "\ufffd\ufffd".encode()]


def test_data_that_cannot_be_read_is_said_to_be_left_out() -> None:
    bad = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], raw_data=b"\0" * 8)  # 2 floats for 4
    text, back = _roundtrip(_initializer_model([bad]))
    assert '# graphlsp: the data of tensor "w" cannot be read' in text
    assert "float[4] w =  # data could not be read" in text
    assert not _data_count(back.graph.initializer[0]) and list(back.graph.initializer[0].dims) == [4]


# ---- names


def _names_model() -> onnx.ModelProto:
    """Names with every character that needs quotes, keywords as names, a subgraph and a Constant whose names are
    not identifiers, symbolic dims that are not identifiers."""
    x, y, c = "input.1/x:0", "out::y@2", "cond"
    then = helper.make_graph(
        [helper.make_node("Add", [x, "w.1"], ['t"hen\\'], name="then/add")], "then.branch", [],
        [helper.make_tensor_value_info('t"hen\\', TensorProto.FLOAT, ["N+1", 3])],
    )  # fmt: skip
    other = helper.make_graph([helper.make_node("Neg", [x], ["float"], name="")], "2else", [],
                              [helper.make_tensor_value_info("float", TensorProto.FLOAT, ["N+1", 3])])  # fmt: skip
    nodes = [
        helper.make_node("Constant", [], ["w.1"], name="w/const",
                         value=numpy_helper.from_array(np.arange(3, dtype=np.float32), "w.1:tensor")),
        helper.make_node("If", [c], [y], name="if::1", then_branch=then, else_branch=other),
        helper.make_node("Identity", [y], ["inf"]),
        helper.make_node("Identity", ["inf"], ["ü"], name="nan"),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "main graph", [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["N+1", 3]),
                              helper.make_tensor_value_info(c, TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("ü", TensorProto.FLOAT, ["N+1", 3])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def test_names_are_quoted_where_onnx_accepts_quotes_and_made_identifiers_where_not() -> None:
    proto = _names_model()
    text, back = _roundtrip(proto)
    g = back.graph
    assert g.name == "main graph"
    assert [i.name for i in g.input] == ["input.1/x:0", "cond"] and g.output[0].name == "ü"
    assert [(n.name, list(n.input), list(n.output)) for n in g.node] == [
        (n.name, list(n.input), list(n.output)) for n in proto.graph.node
    ]
    assert g.input[0].type.tensor_type.shape.dim[0].dim_param == "N+1"
    branches = {a.name: a.g for a in g.node[1].attribute}
    assert branches["then_branch"].name == "then_branch" and branches["else_branch"].name == "_2else"
    assert branches["then_branch"].node[0].output[0] == 't"hen\\'
    assert g.node[0].attribute[0].t.name == ""  # not an identifier: left out (onnx's parser takes no quoted one)
    assert "subgraph name(s)" in text
    feeds = {"input.1/x:0": np.arange(6, dtype=np.float32).reshape(2, 3), "cond": np.array(True)}
    for cond in (True, False):
        feeds["cond"] = np.array(cond)
        assert _same(_session(proto).run(None, feeds), _session(back).run(None, feeds))


def test_op_types_that_are_not_identifiers_cannot_be_printed() -> None:
    proto = _initializer_model([])
    proto.graph.node[0].op_type = "Not-An-Op"
    with pytest.raises(PrintError, match="Not-An-Op"):
        print_model(model_from_proto(proto)[0])
    proto.graph.node[0].op_type = "Identity"
    proto.graph.node[0].domain = "my-domain"
    with pytest.raises(PrintError):
        print_model(model_from_proto(proto)[0])


def test_attributes_text_cannot_carry_are_said_to_be_left_out() -> None:
    proto = _initializer_model([])
    node = proto.graph.node[0]
    node.attribute.append(helper.make_attribute("bad name", 1))
    node.attribute.append(helper.make_attribute("ts", [numpy_helper.from_array(np.ones(2, np.float32))]))
    text, back = _roundtrip(proto)
    assert 'attribute "bad name"' in text and "'ts' (tensors)" in text
    assert [a.name for a in back.graph.node[0].attribute] == ["ts"]


# ---- functions, sparse and external data


def test_model_local_functions() -> None:
    body = [
        helper.make_node("Constant", [], ["e"], value_float=3.0),
        helper.make_node("Constant", [], ["k"], value_float=2.0),
        helper.make_node("Mul", ["x", "k"], ["m"]),
        helper.make_node("Pow", ["m", "e"], ["p"]),
        helper.make_node("Shape", ["p"], ["s"]),
    ]
    body[-1].attribute.append(helper.make_attribute_ref("start", onnx.AttributeProto.INT))
    fn = helper.make_function("my.dom", "scaled_pow", ["x"], ["p", "s"], body, [helper.make_opsetid("", 19)],
                              attributes=["start"])  # fmt: skip
    fn.attribute_proto.append(helper.make_attribute("unused_default", 1.5))
    call = helper.make_node("scaled_pow", ["x"], ["y", "shape"], domain="my.dom", start=1)
    graph = helper.make_graph([call], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("shape", TensorProto.INT64, [1])])  # fmt: skip
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19), helper.make_opsetid("my.dom", 1)],
                              functions=[fn], ir_version=9)  # fmt: skip
    text, back = _roundtrip(proto)
    assert back.functions[0].name == "scaled_pow" and list(back.functions[0].attribute) == ["start"]
    assert back.functions[0].attribute_proto[0].f == 1.5
    feeds = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    assert _same(_session(proto).run(None, feeds), _session(back).run(None, feeds))
    # a function named `scaled.pow` can be defined in text ("scaled.pow" quoted) but not called: `my.dom.scaled.pow`
    # is op `pow` of domain `my.dom.scaled`
    proto.functions[0].name = proto.graph.node[0].op_type = "scaled.pow"
    with pytest.raises(PrintError, match="my.dom.scaled.pow"):
        print_model(model_from_proto(proto)[0])


def test_sparse_tensors_are_written_dense() -> None:
    values = numpy_helper.from_array(np.array([1.5, -2.0], np.float32), "sp")
    sparse = helper.make_sparse_tensor(values, numpy_helper.from_array(np.array([1, 4], np.int64)), [2, 3])
    const = helper.make_node("Constant", [], ["c"], sparse_value=sparse)
    graph = helper.make_graph([const, helper.make_node("Add", ["c", "sp"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              sparse_initializer=[sparse])  # fmt: skip
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    text, back = _roundtrip(proto)
    assert "sparse initializer is written dense" in text and "sparse_value is written as a dense `value`" in text
    dense = np.array([[0, 1.5, 0], [0, -2.0, 0]], np.float32)
    assert numpy_helper.to_array(back.graph.initializer[0]).tobytes() == dense.tobytes()
    assert numpy_helper.to_array(back.graph.node[0].attribute[0].t).tobytes() == dense.tobytes()
    assert _same(_session(back).run(None, {}), [dense * 2])


def test_external_data_keeps_its_references(tmp_path: Path) -> None:
    w = np.random.default_rng(3).standard_normal((64, 32)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 32])],
                              [numpy_helper.from_array(w, "w")])  # fmt: skip
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)
    onnx.save_model(proto, tmp_path / "m.onnx", save_as_external_data=True, location="weights.bin",
                    size_threshold=0)  # fmt: skip
    model, _ = read_model(tmp_path / "m.onnx")
    for data in ("full", "summary"):
        text = print_model(model, data=data)
        assert '"location": "weights.bin"' in text and "external data stays in its files" in text
        back = _reads_back(text)
        assert back.graph.initializer[0].data_location == TensorProto.EXTERNAL
        onnx.save(back, tmp_path / f"back_{data}.onnx")  # beside weights.bin
        feeds = {"x": np.ones((2, 64), np.float32)}
        want = _session(str(tmp_path / "m.onnx")).run(None, feeds)
        assert _same(want, _session(str(tmp_path / f"back_{data}.onnx")).run(None, feeds))


# ---- data="summary" and node_line: no large tensor decoded or written


@pytest.fixture
def decode_cap(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Fails the test when a tensor over DECODE_CAP bytes is decoded; returns the sizes decoded."""
    decoded: list[int] = []
    original = ProtoTensor.numpy

    def numpy(self: ProtoTensor) -> np.ndarray:
        assert self.nbytes <= DECODE_CAP, f"decoded {self.name!r} ({self.nbytes} bytes)"
        decoded.append(self.nbytes)
        return original(self)

    monkeypatch.setattr(ProtoTensor, "numpy", numpy)
    return decoded


def _large_constant_model() -> onnx.ModelProto:
    big = np.arange(4096, dtype=np.float32).reshape(64, 64) / 7
    medium = np.linspace(-1, 1, 100, dtype=np.float32)
    nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(big, "big")),
             helper.make_node("Constant", [], ["m"], value=numpy_helper.from_array(medium, "medium")),
             helper.make_node("Add", ["c", "w"], ["y"])]  # fmt: skip
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])],
                              [numpy_helper.from_array(big + 1, "w"), numpy_helper.from_array(medium, "w2"),
                               numpy_helper.from_array(np.array([1, 2], np.int64), "tiny")])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


def _data_count(t: TensorProto) -> int:
    return max(len(t.float_data), len(t.int32_data), len(t.int64_data), len(t.double_data), len(t.uint64_data),
               len(t.string_data), len(t.raw_data))  # fmt: skip


def test_summary_writes_types_and_shapes_and_no_large_data(decode_cap: list[int]) -> None:
    text, back = _roundtrip(_large_constant_model(), data="summary")
    assert "# graphlsp: data=summary" in text
    assert "float[64,64] w = ,  # 4096 values (16.0 KiB) not shown" in text
    assert "float[100] w2 = ,  # 100 values not shown: min -1.0, max 1.0" in text
    assert "int64[2] tiny = {1,2}" in text
    assert "value: tensor = float[64,64] big>" in text and "# value: 4096 values (16.0 KiB) not shown" in text
    assert all(_data_count(t) <= SUMMARY_FULL for t in back.graph.initializer)
    assert [list(t.dims) for t in back.graph.initializer] == [[64, 64], [100], [2]]
    assert back.graph.node[0].attribute[0].type == onnx.AttributeProto.TENSOR and not _data_count(
        back.graph.node[0].attribute[0].t
    )
    assert max(decode_cap) <= DECODE_CAP


@pytest.mark.parametrize("path", REALWORLD, ids=lambda p: p.name)
def test_realworld_summary_reads_back(path: Path, decode_cap: list[int]) -> None:
    model, _ = read_model(path)
    text = print_model(model, data="summary")
    back = _reads_back(text)
    assert len(text) < 200_000
    for where, t in _tensor_protos(back.graph):
        assert t.data_location == TensorProto.EXTERNAL or _data_count(t) <= 2 * SUMMARY_FULL, where
    assert [list(t.dims) for t in back.graph.initializer] == [
        list(t.dims) for t in onnx.load(path, load_external_data=False).graph.initializer
    ]


@pytest.mark.parametrize("path", REALWORLD, ids=lambda p: p.name)
def test_realworld_node_lines_stay_within_their_limit(path: Path, decode_cap: list[int]) -> None:
    model, _ = read_model(path)
    assert model.graph is not None
    for node in model.graph.all_nodes():
        full = node_line(node, limit=10**9)
        assert "\n" not in full
        numbers = len(re.findall(r"-?\d+\.\d+", full))
        assert numbers <= 64, full[:300]  # never a tensor's data: at most its first values
        for limit in (1, 20, 80, 200):
            line = node_line(node, limit)
            assert len(line) <= limit
            assert line == full or line.endswith("…")
        if node.subgraphs:
            assert "graph = {...}" in full


def test_node_line() -> None:
    model, _ = model_from_proto(_large_constant_model())
    assert model.graph is not None
    big, medium, add = model.graph.nodes
    assert node_line(big) == "c = Constant <value: tensor = float[64,64] big {...}> ()"
    assert node_line(medium) == "m = Constant <value: tensor = float[100] medium {-1.0, -0.97979796, -0.959596, " \
        "-0.93939394, ...}> ()"  # fmt: skip
    assert node_line(add) == "y = Add (c, w)"
    assert node_line(medium, 30) == "m = Constant <value: tensor =…" and len(node_line(medium, 30)) == 30
    names, _ = model_from_proto(_names_model())
    assert names.graph is not None
    assert (
        node_line(names.graph.nodes[0]) == '["w/const"] "w.1" = Constant <value: tensor = float[3] {0.0, 1.0, 2.0}> ()'
    )
    assert node_line(names.graph.nodes[1]) == \
        '["if::1"] "out::y@2" = If (cond) <else_branch: graph = {...}, then_branch: graph = {...}>'  # fmt: skip


# ---- the real models, full data (last: our parser's verdicts arrive from the background)


def _inputs(path: Path, session: Any) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20240601)
    spec = REALWORLD_INPUTS.get(path.name, {})
    feeds = {}
    for i in session.get_inputs():
        want = spec.get(i.name)
        if isinstance(want, int):
            feeds[i.name] = np.array(want, dtype=np.int64 if "int64" in i.type else np.int32)
            continue
        shape = want or tuple(d if isinstance(d, int) and d > 0 else 1 for d in i.shape)
        if "float16" in i.type:
            feeds[i.name] = (rng.standard_normal(shape) * 0.5).astype(np.float16)
        elif "float" in i.type:
            feeds[i.name] = (rng.standard_normal(shape) * 0.5).astype(np.float32)
        else:
            feeds[i.name] = rng.integers(0, 2, size=shape).astype(np.int64)
    return feeds


@pytest.mark.parametrize("path", REALWORLD, ids=lambda p: p.name)
def test_realworld_full_text_runs_bit_identical(path: Path, our_parses: dict[str, Future[dict[str, Any]]]) -> None:
    original = onnx.load(path)
    model, _ = read_model(path)
    text = print_model(model)
    back = onnx.parser.parse_model(text)
    assert _tensors(back.graph) == _tensors(original.graph), "a tensor changed"
    try:
        reference = _session(original)
        feeds = _inputs(path, reference)
        expected = reference.run(None, feeds)
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"onnxruntime cannot run {path.name}: {e}")
    got = _session(back).run(None, feeds)
    assert _same(expected, got), "onnxruntime's outputs differ"
    verdict = our_parses[path.name].result()
    print(f"\n{path.name}: {len(text)} chars, {len(original.graph.node)} nodes, outputs "
          f"{[np.asarray(o).shape for o in expected]} bit-identical; our parser {verdict['seconds']:.1f} s")  # fmt: skip
    assert verdict["chars"] == len(text)
    assert not verdict["problems"], verdict["problems"]


def test_text_models_print_back_to_the_same_model() -> None:
    """Text -> our IR -> text: onnx's parser builds the same model from both (the text front end keeps no
    producer_name, so that is left aside)."""
    from graphlsp.syntax.lower import build_model

    checked = 0
    for path in sorted((ROOT / "examples").glob("*.onnxtxt")):
        text = path.read_text(encoding="utf-8")
        doc = SyntaxDocument(text)
        if doc.problems:
            continue
        want = onnx.parser.parse_model(text)
        want.ClearField("producer_name")
        back = _reads_back(print_model(build_model(doc)[0]))
        back.ClearField("producer_name")
        assert back.SerializeToString(deterministic=True) == want.SerializeToString(deterministic=True), path.name
        checked += 1
    assert checked >= 3


# ---- graphlsp convert


def _convert(*args: str) -> int:
    from graphlsp.cli import main

    return main(["convert", *args])


def test_convert_binary_to_text_and_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.onnx"
    onnx.save(_names_model(), src)
    assert _convert(str(src), str(tmp_path / "m.onnxtxt"), "--weights", "inline") == 0
    text = (tmp_path / "m.onnxtxt").read_text(encoding="utf-8")
    assert text == print_model(read_model(src)[0])
    _reads_back(text)
    assert _convert(str(tmp_path / "m.onnxtxt"), str(tmp_path / "back.onnx")) == 0
    assert onnx.load(tmp_path / "back.onnx").graph.name == "main graph"
    assert _convert(str(src), "-", "--weights", "inline") == 0
    assert capsys.readouterr().out == text


def test_convert_refuses_binary_to_binary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "m.onnx"
    onnx.save(_names_model(), src)
    assert _convert(str(src), str(tmp_path / "out.onnx")) == 2
    assert "both binary" in capsys.readouterr().err
    assert not (tmp_path / "out.onnx").exists()
    assert _convert(str(src), str(tmp_path / "out.txt")) == 2
    assert not (tmp_path / "out.txt").exists()


def test_convert_reports_an_unreadable_binary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "bad.onnx"
    src.write_bytes(b"\x08\x07\x12\xff\xff not a model")
    assert _convert(str(src), str(tmp_path / "bad.onnxtxt")) == 1
    assert "GL106" in capsys.readouterr().err
    assert not (tmp_path / "bad.onnxtxt").exists()


def test_tensor_subclasses_without_a_proto_print_from_their_elements() -> None:
    from graphlsp.graph.tensor import ArrayTensor

    model, _ = model_from_proto(_initializer_model([numpy_helper.from_array(np.zeros(2, np.float32), "w")]))
    assert model.graph is not None
    v = model.graph.initializers["w"]
    v.tensor = ArrayTensor(np.array([0.5, -1.25], np.float32), TensorProto.FLOAT, "w")
    assert isinstance(v.tensor, Tensor)
    back = _reads_back(print_model(model))
    assert numpy_helper.to_array(back.graph.initializer[0]).tolist() == [0.5, -1.25]
