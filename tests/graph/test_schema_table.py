"""onnx's schemas as a table kept per onnx build (graphlsp/graph/ops.py `schemas`, `SchemaRef`): the schema a node
resolves to and its signature are onnx's own, and a check of a binary model never asks onnx's schema registry (built
on its first use, 20-30 ms)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import onnx.defs
import pytest

from graphlsp.graph import ops
from graphlsp.ops.signature import ATTR_TYPE_NAMES, schema_signature

ROOT = Path(__file__).resolve().parents[2]


def _onnx_schema(op: str, version: int, domain: str) -> onnx.defs.OpSchema | None:
    try:
        return onnx.defs.get_schema(op, version, domain)
    except (onnx.defs.SchemaError, TypeError, OverflowError):
        return None


def _every_op() -> list[tuple[str, str]]:
    return [(dom, op) for dom in sorted(ops.known_domains()) for op in ops.op_names(dom)]


def test_schema_for_picks_the_version_onnx_picks() -> None:
    for dom, op in _every_op():
        sinces = [s for s, _ in ops.op_versions(op, dom)]
        for version in {-1, 0, *sinces, *(s - 1 for s in sinces), *(s + 1 for s in sinces), 2**31 - 1, 2**31}:
            ref, theirs = ops.schema_for(op, version, dom), _onnx_schema(op, version, dom)
            if theirs is None:
                assert ref is None, (dom, op, version)
                continue
            assert ref is not None, (dom, op, version)
            assert (ref.name, ref.since_version, ref.deprecated) == (theirs.name, theirs.since_version, theirs.deprecated)
            assert ref.domain == ops.normalize_domain(theirs.domain)
    assert ops.schema_for("Relu", 14, "ai.onnx") is None is _onnx_schema("Relu", 14, "ai.onnx")


def test_signatures_from_the_table_are_onnxs() -> None:
    for dom, op in _every_op():
        for since, _ in ops.op_versions(op, dom):
            theirs = onnx.defs.get_schema(op, since, dom)
            sig = schema_signature(op, since, dom)
            assert sig is not None and sig.since_version == theirs.since_version
            assert [(p.name, p.type_str, p.min_arity) for p in sig.inputs] == \
                [(p.name, p.type_str, p.min_arity) for p in theirs.inputs]  # fmt: skip
            assert [p.name for p in sig.outputs] == [p.name for p in theirs.outputs]
            assert {n: (a.type_name, a.required) for n, a in sig.attrs.items()} == \
                {n: (ATTR_TYPE_NAMES.get(int(a.type.value), "?"), a.required) for n, a in theirs.attributes.items()}  # fmt: skip
            assert sig.constraints == {c.type_param_str: frozenset(c.allowed_type_strs) for c in theirs.type_constraints}
            assert (sig.min_input, sig.max_input, sig.min_output, sig.max_output) == \
                (theirs.min_input, theirs.max_input, theirs.min_output, theirs.max_output)  # fmt: skip
            assert sig.doc == (theirs.doc or "")
            for opset in theirs.function_opset_versions:
                assert sig.schema.get_function_with_opset_version(opset) == theirs.get_function_with_opset_version(opset)


def test_attribute_defaults_are_onnxs() -> None:
    sig = schema_signature("LeakyRelu", 16)
    assert sig is not None and sig.attrs["alpha"].default == pytest.approx(0.01)
    pad = schema_signature("Pad", 11)
    assert pad is not None and pad.attrs["mode"].default == "constant"


def test_anything_else_is_read_from_onnxs_schema() -> None:
    ref = ops.schema_for("Gemm", 13, "")
    assert ref is not None and ref.attributes["alpha"].name == "alpha"  # not in the table: onnx's OpSchema


def test_a_schema_ref_copies_and_pickles() -> None:
    import copy
    import pickle

    ref = ops.schema_for("Gemm", 13, "")
    assert ref is not None
    for twin in (copy.copy(ref), pickle.loads(pickle.dumps(ref))):
        assert (twin.name, twin.domain, twin.since_version, twin.row()) == ("Gemm", "", 13, ref.row())
        assert twin.attributes["beta"].name == "beta"


def test_a_binary_check_never_asks_onnxs_schema_registry() -> None:
    probe = textwrap.dedent("""
        import sys
        import onnx.defs
        from graphlsp.graph import ops
        ops.schemas(), ops._history()  # the tables, built once per onnx build
        calls = []
        for name in ("get_schema", "get_all_schemas_with_history", "get_all_schemas", "has"):
            real = getattr(onnx.defs, name)
            setattr(onnx.defs, name, lambda *a, real=real, name=name: calls.append(name) or real(*a))
        from graphlsp.cli import main
        for path in sys.argv[1:]:
            try:
                main(["check", "--no-cache", "--quiet", path])
            except SystemExit:
                pass
        print(calls)
    """)
    models = [ROOT / "corpus" / "models" / m for m in ("torchvision_ssdlite.onnx", "genai_qwen2_int4.onnx",
                                                       "ortq_static_qdq_transformer.onnx")]  # fmt: skip
    out = subprocess.run([sys.executable, "-c", probe, *map(str, models)], capture_output=True, text=True, check=False)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr
